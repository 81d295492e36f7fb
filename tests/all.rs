//! The `lathe` binary's tests, one binary: headless runs, the terminal
//! UI in a real terminal (tmux), crashes, MCP servers and every model
//! wire, driven through the binary. The scripted mock LLM is the core's
//! (`crates/lathe-core/tests/support`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../crates/lathe-core/tests/support/mock_llm.rs"]
mod mock_llm;
#[path = "../crates/lathe-core/tests/support/places.rs"]
mod places;

mod crash;
mod exec_cli;
mod mcp;
mod models;
mod startup;
mod tui_e2e;
