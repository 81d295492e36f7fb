//! The `after_tool_call` stage: hooks that see a tool's result before the
//! model does. They may observe it, transform it, or reject it.
//!
//! The built-in hook is [`Redactor`]: it replaces secrets in results with
//! `[REDACTED]`: the configured API keys verbatim, and strings shaped like
//! well-known credentials (OpenAI, Anthropic, GitHub, AWS, Slack tokens and
//! PEM private keys).

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

pub const REDACTED: &str = "[REDACTED]";

/// What a hook decided.
#[derive(Debug, Clone, PartialEq)]
pub enum HookOutcome {
    /// Keep the (possibly transformed) result.
    Continue,
    /// Withhold the result from the model, with a reason.
    Reject { reason: String },
}

/// A hook run on every successful tool result, in registration order.
pub trait AfterHook: Send + Sync {
    fn name(&self) -> &str;
    fn after_tool_call(&self, tool: &str, content: &mut Value) -> HookOutcome;
}

static SECRET_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"sk-ant-[A-Za-z0-9_\-]{20,}",
        r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}",
        r"gh[pousr]_[A-Za-z0-9]{30,}",
        r"github_pat_[A-Za-z0-9_]{30,}",
        r"AKIA[0-9A-Z]{16}",
        r"xox[abposr]-[A-Za-z0-9\-]{10,}",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
    ]
    .iter()
    .filter_map(|p| Regex::new(p).ok())
    .collect()
});

/// Redacts known secret values and credential-shaped strings.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    /// `secrets` are exact values to hide (API keys); values shorter than 8
    /// characters are ignored, as hiding them would mangle ordinary text.
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let secrets = secrets.into_iter().filter(|s| s.len() >= 8).collect();
        Self { secrets }
    }

    /// Redacts one string; returns `None` when nothing changed.
    pub fn redact_str(&self, text: &str) -> Option<String> {
        let mut out: Option<String> = None;
        for secret in &self.secrets {
            let current = out.as_deref().unwrap_or(text);
            if current.contains(secret.as_str()) {
                out = Some(current.replace(secret.as_str(), REDACTED));
            }
        }
        for re in SECRET_PATTERNS.iter() {
            let current = out.as_deref().unwrap_or(text);
            if re.is_match(current) {
                out = Some(re.replace_all(current, REDACTED).into_owned());
            }
        }
        out
    }

    /// Redacts every string in `value`, in place.
    pub fn redact_value(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                if let Some(r) = self.redact_str(s) {
                    *s = r;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_value(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.redact_value(v)),
            _ => {}
        }
    }
}

impl AfterHook for Redactor {
    fn name(&self) -> &str {
        "redact_secrets"
    }

    fn after_tool_call(&self, _tool: &str, content: &mut Value) -> HookOutcome {
        self.redact_value(content);
        HookOutcome::Continue
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn configured_keys_and_credential_shapes_are_redacted() {
        let r = Redactor::new(["my-very-secret-key-123".to_string(), "short".to_string()]);
        let mut v = json!({
            "stdout": "OPENAI_API_KEY=my-very-secret-key-123\nshort stays",
            "list": ["token sk-abcdefghijklmnopqrstuvwxyz0123", "AKIAABCDEFGHIJKLMNOP"],
            "n": 3
        });
        assert_eq!(
            r.after_tool_call("exec_shell", &mut v),
            HookOutcome::Continue
        );
        let s = v.to_string();
        assert!(!s.contains("my-very-secret-key-123"), "{s}");
        assert!(!s.contains("sk-abcdefghij"), "{s}");
        assert!(!s.contains("AKIAABCDEFGHIJKLMNOP"), "{s}");
        assert!(s.contains("short stays"), "{s}");
        assert_eq!(v["n"], 3);
    }

    #[test]
    fn private_keys_are_redacted_whole() {
        let r = Redactor::default();
        let pem = "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\nb";
        assert_eq!(r.redact_str(pem).unwrap(), "a\n[REDACTED]\nb");
        assert_eq!(r.redact_str("nothing here"), None);
    }
}
