//! A tool's arguments as one typed value. Each built-in tool declares a
//! struct; what the model is told (the JSON Schema) is generated from it
//! by `schemars`, so the two cannot drift apart, and [`parse`] is the one
//! place the model's JSON becomes that struct, with an error that names
//! the field as the schema validation does.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::spec::ToolError;

/// The JSON Schema of `T`, as a tool's `parameters`: the keywords every
/// provider takes (no `$schema`, `title` or `format`; an optional field
/// is one not `required`, not one that may be `null`).
pub fn schema<T: JsonSchema>() -> Value {
    let generated = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = serde_json::to_value(generated).unwrap_or_default();
    tidy(&mut value);
    value
}

/// Drops what providers refuse or do not need from a schema (and from
/// the schemas inside it).
fn tidy(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    for keyword in ["$schema", "title", "format", "default"] {
        map.remove(keyword);
    }
    // `Option<T>` is `"type": [T, "null"]`: a field left out says the same.
    if let Some(Value::Array(types)) = map.get("type") {
        let kept: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        if let [one] = kept.as_slice() {
            map.insert("type".into(), one.clone());
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    // The schemas inside: each property's (the keys are names, not
    // keywords), and those of the keywords that hold schemas.
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        props.values_mut().for_each(tidy);
    }
    for keyword in ["items", "additionalProperties"] {
        if let Some(inner) = map.get_mut(keyword) {
            tidy(inner);
        }
    }
}

/// The model's arguments as `T`; an error names the field and what is
/// wrong with it (`missing required field `path``, `field `limit`: …`).
pub fn parse<T: DeserializeOwned>(args: &Value) -> Result<T, ToolError> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner().to_string();
        let message = match inner.strip_prefix("missing field ") {
            Some(name) if field == "." => format!("missing required field {name}"),
            Some(name) => format!("missing required field {name} in `{field}`"),
            None if field == "." => format!("arguments: {inner}"),
            None => format!("field `{field}`: {inner}"),
        };
        ToolError::InvalidArgs(message)
    })
}

/// A whole number the model may write `5` or `5.0` (JSON Schema's
/// `integer` takes both); for an optional field (with
/// `#[serde(default, deserialize_with = "whole")]`).
pub fn whole<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    use serde::Deserialize;
    use serde::de::Error;
    let Some(n) = Option::<serde_json::Number>::deserialize(d)? else {
        return Ok(None);
    };
    n.as_u64()
        .or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f <= u64::MAX as f64)
                .map(|f| f as u64)
        })
        .map(Some)
        .ok_or_else(|| D::Error::custom(format!("must be a non-negative integer, not {n}")))
}

/// A timeout the model gave in seconds, whole (`0.5` is 0, which the
/// tools raise to their least).
pub fn seconds(timeout: Option<f64>) -> Option<u64> {
    timeout.map(|t| t.max(0.0) as u64)
}

/// An optional path argument, empty or blank taken as the workspace root.
pub fn dir_or_root(path: Option<&str>) -> &str {
    path.filter(|p| !p.trim().is_empty()).unwrap_or(".")
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    /// A file to read.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Example {
        /// File path, relative to the workspace
        path: String,
        /// First line to read (1-based)
        #[serde(default, deserialize_with = "whole")]
        #[schemars(with = "Option<u64>", range(min = 1))]
        offset: Option<u64>,
        /// How
        mode: Option<Mode>,
        /// Named `format`, which is a keyword only where schemas are.
        format: Option<String>,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Append,
        Overwrite,
    }

    #[test]
    fn the_schema_is_what_providers_take() {
        assert_eq!(
            schema::<Example>(),
            json!({
                "type": "object",
                "description": "A file to read.",
                "properties": {
                    "path": {"type": "string", "description": "File path, relative to the workspace"},
                    "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)"},
                    "mode": {"type": "string", "enum": ["append", "overwrite"], "description": "How"},
                    "format": {"type": "string", "description": "Named `format`, which is a keyword only where schemas are."}
                },
                "required": ["path"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn errors_name_the_field() {
        let err = |v: Value| match parse::<Example>(&v) {
            Err(ToolError::InvalidArgs(m)) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(err(json!({})), "missing required field `path`");
        assert!(
            err(json!({"path": "a", "offset": "x"})).starts_with("field `offset`: invalid type"),
            "{}",
            err(json!({"path": "a", "offset": "x"}))
        );
        assert!(
            err(json!({"path": "a", "mode": "sideways"}))
                .starts_with("field `mode`: unknown variant")
        );
        assert!(err(json!({"path": "a", "extra": 1})).contains("unknown field `extra`"));
        let ok: Example =
            parse(&json!({"path": "a", "offset": 3.0, "mode": "append", "format": "x"})).unwrap();
        assert_eq!((ok.path.as_str(), ok.offset), ("a", Some(3)));
        assert!(matches!(ok.mode, Some(Mode::Append)) && ok.format.as_deref() == Some("x"));
        assert!(err(json!({"path": "a", "offset": 2.5})).contains("non-negative integer"));
    }
}
