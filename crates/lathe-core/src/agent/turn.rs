//! One user turn: request, stream, dispatch the tool calls, feed the
//! results back, until the model answers in text or the limit of tool
//! rounds is reached (then the turn fails with `max tool iterations (N)
//! exceeded`, and the calls of the refused round get error results so the
//! history stays well-formed). An interrupt ends the turn at once; calls
//! that did not finish get `cancelled` results.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod ending;

use tokio_util::sync::CancellationToken;

use super::{Conversation, Emitter, Shared, dispatch};
use crate::policy::redactor::stream::Stream;
use crate::protocol::{AgentEvent, ErrorKind, StopReason, Usage};
use crate::provider::{
    ChatRequest, Completion, Message, ProviderError, RetryNotice, StreamObserver, ToolOutput,
};
use crate::session::history::Item;

/// Streamed text on its way out as `assistant_delta` and
/// `reasoning_delta` events, redacted as it streams (a secret split over
/// deltas is hidden whole: [`crate::policy::redactor::stream`]). Shared
/// by the observer the provider calls and the clock that shows what
/// waited once the stream pauses.
#[derive(Clone)]
struct Streamed {
    emitter: Emitter,
    turn_id: u64,
    streams: Arc<Mutex<Streams>>,
}

#[derive(Default)]
struct Streams {
    text: Stream,
    reasoning: Stream,
}

/// How often a paused stream is looked at: what waited for the next
/// delta is shown when none comes.
const TICK: Duration = Duration::from_millis(20);

