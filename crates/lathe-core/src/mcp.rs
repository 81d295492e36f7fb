//! MCP servers as a tool source (the `rmcp` client).
//!
//! The [`Manager`] starts every configured server at once, each within
//! its startup timeout, and never waits for one to show the first screen:
//! a turn waits (at most that long) for the servers still starting before
//! its first request, so the model sees their tools. A server that fails
//! is reported (`mcp_server_status`) and the rest go on. Each server's
//! tools are registered as `server__tool` (at most 64 characters, a hash
//! suffix when a name must be cut or would collide), with the server's
//! description and input schema, as [`McpTool`]s: their operation is
//! `External { server, tool }`, so they pass the same approvals, rules,
//! hooks, redaction and log as built-ins.
//!
//! Stdio servers run through the sandbox's warden (contained: nothing
//! they start outlives them; their environment has no secret-looking
//! variable but what the config gives them), with their stderr kept (its
//! end goes into errors). A call has the server's timeout, reset by each
//! progress notification (which become `tool_progress` events); an
//! interrupt or a timeout drops it, and rmcp tells the server
//! (`notifications/cancelled`). A server that dies mid-call gives that
//! call an error result, never a hang, and is started again, with
//! backoff, when next used; a call is never sent twice.
//! `notifications/tools/list_changed` re-reads the tool list, effective
//! from the next model request.

mod client;
mod elicit;
pub mod oauth;
pub mod offers;
mod result;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::broadcast;

pub use client::Server;

use crate::config::mcp::McpServer;
use crate::policy::Workspace;
use crate::protocol::operation::Operation;
use crate::protocol::{Effect, McpState, McpStatus};
use crate::tools::{Tool, ToolContext, ToolError, ToolSource};

/// What a prompt or resource interrupted while it was awaited says.
const INTERRUPTED: &str = "interrupted before the server answered";

/// `f`, unless `cancel` comes first.
async fn until_cancelled<T>(
    cancel: &tokio_util::sync::CancellationToken,
    f: impl std::future::Future<Output = T>,
) -> Option<T> {
    tokio::select! {
        v = f => Some(v),
        () = cancel.cancelled() => None,
    }
}

/// The longest a tool's registered name may be (the providers' limit).
const MAX_NAME: usize = 64;

/// What servers run with.
#[derive(Debug, Clone)]
pub struct Launch {
    pub workspace: std::path::PathBuf,
    /// Stdio servers start through the warden, contained, unconfined
    /// (the person configured or trusted them).
    pub sandbox: crate::sandbox::Settings,
    /// The person's read rules, followed as files: what they cover is not
    /// there for a workspace's server, nor is git's object store.
    pub reads: Option<crate::policy::guardrails::ReadDenials>,
    /// Where the logins to HTTP servers are kept ([`oauth::DIR`] under
    /// the data directory); none, no login is used.
    pub logins: Option<std::path::PathBuf>,
}

/// Every MCP server of a session.
pub struct Manager {
    servers: Mutex<Vec<Arc<Server>>>,
    /// The workspace's servers, waiting for the person's trust.
    held: Mutex<Vec<McpServer>>,
    generation: Arc<AtomicU64>,
    events: broadcast::Sender<McpStatus>,
    launch: Launch,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager").finish_non_exhaustive()
    }
}

impl Manager {
    /// A manager with no server yet.
    pub fn new(launch: Launch) -> Arc<Self> {
        let (events, _) = broadcast::channel(256);
        Arc::new(Self {
            servers: Mutex::new(Vec::new()),
            held: Mutex::new(Vec::new()),
            generation: Arc::new(AtomicU64::new(0)),
            events,
            launch,
        })
    }

    /// Starts `configs`, all at once, in the background.
    pub fn start(self: &Arc<Self>, configs: Vec<McpServer>) {
        for config in configs {
            let server = Server::new(
                config,
                self.launch.clone(),
                self.generation.clone(),
                self.events.clone(),
            );
            self.lock().push(server.clone());
            // Said at once: a server trusted later was "untrusted" until now.
            let _ = self.events.send(server.status());
            tokio::spawn(async move { server.start().await });
        }
    }

