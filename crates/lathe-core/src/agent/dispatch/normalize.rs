//! Stage 8 of the pipeline: one result shape for every call, through the
//! model's boundary (secrets and what the read rules cover hidden, before
//! any cut could halve one), cut to what the model may see.

use std::time::Instant;

use serde_json::{Value, json};

use super::Outcome;
use crate::agent::Shared;
use crate::protocol::{ResultMetadata, ToolResult, ToolStatus};
use crate::tools::ToolError;
use crate::tools::truncate::{MAX_TOOL_RESULT_BYTES, truncate_sized};

/// Stage 8: one result shape, through the model's boundary (secrets
/// hidden, before any cut could halve one), cut to what the model may see;
/// also returns the text the model receives.
/// The result is serialized once (twice when it has to be cut).
pub(super) fn normalize(
    shared: &Shared,
    call_id: &str,
    outcome: Outcome,
    started: Instant,
) -> (ToolResult, String) {
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let error = |e: &ToolError| json!({ "error": e.model_message() });
    let (status, mut value, note, error_kind) = match outcome {
        Outcome::Ran { value, note } => (ToolStatus::Ok, value, note, None),
        Outcome::Failed(e) => (
            ToolStatus::Error,
            error(&e),
            None,
            Some(e.kind().to_string()),
        ),
        Outcome::Denied(e) => (
            ToolStatus::Denied,
            error(&e),
            None,
            Some(e.kind().to_string()),
        ),
    };
    let tool_cut = value.get("truncated").and_then(Value::as_bool) == Some(true);
    if let Some(note) = note {
        match value.as_object_mut() {
            Some(map) => {
                map.insert("guardrail_note".into(), Value::String(note));
            }
            None => value = json!({ "result": value, "guardrail_note": note }),
        }
    }
    shared.to_model(&mut value);
    let mut text = serde_json::to_string(&value).unwrap_or_default();
    let cut = truncate_sized(value, text.len(), MAX_TOOL_RESULT_BYTES);
    if cut.truncated {
        text = serde_json::to_string(&cut.value).unwrap_or_default();
    }
    let result = ToolResult {
        call_id: call_id.to_string(),
        status,
        content: cut.value,
        metadata: ResultMetadata {
            bytes: cut.original_bytes,
            truncated: cut.truncated || tool_cut,
            duration_ms,
            mime: None,
            error_kind,
            redactions: text.matches(crate::policy::redactor::REDACTED).count(),
        },
    };
    (result, text)
}
