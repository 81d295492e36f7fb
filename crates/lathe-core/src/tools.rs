//! Tools: what the model can call.
//!
//! `spec` defines the `Tool` trait, its context and `ToolError`;
//! `registry` holds tools by name and resolves the names models send;
//! `validate` checks arguments against each tool's JSON Schema; `truncate`
//! cuts results to what the model may see; `builtin` has the file and shell
//! tools. By convention a tool whose object result carries
//! `"truncated": true` has cut its own output (the pipeline reports it).

pub mod args;
pub mod builtin;
pub mod change;
pub mod fs;
pub mod jobs;
pub mod preview;
pub mod registry;
pub mod spec;
pub mod tool_search;
pub mod toolset;
pub mod truncate;
pub mod typed;
pub mod validate;

pub use builtin::BuiltinSettings;
pub use registry::{RegisteredTool, ToolRegistry};
pub use spec::{Asked, Prepared, ProgressSink, Together, Tool, ToolContext, ToolError};
pub use toolset::{ToolSource, Toolset};
