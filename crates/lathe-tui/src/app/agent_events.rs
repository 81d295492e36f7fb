//! The agent's events, by kind: a turn's progress, tool calls, approval
//! questions, the session (undo, diffs, attachments) and the status the
//! bar shows. `on_agent_event` only sorts them.

use super::edited::keep_edit;
use super::*;
use crate::components::question::{BudgetQuestion, LimitQuestion, LoopQuestion};

impl App {
    pub fn on_agent_event(&mut self, ev: AgentEvent, now: Instant) {
        self.screen.now = now;
        self.screen.dirty = true;
        self.calls.on_event(&ev, now);
        self.status.meter.on_event(&ev);
        if let Some(what) = Self::waits_for_person(&ev) {
            self.call_back(&what);
        }
        match ev {
            ev @ (AgentEvent::TurnStarted { .. }
            | AgentEvent::AssistantDelta { .. }
            | AgentEvent::ReasoningDelta { .. }
            | AgentEvent::ReasoningMessage { .. }
            | AgentEvent::AssistantMessage { .. }
            | AgentEvent::ProviderRetry { .. }
            | AgentEvent::ContextCompacted { .. }
            | AgentEvent::ToolLimitReached { .. }
            | AgentEvent::TurnCompleted { .. }
            | AgentEvent::Error { .. }) => self.on_turn_event(ev, now),
            ev @ (AgentEvent::ToolCallStarted { .. }
            | AgentEvent::ToolProgress { .. }
            | AgentEvent::GuardrailVerdict { .. }
            | AgentEvent::ToolCallFinished { .. }) => self.on_tool_event(ev, now),
            ev @ (AgentEvent::ApprovalRequested { .. } | AgentEvent::ApprovalDecided { .. }) => {
                self.on_approval_event(ev, now)
            }
            ev @ (AgentEvent::SessionDiff { .. }
            | AgentEvent::Attachments { .. }
            | AgentEvent::Turns { .. }
            | AgentEvent::Rewound { preview: false, .. }) => self.on_session_event(ev),
            AgentEvent::Rewound {
                preview: true,
                turn_id,
                restored,
                removed,
                skipped,
                changed_since,
                not_kept,
                error,
                ..
            } => self.undo_preview(
                crate::components::undo_question::UndoPlan {
                    turn: turn_id,
                    restored,
                    removed,
                    skipped,
                    not_kept,
                },
                changed_since,
                error,
                now,
            ),
            ev @ (AgentEvent::SessionStarted { .. }
            | AgentEvent::McpServerStatus(_)
            | AgentEvent::Models { .. }
            | AgentEvent::UsageUpdated { .. }
            | AgentEvent::ContextUpdated { .. }
            | AgentEvent::Cost { .. }
            | AgentEvent::Permissions { .. }) => self.on_status_event(ev, now),
            ev @ (AgentEvent::QuestionAsked { .. }
            | AgentEvent::PlanUpdated { .. }
            | AgentEvent::SteeringDelivered { .. }
            | AgentEvent::Jobs { .. }
            | AgentEvent::Judged { .. }) => self.on_together_event(ev, now),
            AgentEvent::BudgetReached {
                turn_id,
                cap,
                spent,
                limit,
                next,
                raise_to,
            } => {
                let standing = crate::protocol::budget::Standing {
                    cap,
                    spent,
                    limit,
                    next,
                };
                self.questions
                    .ask(BudgetQuestion::new(turn_id, standing, raise_to), now);
            }
            AgentEvent::LoopDetected {
                turn_id,
                tool,
                arguments,
                count,
                failing,
                task,
            } => {
                let call = format!(
                    "{tool} {}",
                    crate::components::cells::key_argument(&arguments)
                );
                if task.is_some() {
                    // The subagent is stopped already; its model hears why.
                    self.notice(
                        NoticeKind::Warning,
                        format!(
                            "a subagent made the same call {count} times ({call}): it was stopped"
                        ),
                    );
                } else {
                    self.questions
                        .ask(LoopQuestion::new(turn_id, call, count, failing), now);
                }
            }
        }
    }

