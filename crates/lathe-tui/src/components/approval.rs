//! The approval dialog: a modal over the transcript for each call that
//! needs approval.
//!
//! It shows the tool, its key argument, which parts of the call need
//! approval and why (in a chain, only the parts no rule, grant or the
//! read-only set covers), exactly what a conversation grant would cover
//! and for how long (or why no grant is offered), and for file changes the
//! diff (else the command or arguments), scrollable. Keys: `y` approve
//! once, `a` approve for the conversation (only when a grant is offered),
//! `n` or Esc deny, `e` deny and tell the model what to do instead.
//!
//! Consent needs intent, so nothing typed by accident decides:
//! - the dialog arms only after a quiet moment ([`QUIET`]) with no key or
//!   paste; what the person goes on typing before that, when they were
//!   typing as it opened, goes on into the composer, so a sentence typed
//!   as the dialog opens is not an answer; so do keys of text that
//!   answer nothing, and an answer's letter followed at once by text
//!   (the "a" of "also"), held until the text shows it was a word's
//!   start; other keys that early are dropped with a word ([`READING`]),
//!   each starting the moment again;
//! - keys the dialog handles itself (scrolling, `j`/`k`, `x`) never make
//!   the next answer wait;
//! - a key with Alt (which is also how an Esc followed at once by a key
//!   arrives) is never an approval: it denies, as the Esc meant, and the
//!   key goes to the composer;
//! - a paste is never a key: it goes to the composer, or to the
//!   "instead" message, and restarts the quiet moment;
//! - `a` (approve for the conversation) asks for a second `a`, after
//!   another quiet moment;
//! - a dialog too small to show the call and its keys says so on one line
//!   and only denies;
//! - Enter and Space never approve.
//!
//! More requests queue behind the one shown; the title says how many
//! remain. Each decision says how it was made, for the tool-call log.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::TextArea;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::diff_view::DiffView;
use crate::component::{AppEvent, AppEvents, Outcome};
use crate::protocol::{ApprovalDecision, ApprovalRequest};
use crate::theme::Theme;

/// How long without a key or a paste before a dialog takes keys.
pub const QUIET: Duration = Duration::from_millis(400);

/// The rows of a call a dialog must show to take an answer (its start:
/// what it is, why it asks, the first lines of its diff or command).
const MIN_BODY_ROWS: usize = 8;

#[derive(Debug, Clone)]
pub struct PendingApproval {
    /// The question as the core asked it (its change is the one `E`
    /// edits, and, once edited, the person's version).
    pub request: ApprovalRequest,
    /// The change, laid out to be read (syntax colours come later).
    pub diff: Option<DiffView>,
    /// The change is the person's own edit of the proposal: `y` writes
    /// it (the hunks kept), as edited.
    pub edited: bool,
}

impl PendingApproval {
    /// A question as the core asked it, its change laid out as `diff`.
    pub fn new(request: ApprovalRequest, diff: Option<DiffView>) -> Self {
        Self {
            request,
            diff,
            edited: false,
        }
    }
}

/// The request's fields read through the pending question.
impl std::ops::Deref for PendingApproval {
    type Target = ApprovalRequest;

