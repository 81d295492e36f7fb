//! `AuthorizationManager`: the grants of one conversation.
//!
//! A grant is keyed by tool and operation scope (for `exec_shell` the
//! program name, e.g. `cargo`; for file tools the path). A `once` grant is
//! used up by the one call it was given for; a conversation grant lasts until
//! it expires (300 s by default). Both expire, and `clear` drops them all.
//! Each conversation owns its own manager, so grants never leak between
//! conversations. Time is tokio's, so tests can pause it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

pub const DEFAULT_GRANT_TTL: Duration =
    Duration::from_secs(crate::config::defaults::GRANT_TTL_SECS);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantKind {
    Once,
    Conversation,
}

#[derive(Debug, Clone, Copy)]
struct Grant {
    kind: GrantKind,
    expires_at: Instant,
}

#[derive(Debug)]
pub struct AuthorizationManager {
    ttl: Duration,
    grants: Mutex<HashMap<(String, String), Grant>>,
}

impl Default for AuthorizationManager {
    fn default() -> Self {
        Self::new(DEFAULT_GRANT_TTL)
    }
}

impl AuthorizationManager {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            grants: Mutex::new(HashMap::new()),
        }
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Records a grant for `tool` on `scope`.
    pub fn grant(&self, tool: &str, scope: &str, kind: GrantKind) {
        let grant = Grant {
            kind,
            expires_at: Instant::now() + self.ttl,
        };
        self.lock()
            .insert((tool.to_string(), scope.to_string()), grant);
    }

    /// Whether a live grant covers `tool` on `scope`; a `once` grant is used up.
    pub fn authorize(&self, tool: &str, scope: &str) -> bool {
        let mut grants = self.lock();
        let key = (tool.to_string(), scope.to_string());
        let Some(grant) = grants.get(&key).copied() else {
            return false;
        };
        if Instant::now() >= grant.expires_at {
            grants.remove(&key);
            return false;
        }
        if grant.kind == GrantKind::Once {
            grants.remove(&key);
        }
        true
    }

    /// Drops every grant (`/clear`, a new conversation).
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Live grants, for display.
    pub fn len(&self) -> usize {
        let now = Instant::now();
        self.lock().values().filter(|g| g.expires_at > now).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Grant>> {
        // A panic while holding this lock cannot leave the map inconsistent
        // (every update is a single insert or remove), so poison is ignored.
        self.grants
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn once_grants_are_used_up_by_one_call() {
        let m = AuthorizationManager::default();
        m.grant("write_file", "a.txt", GrantKind::Once);
        assert!(m.authorize("write_file", "a.txt"));
        assert!(!m.authorize("write_file", "a.txt"));
    }

    #[tokio::test(start_paused = true)]
    async fn conversation_grants_last_until_they_expire() {
        let m = AuthorizationManager::new(Duration::from_secs(300));
        m.grant("exec_shell", "cargo", GrantKind::Conversation);
        assert!(m.authorize("exec_shell", "cargo"));
        tokio::time::advance(Duration::from_secs(299)).await;
        assert!(m.authorize("exec_shell", "cargo"));
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(!m.authorize("exec_shell", "cargo"));
        assert!(m.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn once_grants_expire_too() {
        let m = AuthorizationManager::new(Duration::from_secs(10));
        m.grant("write_file", "a.txt", GrantKind::Once);
        tokio::time::advance(Duration::from_secs(11)).await;
        assert!(!m.authorize("write_file", "a.txt"));
    }

    #[tokio::test(start_paused = true)]
    async fn grants_are_keyed_by_tool_and_scope() {
        let m = AuthorizationManager::default();
        m.grant("exec_shell", "cargo", GrantKind::Conversation);
        assert!(!m.authorize("exec_shell", "rm"));
        assert!(!m.authorize("write_file", "cargo"));
    }

    #[tokio::test(start_paused = true)]
    async fn conversations_are_isolated_and_clear_drops_everything() {
        let a = AuthorizationManager::default();
        let b = AuthorizationManager::default();
        a.grant("exec_shell", "cargo", GrantKind::Conversation);
        assert!(!b.authorize("exec_shell", "cargo"));
        assert_eq!(a.len(), 1);
        a.clear();
        assert!(!a.authorize("exec_shell", "cargo"));
    }
}
