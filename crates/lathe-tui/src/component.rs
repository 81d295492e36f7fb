//! The TUI's component model.
//!
//! A view over the screen (the tool-call log, the permissions, the session
//! and turn pickers, the `/diff` page) is a [`Component`]: it takes keys
//! and draws itself, and what it wants of the rest of the app (an `Op` for
//! the agent, a session to open, a hint in the status bar) it sends as an
//! [`AppEvent`] on the app's channel, the same channel that brings back
//! work done off the UI thread. The app keeps the open views on a stack
//! ([`Overlay`]): the top one gets the keys and is drawn last; `Close`
//! takes it off. Above the views is the priority layer ([`Questions`]):
//! the questions (trust the workspace, more tool rounds, approve a call)
//! are [`Question`]s, components that take the keys before any view and
//! arm themselves against keys typed ahead; what their answers ask of the
//! app comes on the same channel. Under both are the composer and the
//! transcript. The app routes keys and events; it decides nothing a
//! component can.

use std::time::Instant;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::components::approval::{Ahead, ApprovalOverlay};
use super::components::ask::AskPanel;
use super::components::cells::NoticeKind;
use super::components::pager::Pager;
use super::components::permissions::{PermissionsAction, PermissionsView};
use super::components::question::{Armed, TrustPrompt, YesNo};
use super::components::rewind::{RewindAction, RewindPicker};
use super::components::sessions::{PickerAction, SessionPicker};
use super::theme::Theme;
use crate::protocol::{ApprovalDecision, Op};

/// What a key did to a component. A key it does not take falls to the
/// layer below (under the questions, the composer and the transcript),
/// never sent again through the app's channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Taken by the component (or, for a key it has no use for but that
    /// must not go further, dropped).
    Consumed,
    /// Not the component's: this key falls to the layer below. It is the
    /// key read, or what it stands for (an Alt-key is an Esc and a key:
    /// the key).
    Ignored(KeyEvent),
    /// The component is done: off the stack.
    Close,
    /// The component is done, and this key falls to the layer below.
    CloseAndPass(KeyEvent),
}

impl Outcome {
    /// Whether the component leaves the stack.
    pub fn closes(self) -> bool {
        matches!(self, Outcome::Close | Outcome::CloseAndPass(_))
    }

    /// The key that falls to the layer below, if one does.
    pub fn passed(self) -> Option<KeyEvent> {
        match self {
            Outcome::Ignored(k) | Outcome::CloseAndPass(k) => Some(k),
            Outcome::Consumed | Outcome::Close => None,
        }
    }
}

/// A part of the UI that takes keys and draws itself.
pub trait Component {
    /// A key for the component, read at `now`; what it asks of the app
    /// goes to `events`.
    fn handle_key(&mut self, key: KeyEvent, events: &AppEvents, now: Instant) -> Outcome;
    fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, now: Instant);
}

/// What the components and the work done off the UI thread ask of the app.
pub enum AppEvent {
    /// For the agent.
    Op(Op),
    /// A short hint in the status bar.
    Flash(String),
    /// Switch to this session (`/resume`).
    OpenSession(String),
    /// Syntax colours of a diff waiting for approval landed: draw again.
    Coloured,
    /// The workspace's sessions, for the picker.
    Sessions(Vec<crate::session::store::SessionInfo>),
    /// A line in the transcript.
    Notice(NoticeKind, String),
    /// The person decided on a call; `how`, for the log.
    Decided {
        call_id: String,
        decision: ApprovalDecision,
        how: String,
    },
    /// `E` in the approval dialog: the proposed file in the editor.
    EditProposed {
        call_id: String,
        name: String,
        text: String,
    },
    /// The trust question answered "not now": kept for `/trust`.
    Untrusted(TrustPrompt),
    /// A `/command` typed where no composer was (the tool-call log).
    Command(super::components::composer::SlashCommand),
    /// `?`: the keys of where the person is.
    Keys(super::components::keys_help::Keys),
    /// A message from the person, sent as if typed (the plan approved).
    Send(String),
    /// The person chose to quit (what runs in the background stops).
    Quit,
    /// Text for the composer to start from (`/plan ` to say what to
    /// change).
    Compose(String),
    /// The workspace's commands, trusted: offered from now on.
    Commands(Vec<super::components::custom::Custom>),
    /// Stop the running turn (`k` on the main agent in `/agents`).
    Interrupt,
    /// A reached cap was raised (the person said go on).
    CapRaised(crate::protocol::budget::Cap, f64),
}

