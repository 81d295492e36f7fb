//! The `lathe` binary's tests, one binary: headless runs, the terminal
//! UI in a real terminal (tmux), crashes, MCP servers and every model
//! wire, driven through the binary. The scripted mock LLM, the tmux pane
//! and the MCP test server come from `lathe-test-support`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

pub use lathe_test_support::{mock_llm, places};

mod acp;
mod agents;
mod control;
mod crash;
mod exec_cli;
mod init;
mod mcp;
mod mcp_sdk;
mod models;
mod session_hooks;
mod skills;
mod startup;
mod tui_e2e;
