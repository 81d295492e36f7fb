//! Logging in to MCP servers that ask (HTTP servers answering 401 with
//! `WWW-Authenticate`), as the MCP authorization spec ranks the steps, on
//! rmcp's `auth`: the protected resource's metadata, then its
//! authorization server's (whose `issuer` must match, and which must offer
//! PKCE with S256); a client registered beforehand (`oauth.client_id`),
//! else a client metadata document (`oauth.client_metadata_url`) where the
//! server takes one, else dynamic registration; the authorization code
//! with PKCE, `state`, the `resource` parameter and `iss` checked on the
//! way back, to a loopback listener on 127.0.0.1 named exactly as
//! registered.
//!
//! Tokens are kept, one file per server URL, with mode 0600 under Lathe's
//! data directory ([`TokenFile`]); never in the config, the session
//! record, the log or events. A refresh holds a lock that spans processes
//! and reads the file again under it, so two Lathe sessions never spend
//! the same rotating refresh token (which makes the authorization server
//! revoke the whole family). A token goes only to the URL it was issued
//! for: the file is keyed by it, says it, and the MCP client follows no
//! redirect.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadataSource, AuthorizationRequest,
    AuthorizationSession, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::config::mcp::OAuthEntry;
use crate::protocol::visible::one_line;

/// Where the tokens are kept, under Lathe's data directory.
pub const DIR: &str = "mcp-oauth";

/// How long a login waits for the browser to come back.
const WAIT: Duration = Duration::from_secs(300);

/// How long a refresh waits for another process's refresh to end.
const LOCK_WAIT: Duration = Duration::from_secs(60);

/// How many requests to the loopback listener are read at once (more are
/// closed).
const READERS: usize = 64;

/// The most of a request to the loopback listener that is read.
const MAX_HEAD: usize = 16 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("{0} does not ask for a login: it answers without one")]
    NotAsked(String),
    #[error("cannot reach {url}: {error}")]
    Unreachable { url: String, error: String },
    #[error("cannot listen for the browser's return on 127.0.0.1:{port}: {error}")]
    Listen { port: u16, error: io::Error },
    #[error("the browser did not come back within {} minutes", WAIT.as_secs() / 60)]
    TimedOut,
    #[error("the authorization server refused: {0}")]
    Refused(String),
    #[error("cannot log in to it: {0}")]
    Cannot(String),
    #[error("{0}")]
    Auth(#[from] AuthError),
}

/// The tokens of one MCP server (by URL), as a file of mode 0600.
#[derive(Debug, Clone)]
pub struct TokenFile {
    path: PathBuf,
    lock: PathBuf,
    server: String,
}

/// What the file holds: the URL the tokens are for, and them.
#[derive(Serialize, Deserialize)]
struct Kept {
    server: String,
    credentials: StoredCredentials,
}

impl TokenFile {
    /// The file for the server at `url`, in `dir` (Lathe's data
    /// directory's [`DIR`]).
    pub fn of(dir: &Path, url: &str) -> Self {
        let key = crate::fs::pin([url.as_bytes()]);
        let key = key.get(..32).unwrap_or(&key);
        Self {
            path: dir.join(format!("{key}.json")),
            lock: dir.join(format!("{key}.lock")),
            server: url.to_string(),
        }
    }

