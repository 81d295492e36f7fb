//! The transcript: every cell of the conversation, scrollable.
//!
//! Long transcripts stay fast: each cell caches its wrapped lines for the
//! width they were made at and is laid out again only when it changed or
//! the width did; the heights are kept as prefix sums, so finding the first
//! visible cell is a binary search and drawing touches only visible lines.
//! New content follows the bottom unless the person scrolled up; then the
//! view stays put while content arrives below.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Widget;

use super::cells::{self, Cell, ToolCell};
use crate::tui::highlight::Highlighter;
use crate::tui::theme::Theme;

struct Entry {
    cell: Cell,
    /// The width the lines were made for; `None` when the cell changed.
    laid_out_at: Option<u16>,
    lines: Vec<Line<'static>>,
}

#[derive(Default)]
pub struct Transcript {
    entries: Vec<Entry>,
    /// `ends[i]` = lines in cells `0..=i`.
    ends: Vec<usize>,
    /// First entry whose layout or height may be stale.
    dirty_from: usize,
    width: u16,
    /// Lines between the bottom of the view and the end of the transcript.
    from_bottom: usize,
    viewport: u16,
}

impl Transcript {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn push(&mut self, cell: Cell) {
        self.entries.push(Entry {
            cell,
            laid_out_at: None,
            lines: Vec::new(),
        });
        self.dirty_from = self.dirty_from.min(self.entries.len() - 1);
    }

    pub fn clear(&mut self) {
        *self = Self {
            width: self.width,
            viewport: self.viewport,
            ..Self::default()
        };
    }

    pub fn last_mut(&mut self) -> Option<&mut Cell> {
        let i = self.entries.len().checked_sub(1)?;
        self.touch(i);
        self.entries.get_mut(i).map(|e| &mut e.cell)
    }

    /// Appends streamed text to the last assistant cell (starting one if
    /// needed).
    pub fn append_assistant(&mut self, text: &str) {
        if let Some(Cell::Assistant(t)) = self.last_mut() {
            t.push_str(text);
            return;
        }
        self.push(Cell::Assistant(text.to_string()));
    }

    /// Replaces the text of the last assistant cell, if it is the last cell.
    pub fn set_last_assistant(&mut self, text: &str) -> bool {
        if let Some(Cell::Assistant(t)) = self.last_mut() {
            text.clone_into(t);
            return true;
        }
        false
    }

    /// Drops the last cell if it is a (partial) assistant message.
    pub fn discard_partial_assistant(&mut self) {
        if matches!(self.entries.last(), Some(e) if matches!(e.cell, Cell::Assistant(_))) {
            self.entries.pop();
            self.ends.truncate(self.entries.len());
            self.dirty_from = self.dirty_from.min(self.entries.len());
        }
    }

    /// The tool cell for `call_id`, searched from the end.
    pub fn tool_mut(&mut self, call_id: &str) -> Option<&mut ToolCell> {
        let i = self
            .entries
            .iter()
            .rposition(|e| matches!(&e.cell, Cell::Tool(t) if t.call_id == call_id))?;
        self.touch(i);
        match &mut self.entries[i].cell {
            Cell::Tool(t) => Some(t),
            _ => None,
        }
    }

    /// Calls `f` on every running tool cell (spinner ticks).
    pub fn for_each_running(&mut self, mut f: impl FnMut(&mut ToolCell)) {
        // Running cells are near the end; stop at the first long run of
        // finished ones to keep ticks cheap on long transcripts.
        let mut seen_done = 0;
        for i in (0..self.entries.len()).rev() {
            if let Cell::Tool(t) = &mut self.entries[i].cell
                && t.is_running()
            {
                f(t);
                self.entries[i].laid_out_at = None;
                self.dirty_from = self.dirty_from.min(i);
                seen_done = 0;
                continue;
            }
            seen_done += 1;
            if seen_done > 64 {
                break;
            }
        }
    }

    fn touch(&mut self, i: usize) {
        if let Some(e) = self.entries.get_mut(i) {
            e.laid_out_at = None;
        }
        self.dirty_from = self.dirty_from.min(i);
    }

    pub fn cells(&self) -> impl Iterator<Item = &Cell> {
        self.entries.iter().map(|e| &e.cell)
    }

    /// Lays out what changed, for `width` columns and a view `height` rows
    /// tall. Call before drawing.
    pub fn prepare(&mut self, width: u16, height: u16, theme: &Theme, hl: &Highlighter) {
        let before = self.total_lines();
        let resized = width != self.width;
        if resized {
            self.width = width;
            self.dirty_from = 0;
        }
        self.viewport = height;
        let start = self.dirty_from.min(self.entries.len());
        for e in &mut self.entries[start..] {
            if e.laid_out_at != Some(width) {
                e.lines = cells::render(&e.cell, width, theme, hl);
                e.laid_out_at = Some(width);
            }
        }
        self.ends.truncate(start);
        let mut acc = self.ends.last().copied().unwrap_or(0);
        for e in &self.entries[start..] {
            acc += e.lines.len();
            self.ends.push(acc);
        }
        self.dirty_from = self.entries.len();
        let after = self.total_lines();
        if self.from_bottom > 0 && !resized && after > before {
            // Scrolled up: keep looking at the same lines.
            self.from_bottom += after - before;
        }
        self.clamp();
    }

    pub fn total_lines(&self) -> usize {
        self.ends.last().copied().unwrap_or(0)
    }

    fn max_from_bottom(&self) -> usize {
        self.total_lines()
            .saturating_sub(usize::from(self.viewport))
    }

    fn clamp(&mut self) {
        self.from_bottom = self.from_bottom.min(self.max_from_bottom());
    }

    pub fn is_following(&self) -> bool {
        self.from_bottom == 0
    }

    pub fn scroll_up(&mut self, lines: usize) {
        self.from_bottom = (self.from_bottom + lines).min(self.max_from_bottom());
    }

    pub fn scroll_down(&mut self, lines: usize) {
        self.from_bottom = self.from_bottom.saturating_sub(lines);
    }

    pub fn page(&self) -> usize {
        usize::from(self.viewport).saturating_sub(2).max(1)
    }

    pub fn scroll_to_top(&mut self) {
        self.from_bottom = self.max_from_bottom();
    }

    pub fn scroll_to_bottom(&mut self) {
        self.from_bottom = 0;
    }

    /// The lines in view, top to bottom.
    fn visible(&self, height: usize) -> impl Iterator<Item = &Line<'static>> {
        let total = self.total_lines();
        let bottom = total.saturating_sub(self.from_bottom);
        let top = bottom.saturating_sub(height);
        let first = self.ends.partition_point(|&end| end <= top);
        let skip_in_first = top - first.checked_sub(1).map_or(0, |i| self.ends[i]);
        self.entries[first.min(self.entries.len())..]
            .iter()
            .flat_map(|e| e.lines.iter())
            .skip(skip_in_first)
            .take(bottom - top)
    }
}

impl Widget for &Transcript {
    fn render(self, area: Rect, buf: &mut Buffer) {
        for (row, line) in self.visible(usize::from(area.height)).enumerate() {
            let y = area.y + u16::try_from(row).unwrap_or(u16::MAX);
            if y >= area.bottom() {
                break;
            }
            buf.set_line(area.x, y, line, area.width);
        }
    }
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
