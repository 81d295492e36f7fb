//! Syntax colours of a big diff, made on a thread of their own as far as
//! the view has been looked at, and no further.
//!
//! Highlighting costs about 60 µs a line and must go from a hunk's first
//! line (a line's colours depend on those before it): a 20,000-line file
//! is over a second of a core. The dialog shows the first screen; the
//! person may approve from there. So the thread colours the lines the view
//! asks for and a margin after them ([`AHEAD`]), publishes them, and waits
//! for the view to ask for more (a scroll, a jump to the end). A dialog
//! nobody scrolls costs a few milliseconds and then nothing.
//!
//! Both sides of a hunk are coloured in step (line `i` of the old side
//! and of the new side together), so a row's colours come with those of
//! the rows beside it whichever side it is on.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::highlight::Highlighter;

/// Lines coloured past the last one the view asked for: a page or two of
/// scrolling shows colours at once.
pub const AHEAD: usize = 200;

/// How often a waiting thread looks whether its view is gone.
const LOOK: Duration = Duration::from_millis(500);

/// Lines coloured between two looks at what the view wants.
const BATCH: usize = 64;

/// What the view and the colouring thread share.
#[derive(Debug, Default)]
pub struct Colours {
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// Per hunk, the coloured lines of its old and new side so far.
    done: Vec<(Vec<Line<'static>>, Vec<Line<'static>>)>,
    /// Colour up to line `.1` (exclusive) of hunk `.0`, and every hunk
    /// before it.
    want: (usize, usize),
    /// Lines were coloured since the view was last told.
    fresh: bool,
}

impl Colours {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The view shows line `line` of hunk `hunk`: colour up to there and
    /// [`AHEAD`] lines more.
    pub fn want(&self, hunk: usize, line: usize) {
        let want = (hunk, line.saturating_add(AHEAD));
        let mut s = self.lock();
        if want > s.want {
            s.want = want;
            self.wake.notify_one();
        }
    }

    /// The colours of line `line` of a hunk's side, once made.
    pub fn spans(&self, hunk: usize, old: bool, line: usize) -> Option<Vec<Span<'static>>> {
        let s = self.lock();
        let (o, n) = s.done.get(hunk)?;
        let side = if old { o } else { n };
        side.get(line).map(|l| l.spans.clone())
    }

    /// Whether every line of `sides` is coloured.
    #[cfg(any(test, feature = "internals"))]
    pub fn complete(&self, sides: &[(String, String)]) -> bool {
        let s = self.lock();
        s.done.len() == sides.len()
            && s.done.iter().zip(sides).all(|((o, n), (old, new))| {
                o.len() == old.lines().count() && n.len() == new.lines().count()
            })
    }

    /// Colours `sides` as far as the view wants, on the calling thread,
    /// until every line is done or the view (`alive`) is gone; `landed`
    /// is called each time the colours caught up with what was asked (so
    /// the view is drawn again).
    pub fn run(
        &self,
        sides: &[(String, String)],
        hl: &Highlighter,
        token: &str,
        base: Style,
        alive: &Weak<()>,
        landed: &dyn Fn(),
    ) {
        for (h, (old, new)) in sides.iter().enumerate() {
            self.lock().done.push((Vec::new(), Vec::new()));
            let (mut old_hl, mut new_hl) = (hl.lines(token, base), hl.lines(token, base));
            let mut olds = syntect::util::LinesWithEndings::from(old);
            let mut news = syntect::util::LinesWithEndings::from(new);
            let mut i = 0;
            let mut ended = false;
            while !ended {
                if !self.wait_for_demand(h, i, alive, landed) {
                    return;
                }
                let (mut o, mut n) = (Vec::new(), Vec::new());
                for _ in 0..BATCH {
                    let (a, b) = (olds.next(), news.next());
                    if a.is_none() && b.is_none() {
                        ended = true;
                        break;
                    }
                    o.extend(a.map(|l| old_hl.line(l)));
                    n.extend(b.map(|l| new_hl.line(l)));
                    i += 1;
                }
                let mut s = self.lock();
                if let Some((so, sn)) = s.done.get_mut(h) {
                    so.append(&mut o);
                    sn.append(&mut n);
                    s.fresh = true;
                }
            }
        }
        landed();
    }

    /// Waits until the view wants line `i` of hunk `h` or later; false
    /// once the view is gone.
    fn wait_for_demand(&self, h: usize, i: usize, alive: &Weak<()>, landed: &dyn Fn()) -> bool {
        let mut s = self.lock();
        while (h, i) >= s.want {
            if alive.strong_count() == 0 {
                return false;
            }
            if std::mem::take(&mut s.fresh) {
                // Caught up: what was asked for is there to draw.
                drop(s);
                landed();
                s = self.lock();
                continue;
            }
            s = self
                .wake
                .wait_timeout(s, LOOK)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        alive.strong_count() > 0
    }
}

/// A shared handle: the view keeps one, the thread another.
pub type Shared = Arc<Colours>;
