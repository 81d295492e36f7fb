//! What Lathe's test suites share, compiled once: the scripted mock LLM
//! (a real HTTP server speaking the three wires), places outside the
//! workspace a sandboxed command sees, the tmux pane driver for the
//! terminal end-to-end tests, a setup that runs the `lathe` binary as a
//! script does (`run`), and the MCP test server (a binary, found or
//! built by [`mcp_server::bin`]). Not published; every crate's tests may
//! use it, and it uses no Lathe crate, so each crate's tests run alone
//! (`cargo test -p CRATE`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod mcp_server;
pub mod mock_llm;
pub mod npm;
pub mod pane;
pub mod places;
pub mod run;
