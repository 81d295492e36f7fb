//! The status bar: model, workspace, approval mode, whether a turn is
//! running, how full the context is, the conversation's token usage,
//! and key hints. What does not
//! fit is dropped from the right, hints first.

use std::path::Path;

use crate::width;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::protocol::{ApprovalMode, Usage};
use crate::theme::Theme;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

pub struct StatusInfo<'a> {
    pub model: &'a str,
    pub workspace: &'a Path,
    pub approval: ApprovalMode,
    /// Milliseconds the running turn has taken, if one runs.
    pub running_ms: Option<u64>,
    pub usage: Usage,
    /// A transient message (e.g. "press Ctrl-C again to quit").
    pub flash: Option<&'a str>,
    /// A question waits for the person (the turn's clock is not drawn
    /// meanwhile: nothing is redrawn while nothing changes).
    pub waiting: bool,
    /// MCP servers that failed (`/mcp` says why).
    pub mcp_failed: usize,
    /// MCP servers still starting.
    pub mcp_starting: usize,
    /// How full the model's context is: tokens, and the window if known.
    pub context: Option<(u64, Option<u64>)>,
    /// The model is thinking (its reasoning streams).
    pub thinking: bool,
    /// Commands running in the background (`/ps` lists them).
    pub background: usize,
    /// Subagents running, and what they spent so far (`/agents`).
    pub agents: Option<(usize, Option<f64>)>,
    /// The cap nearest to being reached, with what was spent against it.
    pub budget: Option<crate::protocol::budget::Standing>,
}

pub use crate::protocol::humanize::dollars;

fn tokens(n: u64) -> String {
    if n >= 1000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

/// `$0.42/$1.00`, `8.5k/10k tok`: what was spent against a cap, a
/// warning from [`WARN_AT`] of it on; `$?/$1.00` while no price is known
/// (dollars cannot be counted: the cap holds nothing yet).
///
/// [`WARN_AT`]: crate::protocol::budget::WARN_AT
fn budget_span(
    s: &crate::protocol::budget::Standing,
    priced: bool,
    base: ratatui::style::Style,
    theme: &Theme,
) -> Span<'static> {
    if s.cap.is_usd() && !priced {
        return Span::styled(
            format!("$?/{}", crate::protocol::budget::usd(s.limit)),
            base.fg(theme.colors.warning),
        );
    }
    let text = if s.cap.is_usd() {
        let usd = crate::protocol::budget::usd;
        format!("{}/{}", usd(s.spent), usd(s.limit))
    } else {
        let n = |x: f64| tokens(x.max(0.0).round() as u64);
        format!("{}/{} tok", n(s.spent), n(s.limit))
    };
    if s.share() >= crate::protocol::budget::WARN_AT {
        Span::styled(format!("⚠ {text}"), base.fg(theme.colors.warning))
    } else {
        Span::styled(text, base.fg(theme.colors.muted))
    }
}

/// `~/x` for paths under the home directory.
pub fn short_path(path: &Path) -> String {
    if let Some(home) = std::env::var_os("HOME")
        && let Ok(rest) = path.strip_prefix(&home)
    {
        return if rest.as_os_str().is_empty() {
            "~".into()
        } else {
            format!("~/{}", rest.display())
        };
    }
    path.display().to_string()
}

