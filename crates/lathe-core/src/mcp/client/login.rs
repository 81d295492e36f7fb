//! Reaching an HTTP server: with the person's login to it when one is
//! kept, and logging in to one that asks (`/mcp login`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;

use super::{Handler, Server, Session, Unstarted, init_error, is_local};
use crate::config::mcp::McpTransport;
use crate::protocol::McpState;

impl Server {
    /// Logs in to the server (an HTTP one that asks), saying where in its
    /// status; then starts it again with the login.
    pub(in crate::mcp) async fn login(self: Arc<Self>) {
        let name = self.config.name.clone();
        let (McpTransport::Http { url, .. }, Some(dir)) =
            (&self.config.transport, self.launch.logins.clone())
        else {
            self.set_status(
                McpState::Failed,
                Some(format!(
                    "{name} runs as a command: only HTTP servers log in"
                )),
            );
            return;
        };
        self.set_status(McpState::LoggingIn, Some("finding how to log in…".into()));
        let me = self.clone();
        let tell = move |line: String| me.set_status(McpState::LoggingIn, Some(line));
        let login = crate::mcp::oauth::Login {
            name: &name,
            url,
            oauth: &self.config.oauth,
            dir: &dir,
        };
        match crate::mcp::oauth::login(login, &tell).await {
            Ok(()) => self.restart().await,
            Err(e) => self.set_status(
                McpState::NeedsLogin,
                Some(format!(
                    "the login failed: {e}; /mcp login {name} tries again"
                )),
            ),
        }
    }

    /// The handshake with an HTTP server: with the person's login to it,
    /// when one is kept (and no `Authorization` header is configured,
    /// which is never replaced by a login); a server that wants one is
    /// said to in one line.
    pub(super) async fn connect_http(
        &self,
        handler: Handler,
        url: &str,
        headers: &std::collections::BTreeMap<String, String>,
    ) -> Result<Session, Unstarted> {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            // Headers (a bearer token) never go to another host.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10));
        if is_local(url) {
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|e| e.to_string())?;
        let mut custom = HashMap::new();
        for (k, v) in headers {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                .map_err(|e| format!("header `{k}`: {e}"))?;
            let value = reqwest::header::HeaderValue::from_str(v)
                .map_err(|_| format!("header `{k}` has a value HTTP cannot carry"))?;
            custom.insert(name, value);
        }
        let configured = custom.contains_key(&reqwest::header::AUTHORIZATION);
        let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
        let login = match &self.launch.logins {
            Some(dir) if !configured => {
                let file = crate::mcp::oauth::TokenFile::of(dir, url);
                if file.logged_in() {
                    crate::mcp::oauth::manager(url, file)
                        .await
                        .map_err(|e| format!("cannot use the login to {url}: {e}"))?
                } else {
                    None
                }
            }
            _ => None,
        };
        let served = match login {
            Some(manager) => {
                let client = rmcp::transport::auth::AuthClient::new(client, manager);
                handler
                    .serve(StreamableHttpClientTransport::with_client(client, config))
                    .await
            }
            None => {
                handler
                    .serve(StreamableHttpClientTransport::with_client(client, config))
                    .await
            }
        };
        match served {
            Ok(session) => Ok(session),
            Err(_)
                if !configured
                    && self.launch.logins.is_some()
                    && crate::mcp::oauth::asks_for_login(url).await =>
            {
                Err(Unstarted::NeedsLogin)
            }
            Err(e) => Err(Unstarted::Failed(format!(
                "the handshake with {url} failed: {}",
                init_error(&e)
            ))),
        }
    }
}
