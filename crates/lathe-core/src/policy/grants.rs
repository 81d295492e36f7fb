//! `AuthorizationManager`: the conversation grants of one conversation.
//!
//! A grant covers exactly one operation, keyed as data ([`GrantKey`]): a
//! program resolved to an executable file (path and identity) with its
//! subcommand, a file to write, a host, an MCP tool. `git status` granted
//! does not cover `git push`, `./git status`, nor `/usr/bin/git status`
//! after the file was replaced. A line needs every one of its operations
//! covered, and a complex line is never covered (the authorizer never
//! offers a grant for it). A grant lapses when the conversation has not
//! used it for a while (300 s by default: each use starts that time again),
//! and lasts no longer than a cap (24 h by default, never more); `clear`
//! drops them all. Each conversation owns its own
//! manager. Time is tokio's, so tests can pause it.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::protocol::operation::{FileStamp, Program, SimpleCommand};

pub const DEFAULT_GRANT_TTL: Duration = Duration::from_secs(GRANT_TTL_SECS);
/// The longest a grant may last, whatever the configuration says.
pub const MAX_GRANT_TTL: Duration = Duration::from_secs(MAX_GRANT_TTL_SECS);

/// How long a conversation grant lasts unused by default, and the most
/// any grant lasts, used or not (seconds).
pub const GRANT_TTL_SECS: u64 = 300;
pub const MAX_GRANT_TTL_SECS: u64 = 24 * 60 * 60;

/// The program part of a command grant.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgramId {
    /// An executable file and its identity.
    File(PathBuf, Option<FileStamp>),
    Builtin(String),
    /// A program not found when approved (it may be created later); it is
    /// a different program once it exists.
    Missing(String),
}

/// One operation a grant covers (written in the session's record, for
/// the record's sake: a resumed conversation is granted nothing again
/// from a file).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[expect(
    clippy::large_enum_variant,
    reason = "a conversation holds a handful of grants; boxing buys nothing"
)]
pub enum GrantKey {
    Command {
        program: ProgramId,
        subcommand: Option<String>,
        /// The script an interpreter runs, with its identity.
        script: Option<ProgramId>,
        /// As the person saw it: `git status`.
        shown: String,
        /// Where the program was found, when not the resolved path.
        found: Option<PathBuf>,
    },
    FileWrite {
        path: String,
    },
    Net {
        host: String,
    },
    External {
        server: String,
        tool: String,
    },
    /// A tool that describes no finer operation.
    Tool {
        name: String,
    },
}

impl GrantKey {
    /// The grant for running `c` (its program and subcommand); `None` for a
    /// program computed at run time.
    pub fn command(c: &SimpleCommand) -> Option<Self> {
        let id = |p: &Program| match p {
            Program::Path { path, stamp, .. } => Some(ProgramId::File(path.clone(), *stamp)),
            Program::Builtin { name } => Some(ProgramId::Builtin(name.clone())),
            Program::NotFound { name } => Some(ProgramId::Missing(name.clone())),
            Program::Dynamic => None,
        };
        let found = match &c.program {
            Program::Path { found, .. } => found.clone(),
            _ => None,
        };
        Some(Self::Command {
            program: id(&c.program)?,
            subcommand: c.subcommand.clone(),
            script: c.script.as_ref().and_then(id),
            shown: c.scope(),
            found,
        })
    }

    /// What the grant covers, for the dialog and `/permissions`.
    pub fn describe(&self) -> String {
        match self {
            GrantKey::Command {
                program,
                shown,
                found,
                subcommand,
                ..
            } => {
                let base = match program {
                    ProgramId::File(p, _) => format!(
                        "`{shown}` with any arguments ({})",
                        found.as_ref().unwrap_or(p).display()
                    ),
                    ProgramId::Builtin(_) => {
                        format!("`{shown}` with any arguments (shell builtin)")
                    }
                    ProgramId::Missing(_) => {
                        format!("`{shown}` with any arguments (not found yet)")
                    }
                };
                // `make test` runs whatever the Makefile says when it
                // runs, and the model can change the Makefile.
                let name = shown.split_whitespace().next().unwrap_or_default();
                let name = crate::protocol::operation::basename(name);
                let args: Vec<&str> = subcommand.iter().map(String::as_str).collect();
                match super::instructions::instructions(name, &args) {
                    Some(what) => format!("{base}, and so whatever is in {what} when it runs"),
                    None => base,
                }
            }
            GrantKey::FileWrite { path } => format!("writes to {path}"),
            GrantKey::Net { host } => format!("requests to {host}"),
            GrantKey::External { server, tool } => format!("{tool} on MCP server {server}"),
            GrantKey::Tool { name } => format!("every {name} call"),
        }
    }
}

