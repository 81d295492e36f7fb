//! The model's plan (`update_plan`), pinned above the composer: each step
//! with its state while the plan is short, one line with the step in
//! progress when it is long (or the window is short).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::protocol::plan_and_questions::plan_progress;
use crate::protocol::{PlanStep, StepStatus};
use crate::theme::Theme;

/// The most rows the plan takes whole (its heading and its steps).
const MOST_ROWS: usize = 7;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub steps: Vec<PlanStep>,
    /// Its turn ended with it unfinished: the next turn (but the one that
    /// carries out an approved plan) unpins it, unless the model keeps it.
    pub left: bool,
}

impl Plan {
    pub fn new(steps: Vec<PlanStep>) -> Self {
        Self { steps, left: false }
    }

    /// The last plan a resumed conversation's model kept, unless it was
    /// finished.
    pub fn last(shown: &[crate::session::history::Shown]) -> Option<Self> {
        use crate::session::history::Shown;
        let args = shown.iter().rev().find_map(|s| match s {
            Shown::Tool {
                kind: crate::protocol::ToolKind::Plan,
                arguments,
                is_error: false,
                ..
            } => Some(arguments),
            _ => None,
        })?;
        let v: serde_json::Value = serde_json::from_str(args).ok()?;
        let mut steps: Vec<PlanStep> = serde_json::from_value(v.get("steps")?.clone()).ok()?;
        // As the tool kept it: one line, nothing a terminal would obey.
        for s in &mut steps {
            s.step = s
                .step
                .split_whitespace()
                .map(|w| w.chars().filter(|c| !c.is_control()).collect::<String>())
                .collect::<Vec<_>>()
                .join(" ");
        }
        let mut plan = Self::new(steps);
        plan.left = true;
        (!plan.steps.is_empty() && !plan.finished()).then_some(plan)
    }

    /// Every step is done.
    pub fn finished(&self) -> bool {
        self.steps.iter().all(|s| s.status == StepStatus::Done)
    }

    /// The rows it takes with `room` rows to spare: whole when it fits
    /// in a few, else folded to one.
    pub fn height(&self, room: u16) -> u16 {
        let whole = self.steps.len() + 1;
        let most = MOST_ROWS.min(usize::from(room / 3));
        if whole <= most {
            u16::try_from(whole).unwrap_or(1)
        } else {
            u16::from(room > 0)
        }
    }

    fn heading(&self, t: &Theme) -> Vec<Span<'static>> {
        let (done, _) = plan_progress(&self.steps);
        vec![
            Span::styled(" Plan", t.bold(t.colors.accent)),
            Span::styled(format!(" · {done} of {} done", self.steps.len()), t.muted()),
        ]
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, t: &Theme) {
        if area.height == 0 {
            return;
        }
        let mut lines = Vec::new();
        if usize::from(area.height) < self.steps.len() + 1 {
            // Folded: the heading and the step in progress.
            let mut spans = self.heading(t);
            if let (_, Some(now)) = plan_progress(&self.steps) {
                spans.push(Span::styled(" · ", t.muted()));
                spans.extend(step_spans(now, t));
            }
            lines.push(Line::from(spans));
        } else {
            lines.push(Line::from(self.heading(t)));
            for s in &self.steps {
                let mut spans = vec![Span::raw("  ")];
                spans.extend(step_spans(s, t));
                lines.push(Line::from(spans));
            }
        }
        for (i, line) in lines.into_iter().enumerate() {
            let y = area.y + u16::try_from(i).unwrap_or(u16::MAX);
            if y >= area.bottom() {
                break;
            }
            line.render(Rect::new(area.x, y, area.width, 1), buf);
        }
    }
}

/// A step, marked by its state.
fn step_spans(s: &PlanStep, t: &Theme) -> Vec<Span<'static>> {
    match s.status {
        StepStatus::Done => vec![
            Span::styled("✓ ", t.bold(t.colors.ok)),
            Span::styled(
                s.step.clone(),
                t.muted().add_modifier(Modifier::CROSSED_OUT),
            ),
        ],
        StepStatus::InProgress => vec![
            Span::styled("▸ ", t.bold(t.colors.accent)),
            Span::styled(s.step.clone(), t.bold(t.colors.accent)),
        ],
        StepStatus::Pending => vec![
            Span::styled("○ ", t.muted()),
            Span::styled(s.step.clone(), t.text()),
        ],
    }
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    fn plan(n: usize) -> Plan {
        Plan::new(
            (0..n)
                .map(|i| PlanStep {
                    step: format!(
                        "step {}: {}",
                        i + 1,
                        [
                            "read the parser",
                            "fix the off-by-one in the lexer",
                            "run the tests"
                        ][i % 3]
                    ),
                    status: match i {
                        0 => StepStatus::Done,
                        1 => StepStatus::InProgress,
                        _ => StepStatus::Pending,
                    },
                })
                .collect(),
        )
    }

    fn draw(plan: &Plan, width: u16, height: u16) -> String {
        let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
        term.draw(|f| plan.render(f.area(), f.buffer_mut(), &Theme::dark()))
            .unwrap();
        format!("{:?}", term.backend().buffer())
    }

    #[test]
    fn a_short_plan_shows_every_step_and_a_long_one_its_current_step() {
        let short = plan(3);
        assert_eq!(short.height(30), 4);
        insta::assert_snapshot!("plan_short", draw(&short, 50, 4));
        let long = plan(9);
        assert_eq!(long.height(30), 1);
        insta::assert_snapshot!("plan_folded", draw(&long, 50, 1));
        // A short window folds even a short plan.
        assert_eq!(short.height(6), 1);
        assert!(!short.finished());
    }
}
