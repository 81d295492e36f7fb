//! The terminal UI: a full-screen ratatui + crossterm app over the agent.
//!
//! Only this module imports ratatui or crossterm. It talks to the core
//! through `protocol` alone: `Op`s out, `AgentEvent`s in.

pub mod app;
pub mod components;
pub mod highlight;
pub mod markdown;
pub mod theme;
pub mod wrap;