impl Streamed {
    fn new(emitter: Emitter, turn_id: u64) -> Self {
        Self {
            emitter,
            turn_id,
            streams: Arc::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Streams> {
        self.streams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn text(&self, text: Option<String>) {
        if let Some(text) = text {
            self.emitter.emit_redacted(AgentEvent::AssistantDelta {
                turn_id: self.turn_id,
                text,
            });
        }
    }

    fn reasoning(&self, text: Option<String>) {
        if let Some(text) = text {
            self.emitter.emit_redacted(AgentEvent::ReasoningDelta {
                turn_id: self.turn_id,
                text,
            });
        }
    }

    fn text_delta(&self, delta: &str) {
        let r = self.emitter.redactor();
        let mut s = self.lock();
        // What reasoning waited comes first: the answer follows it.
        self.reasoning(s.reasoning.finish(r));
        self.text(s.text.push(r, delta, Instant::now()));
    }

    fn reasoning_delta(&self, delta: &str) {
        let r = self.emitter.redactor();
        let mut s = self.lock();
        self.reasoning(s.reasoning.push(r, delta, Instant::now()));
    }

    /// The stream paused: what can be judged is shown.
    fn tick(&self) {
        let r = self.emitter.redactor();
        let now = Instant::now();
        let mut s = self.lock();
        self.reasoning(s.reasoning.tick(r, now));
        self.text(s.text.tick(r, now));
    }

    /// The response ended (or failed): what waited is shown.
    fn finish(&self) {
        let r = self.emitter.redactor();
        let mut s = self.lock();
        self.reasoning(s.reasoning.finish(r));
        self.text(s.text.finish(r));
    }

    /// The answer and the reasoning whole, as they were shown, if they
    /// are what streamed.
    fn shown_whole(&self, text: &str, reasoning: &str) -> (Option<String>, Option<String>) {
        let s = self.lock();
        (
            s.text.shown_whole(text).map(str::to_string),
            s.reasoning.shown_whole(reasoning).map(str::to_string),
        )
    }

    fn discard(&self) {
        let mut s = self.lock();
        s.text.discard();
        s.reasoning.discard();
    }
}

/// What the provider calls as a response streams.
struct TurnObserver {
    streamed: Streamed,
}

impl StreamObserver for TurnObserver {
    fn text_delta(&mut self, text: &str) {
        self.streamed.text_delta(text);
    }

    fn reasoning_delta(&mut self, text: &str) {
        self.streamed.reasoning_delta(text);
    }

    fn retrying(&mut self, notice: &RetryNotice) {
        self.streamed.discard();
        self.streamed.emitter.emit(AgentEvent::ProviderRetry {
            turn_id: self.streamed.turn_id,
            attempt: notice.attempt,
            max_retries: notice.max_retries,
            delay_ms: u64::try_from(notice.delay.as_millis()).unwrap_or(u64::MAX),
            reason: notice.reason.clone(),
        });
    }
}

/// The turn is over, and its end was told (the events, the record).
struct Ended;

/// One turn as it goes: what was settled at its start (the model and how
/// hard it thinks: `/model` and `/effort` take effect at the next turn, as
/// a change half way would leave a tool loop's calls without the thinking
/// that led to them, which Anthropic refuses) and how far it got.
struct Turn<'a> {
    shared: &'a Shared,
    id: u64,
    model: String,
    effort: Option<crate::protocol::Effort>,
    cancel: CancellationToken,
    /// Tool rounds run, and how many it may run.
    iterations: u32,
    limit: u32,
    usage: Usage,
    /// Whether the request after a context-length refusal was compacted
    /// already (it is tried once more, not again and again).
    overflowed: bool,
    /// Where this turn's messages begin (a refused turn is taken out); a
    /// compaction during the turn moves them, and it then stays.
    start: Option<usize>,
    /// Plan mode: the read-only tools only, and a plan to propose.
    plan: bool,
    /// The last response's answer and reasoning whole as they streamed,
    /// redacted already (when they are the provider's whole message).
    shown: (Option<String>, Option<String>),
    /// The last response's answer as it was shown, for the turn's end.
    answer_shown: Option<String>,
    /// The calls made, counted: the same one again and again pauses it.
    repeats: super::repeats::Repeats,
    /// A `stop` hook held the turn's end once already.
    stop_held: bool,
}

/// What the model is told before the person's message in plan mode.
pub(crate) const PLAN_MODE: &str = "[Plan mode: look into what the person asks with the \
     read-only tools you have (commands run in a read-only sandbox: nothing can be written), \
     then propose a plan: call update_plan with the steps (all pending) and explain it in a \
     few sentences. Change nothing yet, and do not ask to: the person reads the plan and \
     approves it, or says what to change.]";

pub(crate) async fn run_turn(
    shared: &Shared,
    conv: &mut Conversation,
    prompt: String,
    plan: bool,
    cancel: CancellationToken,
) {
    conv.turns += 1;
    let mut turn = Turn {
        shared,
        id: conv.turns,
        model: shared.model(),
        effort: shared.effort(),
        cancel,
        iterations: 0,
        limit: shared.settings.max_tool_iterations,
        usage: Usage::default(),
        overflowed: false,
        start: None,
        plan,
        shown: (None, None),
        answer_shown: None,
        repeats: Default::default(),
        stop_held: false,
    };
    shared.state().planning = plan;
    let Err(Ended) = turn.run(conv, prompt).await;
    {
        let mut state = shared.state();
        state.planning = false;
        state.studying = false;
    }
}

impl Turn<'_> {
    async fn run(&mut self, conv: &mut Conversation, prompt: String) -> Result<Infallible, Ended> {
        self.open(conv, prompt).await?;
        loop {
            self.steered(conv).await;
            self.compact_if_due(conv).await?;
            self.within_budget(conv).await?;
            let Some(completion) = self.ask(conv).await? else {
                continue;
            };
            let (completion, cut_short) = self.take_in(conv, completion).await;
            let stop = completion.stop();
            let calls = completion.tool_calls.clone();
            // A paused turn (Anthropic's long server-side work) goes on
            // with what it has so far.
            if stop == StopReason::PauseTurn && calls.is_empty() && self.iterations < self.limit {
                self.iterations += 1;
                conv.messages.push(completion.message());
                conv.counted(completion.usage);
                continue;
            }
            if calls.is_empty() {
                if self.held_by_stop_hook(conv, &completion).await {
                    continue;
                }
                return Err(self.answered(conv, completion).await);
            }
            self.run_round(conv, completion, calls, cut_short).await?;
        }
    }

    /// Ends the turn with an error the person sees.
    /// The message as the model reads it: `/init`'s study, a skill's
    /// instructions (`/NAME`), an MCP server's prompt (`/server:prompt`,
    /// parsed from what the person `written`; the files `attached` keep
    /// coming after it) and the resources the person mentioned
    /// (`@server:uri`: those written, not those a file or prompt holds).
    async fn expanded(
        &self,
        written: &str,
        attached: String,
        files: &mut Vec<crate::protocol::Attachment>,
    ) -> Result<String, Ended> {
        let shared = self.shared;
        let mut prompt = attached;
        if let Some(init) = super::init::expanded(&prompt, shared.services.workspace.root()) {
            // The repository studied (its commands only look), an
            // AGENTS.md proposed.
            prompt = init;
            shared.state().studying = true;
        } else if let Some(invoked) = shared
            .services
            .skills
            .as_ref()
            .and_then(|s| s.invoked(&prompt, &shared.services.workspace))
        {
            prompt = invoked;
        }
        if let Some(mcp) = shared.services.mcp.clone() {
            let desk: &dyn crate::tools::Together = shared.services.desk.as_ref();
            match mcp.prompt_invoked(written, Some(desk), &self.cancel).await {
                Some(Ok(text)) => {
                    let files_part = prompt.strip_prefix(written).unwrap_or_default();
                    prompt = format!("{text}{files_part}");
                }
                Some(Err(e)) => {
                    let kind = if self.cancel.is_cancelled() {
                        ErrorKind::Interrupted
                    } else {
                        ErrorKind::Command
                    };
                    return Err(self.fail(kind, format!("not sent: {e}")).await);
                }
                None => {}
            }
            let read = mcp.resources_in(written, &self.cancel).await;
            super::mentions::add_resources(&mut prompt, files, read);
        }
        Ok(prompt)
    }

    async fn fail(&self, kind: ErrorKind, message: String) -> Ended {
        // What a server said may quote a key: the record the model reads
        // on resume keeps none.
        let mut message = message;
        self.shared.to_model(&mut message);
        self.shared
            .record(Item::TurnAborted {
                turn: self.id,
                reason: message.clone(),
            })
            .await;
        self.shared.sync_history().await;
        self.shared.services.emitter.emit(AgentEvent::Error {
            turn_id: Some(self.id),
            kind,
            message,
        });
        Ended
    }

    async fn interrupted(&self) -> Ended {
        self.fail(ErrorKind::Interrupted, "turn interrupted".into())
            .await
    }

    /// The person's message, with what it attaches, into the conversation.
    async fn open(&mut self, conv: &mut Conversation, prompt: String) -> Result<(), Ended> {
        let (shared, emitter, turn_id) = (self.shared, &self.shared.services.emitter, self.id);
        emitter.emit(AgentEvent::TurnStarted {
            turn_id,
            prompt: prompt.clone(),
        });
        // Denials, questions and spending are the turn's own.
        shared.services.desk.begin(turn_id, &prompt);
        {
            let mut state = shared.state();
            state.denied.clear();
            state.budget.turn.clear();
        }
        // `user_prompt_submit` hooks may hold the message, or add to it.
        match super::events::prompt_submitted(shared, &prompt, &self.cancel).await {
            Err(reason) => {
                return Err(self
                    .fail(
                        ErrorKind::Blocked,
                        format!("a hook blocked the message, which was not sent: {reason}"),
                    )
                    .await);
            }
            Ok(Some(note)) => conv.add_note(note),
            Ok(None) => {}
        }
        conv.prompts.push((turn_id, prompt.clone()));
        let written = prompt.clone();
        if let Some(c) = &shared.services.checkpoints {
            c.begin(turn_id).await;
        }
        // The files it mentions (`@path`) go along with it, and the images
        // it mentions, pastes or was given (`exec --image`).
        let (prompt, mut files, mut to_read) = super::mentions::attach(shared, &prompt);
        let mut prompt = self.expanded(&written, prompt, &mut files).await?;
        // A key the person pasted, or one in a file the message attaches,
        // goes neither to the model nor into the record: a placeholder
        // stands in for it, and the person is told.
        if shared.to_model(&mut prompt) {
            emitter.emit(AgentEvent::Error {
                turn_id: None,
                kind: ErrorKind::Provider,
                message: format!(
                    "your message or a file it attaches held what looks like a secret (a key, a \
                     token, a password): it was replaced by {} before it was sent or recorded",
                    crate::policy::redactor::REDACTED
                ),
            });
        }
        to_read.extend(shared.take_images().into_iter().map(|path| {
            let shown = path.display().to_string();
            super::mentions::ImageFile::named(&shared.services, path, shown)
        }));
        let images = super::mentions::load_images(shared, to_read, &mut files).await;
        // A model that sees no images is not sent any: said before anything
        // goes.
        let model = &self.model;
        let blind = !images.is_empty() && shared.model_info(model).vision == Some(false);
        if blind {
            for f in files.iter_mut().filter(|f| {
                f.attached && f.note.as_deref().is_some_and(|n| n.starts_with("image "))
            }) {
                f.attached = false;
                f.note = Some(format!("not sent: {model} takes no images"));
            }
        }
        if !files.is_empty() {
            emitter.emit(AgentEvent::Attachments { turn_id, files });
        }
        if blind {
            return Err(self
                .fail(
                    ErrorKind::Provider,
                    format!(
                        "{model} does not take images, so nothing was sent: choose a model that \
                         sees them, or send the message without the image"
                    ),
                )
                .await);
        }
        // How the last turn ended, if not well (a session resumed after a
        // kill), or a rewind, and plan mode: the model reads it first; the
        // record keeps it apart from the person's words.
        let note = conv.note.take();
        let note = match (note, self.plan) {
            (note, false) => note,
            (None, true) => Some(PLAN_MODE.to_string()),
            (Some(n), true) => Some(format!("{n}\n\n{PLAN_MODE}")),
        };
        shared
            .record(Item::User {
                turn: turn_id,
                text: prompt.clone(),
                note: note.clone(),
                images: images.clone(),
            })
            .await;
        let prompt = crate::session::history::with_note(note.as_deref(), &prompt);
        if images.is_empty() {
            crate::session::history::push_user(&mut conv.messages, prompt);
        } else {
            conv.messages.push(Message::UserImages {
                text: prompt,
                images,
            });
        }
        self.start = Some(conv.messages.len().saturating_sub(1));
        Ok(())
    }

    /// Nearly full: the older turns are summarized before asking.
    async fn compact_if_due(&mut self, conv: &mut Conversation) -> Result<(), Ended> {
        if !super::compact::due(self.shared, conv) {
            return Ok(());
        }
        self.start = None;
        let auto =
            super::compact::compact(self.shared, conv, Some(self.id), "auto", &self.cancel).await;
        if let Err(e) = auto {
            if self.cancel.is_cancelled() {
                return Err(self.interrupted().await);
            }
            self.shared.services.emitter.emit(AgentEvent::Error {
                turn_id: None,
                kind: ErrorKind::Provider,
                message: format!("the context is nearly full and was not compacted: {e}"),
            });
        }
        Ok(())
    }

    /// One request of the turn; `None` when it is to be asked again (the
    /// conversation was too long, and is compacted now).
    async fn ask(&mut self, conv: &mut Conversation) -> Result<Option<Completion>, Ended> {
        let shared = self.shared;
        // Tool sources still starting, or re-reading a changed tool list
        // (MCP servers, each bounded by its timeout), are waited for, so
        // the model sees their tools.
        tokio::select! {
            () = shared.services.tools.settle() => {}
            () = self.cancel.cancelled() => {}
        }
        shared
            .services
            .tools
            .defer_above(super::compact::tool_search_budget(shared));
        let tools = shared.services.tools.snapshot();
        // Planning, the model is offered what only looks.
        let read_only;
        let schemas = if self.plan {
            read_only = tools
                .schemas
                .iter()
                .filter(|s| {
                    tools
                        .registry
                        .resolve(&s.name)
                        .is_ok_and(|t| t.tool.offered_when_planning())
                })
                .cloned()
                .collect::<Vec<_>>();
            &read_only
        } else {
            &tools.schemas
        };
        // A model that sees no images gets the earlier ones as their labels.
        let blind;
        let messages = if shared.model_info(&self.model).vision == Some(false)
            && conv
                .messages
                .iter()
                .any(|m| matches!(m, Message::UserImages { .. }))
        {
            blind = without_images(&conv.messages);
            &blind
        } else {
            &conv.messages
        };
        let request = ChatRequest {
            model: &self.model,
            system: &shared.settings.system_prompt,
            messages,
            tools: schemas,
            effort: self.effort,
            cache_key: Some(&shared.settings.session_id),
        };
        shared.record_now(Item::Request { turn: self.id }).await;
        let streamed = Streamed::new(shared.services.emitter.clone(), self.id);
        let mut observer = TurnObserver {
            streamed: streamed.clone(),
        };
        let completed = {
            let response = shared
                .services
                .provider
                .complete(request, &mut observer, &self.cancel);
            tokio::pin!(response);
            let mut clock = tokio::time::interval(TICK);
            clock.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                tokio::select! {
                    done = &mut response => break done,
                    _ = clock.tick() => streamed.tick(),
                }
            }
        };
        streamed.finish();
        let e = match completed {
            Ok(c) => {
                self.shown = streamed.shown_whole(&c.text, &c.reasoning);
                return Ok(Some(c));
            }
            Err(ProviderError::Cancelled) => return Err(self.interrupted().await),
            Err(e) => e,
        };
        if !e.is_context_overflow() || self.overflowed {
            let shown = crate::protocol::redact::redacted(e.to_string(), &shared.services.redactor);
            tracing::error!(error = %shown, "provider request failed");
            return Err(self
                .fail(ErrorKind::Provider, format!("provider error: {e}"))
                .await);
        }
        self.overflowed = true;
        self.start = None;
        tracing::warn!(error = %e, "the conversation is too long for the model; compacting");
        match super::compact::compact(shared, conv, Some(self.id), "overflow", &self.cancel).await {
            Ok(()) => Ok(None),
            Err(_) if self.cancel.is_cancelled() => Err(self.interrupted().await),
            Err(c) => Err(self
                .fail(
                    ErrorKind::Provider,
                    format!(
                        "provider error: {e}; the conversation is too long for the model and \
                         could not be compacted ({c}): /clear starts over"
                    ),
                )
                .await),
        }
    }

