//! Approvals as a round trip: the dispatch stage emits
//! `approval_requested`, and the front end answers with `Op::Decide`. The
//! agent task routes each answer to the call waiting for it through
//! [`PendingApprovals`]. A turn that is interrupted while a call waits
//! counts as a denial.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::policy::Approver;
use crate::protocol::{ApprovalDecision, ApprovalRequest};

/// Calls waiting for a decision, by call id.
#[derive(Debug, Default)]
pub struct PendingApprovals {
    waiting: Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>,
}

impl PendingApprovals {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<ApprovalDecision>>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn wait_for(&self, call_id: &str) -> oneshot::Receiver<ApprovalDecision> {
        let (tx, rx) = oneshot::channel();
        self.lock().insert(call_id.to_string(), tx);
        rx
    }

    /// Delivers a decision; a decision for no waiting call is ignored.
    pub fn resolve(&self, call_id: &str, decision: ApprovalDecision) {
        match self.lock().remove(call_id) {
            Some(tx) => {
                let _ = tx.send(decision);
            }
            None => tracing::debug!(%call_id, "decision for a call that is not waiting; ignored"),
        }
    }

    fn forget(&self, call_id: &str) {
        self.lock().remove(call_id);
    }
}

/// The approver of interactive front ends: it waits for `Op::Decide`.
pub(crate) struct ChannelApprover {
    pending: Arc<PendingApprovals>,
}

impl ChannelApprover {
    pub(crate) fn new(pending: Arc<PendingApprovals>) -> Self {
        Self { pending }
    }
}

#[async_trait]
impl Approver for ChannelApprover {
    async fn decide(
        &self,
        request: &ApprovalRequest,
        cancel: &CancellationToken,
    ) -> ApprovalDecision {
        let rx = self.pending.wait_for(&request.call_id);
        tokio::select! {
            d = rx => d.unwrap_or(ApprovalDecision::Deny { message: None }),
            () = cancel.cancelled() => {
                self.pending.forget(&request.call_id);
                ApprovalDecision::Deny { message: Some("the turn was interrupted".into()) }
            }
        }
    }
}

/// What no grant covers of what a call needs. A rerun outside the
/// sandbox (`first`) says why in its own words, once: what the judgement
/// of the line adds to that (the read rules it would pass by) goes into
/// those words.
pub(crate) fn uncovered(
    shared: &super::Shared,
    first: Option<crate::policy::Need>,
    needs: Vec<crate::policy::Need>,
) -> Vec<crate::policy::Need> {
    let covered = |n: &crate::policy::Need| {
        n.grant
            .as_ref()
            .is_some_and(|k| shared.services.authz.covers(k))
    };
    let rerun = first.is_some();
    let mut uncovered: Vec<crate::policy::Need> = first.into_iter().collect();
    for n in needs {
        if covered(&n) {
            continue;
        }
        if rerun
            && let Some(more) = n.reason.strip_prefix(crate::policy::UNSANDBOXED_REASON)
            && let Some(why) = uncovered.first_mut()
        {
            if !why.reason.ends_with(more) {
                why.reason.push_str(more);
            }
            continue;
        }
        uncovered.push(n);
    }
    uncovered
}