    /// A plan an earlier turn left unfinished is not the turn's that
    /// starts with `prompt` (unless it carries that plan out, approved).
    fn unpin_left_plan(&mut self, prompt: &str) {
        if self.turn.plan.as_ref().is_some_and(|p| p.left)
            && !prompt.contains(crate::components::question::PLAN_APPROVED)
        {
            self.turn.plan = None;
        }
    }

    /// A turn's progress: its start, the model's words, retries, compaction,
    /// the tool-round limit, its end.
    fn on_turn_event(&mut self, ev: AgentEvent, now: Instant) {
        match ev {
            AgentEvent::TurnStarted { turn_id, prompt } => {
                self.unpin_left_plan(&prompt);
                if let Some(at) = self.turn.sent_marks.pop_front() {
                    self.turn.turn_marks.push((turn_id, at));
                }
                self.turn.turn_started = Some(now);
                self.composer.set_busy(true);
            }
            AgentEvent::ReasoningDelta { text, .. } => {
                self.turn.thinking_since.get_or_insert(now);
                self.transcript.append_thinking(&text);
            }
            AgentEvent::ReasoningMessage { text, .. } => {
                self.end_thinking(now);
                self.transcript.set_last_thinking(&text);
            }
            AgentEvent::AssistantDelta { text, .. } => {
                self.end_thinking(now);
                self.transcript.append_assistant(&text);
            }
            AgentEvent::AssistantMessage { text, .. } => {
                self.end_thinking(now);
                if !self.transcript.set_last_assistant(&text) {
                    self.transcript.push(Cell::Assistant(text));
                }
            }
            AgentEvent::ProviderRetry {
                attempt,
                max_retries,
                delay_ms,
                reason,
                ..
            } => {
                self.turn.thinking_since = None;
                self.transcript.discard_partial_assistant();
                self.notice(
                    NoticeKind::Warning,
                    format!(
                        "retry {attempt}/{max_retries} in {:.1} s: {reason}",
                        delay_ms as f64 / 1000.0
                    ),
                );
            }
            AgentEvent::ContextCompacted {
                reason,
                before_tokens,
                after_tokens,
                summarized,
                kept,
                ..
            } => {
                let why = match reason.as_str() {
                    "auto" => "the context was nearly full",
                    "overflow" => "the model said the conversation was too long",
                    _ => "you asked",
                };
                self.notice(
                    NoticeKind::Info,
                    format!(
                        "context compacted ({why}): {summarized} older messages summarized, \
                         {kept} kept as they were; about {} → {} tokens. The model reads the \
                         summary from now on; this transcript keeps everything.",
                        before_tokens, after_tokens
                    ),
                );
            }
            AgentEvent::ToolLimitReached {
                turn_id,
                rounds,
                more,
            } => self
                .questions
                .ask(LimitQuestion::new(turn_id, rounds, more), now),
            AgentEvent::TurnCompleted {
                stop_reason, usage, ..
            } => {
                self.end_thinking(now);
                self.end_turn();
                self.plan_turn_ended(true, now);
                self.status.last_turn_cost = usage.cost_usd;
                // A refusal is told by the agent, with its explanation.
                if let Some(note) = stop_reason
                    .notice()
                    .filter(|_| stop_reason != crate::protocol::StopReason::Refusal)
                {
                    let kind = if stop_reason == crate::protocol::StopReason::MaxTokens {
                        NoticeKind::Warning
                    } else {
                        NoticeKind::Error
                    };
                    self.notice(kind, note);
                }
            }
            AgentEvent::Error {
                kind,
                message,
                turn_id,
            } => {
                if turn_id.is_some() {
                    self.end_thinking(now);
                    self.end_turn();
                    self.plan_turn_ended(false, now);
                }
                match kind {
                    ErrorKind::Interrupted => self.notice(NoticeKind::Info, "interrupted"),
                    // The person said no to more rounds: stopped, as asked.
                    ErrorKind::MaxIterations
                        if turn_id.is_some() && turn_id == self.turn.stopped_at_limit.take() =>
                    {
                        self.notice(
                            NoticeKind::Info,
                            "stopped at the tool-round limit, as you asked; send a message to go on",
                        );
                    }
                    _ => self.notice(NoticeKind::Error, message),
                }
            }
            _ => {}
        }
    }

