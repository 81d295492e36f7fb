//! The transcript: every cell of the conversation, scrollable.
//!
//! Long transcripts stay fast and small: each cell keeps its lines before
//! wrapping (made again only when the cell changed; an assistant message
//! that streams in is laid out by [`markdown::Stream`], so only what grew
//! is made again) and how many rows each takes at the current width. The
//! rows are kept as prefix sums, per cell and across cells, so finding the
//! first visible row is two binary searches, and only the rows in view are
//! ever wrapped into lines. New content follows the bottom unless the
//! person scrolled up; then the view stays put while content arrives
//! below, and across a resize it keeps the line at its top.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::cells::{self, Cell, ToolCell};
use crate::highlight::Highlighter;
use crate::markdown;
use crate::theme::Theme;
use crate::wrap::{Logical, rows, wrap};

struct Entry {
    cell: Cell,
    /// Whether `logical` is out of date.
    changed: bool,
    logical: Vec<Logical>,
    /// The layout of an assistant message as it streams.
    stream: Option<markdown::Stream>,
    /// A thinking cell as it streams: the bytes of its text laid out as
    /// whole lines, and how many logical lines those are (with the
    /// header), so a delta lays out only its last line again.
    thinking: Option<(usize, usize)>,
    /// `ends[k]` = rows of logical lines `0..=k` at the transcript's width;
    /// valid for the first `measured` lines.
    ends: Vec<usize>,
    measured: usize,
}

impl Entry {
    fn new(cell: Cell) -> Self {
        Self {
            stream: matches!(cell, Cell::Assistant(_)).then(markdown::Stream::default),
            thinking: None,
            cell,
            changed: true,
            logical: Vec::new(),
            ends: Vec::new(),
            measured: 0,
        }
    }

    fn rows(&self) -> usize {
        self.ends.last().copied().unwrap_or(0)
    }

    /// Brings `logical` and `ends` up to date for `width` columns.
    fn lay_out(&mut self, width: usize, theme: &Theme, hl: &Highlighter) {
        if self.changed {
            self.changed = false;
            match (&self.cell, &mut self.stream) {
                (Cell::Assistant(text), Some(stream)) => {
                    let kept = stream.update(text, &Span::raw("  "), theme, hl, &mut self.logical);
                    self.measured = self.measured.min(kept);
                }
                // Thinking as it streams: its whole lines stay laid out.
                (Cell::Thinking(t), _) if !t.done => {
                    let (bytes, lines) = match self.thinking {
                        Some(done) if self.logical.len() >= done.1 && done.0 <= t.text.len() => {
                            done
                        }
                        _ => {
                            self.logical.clear();
                            self.logical.push(cells::thinking_header(t, theme));
                            (0, 1)
                        }
                    };
                    self.logical.truncate(lines);
                    let rest = &t.text[bytes..];
                    let whole = rest.rfind('\n').map_or(0, |i| i + 1);
                    cells::thinking_text(
                        &rest[..whole.saturating_sub(1)],
                        theme,
                        &mut self.logical,
                    );
                    if whole == 0 {
                        // Nothing whole yet: the partial line is all.
                        self.logical.truncate(lines);
                    }
                    let kept = self.logical.len();
                    self.thinking = Some((bytes + whole, kept));
                    cells::thinking_text(&rest[whole..], theme, &mut self.logical);
                    self.logical.push(Logical::prose(Line::default()));
                    self.measured = self.measured.min(lines.min(kept));
                }
                (cell, _) => {
                    self.thinking = None;
                    self.logical = cells::logical(cell, theme, hl);
                    self.measured = 0;
                }
            }
        }
        self.measured = self.measured.min(self.logical.len());
        self.ends.truncate(self.measured);
        let mut acc = self.ends.last().copied().unwrap_or(0);
        for l in &self.logical[self.measured..] {
            acc += rows(l, width);
            self.ends.push(acc);
        }
        self.measured = self.logical.len();
    }

    /// The logical line that holds `row`, and the row's place in it.
    fn find(&self, row: usize) -> (usize, usize) {
        let k = self.ends.partition_point(|&end| end <= row);
        let before = k.checked_sub(1).map_or(0, |i| self.ends[i]);
        (k, row - before)
    }
}