/// The sending end of the app's event channel (cheap to clone; sending
/// never blocks, and a closed app just drops what is sent).
#[derive(Clone)]
pub struct AppEvents(tokio::sync::mpsc::UnboundedSender<AppEvent>);

impl AppEvents {
    pub fn channel() -> (Self, tokio::sync::mpsc::UnboundedReceiver<AppEvent>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (Self(tx), rx)
    }

    pub fn send(&self, event: AppEvent) {
        let _ = self.0.send(event);
    }
}

/// A view on the app's stack.
pub enum Overlay {
    /// The tool-call log: how the person looks at the calls the app
    /// records (open or not).
    Log(super::components::tool_log::ToolLog),
    Permissions(PermissionsView),
    Sessions(SessionPicker),
    Rewind(RewindPicker),
    /// `/diff`'s page.
    Diff(Pager),
    /// `/ps`: the background commands.
    Jobs(super::components::jobs::JobsView),
    /// `/agents`: the turn's agents over the meter the app holds.
    Agents(super::components::agents::AgentsView),
}

impl Overlay {
    /// Whether `other` is the same kind of view (one of each at most).
    pub fn same_kind(&self, other: &Overlay) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }

    /// The view as a component (`None`: the log, which the app holds).
    pub fn component(&mut self) -> Option<&mut dyn Component> {
        match self {
            Overlay::Log(_) | Overlay::Agents(_) => None,
            Overlay::Permissions(v) => Some(v),
            Overlay::Sessions(v) => Some(v),
            Overlay::Rewind(v) => Some(v),
            Overlay::Diff(v) => Some(v),
            Overlay::Jobs(v) => Some(v),
        }
    }

    pub fn view(&self) -> Option<&dyn Component> {
        match self {
            Overlay::Log(_) | Overlay::Agents(_) => None,
            Overlay::Permissions(v) => Some(v),
            Overlay::Sessions(v) => Some(v),
            Overlay::Rewind(v) => Some(v),
            Overlay::Diff(v) => Some(v),
            Overlay::Jobs(v) => Some(v),
        }
    }
}

/// The kinds of question, in the order they take the keys when several
/// wait (the first has them). A new question is its own file (a
/// [`YesNo`] armed by [`Armed`], or a [`Question`] of its own) and its
/// kind here.
///
/// [`YesNo`]: super::components::question::YesNo
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Whether to quit, stopping what runs in the background.
    Quit,
    /// Whether to trust the workspace's hooks, commands and servers.
    Trust,
    /// Whether the turn may go on past its tool rounds.
    Limit,
    /// Whether to raise a budget cap the turn reached and go on.
    Budget,
    /// Whether to let the model go on repeating a call.
    Loop,
    /// Whether to put back the files `/undo` lists.
    Undo,
    /// The model's question (`ask_user`), one at a time.
    Ask,
    /// Whether to carry out the plan a plan-mode turn proposed.
    Plan,
    /// A call waiting for approval (the dialog's queue, under them all).
    Approval,
}

/// A question on the priority layer.
pub trait Question: Component {
    fn kind(&self) -> Kind;
    /// What it asks, in a notification's words (`None`: nothing to call
    /// the person back for).
    fn words(&self) -> Option<String>;
    /// Where it stands: the rows it takes at the bottom of `area`, over
    /// the transcript's end, or (`None`) the whole screen.
    fn rows(&self, area: Rect, theme: &Theme) -> Option<u16>;
    /// Input that is no answer (a paste, a resize): the question is to be
    /// read anew before a key answers it.
    fn input(&mut self, now: Instant);
    /// A frame is on screen (right after it is written): whether it
    /// showed the question counts from `now`.
    fn drawn(&mut self, now: Instant);
    /// A key read before the question takes keys, the composer holding a
    /// message begun (`composing`) or not: whether it is the person's
    /// writing, for the composer (see [`Arming::type_ahead`]).
    ///
    /// [`Arming::type_ahead`]: super::components::approval::Arming::type_ahead
    fn type_ahead(&mut self, key: KeyEvent, composing: bool, now: Instant) -> Ahead;
    /// Whether the person is writing into its own text (an answer to the
    /// model, what to do instead of a call): Enter is then its own.
    fn is_writing(&self) -> bool {
        false
    }
    /// A paste, if it takes text (`false`: it goes where text goes).
    fn paste(&mut self, _text: &str) -> bool {
        false
    }
}