    /// A tool call's life in the transcript: started, its output, a
    /// guardrail's note, finished.
    fn on_tool_event(&mut self, ev: AgentEvent, now: Instant) {
        match ev {
            AgentEvent::ToolCallStarted {
                call_id,
                tool,
                arguments,
                kind,
                parent,
                ..
            } => {
                self.end_thinking(now);
                self.turn.tool_started.insert(call_id.clone(), now);
                let kind = kind.unwrap_or(crate::protocol::ToolKind::Other);
                let mut cell = ToolCell::new(&call_id, &tool, kind, &arguments);
                cell.nested = parent.is_some();
                cell.parent = parent;
                self.transcript.push_tool(cell);
            }
            AgentEvent::ToolProgress {
                call_id,
                text,
                stream,
                ..
            } => {
                if stream == crate::protocol::NOTIFY_STREAM {
                    self.notice(NoticeKind::Info, format!("🔔 {text}"));
                    // A call-back, for a person who stepped away.
                    self.call_back(&text);
                } else if let Some(t) = self.transcript.tool_mut(&call_id) {
                    t.push_output(&text);
                }
            }
            AgentEvent::GuardrailVerdict { .. } => {}
            AgentEvent::ToolCallFinished {
                call_id,
                status,
                content,
                metadata,
                change,
                summary,
                ..
            } => {
                self.turn.tool_started.remove(&call_id);
                // The person's own version of a file is never lost: a write
                // refused (the file changed meanwhile) keeps it in a file.
                if let Some(content) = self.edits.edits_sent.remove(&call_id)
                    && status != crate::protocol::ToolStatus::Ok
                {
                    let kept = keep_edit(&call_id, &content);
                    self.notice(
                        NoticeKind::Warning,
                        format!("your edited version was not written{kept}"),
                    );
                }
                if let Some(t) = self.transcript.tool_mut(&call_id) {
                    if let Some(output) =
                        crate::components::cells::unstreamed_output(t.kind, &content)
                        && t.printed == 0
                    {
                        t.push_output(&output);
                    }
                    if t.note.is_none() {
                        t.note = crate::components::cells::sandbox_note(&content);
                    }
                    t.elapsed_ms = metadata.duration_ms;
                    t.change = change.map(|c| *c);
                    t.state = ToolState::Done {
                        status,
                        summary: summarize(status, &content, summary.as_ref()),
                        metadata,
                    };
                }
            }
            _ => {}
        }
    }

    /// A call asks for approval, or was answered (here or by a grant).
    fn on_approval_event(&mut self, ev: AgentEvent, now: Instant) {
        match ev {
            AgentEvent::ApprovalRequested(request) => {
                if let Some(t) = self.transcript.tool_mut(&request.call_id) {
                    t.state = ToolState::AwaitingApproval;
                }
                // Drawn from the change itself; text a tool gave instead
                // (a change it cannot show line by line) as it is.
                let view = match (&request.change, &request.diff) {
                    (Some(c), _) => Some(DiffView::from_change(c)),
                    (None, Some(text)) => Some(DiffView::plain(&request.tool, text)),
                    (None, None) => None,
                };
                let diff = view.map(|v| self.prepare_diff(v));
                self.questions
                    .approvals
                    .push(PendingApproval::new(request, diff), now);
            }
            AgentEvent::ApprovalDecided {
                call_id,
                decision,
                source,
                ..
            } => {
                self.questions.approvals.remove(&call_id, now);
                if let Some(t) = self.transcript.tool_mut(&call_id) {
                    t.approval = crate::components::cells::approval_words(&decision, source);
                }
                if !matches!(decision, ApprovalDecision::Deny { .. }) {
                    // The clock of a call starts again when it may run.
                    self.turn.tool_started.insert(call_id.clone(), now);
                    if let Some(t) = self.transcript.tool_mut(&call_id) {
                        t.state = ToolState::Running;
                        t.elapsed_ms = 0;
                    }
                }
            }
            _ => {}
        }
    }