    /// Keeps the workspace's servers until the person trusts them
    /// ([`Manager::start_held`]); they show as untrusted.
    pub fn hold(&self, configs: Vec<McpServer>) {
        for c in &configs {
            let _ = self.events.send(held_status(c));
        }
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend(configs);
    }

    /// Starts the servers held for trust.
    pub fn start_held(self: &Arc<Self>) {
        let held = std::mem::take(
            &mut *self
                .held
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        self.start(held);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Server>>> {
        self.servers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts a login to the server called `name` (in the background: its
    /// status says where to open it, then starts it again with the login).
    pub fn login(&self, name: &str) -> Result<(), String> {
        let server = self
            .lock()
            .iter()
            .find(|s| s.config.name == name)
            .cloned()
            .ok_or_else(|| format!("there is no MCP server `{name}`"))?;
        tokio::spawn(server.login());
        Ok(())
    }

    /// `/server:prompt ARGS`: the prompt's messages as the message to
    /// send, or why there are none (a required argument missing, the
    /// server's error); `None` when `message` names no server's prompt.
    pub async fn prompt_invoked(
        &self,
        message: &str,
        person: Option<&dyn crate::tools::Together>,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Option<Result<String, String>> {
        let rest = message.trim_start().strip_prefix('/')?;
        let (head, given) = match rest.split_once(char::is_whitespace) {
            Some((h, g)) => (h, g.trim()),
            None => (rest.trim_end(), ""),
        };
        let (server_name, prompt_name) = head.split_once(':')?;
        let server = self
            .lock()
            .iter()
            .find(|s| s.config.name == server_name)
            .cloned()?;
        // A server still starting is waited for (at most its startup
        // timeout), as a turn's first request waits for its tools; an
        // interrupt ends the wait.
        if until_cancelled(cancel, server.started()).await.is_none() {
            return Some(Err(INTERRUPTED.into()));
        }
        let offers = server.offers();
        let Some(prompt) = offers.prompts.iter().find(|p| p.name == prompt_name) else {
            let known: Vec<String> = offers
                .prompts
                .iter()
                .map(|p| format!("/{server_name}:{}", p.name))
                .collect();
            return Some(Err(if known.is_empty() {
                format!("MCP server {server_name} offers no prompts")
            } else {
                format!(
                    "MCP server {server_name} has no prompt `{prompt_name}`; its prompts are {}",
                    known.join(", ")
                )
            }));
        };
        let mut arguments = match offers::given_arguments(server_name, prompt, given) {
            Ok(a) => a,
            Err(e) => return Some(Err(e)),
        };
        // What it needs and was not given is asked for, where someone
        // answers.
        if let Some(person) = person {
            let wanted: Vec<crate::protocol::McpPromptArgument> =
                offers::missing(prompt, &arguments)
                    .into_iter()
                    .cloned()
                    .collect();
            for a in wanted {
                let mut question = format!(
                    "/{server_name}:{prompt_name} needs {}",
                    a.name.to_uppercase()
                );
                if !a.description.is_empty() {
                    question.push_str(&format!(": {}", a.description));
                }
                let call = format!("/{server_name}:{prompt_name}");
                match person
                    .ask_from("Lathe", &call, &question, &[], cancel)
                    .await
                {
                    crate::tools::Asked::Answer(v) => {
                        arguments.insert(a.name.clone(), Value::String(v));
                    }
                    _ => break,
                }
            }
        }
        if let Err(e) = offers::check_complete(server_name, prompt, &arguments) {
            return Some(Err(e));
        }
        let Some(got) = until_cancelled(cancel, server.get_prompt(prompt_name, arguments)).await
        else {
            return Some(Err(INTERRUPTED.into()));
        };
        Some(
            got.map(|r| offers::rendered(&r))
                .map_err(|e| format!("MCP server {server_name}'s prompt {prompt_name}: {e}")),
        )
    }

    /// Whether `mention` (after `@`) names a server's resource.
    pub fn names_a_resource(&self, mention: &str) -> bool {
        mention.split_once(':').is_some_and(|(s, uri)| {
            !uri.is_empty() && self.lock().iter().any(|x| x.config.name == s)
        })
    }

    /// The `@server:uri` resources `text` mentions, each as mentioned with
    /// its contents, or why they could not be read.
    pub async fn resources_in(
        &self,
        text: &str,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Vec<(String, Result<String, String>)> {
        let names: Vec<String> = self.lock().iter().map(|s| s.config.name.clone()).collect();
        let mut out = Vec::new();
        let mut total = 0;
        let mut full = false;
        for (i, (mention, server_name, uri)) in
            offers::mentioned(text, &names).into_iter().enumerate()
        {
            if i >= offers::MAX_RESOURCES || full {
                out.push((
                    mention.to_string(),
                    Err(format!(
                        "at most {} resources and {} KiB of them go along with a message",
                        offers::MAX_RESOURCES,
                        offers::MAX_RESOURCES_TOTAL / 1024
                    )),
                ));
                continue;
            }
            let server = self
                .lock()
                .iter()
                .find(|s| s.config.name == server_name)
                .cloned();
            let read = match server {
                Some(s) => {
                    let read = async {
                        s.started().await;
                        s.read_resource(&uri).await.map(|r| offers::contents(&r))
                    };
                    match until_cancelled(cancel, read).await {
                        Some(r) => r,
                        None => return out,
                    }
                }
                None => Err("no such server".into()),
            };
            let read = match read {
                Ok(text) if total + text.len() > offers::MAX_RESOURCES_TOTAL => {
                    full = true;
                    Err(format!(
                        "at most {} resources and {} KiB of them go along with a message",
                        offers::MAX_RESOURCES,
                        offers::MAX_RESOURCES_TOTAL / 1024
                    ))
                }
                other => other,
            };
            if let Ok(text) = &read {
                total += text.len();
            }
            out.push((mention.to_string(), read));
        }
        out
    }

    /// Every server's state now, by name.
    pub fn statuses(&self) -> Vec<McpStatus> {
        let mut out: Vec<McpStatus> = self.lock().iter().map(|s| s.status()).collect();
        out.extend(
            self.held
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .iter()
                .map(held_status),
        );
        out.sort_by(|a, b| a.server.cmp(&b.server));
        out
    }

    /// Status changes from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<McpStatus> {
        self.events.subscribe()
    }

    /// Waits until no server is starting (each is bounded by its own
    /// startup timeout).
    pub async fn settled(&self) {
        let servers: Vec<Arc<Server>> = self.lock().clone();
        for s in servers {
            s.started().await;
        }
    }

    /// Restarts the server `name`, or every server: each ends and starts
    /// again in the background, its failures forgotten.
    pub fn restart(&self, name: Option<&str>) -> Result<(), String> {
        let servers: Vec<Arc<Server>> = self
            .lock()
            .iter()
            .filter(|s| name.is_none_or(|n| s.config.name == n))
            .cloned()
            .collect();
        if servers.is_empty() {
            let known: Vec<String> = self.lock().iter().map(|s| s.config.name.clone()).collect();
            return Err(match name {
                Some(n) if known.is_empty() => {
                    format!("there is no MCP server `{n}` (none has started)")
                }
                Some(n) => format!(
                    "there is no MCP server `{n}`; the servers are {}",
                    known.join(", ")
                ),
                None => "no MCP server has started (untrusted ones wait for trust)".into(),
            });
        }
        for server in servers {
            tokio::spawn(async move { server.restart().await });
        }
        Ok(())
    }

    /// Stops every server (their processes and all they started).
    pub async fn shutdown(&self) {
        let servers: Vec<Arc<Server>> = self.lock().drain(..).collect();
        for s in servers {
            s.stop().await;
        }
    }
}

#[async_trait]
impl ToolSource for Manager {
    fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let servers: Vec<Arc<Server>> = self.lock().clone();
        let mut used: BTreeMap<String, usize> = BTreeMap::new();
        let mut out: Vec<Arc<dyn Tool>> = Vec::new();
        for server in servers {
            for remote in server.tools() {
                let name = tool_name(&server.config.name, &remote.name, &mut used);
                out.push(Arc::new(McpTool {
                    name,
                    remote,
                    server: server.clone(),
                }));
            }
        }
        out
    }

    async fn settle(&self) {
        self.settled().await;
    }
}

fn held_status(c: &McpServer) -> McpStatus {
    McpStatus {
        server: c.name.clone(),
        state: McpState::Untrusted,
        tools: Vec::new(),
        endpoint: client::endpoint(c),
        message: Some("a workspace server: it starts once you trust it".into()),
        prompts: vec![],
        resources: vec![],
    }
}

/// A remote tool as the server describes it.
#[derive(Debug, Clone)]
pub struct RemoteTool {
    pub name: String,
    pub description: String,
    pub schema: Value,
}

/// `server__tool`, made of what tool names may hold, at most 64 bytes,
/// with a hash of the original when it had to change or would collide.
fn tool_name(server: &str, tool: &str, used: &mut BTreeMap<String, usize>) -> String {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut name = format!("{server}__{clean}");
    let changed = clean != tool || name.len() > MAX_NAME || used.contains_key(&name);
    if changed {
        let digest = ring::digest::digest(&ring::digest::SHA256, tool.as_bytes());
        let hash: String = digest.as_ref()[..4]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        name.truncate(MAX_NAME - 9);
        name = format!("{name}_{hash}");
        // Still taken (a hash collision): count on.
        let n = used.get(&name).copied().unwrap_or(0);
        if n > 0 {
            name.truncate(MAX_NAME - 4);
            name = format!("{name}_{n}");
        }
    }
    *used.entry(name.clone()).or_insert(0) += 1;
    name
}

/// One MCP server's tool, as the registry holds it.
pub struct McpTool {
    name: String,
    remote: RemoteTool,
    server: Arc<Server>,
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.remote.description
    }

    fn parameters(&self) -> Value {
        self.remote.schema.clone()
    }

    fn effect(&self) -> Effect {
        Effect::External
    }

    fn deferrable(&self) -> bool {
        !self.server.config.always_load
    }

    fn operations(
        &self,
        _args: &Value,
        _workspace: &Workspace,
    ) -> Result<Vec<Operation>, ToolError> {
        Ok(vec![Operation::External {
            server: self.server.config.name.clone(),
            tool: self.remote.name.clone(),
            trusted: self.server.config.trusted,
        }])
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        self.server.call(&self.remote.name, args, ctx).await
    }
}

/// How long a restart waits after the `n`th failure in a row.
fn backoff(failures: u32) -> Duration {
    Duration::from_secs(1u64 << failures.min(6)).min(Duration::from_secs(60))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_namespaced_clean_bounded_and_unique() {
        let mut used = BTreeMap::new();
        assert_eq!(tool_name("fs", "read_file", &mut used), "fs__read_file");
        let odd = tool_name("fs", "read.file/v2", &mut used);
        assert!(
            odd.starts_with("fs__read_file_v2_") && odd.len() <= MAX_NAME,
            "{odd}"
        );
        let long = tool_name("server", &"x".repeat(100), &mut used);
        assert!(long.len() <= MAX_NAME, "{long}");
        // A second tool that cleans to a taken name gets its own.
        let clash = tool_name("fs", "read-file", &mut used);
        let again = tool_name("fs", "read-file", &mut used);
        assert_ne!(clash, again);
        assert!(again.len() <= MAX_NAME);
    }

    #[test]
    fn backoff_doubles_up_to_a_minute() {
        assert_eq!(backoff(0), Duration::from_secs(1));
        assert_eq!(backoff(3), Duration::from_secs(8));
        assert_eq!(backoff(30), Duration::from_secs(60));
    }
}
