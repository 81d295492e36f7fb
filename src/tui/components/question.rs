//! The modal questions other than approval: whether to trust a
//! workspace's hooks and MCP servers, and whether a turn may go on past
//! its tool rounds. Both answer by the same rule (`Arming::answer`).

use ratatui::layout::Rect;

use crate::tui::theme::Theme;

/// The question whether to run the hooks a workspace config defines.
pub struct TrustPrompt {
    /// The hooks, one line each.
    pub hooks: Vec<String>,
    /// The MCP servers, one line each (`name: command` or `name: url`).
    pub servers: Vec<String>,
    /// The workspace files they run, which the trust pins.
    pub files: Vec<String>,
    /// Remembers the trust for this workspace (its hooks as they are).
    pub remember: Box<dyn FnMut() -> Result<(), String> + Send>,
}

impl TrustPrompt {
    /// What it asks about, in words: "hooks", "MCP servers" or both.
    pub fn what(&self) -> &'static str {
        match (self.hooks.is_empty(), self.servers.is_empty()) {
            (false, true) => "hooks",
            (true, false) => "MCP servers",
            _ => "hooks and MCP servers",
        }
    }
}

/// The trust question, as a modal over the transcript.
pub fn render_trust(
    prompt: &TrustPrompt,
    area: Rect,
    buf: &mut ratatui::buffer::Buffer,
    theme: &Theme,
) {
    use ratatui::text::{Line, Span};
    let mut lines = Vec::new();
    if !prompt.hooks.is_empty() {
        lines.push(Line::from(Span::styled(
            "This workspace's .lathe/config.toml runs these programs around tool calls. A cloned \
             repository could run anything this way, so they stay off until you trust them:",
            theme.text(),
        )));
        lines.extend(
            prompt
                .hooks
                .iter()
                .map(|h| Line::from(Span::styled(format!("  {h}"), theme.accent()))),
        );
    }
    if !prompt.servers.is_empty() {
        lines.push(Line::from(Span::styled(
            "This workspace names MCP servers (in .mcp.json or .lathe/config.toml): programs \
             to run on this machine, or addresses to send your requests to. They stay off until \
             you trust them:",
            theme.text(),
        )));
        lines.extend(
            prompt
                .servers
                .iter()
                .map(|s| Line::from(Span::styled(format!("  {s}"), theme.accent()))),
        );
    }
    if !prompt.files.is_empty() {
        lines.push(Line::from(Span::styled(
            "Read the files they run first. Trust covers them as they are now: if one changes, \
             its hook stops and Lathe asks again. Writes to them always ask.",
            theme.text(),
        )));
        lines.extend(
            prompt
                .files
                .iter()
                .map(|f| Line::from(Span::styled(format!("  {f}"), theme.accent()))),
        );
    }
    let keys = Line::from(vec![
        Span::styled("y", theme.bold(theme.colors.accent)),
        Span::styled(" trust them for this workspace  ", theme.muted()),
        Span::styled("n", theme.bold(theme.colors.accent)),
        Span::styled(" not now", theme.muted()),
    ]);
    let title = match (prompt.hooks.is_empty(), prompt.servers.is_empty()) {
        (_, true) => " Run this workspace's hooks? ",
        (true, false) => " Start this workspace's MCP servers? ",
        (false, false) => " Trust this workspace's hooks and servers? ",
    };
    render_question(title, lines, keys, area, buf, theme);
}

/// A modal question over `area`: the text wrapped, the keys on the last
/// row whatever the text needs.
pub fn render_question(
    title: &str,
    lines: Vec<ratatui::text::Line<'static>>,
    keys: ratatui::text::Line<'static>,
    area: Rect,
    buf: &mut ratatui::buffer::Buffer,
    theme: &Theme,
) {
    use ratatui::text::Span;
    use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};
    let w = area.width.saturating_sub(4).max(20).min(area.width);
    // Borders, a blank line and the keys around the wrapped text.
    let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
    let rows = paragraph.line_count(w.saturating_sub(4));
    let h = u16::try_from(rows + 4).unwrap_or(u16::MAX).min(area.height);
    let modal = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    Clear.render(modal, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.bold(theme.colors.warning))
        .title(Span::styled(
            title.to_string(),
            theme.bold(theme.colors.warning),
        ));
    let inner = block.inner(modal);
    block.render(modal, buf);
    // The keys keep the last row, whatever the text needs.
    let width = inner.width.saturating_sub(2);
    let text_rows = inner.height.saturating_sub(2);
    paragraph.render(Rect::new(inner.x + 1, inner.y, width, text_rows), buf);
    if inner.height > 0 {
        keys.render(
            Rect::new(inner.x + 1, inner.y + inner.height - 1, width, 1),
            buf,
        );
    }
}