    /// The session's own answers: `/diff`, `/rewind`, `/undo`, what `@path`
    /// attached.
    fn on_session_event(&mut self, ev: AgentEvent) {
        match ev {
            AgentEvent::SessionDiff {
                diff,
                changes,
                cut,
                error,
            } => {
                let is_diff = |o: &Overlay| matches!(o, Overlay::Diff(_));
                if !self.has_overlay(is_diff) {
                    // Closed while it was computed.
                } else if let Some(e) = error {
                    self.overlays.retain(|o| !is_diff(o));
                    self.notice(NoticeKind::Warning, format!("no session diff: {e}"));
                } else if diff.trim().is_empty() {
                    self.overlays.retain(|o| !is_diff(o));
                    self.notice(
                        NoticeKind::Info,
                        "no file of the workspace has changed in this session",
                    );
                } else {
                    // Drawn from the changes, file by file (in git's form,
                    // which `n` and `N` step through); what they leave out
                    // (binary files, links) is said.
                    let mut after = Vec::new();
                    if changes.is_empty() {
                        after.push("only binary files, links or large files changed".to_string());
                    }
                    if cut {
                        after.push("… (cut at 2 MiB)".to_string());
                    }
                    if let Some(o) = self.overlay_mut(is_diff) {
                        *o = Overlay::Diff(Pager::diff(
                            "Changes since the session began (edits outside Lathe too)",
                            &changes,
                            &after,
                        ));
                    }
                }
            }
            AgentEvent::Attachments { files, .. } => self.attached(&files),
            AgentEvent::Turns { turns } => {
                if let Some(Overlay::Rewind(r)) =
                    self.overlay_mut(|o| matches!(o, Overlay::Rewind(_)))
                {
                    r.set(turns);
                }
            }
            AgentEvent::Rewound {
                turn_id,
                files,
                conversation,
                restored,
                removed,
                skipped,
                prompt,
                error,
                ..
            } => {
                self.rewound(
                    turn_id,
                    files,
                    conversation,
                    &restored,
                    &removed,
                    prompt,
                    error,
                );
                if !skipped.is_empty() {
                    self.notice(
                        NoticeKind::Warning,
                        format!(
                            "not put back (in a nested git repository, or over {} MiB and \
                             never kept): {}",
                            crate::session::checkpoints::LARGE_FILE / (1024 * 1024),
                            list(&skipped)
                        ),
                    );
                }
            }
            _ => {}
        }
    }