#[derive(Default)]
pub struct Transcript {
    entries: Vec<Entry>,
    /// `ends[i]` = rows in cells `0..=i`.
    ends: Vec<usize>,
    /// First entry whose layout or height may be stale.
    dirty_from: usize,
    width: u16,
    /// Rows between the bottom of the view and the end of the transcript.
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
        self.entries.push(Entry::new(cell));
        self.dirty_from = self.dirty_from.min(self.entries.len() - 1);
    }

    /// Keeps the first `len` cells (a conversation rewound).
    pub fn truncate(&mut self, len: usize) {
        if len >= self.entries.len() {
            return;
        }
        self.entries.truncate(len);
        self.ends.truncate(len);
        self.dirty_from = self.dirty_from.min(len);
        self.from_bottom = 0;
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
        let e = self.entries.get_mut(i)?;
        // The cell may change in any way: its layout starts over.
        if e.stream.is_some() {
            e.stream = Some(markdown::Stream::default());
        }
        Some(&mut e.cell)
    }

    /// Appends streamed text to the last assistant cell (starting one if
    /// needed).
    pub fn append_assistant(&mut self, text: &str) {
        if let Some(i) = self.entries.len().checked_sub(1)
            && let Cell::Assistant(t) = &mut self.entries[i].cell
        {
            t.push_str(text);
            self.touch(i);
            return;
        }
        self.push(Cell::Assistant(text.to_string()));
    }

    /// Adds to what the model is thinking: to the thinking cell it is
    /// writing, or a new one.
    pub fn append_thinking(&mut self, text: &str) {
        if let Some(i) = self.entries.len().checked_sub(1)
            && let Cell::Thinking(t) = &mut self.entries[i].cell
            && !t.done
        {
            t.text.push_str(text);
            self.touch(i);
            return;
        }
        self.push(Cell::Thinking(Box::new(cells::ThinkingCell {
            text: text.to_string(),
            ..cells::ThinkingCell::default()
        })));
    }

    /// The model moved on to its answer: the thinking cell it was
    /// writing folds, saying how long it took.
    pub fn end_thinking(&mut self, took_ms: u64) {
        if let Some(i) = self.entries.len().checked_sub(1)
            && let Cell::Thinking(t) = &mut self.entries[i].cell
            && !t.done
        {
            t.done = true;
            t.took_ms = Some(took_ms);
            self.touch(i);
        }
    }

    /// Puts the whole of what the model thought (redacted whole) in the
    /// thinking cell its deltas built, if that is among the last cells.
    pub fn set_last_thinking(&mut self, text: &str) {
        let from = self.entries.len().saturating_sub(3);
        let Some(i) = (from..self.entries.len())
            .rev()
            .find(|&i| matches!(self.entries[i].cell, Cell::Thinking(_)))
        else {
            return;
        };
        if let Cell::Thinking(t) = &mut self.entries[i].cell
            && t.text != text
        {
            text.clone_into(&mut t.text);
            self.entries[i].thinking = None;
            self.touch(i);
        }
    }

    /// Ctrl-O: shows every thinking of the transcript whole, or folds
    /// them all again (as the newest is, so they all go). `false` when
    /// there is none.
    pub fn toggle_thinking(&mut self) -> bool {
        let shown =
            |c: &Cell| matches!(c, Cell::Thinking(t) if t.done && !t.text.trim().is_empty());
        let Some(newest) = self.entries.iter().rposition(|e| shown(&e.cell)) else {
            return false;
        };
        let open = match &self.entries[newest].cell {
            Cell::Thinking(t) => !t.open,
            _ => return false,
        };
        for i in 0..self.entries.len() {
            if shown(&self.entries[i].cell)
                && let Cell::Thinking(t) = &mut self.entries[i].cell
                && t.open != open
            {
                t.open = open;
                self.touch(i);
            }
        }
        true
    }

    /// Replaces the text of the last assistant cell, if it is the last cell.
    pub fn set_last_assistant(&mut self, text: &str) -> bool {
        let Some(i) = self.entries.len().checked_sub(1) else {
            return false;
        };
        let Cell::Assistant(t) = &mut self.entries[i].cell else {
            return false;
        };
        // The message as it streamed (the usual case): nothing to lay out
        // again, or only what it adds.
        if let Some(more) = text.strip_prefix(t.as_str()) {
            if !more.is_empty() {
                t.push_str(more);
                self.touch(i);
            }
            return true;
        }
        if let Some(Cell::Assistant(t)) = self.last_mut() {
            text.clone_into(t);
        }
        true
    }

    /// Drops what the response being retried streamed: a (partial)
    /// assistant message, and the thinking before it.
    pub fn discard_partial_assistant(&mut self) {
        // This turn's user cell or last tool call stands before them.
        for partial in [
            |c: &Cell| matches!(c, Cell::Assistant(_)),
            |c: &Cell| matches!(c, Cell::Thinking(_)),
        ] {
            if self.entries.last().is_some_and(|e| partial(&e.cell)) {
                self.entries.pop();
                self.ends.truncate(self.entries.len());
                self.dirty_from = self.dirty_from.min(self.entries.len());
            }
        }
    }

    /// A tool call, at the end. A read or search that follows another
    /// joins it: the two (or more) fold into one `Explored` line.
    pub fn push_tool(&mut self, call: ToolCell) {
        // A subagent's calls stand on their own, under their task, after
        // those it made before (tasks side by side stay apart).
        if let Some(parent) = call.parent.clone() {
            let Some(task) = self
                .entries
                .iter()
                .rposition(|e| matches!(&e.cell, Cell::Tool(t) if t.call_id == parent))
            else {
                return self.push(Cell::Tool(Box::new(call)));
            };
            let mut at = task + 1;
            while self.entries.get(at).is_some_and(
                |e| matches!(&e.cell, Cell::Tool(t) if t.parent.as_deref() == Some(parent.as_str())),
            ) {
                at += 1;
            }
            self.entries
                .insert(at, Entry::new(Cell::Tool(Box::new(call))));
            self.dirty_from = self.dirty_from.min(at);
            return;
        }
        if call.explores()
            && !call.nested
            && let Some(i) = self.entries.len().checked_sub(1)
        {
            let cell = &mut self.entries[i].cell;
            match cell {
                Cell::Explored(e) => e.calls.push(call),
                Cell::Tool(prev) if prev.explores() && !prev.nested => {
                    let first = (**prev).clone();
                    *cell = Cell::Explored(Box::new(super::explored::Explored {
                        calls: vec![first, call],
                        open: false,
                    }));
                }
                _ => return self.push(Cell::Tool(Box::new(call))),
            }
            self.touch(i);
            return;
        }
        self.push(Cell::Tool(Box::new(call)));
    }

    /// The calls of cell `i`: one, or a folded run.
    fn calls_mut(cell: &mut Cell) -> &mut [ToolCell] {
        match cell {
            Cell::Tool(t) => std::slice::from_mut(&mut **t),
            Cell::Explored(e) => &mut e.calls,
            _ => &mut [],
        }
    }

    /// The tool cell for `call_id`, searched from the end.
    pub fn tool_mut(&mut self, call_id: &str) -> Option<&mut ToolCell> {
        let i = self.entries.iter_mut().rposition(|e| {
            Self::calls_mut(&mut e.cell)
                .iter()
                .any(|t| t.call_id == call_id)
        })?;
        self.touch(i);
        Self::calls_mut(&mut self.entries[i].cell)
            .iter_mut()
            .find(|t| t.call_id == call_id)
    }

    /// Calls `f` on every running tool cell (spinner ticks).
    pub fn for_each_running(&mut self, mut f: impl FnMut(&mut ToolCell)) {
        // Running cells are near the end; stop at the first long run of
        // finished ones to keep ticks cheap on long transcripts.
        let mut seen_done = 0;
        for i in (0..self.entries.len()).rev() {
            let mut ran = false;
            for t in Self::calls_mut(&mut self.entries[i].cell) {
                if t.is_running() {
                    f(t);
                    ran = true;
                }
            }
            if ran {
                self.touch(i);
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
            e.changed = true;
        }
        self.dirty_from = self.dirty_from.min(i);
    }

    /// The cell at `row` of the view (from its top), if any.
    pub fn cell_at(&self, row: usize) -> Option<usize> {
        let total = self.total_lines();
        let bottom = total.saturating_sub(self.from_bottom);
        let top = bottom.saturating_sub(usize::from(self.viewport));
        let at = top + row;
        (at < bottom)
            .then(|| self.locate(at).map(|(i, _, _)| i))
            .flatten()
    }

    /// The lowest cell in view that opening changes (a diff cut short,
    /// output beyond its last lines, a folded run of reads) or that is
    /// open: what Enter on an empty composer opens or closes.
    pub fn last_openable_in_view(&self) -> Option<usize> {
        (0..usize::from(self.viewport))
            .rev()
            .filter_map(|row| self.cell_at(row))
            .find(|&i| {
                matches!(
                    self.entries.get(i).map(|e| &e.cell),
                    Some(Cell::Tool(t)) if t.opens() || t.open
                ) || matches!(
                    self.entries.get(i).map(|e| &e.cell),
                    Some(Cell::Explored(_))
                )
            })
    }

    /// A click on cell `i`: a change's compact diff opens whole, a folded
    /// run of reads opens call by call, or either closes again; whether
    /// anything changed.
    pub fn toggle_open(&mut self, i: usize) -> bool {
        match self.entries.get_mut(i).map(|e| &mut e.cell) {
            Some(Cell::Tool(t)) if t.opens() || t.open => t.open = !t.open,
            Some(Cell::Explored(e)) => e.open = !e.open,
            _ => return false,
        }
        self.touch(i);
        true
    }

    /// The last answer of the model, as it wrote it.
    pub fn last_answer(&self) -> Option<&str> {
        self.entries.iter().rev().find_map(|e| match &e.cell {
            Cell::Assistant(t) if !t.trim().is_empty() => Some(t.as_str()),
            _ => None,
        })
    }

    pub fn cells(&self) -> impl Iterator<Item = &Cell> {
        self.entries.iter().map(|e| &e.cell)
    }

    /// Lays out what changed, for `width` columns and a view `height` rows
    /// tall. Call before drawing.
    pub fn prepare(&mut self, width: u16, height: u16, theme: &Theme, hl: &Highlighter) {
        let before = self.total_lines();
        let resized = width != self.width;
        // Scrolled back, a resize keeps the line at the top of the view.
        let anchor = (resized && self.from_bottom > 0)
            .then(|| {
                self.locate(before.saturating_sub(self.from_bottom + usize::from(self.viewport)))
            })
            .flatten();
        if resized {
            self.width = width;
            self.dirty_from = 0;
            for e in &mut self.entries {
                e.measured = 0;
            }
        }
        // Scrolled back, a view that grows or shrinks (the hint row that
        // more is below, a dialog) keeps the line at its top.
        if !resized && self.from_bottom > 0 && height != self.viewport {
            self.from_bottom =
                (self.from_bottom + usize::from(self.viewport)).saturating_sub(usize::from(height));
        }
        self.viewport = height;
        let cols = cells::wrap_width(width);
        let start = self.dirty_from.min(self.entries.len());
        for e in &mut self.entries[start..] {
            e.lay_out(cols, theme, hl);
        }
        self.ends.truncate(start);
        let mut acc = self.ends.last().copied().unwrap_or(0);
        for e in &self.entries[start..] {
            acc += e.rows();
            self.ends.push(acc);
        }
        self.dirty_from = self.entries.len();
        let after = self.total_lines();
        if let Some((entry, line, _)) = anchor {
            let top = entry.checked_sub(1).map_or(0, |i| self.ends[i])
                + line
                    .checked_sub(1)
                    .and_then(|k| self.entries[entry].ends.get(k))
                    .copied()
                    .unwrap_or(0);
            self.from_bottom = after.saturating_sub(top + usize::from(height));
        } else if self.from_bottom > 0 && !resized && after > before {
            // Scrolled up: keep looking at the same lines.
            self.from_bottom += after - before;
        }
        self.clamp();
    }

    /// The entry, logical line and row within it of transcript row `row`.
    fn locate(&self, row: usize) -> Option<(usize, usize, usize)> {
        let i = self.ends.partition_point(|&end| end <= row);
        let e = self.entries.get(i)?;
        let before = i.checked_sub(1).map_or(0, |j| self.ends[j]);
        let (line, within) = e.find(row - before);
        Some((i, line, within))
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

    /// The lines in view, top to bottom: only these are wrapped.
    fn visible(&self, height: usize) -> Vec<Line<'static>> {
        let total = self.total_lines();
        let bottom = total.saturating_sub(self.from_bottom);
        let top = bottom.saturating_sub(height);
        let want = bottom - top;
        let mut out = Vec::with_capacity(want);
        let Some((first, line, mut skip)) = self.locate(top) else {
            return out;
        };
        let cols = cells::wrap_width(self.width);
        let mut rows = Vec::new();
        let mut start = line;
        for e in &self.entries[first..] {
            for l in e.logical.get(start..).unwrap_or_default() {
                rows.clear();
                wrap(l, cols, &mut rows);
                for r in rows.drain(..).skip(skip) {
                    out.push(r);
                    if out.len() == want {
                        return out;
                    }
                }
                skip = 0;
            }
            start = 0;
        }
        out
    }
}

impl Widget for &Transcript {
    fn render(self, area: Rect, buf: &mut Buffer) {
        for (row, line) in self.visible(usize::from(area.height)).iter().enumerate() {
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
