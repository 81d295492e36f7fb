//! A unified diff, drawn for review: old and new line numbers, `+`/`-`
//! colours, the changed words of each edited line highlighted (a word diff
//! with `similar` between a removed line and the added line that replaces
//! it), syntax colours by the file's language, and tabs shown as `→`.
//!
//! Big diffs stay fast. Parsing is one pass. How many rows each line takes
//! at a width is counted once per width (from its text alone); only the
//! rows in view are styled and wrapped, and the word diff of a pair of
//! lines is made the first time it is shown. Syntax highlighting of a big
//! diff runs on a thread of its own ([`DiffView::colour_job`]), as far as
//! the view has been looked at and a little further ([`colours`]); until
//! it lands the lines show in plain colours.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use similar::{ChangeTag, TextDiff};

use crate::highlight::Highlighter;
use crate::theme::Theme;
use crate::wrap::{Logical, expand_tabs, rows, wrap};

mod colours;

/// Diffs with more lines than this are highlighted off the UI thread
/// (highlighting costs about 60 µs a line, so this keeps the UI thread
/// under about 25 ms).
pub const HIGHLIGHT_INLINE: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Context,
    Added,
    Removed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Row {
    /// A `@@` header, and which hunk it starts.
    Hunk(String, usize),
    Note(String),
    Line {
        kind: Kind,
        old: Option<usize>,
        new: Option<usize>,
        text: String,
        /// The row this one replaces or is replaced by (removed ↔ added),
        /// for the word diff.
        pair: Option<usize>,
        /// Index of this line in its side's text of the hunk (for syntax).
        side_index: usize,
        hunk: usize,
    },
}

/// Highlighted lines of each hunk's old and new side.
pub type Highlighted = Vec<(Vec<Line<'static>>, Vec<Line<'static>>)>;

/// A parsed diff, ready to draw at any width.
#[derive(Debug, Clone)]
pub struct DiffView {
    pub path: String,
    rows: Vec<Row>,
    /// Per hunk: the old side's and the new side's text, for highlighting.
    sides: Arc<Vec<(String, String)>>,
    highlighted: Option<Arc<Highlighted>>,
    /// A big diff's colours, made elsewhere as the view asks for them.
    colours: Option<colours::Shared>,
    /// Held while the view (or a clone) lives; highlighting elsewhere stops
    /// once it is gone (the call was answered).
    alive: Arc<()>,
    num_width: usize,
    /// Rows of each line at a width, as prefix sums.
    layout: RefCell<(Option<u16>, Vec<usize>)>,
    /// Changed byte ranges of the lines whose word diff was made.
    words: RefCell<HashMap<usize, Vec<Range<usize>>>>,
    marks: RefCell<Marks>,
    /// Per hunk: its first run of changed lines, as line indices (made
    /// once, so a frame looks each up at no cost).
    changes: Vec<Option<(usize, usize)>>,
}

impl PartialEq for DiffView {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.rows == other.rows
    }
}

/// Lays a change out row by row, as its hunks hold it.
#[derive(Default)]
struct Builder {
    rows: Vec<Row>,
    sides: Vec<(String, String)>,
    /// Lines so far in the current hunk's old and new side.
    old_count: usize,
    new_count: usize,
    /// The removed rows waiting for the added rows that replace them.
    removed_run: Vec<usize>,
    paired: usize,
    old_no: usize,
    new_no: usize,
}

impl Builder {
    fn hunk(&mut self, header: String, old_start: usize, new_start: usize) {
        self.rows.push(Row::Hunk(header, self.sides.len()));
        self.sides.push((String::new(), String::new()));
        (self.old_no, self.new_no) = (old_start.max(1), new_start.max(1));
        (self.old_count, self.new_count) = (0, 0);
        self.removed_run.clear();
        self.paired = 0;
    }

