//! `Secret`: an API key that cannot leak by accident. Its `Debug` and
//! `Display` print `[redacted]`, it has no `Serialize`, and the value is
//! reachable only through `expose`, which call sites use to build a header.

use std::fmt;

#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a non-empty value; blank values are treated as absent.
    pub fn new(value: impl Into<String>) -> Option<Self> {
        let value = value.into().trim().to_string();
        (!value.is_empty()).then_some(Self(value))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_its_value() {
        let s = Secret::new("sk-live-123").unwrap();
        assert_eq!(format!("{s} {s:?}"), "[redacted] Secret([redacted])");
        assert_eq!(s.expose(), "sk-live-123");
        assert!(Secret::new("  ").is_none());
    }
}