/// The priority layer above the views: at most one question of each
/// kind, the first by [`Kind`] taking the keys and drawn on top; under
/// them the approvals (a queue, held here whether asking or not).
#[derive(Default)]
pub struct Questions {
    /// The questions asked, in the order of their kinds.
    asked: Vec<Box<dyn Question>>,
    pub approvals: ApprovalOverlay,
    /// The person's last key into the composer: a question that comes
    /// while they type lets their typing go on.
    last_typed: Option<Instant>,
}

impl Questions {
    /// A key went into the composer at `now`.
    pub fn typed(&mut self, now: Instant) {
        self.last_typed = Some(now);
        self.approvals.typed(now);
    }

    /// The message was sent: the typing is over.
    pub fn sent(&mut self) {
        self.last_typed = None;
        self.approvals.sent();
    }

    /// Asks `question`, in place of one of its kind.
    fn put(&mut self, question: Box<dyn Question>) {
        let kind = question.kind();
        self.asked.retain(|q| q.kind() != kind);
        let at = self
            .asked
            .iter()
            .position(|q| q.kind() > kind)
            .unwrap_or(self.asked.len());
        self.asked.insert(at, question);
    }

    /// Asks a yes-or-no question at `now`, armed against keys typed ahead.
    pub fn ask(&mut self, question: impl YesNo + 'static, now: Instant) {
        self.put(Box::new(Armed::new(question, self.last_typed, now)));
    }

    /// Shows the model's question.
    pub fn ask_model(&mut self, asked: AskPanel, now: Instant) {
        self.put(Box::new(asked.after_typing(self.last_typed, now)));
    }

    /// Whether a question of `kind` waits.
    pub fn has(&self, kind: Kind) -> bool {
        self.asked.iter().any(|q| q.kind() == kind)
    }

    /// Takes off the question of `kind`; whether one waited.
    pub fn withdraw(&mut self, kind: Kind) -> bool {
        let before = self.asked.len();
        self.asked.retain(|q| q.kind() != kind);
        self.asked.len() != before
    }

    /// A paste for the question with the keys, if it takes text.
    pub fn paste(&mut self, text: &str) -> bool {
        self.top().is_some_and(|q| q.paste(text))
    }

    /// What waits for the person, in a notification's words: the question
    /// with the keys, or the call waiting for approval.
    pub fn waiting_words(&self) -> Option<String> {
        match self.asked.first() {
            Some(q) => q.words(),
            None => self.approvals.words(),
        }
    }

    /// The question that has the keys.
    pub fn top(&mut self) -> Option<&mut dyn Question> {
        if let Some(q) = self.asked.first_mut() {
            return Some(q.as_mut());
        }
        self.approvals
            .is_active()
            .then_some(&mut self.approvals as &mut dyn Question)
    }

    /// The rows the question that has the keys takes at the bottom of
    /// `area`, when it stands there over the transcript (the model's
    /// question, the plan's approval, the tool-round limit): the
    /// transcript gives them up, so its newest lines stay in sight.
    pub fn bottom_height(&self, area: Rect, theme: &Theme) -> u16 {
        self.asked
            .first()
            .and_then(|q| q.rows(area, theme))
            .unwrap_or(0)
    }

    /// Whether the person is writing into the text of the question with
    /// the keys: an answer to the model's question, what to do instead
    /// of a call.
    pub fn is_writing(&self) -> bool {
        self.asked
            .first()
            .map_or_else(|| self.approvals.is_writing(), |q| q.is_writing())
    }

