//! `lathe exec`: one prompt, headless, for scripts and CI.
//!
//! Wires the agent with the headless approver (in `ask` mode, calls that
//! need approval are denied and the model is told why), prints events as
//! they come, and maps the turn's end to an exit status: 0 when the turn
//! completes, 1 when it fails, 130 when interrupted (Ctrl-C or SIGTERM).
//! With `--json`, every event is one JSON line on stdout; without it, the
//! final answer goes to stdout and progress to stderr.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::Arc;

use serde_json::Value;

use crate::config::Config;
use crate::launch::{LaunchError, spawn_agent};
use crate::policy::HeadlessApprover;
use crate::protocol::{AgentEvent, Effect, ErrorKind, Op, ToolStatus};
use crate::say::say;

/// Exit status of a completed turn.
pub const EXIT_OK: i32 = 0;
/// Exit status of a failed turn.
pub const EXIT_FAILED: i32 = 1;
/// Exit status of bad usage or configuration.
pub const EXIT_USAGE: i32 = 2;
/// Exit status of a turn stopped at a budget cap (`stop_reason: "budget"`).
pub const EXIT_BUDGET: i32 = 3;
/// Exit status of a turn stopped because the model repeated a call
/// (`stop_reason: "loop"`).
pub const EXIT_LOOP: i32 = 4;
/// Exit status after an interrupt (128 + SIGINT).
pub const EXIT_INTERRUPTED: i32 = 130;

pub struct ExecOptions {
    pub json: bool,
    pub prompt: String,
    /// Run the workspace's hooks even if the person never trusted them.
    pub trust_workspace_hooks: bool,
    /// Start the workspace's MCP servers even if never trusted.
    pub trust_workspace_mcp: bool,
    pub trust_workspace_mcp_env: Vec<String>,
    /// Offer the workspace's skills even if never trusted.
    pub trust_workspace_skills: bool,
    /// Offer the workspace's subagent types even if never trusted.
    pub trust_workspace_agents: bool,
    /// Go on with this session (already resolved from `--continue`).
    pub resume: Option<String>,
    /// `--image FILE`: absolute paths.
    pub images: Vec<std::path::PathBuf>,
    /// `--deny-exit-code N`: the status when a call was denied.
    pub deny_exit_code: Option<i32>,
    /// `--plan`: a turn in plan mode.
    pub plan: bool,
}

/// The most piped input sent along with a prompt.
pub const MAX_PIPED_INPUT: u64 = 1024 * 1024;

/// A prompt with piped input after it, in a fenced block (a fence longer
/// than any run of backticks inside); nothing added for empty input.
pub fn prompt_with_input(prompt: &str, piped: &[u8]) -> String {
    let cut = piped.len() as u64 > MAX_PIPED_INPUT;
    let piped = &piped[..piped
        .len()
        .min(usize::try_from(MAX_PIPED_INPUT).unwrap_or(usize::MAX))];
    let text = String::from_utf8_lossy(piped);
    let text = text.trim_end_matches(['\n', '\r']);
    if text.trim().is_empty() {
        return prompt.to_string();
    }
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let note = if cut {
        format!("\n(the piped input was cut at {MAX_PIPED_INPUT} bytes)")
    } else {
        String::new()
    };
    format!("{prompt}\n\n{fence}\n{text}\n{fence}{note}")
}

