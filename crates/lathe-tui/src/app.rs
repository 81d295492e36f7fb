//! The app's state and its reactions, a router: agent events update the
//! transcript, the questions and the tool-call log; keys go to the
//! question that has them (the priority layer), then to the top view,
//! then to global keys, then to the composer; what components ask comes
//! back as `AppEvent`s, handled in one place. Nothing here blocks or
//! draws by itself: `take_requests` hands the event loop what it is to do
//! (ops for the agent, the terminal, the editor, leaving) in one queue,
//! in the order asked; `is_dirty` says a frame is wanted, and `draw` lays
//! out and renders one.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

use super::component::{AppEvent, AppEvents, Component, Kind, Overlay, Questions};
use super::components::approval::PendingApproval;
use super::components::cells::{Cell, NoticeKind, ToolCell, ToolState, summarize};
use super::components::composer::{Composer, ComposerAction, SlashCommand};
use super::components::diff_view::{DiffView, HIGHLIGHT_INLINE};
use super::components::pager::Pager;
use super::components::permissions::{PermissionsData, PermissionsView};
pub use super::components::question::TrustPrompt;
use super::components::rewind::RewindPicker;
use super::components::sessions::SessionPicker;
use super::components::status_bar::{self, StatusInfo};
use super::components::tool_log::CallLog;
use super::components::transcript::Transcript;
use super::highlight::Highlighter;
use super::theme::Theme;
use crate::protocol::{
    AgentEvent, ApprovalDecision, ApprovalMode, ErrorKind, McpState, McpStatus, Op, Usage,
};

/// How long "press Ctrl-C again" stays armed.
const QUIT_WINDOW: Duration = Duration::from_secs(2);
/// Animation rate while something runs (spinners, elapsed times).
const TICK: Duration = Duration::from_millis(100);
const MOUSE_LINES: usize = 3;

/// `/help`: the commands, a line each; the keys are `?`'s.
fn help_table() -> String {
    use crate::components::composer::COMMANDS;
    let width = COMMANDS
        .iter()
        .map(|(name, _)| name.len())
        .max()
        .unwrap_or(0);
    let mut text = String::from("Commands (? on an empty line shows the keys):");
    for (name, what) in COMMANDS {
        text.push_str(&format!("\n  {name:<width$}  {what}"));
    }
    text
}

/// Facts the app starts with.
pub struct AppInit {
    pub model: String,
    pub workspace: PathBuf,
    pub approval: ApprovalMode,
    pub theme: Theme,
    pub notices: Vec<String>,
    /// The workspace's hooks, waiting for the person's trust.
    pub trust: Option<TrustPrompt>,
    pub session: SessionInit,
}

/// The session the app shows, and where the others are.
#[derive(Debug, Default)]
pub struct SessionInit {
    pub id: String,
    /// Where the sessions are (for `/resume`).
    pub dir: Option<PathBuf>,
    /// The workspace's remembered messages (for Up).
    pub prompts: Option<crate::session::prompts::PromptLog>,
    /// The conversation so far, when the session was resumed.
    pub resumed: Option<crate::session::history::Rebuilt>,
    /// Open the session picker at once (`lathe resume` without an id).
    pub pick: bool,
    /// What a session, a turn and a subagent may spend.
    pub caps: crate::protocol::budget::Caps,
}

/// What the app asks the loop to do for it, which the app cannot do
/// itself: an operation for the agent, the terminal, the editor,
/// leaving. One queue, drained in one place ([`App::take_requests`]), in
/// the order asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// For the agent.
    Agent(Op),
    /// Ctrl-Z: give the terminal back until `fg`.
    Suspend,
    /// Ctrl-L: paint the whole screen again (a terminal that disagrees on
    /// a character's width can leave pieces behind).
    Repaint,
    /// Ctrl-S or `/mouse`: turn mouse reporting over.
    ToggleMouse,
    /// A text to edit in the person's editor.
    Edit(EditRequest),
    /// A text for the terminal's clipboard (OSC 52), once a frame is out.
    Clipboard(String),
    /// A desktop notification, once a frame is out.
    Notify(String),
    /// Switch to this session (`/resume`).
    Switch(String),
    /// Leave.
    Quit,
}

