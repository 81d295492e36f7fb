//! `lathe acp`: Lathe as an Agent Client Protocol agent over stdio, for
//! editors (Zed, JetBrains, Neovim, Emacs). The third front end on
//! `lathe_core::front`, beside the terminal UI and `lathe exec`: the same
//! engine, pipeline, rules, sandbox, hooks and session record; approvals
//! become `session/request_permission`, the approval modes become session
//! modes. Stdout carries protocol messages only; logs go to the log file.
//!
//! The connection's handlers only hand each message on to [`Server`],
//! which runs beside the dispatch loop: a turn never blocks the reading
//! of a cancel or of the editor's answers.

mod commands;
mod editor;
mod map;
mod session;
mod transport;
mod trust;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    self as acp, AgentCapabilities, CancelNotification, ClientCapabilities, Implementation,
    InitializeRequest, InitializeResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    PromptResponse, SessionUpdate, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Error};
use tokio::sync::mpsc;

use crate::config::Overrides;
use crate::launch;
use crate::protocol::{ApprovalMode, Op};
use session::{Link, Turn};

/// A message from the editor, handed from the dispatch loop to the
/// server.
enum Incoming {
    /// The editor's capabilities (`initialize`, answered in the
    /// dispatch loop: nothing else may come before its answer).
    Initialized(ClientCapabilities),
    NewSession(NewSessionRequest, Responder<NewSessionResponse>),
    LoadSession(LoadSessionRequest, Responder<LoadSessionResponse>),
    Prompt(PromptRequest, Responder<PromptResponse>),
    SetMode(SetSessionModeRequest, Responder<SetSessionModeResponse>),
    Cancel(CancelNotification),
}

