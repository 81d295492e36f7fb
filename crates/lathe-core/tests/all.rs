//! The core's tests, one binary: the suites are modules; the agent
//! harness and the cache simulation are in `support/`, the scripted mock
//! LLM in `lathe-test-support`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/cache_sim.rs"]
mod cache_sim;
#[path = "support/harness.rs"]
mod harness;
pub use lathe_test_support::{mock_llm, places};

mod agent_loop;
mod background;
mod builtin_tools;
mod caching;
mod consent;
mod consent_pipeline;
mod judge;
mod localhost;
mod provider_streams;
mod questions_plans_steering;
mod sandbox;
mod subagents;
mod undo;
