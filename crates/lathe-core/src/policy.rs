//! Policy: what a tool call may do, decided before it runs and checked after.
//!
//! A call is judged on its typed `operation`s (a shell line as parsed by
//! `shell`, a file, a host, an MCP tool), never on argument strings.
//! `workspace` keeps paths inside the workspace; `denylist` refuses what no
//! mode allows; `rules` holds the `[permissions]` allow/ask/deny lists;
//! `guardrails` turns the denylist and deny rules into a verdict per call;
//! `read_only` names the commands that never need asking; `authorizer`
//! applies ask/allow rules and the approval-mode table per operation and
//! defines the `Approver` seam; `grants` holds one conversation's grants,
//! keyed by operation; `user_hooks` runs the configured before/after
//! programs; `redactor` holds the secret matcher both redaction boundaries use.
//! Policy knows nothing of terminals and nothing of tool implementations.

pub mod authorizer;
pub mod denylist;
pub mod editor;
mod git_reads;
pub mod grants;
pub mod guardrails;
mod hook_files;
pub mod instructions;
pub(crate) mod options;
pub mod read_only;
pub mod redactor;
pub mod rules;
pub mod session_hooks;
pub mod shell;
pub mod user_hooks;
pub mod withheld;
pub mod workspace;

pub use crate::protocol::operation::Operation;
pub use authorizer::{
    Approver, Assessment, Assessor, HeadlessApprover, JUDGE_REASON, Need, UNSANDBOXED_REASON,
};
pub use grants::{AuthorizationManager, GrantKey};
pub use guardrails::{GuardError, Guardrails, Verdict};
pub use redactor::Redactor;
pub use rules::{Rule, RuleOrigin, Rules};
pub use user_hooks::{HookSet, HookSpec};
pub use workspace::{PathError, Workspace};