    /// The credentials kept for this server; none when there are none, or
    /// when the file is for another URL or unreadable (a login mends it).
    pub fn read(&self) -> Option<StoredCredentials> {
        let text = match crate::fs::read_own(&self.path) {
            Ok(t) => t,
            Err(e) if e.is_not_found() => return None,
            Err(e) => {
                tracing::warn!(file = %self.path.display(), "cannot read MCP login: {e}");
                return None;
            }
        };
        match serde_json::from_str::<Kept>(&text) {
            Ok(kept) if kept.server == self.server => {
                // Whatever token this process holds is hidden from then
                // on, however it came (a refresh here or in another
                // Lathe).
                crate::policy::redactor::learn(tokens_of(&kept.credentials));
                Some(kept.credentials)
            }
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(file = %self.path.display(), "MCP login is not readable: {e}");
                None
            }
        }
    }

    /// Whether a token is kept (it may have expired: a refresh, or the
    /// server, says).
    pub fn logged_in(&self) -> bool {
        self.read().is_some_and(|c| c.token_response.is_some())
    }

    /// The access and refresh tokens kept, to be hidden wherever text is
    /// shown or recorded.
    pub fn secrets(&self) -> Vec<String> {
        self.read().map(|c| tokens_of(&c)).unwrap_or_default()
    }

    /// Replaces the file, whole, readable by the person alone.
    fn write(&self, credentials: StoredCredentials) -> io::Result<()> {
        crate::policy::redactor::learn(tokens_of(&credentials));
        let dir = self.dir()?;
        let kept = Kept {
            server: self.server.clone(),
            credentials,
        };
        let json = serde_json::to_vec_pretty(&kept).map_err(io::Error::other)?;
        // A temporary file is created with mode 0600.
        let mut tmp = tempfile::Builder::new()
            .prefix(".login-")
            .tempfile_in(&dir)?;
        tmp.write_all(&json)?;
        tmp.as_file().sync_all()?;
        tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Removes the file; whether there was one.
    pub fn remove(&self) -> io::Result<bool> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The directory, made (0700) if it is not there.
    fn dir(&self) -> io::Result<PathBuf> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = self
            .path
            .parent()
            .ok_or_else(|| io::Error::other("no directory"))?
            .to_path_buf();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)?;
        // One made before (or by someone else's umask) is the person's
        // alone from now on.
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
        Ok(dir)
    }

    /// Takes the lock every process refreshing this server's token holds
    /// (waiting at most [`LOCK_WAIT`]); released when the file is dropped.
    fn lock(&self) -> io::Result<std::fs::File> {
        use std::os::unix::fs::OpenOptionsExt;
        self.dir()?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&self.lock)?;
        let deadline = std::time::Instant::now() + LOCK_WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(25));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "another Lathe held the login's lock for a minute",
                    ));
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            }
        }
    }
}

/// The access and refresh tokens of `credentials`.
fn tokens_of(credentials: &StoredCredentials) -> Vec<String> {
    let Some(tokens) = credentials
        .token_response
        .as_ref()
        .and_then(|t| serde_json::to_value(t).ok())
    else {
        return Vec::new();
    };
    ["access_token", "refresh_token"]
        .iter()
        .filter_map(|k| tokens.get(k).and_then(|v| v.as_str()).map(str::to_owned))
        .collect()
}

fn store_error(e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let me = self.clone();
        tokio::task::spawn_blocking(move || me.read())
            .await
            .map_err(store_error)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let me = self.clone();
        tokio::task::spawn_blocking(move || me.write(credentials))
            .await
            .map_err(store_error)?
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.remove().map(drop).map_err(store_error)
    }

    /// A refresh token the server refused for good: the login is
    /// forgotten, unless another process has kept a new one since.
    async fn on_refresh_token_rejected(&self, spent: &StoredCredentials) -> Result<(), AuthError> {
        let refresh_of = |c: &StoredCredentials| {
            c.token_response
                .as_ref()
                .and_then(|t| serde_json::to_value(t).ok())
                .and_then(|t| t.get("refresh_token").cloned())
        };
        match self.read() {
            Some(now) if refresh_of(&now) == refresh_of(spent) => {
                self.remove().map(drop).map_err(store_error)
            }
            _ => Ok(()),
        }
    }

    /// Held through the refresh's load, request and save: another process
    /// refreshing waits, then loads what this one saved.
    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let me = self.clone();
        let file = tokio::task::spawn_blocking(move || me.lock())
            .await
            .map_err(store_error)?
            .map_err(store_error)?;
        Ok(Some(CredentialRefreshGuard::new(file)))
    }
}

/// A manager for the server at `url` whose tokens are in `file`, ready to
/// send them (refreshing when they are about to expire); `None` when no
/// token is kept, or the server's authorization server changed since.
pub async fn manager(
    url: &str,
    file: TokenFile,
) -> Result<Option<AuthorizationManager>, AuthError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut manager = AuthorizationManager::new(url).await?;
    // The authorization server is found again and must be the one that
    // issued the tokens: metadata that went missing (or names no issuer)
    // must not send the refresh token wherever a guess leads.
    let resolution = manager.resolve_metadata().await?;
    let kept = file.read().and_then(|c| c.issuer);
    if let Some(issuer) = &kept
        && resolution.metadata.issuer.as_deref() != Some(issuer.as_str())
    {
        tracing::warn!(
            %url,
            "the authorization server that issued the login is not found as it was: a new \
             login is needed"
        );
        return Ok(None);
    }
    manager.set_metadata(resolution.metadata);
    manager.set_credential_store(file);
    Ok(manager.initialize_from_store().await?.then_some(manager))
}

/// What a login needs: the server's name (for the person), its URL, what
/// the config says of its client, and where tokens are kept.
pub struct Login<'a> {
    pub name: &'a str,
    pub url: &'a str,
    pub oauth: &'a OAuthEntry,
    pub dir: &'a Path,
}