    /// One line of a hunk as it holds it (` `, `-`, `+` or `\` first).
    fn line(&mut self, raw: &str) {
        if self.sides.is_empty() {
            self.sides.push((String::new(), String::new()));
        }
        let hunk = self.sides.len() - 1;
        let (kind, text) = match raw.as_bytes().first() {
            Some(b'+') => (Kind::Added, &raw[1..]),
            Some(b'-') => (Kind::Removed, &raw[1..]),
            Some(b' ') => (Kind::Context, &raw[1..]),
            Some(b'\\') => {
                self.rows.push(Row::Note(raw.to_string()));
                return;
            }
            _ => (Kind::Context, raw),
        };
        let side = &mut self.sides[hunk];
        let index = self.rows.len();
        let mut pair = None;
        let (old, new, side_index) = match kind {
            Kind::Context => {
                for s in [&mut side.0, &mut side.1] {
                    s.push_str(text);
                    s.push('\n');
                }
                self.old_no += 1;
                self.new_no += 1;
                self.old_count += 1;
                self.new_count += 1;
                self.removed_run.clear();
                self.paired = 0;
                (
                    Some(self.old_no - 1),
                    Some(self.new_no - 1),
                    self.new_count - 1,
                )
            }
            Kind::Removed => {
                side.0.push_str(text);
                side.0.push('\n');
                self.old_no += 1;
                self.old_count += 1;
                if self.paired > 0 {
                    // A removal after additions starts a new run.
                    self.removed_run.clear();
                    self.paired = 0;
                }
                self.removed_run.push(index);
                (Some(self.old_no - 1), None, self.old_count - 1)
            }
            Kind::Added => {
                side.1.push_str(text);
                side.1.push('\n');
                self.new_no += 1;
                self.new_count += 1;
                if let Some(&r) = self.removed_run.get(self.paired) {
                    pair = Some(r);
                    if let Some(Row::Line { pair: p, .. }) = self.rows.get_mut(r) {
                        *p = Some(index);
                    }
                }
                self.paired += 1;
                (None, Some(self.new_no - 1), self.new_count - 1)
            }
        };
        self.rows.push(Row::Line {
            kind,
            old,
            new,
            text: text.to_string(),
            pair,
            side_index,
            hunk,
        });
    }

    fn finish(self, path: String) -> DiffView {
        let num_width = self
            .rows
            .iter()
            .filter_map(|r| match r {
                Row::Line { old, new, .. } => Some(old.unwrap_or(0).max(new.unwrap_or(0))),
                _ => None,
            })
            .max()
            .unwrap_or(0)
            .to_string()
            .len()
            .max(3);
        // Each hunk's first run of changed lines, in one pass.
        let mut changes: Vec<Option<(usize, usize)>> = Vec::new();
        for (i, row) in self.rows.iter().enumerate() {
            let Row::Line { kind, hunk, .. } = row else {
                continue;
            };
            if *kind == Kind::Context {
                continue;
            }
            if changes.len() <= *hunk {
                changes.resize(hunk + 1, None);
            }
            match &mut changes[*hunk] {
                slot @ None => *slot = Some((i, i + 1)),
                // The first run goes on; a later one is not looked at.
                Some((_, end)) if *end == i => *end = i + 1,
                Some(_) => {}
            }
        }
        DiffView {
            changes,
            path,
            rows: self.rows,
            sides: Arc::new(self.sides),
            highlighted: None,
            colours: None,
            alive: Arc::new(()),
            num_width,
            layout: RefCell::new((None, Vec::new())),
            words: RefCell::new(HashMap::new()),
            marks: RefCell::default(),
        }
    }
}

/// What a line of a change is, as drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// The file: its path, and what happens to it.
    File,
    /// A hunk's `@@` header.
    Hunk,
    Added,
    Removed,
    Context,
    /// `\ No newline at end of file`.
    Note,
}