    /// A response, counted, recorded and shown; and whether it was cut at
    /// the output token limit in the middle of a call. Such calls have
    /// half their arguments: none runs (see `run_round`), and what goes
    /// back is `{}`, which every server parses.
    async fn take_in(
        &mut self,
        conv: &mut Conversation,
        mut completion: Completion,
    ) -> (Completion, bool) {
        let (shared, emitter, turn_id, model) = (
            self.shared,
            &self.shared.services.emitter,
            self.id,
            &self.model,
        );
        if completion.usage.cost_usd.is_none() {
            completion.usage.cost_usd = shared.price(model).map(|p| p.cost(&completion.usage));
        }
        for c in &mut completion.carried {
            c.model.clone_from(model);
        }
        self.usage.add(completion.usage);
        conv.usage.add(completion.usage);
        shared
            .spend(super::budget::By::MAIN, model, completion.usage)
            .await;
        completion.tool_calls = unique_ids(std::mem::take(&mut completion.tool_calls));
        let mut cut_short = false;
        if completion.stop() == StopReason::MaxTokens {
            for c in &mut completion.tool_calls {
                if serde_json::from_str::<serde_json::Value>(&c.arguments).is_err() {
                    c.arguments = "{}".into();
                    cut_short = true;
                }
            }
        }
        // The answer and reasoning as they streamed, redacted already: the
        // record keeps them so, and the screen gets them whole.
        let (text, reasoning) = std::mem::take(&mut self.shown);
        let item = |text: &str, reasoning: &str| Item::Assistant {
            turn: turn_id,
            text: text.to_string(),
            tool_calls: completion.tool_calls.clone(),
            usage: completion.usage,
            reasoning: reasoning.to_string(),
            carried: completion.carried.clone(),
            model: model.clone(),
        };
        match (&text, &reasoning) {
            (Some(t), Some(r)) => shared.record_shown(item(t, r)).await,
            _ => {
                shared
                    .record(item(&completion.text, &completion.reasoning))
                    .await;
            }
        }
        emitter.emit(AgentEvent::UsageUpdated {
            task: None,
            turn_id,
            last: completion.usage,
            total: conv.usage,
            model: model.clone(),
        });
        // Whole, as it streamed (each part redacted in the context of
        // what followed it); otherwise redacted whole.
        if !completion.reasoning.is_empty() {
            let event = |text| AgentEvent::ReasoningMessage { turn_id, text };
            match reasoning {
                Some(shown) => emitter.emit_redacted(event(shown)),
                None => emitter.emit(event(completion.reasoning.clone())),
            }
        }
        self.answer_shown.clone_from(&text);
        if !completion.text.is_empty() {
            let event = |text| AgentEvent::AssistantMessage { turn_id, text };
            match text {
                Some(shown) => emitter.emit_redacted(event(shown)),
                None => emitter.emit(event(completion.text.clone())),
            }
        }
        (completion, cut_short)
    }

