//! Redaction as each payload's own business.
//!
//! Secrets are hidden at exactly two boundaries: what goes to the model
//! (the person's message, attachments, instructions files, tool results)
//! and what leaves as an event (the TUI, `--json`, the journal, logs). Both
//! call [`Redact::redact`] on a typed payload; each type says, beside its
//! definition, which of its texts come from outside Lathe and may carry a
//! key. The secret matcher itself lives in the core and is seen here only
//! as a [`Scrub`].

use std::path::PathBuf;

use serde_json::Value;

/// Hides secrets in one text.
pub trait Scrub {
    /// The text with every secret replaced, or `None` when it holds none.
    fn scrub(&self, text: &str) -> Option<String>;
}

/// A payload that can hide the secrets its texts may carry, in place.
pub trait Redact {
    fn redact(&mut self, s: &dyn Scrub);
}

/// `value`, redacted.
pub fn redacted<T: Redact>(mut value: T, s: &dyn Scrub) -> T {
    value.redact(s);
    value
}

impl Redact for String {
    fn redact(&mut self, s: &dyn Scrub) {
        if let Some(clean) = s.scrub(self) {
            *self = clean;
        }
    }
}

impl Redact for PathBuf {
    fn redact(&mut self, s: &dyn Scrub) {
        if let Some(clean) = s.scrub(&self.to_string_lossy()) {
            *self = PathBuf::from(clean);
        }
    }
}

impl<T: Redact> Redact for Option<T> {
    fn redact(&mut self, s: &dyn Scrub) {
        if let Some(v) = self {
            v.redact(s);
        }
    }
}

impl<T: Redact> Redact for Vec<T> {
    fn redact(&mut self, s: &dyn Scrub) {
        self.iter_mut().for_each(|v| v.redact(s));
    }
}

impl<T: Redact + ?Sized> Redact for Box<T> {
    fn redact(&mut self, s: &dyn Scrub) {
        (**self).redact(s);
    }
}

/// Every string of a JSON value (object keys are the tool's own names and
/// stay).
impl Redact for Value {
    fn redact(&mut self, s: &dyn Scrub) {
        match self {
            Value::String(text) => text.redact(s),
            Value::Array(items) => items.redact(s),
            Value::Object(map) => map.values_mut().for_each(|v| v.redact(s)),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A stand-in matcher for the protocol's own tests: hides `sk-…` words.
    pub(crate) struct Keys;

    impl Scrub for Keys {
        fn scrub(&self, text: &str) -> Option<String> {
            text.contains("sk-").then(|| {
                text.split(' ')
                    .map(|w| {
                        if w.starts_with("sk-") {
                            "[REDACTED]"
                        } else {
                            w
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        }
    }

    #[test]
    fn json_strings_are_redacted_at_any_depth_and_keys_stay() {
        let mut v = serde_json::json!({"sk-name": ["a sk-1", {"b": "sk-2 c"}], "n": 3});
        v.redact(&Keys);
        assert_eq!(
            v,
            serde_json::json!({"sk-name": ["a [REDACTED]", {"b": "[REDACTED] c"}], "n": 3})
        );
    }
}