    /// Whether a question waits for the person.
    pub fn is_asking(&self) -> bool {
        !self.asked.is_empty() || self.approvals.is_active()
    }

    /// Whether the approval dialog is what the person sees of the layer
    /// (no question over the whole screen stands over it).
    pub fn approvals_in_front(&self) -> bool {
        self.approvals.is_active() && !self.has(Kind::Trust)
    }

    /// Takes off the question that has the keys (it was answered).
    pub fn close_top(&mut self) {
        if !self.asked.is_empty() {
            self.asked.remove(0);
        }
    }

    /// Every question present.
    pub fn each(&mut self, mut f: impl FnMut(&mut dyn Question)) {
        for q in &mut self.asked {
            f(q.as_mut());
        }
        f(&mut self.approvals);
    }

    /// Draws the questions asked, the one with the keys last (on top):
    /// each over `whole` or in `bottom`, where it stands.
    pub fn render_asked(
        &self,
        bottom: Rect,
        whole: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        now: Instant,
    ) {
        for q in self.asked.iter().rev() {
            let area = match q.rows(whole, theme) {
                Some(_) => bottom,
                None => whole,
            };
            q.render(area, buf, theme, now);
        }
    }
}

impl Component for Pager {
    fn handle_key(&mut self, key: KeyEvent, events: &AppEvents, _: Instant) -> Outcome {
        if key.code == crossterm::event::KeyCode::Char('?') {
            events.send(AppEvent::Keys(super::components::keys_help::Keys::Diff));
            return Outcome::Consumed;
        }
        if Pager::handle_key(self, key) {
            Outcome::Close
        } else {
            Outcome::Consumed
        }
    }

    fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, _: Instant) {
        Pager::render(self, area, buf, theme);
    }
}

impl Component for SessionPicker {
    fn handle_key(&mut self, key: KeyEvent, events: &AppEvents, _: Instant) -> Outcome {
        match SessionPicker::handle_key(self, key) {
            PickerAction::None => Outcome::Consumed,
            PickerAction::Close => Outcome::Close,
            PickerAction::Open(id) => {
                events.send(AppEvent::OpenSession(id));
                Outcome::Close
            }
        }
    }

    fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, _: Instant) {
        let now_ms = crate::session::history::epoch_ms(std::time::SystemTime::now());
        SessionPicker::render(self, area, buf, theme, now_ms);
    }
}

impl Component for RewindPicker {
    fn handle_key(&mut self, key: KeyEvent, events: &AppEvents, _: Instant) -> Outcome {
        match RewindPicker::handle_key(self, key) {
            RewindAction::None => Outcome::Consumed,
            RewindAction::Close => Outcome::Close,
            RewindAction::Hint(text) => {
                events.send(AppEvent::Flash(text.to_string()));
                Outcome::Consumed
            }
            RewindAction::Rewind {
                turn,
                files,
                conversation,
            } => {
                events.send(AppEvent::Op(Op::Rewind {
                    turn: Some(turn),
                    files,
                    conversation,
                    preview: false,
                }));
                Outcome::Close
            }
        }
    }

    fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, _: Instant) {
        RewindPicker::render(self, area, buf, theme);
    }
}

impl Component for super::components::jobs::JobsView {
    fn handle_key(&mut self, key: KeyEvent, events: &AppEvents, _: Instant) -> Outcome {
        use super::components::jobs::{JobsAction, JobsView};
        match JobsView::handle_key(self, key) {
            JobsAction::None => Outcome::Consumed,
            JobsAction::Close => Outcome::Close,
            JobsAction::Refresh => {
                events.send(AppEvent::Op(Op::ListJobs));
                Outcome::Consumed
            }
            JobsAction::Ended(handle) => {
                events.send(AppEvent::Flash(format!("{handle} has already ended")));
                Outcome::Consumed
            }
            JobsAction::Stop(handle) => {
                events.send(AppEvent::Flash(format!("stopping {handle}…")));
                events.send(AppEvent::Op(Op::KillJob { handle }));
                Outcome::Consumed
            }
        }
    }

    fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, _: Instant) {
        super::components::jobs::JobsView::render(self, area, buf, theme);
    }
}

impl Component for PermissionsView {
    fn handle_key(&mut self, key: KeyEvent, events: &AppEvents, _: Instant) -> Outcome {
        match PermissionsView::handle_key(self, key) {
            PermissionsAction::None => Outcome::Consumed,
            PermissionsAction::Close => Outcome::Close,
            PermissionsAction::Revoke(id) => {
                events.send(AppEvent::Op(Op::RevokeGrant { id }));
                events.send(AppEvent::Flash(
                    "grant revoked: the next such call asks again".into(),
                ));
                Outcome::Consumed
            }
        }
    }

    fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, now: Instant) {
        PermissionsView::render(self, area, buf, theme, now);
    }
}

impl super::components::agents::AgentsView {
    /// A key for the view over the app's `meter` and background `jobs`.
    pub fn key(
        &mut self,
        key: KeyEvent,
        meter: &mut super::components::agents::Meter,
        jobs: &[crate::protocol::JobInfo],
        events: &AppEvents,
    ) -> Outcome {
        use super::components::agents::AgentsAction;
        match self.handle_key(key, meter, jobs) {
            AgentsAction::None => Outcome::Consumed,
            AgentsAction::Close => Outcome::Close,
            AgentsAction::StopTurn => {
                events.send(AppEvent::Interrupt);
                Outcome::Consumed
            }
            AgentsAction::StopAgent(task) => {
                meter.stopping(Some(&task));
                events.send(AppEvent::Flash(format!(
                    "stopping {task} and everything under it…"
                )));
                events.send(AppEvent::Op(Op::StopAgent { task }));
                Outcome::Consumed
            }
            AgentsAction::KillJob(handle) => {
                events.send(AppEvent::Flash(format!("stopping {handle}…")));
                events.send(AppEvent::Op(Op::KillJob { handle }));
                Outcome::Consumed
            }
            AgentsAction::Ended(what) => {
                events.send(AppEvent::Flash(format!("{what} has already ended")));
                Outcome::Consumed
            }
        }
    }
}