/// A change's lines as drawn, from its hunks: the file, each hunk's
/// header, and its lines with their signs.
pub fn change_lines(change: &crate::protocol::change::FileChange) -> Vec<(LineKind, String)> {
    use crate::protocol::change::ChangeKind;
    use crate::protocol::visible;
    let path = visible::name(&change.path);
    let file = match (change.kind, &change.from) {
        (ChangeKind::Create, _) => format!("{path} (new file)"),
        (ChangeKind::Delete, _) => format!("{path} (deleted)"),
        (ChangeKind::Rename, Some(from)) => format!("{} → {path}", visible::name(from)),
        _ => path.into_owned(),
    };
    let mut out = vec![(LineKind::File, file)];
    for h in &change.hunks {
        out.push((LineKind::Hunk, h.header()));
        for line in &h.lines {
            let kind = match line.as_bytes().first() {
                Some(b'+') => LineKind::Added,
                Some(b'-') => LineKind::Removed,
                Some(b'\\') => LineKind::Note,
                _ => LineKind::Context,
            };
            out.push((kind, line.clone()));
        }
    }
    out
}

impl DiffView {
    /// A change, laid out from its hunks (the core's structured change:
    /// no diff text is read back).
    pub fn from_change(change: &crate::protocol::change::FileChange) -> Self {
        use crate::protocol::change::ChangeKind;
        use crate::protocol::visible;
        let path = match (change.kind, &change.from) {
            (ChangeKind::Rename, Some(from)) => {
                format!("{} → {}", visible::name(from), visible::name(&change.path))
            }
            _ => visible::name(&change.path).into_owned(),
        };
        let mut b = Builder::default();
        for h in &change.hunks {
            b.hunk(h.header(), h.old_start, h.new_start);
            for line in &h.lines {
                b.line(line);
            }
        }
        b.finish(path)
    }

    /// Text that is no diff (what a tool says of a change it cannot show
    /// line by line), shown as it is.
    pub fn plain(path: &str, text: &str) -> Self {
        let mut b = Builder::default();
        for line in text.lines() {
            b.rows.push(Row::Note(line.to_string()));
        }
        b.finish(path.to_string())
    }

    /// Lines of the diff (rows before wrapping).
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    #[cfg(any(test, feature = "internals"))]
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Whether syntax colours are in.
    #[cfg(any(test, feature = "internals"))]
    pub fn is_highlighted(&self) -> bool {
        self.highlighted.is_some()
    }