/// Logs in to the server: discovers how, registers where it must, sends
/// the person to the authorization server (`tell` says the URL, and
/// whether a browser was opened), waits for the browser's return, and
/// keeps the tokens. Nothing is kept unless it all succeeds.
pub async fn login(
    login: Login<'_>,
    tell: &(dyn Fn(String) + Send + Sync),
) -> Result<(), LoginError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let challenge = challenge(login.url).await?;
    let mut manager = AuthorizationManager::new(login.url).await?;
    let challenge = challenge.filter(|c| !c.is_empty());
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await?;
    if challenge.is_none()
        && resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback
    {
        return Err(LoginError::NotAsked(login.name.to_string()));
    }
    let pkce = resolution
        .metadata
        .code_challenge_methods_supported
        .as_ref()
        .is_some_and(|m| m.iter().any(|m| m == "S256"));
    if !pkce && resolution.source != AuthorizationMetadataSource::LegacyEndpointFallback {
        return Err(LoginError::Cannot(
            "its authorization server does not say it supports PKCE with S256 \
             (code_challenge_methods_supported), which a login needs"
                .into(),
        ));
    }
    manager.set_metadata(resolution.metadata);
    let file = TokenFile::of(login.dir, login.url);
    manager.set_credential_store(file);
    let port = login.oauth.callback_port.unwrap_or(0);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|error| LoginError::Listen { port, error })?;
    let port = listener
        .local_addr()
        .map_err(|error| LoginError::Listen { port, error })?
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let mut request = AuthorizationRequest::new(&redirect).with_client_name("Lathe");
    if let Some(id) = &login.oauth.client_id {
        request = request.with_preregistered_client(id);
    }
    if let Some(doc) = &login.oauth.client_metadata_url {
        request = request.with_client_metadata_url(doc);
    }
    if !login.oauth.scopes.is_empty() {
        request = request.with_scopes(login.oauth.scopes.iter().cloned());
    }
    if let Some(c) = &challenge {
        request = request.with_challenge(c);
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| e)?;
    let url = session.get_authorization_url().to_string();
    if !openable(&url) {
        return Err(LoginError::Cannot(format!(
            "its login page is not an https URL, so it is not opened: {}",
            one_line(&url)
        )));
    }
    let state = reqwest::Url::parse(&url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .unwrap_or_default();
    let opened = match open_browser(&url, std::env::var("BROWSER").ok().as_deref()) {
        Ok(how) => format!("opened with {how}"),
        Err(why) => format!("no browser opened: {why}"),
    };
    tell(format!(
        "To log in to {}, open this URL in a browser ({opened}; waiting for it to come \
         back):\n  {url}",
        login.name
    ));
    tokio::time::timeout(
        WAIT,
        wait_for_return(&listener, &session, &state, login.name),
    )
    .await
    .map_err(|_| LoginError::TimedOut)?
}

/// The server's challenge to a request without a token: its
/// `WWW-Authenticate` when it answers 401 (empty if it sent none), none
/// when it answers otherwise.
async fn challenge(url: &str) -> Result<Option<String>, LoginError> {
    let unreachable = |error: String| LoginError::Unreachable {
        url: url.to_string(),
        error,
    };
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| unreachable(e.to_string()))?;
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "lathe", "version": env!("CARGO_PKG_VERSION") }
        }
    });
    let response = client
        .post(url)
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .json(&initialize)
        .send()
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    Ok(Some(
        response
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string(),
    ))
}

/// Whether a login page may be opened: https, or http on this machine.
fn openable(url: &str) -> bool {
    let Ok(u) = reqwest::Url::parse(url) else {
        return false;
    };
    let local = || {
        let host = u.host_str().unwrap_or_default();
        host == "localhost"
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|a| a.is_loopback())
    };
    u.scheme() == "https" || (u.scheme() == "http" && local())
}

/// Opens `url` with `browser` (`$BROWSER`: its first entry) or
/// `xdg-open`; says with what, or why not. The browser is not waited for.
fn open_browser(url: &str, browser: Option<&str>) -> Result<String, String> {
    let command = browser
        .and_then(|b| b.split(':').find(|s| !s.trim().is_empty()))
        .unwrap_or("xdg-open");
    let mut argv = shlex::split(command)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| format!("$BROWSER is not a command line: {command}"))?;
    // `%s` stands for the URL where a browser entry has it.
    if argv.iter().any(|a| a.contains("%s")) {
        for a in &mut argv {
            *a = a.replace("%s", url);
        }
    } else {
        argv.push(url.to_string());
    }
    let mut child = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run `{}`: {e}", argv[0]))?;
    std::thread::spawn(move || child.wait());
    Ok(argv[0].clone())
}

