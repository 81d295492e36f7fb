//! `lathe mcp login NAME`, `lathe mcp logout NAME`, and what `lathe mcp
//! list` says of each server's login.

use crate::config::Config;
use crate::config::mcp::{McpServer, McpTransport};
use crate::mcp::oauth::{self, LoginError, TokenFile};

#[derive(Debug, thiserror::Error)]
pub enum McpLoginError {
    #[error("there is no MCP server `{name}` ({known})")]
    Unknown { name: String, known: String },
    #[error(
        "`{0}` is the workspace's, and you have not trusted it: run `lathe` here and trust the \
         workspace's MCP servers first"
    )]
    Untrusted(String),
    #[error("`{0}` runs as a command (stdio): only HTTP servers log in")]
    NotHttp(String),
    #[error(
        "`{0}` is given an Authorization header in the config, which a login never replaces: \
         remove the header to log in instead"
    )]
    HeaderGiven(String),
    #[error(transparent)]
    Login(#[from] LoginError),
    #[error("cannot remove the login to `{name}`: {error}")]
    Remove { name: String, error: std::io::Error },
}

/// The server called `name`, its URL, and its token file.
fn http_server<'a>(
    config: &'a Config,
    name: &str,
) -> Result<(&'a McpServer, &'a str, TokenFile), McpLoginError> {
    let all = || config.mcp_servers.iter().chain(&config.workspace_mcp);
    let Some(server) = all().find(|s| s.name == name) else {
        let names: Vec<&str> = all().map(|s| s.name.as_str()).collect();
        let known = if names.is_empty() {
            "no MCP server is configured".to_string()
        } else {
            format!("the servers are {}", names.join(", "))
        };
        return Err(McpLoginError::Unknown {
            name: name.to_string(),
            known,
        });
    };
    // A repository's server is reached only once the person trusted it.
    if server.origin == crate::policy::RuleOrigin::Workspace && !super::mcp_trusted(config, server)
    {
        return Err(McpLoginError::Untrusted(name.to_string()));
    }
    let McpTransport::Http { url, headers } = &server.transport else {
        return Err(McpLoginError::NotHttp(name.to_string()));
    };
    if headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"))
    {
        return Err(McpLoginError::HeaderGiven(name.to_string()));
    }
    let file = TokenFile::of(&super::mcp_logins(config), url);
    Ok((server, url, file))
}

/// Logs in to the server called `name` (see `mcp::oauth::login`); `tell`
/// gets what the person must see (the URL to open).
pub async fn mcp_login(
    config: &Config,
    name: &str,
    tell: &(dyn Fn(String) + Send + Sync),
) -> Result<(), McpLoginError> {
    let (server, url, _) = http_server(config, name)?;
    let dir = super::mcp_logins(config);
    oauth::login(
        oauth::Login {
            name,
            url,
            oauth: &server.oauth,
            dir: &dir,
        },
        tell,
    )
    .await?;
    Ok(())
}

/// Forgets the login to the server called `name`; whether there was one.
pub fn mcp_logout(config: &Config, name: &str) -> Result<bool, McpLoginError> {
    let (_, _, file) = http_server(config, name)?;
    file.remove().map_err(|error| McpLoginError::Remove {
        name: name.to_string(),
        error,
    })
}

/// Whether the person is logged in to the server called `name`; none for
/// a server that does not log in (a command, or one given a header).
pub fn mcp_logged_in(config: &Config, name: &str) -> Option<bool> {
    http_server(config, name)
        .ok()
        .map(|(_, _, file)| file.logged_in())
}