pub use crate::protocol::GrantInfo;

#[derive(Debug)]
struct Grant {
    id: u64,
    key: GrantKey,
    /// When it lapses unless used: `idle` after its last use, and never
    /// after its cap.
    expires_at: Instant,
    cap: Instant,
}

#[derive(Debug, Default)]
struct State {
    grants: Vec<Grant>,
    next_id: u64,
}

#[derive(Debug)]
pub struct AuthorizationManager {
    /// How long a grant lasts unused.
    ttl: Duration,
    /// How long a grant lasts at most, however much it is used.
    cap: Duration,
    state: Mutex<State>,
}

impl Default for AuthorizationManager {
    fn default() -> Self {
        Self::new(DEFAULT_GRANT_TTL, MAX_GRANT_TTL)
    }
}

impl AuthorizationManager {
    /// A manager whose grants lapse `ttl` after their last use and last
    /// `cap` at most (each between 1 s and 24 h; the cap no shorter than
    /// `ttl`).
    pub fn new(ttl: Duration, cap: Duration) -> Self {
        let ttl = ttl.clamp(Duration::from_secs(1), MAX_GRANT_TTL);
        Self {
            ttl,
            cap: cap.clamp(ttl, MAX_GRANT_TTL),
            state: Mutex::new(State::default()),
        }
    }

    /// How long a grant lasts unused.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Grants each of `keys` for the conversation, for as long as it uses
    /// them (within the cap).
    pub fn grant(&self, keys: &[GrantKey]) {
        let now = Instant::now();
        let mut state = self.lock();
        for key in keys {
            state.grants.retain(|g| g.key != *key);
            state.next_id += 1;
            let id = state.next_id;
            state.grants.push(Grant {
                id,
                key: key.clone(),
                expires_at: now + self.ttl,
                cap: now + self.cap,
            });
        }
    }

    /// Whether a live grant covers `key`; the grant that does is used, and
    /// lasts `ttl` from now (never past its cap).
    pub fn covers(&self, key: &GrantKey) -> bool {
        let now = Instant::now();
        let ttl = self.ttl;
        let mut state = self.lock();
        state.grants.retain(|g| g.expires_at > now);
        match state.grants.iter_mut().find(|g| g.key == *key) {
            Some(g) => {
                g.expires_at = (now + ttl).min(g.cap);
                true
            }
            None => false,
        }
    }

    /// Live grants, soonest to expire first.
    pub fn list(&self) -> Vec<GrantInfo> {
        let now = Instant::now();
        let mut state = self.lock();
        state.grants.retain(|g| g.expires_at > now);
        let mut out: Vec<GrantInfo> = state
            .grants
            .iter()
            .map(|g| GrantInfo {
                id: g.id,
                covers: g.key.describe(),
                expires_in_secs: g.expires_at.saturating_duration_since(now).as_secs(),
                idle_secs: self.ttl.as_secs(),
            })
            .collect();
        out.sort_by_key(|g| g.expires_in_secs);
        out
    }

    /// Revokes one grant; what it covered, if it existed.
    pub fn revoke(&self, id: u64) -> Option<GrantKey> {
        let mut state = self.lock();
        let at = state.grants.iter().position(|g| g.id == id)?;
        Some(state.grants.remove(at).key)
    }

    /// Drops every grant (`/clear`, a new conversation).
    pub fn clear(&self) {
        self.lock().grants.clear();
    }

    /// Live grants.
    #[cfg(any(test, feature = "internals"))]
    pub fn len(&self) -> usize {
        self.list().len()
    }