    fn deref(&self) -> &ApprovalRequest {
        &self.request
    }
}

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalAction {
    None,
    /// Not an answer (the dialog was not armed): the key belongs to the
    /// composer.
    Pass(KeyEvent),
    /// A key that does nothing here, and why.
    Hint(&'static str),
    /// `?`: the dialog's keys.
    Keys,
    /// `E`: the person edits the proposed file in their editor.
    Edit {
        call_id: String,
        name: String,
        text: String,
    },
    Decide {
        call_id: String,
        decision: ApprovalDecision,
        /// How the person decided, for the log: "y, 2.1 s after it showed".
        how: String,
        /// A key to hand on to the composer (the `x` of Alt-x).
        pass: Option<KeyEvent>,
    },
}

#[derive(Default)]
pub struct ApprovalOverlay {
    queue: VecDeque<PendingApproval>,
    arming: Arming,
    scroll: usize,
    /// Open while the person writes what the model should do instead.
    message: Option<TextArea<'static>>,
    /// `a` was pressed once; a second `a` grants.
    confirming: bool,
    /// Whether the last frame could show the call and its keys.
    fits: std::cell::Cell<bool>,
    /// What the last frame did with the dialog (shown whole or not), not
    /// yet told to the arming.
    drawn: std::cell::Cell<Option<bool>>,
    /// A frame has drawn the front request, whole or as a notice.
    drawn_once: bool,
    /// How far the last frame could scroll; keys never scroll past it.
    max_scroll: std::cell::Cell<usize>,
    /// The front request's review: the hunk chosen, those left out.
    hunk: usize,
    excluded: Vec<bool>,
    /// Where the last frame put the diff: rows above it, and its width.
    diff_at: std::cell::Cell<(usize, u16)>,
    /// The frames scroll to the chosen hunk's change (until the person
    /// scrolls): whatever the window's size, what would be written is on
    /// screen before it can be approved.
    follow: bool,
    /// Where the last frame was scrolled to.
    shown_scroll: std::cell::Cell<usize>,
    /// Which hunks' changed lines a frame has shown: only those can be
    /// approved.
    seen: std::cell::RefCell<Vec<bool>>,
    /// The person's last key into the composer.
    last_typed: Option<Instant>,
}

impl ApprovalOverlay {
    /// A key went into the composer at `now`: a call that comes while the
    /// person types lets their typing go on.
    pub fn typed(&mut self, now: Instant) {
        self.last_typed = Some(now);
    }

    /// The message was sent: the typing is over.
    pub fn sent(&mut self) {
        self.last_typed = None;
    }

    pub fn is_active(&self) -> bool {
        !self.queue.is_empty()
    }

    #[cfg(any(test, feature = "internals"))]
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// The calls waiting for an answer.
    /// What the call in front asks, in a few words: `exec_shell cargo test`.
    pub fn front_words(&self) -> Option<String> {
        self.queue.front().map(|r| {
            format!(
                "{} {}",
                r.request.tool,
                crate::components::cells::key_argument(&r.request.arguments)
            )
        })
    }

    pub fn call_ids(&self) -> Vec<String> {
        self.queue.iter().map(|r| r.call_id.clone()).collect()
    }

    #[cfg(any(test, feature = "internals"))]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn push(&mut self, request: PendingApproval, now: Instant) {
        self.queue.push_back(request);
        if self.queue.len() == 1 {
            self.show_front(now);
        }
    }

    /// Forgets a request the agent no longer waits for (the turn ended).
    pub fn remove(&mut self, call_id: &str, now: Instant) {
        let was_front = self.queue.front().is_some_and(|r| r.call_id == call_id);
        self.queue.retain(|r| r.call_id != call_id);
        if was_front {
            self.show_front(now);
        }
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// The file change `call_id` waits with, if any.
    pub fn change_of(&self, call_id: &str) -> Option<&crate::protocol::change::FileChange> {
        self.queue
            .iter()
            .find(|r| r.call_id == call_id)
            .and_then(|r| r.change.as_deref())
    }

    /// The person edited the change of `call_id` in their editor: the
    /// dialog now shows their version (a second look before it is
    /// written), asked anew. Whether the call still waits.
    pub fn edited(
        &mut self,
        call_id: &str,
        change: crate::protocol::change::FileChange,
        diff: DiffView,
        now: Instant,
    ) -> bool {
        let Some(i) = self.queue.iter().position(|r| r.call_id == call_id) else {
            return false;
        };
        let req = &mut self.queue[i];
        req.request.change = Some(Box::new(change));
        req.diff = Some(diff);
        req.edited = true;
        if i == 0 {
            let had_keys = self.arming.has_keys;
            self.show_front(now);
            self.arming.has_keys = had_keys;
        }
        true
    }

    fn show_front(&mut self, now: Instant) {
        // Shown when a frame draws it; the quiet moment counts from then,
        // or from the last key if that is later.
        self.arming = Arming::pending_after(self.last_typed, now);
        self.scroll = 0;
        self.message = None;
        self.confirming = false;
        self.drawn_once = false;
        self.hunk = 0;
        self.excluded = vec![false; self.hunks()];
        self.follow = true;
        *self.seen.borrow_mut() = vec![false; self.hunks()];
        self.mark();
    }

    /// The person scrolls: from where the last frame was, no longer
    /// following the chosen hunk.
    fn take_scroll(&mut self) {
        if std::mem::take(&mut self.follow) {
            self.scroll = self.shown_scroll.get();
        }
    }

    /// A kept hunk whose changed lines no frame has shown yet.
    fn unseen_hunk(&self) -> Option<usize> {
        let seen = self.seen.borrow();
        (0..self.excluded.len())
            .find(|h| !self.excluded[*h] && !seen.get(*h).copied().unwrap_or(true))
    }

    /// Hunks of the front request's diff.
    fn hunks(&self) -> usize {
        self.queue
            .front()
            .and_then(|r| r.diff.as_ref())
            .map_or(0, DiffView::hunks)
    }

    /// Tells the diff which hunk is chosen and which are left out.
    fn mark(&self) {
        if let Some(d) = self.queue.front().and_then(|r| r.diff.as_ref()) {
            d.set_marks((d.hunks() > 1).then_some(self.hunk), &self.excluded);
        }
    }

    /// Moves to hunk `n`, scrolled into view.
    fn choose_hunk(&mut self, n: usize) {
        let Some(d) = self.queue.front().and_then(|r| r.diff.as_ref()) else {
            return;
        };
        self.hunk = n.min(d.hunks().saturating_sub(1));
        // The frames bring its change into view.
        self.follow = true;
        self.mark();
    }

    /// When keys start to count; `None` when nothing is shown.
    pub fn armed_at(&self) -> Option<Instant> {
        self.arming.armed_at()
    }

    /// The dialog could not be drawn: it takes only a denial.
    pub fn hide(&self) {
        self.fits.set(false);
        self.drawn.set(Some(false));
    }

    /// A frame is on screen: the question counts as shown from `now` if
    /// that frame showed it whole, and as unseen if it could not.
    pub fn after_draw(&mut self, now: Instant) {
        if let Some(visible) = self.drawn.take() {
            self.drawn_once = !self.queue.is_empty();
            self.arming.drawn(visible && !self.queue.is_empty(), now);
        }
    }

    /// A key or paste reached the app: the quiet moment starts again.
    pub fn input(&mut self, now: Instant) {
        self.arming.input(now);
    }

    /// The person scrolled the transcript behind the dialog: they are
    /// reading the call, not typing a message. Keys after it are for the
    /// dialog, never typed into the composer; like the dialog's own
    /// reading keys, it never makes the next answer wait.
    pub fn reading(&mut self) {
        self.arming.has_keys = true;
    }

    /// Whether the "instead" message is being written (a paste goes there).
    pub fn is_writing(&self) -> bool {
        self.message.is_some()
    }

    /// Pastes into the "instead" message.
    pub fn paste(&mut self, text: &str) {
        if let Some(input) = &mut self.message {
            input.insert_str(text.replace(['\r', '\n'], " "));
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent, now: Instant) -> ApprovalAction {
        if self.queue.is_empty() {
            return ApprovalAction::None;
        }
        if !self.fits.get() && self.drawn_once && self.message.is_none() {
            // Only the "enlarge the window" line shows: a denial is all
            // that can be meant; anything else is not for the dialog.
            self.arming.input(now);
            return match key.code {
                KeyCode::Char('n' | 'N') | KeyCode::Esc => self.decide(
                    ApprovalDecision::Deny { message: None },
                    "denied from a window too small to show the call",
                    None,
                ),
                KeyCode::Char('y' | 'Y' | 'a' | 'A' | 'e' | 'E') => {
                    ApprovalAction::Hint("enlarge the window to see the call; n or Esc denies")
                }
                _ => ApprovalAction::Pass(key),
            };
        }
        let armed = self.arming.is_armed(now);
        if armed {
            self.arming.has_keys = true;
        }
        if !self.arming.has_keys {
            self.confirming = false;
            // Typed while the dialog opened (or before a frame could show
            // it), with no pause since: the person is writing, not
            // answering, and every key goes on. Otherwise the key came
            // before the call could be read: dropped, with a word.
            return if self.arming.early(now) {
                ApprovalAction::Pass(key)
            } else {
                ApprovalAction::Hint(READING)
            };
        }
        if self.message.is_none()
            && key.code == KeyCode::Char('?')
            && !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            // Asking how is not answering either.
            return ApprovalAction::Keys;
        }
        if self.message.is_none()
            && key.modifiers.is_empty()
            && (self.scroll_key(key.code) || self.review_key(key.code))
        {
            // Reading (and choosing hunks) is not answering, and never
            // makes the next answer wait.
            return ApprovalAction::None;
        }
        if self.message.is_some() {
            return self.write_instead(key);
        }
        self.arming.input(now);
        if !armed {
            // A key right after another is not an answer.
            if std::mem::take(&mut self.confirming) {
                return ApprovalAction::Hint(
                    "no grant: the second a came too soon (press a, pause, then a)",
                );
            }
            return ApprovalAction::Hint(
                "a key right after another is not an answer: pause, then press it",
            );
        }
        if key.modifiers.contains(KeyModifiers::ALT) {
            // An Esc and a key in one read arrive as Alt-key: the Esc
            // denies, the key goes on to the composer, but for an answer
            // (the `y` of Alt-y was meant for a dialog, not the message).
            let answer = matches!(key.code, KeyCode::Char('y' | 'Y' | 'a' | 'A' | 'n' | 'N'));
            let pass =
                (!answer).then(|| KeyEvent::new(key.code, key.modifiers - KeyModifiers::ALT));
            let how = format!("Alt-{}, taken as Esc", key_name(key.code));
            return self.decide(ApprovalDecision::Deny { message: None }, &how, pass);
        }
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::SUPER);
        if !self.fits.get() {
            return match key.code {
                KeyCode::Char('n' | 'N') | KeyCode::Esc if plain => self.decide(
                    ApprovalDecision::Deny { message: None },
                    "denied from a window too small to show the call",
                    None,
                ),
                _ => ApprovalAction::Hint("enlarge the window to see the call; n or Esc denies"),
            };
        }
        let shown_for = self
            .arming
            .shown_at
            .map_or(0.0, |t| now.saturating_duration_since(t).as_secs_f64());
        if self.confirming {
            return self.confirm_grant(key, plain, shown_for);
        }
        self.answer(key, plain, shown_for)
    }

    /// The key of someone writing what the model should do instead: text,
    /// Enter sends the denial with it, Esc goes back to the question.
    fn write_instead(&mut self, key: KeyEvent) -> ApprovalAction {
        let Some(input) = &mut self.message else {
            return ApprovalAction::None;
        };
        // Writing what to do instead: the keys are text.
        match key.code {
            KeyCode::Esc => self.message = None,
            KeyCode::Enter => {
                let text = input.lines().join(" ").trim().to_string();
                let message = (!text.is_empty()).then_some(text);
                return self.decide(
                    ApprovalDecision::Deny { message },
                    "e, with a message",
                    None,
                );
            }
            _ => {
                input.input(key);
            }
        }
        ApprovalAction::None
    }

    /// The key after a first `a`: a second grants for the conversation.
    fn confirm_grant(&mut self, key: KeyEvent, plain: bool, shown_for: f64) -> ApprovalAction {
        self.confirming = false;
        match key.code {
            KeyCode::Char('a' | 'A') if plain => self.decide(
                ApprovalDecision::ApproveForConversation,
                &format!("a, confirmed with a, {shown_for:.1} s after it showed"),
                None,
            ),
            KeyCode::Char('n' | 'N') if plain => self.decide(
                ApprovalDecision::Deny { message: None },
                &format!("{}, {shown_for:.1} s after it showed", key_name(key.code)),
                None,
            ),
            // Esc takes the `a` back: the question waits as it was.
            KeyCode::Esc => ApprovalAction::Hint("no grant: the question waits (y, a a, n)"),
            _ => ApprovalAction::Hint(
                "no grant given: press a twice to approve for the conversation",
            ),
        }
    }

    /// An answer to the call in front, `shown_for` seconds after it showed.
    fn answer(&mut self, key: KeyEvent, plain: bool, shown_for: f64) -> ApprovalAction {
        let Some(front) = self.queue.front() else {
            return ApprovalAction::None;
        };
        let left_out = self.excluded.iter().filter(|x| **x).count();
        // The person's own version: y writes it (the hunks kept).
        if front.edited
            && plain
            && matches!(key.code, KeyCode::Char('y' | 'Y'))
            && let Some(c) = &front.change
        {
            let keep: Vec<bool> = self.excluded.iter().map(|x| !x).collect();
            let content = if keep.is_empty() {
                c.new_text()
            } else {
                c.apply(&keep)
            };
            let how = format!("y on the person's edit, {shown_for:.1} s after it showed");
            return self.decide(ApprovalDecision::ApproveEdited { content }, &how, None);
        }
        if front.edited && plain && matches!(key.code, KeyCode::Char('a' | 'A')) {
            return ApprovalAction::Hint("y writes your edited version; a is for the model's own");
        }
        // What would be written must have been on screen: a kept hunk
        // whose change no frame showed is brought into view first.
        if plain
            && matches!(key.code, KeyCode::Char('y' | 'Y' | 'a' | 'A'))
            && let Some(h) = self.unseen_hunk()
        {
            self.choose_hunk(h);
            return ApprovalAction::Hint(
                "a change you have not seen yet is on screen now: read it, then answer",
            );
        }
        match key.code {
            KeyCode::Char('y' | 'Y') if plain && left_out > 0 => {
                let kept: Vec<usize> = (0..self.excluded.len())
                    .filter(|i| !self.excluded[*i])
                    .collect();
                let how = format!(
                    "y with {} of {} hunks, {shown_for:.1} s after it showed",
                    kept.len(),
                    self.excluded.len()
                );
                // Nothing kept is a plain denial (not words of the person's).
                let decision = if kept.is_empty() {
                    ApprovalDecision::Deny { message: None }
                } else {
                    ApprovalDecision::ApproveHunks { hunks: kept }
                };
                self.decide(decision, &how, None)
            }
            KeyCode::Char('y' | 'Y') if plain => self.decide(
                ApprovalDecision::ApproveOnce,
                &format!("y, {shown_for:.1} s after it showed"),
                None,
            ),
            KeyCode::Char('a' | 'A') if plain && left_out > 0 => ApprovalAction::Hint(
                "`a` approves the whole change: take every hunk back in (x), or y for these",
            ),
            KeyCode::Char('a' | 'A') if plain && front.grant.is_some() => {
                self.confirming = true;
                ApprovalAction::None
            }
            KeyCode::Char('a' | 'A') if plain => ApprovalAction::Hint(
                "`a` is not offered: no conversation grant can cover this call (y once, n deny)",
            ),
            KeyCode::Char('n' | 'N') if plain => self.decide(
                ApprovalDecision::Deny { message: None },
                &format!("n, {shown_for:.1} s after it showed"),
                None,
            ),
            KeyCode::Esc => self.decide(
                ApprovalDecision::Deny { message: None },
                &format!("Esc, {shown_for:.1} s after it showed"),
                None,
            ),
            KeyCode::Char('E') if plain => match front.change.as_ref().filter(|c| c.editable()) {
                // What the editor opens is what the dialog would write: the
                // hunks left out stay out.
                Some(c) => ApprovalAction::Edit {
                    call_id: front.call_id.clone(),
                    name: c.path.clone(),
                    text: c.apply(
                        &self
                            .excluded
                            .iter()
                            .map(|x| !x)
                            .chain(std::iter::repeat(true))
                            .take(c.hunks.len())
                            .collect::<Vec<_>>(),
                    ),
                },
                None => ApprovalAction::Hint(
                    "E edits new content: a command, a deletion or a move has none to edit",
                ),
            },
            KeyCode::Char('e') if plain => {
                let mut input = TextArea::default();
                input.set_placeholder_text(format!(
                    "what should the model do instead of {}?",
                    front.tool
                ));
                self.message = Some(input);
                ApprovalAction::None
            }
            KeyCode::Char('j') => {
                self.take_scroll();
                self.scroll_by(1);
                ApprovalAction::None
            }
            KeyCode::Char('k') => {
                self.take_scroll();
                self.scroll = self.scroll.saturating_sub(1);
                ApprovalAction::None
            }
            KeyCode::Char(' ') => {
                self.take_scroll();
                self.scroll_by(10);
                ApprovalAction::None
            }
            // Enter, and everything else, does nothing here.
            _ => ApprovalAction::None,
        }
    }

    fn decide(
        &mut self,
        decision: ApprovalDecision,
        how: &str,
        pass: Option<KeyEvent>,
    ) -> ApprovalAction {
        let Some(front) = self.queue.pop_front() else {
            return ApprovalAction::None;
        };
        // The next request arms after its own quiet moment, counted from
        // this key.
        let last = self.arming.last_input;
        let had_keys = self.arming.has_keys;
        self.show_front(last.unwrap_or_else(Instant::now));
        // The keyboard stays with the dialogs of a batch.
        self.arming.has_keys = had_keys;
        ApprovalAction::Decide {
            call_id: front.request.call_id,
            decision,
            how: how.to_string(),
            pass,
        }
    }

    /// Arrows, pages, Home and End scroll; whether `code` was one.
    fn scroll_key(&mut self, code: KeyCode) -> bool {
        // In a diff, ↑↓ move between hunks (the match in handle_key).
        let hunks = self.hunks() > 1;
        let scrolls = match code {
            KeyCode::Down | KeyCode::Up => !hunks,
            KeyCode::PageDown | KeyCode::PageUp | KeyCode::Home | KeyCode::End => true,
            _ => false,
        };
        if scrolls {
            self.take_scroll();
        }
        match code {
            KeyCode::Down if !hunks => self.scroll_by(1),
            KeyCode::Up if !hunks => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown => self.scroll_by(10),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Home => self.scroll = 0,
            KeyCode::End => self.scroll = self.max_scroll.get(),
            _ => return false,
        }
        true
    }

    /// Hunk keys: ↓/j and ↑/k choose a hunk (when there are several), x
    /// leaves the chosen one out or takes it back; whether `code` was one.
    fn review_key(&mut self, code: KeyCode) -> bool {
        let hunks = self.hunks();
        match code {
            // The next waiting call comes to the front; this one waits.
            KeyCode::Tab if self.queue.len() > 1 => {
                if let Some(front) = self.queue.pop_front() {
                    self.queue.push_back(front);
                }
                let (last, had_keys) = (self.arming.last_input, self.arming.has_keys);
                self.show_front(last.unwrap_or_else(Instant::now));
                self.arming.has_keys = had_keys;
            }
            KeyCode::Char('x' | 'X') if hunks > 0 => {
                if let Some(x) = self.excluded.get_mut(self.hunk) {
                    *x = !*x;
                }
                self.mark();
            }
            KeyCode::Char('j') | KeyCode::Down if hunks > 1 => self.choose_hunk(self.hunk + 1),
            KeyCode::Char('k') | KeyCode::Up if hunks > 1 => {
                self.choose_hunk(self.hunk.saturating_sub(1));
            }
            _ => return false,
        }
        true
    }

    /// Scrolls down, never past the end the last frame showed.
    fn scroll_by(&mut self, rows: usize) {
        self.scroll = (self.scroll + rows).min(self.max_scroll.get());
    }
}