    /// The work that highlights this diff, to run anywhere; hand its
    /// result to [`DiffView::set_highlighted`]. It gives up (`None`) once
    /// every copy of the view is gone.
    pub fn highlight_job(
        &self,
        theme: &Theme,
        hl: &Highlighter,
    ) -> impl FnOnce() -> Option<Highlighted> + Send + 'static {
        let sides = Arc::clone(&self.sides);
        let alive = Arc::downgrade(&self.alive);
        let token = Highlighter::token_for_path(&self.path);
        let base = theme.text();
        let hl = hl.clone();
        move || {
            let side = |text: &str| -> Option<Vec<Line<'static>>> {
                let mut lines = hl.lines(&token, base);
                let mut out = Vec::new();
                for (i, line) in syntect::util::LinesWithEndings::from(text).enumerate() {
                    if i % 256 == 0 && alive.strong_count() == 0 {
                        return None;
                    }
                    out.push(lines.line(line));
                }
                Some(out)
            };
            sides
                .iter()
                .map(|(old, new)| Some((side(old)?, side(new)?)))
                .collect()
        }
    }

    /// The work that colours a big diff as far as it is looked at (see
    /// [`colours`]), to run on a thread of its own: it calls its argument
    /// each time colours land (draw again), and ends once every line is
    /// coloured or every copy of the view is gone.
    pub fn colour_job(
        &mut self,
        theme: &Theme,
        hl: &Highlighter,
    ) -> impl FnOnce(&dyn Fn()) + Send + 'static {
        let shared = colours::Shared::default();
        self.colours = Some(Arc::clone(&shared));
        let sides = Arc::clone(&self.sides);
        let alive = Arc::downgrade(&self.alive);
        let token = Highlighter::token_for_path(&self.path);
        let base = theme.text();
        let hl = hl.clone();
        move |landed: &dyn Fn()| shared.run(&sides, &hl, &token, base, &alive, landed)
    }

    /// Whether every line of a big diff is coloured.
    #[cfg(any(test, feature = "internals"))]
    pub fn colours_complete(&self) -> bool {
        self.colours
            .as_ref()
            .is_some_and(|c| c.complete(&self.sides))
    }

    /// Highlights now, on this thread (for small diffs).
    pub fn highlight_now(&mut self, theme: &Theme, hl: &Highlighter) {
        let job = self.highlight_job(theme, hl);
        if let Some(h) = job() {
            self.set_highlighted(h);
        }
    }

    pub fn set_highlighted(&mut self, highlighted: Highlighted) {
        self.highlighted = Some(Arc::new(highlighted));
    }

    fn gutter(&self, old: Option<usize>, new: Option<usize>) -> String {
        let w = self.num_width;
        let num = |n: Option<usize>| n.map_or_else(|| " ".repeat(w), |n| format!("{n:>w$}"));
        format!("{} {} ", num(old), num(new))
    }

    /// Rows of every line at `width`, as prefix sums (made once per width).
    fn ends(&self, width: u16) -> std::cell::Ref<'_, Vec<usize>> {
        if self.layout.borrow().0 != Some(width) {
            let mut acc = 0;
            let ends = (0..self.rows.len())
                .map(|i| {
                    acc += rows(&self.plain_logical(i), usize::from(width));
                    acc
                })
                .collect();
            *self.layout.borrow_mut() = (Some(width), ends);
        }
        std::cell::Ref::map(self.layout.borrow(), |(_, ends)| ends)
    }

    /// Rows the diff takes at `width`.
    pub fn height(&self, width: u16) -> usize {
        self.ends(width).last().copied().unwrap_or(0)
    }

    /// `count` rows from row `from`, drawn at `width` columns.
    pub fn rows_in(
        &self,
        theme: &Theme,
        width: u16,
        from: usize,
        count: usize,
    ) -> Vec<Line<'static>> {
        let (first, mut skip) = {
            let ends = self.ends(width);
            let i = ends.partition_point(|&end| end <= from);
            let before = i.checked_sub(1).map_or(0, |j| ends[j]);
            (i, from.saturating_sub(before))
        };
        let mut out = Vec::with_capacity(count.min(self.rows.len()));
        let mut rows = Vec::new();
        let mut shown = None;
        for i in first..self.rows.len() {
            if out.len() >= count {
                break;
            }
            rows.clear();
            wrap(
                &self.styled_logical(i, theme),
                usize::from(width),
                &mut rows,
            );
            out.extend(rows.drain(..).skip(skip).take(count - out.len()));
            skip = 0;
            shown = shown.max(match &self.rows[i] {
                Row::Hunk(_, n) => Some((*n, 0)),
                Row::Line {
                    hunk, side_index, ..
                } => Some((*hunk, *side_index)),
                Row::Note(_) => None,
            });
        }
        // The colours of what is shown (and a margin) are asked for, once.
        if let (Some(c), Some((hunk, line))) = (&self.colours, shown) {
            c.want(hunk, line);
        }
        out
    }

    /// The whole diff drawn at `width` columns.
    #[cfg(any(test, feature = "internals"))]
    pub fn lines(&self, theme: &Theme, width: u16) -> Vec<Line<'static>> {
        self.rows_in(theme, width, 0, usize::MAX)
    }

    /// Row `i` with its text only, to count its rows.
    fn plain_logical(&self, i: usize) -> Logical {
        match &self.rows[i] {
            Row::Hunk(t, _) | Row::Note(t) => Logical::code(Line::from(t.clone())),
            Row::Line { old, new, text, .. } => {
                let gutter = self.gutter(*old, *new);
                let mut spans = vec![Span::raw(gutter), Span::raw("  ")];
                spans.extend(expand_tabs(vec![Span::raw(text.clone())], true));
                Logical::code(Line::from(spans))
            }
        }
    }

    /// The changed byte ranges of row `i` (made on first use).
    fn words_of(&self, i: usize) -> Vec<Range<usize>> {
        if let Some(w) = self.words.borrow().get(&i) {
            return w.clone();
        }
        let Row::Line {
            kind,
            text,
            pair: Some(p),
            ..
        } = &self.rows[i]
        else {
            return Vec::new();
        };
        let Some(Row::Line { text: other, .. }) = self.rows.get(*p) else {
            return Vec::new();
        };
        let (old, new) = if *kind == Kind::Removed {
            (text, other)
        } else {
            (other, text)
        };
        let (old_r, new_r) = word_changes(old, new);
        let (mine, theirs) = if *kind == Kind::Removed {
            (old_r, new_r)
        } else {
            (new_r, old_r)
        };
        let mut words = self.words.borrow_mut();
        words.insert(*p, theirs);
        words.insert(i, mine.clone());
        mine
    }

    /// Row `i` styled: syntax colours, line and word backgrounds.
    fn styled_logical(&self, i: usize, theme: &Theme) -> Logical {
        let (kind, old, new, text, side_index, hunk) = match &self.rows[i] {
            Row::Hunk(h, n) => {
                let marks = self.marks.borrow();
                let out = marks.excluded.get(*n).copied().unwrap_or(false);
                let chosen = marks.selected == Some(*n);
                let mut spans = vec![Span::styled(
                    if chosen { "▸ " } else { "" }.to_string(),
                    theme.bold(theme.colors.accent),
                )];
                spans.push(Span::styled(
                    h.clone(),
                    if chosen {
                        theme.bold(theme.colors.accent)
                    } else {
                        theme.accent()
                    },
                ));
                if out {
                    spans.push(Span::styled("  left out", theme.bold(theme.colors.warning)));
                }
                return Logical::code(Line::from(spans));
            }
            Row::Note(n) => {
                return Logical::code(Line::from(Span::styled(n.clone(), theme.muted())));
            }
            Row::Line {
                kind,
                old,
                new,
                text,
                side_index,
                hunk,
                ..
            } => (*kind, *old, *new, text, *side_index, *hunk),
        };
        let (sign, line_style, word_style) = match kind {
            Kind::Context => (' ', Style::default(), Style::default()),
            Kind::Added => (
                '+',
                Style::default().bg(theme.colors.diff_add_bg),
                Style::default().bg(theme.colors.diff_add_word_bg),
            ),
            Kind::Removed => (
                '-',
                Style::default().bg(theme.colors.diff_del_bg),
                Style::default().bg(theme.colors.diff_del_word_bg),
            ),
        };
        let sign_color = match kind {
            Kind::Context => theme.colors.muted,
            Kind::Added => theme.colors.diff_add,
            Kind::Removed => theme.colors.diff_del,
        };
        let gutter = self.gutter(old, new);
        let content = self
            .highlighted
            .as_ref()
            .and_then(|h| h.get(hunk))
            .map(|(o, n)| if kind == Kind::Removed { o } else { n })
            .and_then(|lines| lines.get(side_index))
            .map(|l| l.spans.clone())
            .or_else(|| {
                let c = self.colours.as_ref()?;
                c.spans(hunk, kind == Kind::Removed, side_index)
            })
            .unwrap_or_else(|| vec![Span::styled(text.clone(), theme.text())]);
        let mut content = patch_style(content, line_style);
        let words = self.words_of(i);
        if !theme.has_color() && kind != Kind::Context {
            // Without colour, changed words are underlined instead.
            content = restyle_ranges(
                content,
                &words,
                Style::default().add_modifier(Modifier::UNDERLINED),
            );
        } else {
            content = restyle_ranges(content, &words, word_style);
        }
        let hang = Line::from(vec![
            Span::raw(" ".repeat(gutter.len())),
            Span::styled("  ", line_style),
        ]);
        let mut spans = vec![
            Span::styled(gutter, theme.muted()),
            Span::styled(
                format!("{sign} "),
                Style::default()
                    .fg(sign_color)
                    .add_modifier(Modifier::BOLD)
                    .patch(line_style),
            ),
        ];
        spans.extend(expand_tabs(content, true));
        // A hunk left out is drawn struck through and dim.
        if self
            .marks
            .borrow()
            .excluded
            .get(hunk)
            .copied()
            .unwrap_or(false)
        {
            let out = Modifier::CROSSED_OUT | Modifier::DIM;
            spans = spans
                .into_iter()
                .map(|s| {
                    let style = s.style.add_modifier(out);
                    s.style(style)
                })
                .collect();
        }
        Logical::new(Line::from(spans), hang, true)
    }

    /// How many hunks the diff has.
    pub fn hunks(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| matches!(r, Row::Hunk(..)))
            .count()
    }

    /// Lines added and removed by the hunks kept (`excluded[h]` leaves
    /// hunk `h` out).
    pub fn counts(&self, excluded: &[bool]) -> (usize, usize) {
        let mut counts = (0, 0);
        for row in &self.rows {
            if let Row::Line { kind, hunk, .. } = row
                && !excluded.get(*hunk).copied().unwrap_or(false)
            {
                match kind {
                    Kind::Added => counts.0 += 1,
                    Kind::Removed => counts.1 += 1,
                    Kind::Context => {}
                }
            }
        }
        counts
    }

    /// The row (at `width`) where hunk `n` starts.
    pub fn hunk_row(&self, n: usize, width: u16) -> usize {
        let Some(i) = self
            .rows
            .iter()
            .position(|r| matches!(r, Row::Hunk(_, h) if *h == n))
        else {
            return 0;
        };
        i.checked_sub(1).map_or(0, |j| self.ends(width)[j])
    }

    /// The rows (at `width`) of hunk `n`'s first run of changed lines:
    /// from its first added or removed line to just after the run.
    /// `None` for a hunk with no change (or no such hunk).
    pub fn change_rows(&self, n: usize, width: u16) -> Option<(usize, usize)> {
        let (first, last) = self.changes.get(n).copied().flatten()?;
        let ends = self.ends(width);
        let start = first.checked_sub(1).map_or(0, |j| ends[j]);
        Some((start, ends[last - 1]))
    }

    /// Marks the hunk chosen and those left out, for the next frames.
    pub fn set_marks(&self, selected: Option<usize>, excluded: &[bool]) {
        *self.marks.borrow_mut() = Marks {
            selected,
            excluded: excluded.to_vec(),
        };
    }
}

