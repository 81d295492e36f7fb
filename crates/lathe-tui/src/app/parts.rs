//! `App`'s state, grouped by who owns it: the channel and queues to the
//! loop and the agent, the screen, the turn, the status bar, the session,
//! the person's edits, and the person at the terminal. A handler takes
//! (or names) the part it changes.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::time::Instant;

use ratatui::layout::Rect;

use super::{Models, Request, callback};
use crate::component::{AppEvent, AppEvents};
use crate::components::question::TrustPrompt;
use crate::highlight::Highlighter;
use crate::protocol::{ApprovalMode, McpStatus, Op, Usage};
use crate::theme::Theme;

/// What goes between the app and the rest: its event channel (what views
/// ask of it, and work done off the UI thread), what the loop is to do
/// (the terminal, the editor, quitting; in the order asked, drained in
/// one place), and the ops for the agent.
pub(super) struct Bus {
    pub(super) events: AppEvents,
    pub(super) event_rx: tokio::sync::mpsc::UnboundedReceiver<AppEvent>,
    /// What the loop is to do, in the order asked.
    pub(super) out: Vec<Request>,
}

impl Bus {
    /// An operation for the agent.
    pub(super) fn op(&mut self, op: Op) {
        self.out.push(Request::Agent(op));
    }

    /// Something for the loop to do: the terminal, the editor, leaving.
    pub(super) fn request(&mut self, request: Request) {
        self.out.push(request);
    }

    /// Takes the requests `pick` keeps (`Ok`), in order, leaving the rest
    /// (`Err`) queued in theirs.
    #[cfg(any(test, feature = "internals"))]
    pub(super) fn take<T>(&mut self, pick: impl Fn(Request) -> Result<T, Request>) -> Vec<T> {
        let mut taken = Vec::new();
        let mut left = Vec::new();
        for r in std::mem::take(&mut self.out) {
            match pick(r) {
                Ok(t) => taken.push(t),
                Err(r) => left.push(r),
            }
        }
        self.out = left;
        taken
    }
}

/// How the screen is drawn, and when.
pub(super) struct Screen {
    pub(super) theme: Theme,
    pub(super) hl: Highlighter,
    /// Where the last frame drew the transcript (for clicks).
    pub(super) transcript_area: std::cell::Cell<Rect>,
    /// The keys overlay (`?`), above everything while open.
    pub(super) help: Option<crate::components::keys_help::KeysHelp>,
    pub(super) dirty: bool,
    pub(super) now: Instant,
}

/// The turn running, and the person's messages around it.
#[derive(Default)]
pub(super) struct TurnState {
    /// Where each turn's message is in the transcript, by turn id; and
    /// the messages sent whose turn has not started yet.
    pub(super) turn_marks: Vec<(u64, usize)>,
    pub(super) sent_marks: VecDeque<usize>,
    pub(super) turn_started: Option<Instant>,
    pub(super) tool_started: HashMap<String, Instant>,
    /// The turn the person stopped at the tool-round limit: its end is
    /// their decision, not an error.
    pub(super) stopped_at_limit: Option<u64>,
    /// Messages written while a turn runs, sent one at a time as turns
    /// end; an interrupt hands them back to the composer.
    pub(super) queued: VecDeque<String>,
    /// Messages sent to the running turn (Enter while it runs), not yet
    /// given to the model: shown above the composer until they are.
    pub(super) steering: VecDeque<String>,
    /// The model's plan, pinned above the composer.
    pub(super) plan: Option<crate::components::plan::Plan>,
    /// The turn running is in plan mode: its end asks whether to carry
    /// the plan out.
    pub(super) planning: bool,
    /// When the model began thinking in the response streaming now.
    pub(super) thinking_since: Option<Instant>,
}

/// What the status bar, `/cost`, `/model` and `/ps` show.
pub(super) struct Status {
    pub(super) model: String,
    pub(super) approval: ApprovalMode,
    pub(super) usage: Usage,
    /// How full the context is: tokens, and the window if known.
    pub(super) context: Option<(u64, Option<u64>)>,
    /// The MCP servers, as last reported.
    pub(super) mcp: BTreeMap<String, McpStatus>,
    /// What the last turn cost, when known.
    pub(super) last_turn_cost: Option<f64>,
    /// `/effort`: `None` leaves it to the config and the server.
    pub(super) effort: Option<crate::protocol::Effort>,
    /// What the session has cost so far, when known.
    pub(super) spent: Option<f64>,
    /// The caps on spending, as they stand (a yes to a reached one
    /// raises it).
    pub(super) caps: crate::protocol::budget::Caps,
    /// What the latest turn has used, its subagents' included (by turn).
    pub(super) turn_spent: (u64, Usage),
    /// The turn's agents, metered (`/agents`, the status bar).
    pub(super) meter: crate::components::agents::Meter,
    /// What the provider lists, for `/model`.
    pub(super) models: Models,
    /// `/model NAME` typed before the list came: decided when it comes.
    pub(super) pending_model: Option<String>,
    /// The commands running in the background, as last reported.
    pub(super) jobs: Vec<crate::protocol::JobInfo>,
    /// A short hint, until its time.
    pub(super) flash: Option<(String, Instant)>,
}

impl Status {
    /// A response of turn `turn_id` was counted: `last` used, the
    /// conversation's `total` (a subagent's tokens cost, but are not the
    /// conversation's: `/cost` tells them by agent).
    pub(super) fn counted(&mut self, turn_id: u64, last: Usage, total: Usage, subagent: bool) {
        if self.turn_spent.0 != turn_id {
            self.turn_spent = (turn_id, Usage::default());
        }
        self.turn_spent.1.add(last);
        if !subagent {
            self.usage = total;
        }
        if let Some(c) = last.cost_usd {
            self.spent = Some(crate::protocol::round_usd(self.spent.unwrap_or(0.0) + c));
        }
    }

    /// The cap nearest to being reached: the session's spending, and the
    /// running turn's (its subagents' included).
    pub(super) fn nearest_cap(&self, running: bool) -> Option<crate::protocol::budget::Standing> {
        let session = Usage {
            cost_usd: self.spent,
            ..Usage::default()
        };
        let turn = if running {
            self.turn_spent.1
        } else {
            Usage::default()
        };
        self.caps.standings(&session, &turn).into_iter().next()
    }
}

/// The session shown, and where the others are.
pub(super) struct SessionState {
    pub(super) session_id: String,
    pub(super) sessions_dir: Option<PathBuf>,
    pub(super) prompts: Option<crate::session::prompts::PromptLog>,
    pub(super) workspace: PathBuf,
    /// The trust question answered "not now", for `/trust`.
    pub(super) untrusted: Option<TrustPrompt>,
}

/// What `E` opened in the editor, by call, and what the person's edits
/// sent (kept until the call is done, so a refused write loses nothing).
#[derive(Default)]
pub(super) struct Edits {
    pub(super) edit_opened: HashMap<String, String>,
    pub(super) edits_sent: HashMap<String, String>,
}

/// The person at the terminal.
#[derive(Default)]
pub(super) struct Person {
    /// Whether they are there, to call them back.
    pub(super) presence: callback::Presence,
    pub(super) quit_armed: Option<Instant>,
    /// `/undo` said once that files git ignores are not checkpointed.
    pub(super) ignored_said: bool,
}