    /// What `@path` attached (images as the transcript shows them), and
    /// what it could not.
    fn attached(&mut self, files: &[crate::protocol::Attachment]) {
        let name = |f: &crate::protocol::Attachment| {
            crate::protocol::humanize::shorten_chars(&crate::protocol::visible::name(&f.path), 80)
        };
        // Images as the transcript shows them: `[image shot.png 1280×720]`.
        let is_image = |f: &crate::protocol::Attachment| {
            f.attached && f.note.as_deref().is_some_and(|n| n.starts_with("image "))
        };
        for f in files.iter().filter(|f| is_image(f)) {
            let base = std::path::Path::new(&f.path)
                .file_name()
                .map_or_else(|| f.path.clone(), |n| n.to_string_lossy().into_owned());
            let size = f.note.as_deref().unwrap_or("").trim_start_matches("image ");
            self.notice(
                NoticeKind::Info,
                format!(
                    "[image {} {size}]",
                    crate::protocol::humanize::shorten_chars(
                        &crate::protocol::visible::name(&base),
                        60
                    )
                ),
            );
        }
        let attached: Vec<String> = files
            .iter()
            .filter(|f| f.attached && !is_image(f))
            .map(|f| match &f.note {
                Some(n) => {
                    format!(
                        "{} ({}, {n})",
                        name(f),
                        crate::protocol::humanize::bytes(f.bytes)
                    )
                }
                None => format!(
                    "{} ({})",
                    name(f),
                    crate::protocol::humanize::bytes(f.bytes)
                ),
            })
            .collect();
        if !attached.is_empty() {
            self.notice(
                NoticeKind::Info,
                format!("attached {}", attached.join(", ")),
            );
        }
        for f in files.iter().filter(|f| !f.attached) {
            let why = f.note.as_deref().unwrap_or("not attached");
            self.notice(NoticeKind::Warning, format!("@{}: {why}", name(f)));
        }
    }

    /// What the status bar and the views show: the model, MCP servers,
    /// models listed, usage, context, permissions.
    fn on_status_event(&mut self, ev: AgentEvent, now: Instant) {
        match ev {
            AgentEvent::SessionStarted { model, .. } => self.status.model = model,
            AgentEvent::McpServerStatus(status) => {
                let was = self.status.mcp.get(&status.server).map(|s| s.state);
                if status.state == McpState::Failed && was != Some(McpState::Failed) {
                    self.notice(
                        NoticeKind::Warning,
                        format!(
                            "MCP server {} failed: {}",
                            status.server,
                            status.message.as_deref().unwrap_or("no reason given")
                        ),
                    );
                }
                let said = self
                    .status
                    .mcp
                    .get(&status.server)
                    .and_then(|s| s.message.clone());
                // Each step of a login is news (where to open it, then how
                // it went).
                if status.state == McpState::LoggingIn && status.message != said {
                    let message = status.message.as_deref().unwrap_or("logging in…");
                    // The login page's URL, wrapped on screen, goes to the
                    // clipboard whole (for a browser on another machine).
                    let url = message
                        .lines()
                        .last()
                        .map(str::trim)
                        .filter(|l| l.starts_with("https://") || l.starts_with("http://"));
                    let copied = if let Some(url) = url {
                        self.bus.request(Request::Clipboard(url.to_string()));
                        " (the URL is on your clipboard)"
                    } else {
                        ""
                    };
                    self.notice(
                        NoticeKind::Info,
                        format!("MCP server {}: {message}{copied}", status.server),
                    );
                }
                if was == Some(McpState::LoggingIn) && status.state == McpState::Starting {
                    self.notice(
                        NoticeKind::Info,
                        format!(
                            "MCP server {}: logged in; starting it again…",
                            status.server
                        ),
                    );
                }
                if status.state == McpState::NeedsLogin
                    && (was != Some(McpState::NeedsLogin) || status.message != said)
                {
                    self.notice(
                        NoticeKind::Warning,
                        format!(
                            "MCP server {} {}",
                            status.server,
                            status.message.as_deref().unwrap_or("needs a login")
                        ),
                    );
                }
                self.status.mcp.insert(status.server.clone(), status);
                let (prompts, resources) = mcp_offers(&self.status.mcp);
                self.composer.set_mcp(prompts, resources);
            }
            AgentEvent::Models { models, error } => {
                self.status.models = match (models, error) {
                    (Some(list), _) => {
                        self.composer.set_models(list.clone());
                        Models::Known(list)
                    }
                    (None, Some(e)) => Models::Unavailable(e),
                    (None, None) => Models::Unavailable("the server lists no models".into()),
                };
                if let Some(m) = self.status.pending_model.take() {
                    self.switch_model(m);
                }
            }
            AgentEvent::UsageUpdated {
                total,
                last,
                task,
                turn_id,
                ..
            } => self.status.counted(turn_id, last, total, task.is_some()),
            AgentEvent::Cost {
                models,
                total,
                by_agent,
            } => self.notice(NoticeKind::Info, cost_report(&models, &total, &by_agent)),
            AgentEvent::ContextUpdated { tokens, window } => {
                self.status.context = Some((tokens, window))
            }
            AgentEvent::Permissions {
                approval,
                rules,
                grants,
                hooks,
            } => {
                self.status.approval = approval;
                if let Some(Overlay::Permissions(view)) =
                    self.overlay_mut(|o| matches!(o, Overlay::Permissions(_)))
                {
                    view.set(
                        PermissionsData {
                            approval,
                            rules,
                            grants,
                            hooks,
                        },
                        now,
                    );
                }
            }
            _ => {}
        }
    }
}

