//! The core's tests, one binary: the suites are modules, the support
//! (the scripted mock LLM, the agent harness, the cache simulation) is
//! shared from `support/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/cache_sim.rs"]
mod cache_sim;
#[path = "support/harness.rs"]
mod harness;
#[path = "support/mock_llm.rs"]
mod mock_llm;
#[path = "support/places.rs"]
mod places;

mod agent_loop;
mod background;
mod builtin_tools;
mod caching;
mod consent;
mod consent_pipeline;
mod judge;
mod localhost;
mod provider_streams;
mod sandbox;
mod subagents;
mod together;
mod undo;
