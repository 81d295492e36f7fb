//! Sessions: what a session leaves on disk. `journal` appends every event
//! of a session (but the streaming text deltas, whose text the
//! `assistant_message` events repeat) to `sessions/<session-id>.jsonl` under
//! the data directory, one JSON object per line with a `ts` field.

pub mod checkpoints;
pub mod history;
pub mod journal;
pub mod prompts;
pub mod store;

pub use journal::Journal;
