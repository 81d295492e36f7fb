//! Markdown with YAML front matter, as skills (`SKILL.md`) and agent
//! definitions are written: `---`, YAML, `---`, then the body. Read as
//! leniently as the Agent Skills guide asks: a value holding an unquoted
//! `: ` (the most common reason skills vanish elsewhere) is read as the
//! text it was meant to be. Anything else malformed is an error naming
//! what is wrong, never a panic.

use std::collections::BTreeMap;

use serde_json::Value;

/// A file's front matter and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub fields: BTreeMap<String, Value>,
    pub body: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FrontMatterError {
    #[error("no front matter (the file must start with a `---` line)")]
    Missing,
    #[error("the front matter is not closed (no `---` line after it)")]
    Unclosed,
    #[error("the front matter is not YAML: {0}")]
    Yaml(String),
    #[error("the front matter is not a mapping of fields")]
    NotAMapping,
}

/// The most front matter read (a description is at most 1,024
/// characters; a few fields beside it).
const MAX_FRONT: usize = 64 * 1024;

impl Document {
    /// A text field, trimmed; `None` when absent or empty. A number or a
    /// boolean written where text belongs is read as its text.
    pub fn text(&self, key: &str) -> Option<String> {
        let s = match self.fields.get(key)? {
            Value::String(s) => s.trim().to_string(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => return None,
        };
        (!s.is_empty()).then_some(s)
    }

    /// A list field, written as a YAML list or as one string split on
    /// spaces and commas (`allowed-tools: Read Grep`, `tools: a, b`).
    pub fn list(&self, key: &str) -> Vec<String> {
        match self.fields.get(key) {
            Some(Value::String(s)) => s
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect(),
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| match v {
                    Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// A mapping of text to text (`metadata`); other values are left out.
    pub fn map(&self, key: &str) -> BTreeMap<String, String> {
        let Some(Value::Object(m)) = self.fields.get(key) else {
            return BTreeMap::new();
        };
        m.iter()
            .filter_map(|(k, v)| match v {
                Value::String(s) => Some((k.clone(), s.clone())),
                Value::Number(n) => Some((k.clone(), n.to_string())),
                Value::Bool(b) => Some((k.clone(), b.to_string())),
                _ => None,
            })
            .collect()
    }
}

/// Splits `text` into its front matter and body, and reads the front
/// matter.
pub fn parse(text: &str) -> Result<Document, FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().ok_or(FrontMatterError::Missing)?;
    if first.trim_end() != "---" {
        return Err(FrontMatterError::Missing);
    }
    let mut front = String::new();
    let mut closed = false;
    for line in lines.by_ref() {
        let bare = line.trim_end();
        if bare == "---" || bare == "..." {
            closed = true;
            break;
        }
        front.push_str(line);
        if front.len() > MAX_FRONT {
            return Err(FrontMatterError::Yaml(format!(
                "longer than {} KiB",
                MAX_FRONT / 1024
            )));
        }
    }
    if !closed {
        return Err(FrontMatterError::Unclosed);
    }
    let body: String = lines.collect();
    let fields = match read_yaml(&front) {
        Ok(f) => f,
        Err(first) => read_yaml(&quote_loose_values(&front)).map_err(|_| first)?,
    };
    Ok(Document {
        fields,
        body: body.trim_start_matches(['\n', '\r']).to_string(),
    })
}

fn read_yaml(front: &str) -> Result<BTreeMap<String, Value>, FrontMatterError> {
    if front.trim().is_empty() {
        return Ok(BTreeMap::new());
    }
    // `y`, `no`, `on` stay text: only `true` and `false` are booleans.
    let options = serde_saphyr::options! { strict_booleans: true };
    let value: Value = serde_saphyr::from_str_with_options(front, options).map_err(|e| {
        // The first line of the parser's message: where and what.
        let said = e.to_string();
        FrontMatterError::Yaml(said.lines().next().unwrap_or("unreadable").to_string())
    })?;
    match value {
        Value::Object(m) => Ok(m.into_iter().collect()),
        Value::Null => Ok(BTreeMap::new()),
        _ => Err(FrontMatterError::NotAMapping),
    }
}

/// `description: Use when: X` is not YAML (a second `: ` on the line);
/// the guide asks for it to be read as the text it was meant to be: each
/// top-level `key: value` whose plain value holds `: ` or ` #` is
/// quoted.
fn quote_loose_values(front: &str) -> String {
    let mut out = String::with_capacity(front.len() + 16);
    for line in front.split_inclusive('\n') {
        let (content, end) = match line.strip_suffix('\n') {
            Some(c) => (c.strip_suffix('\r').unwrap_or(c), "\n"),
            None => (line, ""),
        };
        if let Some(quoted) = quoted_line(content) {
            out.push_str(&quoted);
            out.push_str(end);
        } else {
            out.push_str(line);
        }
    }
    out
}

fn quoted_line(line: &str) -> Option<String> {
    let (key, value) = line.split_once(": ")?;
    let plain_key = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let value = value.trim();
    let starts_plain = !value.starts_with(['\'', '"', '|', '>', '[', '{', '&', '*', '!']);
    (plain_key && starts_plain && (value.contains(": ") || value.contains(" #")))
        .then(|| format!("{key}: '{}'", value.replace('\'', "''")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fields_and_body_are_read() {
        let doc = parse(
            "---\nname: pdf\ndescription: Fill PDF forms.\nallowed-tools: Bash(git:*) Read\nmetadata:\n  author: me\n  version: 1.0\n---\n\n# PDF\nDo it.\n",
        )
        .unwrap();
        assert_eq!(doc.text("name").as_deref(), Some("pdf"));
        assert_eq!(doc.list("allowed-tools"), ["Bash(git:*)", "Read"]);
        assert_eq!(doc.map("metadata")["version"], "1.0");
        assert_eq!(doc.body, "# PDF\nDo it.\n");
    }

    #[test]
    fn an_unquoted_colon_in_a_value_is_read_as_text() {
        let doc = parse(
            "---\nname: review\ndescription: Use when: the person asks for a review # or a look\n---\nbody",
        )
        .unwrap();
        assert_eq!(
            doc.text("description").as_deref(),
            Some("Use when: the person asks for a review # or a look")
        );
    }

    #[test]
    fn what_is_not_front_matter_says_why() {
        assert_eq!(parse("# no front matter"), Err(FrontMatterError::Missing));
        assert_eq!(parse("---\nname: x\n"), Err(FrontMatterError::Unclosed));
        assert_eq!(
            parse("---\n- a\n- b\n---\n"),
            Err(FrontMatterError::NotAMapping)
        );
        assert!(matches!(
            parse("---\nname: [unclosed\n---\n"),
            Err(FrontMatterError::Yaml(_))
        ));
        // CRLF and a byte-order mark are read as any editor writes them.
        let doc = parse("\u{feff}---\r\nname: x\r\ndescription: y\r\n---\r\nbody\r\n").unwrap();
        assert_eq!(doc.text("description").as_deref(), Some("y"));
    }

    proptest! {
        /// Whatever the file holds (short, empty, non-ASCII, huge), it is
        /// read or refused with a reason, never a panic; a body after
        /// well-formed front matter comes back whole.
        #[test]
        fn any_text_is_read_or_refused(front in ".{0,300}", body in ".{0,300}") {
            let _ = parse(&front);
            let _ = parse(&format!("---\n{front}\n---\n{body}"));
            let doc = parse(&format!("---\nname: x\n---\n{body}"));
            prop_assert!(doc.is_ok());
            if let Ok(doc) = doc {
                prop_assert_eq!(doc.body, body.trim_start_matches(['\n', '\r']).to_string());
            }
        }

        #[test]
        fn a_description_with_colons_survives(words in "[a-z :#,.]{1,80}") {
            let text = format!("---\nname: x\ndescription: a {words}\n---\n");
            if let Ok(doc) = parse(&text) {
                let d = doc.text("description").unwrap_or_default();
                prop_assert!(d.starts_with('a'));
            }
        }
    }
}
