//! Policy: what a tool call may do, decided before it runs and checked after.
//!
//! `workspace` keeps paths inside the workspace; `shell_rules` holds the
//! command denylist; `guardrails` turns both into a verdict per call;
//! `authorizer` maps the approval mode and a tool's effect to a requirement
//! and defines the `Approver` seam; `grants` holds one conversation's
//! approvals; `hooks` runs after a call (secret redaction). Policy knows
//! nothing of terminals and nothing of tool implementations.

pub mod authorizer;
pub mod grants;
pub mod guardrails;
pub mod hooks;
pub mod shell_rules;
pub mod workspace;

pub use authorizer::{ApprovalRequest, Approver, HeadlessApprover, Requirement};
pub use grants::{AuthorizationManager, GrantKind};
pub use guardrails::{CallFacts, GuardError, Guardrails, Verdict};
pub use hooks::{AfterHook, HookOutcome, Redactor};
pub use workspace::{PathError, Workspace};