pub fn render(info: &StatusInfo<'_>, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let base = theme.status_bar();
    buf.set_style(area, base);
    let mode_style = match info.approval {
        ApprovalMode::FullAuto => base.fg(theme.colors.warning),
        _ => base,
    };
    let activity = activity(info, theme);
    let usage = format!(
        "{} in · {} out",
        tokens(info.usage.input_tokens),
        tokens(info.usage.output_tokens)
    );
    let context = context(info, theme);
    // What the session has cost, when the prices are known.
    // Against the nearest cap, when there is one: the session's cost is
    // then said there.
    let priced = info.usage.cost_usd.is_some();
    let budget = info.budget.map(|s| budget_span(&s, priced, base, theme));
    let cost = info
        .usage
        .cost_usd
        .filter(|_| {
            !info
                .budget
                .is_some_and(|s| s.cap == crate::protocol::budget::Cap::SessionUsd)
        })
        .map(|c| Span::styled(dollars(c), base.fg(theme.colors.muted)));
    let hints = if info.running_ms.is_some() {
        "^C interrupt · ^T log "
    } else {
        "^T log · /help "
    };
    let full_path = short_path(info.workspace);
    let last_part = info
        .workspace
        .file_name()
        .map(|n| format!("…/{}", n.to_string_lossy()));
    let model = Span::styled(
        info.model.to_string(),
        base.add_modifier(ratatui::style::Modifier::BOLD),
    );
    // What shows, most first; the first layout that fits is drawn. The
    // approval mode and the activity (or a flash) are never dropped.
    let layouts: [(bool, Option<&str>, bool, bool, bool); 9] = [
        (true, Some(&full_path), true, true, true),
        (true, Some(&full_path), true, false, true),
        (true, Some(&full_path), false, false, true),
        (true, last_part.as_deref(), false, false, true),
        (true, None, false, false, true),
        (false, last_part.as_deref(), false, false, true),
        (false, None, false, false, true),
        (false, last_part.as_deref(), false, false, false),
        (false, None, false, false, false),
    ];
    let sep = || Span::styled(" · ", base);
    let width = usize::from(area.width);
    let spans_width =
        |spans: &[Span<'_>]| -> usize { spans.iter().map(|s| width::of(&s.content)).sum() };
    let mut chosen = None;
    for (with_model, path, with_usage, with_hints, with_context) in layouts {
        let mut left = vec![Span::styled(" ", base)];
        if with_model {
            left.extend([model.clone(), sep()]);
        }
        if let Some(path) = path {
            left.extend([Span::styled(path.to_string(), base), sep()]);
        }
        left.extend([
            Span::styled(info.approval.as_str(), mode_style),
            sep(),
            activity.clone(),
        ]);
        left.extend(mcp_spans(info, theme));
        let mut right = Vec::new();
        if let Some(c) = context.as_ref().filter(|_| with_context) {
            right.push(c.clone());
        }
        for c in [&cost, &budget]
            .into_iter()
            .flatten()
            .filter(|_| with_context)
        {
            if !right.is_empty() {
                right.push(sep());
            }
            right.push(c.clone());
        }
        if with_usage {
            if !right.is_empty() {
                right.push(sep());
            }
            right.push(Span::styled(usage.clone(), base.fg(theme.colors.muted)));
        }
        if with_hints {
            if !right.is_empty() {
                right.push(sep());
            }
            right.push(Span::styled(hints, base.fg(theme.colors.muted)));
        }
        let gap = if right.is_empty() { 0 } else { 2 };
        let fits = spans_width(&left) + gap + spans_width(&right) <= width;
        chosen = Some((left, right));
        if fits {
            break;
        }
    }
    let Some((mut left, right)) = chosen else {
        return;
    };
    // The narrowest layout may still be too wide: the activity is cut to
    // what is left, visibly (the right side is empty then).
    let before: usize = spans_width(&left[..left.len().saturating_sub(1)]);
    if let Some(last) = left.last_mut()
        && before + width::of(&last.content) > width
    {
        let cut = width::truncate(&last.content, width.saturating_sub(before)).into_owned();
        last.content = cut.into();
    }
    buf.set_line(area.x, area.y, &Line::from(left), area.width);
    let right_w = spans_width(&right);
    if right_w > 0 {
        let x = area
            .right()
            .saturating_sub(u16::try_from(right_w).unwrap_or(area.width));
        buf.set_line(x, area.y, &Line::from(right), area.width);
    }
}

/// What runs: a flash, the wait for an answer, thinking or working (with
/// a spinner and the time), or idle.
fn activity(info: &StatusInfo<'_>, theme: &Theme) -> Span<'static> {
    let base = theme.status_bar();
    match (info.flash, info.running_ms) {
        (Some(flash), _) => Span::styled(flash.to_string(), base.fg(theme.colors.warning)),
        (None, Some(_)) if info.waiting => {
            Span::styled("waiting for your answer", base.fg(theme.colors.warning))
        }
        (None, Some(ms)) => {
            let frame = SPINNER[(ms / 100) as usize % SPINNER.len()];
            let doing = if info.thinking { "thinking" } else { "working" };
            Span::styled(
                format!("{frame} {doing} {:.1}s", ms as f64 / 1000.0),
                base.fg(theme.colors.accent),
            )
        }
        (None, None) => Span::styled("idle", base),
    }
}

/// How full the context is: a share of a known window (coloured as it
/// fills), else its size.
fn context(info: &StatusInfo<'_>, theme: &Theme) -> Option<Span<'static>> {
    let base = theme.status_bar();
    info.context.map(|(used, window)| match window {
        Some(w) if w > 0 => {
            let pct = used.saturating_mul(100) / w;
            let color = match pct {
                0..70 => theme.colors.muted,
                70..85 => theme.colors.warning,
                _ => theme.colors.error,
            };
            Span::styled(format!("ctx {pct}%"), base.fg(color))
        }
        _ => Span::styled(format!("ctx {}", tokens(used)), base.fg(theme.colors.muted)),
    })
}

/// The MCP servers down or starting, the subagents and commands running.
fn mcp_spans(info: &StatusInfo<'_>, theme: &Theme) -> Vec<Span<'static>> {
    let base = theme.status_bar();
    let sep = || Span::styled(" · ", base);
    let mut spans = Vec::new();
    if info.mcp_failed > 0 {
        spans.extend([
            sep(),
            Span::styled(
                format!("⚠ mcp {} down", info.mcp_failed),
                base.fg(theme.colors.warning),
            ),
        ]);
    }
    if info.mcp_starting > 0 {
        spans.extend([
            sep(),
            Span::styled(
                format!("mcp {} starting…", info.mcp_starting),
                theme.muted(),
            ),
        ]);
    }
    if let Some((n, cost)) = info.agents {
        let cost = cost
            .map(|c| format!(" {}", crate::protocol::budget::usd(c)))
            .unwrap_or_default();
        spans.extend([
            sep(),
            Span::styled(
                format!(
                    "⧉ {n} agent{}{cost} (/agents)",
                    if n == 1 { "" } else { "s" }
                ),
                base.fg(theme.colors.accent),
            ),
        ]);
    }
    if info.background > 0 {
        spans.extend([
            sep(),
            Span::styled(
                format!("⚙ {} in background (/ps)", info.background),
                base.fg(theme.colors.accent),
            ),
        ]);
    }
    spans
}

#[cfg(test)]
mod tests {
    use insta::assert_snapshot;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    fn draw(info: &StatusInfo<'_>, width: u16) -> String {
        let mut term = Terminal::new(TestBackend::new(width, 1)).unwrap();
        term.draw(|f| render(info, f.area(), f.buffer_mut(), &Theme::plain()))
            .unwrap();
        term.backend().to_string()
    }

    #[test]
    fn the_status_bar_fits_wide_and_narrow() {
        let mut info = StatusInfo {
            thinking: false,
            model: "gpt-4.1",
            workspace: Path::new("/work/project"),
            approval: ApprovalMode::Ask,
            running_ms: None,
            usage: Usage {
                input_tokens: 12_345,
                output_tokens: 678,
                ..Default::default()
            },
            flash: None,
            waiting: false,
            mcp_failed: 0,
            mcp_starting: 0,
            background: 0,
            agents: None,
            budget: None,
            context: Some((84_000, Some(200_000))),
        };
        assert_snapshot!("status_idle_wide", draw(&info, 100));
        info.context = Some((180_000, Some(200_000)));
        assert!(draw(&info, 100).contains("ctx 90%"));
        info.context = Some((3_400, None));
        assert!(
            draw(&info, 100).contains("ctx 3.4k"),
            "an unknown window: the size"
        );
        info.context = Some((84_000, Some(200_000)));
        info.running_ms = Some(3_250);
        assert_snapshot!("status_running_narrow", draw(&info, 60));
        info.flash = Some("press Ctrl-C again to quit");
        assert!(draw(&info, 100).contains("press Ctrl-C again to quit"));
        info.flash = None;
        info.mcp_starting = 2;
        assert!(
            draw(&info, 120).contains("mcp 2 starting…"),
            "a slow server is seen starting"
        );
    }

    /// What the session has cost sits beside the context meter, and the
    /// activity says when the model is thinking.
    #[test]
    fn the_cost_and_thinking_show() {
        let info = StatusInfo {
            thinking: true,
            model: "claude-sonnet-4-5",
            workspace: Path::new("/work/project"),
            approval: ApprovalMode::Ask,
            running_ms: Some(12_300),
            usage: Usage {
                input_tokens: 52_000,
                output_tokens: 1_200,
                cache_read_tokens: 48_000,
                cost_usd: Some(0.0421),
                ..Default::default()
            },
            flash: None,
            waiting: false,
            mcp_failed: 0,
            mcp_starting: 0,
            background: 0,
            agents: None,
            budget: None,
            context: Some((53_000, Some(200_000))),
        };
        assert_snapshot!("status_cost_thinking", draw(&info, 110));
        // Narrow: the cost stays while the token counts go.
        let narrow = draw(&info, 72);
        assert!(narrow.contains("$0.042"), "{narrow}");
        assert_eq!(dollars(0.0004), "<$0.001");
        assert_eq!(dollars(12.345), "$12.35");
        assert_eq!(dollars(0.0), "$0.00");
    }

    #[test]
    fn narrow_bars_keep_the_mode_and_never_overlap() {
        let long = Path::new("/home/someone/src/a-very-long-project-name-indeed/sub/dir");
        for approval in [ApprovalMode::Ask, ApprovalMode::FullAuto] {
            for width in [20u16, 30, 40, 50, 60, 80, 120] {
                for running in [None, Some(1_500)] {
                    let info = StatusInfo {
                        thinking: false,
                        model: "claude-sonnet-4-5-20250929",
                        workspace: long,
                        approval,
                        running_ms: running,
                        usage: Usage {
                            input_tokens: 123_456,
                            output_tokens: 7_890,
                            ..Default::default()
                        },
                        flash: None,
                        waiting: false,
                        mcp_failed: 0,
                        mcp_starting: 0,
                        background: 0,
                        agents: None,
                        budget: None,
                        context: Some((50_000, Some(200_000))),
                    };
                    let shown = draw(&info, width);
                    let row = shown.lines().next().unwrap_or("");
                    assert!(
                        row.contains(approval.as_str()),
                        "mode dropped at {width}: {row:?}"
                    );
                    if width >= 40 {
                        let activity = if running.is_some() { "working" } else { "idle" };
                        assert!(row.contains(activity), "activity cut at {width}: {row:?}");
                    }
                    // Overlap would cut a word in the middle: each piece
                    // shown is whole.
                    for piece in row.trim_matches(['"', ' ']).split(" · ") {
                        let piece = piece.trim();
                        let whole = piece.is_empty()
                            || "claude-sonnet-4-5-20250929".contains(piece)
                            || piece.contains('…')
                            || piece.starts_with('~')
                            || piece.starts_with('/')
                            || piece == approval.as_str()
                            || piece == "idle"
                            || piece.contains("working")
                            || piece.ends_with(" in")
                            || piece.ends_with(" out")
                            || piece.contains("^C")
                            || piece.contains("^T")
                            || piece == "/help"
                            || piece.starts_with("ctx ")
                            || piece.ends_with(" ctx 25%")
                            || piece.ends_with("ctx 25%");
                        assert!(whole, "piece {piece:?} at {width}: {row:?}");
                    }
                }
            }
        }
    }
}