/// A key as the log names it.
fn key_name(code: KeyCode) -> String {
    match code {
        KeyCode::Char(c) => c.to_string(),
        other => format!("{other:?}"),
    }
}

pub use crate::protocol::visible::command as visible_command;

/// The approval dialog on the priority layer: its answers and the keys it
/// does not take go to the app as events.
impl crate::component::Component for ApprovalOverlay {
    fn handle_key(&mut self, key: KeyEvent, events: &AppEvents, now: Instant) -> Outcome {
        let transcript_key = match key.code {
            KeyCode::PageUp | KeyCode::PageDown => key.modifiers.is_empty(),
            KeyCode::Home | KeyCode::End => key.modifiers == KeyModifiers::CONTROL,
            _ => false,
        };
        if transcript_key {
            // The transcript above the dialog scrolls (the model's
            // explanation is there; Ctrl-End back to its end); reading is
            // not answering.
            self.reading();
            return Outcome::Ignored(key);
        }
        match ApprovalOverlay::handle_key(self, key, now) {
            ApprovalAction::Decide {
                call_id,
                decision,
                how,
                pass,
            } => {
                events.send(AppEvent::Decided {
                    call_id,
                    decision,
                    how,
                });
                if let Some(k) = pass {
                    return Outcome::Ignored(k);
                }
            }
            ApprovalAction::Edit {
                call_id,
                name,
                text,
            } => events.send(AppEvent::EditProposed {
                call_id,
                name,
                text,
            }),
            ApprovalAction::Pass(k) => return Outcome::Ignored(k),
            ApprovalAction::Hint(text) => events.send(AppEvent::Flash(text.to_string())),
            ApprovalAction::Keys => {
                events.send(AppEvent::Keys(crate::components::keys_help::Keys::Dialog))
            }
            ApprovalAction::None => {}
        }
        // The queue moves on by itself; the layer asks `is_active`.
        Outcome::Consumed
    }