/// The hunk chosen in a review, and those left out.
#[derive(Debug, Clone, Default)]
struct Marks {
    selected: Option<usize>,
    excluded: Vec<bool>,
}

/// Byte ranges that changed in `old` and in `new`, by words.
fn word_changes(old: &str, new: &str) -> (Vec<Range<usize>>, Vec<Range<usize>>) {
    let diff = TextDiff::from_words(old, new);
    let (mut o, mut n) = (0usize, 0usize);
    let (mut old_r, mut new_r) = (Vec::new(), Vec::new());
    for change in diff.iter_all_changes() {
        let len = change.value().len();
        match change.tag() {
            ChangeTag::Equal => {
                o += len;
                n += len;
            }
            ChangeTag::Delete => {
                push_range(&mut old_r, o..o + len);
                o += len;
            }
            ChangeTag::Insert => {
                push_range(&mut new_r, n..n + len);
                n += len;
            }
        }
    }
    // A line that changed completely gains nothing from word marks.
    if old_r.iter().map(ExactSizeIterator::len).sum::<usize>() == old.len()
        || new_r.iter().map(ExactSizeIterator::len).sum::<usize>() == new.len()
    {
        return (Vec::new(), Vec::new());
    }
    (old_r, new_r)
}

fn push_range(ranges: &mut Vec<Range<usize>>, r: Range<usize>) {
    if let Some(last) = ranges.last_mut()
        && last.end == r.start
    {
        last.end = r.end;
        return;
    }
    ranges.push(r);
}