/// Text for the person's editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditRequest {
    pub purpose: EditPurpose,
    /// A file name for the editor to pick a syntax by.
    pub name: String,
    pub text: String,
}

/// What an edit is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditPurpose {
    /// The message being written (Ctrl-G).
    Composer,
    /// The file change of this call, to be written as edited (`E`).
    Approval(String),
}

/// Queued messages shown above the composer at most.
const MAX_QUEUED_SHOWN: usize = 3;

pub struct App {
    bus: parts::Bus,
    screen: parts::Screen,
    transcript: Transcript,
    composer: Composer,
    /// The priority layer: the questions (trust, more rounds, approvals).
    questions: Questions,
    calls: CallLog,
    /// The views open over the transcript, the top one last.
    overlays: Vec<Overlay>,
    turn: parts::TurnState,
    status: parts::Status,
    session: parts::SessionState,
    edits: parts::Edits,
    person: parts::Person,
}

impl App {
    pub fn new(init: AppInit, now: Instant) -> Self {
        let hl = Highlighter::new(init.theme.syntax_theme.as_deref());
        let mut transcript = Transcript::new();
        transcript.push(Cell::Notice(
            NoticeKind::Info,
            format!(
                "Lathe {} · {} · {} · approval {}. Ask for a change; ? for keys, /help for commands.",
                env!("CARGO_PKG_VERSION"),
                init.model,
                init.workspace.display(),
                init.approval
            ),
        ));
        for n in init.notices {
            transcript.push(Cell::Notice(NoticeKind::Warning, n));
        }
        let session = init.session;
        let mut usage = Usage::default();
        let mut spent = None;
        let mut turn_marks = Vec::new();
        if let Some(r) = &session.resumed {
            let users = resume::replay(&mut transcript, &r.shown, &r.log);
            // The messages shown and the conversation's turns are the
            // same messages, in the same order.
            turn_marks = r.prompts.iter().map(|(t, _)| *t).zip(users).collect();
            usage = r.usage;
            // What the whole session cost, clears and other models included.
            spent = r
                .by_model
                .values()
                .filter_map(|u| u.cost_usd)
                .reduce(|a, b| crate::protocol::round_usd(a + b));
            transcript.push(Cell::Notice(
                NoticeKind::Info,
                format!(
                    "resumed session {} ({} turn{}); go on where you left off",
                    session.id,
                    r.prompts.len(),
                    if r.prompts.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        let mut composer = Composer::new(&init.theme);
        composer.set_workspace(init.workspace.clone());
        if let Some(log) = &session.prompts {
            composer.set_history(log.load());
        }
        let (events, event_rx) = AppEvents::channel();
        let plan = session
            .resumed
            .as_ref()
            .and_then(|r| crate::components::plan::Plan::last(&r.shown));
        let mut app = Self {
            bus: parts::Bus {
                events,
                event_rx,
                out: Vec::new(),
            },
            screen: parts::Screen {
                theme: init.theme,
                hl,
                transcript_area: std::cell::Cell::new(Rect::default()),
                help: None,
                dirty: true,
                now,
            },
            composer,
            transcript,
            questions: Questions::default(),
            calls: CallLog::new(now),
            overlays: Vec::new(),
            turn: parts::TurnState {
                turn_marks,
                plan,
                ..parts::TurnState::default()
            },
            status: parts::Status {
                model: init.model,
                approval: init.approval,
                usage,
                context: None,
                mcp: std::collections::BTreeMap::new(),
                last_turn_cost: None,
                effort: None,
                spent,
                caps: session.caps,
                turn_spent: (0, Usage::default()),
                meter: Default::default(),
                models: Models::Unknown,
                pending_model: None,
                jobs: Vec::new(),
                flash: None,
            },
            session: parts::SessionState {
                session_id: session.id,
                sessions_dir: session.dir,
                prompts: session.prompts,
                workspace: init.workspace,
                untrusted: None,
            },
            edits: parts::Edits::default(),
            person: parts::Person::default(),
        };
        if let Some(r) = &session.resumed {
            app.replay_earlier(&r.log);
        }
        if let Some(prompt) = init.trust {
            app.questions
                .ask(crate::components::question::TrustQuestion::new(prompt), now);
        }
        if session.pick {
            app.open_picker();
        }
        app
    }

    /// Switches to model `m` if the provider has it (or lists nothing to
    /// check it against); an unknown name is refused, with the names
    /// nearest to it.
    fn switch_model(&mut self, m: String) {
        let unchecked = match &self.status.models {
            Models::Known(list) if !list.contains(&m) => {
                let lower = m.to_ascii_lowercase();
                let stem: String = lower.chars().take(4).collect();
                let near: Vec<&str> = list
                    .iter()
                    .filter(|x| {
                        let x = x.to_ascii_lowercase();
                        x.contains(&lower) || lower.contains(&x) || x.starts_with(&stem)
                    })
                    .take(4)
                    .map(String::as_str)
                    .collect();
                let hint = if near.is_empty() {
                    format!(
                        "it lists {}; type /model and a part of a name to choose",
                        plural(list.len(), "model")
                    )
                } else {
                    format!("did you mean {}?", near.join(", "))
                };
                self.notice(
                    NoticeKind::Error,
                    format!(
                        "model {m}: the server has no such model, still using {} ({hint})",
                        self.status.model
                    ),
                );
                // What was typed comes back, to correct.
                if self.composer.is_empty() {
                    self.composer.set_text(&format!("/model {m}"));
                }
                return;
            }
            Models::Known(_) if m == self.status.model => {
                self.notice(NoticeKind::Info, format!("model: {m} (already in use)"));
                return;
            }
            Models::Known(_) => None,
            Models::Unavailable(why) => Some(why.clone()),
            Models::Unknown | Models::Asked => Some("not asked".into()),
        };
        let note = unchecked.map_or(String::new(), |why| {
            format!(
                "; not checked: {}",
                crate::protocol::humanize::shorten_chars(&why, 120)
            )
        });
        let was = if self.status.model.is_empty() {
            String::new()
        } else {
            format!("was {}", self.status.model)
        };
        let said = format!("{was}{note}");
        let said = said.trim_start_matches("; ");
        self.notice(
            NoticeKind::Info,
            if said.is_empty() {
                format!("model: {m}")
            } else {
                format!("model: {m} ({said})")
            },
        );
        self.bus.op(Op::SetModel { model: m.clone() });
        self.status.model = m;
    }

    /// The session picker, its list read off the UI thread.
    fn open_picker(&mut self) {
        let Some(dir) = self.session.sessions_dir.clone() else {
            self.notice(
                NoticeKind::Warning,
                "no session directory: nothing to resume",
            );
            return;
        };
        self.open(Overlay::Sessions(SessionPicker::new(
            &self.session.session_id,
        )));
        let workspace = self.session.workspace.clone();
        let tx = self.bus.events.clone();
        let spawned = std::thread::Builder::new()
            .name("lathe-sessions".into())
            .spawn(move || {
                let list = crate::session::store::list(&dir, Some(&workspace));
                tx.send(AppEvent::Sessions(list));
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot list the sessions: {e}");
            if let Some(Overlay::Sessions(p)) =
                self.overlay_mut(|o| matches!(o, Overlay::Sessions(_)))
            {
                p.set(Vec::new());
            }
        }
    }

    /// The person asks to quit: at once, unless commands run in the
    /// background, which quitting stops; then it is asked.
    fn quit(&mut self) {
        let running = self.running_jobs();
        if running.is_empty() || self.questions.has(Kind::Quit) {
            self.bus.request(Request::Quit);
        } else {
            self.questions.ask(
                crate::components::question::QuitQuestion::new(running),
                self.screen.now,
            );
        }
    }

    /// What runs in the background, a line each: `bg1 python3 -m http.server`.
    pub fn running_jobs(&self) -> Vec<String> {
        self.status
            .jobs
            .iter()
            .filter(|j| j.running)
            .map(|j| {
                format!(
                    "{} {}",
                    j.handle,
                    crate::protocol::visible::command(&j.command)
                )
            })
            .collect()
    }

    /// What the loop is to do for the app, in the order asked (once).
    pub fn take_requests(&mut self) -> Vec<Request> {
        std::mem::take(&mut self.bus.out)
    }

    /// The operations asked of the agent (once), the other requests
    /// left in their queue.
    #[cfg(any(test, feature = "internals"))]
    pub fn take_ops(&mut self) -> Vec<Op> {
        self.bus.take(|r| match r {
            Request::Agent(op) => Ok(op),
            r => Err(r),
        })
    }

    /// The requests for the terminal, the editor and leaving (once), the
    /// agent's operations left in their queue.
    #[cfg(any(test, feature = "internals"))]
    pub fn take_terminal_requests(&mut self) -> Vec<Request> {
        self.bus.take(|r| match r {
            Request::Agent(op) => Err(Request::Agent(op)),
            r => Ok(r),
        })
    }

    /// Whether quitting was asked (and not yet drained).
    #[cfg(test)]
    pub fn should_quit(&self) -> bool {
        self.bus.out.contains(&Request::Quit)
    }

    /// A diff to review, highlighted: a big one on a thread of its own,
    /// as far as it is looked at (it shows plain until then).
    fn prepare_diff(&self, mut view: DiffView) -> DiffView {
        if view.len() <= HIGHLIGHT_INLINE {
            view.highlight_now(&self.screen.theme, &self.screen.hl);
            return view;
        }
        let job = view.colour_job(&self.screen.theme, &self.screen.hl);
        let tx = self.bus.events.clone();
        let spawned = std::thread::Builder::new()
            .name("lathe-highlight".into())
            // The app may be gone; then nothing is drawn.
            .spawn(move || job(&|| tx.send(AppEvent::Coloured)));
        if let Err(e) = spawned {
            tracing::warn!("cannot highlight a diff off the UI thread: {e}");
        }
        view
    }

    /// The next event on the app's channel (work finished off the UI
    /// thread).
    pub async fn next_event(&mut self) -> Option<AppEvent> {
        self.bus.event_rx.recv().await
    }

    /// Takes in what is waiting on the app's channel (what a key asked).
    fn drain_events(&mut self) {
        while let Ok(ev) = self.bus.event_rx.try_recv() {
            self.on_app_event(ev);
        }
    }

    /// An event of the app's channel.
    pub fn on_app_event(&mut self, ev: AppEvent) {
        self.screen.dirty = true;
        match ev {
            AppEvent::Op(op) => {
                if let Op::ContinueTurn {
                    turn_id,
                    go_on: false,
                } = op
                {
                    self.turn.stopped_at_limit = Some(turn_id);
                }
                if op == Op::TrustWorkspaceSkills {
                    self.composer.skills.trusted();
                }
                if op == Op::TrustWorkspaceAgents {
                    self.composer.skills.agents_trusted();
                }
                self.bus.op(op);
            }
            AppEvent::Flash(text) => self.flash(&text, self.screen.now),
            AppEvent::OpenSession(id) => self.bus.request(Request::Switch(id)),
            // Drawn again (every event marks the screen dirty).
            AppEvent::Coloured => {}
            AppEvent::Send(text) => self.send(text),
            AppEvent::Quit => self.bus.request(Request::Quit),
            AppEvent::Interrupt if self.is_running() => self.interrupt("k", self.screen.now),
            AppEvent::Interrupt => {}
            AppEvent::Compose(text) => self.composer.set_text(&text),
            AppEvent::Commands(more) => self.composer.add_custom(more),
            AppEvent::CapRaised(cap, to) => self.status.caps.set(cap, to),
            AppEvent::Notice(kind, text) => self.notice(kind, text),
            AppEvent::Decided {
                call_id,
                decision,
                how,
            } => {
                if let ApprovalDecision::ApproveEdited { content } = &decision {
                    self.edits
                        .edits_sent
                        .insert(call_id.clone(), content.clone());
                }
                if let Some(t) = self.transcript.tool_mut(&call_id) {
                    t.state = ToolState::Running;
                }
                self.calls.decided(&call_id, &how);
                self.bus.op(Op::Decide { call_id, decision });
                // What comes of it shows at the end of the transcript, even
                // if the person scrolled up to read while deciding.
                self.transcript.scroll_to_bottom();
            }
            AppEvent::EditProposed {
                call_id,
                name,
                text,
            } => {
                self.edits.edit_opened.insert(call_id.clone(), text.clone());
                self.bus.request(Request::Edit(EditRequest {
                    purpose: EditPurpose::Approval(call_id),
                    name,
                    text,
                }));
            }
            AppEvent::Untrusted(prompt) => self.session.untrusted = Some(prompt),
            AppEvent::Command(command) => self.on_command(command),
            AppEvent::Keys(keys) => {
                self.screen.help = Some(crate::components::keys_help::KeysHelp::new(keys));
            }
            AppEvent::Sessions(list) => {
                // Only this one: nothing to choose from, said so.
                if list.iter().all(|s| s.id == self.session.session_id) {
                    let had = self.overlays.len();
                    self.overlays.retain(|o| !matches!(o, Overlay::Sessions(_)));
                    if self.overlays.len() < had {
                        self.notice(
                            NoticeKind::Info,
                            "this is the only session of this workspace: there is no other \
                             to resume (`lathe sessions --all` lists those of every workspace)",
                        );
                    }
                } else if let Some(Overlay::Sessions(p)) =
                    self.overlay_mut(|o| matches!(o, Overlay::Sessions(_)))
                {
                    p.set(list);
                }
            }
        }
    }

    /// Opens a view on top (one of each kind: an open one is replaced).
    fn open(&mut self, view: Overlay) {
        self.overlays.retain(|o| !o.same_kind(&view));
        self.overlays.push(view);
    }

    /// The open view `is` picks, if any.
    fn overlay_mut(&mut self, is: impl Fn(&Overlay) -> bool) -> Option<&mut Overlay> {
        self.overlays.iter_mut().find(|o| is(o))
    }

    /// Whether a view of the kind `is` picks is open.
    fn has_overlay(&self, is: impl Fn(&Overlay) -> bool) -> bool {
        self.overlays.iter().any(is)
    }

    /// A key for the top view.
    fn overlay_key(&mut self, key: KeyEvent) {
        let Some(top) = self.overlays.last_mut() else {
            return;
        };
        let outcome = match top {
            Overlay::Log(log) => log.key(key, &self.calls, &self.bus.events),
            Overlay::Agents(view) => view.key(
                key,
                &mut self.status.meter,
                &self.status.jobs,
                &self.bus.events,
            ),
            other => match other.component() {
                Some(view) => view.handle_key(key, &self.bus.events, self.screen.now),
                None => crate::component::Outcome::Consumed,
            },
        };
        if outcome.closes() {
            self.overlays.pop();
        }
        self.drain_events();
        // A key the view does not take falls to the composer below.
        if let Some(passed) = outcome.passed() {
            self.composer_key(passed, self.screen.now);
        }
    }

    /// Mouse reporting was turned over: says what that means.
    pub fn mouse_toggled(&mut self, on: bool) {
        let text = if on {
            "mouse on: the wheel scrolls Lathe (Ctrl-S gives selection back to the terminal)"
        } else {
            "mouse off: select and copy with the terminal; Ctrl-S gives the wheel back"
        };
        self.flash(text, self.screen.now);
    }

    /// A frame is on screen (called right after it is written): questions
    /// count as shown from `now`, so keys read while the UI could not show
    /// them never answer them.
    pub fn drawn(&mut self, now: Instant) {
        self.questions.each(|q| q.drawn(now));
    }

    /// Everything is drawn again (after the terminal was given away).
    pub fn redraw(&mut self) {
        self.screen.dirty = true;
    }

    pub fn is_dirty(&self) -> bool {
        self.screen.dirty
    }

    pub fn is_running(&self) -> bool {
        self.turn.turn_started.is_some()
    }

    /// When the app next needs a tick without any input: while something
    /// animates, when the approval dialog arms, when a message expires.
    pub fn next_tick(&self) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut consider = |t: Instant| next = Some(next.map_or(t, |n| n.min(t)));
        // Spinners and clocks animate, except behind a dialog waiting for
        // an answer: then nothing is drawn until something happens.
        if (self.turn.turn_started.is_some() || !self.turn.tool_started.is_empty())
            && !self.questions.is_asking()
        {
            consider(self.screen.now + TICK);
        }
        if let Some(armed) = self.questions.approvals.armed_at()
            && armed > self.screen.now
        {
            consider(armed);
        }
        if let Some((_, until)) = &self.status.flash {
            consider(*until);
        }
        if self
            .overlays
            .iter()
            .any(|o| matches!(o, Overlay::Permissions(v) if v.has_grants()))
        {
            // The grants' time left counts down.
            consider(self.screen.now + std::time::Duration::from_secs(1));
        }
        next
    }

    pub fn tick(&mut self, now: Instant) {
        self.screen.now = now;
        let started = &self.turn.tool_started;
        self.transcript.for_each_running(|t| {
            if let Some(s) = started.get(&t.call_id) {
                t.elapsed_ms = u64::try_from(now.saturating_duration_since(*s).as_millis())
                    .unwrap_or(u64::MAX);
            }
        });
        if self
            .status
            .flash
            .as_ref()
            .is_some_and(|(_, until)| now >= *until)
        {
            self.status.flash = None;
        }
        self.screen.dirty = true;
    }

    /// A warning in the transcript (from outside: a session that would
    /// not open).
    pub fn warn(&mut self, text: String) {
        self.notice(NoticeKind::Warning, text);
        self.screen.dirty = true;
    }

    fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.transcript.push(Cell::Notice(kind, text.into()));
    }

    /// A hint in the status bar, for a moment. "reading…" lasts as long
    /// as the quiet moment it speaks of: once a question takes keys it
    /// would mislead.
    fn flash(&mut self, text: &str, now: Instant) {
        use crate::components::approval::{QUIET, READING};
        let lasts = if text == READING { QUIET } else { QUIT_WINDOW };
        self.status.flash = Some((text.to_string(), now + lasts));
    }

    /// Reacts to one agent event.
    /// The model moved on from thinking to its answer (or the turn
    /// ended): the thinking cell folds, saying for how long.
    fn end_thinking(&mut self, now: Instant) {
        if let Some(since) = self.turn.thinking_since.take() {
            let took =
                u64::try_from(now.saturating_duration_since(since).as_millis()).unwrap_or(u64::MAX);
            self.transcript.end_thinking(took);
        }
    }

    fn end_turn(&mut self) {
        self.questions.withdraw(Kind::Limit);
        let next_turn_coming = self.end_together();
        self.turn.turn_started = None;
        self.turn.tool_started.clear();
        self.questions.approvals.clear();
        self.composer.set_busy(false);
        if next_turn_coming {
            return;
        }
        if let Some(next) = self.turn.queued.pop_front() {
            self.send(next);
        }
    }

    /// What a rewind did, on screen: a conversation rewound loses the
    /// turns since from the transcript, and the turn's message comes back
    /// to the composer to edit and send again.
    #[allow(clippy::too_many_arguments)]
    fn rewound(
        &mut self,
        turn: u64,
        files: bool,
        conversation: bool,
        restored: &[String],
        removed: &[String],
        prompt: Option<String>,
        error: Option<String>,
    ) {
        if let Some(e) = error {
            let what = if files {
                "nothing was undone"
            } else {
                "nothing was rewound"
            };
            self.notice(NoticeKind::Warning, format!("{what}: {e}"));
            return;
        }
        if conversation {
            if let Some(i) = self.turn.turn_marks.iter().position(|(t, _)| *t == turn) {
                let at = self.turn.turn_marks[i].1;
                self.turn.turn_marks.truncate(i);
                self.transcript.truncate(at);
            }
            if let Some(p) = prompt
                && self.composer.is_empty()
            {
                self.composer.set_text(&p);
            }
        }
        let count =
            |n: usize, what: &str| format!("{n} file{} {what}", if n == 1 { "" } else { "s" });
        let mut done = Vec::new();
        if files {
            done.push(if restored.is_empty() && removed.is_empty() {
                "no file needed restoring".to_string()
            } else {
                let mut parts = Vec::new();
                if !restored.is_empty() {
                    parts.push(format!(
                        "{} ({})",
                        count(restored.len(), "restored"),
                        list(restored)
                    ));
                }
                if !removed.is_empty() {
                    parts.push(format!(
                        "{} ({})",
                        count(removed.len(), "removed"),
                        list(removed)
                    ));
                }
                parts.join(", ")
            });
        }
        if conversation {
            done.push("the conversation is back to before it".into());
        }
        // The caveat once a session, not at every undo.
        if files && !std::mem::replace(&mut self.person.ignored_said, true) {
            done.push("files git ignores are never checkpointed".into());
        }
        // `/undo` undoes a turn's file changes; `/rewind` goes back.
        let verb = if conversation {
            "rewound to before turn"
        } else {
            "undid the file changes of turn"
        };
        self.notice(
            NoticeKind::Info,
            format!("↶ {verb} {turn}: {}", done.join("; ")),
        );
    }

    /// The server serves several models and none was named: the person
    /// chooses (`/model ` is typed for them, the list below it).
    pub fn choose_model(&mut self, models: Vec<String>) {
        self.composer.set_models(models.clone());
        self.notice(
            NoticeKind::Info,
            format!(
                "this server serves {} models and none is configured; choose one with /model \
                 NAME (Tab completes), or start with --model NAME",
                models.len()
            ),
        );
        self.status.models = Models::Known(models);
        self.composer.set_text("/model ");
    }

    fn send(&mut self, text: String) {
        self.turn.sent_marks.push_back(self.transcript.len());
        self.transcript.push(Cell::User(text.clone()));
        self.transcript.scroll_to_bottom();
        self.bus.op(Op::UserInput { text });
    }

    /// Queued messages go back to the composer, in front of any draft,
    /// so stopping a turn never starts the next one.
    fn unqueue(&mut self) -> usize {
        let n = self.turn.queued.len() + self.turn.steering.len();
        if n == 0 {
            return 0;
        }
        let mut parts: Vec<String> = self.turn.steering.drain(..).collect();
        parts.extend(self.turn.queued.drain(..));
        let draft = self.composer.text();
        if !draft.trim().is_empty() {
            parts.push(draft);
        }
        self.composer.set_text(&parts.join("\n\n"));
        n
    }
}

mod agent_events;
mod callback;
mod commands;
mod draw;
mod edited;
mod keys;
mod mid_turn;
mod parts;
mod resume;

#[cfg(test)]
#[path = "app_tests.rs"]
mod tests;

/// A few paths, and how many more.
fn list(paths: &[String]) -> String {
    const SHOWN: usize = 5;
    // One line each: a name with a line break or a very long one is
    // shown escaped and cut.
    let mut s = paths
        .iter()
        .take(SHOWN)
        .map(|p| {
            let p = if p.chars().any(char::is_control) {
                format!("{p:?}")
            } else {
                p.clone()
            };
            crate::width::truncate(&p, 60).into_owned()
        })
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        s.push_str(&format!(", +{}", paths.len() - SHOWN));
    }
    s
}

/// What `/model` knows of the provider's models.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Models {
    /// Not asked yet (asked when `/model` is first typed).
    Unknown,
    Asked,
    Known(Vec<String>),
    /// The provider lists none, or could not be asked: any name goes.
    Unavailable(String),
}

/// `n` and `word`, plural when it is not one.
fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