/// Runs one turn; returns the exit status.
pub async fn run(config: &Config, opts: ExecOptions) -> Result<i32, LaunchError> {
    // No model named: the server's only one, else the person must say.
    let chosen;
    let choice = match crate::launch::choose_model(config).await {
        Err(LaunchError::Unreachable(why)) => {
            say!("error: {why}");
            return Ok(EXIT_FAILED);
        }
        other => other?,
    };
    let config = match choice {
        crate::launch::ModelChoice::Chosen(m) if m == config.model => config,
        crate::launch::ModelChoice::Chosen(m) => {
            say!("lathe: using {m}, the model the server serves");
            chosen = Config {
                model: m,
                ..config.clone()
            };
            &chosen
        }
        crate::launch::ModelChoice::Unlisted(why) => {
            say!("lathe: warning: {why}");
            chosen = Config {
                model: crate::launch::UNNAMED.to_string(),
                ..config.clone()
            };
            &chosen
        }
        crate::launch::ModelChoice::Several(models) => {
            let shown: Vec<&str> = models.iter().take(12).map(String::as_str).collect();
            let more = models.len().saturating_sub(shown.len());
            return Err(LaunchError::Usage(format!(
                "the server at {} serves {} models; choose one with --model: {}{}",
                config.base_url,
                models.len(),
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )));
        }
    };
    // Listening starts before the agent does: a signal that comes while an
    // event is printed, or before the first one, waits in its stream.
    let mut interrupts = Interrupts::new();
    let launched = spawn_agent(
        config,
        Some(Arc::new(HeadlessApprover)),
        crate::launch::Trust {
            hooks: opts.trust_workspace_hooks,
            mcp: opts.trust_workspace_mcp,
            mcp_env: opts.trust_workspace_mcp_env.clone(),
            skills: opts.trust_workspace_skills,
            agents: opts.trust_workspace_agents,
            resume: opts.resume.clone(),
            ..Default::default()
        },
    )?;
    say_what_waits(&launched, opts.trust_workspace_mcp);
    let mut handle = launched.handle;
    if !opts.images.is_empty() {
        let _ = handle
            .ops
            .send(Op::AttachImages {
                paths: opts.images.clone(),
            })
            .await;
    }
    if handle
        .ops
        .send(if opts.plan {
            Op::Plan { text: opts.prompt }
        } else {
            Op::UserInput { text: opts.prompt }
        })
        .await
        .is_err()
    {
        return Err(LaunchError::Setup(
            "the agent stopped before it started".into(),
        ));
    }
    let mut printer = Printer::new(opts.json);
    let code = loop {
        tokio::select! {
            ev = handle.events.recv() => {
                let Some(ev) = ev else { break EXIT_FAILED };
                printer.print(&ev);
                if let Some(code) = exit_code(&ev) {
                    break match (&ev, opts.deny_exit_code) {
                        (AgentEvent::TurnCompleted { denied, .. }, Some(n)) if !denied.is_empty() => n,
                        _ => code,
                    };
                }
            }
            () = interrupts.next() => {
                if interrupts.count > 1 {
                    say!("lathe: interrupted twice; exiting now");
                    break EXIT_INTERRUPTED;
                }
                say!("lathe: interrupting (press Ctrl-C again to exit at once)");
                let _ = handle.ops.send(Op::Interrupt).await;
            }
        }
    };
    printer.finish();
    let _ = handle.ops.send(Op::Shutdown).await;
    drop(handle.ops);
    // Give the agent a moment to finish killing tools and writing the journal.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(3), handle.task).await;
    Ok(code)
}