/// `/cost`: what each model used and cost, and the whole; and by agent
/// when another than the main one spent (a subagent, the judge).
pub(super) fn cost_report(
    models: &[crate::protocol::ModelUsage],
    total: &Usage,
    by_agent: &[crate::protocol::budget::AgentSpend],
) -> String {
    use crate::components::status_bar::dollars;
    if models.is_empty() {
        return "nothing spent yet in this session".into();
    }
    let k = |n: u64| crate::protocol::humanize::count(n);
    let line = |name: &str, u: &Usage| {
        let cost = u
            .cost_usd
            .map_or_else(|| "price unknown".to_string(), dollars);
        let mut l = format!(
            "{name}: {cost} · {} in ({} from cache, {:.0}% hit",
            k(u.input_tokens),
            k(u.cache_read_tokens),
            u.cache_hit_share() * 100.0
        );
        if u.cache_write_tokens > 0 {
            l.push_str(&format!(", {} written", k(u.cache_write_tokens)));
        }
        l.push_str(&format!(") · {} out", k(u.output_tokens)));
        if u.reasoning_tokens > 0 {
            l.push_str(&format!(" ({} thinking)", k(u.reasoning_tokens)));
        }
        l
    };
    let mut out = String::from("cost of this session\n");
    for m in models {
        out.push_str(&line(&m.model, &m.usage));
        out.push('\n');
    }
    if models.len() > 1 {
        out.push_str(&line("total", total));
    } else {
        out.pop();
    }
    if by_agent
        .iter()
        .any(|s| s.agent != crate::protocol::budget::Agent::Main)
    {
        out.push_str("\nby agent");
        for s in by_agent {
            out.push('\n');
            out.push_str(&line(&format!("{} · {}", s.who(), s.model), &s.usage));
        }
    }
    if total.cost_usd.is_none() {
        out.push_str(
            "\nno price is known for this model: set one under [models.\"NAME\"] price in your \
             config",
        );
    }
    out
}

/// The servers' prompts for the slash popup (`/server:prompt`, what it is
/// and takes) and their resources for `@` (`server:uri`).
fn mcp_offers(
    servers: &std::collections::BTreeMap<String, crate::protocol::McpStatus>,
) -> (Vec<(String, String)>, Vec<String>) {
    let mut prompts = Vec::new();
    let mut resources = Vec::new();
    for (name, s) in servers {
        for p in &s.prompts {
            let takes: Vec<String> = p
                .arguments
                .iter()
                .map(|a| {
                    let n = a.name.to_uppercase();
                    if a.required { n } else { format!("[{n}]") }
                })
                .collect();
            let about = match (p.description.is_empty(), takes.is_empty()) {
                (true, true) => format!("prompt of {name}"),
                (true, false) => takes.join(" "),
                (false, true) => p.description.clone(),
                (false, false) => format!("{} · {}", p.description, takes.join(" ")),
            };
            prompts.push((format!("/{name}:{}", p.name), about));
        }
        resources.extend(s.resources.iter().map(|r| format!("{name}:{}", r.uri)));
    }
    (prompts, resources)
}
