//! `/undo` asks first: what it will put back and remove, what it leaves
//! alone, and what no checkpoint holds (files too large to keep, ignored
//! directories a command deleted or changed); `y` does it. Armed like
//! every question.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::question::{YesNo, modal_height, render_question};
use crate::component::{AppEvent, AppEvents, Kind, Outcome};
use crate::protocol::Op;
use crate::theme::Theme;

/// What a rewind of a turn's files would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UndoPlan {
    pub turn: u64,
    pub restored: Vec<String>,
    pub removed: Vec<String>,
    pub skipped: Vec<String>,
    pub not_kept: Vec<String>,
}

pub struct UndoQuestion {
    plan: UndoPlan,
}

/// `a, b and 3 more`.
fn list(paths: &[String]) -> String {
    let shown: Vec<&str> = paths.iter().take(6).map(String::as_str).collect();
    let mut s = crate::protocol::visible::name(&shown.join(", ")).into_owned();
    if paths.len() > shown.len() {
        s.push_str(&format!(" and {} more", paths.len() - shown.len()));
    }
    s
}

impl UndoQuestion {
    pub fn new(plan: UndoPlan) -> Self {
        Self { plan }
    }

    fn lines(&self, t: &Theme) -> Vec<Line<'static>> {
        let p = &self.plan;
        let mut lines = Vec::new();
        let mut say = |head: &str, paths: &[String], style| {
            if !paths.is_empty() {
                lines.push(Line::from(vec![
                    Span::styled(format!("{head}: "), t.muted()),
                    Span::styled(list(paths), style),
                ]));
            }
        };
        say("Puts back", &p.restored, t.text());
        say("Removes (the turn made them)", &p.removed, t.text());
        say(
            "Leaves alone (a nested repository, or too large)",
            &p.skipped,
            t.muted(),
        );
        say(
            "Cannot bring back (no checkpoint holds it)",
            &p.not_kept,
            t.bold(t.colors.warning),
        );
        lines
    }
}

/// `y` puts the files back, `n` or Esc leaves them.
impl YesNo for UndoQuestion {
    fn kind(&self) -> Kind {
        Kind::Undo
    }

    fn words(&self) -> Option<String> {
        None
    }

    fn rows(&self, area: Rect, t: &Theme) -> Option<u16> {
        Some(modal_height(&self.lines(t), area))
    }

    fn yes(&mut self, events: &AppEvents) -> Outcome {
        events.send(AppEvent::Op(Op::Rewind {
            turn: Some(self.plan.turn),
            files: true,
            conversation: false,
            preview: false,
        }));
        Outcome::Close
    }

    fn no(&mut self, events: &AppEvents) {
        events.send(AppEvent::Flash("nothing was put back".into()));
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, t: &Theme) {
        let keys = Line::from(vec![
            Span::styled("y", t.bold(t.colors.accent)),
            Span::styled(" put them back  ", t.muted()),
            Span::styled("n", t.bold(t.colors.accent)),
            Span::styled(" leave them", t.muted()),
        ]);
        let title = format!(" Undo turn {}? ", self.plan.turn);
        render_question(&title, self.lines(t), keys, area, buf, t);
    }
}
