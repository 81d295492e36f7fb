//! The subagents running, each by its `task` call: what a person's stop
//! (`Op::StopAgent`, `k` in `/agents`) cancels (its requests, its calls
//! and the background commands they started, all under its token), and
//! whether it was the person who stopped it (its model is told so).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

#[derive(Default)]
pub(crate) struct Subagents(Mutex<HashMap<String, Entry>>);

struct Entry {
    cancel: CancellationToken,
    stopped: bool,
}

impl Subagents {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The subagent of `task` starts, under `under` (its call's token):
    /// it runs while the returned guard lives.
    pub(crate) fn start(self: &Arc<Self>, task: &str, under: &CancellationToken) -> Running {
        let cancel = under.child_token();
        self.lock().insert(
            task.to_string(),
            Entry {
                cancel: cancel.clone(),
                stopped: false,
            },
        );
        Running {
            all: Arc::clone(self),
            task: task.to_string(),
            cancel,
        }
    }

    /// The person stops the subagent of `task`; whether one ran.
    pub(crate) fn stop(&self, task: &str) -> bool {
        let mut all = self.lock();
        let Some(entry) = all.get_mut(task) else {
            return false;
        };
        entry.stopped = true;
        entry.cancel.cancel();
        true
    }
}

/// A running subagent: its token, and its place in the registry until
/// it ends.
pub(crate) struct Running {
    all: Arc<Subagents>,
    task: String,
    pub(crate) cancel: CancellationToken,
}

impl Running {
    /// Whether the person stopped it (not the turn's interrupt).
    pub(crate) fn stopped_by_person(&self) -> bool {
        self.all.lock().get(&self.task).is_some_and(|e| e.stopped)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.all.lock().remove(&self.task);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_cancels_that_subagent_only_and_says_the_person_did_it() {
        let all = Arc::new(Subagents::default());
        let turn = CancellationToken::new();
        let a = all.start("t1", &turn);
        let b = all.start("t2", &turn);
        assert!(all.stop("t1"));
        assert!(a.cancel.is_cancelled() && a.stopped_by_person());
        assert!(!b.cancel.is_cancelled() && !b.stopped_by_person());
        assert!(!all.stop("t9"), "no such subagent");
        drop(a);
        assert!(!all.stop("t1"), "ended: gone from the registry");
        // The turn's interrupt stops every one, and is not the person's
        // stop of one.
        turn.cancel();
        assert!(b.cancel.is_cancelled() && !b.stopped_by_person());
    }
}