    /// The model answered in text (or refused): the turn is done.
    async fn answered(&mut self, conv: &mut Conversation, completion: Completion) -> Ended {
        let (shared, emitter, turn_id) = (self.shared, &self.shared.services.emitter, self.id);
        let stop = completion.stop();
        if stop == StopReason::Refusal {
            let why = completion
                .refusal
                .as_deref()
                .map(str::trim)
                .filter(|w| !w.is_empty() && *w != completion.text.trim())
                .map(|w| format!(" ({w})"))
                .unwrap_or_default();
            // A refused exchange stays out of the conversation, or the
            // model keeps refusing what follows (Anthropic's advice);
            // after a compaction this turn its place is gone.
            let left_out = if let Some(start) = self.start {
                conv.messages.truncate(start);
                shared.record(Item::Refused { turn: turn_id }).await;
                "; the message and its answer were left out of the conversation, so what \
                 follows is not refused for it"
            } else {
                conv.messages.push(completion.message());
                ""
            };
            emitter.emit(AgentEvent::Error {
                turn_id: None,
                kind: ErrorKind::Provider,
                message: format!("the model refused this request{why}{left_out}"),
            });
        } else {
            conv.messages.push(completion.message());
        }
        conv.counted(completion.usage);
        super::compact::report(shared, conv);
        shared.record(Item::TurnEnd { turn: turn_id }).await;
        shared.sync_history().await;
        // The answer as it was shown (redacted as it streamed), the rest
        // of the event redacted here.
        let shown = self.answer_shown.take();
        let denied = std::mem::take(&mut shared.state().denied);
        let mut event = AgentEvent::TurnCompleted {
            turn_id,
            text: if shown.is_some() {
                String::new()
            } else {
                completion.text
            },
            iterations: self.iterations,
            usage: self.usage,
            stop_reason: stop,
            model: self.model.clone(),
            denied,
            questions: shared.services.desk.take_asked(),
            by_agent: shared.state().budget.turn.clone(),
        };
        match shown {
            Some(answer) => {
                crate::protocol::redact::Redact::redact(&mut event, emitter.redactor());
                if let AgentEvent::TurnCompleted { text, .. } = &mut event {
                    *text = answer;
                }
                emitter.emit_redacted(event);
            }
            None => emitter.emit(event),
        }
        Ended
    }