/// Serves the loopback listener until the browser comes back with this
/// login's `state`: then exchanges the code (checking `iss`) and answers
/// the browser with how it went. Requests for other paths, or with
/// another state, are answered and waited past.
async fn wait_for_return(
    listener: &tokio::net::TcpListener,
    session: &AuthorizationSession,
    state: &str,
    name: &str,
) -> Result<(), LoginError> {
    // Requests are read side by side (a connection that sends nothing
    // holds up no other), then taken one at a time.
    let (tx, mut rx) = tokio::sync::mpsc::channel(READERS);
    let readers = std::sync::Arc::new(tokio::sync::Semaphore::new(READERS));
    loop {
        let (mut stream, target) = tokio::select! {
            accepted = listener.accept() => {
                if let (Ok((mut stream, _)), Ok(permit)) =
                    (accepted, readers.clone().try_acquire_owned())
                {
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        let target = read_target(&mut stream).await;
                        let _ = tx.send((stream, target)).await;
                        drop(permit);
                    });
                }
                continue;
            }
            Some(read) = rx.recv() => read,
        };
        let Some(target) = target else {
            answer(&mut stream, 400, "Lathe could not read that request.").await;
            continue;
        };
        let (code, iss) = match returned(&target, state) {
            Return::NotOurs(status, text) => {
                answer(&mut stream, status, text).await;
                continue;
            }
            Return::Refused(why) => {
                answer(
                    &mut stream,
                    400,
                    &format!("The login to {name} failed: {why}"),
                )
                .await;
                return Err(LoginError::Refused(why));
            }
            Return::Code { code, iss } => (code, iss),
        };
        match session
            .handle_callback_with_issuer(&code, state, iss.as_deref())
            .await
        {
            Ok(_) => {
                let text = format!("Lathe is logged in to {name}. You can close this tab.");
                answer(&mut stream, 200, &text).await;
                return Ok(());
            }
            Err(e) => {
                answer(
                    &mut stream,
                    400,
                    &format!("The login to {name} failed: {e}"),
                )
                .await;
                return Err(e.into());
            }
        }
    }
}

/// What a request to the loopback listener brought.
#[derive(Debug, PartialEq)]
enum Return {
    /// Not this login's return (another path, another state): answered
    /// with this status and text, and waited past.
    NotOurs(u16, &'static str),
    /// The authorization server said no.
    Refused(String),
    /// The code to exchange, and the issuer it came back with, if named.
    Code { code: String, iss: Option<String> },
}

/// Reads the request `target` a browser brought back, for the login whose
/// `state` is this.
fn returned(target: &str, state: &str) -> Return {
    let Ok(url) = reqwest::Url::parse(&format!("http://127.0.0.1{target}")) else {
        return Return::NotOurs(400, "Lathe could not read that request.");
    };
    if !target.starts_with('/') || url.path() != "/callback" {
        return Return::NotOurs(404, "Nothing here.");
    }
    let param = |k: &str| {
        url.query_pairs()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.into_owned())
    };
    if state.is_empty() || param("state").as_deref() != Some(state) {
        return Return::NotOurs(400, "This is not the login Lathe is waiting for.");
    }
    if let Some(error) = param("error") {
        return Return::Refused(one_line(&match param("error_description") {
            Some(d) => format!("{error}: {d}"),
            None => error,
        }));
    }
    match param("code") {
        Some(code) if !code.is_empty() => Return::Code {
            code,
            iss: param("iss"),
        },
        _ => Return::Refused("no code came back".into()),
    }
}

/// The request target of an HTTP request's head (read at most
/// [`MAX_HEAD`] bytes, 10 s).
async fn read_target(stream: &mut (impl tokio::io::AsyncRead + Unpin)) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let read = async {
        loop {
            let mut chunk = [0u8; 2048];
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut request = httparse::Request::new(&mut headers);
            match request.parse(&buf) {
                Ok(httparse::Status::Complete(_)) => return request.path.map(str::to_owned),
                Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => {}
                _ => return None,
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .ok()
        .flatten()
}

/// A small page for the browser.
async fn answer(stream: &mut tokio::net::TcpStream, status: u16, text: &str) {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Bad Request",
    };
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let body = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>Lathe</title>\
         <p style=\"font-family:sans-serif\">{escaped}</p>\n"
    );
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Whether the server at `url` answers a request without a token with
/// 401 (asked after a start failed: the error rmcp gives does not say).
pub async fn asks_for_login(url: &str) -> bool {
    let _ = rustls::crypto::ring::default_provider().install_default();
    matches!(challenge(url).await, Ok(Some(_)))
}

#[cfg(test)]
#[path = "oauth_tests.rs"]
mod tests;
