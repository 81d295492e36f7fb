//! The status bar: model, workspace, approval mode, whether a turn is
//! running, the conversation's token usage, and key hints. What does not
//! fit is dropped from the right, hints first.

use std::path::Path;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use crate::protocol::{ApprovalMode, Usage};
use crate::tui::theme::Theme;

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
}

fn tokens(n: u64) -> String {
    if n >= 1000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
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
    let sep = || Span::styled(" · ", base);
    let mode_style = match info.approval {
        ApprovalMode::FullAuto => base.fg(theme.colors.warning),
        _ => base,
    };
    let mut left = vec![
        Span::styled(" ", base),
        Span::styled(
            info.model.to_string(),
            base.add_modifier(ratatui::style::Modifier::BOLD),
        ),
        sep(),
        Span::styled(short_path(info.workspace), base),
        sep(),
        Span::styled(info.approval.as_str(), mode_style),
        sep(),
    ];
    match (info.flash, info.running_ms) {
        (Some(flash), _) => left.push(Span::styled(
            flash.to_string(),
            base.fg(theme.colors.warning),
        )),
        (None, Some(ms)) => {
            let frame = SPINNER[(ms / 100) as usize % SPINNER.len()];
            left.push(Span::styled(
                format!("{frame} working {:.1}s", ms as f64 / 1000.0),
                base.fg(theme.colors.accent),
            ));
        }
        (None, None) => left.push(Span::styled("idle", base)),
    }
    let usage = format!(
        "{} in · {} out",
        tokens(info.usage.input_tokens),
        tokens(info.usage.output_tokens)
    );
    let hints = if info.running_ms.is_some() {
        "^C interrupt · ^T log "
    } else {
        "^T log · /help "
    };
    let width = usize::from(area.width);
    let left_w: usize = left.iter().map(|s| s.content.width()).sum();
    let mut right = Vec::new();
    for (text, style) in [
        (usage, base.fg(theme.colors.muted)),
        (hints.to_string(), base.fg(theme.colors.muted)),
    ] {
        let used: usize = right.iter().map(|s: &Span<'_>| s.content.width()).sum();
        if left_w + used + text.width() + 3 <= width {
            if !right.is_empty() {
                right.push(Span::styled(" · ", base));
            }
            right.push(Span::styled(text, style));
        }
    }
    buf.set_line(area.x, area.y, &Line::from(left), area.width);
    let right_w: usize = right.iter().map(|s| s.content.width()).sum();
    if right_w > 0 {
        let x = area
            .right()
            .saturating_sub(u16::try_from(right_w).unwrap_or(area.width));
        buf.set_line(x, area.y, &Line::from(right), area.width);
    }
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
            model: "gpt-4.1",
            workspace: Path::new("/work/project"),
            approval: ApprovalMode::Ask,
            running_ms: None,
            usage: Usage {
                input_tokens: 12_345,
                output_tokens: 678,
            },
            flash: None,
        };
        assert_snapshot!("status_idle_wide", draw(&info, 100));
        info.running_ms = Some(3_250);
        assert_snapshot!("status_running_narrow", draw(&info, 60));
        info.flash = Some("press Ctrl-C again to quit");
        assert!(draw(&info, 100).contains("press Ctrl-C again to quit"));
    }
}