    /// What the person sent while the turn ran goes to the model now,
    /// marked as sent mid-turn.
    async fn steered(&self, conv: &mut Conversation) {
        let sent = self.shared.services.desk.take_steering();
        if sent.is_empty() {
            return;
        }
        let mut text = sent.join("\n\n");
        // What the person sends mid-turn meets the `user_prompt_submit`
        // hooks as any message does.
        match super::events::prompt_submitted(self.shared, &text, &self.cancel).await {
            Err(reason) => {
                self.shared.services.emitter.emit(AgentEvent::Error {
                    turn_id: None,
                    kind: ErrorKind::Blocked,
                    message: format!(
                        "a hook blocked what you sent mid-turn, which was not sent: {reason}"
                    ),
                });
                return;
            }
            Ok(Some(note)) => text = format!("{note}\n\n{text}"),
            Ok(None) => {}
        }
        self.shared.to_model(&mut text);
        self.shared
            .record(Item::Steer {
                turn: self.id,
                text: text.clone(),
            })
            .await;
        crate::session::history::push_steering(&mut conv.messages, &text);
        self.shared
            .services
            .emitter
            .emit(AgentEvent::SteeringDelivered {
                turn_id: self.id,
                text,
            });
    }

    /// The calls of a response: run, or (cut short, past the limit)
    /// answered with why they did not run.
    async fn run_round(
        &mut self,
        conv: &mut Conversation,
        completion: Completion,
        calls: Vec<crate::provider::ToolCall>,
        cut_short: bool,
    ) -> Result<(), Ended> {
        let shared = self.shared;
        // The model is told why its cut calls did not run, so it writes
        // less at once.
        if cut_short && self.iterations < self.limit {
            self.iterations += 1;
            let usage = completion.usage;
            self.not_run(
                conv,
                completion,
                &calls,
                "not run: your answer was cut at the output token limit while you wrote this \
                 call, so its arguments are incomplete; make it smaller (write a large file in \
                 parts, edit rather than rewrite)",
            )
            .await;
            conv.counted_before_results(usage);
            shared.services.emitter.emit(AgentEvent::Error {
                turn_id: None,
                kind: ErrorKind::Provider,
                message: format!(
                    "the model's answer was cut at the output token limit in the middle of {}; \
                     {} not run, and the model was told to write less at once",
                    if calls.len() == 1 {
                        "a tool call"
                    } else {
                        "its tool calls"
                    },
                    if calls.len() == 1 {
                        "it was"
                    } else {
                        "they were"
                    },
                ),
            });
            return Ok(());
        }
        if self.iterations >= self.limit
            && go_on(shared, self.id, self.iterations, &self.cancel).await
        {
            self.limit += shared.settings.max_tool_iterations;
        }
        if self.iterations >= self.limit {
            let message = format!("max tool iterations ({}) exceeded", self.limit);
            let usage = completion.usage;
            self.not_run(conv, completion, &calls, &format!("not run: {message}"))
                .await;
            conv.counted(usage);
            tracing::warn!(%message, "turn stopped");
            return Err(self.fail(ErrorKind::MaxIterations, message).await);
        }
        let limit = shared.settings.repeat_calls;
        if let Some(repeated) = self.repeats.before(&calls, limit) {
            if !self.go_on_repeating(repeated).await {
                let usage = completion.usage;
                let why = format!(
                    "not run: you made this same call {limit} times in this turn; the person \
                     stopped the turn here. Say what you found and what blocks you instead of \
                     trying it again"
                );
                self.not_run(conv, completion, &calls, &why).await;
                conv.counted(usage);
                return Err(self.loop_ended().await);
            }
            self.repeats.forgive(&calls);
            self.repeats.let_through(&calls);
        }
        self.iterations += 1;
        tracing::debug!(
            iteration = self.iterations,
            calls = calls.len(),
            "executing tool calls"
        );
        let outputs = dispatch::run_calls(shared, self.id, &calls, None, &self.cancel).await;
        let failing = self.repeats.after(&calls, &outputs, limit);
        conv.messages.push(completion.message());
        conv.messages.push(Message::ToolResults(outputs));
        // The results are estimated until the next response counts them.
        conv.counted_before_results(completion.usage);
        super::compact::report(shared, conv);
        if self.cancel.is_cancelled() {
            return Err(self.interrupted().await);
        }
        if let Some(repeated) = failing {
            if !self.go_on_repeating(repeated).await {
                return Err(self.loop_ended().await);
            }
            self.repeats.forgive(&calls);
        }
        Ok(())
    }

