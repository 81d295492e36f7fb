//! One MCP server: its connection (started, lost, started again with
//! backoff), its tools, its calls.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::FusedFuture;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest, Implementation,
    PingRequest, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio::sync::{Notify, broadcast, watch};

use super::{Launch, RemoteTool, backoff, result};
use crate::config::mcp::{McpServer, McpTransport};
use crate::protocol::{McpState, McpStatus};
use crate::tools::{ProgressSink, ToolContext, ToolError};

mod login;
mod offered;

/// What the person is told of a server that wants a login.
pub fn needs_login(name: &str) -> String {
    format!("needs a login: run `lathe mcp login {name}` (in the terminal UI, /mcp login {name})")
}

/// Why a start failed.
enum Unstarted {
    Failed(String),
    /// The server asks for a login the person has not made (or that
    /// expired past refreshing).
    NeedsLogin,
}

impl From<String> for Unstarted {
    fn from(e: String) -> Self {
        Unstarted::Failed(e)
    }
}

/// How much of a server's stderr is kept for errors.
const STDERR_KEPT: usize = 4 * 1024;

/// What the server runs or reaches, for the person.
pub fn endpoint(config: &McpServer) -> String {
    match &config.transport {
        McpTransport::Stdio { command, args, .. } => std::iter::once(command.as_str())
            .chain(args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        McpTransport::Http { url, .. } => url.clone(),
    }
}

/// Where the progress of the call in flight goes (calls to one server
/// come one at a time: they need approval, so they are not batched).
#[derive(Default)]
struct Progress {
    sink: Mutex<Option<ProgressSink>>,
    /// Told on every notification: the call's idle timeout starts over.
    alive: Notify,
    /// Who answers the server's questions during the call.
    asker: Mutex<Option<super::elicit::Asker>>,
    /// The person is being asked: the call's time is theirs.
    asking: std::sync::atomic::AtomicBool,
}

impl Progress {
    fn deliver(&self, p: &ProgressNotificationParam) {
        let text = match (&p.message, p.total) {
            (Some(m), Some(t)) => format!("{m} ({}/{})", p.progress, t),
            (Some(m), None) => m.clone(),
            (None, Some(t)) => format!("{}/{}", p.progress, t),
            (None, None) => format!("{}", p.progress),
        };
        if let Some(sink) = self
            .sink
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
        {
            sink.emit("progress", text);
        }
        self.alive.notify_waiters();
    }
}

/// The client side of the conversation with one server.
#[derive(Clone)]
pub(super) struct Handler {
    progress: Arc<Progress>,
    server: Weak<Server>,
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.deliver(&params);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(server) = self.server.upgrade() {
            server.offers_changed();
        }
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(server) = self.server.upgrade() {
            server.offers_changed();
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(server) = self.server.upgrade() {
            // Marked now, before the answer to the call that changed the
            // list is read: the next request waits for the new list.
            server.starting.send_replace(true);
            tokio::spawn(async move {
                server.refresh_tools().await;
                server.starting.send_replace(false);
            });
        }
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let name = self
            .server
            .upgrade()
            .map(|s| s.config.name.clone())
            .unwrap_or_default();
        let asker = self
            .progress
            .asker
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        self.progress.asking.store(true, Ordering::SeqCst);
        let result = super::elicit::answer(asker, &name, request).await;
        self.progress.asking.store(false, Ordering::SeqCst);
        self.progress.alive.notify_waiters();
        Ok(result)
    }

    fn get_info(&self) -> ClientConfig {
        // Forms and pages a server asks the person to fill in or open.
        let capabilities: ClientCapabilities =
            serde_json::from_value(serde_json::json!({"elicitation": {"form": {}, "url": {}}}))
                .unwrap_or_default();
        ClientConfig::new(
            capabilities,
            Implementation::new("lathe", env!("CARGO_PKG_VERSION")),
        )
    }
}

pub(super) type Session = RunningService<RoleClient, Handler>;

/// How long a remote call goes without progress before the server is
/// pinged, to find out whether it is still there.
const PROBE_EVERY: Duration = Duration::from_secs(5);

type ProbeFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), ServiceError>> + Send>>;