    #[cfg(any(test, feature = "internals"))]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Every update is a single push or retain: poison leaves it whole.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(path: &str, sub: Option<&str>) -> GrantKey {
        GrantKey::Command {
            program: ProgramId::File(PathBuf::from(path), None),
            subcommand: sub.map(String::from),
            script: None,
            shown: "x".into(),
            found: None,
        }
    }

    /// Approving `make test` approves what the Makefile says when it runs,
    /// and the offer says so.
    #[test]
    fn a_grant_for_a_build_tool_says_it_covers_its_instructions() {
        let key = |path: &str, sub: Option<&str>, shown: &str| GrantKey::Command {
            program: ProgramId::File(PathBuf::from(path), None),
            subcommand: sub.map(String::from),
            script: None,
            shown: shown.into(),
            found: None,
        };
        let make = key("/usr/bin/make", Some("test"), "make test").describe();
        assert!(
            make.ends_with("and so whatever is in the Makefile when it runs"),
            "{make}"
        );
        let npm = key("/usr/bin/npm", Some("run"), "npm run lint").describe();
        assert!(npm.contains("package.json's scripts"), "{npm}");
        let rg = key("/usr/bin/rg", None, "rg").describe();
        assert!(!rg.contains("whatever"), "{rg}");
    }

    /// A grant lasts as long as the conversation uses it: each use starts
    /// its time again; unused for the whole time, it lapses.
    #[tokio::test(start_paused = true)]
    async fn grants_last_while_used_and_lapse_unused() {
        let m = AuthorizationManager::new(Duration::from_secs(300), MAX_GRANT_TTL);
        let k = cmd("/usr/bin/cargo", Some("test"));
        m.grant(std::slice::from_ref(&k));
        for _ in 0..10 {
            tokio::time::advance(Duration::from_secs(299)).await;
            assert!(m.covers(&k), "used within its time, it stays");
        }
        assert_eq!(m.list()[0].expires_in_secs, 300);
        assert_eq!(m.list()[0].idle_secs, 300);
        tokio::time::advance(Duration::from_secs(301)).await;
        assert!(!m.covers(&k), "unused for its whole time, it lapsed");
        assert!(m.is_empty());
    }

    /// However much it is used, a grant ends at its cap.
    #[tokio::test(start_paused = true)]
    async fn use_never_carries_a_grant_past_its_cap() {
        let m = AuthorizationManager::new(Duration::from_secs(300), Duration::from_secs(600));
        let k = cmd("/usr/bin/cargo", Some("test"));
        m.grant(std::slice::from_ref(&k));
        tokio::time::advance(Duration::from_secs(290)).await;
        assert!(m.covers(&k));
        tokio::time::advance(Duration::from_secs(290)).await;
        assert!(m.covers(&k));
        assert_eq!(m.list()[0].expires_in_secs, 20, "the cap, not 300 s more");
        tokio::time::advance(Duration::from_secs(21)).await;
        assert!(!m.covers(&k));
        // A cap shorter than the time unused is raised to it.
        let m = AuthorizationManager::new(Duration::from_secs(300), Duration::from_secs(10));
        m.grant(std::slice::from_ref(&k));
        tokio::time::advance(Duration::from_secs(299)).await;
        assert!(m.covers(&k));
    }

    #[tokio::test(start_paused = true)]
    async fn grants_cover_exactly_their_operation() {
        let m = AuthorizationManager::default();
        m.grant(&[cmd("/usr/bin/git", Some("status"))]);
        assert!(!m.covers(&cmd("/usr/bin/git", Some("push"))));
        assert!(!m.covers(&cmd("/tmp/git", Some("status"))));
        assert!(!m.covers(&cmd("/usr/bin/git", None)));
        assert!(!m.covers(&GrantKey::FileWrite { path: "git".into() }));
    }

    #[tokio::test(start_paused = true)]
    async fn lifetimes_are_capped_and_grants_revocable() {
        let m = AuthorizationManager::new(Duration::from_secs(u64::MAX), Duration::MAX);
        assert_eq!(m.ttl(), MAX_GRANT_TTL);
        let a = GrantKey::FileWrite { path: "a".into() };
        let b = GrantKey::FileWrite { path: "b".into() };
        m.grant(&[a.clone(), b.clone()]);
        let id = m
            .list()
            .into_iter()
            .find(|g| g.covers.contains(" a"))
            .unwrap()
            .id;
        assert!(m.revoke(id).is_some());
        assert!(!m.covers(&a) && m.covers(&b));
        assert!(m.revoke(id).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn conversations_are_isolated_and_clear_drops_everything() {
        let a = AuthorizationManager::default();
        let b = AuthorizationManager::default();
        let k = cmd("/usr/bin/cargo", Some("build"));
        a.grant(std::slice::from_ref(&k));
        assert!(!b.covers(&k));
        a.clear();
        assert!(!a.covers(&k));
    }
}
