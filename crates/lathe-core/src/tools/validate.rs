//! Argument validation against a tool's JSON Schema, with the `jsonschema`
//! crate. Validators are compiled once, when a tool is registered; an error
//! names the failing field and the reason, so the model can fix its call.

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use super::spec::ToolError;

/// At most this many problems are reported for one call.
const MAX_REPORTED: usize = 4;

/// A compiled schema.
pub struct ArgValidator {
    inner: jsonschema::Validator,
}

impl std::fmt::Debug for ArgValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArgValidator")
    }
}

impl ArgValidator {
    /// Compiles `schema`; an invalid schema is reported with its reason.
    pub fn compile(schema: &Value) -> Result<Self, String> {
        jsonschema::validator_for(schema)
            .map(|inner| Self { inner })
            .map_err(|e| e.to_string())
    }

    /// Checks `args`; the error lists each failing field and why.
    pub fn validate(&self, args: &Value) -> Result<(), ToolError> {
        let problems: Vec<String> = self.inner.iter_errors(args).map(describe).collect();
        if problems.is_empty() {
            return Ok(());
        }
        let mut msg = problems
            .iter()
            .take(MAX_REPORTED)
            .cloned()
            .collect::<Vec<_>>()
            .join("; ");
        if problems.len() > MAX_REPORTED {
            msg.push_str(&format!("; and {} more", problems.len() - MAX_REPORTED));
        }
        Err(ToolError::InvalidArgs(msg))
    }
}

fn describe(err: jsonschema::ValidationError<'_>) -> String {
    let path = err.instance_path().to_string();
    let field = pointer_to_field(&path);
    match err.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            let full = if field.is_empty() {
                name
            } else {
                format!("{field}.{name}")
            };
            format!("missing required field `{full}`")
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let names = unexpected
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ");
            format!("unknown field {names}")
        }
        _ if field.is_empty() => format!("arguments: {err}"),
        _ => format!("field `{field}`: {err}"),
    }
}

/// `/a/0/b` → `a[0].b`.
fn pointer_to_field(pointer: &str) -> String {
    let mut out = String::new();
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "timeout": {"type": "number", "minimum": 1},
                "items": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn err(args: Value) -> String {
        match ArgValidator::compile(&schema()).unwrap().validate(&args) {
            Err(ToolError::InvalidArgs(m)) => m,
            other => panic!("expected InvalidArgs, got {other:?}"),
        }
    }

    #[test]
    fn valid_arguments_pass() {
        let v = ArgValidator::compile(&schema()).unwrap();
        assert!(v.validate(&json!({"path": "a", "timeout": 3})).is_ok());
    }

    #[test]
    fn errors_name_the_field_and_the_reason() {
        assert_eq!(err(json!({})), "missing required field `path`");
        let m = err(json!({"path": 42}));
        assert!(
            m.starts_with("field `path`:") && m.contains("string"),
            "{m}"
        );
        let m = err(json!({"path": "a", "timeout": 0}));
        assert!(
            m.starts_with("field `timeout`:") && m.contains("minimum"),
            "{m}"
        );
        let m = err(json!({"path": "a", "items": [{"n": 1}, {"n": "x"}]}));
        assert!(m.starts_with("field `items[1].n`:"), "{m}");
        let m = err(json!({"path": "a", "file_path": "b"}));
        assert_eq!(m, "unknown field `file_path`");
    }

    #[test]
    fn a_non_object_is_reported_at_the_root() {
        let m = err(json!("just a string"));
        assert!(m.starts_with("arguments:") && m.contains("object"), "{m}");
    }

    #[test]
    fn invalid_schemas_are_reported() {
        assert!(ArgValidator::compile(&json!({"type": 12})).is_err());
    }
}