    /// A call made again and again, or a failure got again and again:
    /// whether the person lets the turn go on (headless: no).
    async fn go_on_repeating(&self, repeated: super::repeats::Repeated) -> bool {
        let shared = self.shared;
        tracing::warn!(tool = %repeated.tool, count = repeated.count, "the model repeats a call");
        shared.services.emitter.emit(AgentEvent::LoopDetected {
            turn_id: self.id,
            tool: repeated.tool,
            arguments: repeated.arguments,
            count: repeated.count,
            failing: repeated.failing,
            task: None,
        });
        shared.services.approver.source() == crate::protocol::DecisionSource::User
            && shared.ask_to_go_on(self.id, &self.cancel).await
    }

    async fn loop_ended(&mut self) -> Ended {
        if self.cancel.is_cancelled() {
            return self.interrupted().await;
        }
        self.stopped(StopReason::Loop).await
    }

    /// Each call of the round gets an error result saying `why` it did not
    /// run, so the history stays well-formed.
    async fn not_run(
        &self,
        conv: &mut Conversation,
        completion: Completion,
        calls: &[crate::provider::ToolCall],
        why: &str,
    ) {
        let results: Vec<ToolOutput> = calls
            .iter()
            .map(|c| ToolOutput {
                call_id: c.id.clone(),
                content: serde_json::json!({ "error": why }).to_string(),
                is_error: true,
            })
            .collect();
        for r in &results {
            self.shared.record(Item::ToolOutput(r.clone())).await;
        }
        conv.messages.push(completion.message());
        conv.messages.push(Message::ToolResults(results));
    }
}

