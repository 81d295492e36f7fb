//! An MCP tool result in the one result shape: text joined; structured
//! content as JSON (alongside text, or alone); images, audio, embedded
//! blobs and links as short placeholders with their MIME type and size;
//! `isError` as an error the model sees.

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::tools::ToolError;

pub(super) fn map(server: &str, result: CallToolResult) -> Result<Value, ToolError> {
    // Read through JSON: the content kinds are many and grow.
    let raw = serde_json::to_value(&result).unwrap_or(Value::Null);
    let mut parts: Vec<String> = Vec::new();
    for block in raw["content"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        parts.push(block_text(block));
    }
    let text = parts.join("\n");
    if result.is_error == Some(true) {
        let why = if text.trim().is_empty() {
            "the tool reported an error without saying why".to_string()
        } else {
            text
        };
        return Err(ToolError::ExecutionFailed(format!(
            "MCP server {server}: {why}"
        )));
    }
    let mut out = json!({ "content": text });
    if let Some(structured) = result.structured_content {
        out["structured"] = structured;
    }
    Ok(out)
}

/// The size a base64 text decodes to.
fn decoded_size(b64: &str) -> usize {
    let len = b64.trim_end_matches('=').len();
    len * 3 / 4
}

fn block_text(block: &Value) -> String {
    let s = |k: &str| block[k].as_str().unwrap_or("");
    match s("type") {
        "text" => s("text").to_string(),
        "image" | "audio" => format!(
            "[{} {}, {} bytes]",
            s("type"),
            s("mimeType"),
            decoded_size(s("data"))
        ),
        "resource" => {
            let r = &block["resource"];
            let uri = r["uri"].as_str().unwrap_or("");
            let mime = r["mimeType"].as_str().unwrap_or("");
            match (r["text"].as_str(), r["blob"].as_str()) {
                (Some(text), _) => format!("[resource {uri}]\n{text}"),
                (None, Some(blob)) => {
                    format!("[resource {uri}: {mime}, {} bytes]", decoded_size(blob))
                }
                _ => format!("[resource {uri}]"),
            }
        }
        "resource_link" => format!(
            "[resource link {}{}]",
            s("uri"),
            match block["mimeType"].as_str() {
                Some(m) => format!(" ({m})"),
                None => String::new(),
            }
        ),
        other => format!("[{other} content]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(v: Value) -> CallToolResult {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn content_kinds_become_text_and_placeholders() {
        let r = result(json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "aGVsbG8gd29ybGQ=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/octet-stream", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "file:///c", "name": "c", "mimeType": "text/x"}
        ], "structuredContent": {"n": 3}}));
        let v = map("s", r).unwrap();
        assert_eq!(
            v["content"],
            "hello\n[image image/png, 11 bytes]\n[resource file:///a.txt]\ninside\n\
             [resource file:///b.bin: application/octet-stream, 3 bytes]\n[resource link file:///c (text/x)]"
        );
        assert_eq!(v["structured"], json!({"n": 3}));
    }

    #[test]
    fn is_error_is_an_error() {
        let r =
            result(json!({"content": [{"type": "text", "text": "no such city"}], "isError": true}));
        let e = map("weather", r).unwrap_err();
        assert!(e.to_string().contains("no such city"), "{e}");
    }
}