impl super::components::tool_log::ToolLog {
    /// A key for the log over `calls` (what a component's `handle_key`
    /// is, for a view that borrows its records).
    pub fn key(
        &mut self,
        key: KeyEvent,
        calls: &super::components::tool_log::CallLog,
        events: &AppEvents,
    ) -> Outcome {
        use super::components::tool_log::LogAction;
        use crossterm::event::{KeyCode, KeyModifiers};
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('t') {
            return Outcome::Close;
        }
        match self.handle_key(key, calls) {
            LogAction::None => Outcome::Consumed,
            LogAction::Close => Outcome::Close,
            LogAction::Command(command) => {
                events.send(AppEvent::Command(command));
                Outcome::Close
            }
            LogAction::Keys => {
                events.send(AppEvent::Keys(super::components::keys_help::Keys::Log));
                Outcome::Consumed
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::{KeyCode, KeyModifiers};

    use super::*;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    /// A view asks the app through the channel, and says when it is done.
    #[test]
    fn views_send_what_they_ask_and_close() {
        let (events, mut rx) = AppEvents::channel();
        let mut pager = Pager::new("t", "a\nb\n");
        assert_eq!(
            Component::handle_key(&mut pager, key(KeyCode::Down), &events, Instant::now()),
            Outcome::Consumed
        );
        assert_eq!(
            Component::handle_key(&mut pager, key(KeyCode::Esc), &events, Instant::now()),
            Outcome::Close
        );
        let mut perms = PermissionsView::new();
        assert_eq!(
            Component::handle_key(&mut perms, key(KeyCode::Esc), &events, Instant::now()),
            Outcome::Close
        );
        let mut sessions = SessionPicker::new("current");
        sessions.set(vec![crate::session::store::SessionInfo {
            id: "other".into(),
            workspace: "/w".into(),
            started: 0,
            last_activity: 0,
            first_prompt: "hello".into(),
            turns: 1,
            ..Default::default()
        }]);
        assert_eq!(
            Component::handle_key(&mut sessions, key(KeyCode::Enter), &events, Instant::now()),
            Outcome::Close
        );
        assert!(matches!(rx.try_recv(), Ok(AppEvent::OpenSession(id)) if id == "other"));
        assert!(rx.try_recv().is_err());
        let mut stack = [Overlay::Log(Default::default()), Overlay::Diff(pager)];
        assert!(stack[0].component().is_none(), "the app holds the log");
        assert!(stack[1].component().is_some());
        assert!(stack[1].same_kind(&Overlay::Diff(Pager::new("u", ""))));
        assert!(!stack[0].same_kind(&stack[1]));
    }

    /// At most one question of each kind; the first by kind has the
    /// keys, whatever was asked first.
    #[test]
    fn the_question_with_the_keys_is_the_first_by_kind_whatever_came_first() {
        use crate::components::question::{LimitQuestion, PlanQuestion, QuitQuestion};
        let t0 = Instant::now();
        let mut layer = Questions::default();
        layer.ask(PlanQuestion::new(), t0);
        layer.ask_model(AskPanel::new("c1".into(), "which port?".into(), vec![]), t0);
        layer.ask(LimitQuestion::new(3, 20, 20), t0);
        assert!(layer.is_asking() && layer.has(Kind::Plan));
        let first = |l: &Questions| l.asked.first().map(|q| q.kind());
        assert_eq!(
            first(&layer),
            Some(Kind::Limit),
            "the limit before the model's question and the plan"
        );
        // One of a kind: asked again, it replaces the first.
        layer.ask(LimitQuestion::new(4, 20, 20), t0);
        assert_eq!(layer.asked.len(), 3);
        layer.ask(QuitQuestion::new(vec!["bg1".into()]), t0);
        assert_eq!(first(&layer), Some(Kind::Quit));
        assert_eq!(layer.waiting_words(), None, "quitting is no call-back");
        layer.close_top();
        assert_eq!(first(&layer), Some(Kind::Limit));
        assert!(
            !layer.paste("8080"),
            "the limit stands over the model's question: no text for it"
        );
        assert!(layer.withdraw(Kind::Limit) && !layer.withdraw(Kind::Limit));
        assert!(layer.paste("8080"), "the model's question takes the paste");
        assert!(layer.is_writing());
        assert_eq!(
            layer.waiting_words().as_deref(),
            Some("Lathe asks: which port?")
        );
        layer.close_top();
        layer.close_top();
        assert!(!layer.is_asking());
    }

    /// The priority layer: the first question present has the keys, a
    /// key typed before it could be read goes on to the composer, and an
    /// answer sends what it asks and takes the question off.
    #[test]
    fn questions_take_keys_first_and_answer_through_the_channel() {
        let (events, mut rx) = AppEvents::channel();
        let mut layer = Questions::default();
        assert!(layer.top().is_none() && !layer.is_asking());
        let t0 = Instant::now();
        // Asked while the person types: their keys go on to the composer.
        layer.typed(t0);
        layer.ask(
            crate::components::question::LimitQuestion::new(7, 20, 20),
            t0,
        );
        let y = key(KeyCode::Char('y'));
        let top = layer.top().expect("the limit asks");
        assert_eq!(top.handle_key(y, &events, t0), Outcome::Ignored(y));
        assert!(rx.try_recv().is_err(), "nothing sent again");
        // Drawn, then a quiet moment: `y` answers.
        let area = Rect::new(0, 0, 60, 20);
        let mut buf = Buffer::empty(area);
        let top = layer.top().expect("still asking");
        top.render(area, &mut buf, &Theme::plain(), t0);
        top.drawn(t0);
        let later = t0 + std::time::Duration::from_secs(2);
        assert_eq!(top.handle_key(y, &events, later), Outcome::Close);
        layer.close_top();
        assert!(matches!(
            rx.try_recv(),
            Ok(AppEvent::Op(Op::ContinueTurn {
                turn_id: 7,
                go_on: true
            }))
        ));
        assert!(matches!(rx.try_recv(), Ok(AppEvent::Flash(_))));
        assert!(layer.top().is_none(), "answered, and no call waits");
    }
}