fn patch_style(spans: Vec<Span<'static>>, style: Style) -> Vec<Span<'static>> {
    spans
        .into_iter()
        .map(|s| {
            let st = s.style.patch(style);
            Span::styled(s.content, st)
        })
        .collect()
}

/// Patches `style` onto the byte `ranges` of the text the spans hold.
fn restyle_ranges(
    spans: Vec<Span<'static>>,
    ranges: &[Range<usize>],
    style: Style,
) -> Vec<Span<'static>> {
    if ranges.is_empty() {
        return spans;
    }
    let mut out = Vec::new();
    let mut pos = 0;
    for span in spans {
        let text = span.content.as_ref();
        let end = pos + text.len();
        let mut cut = 0;
        for r in ranges.iter().filter(|r| r.start < end && r.end > pos) {
            let a = r.start.max(pos) - pos;
            let b = r.end.min(end) - pos;
            if !text.is_char_boundary(a) || !text.is_char_boundary(b) {
                continue;
            }
            if a > cut {
                out.push(Span::styled(text[cut..a].to_string(), span.style));
            }
            out.push(Span::styled(
                text[a..b].to_string(),
                span.style.patch(style),
            ));
            cut = b;
        }
        if cut < text.len() {
            out.push(Span::styled(text[cut..].to_string(), span.style));
        }
        pos = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use insta::assert_snapshot;

    use std::path::PathBuf;

    use super::*;
    use crate::protocol::change::FileChange;

    fn text(lines: &[Line<'_>]) -> String {
        crate::wrap::plain(lines).join("\n")
    }

    #[test]
    fn a_diff_renders_with_numbers_signs_and_hunks() {
        let old = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";
        let new = "fn main() {\n    let x = 2;\n    println!(\"{x}\");\n    done();\n}\n";
        let v = DiffView::from_change(&FileChange::new(
            "src/main.rs",
            PathBuf::new(),
            Some(old),
            new,
        ));
        assert_eq!((v.path.as_str(), v.counts(&[])), ("src/main.rs", (2, 1)));
        let lines = v.lines(&Theme::plain(), 60);
        assert_snapshot!("diff_view_plain", text(&lines));
    }

    #[test]
    fn changed_words_are_marked() {
        let (o, n) = word_changes("let x = 1;", "let x = 2;");
        assert_eq!(o, vec![(8..10)]);
        assert_eq!(n, vec![(8..10)]);
        let (o, _) = word_changes("abc", "xyz");
        assert!(o.is_empty(), "whole-line changes get no word marks");
        let theme = Theme::dark();
        let mut v = DiffView::from_change(&FileChange::new(
            "a.rs",
            PathBuf::new(),
            Some("let x = 1;\n"),
            "let x = 2;\n",
        ));
        v.highlight_now(&theme, &Highlighter::new(theme.syntax_theme.as_deref()));
        let lines = v.lines(&theme, 40);
        let marked: Vec<&str> = lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .filter(|s| {
                s.style.bg == Some(theme.colors.diff_add_word_bg)
                    || s.style.bg == Some(theme.colors.diff_del_word_bg)
            })
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(marked.concat(), "1;2;");
    }

    #[test]
    fn long_lines_wrap_under_the_gutter() {
        let v = DiffView::from_change(&FileChange::new(
            "a.txt",
            PathBuf::new(),
            None,
            &format!("{}\n", "word ".repeat(20)),
        ));
        let lines = v.lines(&Theme::plain(), 40);
        assert!(lines.len() > 3);
        assert!(
            text(&lines[2..3]).starts_with("        "),
            "{}",
            text(&lines)
        );
    }

    #[test]
    fn removed_runs_pair_with_the_added_lines_after_them() {
        let v = DiffView::from_change(&FileChange::new(
            "x",
            PathBuf::new(),
            Some("a 1\nb 1\nc\nd 1\n"),
            "a 2\nb 2\nextra\nc\nd 2\n",
        ));
        let pairs: Vec<(usize, Option<usize>)> = v
            .rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match r {
                Row::Line { pair, .. } => Some((i, *pair)),
                _ => None,
            })
            .collect();
        assert_eq!(
            pairs,
            [
                (1, Some(3)),
                (2, Some(4)),
                (3, Some(1)),
                (4, Some(2)),
                (5, None),
                (6, None),
                (7, Some(8)),
                (8, Some(7)),
            ]
        );
    }

    #[test]
    fn a_big_diff_styles_only_the_rows_shown() {
        let new: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        let old: String = (0..20_000).map(|i| format!("line {}\n", i * 2)).collect();
        let v = DiffView::from_change(&FileChange::new(
            "big.txt",
            PathBuf::new(),
            Some(&old),
            &new,
        ));
        assert!(v.height(80) >= 20_000);
        let shown = v.rows_in(&Theme::plain(), 80, 100, 5);
        assert_eq!(shown.len(), 5);
        assert!(
            v.words.borrow().len() <= 10,
            "word diffs only for rows shown"
        );
    }

    #[test]
    fn tabs_show_as_arrows_at_their_stops() {
        let v = DiffView::from_change(&FileChange::new(
            "Makefile",
            PathBuf::new(),
            None,
            "all:\n\tgo build\n",
        ));
        let lines = v.lines(&Theme::plain(), 40);
        let shown = text(&lines);
        assert!(shown.contains("+ →   go build"), "{shown}");
    }

    /// A big diff is coloured as far as it is looked at and a margin, then
    /// the thread waits (no CPU); a jump to the end colours the rest; the
    /// thread ends once the view is gone.
    #[test]
    fn a_big_diff_is_coloured_as_far_as_it_is_looked_at() {
        use std::sync::mpsc;
        let theme = Theme::dark();
        let hl = Highlighter::new(theme.syntax_theme.as_deref());
        let content: String = (0..5_000)
            .map(|i| format!("fn f{i}() {{ {i} }}\n"))
            .collect();
        let mut v = DiffView::from_change(&FileChange::new("a.rs", PathBuf::new(), None, &content));
        let first = |v: &DiffView| v.rows_in(&theme, 80, 0, 20);
        let plain = first(&v);
        let job = v.colour_job(&theme, &hl);
        let (tx, rx) = mpsc::channel();
        let worker = std::thread::spawn(move || {
            job(&move || {
                let _ = tx.send(());
            })
        });
        let _ = first(&v);
        rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        assert!(plain != first(&v), "the first screen gets its colours");
        // Nothing further is coloured until asked: the thread waits.
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!v.colours_complete());
        assert!(
            v.colours
                .as_ref()
                .unwrap()
                .spans(0, false, colours::AHEAD + 100)
                .is_none()
        );
        // The end is looked at: everything before it is coloured.
        let end = v.height(80) - 5;
        let _ = v.rows_in(&theme, 80, end, 5);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !v.colours_complete() {
            assert!(std::time::Instant::now() < deadline, "never coloured whole");
            let _ = rx.recv_timeout(std::time::Duration::from_millis(100));
        }
        drop(v);
        worker.join().unwrap();
    }

    /// The view closed while its colours wait for demand: the thread ends.
    #[test]
    fn a_waiting_colouring_thread_ends_with_its_view() {
        let theme = Theme::dark();
        let hl = Highlighter::new(theme.syntax_theme.as_deref());
        let content: String = (0..2_000).map(|i| format!("let x{i} = {i};\n")).collect();
        let mut v = DiffView::from_change(&FileChange::new("a.rs", PathBuf::new(), None, &content));
        let job = v.colour_job(&theme, &hl);
        let worker = std::thread::spawn(move || job(&|| {}));
        let _ = v.rows_in(&theme, 80, 0, 10);
        std::thread::sleep(std::time::Duration::from_millis(20));
        drop(v);
        worker.join().unwrap();
    }

    #[test]
    fn highlighting_stops_once_the_view_is_gone() {
        let theme = Theme::dark();
        let hl = Highlighter::new(theme.syntax_theme.as_deref());
        let v = DiffView::from_change(&FileChange::new(
            "a.rs",
            PathBuf::new(),
            None,
            "fn a() {}\n",
        ));
        let job = v.highlight_job(&theme, &hl);
        let kept = v.highlight_job(&theme, &hl);
        assert!(kept().is_some());
        drop(v);
        assert!(job().is_none());
    }

    #[test]
    fn restyling_splits_spans_at_byte_ranges() {
        let spans = vec![Span::raw("héllo "), Span::raw("world")];
        let out = restyle_ranges(
            spans,
            &[Range { start: 4, end: 9 }],
            Style::default().bold(),
        );
        let parts: Vec<&str> = out.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(parts, ["hél", "lo ", "wo", "rld"]);
    }
}