/// What the launch warned of, and the workspace's hooks and MCP servers
/// that wait for the person's trust (or run, trusted), on stderr.
fn say_what_waits(launched: &crate::launch::Launched, mcp_flag: bool) {
    for w in &launched.warnings {
        say!("lathe: warning: {w}");
    }
    if !launched.untrusted_hooks.is_empty() {
        say!(
            "lathe: warning: the workspace's hooks do not run until you trust them \
             (run `lathe` here once and answer y, or pass --trust-workspace-hooks): {}",
            launched.untrusted_hooks.describe().join("; ")
        );
    }
    // With the flag, the launch said why each held server did not start.
    if !launched.untrusted_mcp.is_empty() && !mcp_flag {
        say!(
            "lathe: warning: the workspace's MCP servers do not start until you trust them \
             (run `lathe` here once and answer y, or pass --trust-workspace-mcp): {}",
            launched
                .untrusted_mcp
                .iter()
                .map(|s| crate::protocol::visible::command(&s.describe()).replace('\n', "; "))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if !launched.skills.untrusted.is_empty() {
        say!(
            "lathe: warning: the workspace's skills are not offered until you trust them \
             (run `lathe` here once and answer y, or pass --trust-workspace-skills): {}",
            launched
                .skills
                .untrusted
                .iter()
                .map(|s| crate::protocol::visible::name(&s.dir.display().to_string()).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !launched.agents.untrusted.is_empty() {
        say!(
            "lathe: warning: the workspace's subagent types are not offered until you trust \
             them (run `lathe` here once and answer y, or pass --trust-workspace-agents): {}",
            launched
                .agents
                .untrusted
                .iter()
                .map(|a| crate::protocol::visible::name(&a.file.display().to_string()).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for s in &launched.trusted_workspace_mcp {
        say!(
            "lathe: the workspace's MCP server {}",
            crate::protocol::visible::command(&s.describe()).replace('\n', "; ")
        );
    }
}

/// The exit status an event implies, if it ends the turn.
fn exit_code(ev: &AgentEvent) -> Option<i32> {
    match ev {
        AgentEvent::TurnCompleted { stop_reason, .. } => Some(match stop_reason {
            crate::protocol::StopReason::Budget => EXIT_BUDGET,
            crate::protocol::StopReason::Loop => EXIT_LOOP,
            _ => EXIT_OK,
        }),
        AgentEvent::Error {
            turn_id: Some(_),
            kind,
            ..
        } => Some(if *kind == ErrorKind::Interrupted {
            EXIT_INTERRUPTED
        } else {
            EXIT_FAILED
        }),
        _ => None,
    }
}

/// Ctrl-C, SIGTERM and SIGHUP (the terminal went away), counted: each
/// interrupts the turn, so commands are killed and what they left swept.
///
/// The streams live as long as the run: a signal that arrives while no
/// one is waiting (an event being printed) is kept for the next wait.
/// (A `ctrl_c()` future made afresh for each wait lost such a signal.)
struct Interrupts {
    count: u32,
    signals: Vec<tokio::signal::unix::Signal>,
}

impl Interrupts {
    fn new() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        let signals = [
            SignalKind::interrupt(),
            SignalKind::terminate(),
            SignalKind::hangup(),
        ]
        .into_iter()
        .filter_map(|k| signal(k).ok())
        .collect();
        Self { count: 0, signals }
    }

    async fn next(&mut self) {
        if self.signals.is_empty() {
            std::future::pending::<()>().await;
        }
        let waits = self.signals.iter_mut().map(|s| Box::pin(s.recv()));
        futures_util::future::select_all(waits).await;
        self.count += 1;
    }
}

/// Prints events: JSON lines, or text for people.
struct Printer {
    json: bool,
    color: bool,
    /// Assistant text not yet known to be final.
    pending: Option<String>,
    /// The effect of each call that asked for approval, by call id.
    asked: HashMap<String, Effect>,
    /// The calls the turn denied, as `turn_completed` says.
    denied: Vec<crate::protocol::Denial>,
    /// What the model would have asked the person.
    questions: Vec<crate::protocol::AskedQuestion>,
    /// The approval mode of the run.
    mode: Option<crate::protocol::ApprovalMode>,
    /// Reasoning is streaming to stderr (a line break ends it).
    thinking: bool,
}

impl Printer {
    fn new(json: bool) -> Self {
        let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        Self {
            json,
            color,
            pending: None,
            asked: HashMap::new(),
            denied: Vec::new(),
            questions: Vec::new(),
            mode: None,
            thinking: false,
        }
    }

    /// After the turn: what it could not do, a line per call, and how to
    /// allow it in the mode in use.
    fn finish(&self) {
        if self.json {
            return;
        }
        self.unasked();
        if self.denied.is_empty() {
            return;
        }
        let n = self.denied.len();
        let mut text = format!(
            "lathe: {n} {} denied, so the answer above did without {}:\n",
            if n == 1 { "call was" } else { "calls were" },
            if n == 1 { "it" } else { "them" },
        );
        for d in &self.denied {
            let why = if d.needed.is_empty() {
                d.reason.clone()
            } else {
                format!(
                    "{} (needed approval, which headless mode cannot give)",
                    d.needed.join("; ")
                )
            };
            text.push_str(&format!("  • {}: {}\n", d.tool, terminal_safe(&why)));
        }
        if let Some(advice) = self.advice() {
            text.push_str(&advice);
            text.push('\n');
        }
        self.err(&text);
    }

    /// The questions no one was there to answer: the model decided itself.
    fn unasked(&self) {
        let open: Vec<&crate::protocol::AskedQuestion> = self
            .questions
            .iter()
            .filter(|q| q.answer.is_none())
            .collect();
        if open.is_empty() {
            return;
        }
        let n = open.len();
        let mut text = format!(
            "lathe: the model asked {} with no one here to answer, so it decided {}:\n",
            if n == 1 {
                "a question".to_string()
            } else {
                format!("{n} questions")
            },
            if n == 1 { "itself" } else { "each itself" },
        );
        for q in open {
            let one_line = q.question.replace('\n', " ");
            text.push_str(&format!("  • {}\n", terminal_safe(&one_line)));
        }
        self.err(&text);
    }

    /// How to allow what asked, in the mode in use (nothing for what a
    /// rule or a guardrail refused: that is the person's config).
    fn advice(&self) -> Option<String> {
        use crate::protocol::ApprovalMode;
        let asked: Vec<&crate::protocol::Denial> = self
            .denied
            .iter()
            .filter(|d| !d.needed.is_empty())
            .collect();
        if asked.is_empty() {
            return None;
        }
        let writes_only = asked
            .iter()
            .all(|d| self.asked.get(&d.call_id) == Some(&Effect::Write));
        let rules =
            "add allow rules to [permissions] in your config (allow = [\"exec_shell(make*)\"])";
        Some(match self.mode {
            Some(ApprovalMode::FullAuto) => {
                "These ask in every mode (a command outside the sandbox, \
                 a protected file, a rule that asks): run `lathe` here to approve them yourself."
                    .to_string()
            }
            Some(ApprovalMode::AutoEdit) => format!(
                "To allow them, {rules}, or rerun with --approval full-auto (commands too; the \
                 denylist still holds)."
            ),
            _ if writes_only => {
                format!("To allow them, {rules}, or rerun with --approval auto-edit (file edits).")
            }
            _ => format!(
                "To allow them, {rules}, or rerun with --approval auto-edit (file edits) or \
                 full-auto (commands too; the denylist still holds)."
            ),
        })
    }

    fn print(&mut self, ev: &AgentEvent) {
        if self.json {
            if let Ok(line) = serde_json::to_string(ev) {
                let mut out = std::io::stdout().lock();
                // A closed stdout (`| head`) must not kill the run.
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
            return;
        }
        match ev {
            AgentEvent::SessionStarted { approval, .. } => self.mode = Some(*approval),
            AgentEvent::ApprovalRequested(request) => {
                self.asked.insert(request.call_id.clone(), request.effect);
            }
            AgentEvent::TurnCompleted {
                denied, questions, ..
            } => {
                self.denied.clone_from(denied);
                self.questions.clone_from(questions);
            }
            _ => {}
        }
        // What the model thinks streams to stderr, dimmed, as it comes.
        if let AgentEvent::ReasoningDelta { text, .. } = ev {
            let text = terminal_safe(text);
            let text = if self.thinking {
                text
            } else {
                self.thinking = true;
                format!("thinking: {}", text.trim_start())
            };
            let text = if self.color {
                format!("\x1b[2;3m{text}\x1b[0m")
            } else {
                text
            };
            self.err(&text);
            return;
        }
        if self.thinking {
            self.thinking = false;
            self.err("\n");
        }
        match ev {
            AgentEvent::AssistantMessage { text, .. } => self.pending = Some(text.clone()),
            AgentEvent::TurnCompleted {
                text,
                stop_reason,
                usage,
                ..
            } => {
                self.pending = None;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", terminal_safe(text.trim_end()));
                let _ = out.flush();
                // A refusal was told already, with its explanation.
                if let Some(note) = stop_reason
                    .notice()
                    .filter(|_| *stop_reason != crate::protocol::StopReason::Refusal)
                {
                    self.err(&format!("lathe: {note} (stop reason: {stop_reason})\n"));
                }
                self.err(&format!("lathe: {}\n", usage_line(usage)));
            }
            other => {
                if let Some(text) = self.pending.take()
                    && matches!(other, AgentEvent::ToolCallStarted { .. })
                {
                    self.err(&format!("{}\n", terminal_safe(text.trim_end())));
                }
                if let Some(line) = human_line(other).map(|l| terminal_safe(&l)) {
                    let line = if self.color {
                        colorize(other, &line)
                    } else {
                        line
                    };
                    self.err(&line);
                }
            }
        }
    }

    fn err(&self, text: &str) {
        let mut e = std::io::stderr().lock();
        let _ = e.write_all(text.as_bytes());
        let _ = e.flush();
    }
}

/// A turn's tokens and cost on one line: `12.3k in (10.1k from cache) ·
/// 512 out · $0.012`.
fn usage_line(u: &crate::protocol::Usage) -> String {
    let k = crate::protocol::humanize::count;
    let mut line = format!("{} in", k(u.input_tokens));
    if u.cache_read_tokens > 0 {
        line.push_str(&format!(" ({} from cache)", k(u.cache_read_tokens)));
    }
    line.push_str(&format!(" · {} out", k(u.output_tokens)));
    if u.reasoning_tokens > 0 {
        line.push_str(&format!(" ({} thinking)", k(u.reasoning_tokens)));
    }
    if let Some(c) = u.cost_usd {
        line.push_str(&format!(" · ${c:.4}"));
    }
    line
}

/// Text from the model or a tool as plain text: escape sequences (titles,
/// screen clears, OSC 52 clipboard writes, colours) and other control
/// characters are dropped, so nothing they say can drive the terminal.
fn terminal_safe(text: &str) -> String {
    anstream::adapter::strip_str(text)
        .to_string()
        .chars()
        .filter(|&c| c == '\n' || c == '\t' || !c.is_control())
        .collect()
}

fn colorize(ev: &AgentEvent, line: &str) -> String {
    let code = match ev {
        AgentEvent::ToolCallFinished { status, .. } => match status {
            ToolStatus::Ok => "32",
            ToolStatus::Error => "31",
            ToolStatus::Denied => "33",
        },
        AgentEvent::Error { .. } => "1;31",
        AgentEvent::ToolCallStarted { .. } => "1",
        _ => "2",
    };
    format!("\x1b[{code}m{}\x1b[0m\n", line.trim_end_matches('\n'))
}

/// A cap reached, and what raises it.
fn budget_line(ev: &AgentEvent) -> String {
    let AgentEvent::BudgetReached {
        cap,
        spent,
        limit,
        next,
        ..
    } = ev
    else {
        return String::new();
    };
    let standing = crate::protocol::budget::Standing {
        cap: *cap,
        spent: *spent,
        limit: *limit,
        next: *next,
    };
    format!(
        "lathe: {standing}; the turn stopped before its next request ({} raises it)\n",
        cap.setting()
    )
}

fn human_line(ev: &AgentEvent) -> Option<String> {
    Some(match ev {
        AgentEvent::SessionStarted {
            version,
            provider,
            model,
            workspace,
            approval,
            ..
        } => format!(
            "lathe {version} · {provider} {model} · {} · approval {approval}\n",
            workspace.display()
        ),
        AgentEvent::ToolCallStarted {
            tool, arguments, ..
        } => format!(
            "▸ {tool} {}\n",
            crate::protocol::humanize::key_argument(arguments, 120)
        )
        .replace(" \n", "\n"),
        AgentEvent::Attachments { files, .. } => attachment_lines(files),
        AgentEvent::LoopDetected {
            tool,
            arguments,
            count,
            failing,
            task,
            ..
        } => format!(
            "lathe: {} {tool} {} {count} times{}; {}\n",
            if task.is_some() {
                "a subagent made"
            } else {
                "the model made"
            },
            crate::protocol::humanize::key_argument(arguments, 120),
            if *failing {
                " in a row, failing the same way"
            } else {
                ""
            },
            if task.is_some() {
                "the subagent was stopped"
            } else {
                "the turn stopped ([limits] repeat_calls)"
            }
        ),
        AgentEvent::BudgetReached { .. } => budget_line(ev),
        AgentEvent::PlanUpdated { steps, .. } => {
            let mut text = "plan:\n".to_string();
            for s in steps {
                let mark = match s.status {
                    crate::protocol::StepStatus::Done => "✓",
                    crate::protocol::StepStatus::InProgress => "▸",
                    crate::protocol::StepStatus::Pending => "○",
                };
                text.push_str(&format!("  {mark} {}\n", s.step));
            }
            text
        }
        AgentEvent::ToolProgress { text, stream, .. }
            if stream == crate::protocol::NOTIFY_STREAM =>
        {
            format!("lathe: message: {text}\n")
        }
        AgentEvent::ToolProgress { text, .. } => text
            .lines()
            .map(|l| format!("  │ {l}\n"))
            .collect::<String>(),
        AgentEvent::ToolCallFinished {
            tool,
            status,
            content,
            metadata,
            ..
        } => finished_line(tool, *status, content, metadata),
        AgentEvent::ProviderRetry {
            attempt,
            max_retries,
            delay_ms,
            reason,
            ..
        } => format!(
            "  ↻ retry {attempt}/{max_retries} in {:.1} s: {reason}\n",
            *delay_ms as f64 / 1000.0
        ),
        AgentEvent::Error { message, .. } => format!("error: {message}\n"),
        AgentEvent::ContextCompacted {
            reason,
            before_tokens,
            after_tokens,
            summarized,
            ..
        } => format!(
            "  ⇣ context compacted ({reason}): {summarized} older messages summarized, about \
             {before_tokens} → {after_tokens} tokens\n"
        ),
        AgentEvent::McpServerStatus(s) => match s.state {
            crate::protocol::McpState::Starting => format!("  mcp {} starting…\n", s.server),
            crate::protocol::McpState::Ready => {
                format!("  mcp {} ready ({} tools)\n", s.server, s.tools.len())
            }
            crate::protocol::McpState::Failed => format!(
                "  ⚠ mcp {} failed: {}\n",
                s.server,
                s.message.as_deref().unwrap_or("no reason given")
            ),
            crate::protocol::McpState::NeedsLogin => format!(
                "  ⚠ mcp {} {}\n",
                s.server,
                s.message.as_deref().unwrap_or("needs a login")
            ),
            _ => return None,
        },
        _ => return None,
    })
}

/// What `@path` attached, and what it could not.
fn attachment_lines(files: &[crate::protocol::Attachment]) -> String {
    files
        .iter()
        .map(|f| {
            // `@name` as mentioned; a file named by its own path as it is.
            let at = if f.path.starts_with('/') { "" } else { "@" };
            match (f.attached, &f.note) {
                (true, Some(n)) => format!("{at}{} attached ({n})\n", f.path),
                (true, None) => format!("{at}{} attached\n", f.path),
                (false, n) => format!(
                    "lathe: {at}{}: {}\n",
                    f.path,
                    n.as_deref().unwrap_or("not attached")
                ),
            }
        })
        .collect()
}

/// A call's end: its mark, and how it went (an exit code, the time, the
/// size, or the error).
fn finished_line(
    tool: &str,
    status: ToolStatus,
    content: &Value,
    metadata: &crate::protocol::ResultMetadata,
) -> String {
    let detail = match status {
        ToolStatus::Ok => {
            let mut d = format!(
                "ok · {} · {}",
                crate::protocol::humanize::duration_ms(metadata.duration_ms),
                crate::protocol::humanize::bytes(metadata.bytes)
            );
            if let Some(code) = content.get("exit_code").and_then(Value::as_i64) {
                d = format!("exit {code} · {d}");
            }
            if metadata.truncated {
                d.push_str(" · truncated");
            }
            d
        }
        ToolStatus::Error | ToolStatus::Denied => {
            let word = if status == ToolStatus::Error {
                "error"
            } else {
                "denied"
            };
            let msg = content
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("failed");
            format!("{word}: {}", crate::protocol::text::shorten(msg, 300))
        }
    };
    let failed_exit = content
        .get("exit_code")
        .and_then(Value::as_i64)
        .is_some_and(|c| c != 0);
    let mark = match status {
        ToolStatus::Ok if failed_exit => "✗",
        ToolStatus::Ok => "✓",
        ToolStatus::Error => "✗",
        ToolStatus::Denied => "⊘",
    };
    format!("  {mark} {tool} {detail}\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::ResultMetadata;

    /// A Ctrl-C that comes while no one waits (an event being printed) is
    /// kept for the next wait, not lost: `lathe exec` always ends on it.
    #[tokio::test]
    async fn an_interrupt_between_waits_is_not_lost() {
        let mut interrupts = Interrupts::new();
        nix::sys::signal::raise(nix::sys::signal::Signal::SIGINT).unwrap();
        tokio::task::yield_now().await;
        tokio::time::timeout(std::time::Duration::from_secs(10), interrupts.next())
            .await
            .expect("the interrupt was lost");
        assert_eq!(interrupts.count, 1);
    }

    /// What a model or a command prints cannot set the title, clear the
    /// screen or write the clipboard of the terminal `lathe exec` runs in.
    #[test]
    fn text_output_drops_terminal_control() {
        for hostile in [
            "\x1b]0;pwned\x07title",
            "\x1b[2J\x1b[Hclear",
            "\x1b]52;c;cHduZWQ=\x07clipboard",
            "\x1b[31mred\x1b[0m",
            "bell\x07 and \x1b[?1049h alt screen\r",
        ] {
            let out = terminal_safe(hostile);
            assert!(
                !out.contains('\x1b') && !out.contains('\x07') && !out.contains('\r'),
                "{out:?}"
            );
        }
        assert_eq!(terminal_safe("a\tb\nc"), "a\tb\nc");
        assert_eq!(terminal_safe("\x1b[31mred\x1b[0m"), "red");
    }

    #[test]
    fn human_lines_show_the_key_argument_and_the_outcome() {
        let started = AgentEvent::ToolCallStarted {
            kind: None,
            turn_id: 1,
            call_id: "c".into(),
            tool: "exec_shell".into(),
            arguments: json!({"command": "cargo test\n--all"}),
            effect: None,
            parent: None,
        };
        assert_eq!(
            human_line(&started).unwrap(),
            "▸ exec_shell cargo test ⏎ --all\n"
        );
        let done = AgentEvent::ToolCallFinished {
            call_id: "c".into(),
            tool: "exec_shell".into(),
            status: ToolStatus::Ok,
            exit_code: None,
            content: json!({"exit_code": 0}),
            metadata: ResultMetadata {
                bytes: 10,
                duration_ms: 5,
                ..ResultMetadata::default()
            },
            diff: None,
            change: None,
            summary: Some(lathe_core::protocol::Summary::Exited { code: 0 }),
        };
        assert_eq!(
            human_line(&done).unwrap(),
            "  ✓ exec_shell exit 0 · ok · 5 ms · 10 B\n"
        );
        let denied = AgentEvent::ToolCallFinished {
            call_id: "c".into(),
            tool: "write_file".into(),
            status: ToolStatus::Denied,
            exit_code: None,
            content: json!({"error": "permission denied: no"}),
            metadata: ResultMetadata::default(),
            diff: None,
            change: None,
            summary: None,
        };
        assert_eq!(
            human_line(&denied).unwrap(),
            "  ⊘ write_file denied: permission denied: no\n"
        );
    }

    #[test]
    fn turn_ends_map_to_exit_codes() {
        let err = |kind| AgentEvent::Error {
            turn_id: Some(1),
            kind,
            message: String::new(),
        };
        assert_eq!(exit_code(&err(ErrorKind::MaxIterations)), Some(EXIT_FAILED));
        assert_eq!(
            exit_code(&err(ErrorKind::Interrupted)),
            Some(EXIT_INTERRUPTED)
        );
        let done = AgentEvent::TurnCompleted {
            stop_reason: Default::default(),
            model: String::new(),
            turn_id: 1,
            text: String::new(),
            iterations: 0,
            usage: crate::protocol::Usage::default(),
            denied: Vec::new(),
            questions: Vec::new(),
            by_agent: vec![],
        };
        assert_eq!(exit_code(&done), Some(EXIT_OK));
    }
}