/// Serves one editor on stdin/stdout until it closes the connection.
pub async fn serve(base: Overrides) -> Result<(), Error> {
    let (tx, rx) = mpsc::unbounded_channel::<Incoming>();
    let (t1, t2, t3, t4, t5, t6) = (
        tx.clone(),
        tx.clone(),
        tx.clone(),
        tx.clone(),
        tx.clone(),
        tx,
    );
    let (lines, writer) = transport::stdio();
    let served = Agent
        .v1()
        .name("lathe")
        .on_receive_request(
            async move |r: InitializeRequest, responder, _cx| {
                let _ = t1.send(Incoming::Initialized(r.client_capabilities.clone()));
                responder.respond(initialized(&r))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: NewSessionRequest, responder, _cx| {
                let _ = t2.send(Incoming::NewSession(r, responder));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: LoadSessionRequest, responder, _cx| {
                let _ = t3.send(Incoming::LoadSession(r, responder));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: PromptRequest, responder, _cx| {
                let _ = t4.send(Incoming::Prompt(r, responder));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: SetSessionModeRequest, responder, _cx| {
                let _ = t5.send(Incoming::SetMode(r, responder));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx| {
                let _ = t6.send(Incoming::Cancel(n));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(lines, async move |cx| {
            let mut server = Server {
                cx: cx.clone(),
                base,
                caps: Arc::new(ClientCapabilities::default()),
                sessions: HashMap::new(),
            };
            server.run(rx).await;
            Ok(())
        })
        .await;
    // Every message written before Lathe ends (an editor that stopped
    // reading holds it up 2 s at most).
    let written = tokio::task::spawn_blocking(move || writer.join());
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), written).await;
    let _ = std::fs::remove_dir_all(images_dir());
    served
}

/// A session the editor opened.
struct Live {
    link: Link,
    mode: ApprovalMode,
    agent: tokio::task::JoinHandle<()>,
    /// What of the workspace waits for the person's trust (`/trust`).
    waiting: Arc<Mutex<Option<trust::Waiting>>>,
    /// What the session's start warned of, said with the first prompt
    /// (an editor shows nothing before one).
    notes: Vec<String>,
    /// The first prompt said what waits.
    told: bool,
}

struct Server {
    cx: ConnectionTo<Client>,
    base: Overrides,
    caps: Arc<ClientCapabilities>,
    sessions: HashMap<String, Live>,
}

impl Server {
    async fn run(&mut self, mut rx: mpsc::UnboundedReceiver<Incoming>) {
        loop {
            let msg = tokio::select! {
                m = rx.recv() => m,
                () = self.cx.incoming_closed() => None,
            };
            let Some(msg) = msg else { break };
            self.handle(msg).await;
        }
        // The editor went away: every session's work stops, its record
        // kept.
        for (_, live) in self.sessions.drain() {
            let _ = live.link.ops.send(Op::Interrupt).await;
            let _ = live.link.ops.send(Op::Shutdown).await;
            let _ = tokio::time::timeout(std::time::Duration::from_secs(3), live.agent).await;
        }
    }

    async fn handle(&mut self, msg: Incoming) {
        match msg {
            Incoming::Initialized(caps) => self.caps = Arc::new(caps),
            Incoming::NewSession(req, r) => match self.open(&req.cwd, &req.mcp_servers, None).await
            {
                Ok((id, mode, _)) => {
                    let _ = r.respond(NewSessionResponse::new(id.clone()).modes(map::modes(mode)));
                    self.offer_commands(&id);
                }
                Err(e) => {
                    let _ = r.respond_with_error(e);
                }
            },
            Incoming::LoadSession(req, r) => {
                let id = req.session_id.0.to_string();
                match self.open(&req.cwd, &req.mcp_servers, Some(id)).await {
                    Ok((id, mode, resumed)) => {
                        if let (Some(live), Some(resumed)) = (self.sessions.get(&id), resumed) {
                            replay(&live.link, &resumed);
                        }
                        let _ = r.respond(LoadSessionResponse::new().modes(map::modes(mode)));
                        self.offer_commands(&id);
                    }
                    Err(e) => {
                        let _ = r.respond_with_error(e);
                    }
                }
            }
            Incoming::Prompt(req, r) => self.prompt(req, r).await,
            Incoming::SetMode(req, r) => {
                let id = req.session_id.0.to_string();
                let result = match (self.sessions.get_mut(&id), session::mode_of(&req.mode_id.0)) {
                    (None, _) => Err(no_session(&id)),
                    (_, Err(e)) => Err(e),
                    (Some(live), Ok(mode)) => {
                        live.mode = mode;
                        let _ = live.link.ops.send(Op::SetApprovalMode { mode }).await;
                        live.link.update(SessionUpdate::CurrentModeUpdate(
                            acp::CurrentModeUpdate::new(mode.as_str().to_string()),
                        ));
                        Ok(())
                    }
                };
                let _ = match result {
                    Ok(()) => r.respond(SetSessionModeResponse::new()),
                    Err(e) => r.respond_with_error(e),
                };
            }
            Incoming::Cancel(n) => {
                if let Some(live) = self.sessions.get(&n.session_id.0.to_string()) {
                    let link = &live.link;
                    // Every question asked is abandoned: an answer that
                    // comes later does nothing.
                    link.abandon_questions();
                    let (running, own) = {
                        let mut t = lock(&link.turn);
                        t.cancelled = t.prompt.is_some();
                        // The engine's answer to it, when it comes, is
                        // not the next prompt's.
                        if let Some(c) = t.command.filter(|_| t.cancelled) {
                            t.discard.push(c);
                        }
                        (t.cancelled, t.own || t.command.is_some())
                    };
                    if running {
                        let _ = link.ops.send(Op::Interrupt).await;
                    }
                    // A prompt Lathe answers itself ends now.
                    if own {
                        link.end(acp::StopReason::Cancelled);
                    }
                }
            }
        }
    }

    /// Starts a session's agent in `cwd` (a new one, or `resume`d).
    async fn open(
        &mut self,
        cwd: &Path,
        mcp: &[acp::McpServer],
        resume: Option<String>,
    ) -> Result<
        (
            String,
            ApprovalMode,
            Option<crate::session::history::Rebuilt>,
        ),
        Error,
    > {
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(bad_params(format!(
                "cwd must be an absolute path to a directory: {}",
                cwd.display()
            )));
        }
        let env = |k: &str| std::env::var(k).ok();
        let overrides = Overrides {
            workspace: Some(cwd.to_path_buf()),
            no_model: resume.is_some(),
            ..self.base.clone()
        };
        let config = launch::load_config(&overrides, &env).map_err(|e| failed(&e))?;
        // A session of this workspace, whole, or a clear no.
        if let Some(id) = &resume {
            crate::session::store::check(&config.paths.sessions_dir, id, &config.workspace)
                .map_err(|e| bad_params(format!("cannot load session {id}: {e}")))?;
        }
        let mut config = match &resume {
            Some(id) => launch::config_for_session(&config, id, &env).map_err(|e| failed(&e))?,
            None => config,
        };
        choose_model(&mut config).await?;
        // Loaded again while it runs: the running one gives way, once
        // what could fail has not (its record is written to its end
        // before the new one reads it).
        if let Some(id) = &resume
            && let Some(live) = self.sessions.remove(id)
        {
            live.link.abandon_questions();
            let _ = live.link.ops.send(Op::Interrupt).await;
            let _ = live.link.ops.send(Op::Shutdown).await;
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), live.agent).await;
        }
        let mut notes = launch::add_editor_mcp(&mut config, &editor_servers(mcp));
        let (editor, named) = editor::Fs::editor(self.cx.clone(), &self.caps, cwd);
        let launched = launch::spawn_agent(
            &config,
            None,
            launch::Trust {
                resume,
                editor,
                ..launch::Trust::default()
            },
        )
        .map_err(|e| failed(&e))?;
        let _ = named.set(launched.session_id.clone());
        notes.extend(config.warnings.iter().chain(&launched.warnings).cloned());
        for w in &notes {
            tracing::warn!("{w}");
        }
        let reserved = commands::reserved();
        let reserved: Vec<&str> = reserved.iter().map(String::as_str).collect();
        let (custom, ws_commands, digest) = trust::commands(&config, &reserved);
        let waiting = trust::waiting(&config, &launched, ws_commands, digest);
        let untrusted: Vec<&str> = launched
            .skills
            .untrusted
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        let offered = commands::Offered {
            custom,
            skills: launched
                .skills
                .found
                .person
                .iter()
                .chain(&launched.skills.found.workspace)
                .filter(|s| !untrusted.contains(&s.name.as_str()))
                .map(|s| (s.name.clone(), s.description.clone()))
                .collect(),
            prompts: std::collections::BTreeMap::new(),
        };
        let id = launched.session_id.clone();
        let handle = launched.handle;
        let link = Link {
            cx: self.cx.clone(),
            session_id: id.clone(),
            // As the editor named it: locations, diffs and links speak
            // its paths.
            workspace: cwd.to_path_buf(),
            ops: handle.ops,
            turn: Arc::new(Mutex::new(Turn::default())),
            caps: self.caps.clone(),
            offered: Arc::new(Mutex::new(offered)),
            epoch: Arc::new(tokio::sync::watch::channel(0).0),
            notes: Arc::default(),
        };
        tokio::spawn(session::pump(link.clone(), handle.events));
        self.sessions.insert(
            id.clone(),
            Live {
                link,
                mode: config.approval,
                agent: handle.task,
                waiting: Arc::new(Mutex::new(waiting)),
                notes,
                told: false,
            },
        );
        Ok((id, config.approval, launched.resumed))
    }

    /// The commands the session offers, for the editor's `/` menu.
    fn offer_commands(&self, id: &str) {
        if let Some(live) = self.sessions.get(id) {
            live.link.offer_commands();
        }
    }

    async fn prompt(&mut self, req: PromptRequest, r: Responder<PromptResponse>) {
        let id = req.session_id.0.to_string();
        let Some(live) = self.sessions.get_mut(&id) else {
            let _ = r.respond_with_error(no_session(&id));
            return;
        };
        let link = live.link.clone();
        let first = !std::mem::replace(&mut live.told, true);
        let mut tell: Vec<String> = if first {
            std::mem::take(&mut live.notes)
                .into_iter()
                .map(|n| format!("(lathe: warning: {n})\n"))
                .collect()
        } else {
            Vec::new()
        };
        if first && live.waiting.lock().is_ok_and(|w| w.is_some()) {
            tell.push(
                "(The workspace's own hooks, MCP servers, skills, agents or commands wait for \
                 your trust: type /trust to see them.)\n"
                    .into(),
            );
        }
        {
            let mut t = lock(&link.turn);
            if t.prompt.is_some() {
                drop(t);
                let _ = r.respond_with_error(Error::new(
                    agent_client_protocol::ErrorCode::INVALID_REQUEST,
                    "a prompt is already running in this session: cancel it first",
                ));
                return;
            }
            t.prompt = Some(r);
            t.cancelled = false;
            t.prompt_no += 1;
        }
        if let Ok(mut later) = link.notes.lock() {
            tell.append(&mut later);
        }
        if !tell.is_empty() {
            link.update(SessionUpdate::AgentThoughtChunk(map::chunk(tell.concat())));
        }
        let (text, images) = map::prompt(&link.workspace, &req.prompt);
        if !images.is_empty() {
            match save_images(&link, &images) {
                Ok(paths) => {
                    let _ = link.ops.send(Op::AttachImages { paths }).await;
                }
                Err(e) => link.say(format!("(the images were not attached: {e})\n")),
            }
        }
        if text.trim().is_empty() && images.is_empty() {
            link.end(acp::StopReason::EndTurn);
            return;
        }
        if text.trim() == "/trust" {
            lock(&link.turn).own = true;
            tokio::spawn(trust(link, live.waiting.clone()));
            return;
        }
        // The person's own command: its prompt is the message.
        let custom = lock_offered(&link).custom.clone();
        let text = lathe_core::front::commands::expand(&custom, &text).unwrap_or(text);
        match commands::parse(&text) {
            Some(commands::Parsed::Usage(how)) => {
                link.say(how);
                link.end(acp::StopReason::EndTurn);
            }
            Some(commands::Parsed::Op(op, waits, said)) => {
                let is_turn = matches!(op, Op::Plan { .. });
                lock(&link.turn).command = waits;
                let _ = link.ops.send(op).await;
                if waits.is_none() && !is_turn {
                    if let Some(s) = said {
                        link.say(s);
                    }
                    link.end(acp::StopReason::EndTurn);
                }
            }
            None => {
                let _ = link.ops.send(Op::UserInput { text }).await;
            }
        }
    }
}

fn lock_offered(link: &Link) -> std::sync::MutexGuard<'_, commands::Offered> {
    link.offered
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn lock(turn: &Mutex<Turn>) -> std::sync::MutexGuard<'_, Turn> {
    turn.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `/trust`: what of the workspace waits, shown and asked; a yes
/// remembers it (pinned as it is) and starts it.
async fn trust(link: Link, waiting: Arc<Mutex<Option<trust::Waiting>>>) {
    let prompt_no = link.prompt_gen();
    let text = waiting
        .lock()
        .ok()
        .and_then(|w| w.as_ref().map(|w| w.text.clone()));
    let Some(text) = text else {
        link.say("Nothing of this workspace waits for your trust.");
        link.end(acp::StopReason::EndTurn);
        return;
    };
    let epoch = link.epoch();
    let yes = link
        .confirm(
            "Trust the workspace's own",
            acp::ToolKind::Other,
            text,
            "Trust them",
            "Not now",
        )
        .await;
    // Cancelled meanwhile: nothing is trusted.
    if link.epoch() != epoch {
        return;
    }
    let taken = if yes {
        waiting.lock().ok().and_then(|mut w| w.take())
    } else {
        None
    };
    let said = match taken.map(trust::Waiting::remember) {
        None => "Nothing was trusted; /trust asks again.".to_string(),
        Some(Ok((ops, commands))) => {
            for op in ops {
                link.op(op).await;
            }
            lock_offered(&link).custom.extend(commands);
            link.offer_commands();
            "Trusted: the workspace's own run and are offered from now on.".to_string()
        }
        Some(Err((still, e))) => {
            if let Ok(mut w) = waiting.lock() {
                *w = Some(still);
            }
            format!("Could not remember the trust: {e}; /trust asks again.")
        }
    };
    // Only the prompt that asked is answered.
    if link.prompt_gen() == prompt_no {
        link.say(said);
        link.end_for(prompt_no, acp::StopReason::EndTurn);
    }
}

/// What Lathe is and can do, in the protocol version the editor speaks
/// (the newest Lathe knows, if the editor's is newer).
fn initialized(req: &InitializeRequest) -> InitializeResponse {
    let version = std::cmp::min(
        req.protocol_version,
        agent_client_protocol::schema::ProtocolVersion::LATEST,
    );
    InitializeResponse::new(version)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
                .mcp_capabilities(McpCapabilities::new().http(true)),
        )
        .agent_info(Implementation::new("lathe", env!("CARGO_PKG_VERSION")).title("Lathe"))
}

/// An error whose message says what was wrong (an editor shows the
/// message; `data` carries the same words).
pub(crate) fn bad_params(what: impl Into<String>) -> Error {
    let what = what.into();
    Error::new(
        agent_client_protocol::ErrorCode::INVALID_PARAMS,
        what.clone(),
    )
    .data(what)
}

pub(crate) fn internal(what: impl Into<String>) -> Error {
    let what = what.into();
    Error::new(
        agent_client_protocol::ErrorCode::INTERNAL_ERROR,
        what.clone(),
    )
    .data(what)
}

/// A config with no model (a local server, no `--model`): the server's
/// only model, as `lathe exec` chooses it, or the list to choose from.
async fn choose_model(config: &mut crate::config::Config) -> Result<(), Error> {
    match launch::choose_model(config).await {
        Ok(launch::ModelChoice::Chosen(m)) => config.model = m,
        Ok(launch::ModelChoice::Unlisted(why)) => {
            tracing::warn!("{why}");
            config.model = launch::UNNAMED.to_string();
        }
        Ok(launch::ModelChoice::Several(models)) => {
            return Err(bad_params(format!(
                "the server at {} serves {} models; choose one with `lathe --model NAME acp` \
                 in the editor's agent settings: {}",
                config.base_url,
                models.len(),
                models
                    .iter()
                    .take(12)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Err(e) => return Err(failed(&e)),
    }
    Ok(())
}

fn no_session(id: &str) -> Error {
    bad_params(format!("no session {id} (open one with session/new)"))
}

fn failed(e: &dyn std::fmt::Display) -> Error {
    internal(e.to_string())
}

/// The editor's MCP servers as Lathe's config writes them.
fn editor_servers(servers: &[acp::McpServer]) -> Vec<launch::EditorMcp> {
    servers
        .iter()
        .filter_map(|s| match s {
            acp::McpServer::Stdio(s) => Some(launch::EditorMcp::Stdio {
                name: s.name.clone(),
                command: s.command.display().to_string(),
                args: s.args.clone(),
                env: s
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect(),
            }),
            acp::McpServer::Http(s) => Some(launch::EditorMcp::Http {
                name: s.name.clone(),
                url: s.url.clone(),
                headers: s
                    .headers
                    .iter()
                    .map(|h| (h.name.clone(), h.value.clone()))
                    .collect(),
            }),
            acp::McpServer::Sse(s) => Some(launch::EditorMcp::Unsupported {
                name: s.name.clone(),
                transport: "the old SSE transport".into(),
            }),
            _ => None,
        })
        .collect()
}

/// Where a prompt's images wait to be read (0700, this process's).
fn images_dir() -> PathBuf {
    std::env::temp_dir().join(format!("lathe-acp-{}", std::process::id()))
}

/// The images of a prompt as private files the engine attaches (it reads
/// and checks them as it does any image the person names).
fn save_images(link: &Link, images: &[(String, String)]) -> Result<Vec<PathBuf>, String> {
    use base64::Engine;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = images_dir();
    crate::session::journal::private_dir(&dir).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for (i, (data, mime)) in images.iter().enumerate() {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|e| format!("image {}: not base64 ({e})", i + 1))?;
        let ext = mime.rsplit('/').next().unwrap_or("img");
        let path = dir.join(format!("{}-{i}.{ext}", link.session_id));
        // The person's pictures: theirs alone to read, removed when
        // Lathe ends (`serve`).
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| e.to_string())?;
        std::io::Write::write_all(&mut file, &bytes).map_err(|e| e.to_string())?;
        out.push(path);
    }
    Ok(out)
}

/// A loaded session's conversation, streamed back as the editor would
/// have seen it: the person's messages, the answers, the thinking, and
/// each call with its content.
fn replay(link: &Link, resumed: &crate::session::history::Rebuilt) {
    use crate::session::history::Shown;
    for piece in &resumed.shown {
        match piece {
            Shown::User(t) | Shown::Steer(t) => link.update(session::user_chunk(t.clone())),
            Shown::Assistant(t) => link.say(t.clone()),
            Shown::Reasoning(t) => {
                link.update(SessionUpdate::AgentThoughtChunk(map::chunk(t.clone())));
            }
            Shown::Note(t) => link.say(format!("\n({t})\n")),
            Shown::Tool {
                call_id,
                name,
                arguments,
                content,
                is_error,
                seen,
                kind,
                ..
            } => {
                let args = seen.as_ref().map_or_else(
                    || serde_json::from_str(arguments).unwrap_or(serde_json::Value::Null),
                    |s| s.arguments.clone(),
                );
                link.update(SessionUpdate::ToolCall(map::started(
                    &link.workspace,
                    call_id,
                    name,
                    &args,
                    Some(*kind),
                )));
                let status = if *is_error {
                    crate::protocol::ToolStatus::Error
                } else {
                    crate::protocol::ToolStatus::Ok
                };
                let printed = seen.as_ref().map(|s| s.tail.join("\n")).unwrap_or_default();
                link.update(SessionUpdate::ToolCallUpdate(acp::ToolCallUpdate::new(
                    call_id.clone(),
                    map::finished(
                        &link.workspace,
                        status,
                        &serde_json::Value::String(content.clone()),
                        seen.as_ref().and_then(|s| s.change.as_deref()),
                        &printed,
                    ),
                )));
            }
        }
    }
}
