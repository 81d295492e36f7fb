//! What the list overlays (`/resume`, `/rewind`) share: the framed box
//! with its keys on the last row, moving the selection, a one-line
//! message in place of the list.

use crossterm::event::KeyCode;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Clear, Widget};

use crate::theme::Theme;

/// Draws the box titled `title` over `area` with `keys` on its last row;
/// the rows left for the list, or `None` when there is no room for one.
pub fn frame(title: &str, keys: &str, area: Rect, buf: &mut Buffer, theme: &Theme) -> Option<Rect> {
    Clear.render(area, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.accent())
        .title(Span::styled(title, theme.bold(theme.colors.accent)));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height < 2 || inner.width < 8 {
        return None;
    }
    buf.set_string(
        inner.x + 1,
        inner.bottom() - 1,
        crate::width::truncate(keys, usize::from(inner.width - 2)),
        theme.muted(),
    );
    Some(Rect::new(
        inner.x + 1,
        inner.y,
        inner.width - 2,
        inner.height - 1,
    ))
}

/// A muted line in place of the list ("reading…", "nothing yet").
pub fn message(body: Rect, buf: &mut Buffer, text: &str, theme: &Theme) {
    buf.set_string(
        body.x,
        body.y,
        crate::width::truncate(text, usize::from(body.width)),
        theme.muted(),
    );
}

/// Moves `selected` among `n` rows for ↑↓ (j/k), Home and End; whether
/// the key was one of those.
pub fn step(code: KeyCode, selected: &mut usize, n: usize) -> bool {
    match code {
        KeyCode::Down | KeyCode::Char('j') => *selected = (*selected + 1).min(n.saturating_sub(1)),
        KeyCode::Up | KeyCode::Char('k') => *selected = selected.saturating_sub(1),
        KeyCode::Home => *selected = 0,
        KeyCode::End => *selected = n.saturating_sub(1),
        _ => return false,
    }
    true
}

/// The first row to show so that `selected` stays in sight in `rows`.
pub fn first_shown(selected: usize, rows: usize) -> usize {
    selected.saturating_sub(rows.saturating_sub(1))
}