/// The first cause of `e`, where the words are (the errors around it
/// name the SDK's types).
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// Why a handshake failed, in words for a person.
fn init_error(e: &rmcp::service::ClientInitializeError) -> String {
    match e {
        rmcp::service::ClientInitializeError::TransportError { error, .. } => {
            format!("cannot reach it: {}", root_cause(error))
        }
        other => root_cause(other),
    }
}

/// What went wrong, in words for a person: a transport error's own cause,
/// not the names of the types it passed through.
fn plain(e: &ServiceError) -> String {
    match e {
        ServiceError::TransportClosed => "the connection closed".into(),
        ServiceError::TransportSend(t) => format!("cannot reach it: {}", root_cause(t)),
        ServiceError::McpError(e) => e.message.to_string(),
        ServiceError::Timeout { timeout } => format!("no answer within {} s", timeout.as_secs()),
        other => other.to_string(),
    }
}

enum Conn {
    /// Not connected: never tried, failed, or lost.
    Down {
        failures: u32,
        retry_at: Option<Instant>,
    },
    Up(Arc<Session>),
}

pub struct Server {
    pub config: McpServer,
    launch: Launch,
    generation: Arc<AtomicU64>,
    events: broadcast::Sender<McpStatus>,
    conn: tokio::sync::Mutex<Conn>,
    tools: RwLock<Vec<RemoteTool>>,
    /// Its prompts and resources; whether they changed since last read,
    /// and whether they are being read.
    offers: RwLock<super::offers::Offers>,
    offers_dirty: std::sync::atomic::AtomicBool,
    offers_reading: std::sync::atomic::AtomicBool,
    status: Mutex<McpStatus>,
    /// True while starting, or re-reading its tool list.
    starting: watch::Sender<bool>,
    progress: Arc<Progress>,
    stderr: Arc<Mutex<String>>,
    /// The warden of a stdio server's process. Stopped with SIGTERM, on
    /// which it ends everything the server started; a SIGKILL (what
    /// dropping a child does) would leave those behind.
    child: Mutex<Option<tokio::process::Child>>,
    /// The task reading a stdio server's stderr; a failed start waits a
    /// moment for it so that the error carries what the server said.
    stderr_reader: Mutex<Option<tokio::task::JoinHandle<()>>>,
    me: Weak<Server>,
}