/// The conversation with each image replaced by its label, for a model
/// that takes none.
fn without_images(messages: &[Message]) -> Vec<Message> {
    messages
        .iter()
        .map(|m| match m {
            Message::UserImages { text, images } => {
                let labels: Vec<String> = images.iter().map(|i| i.label()).collect();
                Message::User(format!(
                    "{}\n\n{} (not sent: this model takes no images)",
                    text,
                    labels.join(" ")
                ))
            }
            other => other.clone(),
        })
        .collect()
}

/// Whether a person says to go on past `rounds` tool rounds. Only a
/// front end that answers approvals is asked; headless, the turn ends.
async fn go_on(shared: &Shared, turn_id: u64, rounds: u32, cancel: &CancellationToken) -> bool {
    if shared.services.approver.source() != crate::protocol::DecisionSource::User {
        return false;
    }
    shared.services.emitter.emit(AgentEvent::ToolLimitReached {
        turn_id,
        rounds,
        more: shared.settings.max_tool_iterations,
    });
    shared.ask_to_go_on(turn_id, cancel).await
}

/// Gives each call of a response an id of its own: a server that repeats
/// an id (or sends none) would otherwise get results it cannot tell apart.
pub(super) fn unique_ids(
    mut calls: Vec<crate::provider::ToolCall>,
) -> Vec<crate::provider::ToolCall> {
    let mut seen = std::collections::HashSet::new();
    for (i, call) in calls.iter_mut().enumerate() {
        if call.id.is_empty() {
            call.id = format!("call_{i}");
        }
        let mut n = 1;
        let base = call.id.clone();
        while !seen.insert(call.id.clone()) {
            n += 1;
            call.id = format!("{base}_{n}");
        }
    }
    calls
}