    /// Fills `area`, the rows the app set aside for it ([`Self::height`]).
    fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, now: Instant) {
        self.render_filling(area, buf, theme, now);
    }
}

impl crate::component::Question for ApprovalOverlay {
    fn kind(&self) -> crate::component::Kind {
        crate::component::Kind::Approval
    }

    fn words(&self) -> Option<String> {
        Some(format!("Lathe asks: approve {}?", self.front_words()?))
    }

    /// It fills what it is given (the app gives it the screen).
    fn rows(&self, _: Rect, _: &Theme) -> Option<u16> {
        None
    }

    fn is_writing(&self) -> bool {
        ApprovalOverlay::is_writing(self)
    }

    fn paste(&mut self, text: &str) -> bool {
        if !ApprovalOverlay::is_writing(self) {
            return false;
        }
        ApprovalOverlay::paste(self, text);
        true
    }

    fn input(&mut self, now: Instant) {
        ApprovalOverlay::input(self, now);
    }

    fn drawn(&mut self, now: Instant) {
        self.after_draw(now);
    }

    /// Never while the "instead" message is written (its keys are its
    /// own), nor in a window too small to show the call (`n` denies
    /// there, at once).
    fn type_ahead(&mut self, key: KeyEvent, composing: bool, now: Instant) -> Ahead {
        let too_small = !self.fits.get() && self.drawn_once;
        if self.queue.is_empty() || self.message.is_some() || too_small {
            return Ahead::Not;
        }
        self.arming.type_ahead(key, composing, now)
    }
}

mod arming;
mod render;

pub use arming::{Ahead, Answer, Arming, Gate, READING};

#[cfg(test)]
#[path = "approval_tests.rs"]
mod tests;