impl Server {
    pub(super) fn new(
        config: McpServer,
        launch: Launch,
        generation: Arc<AtomicU64>,
        events: broadcast::Sender<McpStatus>,
    ) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            status: Mutex::new(McpStatus {
                server: config.name.clone(),
                state: McpState::Starting,
                tools: Vec::new(),
                endpoint: endpoint(&config),
                message: None,
                prompts: Vec::new(),
                resources: Vec::new(),
            }),
            offers: RwLock::default(),
            offers_dirty: std::sync::atomic::AtomicBool::new(false),
            offers_reading: std::sync::atomic::AtomicBool::new(false),
            config,
            launch,
            generation,
            events,
            conn: tokio::sync::Mutex::new(Conn::Down {
                failures: 0,
                retry_at: None,
            }),
            tools: RwLock::new(Vec::new()),
            starting: watch::channel(true).0,
            progress: Arc::default(),
            stderr: Arc::default(),
            child: Mutex::new(None),
            stderr_reader: Mutex::new(None),
            me: me.clone(),
        })
    }

    pub fn status(&self) -> McpStatus {
        self.status
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(super) fn tools(&self) -> Vec<RemoteTool> {
        self.tools
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn set_status(&self, state: McpState, message: Option<String>) {
        let status = {
            let mut s = self
                .status
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let offers = self.offers();
            let next = McpStatus {
                state,
                message,
                tools: self
                    .tools()
                    .iter()
                    .map(|t| format!("{}__{}", self.config.name, t.name))
                    .collect(),
                prompts: offers.prompts,
                resources: offers.resources,
                ..s.clone()
            };
            // Said once: the same news twice is noise in every outlet.
            if *s == next {
                return;
            }
            *s = next;
            s.clone()
        };
        let _ = self.events.send(status);
    }

    fn set_tools(&self, tools: Vec<RemoteTool>) {
        *self
            .tools
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = tools;
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Waits while the server is starting or re-reading its tools (a
    /// list that never comes is given up after the startup timeout).
    pub(super) async fn started(&self) {
        let mut rx = self.starting.subscribe();
        let limit = Duration::from_secs(self.config.startup_timeout_secs);
        let _ = tokio::time::timeout(limit, rx.wait_for(|starting| !starting)).await;
    }

    /// The first start.
    pub(super) async fn start(self: Arc<Self>) {
        let mut conn = self.conn.lock().await;
        let _ = self.connect_locked(&mut conn).await;
        self.starting.send_replace(false);
    }

    /// Ends the server and starts it again, as if for the first time.
    pub(super) async fn restart(self: Arc<Self>) {
        self.starting.send_replace(true);
        self.stop().await;
        let mut conn = self.conn.lock().await;
        *conn = Conn::Down {
            failures: 0,
            retry_at: None,
        };
        let _ = self.connect_locked(&mut conn).await;
        self.starting.send_replace(false);
    }

    /// Connects (holding the connection lock), publishing the outcome.
    async fn connect_locked(&self, conn: &mut Conn) -> Result<Arc<Session>, String> {
        let failures = match conn {
            Conn::Down { failures, .. } => *failures,
            Conn::Up(_) => 0,
        };
        self.set_status(McpState::Starting, None);
        let limit = Duration::from_secs(self.config.startup_timeout_secs);
        let outcome = match tokio::time::timeout(limit, self.connect()).await {
            Ok(r) => r,
            Err(_) => Err(Unstarted::Failed(format!(
                "did not start within {} s (startup_timeout_secs)",
                limit.as_secs()
            ))),
        };
        match outcome {
            Ok((session, tools)) => {
                let session = Arc::new(session);
                *conn = Conn::Up(session.clone());
                self.set_tools(tools);
                self.set_status(McpState::Ready, None);
                tracing::info!(server = %self.config.name, "MCP server ready");
                Ok(session)
            }
            Err(Unstarted::NeedsLogin) => {
                *conn = Conn::Down {
                    failures: failures + 1,
                    retry_at: Some(Instant::now() + backoff(failures)),
                };
                self.set_tools(Vec::new());
                let e = needs_login(&self.config.name);
                self.set_status(McpState::NeedsLogin, Some(e.clone()));
                tracing::info!(server = %self.config.name, "MCP server needs a login");
                Err(e)
            }
            Err(Unstarted::Failed(e)) => {
                // Whatever it started ends with it; what it said on the
                // way out is read to its end (briefly) before the error
                // is written.
                self.end_process();
                self.last_words().await;
                let e = self.with_stderr(e);
                *conn = Conn::Down {
                    failures: failures + 1,
                    retry_at: Some(Instant::now() + backoff(failures)),
                };
                self.set_tools(Vec::new());
                self.set_status(McpState::Failed, Some(e.clone()));
                tracing::warn!(server = %self.config.name, error = %e, "MCP server failed");
                Err(e)
            }
        }
    }

    /// `error`, with the end of what the server wrote on stderr.
    fn with_stderr(&self, error: String) -> String {
        let tail = self
            .stderr
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .trim()
            .to_string();
        if tail.is_empty() {
            error
        } else {
            format!("{error}; its stderr ended with: {tail}")
        }
    }

    async fn connect(&self) -> Result<(Session, Vec<RemoteTool>), Unstarted> {
        let handler = Handler {
            progress: self.progress.clone(),
            server: self.me.clone(),
        };
        let session = match &self.config.transport {
            McpTransport::Stdio { command, args, env } => {
                // A server the person configured is contained by the
                // warden, not confined. A workspace's runs in the sandbox
                // as commands do (with the network if its entry asked for
                // it, as the trust question showed), with only the basic
                // variables and those its entry names: trusting a
                // repository never hands it the machine or the person's
                // keys.
                let settings = if self.config.origin == crate::policy::RuleOrigin::Workspace {
                    crate::sandbox::Settings {
                        network: self.config.network,
                        basic_env: true,
                        ..self.launch.sandbox.clone()
                    }
                } else {
                    crate::sandbox::Settings {
                        mode: crate::sandbox::Mode::Off,
                        ..self.launch.sandbox.clone()
                    }
                };
                let mut argv = vec![command.clone()];
                argv.extend(args.iter().cloned());
                let mut policy = settings.policy(&self.launch.workspace, argv);
                if settings.mode != crate::sandbox::Mode::Off
                    && let Some(reads) = self.launch.reads.clone()
                {
                    policy.hidden.extend(reads.sandbox_covers(false).await?);
                    policy.reads = reads.sandbox_watch();
                }
                let mut cmd = settings.command(&policy).map_err(|e| e.to_string())?;
                for (k, v) in env {
                    cmd.env(k, v);
                }
                cmd.stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped());
                let mut child = cmd
                    .spawn()
                    .map_err(|e| format!("cannot start `{command}`: {e}"))?;
                let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                    return Err(format!("cannot talk to `{command}`").into());
                };
                if let Some(stderr) = child.stderr.take() {
                    self.stderr
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .clear();
                    self.keep_stderr(stderr);
                }
                self.end_process();
                *self
                    .child
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(child);
                handler
                    .serve((stdout, stdin))
                    .await
                    .map_err(|e| format!("the handshake failed: {}", init_error(&e)))?
            }
            McpTransport::Http { url, headers } => self.connect_http(handler, url, headers).await?,
        };
        session
            .set_response_cache_config(
                rmcp::service::ClientCacheConfig::default().with_serve_stale_on_error(false),
            )
            .await;
        let tools = list_tools(&session).await?;
        let offers = super::offers::list(&session).await;
        *self
            .offers
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = offers;
        Ok((session, tools))
    }

    /// Keeps the end of the server's stderr, for errors, and logs it.
    /// Waits (at most a second) for what a server that ended wrote on
    /// stderr to be read to its end.
    async fn last_words(&self) {
        let reader = self
            .stderr_reader
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(reader) = reader {
            let _ = tokio::time::timeout(Duration::from_secs(1), reader).await;
        }
    }

    fn keep_stderr(&self, stderr: tokio::process::ChildStderr) {
        let kept = self.stderr.clone();
        let name = self.config.name.clone();
        let reader = tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(server = %name, "{line}");
                let mut k = kept
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                k.push_str(&line);
                k.push('\n');
                if k.len() > STDERR_KEPT {
                    let cut = k.ceil_char_boundary(k.len() - STDERR_KEPT);
                    k.drain(..cut);
                }
            }
        });
        *self
            .stderr_reader
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(reader);
    }

    /// Re-reads the tool list (the server said it changed).
    pub(super) async fn refresh_tools(&self) {
        let session = match &*self.conn.lock().await {
            Conn::Up(s) => s.clone(),
            Conn::Down { .. } => return,
        };
        match list_tools(&session).await {
            Ok(tools) => {
                self.set_tools(tools);
                self.set_status(McpState::Ready, Some("its tools changed".into()));
            }
            Err(e) => {
                tracing::warn!(server = %self.config.name, error = %e, "re-listing tools failed")
            }
        }
    }

    /// The live session, started (again) if it is down and its backoff
    /// has passed.
    async fn session(&self) -> Result<Arc<Session>, ToolError> {
        let mut conn = self.conn.lock().await;
        match &*conn {
            Conn::Up(s) if !s.is_transport_closed() => return Ok(s.clone()),
            Conn::Up(_) => {
                *conn = Conn::Down {
                    failures: 0,
                    retry_at: None,
                };
            }
            Conn::Down {
                retry_at: Some(at), ..
            } if Instant::now() < *at => {
                let wait = at.saturating_duration_since(Instant::now());
                return Err(ToolError::ExecutionFailed(format!(
                    "MCP server {} is not available ({}); it is tried again in {} s",
                    self.config.name,
                    self.status().message.unwrap_or_default(),
                    wait.as_secs().max(1)
                )));
            }
            Conn::Down { .. } => {}
        }
        self.starting.send_replace(true);
        let result = self.connect_locked(&mut conn).await;
        self.starting.send_replace(false);
        result.map_err(|e| {
            ToolError::ExecutionFailed(format!(
                "MCP server {} could not be started: {e}",
                self.config.name
            ))
        })
    }

    /// Marks the session lost (it died during a call).
    async fn lost(&self, why: &str) {
        let mut conn = self.conn.lock().await;
        if let Conn::Up(s) = &*conn {
            let _ = s.is_transport_closed();
            *conn = Conn::Down {
                failures: 0,
                retry_at: None,
            };
            let why = self.with_stderr(why.to_string());
            self.set_tools(self.tools());
            self.set_status(McpState::Failed, Some(why));
        }
        self.end_process();
    }

    /// Ends the server's process, and everything it started: SIGTERM to
    /// its warden, then SIGKILL if it is still there after a moment.
    fn end_process(&self) {
        let child = self
            .child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let Some(mut child) = child else {
            return;
        };
        if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        tokio::spawn(async move {
            if tokio::time::timeout(Duration::from_secs(3), child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
        });
    }

    /// One call of the remote tool `name`, within the server's timeout
    /// (which progress renews), until the turn is interrupted.
    pub async fn call(
        &self,
        name: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<Value, ToolError> {
        let session = self.session().await?;
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => {
                return Err(ToolError::InvalidArgs(format!(
                    "arguments must be an object, not {other}"
                )));
            }
        };
        *self
            .progress
            .sink
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(ctx.progress.clone());
        *self
            .progress
            .asker
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            ctx.together.clone().map(|together| super::elicit::Asker {
                server: self.config.name.clone(),
                together,
                call_id: ctx.call_id.clone(),
                cancel: ctx.cancel.clone(),
            });
        let timeout = Duration::from_secs(self.config.timeout_secs);
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        // Dropping this future tells the server the call was abandoned.
        let call = session.call_tool(params);
        tokio::pin!(call);
        let idle = tokio::time::sleep(timeout);
        tokio::pin!(idle);
        let total = tokio::time::sleep(timeout * 10);
        tokio::pin!(total);
        let mut reported = false;
        // A remote server that dies mid-call may leave its answer's stream
        // hanging: while no progress comes, it is pinged now and then, and
        // a ping that cannot be sent means it is gone (a slow answer to a
        // ping proves nothing: a busy server may be slow).
        let probes = matches!(self.config.transport, McpTransport::Http { .. });
        let next_probe = tokio::time::sleep(PROBE_EVERY);
        tokio::pin!(next_probe);
        let probe = futures_util::future::Fuse::terminated();
        tokio::pin!(probe);
        let outcome = loop {
            tokio::select! {
                r = &mut call => break r,
                () = self.progress.alive.notified() => {
                    reported = true;
                    idle.as_mut().reset(tokio::time::Instant::now() + timeout);
                    next_probe.as_mut().reset(tokio::time::Instant::now() + PROBE_EVERY);
                }
                () = &mut next_probe, if probes && probe.is_terminated() => {
                    let peer = session.peer().clone();
                    let ping: ProbeFuture = Box::pin(async move {
                        let ping = ClientRequest::PingRequest(PingRequest::default());
                        match tokio::time::timeout(PROBE_EVERY, peer.send_request(ping)).await {
                            Ok(Err(e @ (ServiceError::TransportSend(_)
                                | ServiceError::TransportClosed))) => Err(e),
                            _ => Ok(()),
                        }
                    });
                    probe.set(ping.fuse());
                }
                r = &mut probe => {
                    if let Err(e) = r {
                        break Err(e);
                    }
                    next_probe.as_mut().reset(tokio::time::Instant::now() + PROBE_EVERY);
                }
                () = &mut idle => {
                    // Waiting for the person is not the server's silence.
                    if self.progress.asking.load(Ordering::SeqCst) {
                        idle.as_mut().reset(tokio::time::Instant::now() + timeout);
                        continue;
                    }
                    break Err(ServiceError::Timeout { timeout });
                }
                () = &mut total => {
                    break Err(ServiceError::Timeout { timeout: timeout * 10 });
                }
                () = ctx.cancel.cancelled() => {
                    self.clear_sink();
                    return Err(ToolError::Cancelled(format!(
                        "interrupted by the user; MCP server {} was told to stop the call",
                        self.config.name
                    )));
                }
            }
        };
        if reported && outcome.is_ok() {
            self.last_progress().await;
        }
        self.clear_sink();
        self.answer(outcome).await
    }

    /// rmcp hands each notification to a task of its own, so the last
    /// progress sent before the answer may still be on its way: a moment
    /// for it, before the call's output is final.
    async fn last_progress(&self) {
        for _ in 0..5 {
            let more = self.progress.alive.notified();
            if tokio::time::timeout(Duration::from_millis(10), more)
                .await
                .is_err()
            {
                break;
            }
        }
    }

    /// What the model is told of a call's outcome: the result, or what
    /// went wrong (a server gone is started again at the next use).
    async fn answer(
        &self,
        outcome: Result<rmcp::model::CallToolResult, ServiceError>,
    ) -> Result<Value, ToolError> {
        match outcome {
            Ok(r) => result::map(&self.config.name, r),
            Err(ServiceError::Timeout { timeout }) => Err(ToolError::Timeout {
                secs: timeout.as_secs(),
                detail: format!(
                    "MCP server {} gave no answer or progress within {} s; the call was \
                     cancelled",
                    self.config.name,
                    timeout.as_secs()
                ),
            }),
            Err(ServiceError::McpError(e)) => Err(ToolError::ExecutionFailed(format!(
                "MCP server {}: {}",
                self.config.name, e.message
            ))),
            Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                let why = plain(&e);
                // What it said on the way out, read to its end (briefly).
                self.last_words().await;
                self.lost(&format!("it went away during a call ({why})"))
                    .await;
                Err(ToolError::ExecutionFailed(format!(
                    "MCP server {} went away during the call ({}); it is started again when \
                     next used, and this call was not sent again",
                    self.config.name,
                    self.with_stderr(why)
                )))
            }
            Err(e) => Err(ToolError::ExecutionFailed(format!(
                "MCP server {}: {}",
                self.config.name,
                plain(&e)
            ))),
        }
    }

    fn clear_sink(&self) {
        *self
            .progress
            .sink
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        *self
            .progress
            .asker
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// Closes the connection and ends the server's process.
    pub(super) async fn stop(&self) {
        let mut conn = self.conn.lock().await;
        if let Conn::Up(session) = std::mem::replace(
            &mut *conn,
            Conn::Down {
                failures: 0,
                retry_at: None,
            },
        ) {
            // The last holder closes it; a call in flight keeps its own.
            if let Ok(session) = Arc::try_unwrap(session) {
                let _ = tokio::time::timeout(Duration::from_secs(5), session.cancel()).await;
            }
        }
        // Its stdin closed, the server ends by itself; if not, it is ended.
        let child = self
            .child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(mut child) = child
            && tokio::time::timeout(Duration::from_secs(2), child.wait())
                .await
                .is_err()
        {
            *self
                .child
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(child);
            self.end_process();
        }
    }
}

/// Every tool of a session, as the registry will hold it.
async fn list_tools(session: &Session) -> Result<Vec<RemoteTool>, String> {
    let tools = session
        .list_all_tools()
        .await
        .map_err(|e| format!("listing its tools failed: {e}"))?;
    Ok(tools
        .into_iter()
        .map(|t| RemoteTool {
            name: t.name.to_string(),
            description: t
                .description
                .map(|d| d.to_string())
                .or(t.title)
                .unwrap_or_default(),
            schema: Value::Object((*t.input_schema).clone()),
        })
        .collect())
}

fn is_local(url: &str) -> bool {
    reqwest::Url::parse(url).ok().is_some_and(|u| {
        matches!(
            u.host_str(),
            Some("localhost" | "127.0.0.1" | "[::1]" | "::1")
        )
    })
}
