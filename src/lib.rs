//! Lathe: a terminal coding assistant. A person pairs with an LLM that
//! reads, edits and runs code in a workspace through tools; every dangerous
//! call goes through approval; every call is visible as an event.
//!
//! Architecture (floors, top to bottom; a module uses only what stands
//! below it):
//!
//! ```text
//! 4  exec (headless front end), tui (the terminal UI), launch (their wiring)
//! 3  agent: turn (the loop), dispatch (the pipeline), approval, prompt
//! 2  tools: registry, toolset, validate, truncate, builtin/   mcp (rmcp tool source)
//!    session: journal
//! 1  policy: workspace, shell_rules, guardrails, authorizer, grants, hooks
//!    sandbox (Landlock, process containment)    provider: openai, anthropic, http, sse
//!    config    cli    protocol    secret
//! ```
//!
//! `protocol` (`Op` in, `AgentEvent` out) is the only contract between the
//! core and its front ends. The tool-call pipeline is resolve ▸ parse ▸
//! validate ▸ guardrail ▸ authorize ▸ execute ▸ after-hooks ▸ normalize
//! (see `agent::dispatch`).

pub mod agent;
pub mod cli;
pub mod config;
pub mod exec;
pub mod launch;
pub mod mcp;
pub mod policy;
pub mod protocol;
pub mod provider;
pub mod sandbox;
pub mod secret;
pub mod session;
pub mod tools;
pub mod tui;
