//! Short, human forms of sizes, durations and tool arguments, shared by
//! both front ends (the headless printer and the terminal UI).

use std::time::Duration;

use serde_json::Value;

/// `512 B`, `2.0 KiB`, `3.1 MiB`.
pub fn bytes(n: usize) -> String {
    match n {
        0..1024 => format!("{n} B"),
        1024..1_048_576 => format!("{:.1} KiB", n as f64 / 1024.0),
        _ => format!("{:.1} MiB", n as f64 / 1_048_576.0),
    }
}

/// `12 ms`, `1.5 s`, `2m05s`.
/// Dollars as a person reads them: cents for most sums, tenths of a cent
/// for small ones.
pub fn dollars(usd: f64) -> String {
    if usd <= 0.0 {
        "$0.00".into()
    } else if usd < 0.001 {
        "<$0.001".into()
    } else if usd < 1.0 {
        format!("${usd:.3}")
    } else {
        format!("${usd:.2}")
    }
}

/// A count of tokens: `950`, `12.3k`, `1.2M`.
pub fn count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

pub fn duration_ms(ms: u64) -> String {
    match ms {
        0..1000 => format!("{ms} ms"),
        1000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => {
            let d = Duration::from_millis(ms);
            format!("{}m{:02}s", d.as_secs() / 60, d.as_secs() % 60)
        }
    }
}

/// A lifetime in whole units: `45 s`, `5 min`, `1 h 30 min`, `24 h`.
pub fn lifetime(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 if secs.is_multiple_of(60) => format!("{} min", secs / 60),
        60..3600 => format!("{} min {} s", secs / 60, secs % 60),
        _ if secs.is_multiple_of(3600) => format!("{} h", secs / 3600),
        _ => format!("{} h {} min", secs / 3600, (secs % 3600) / 60),
    }
}

/// How long ago, roughly: `just now`, `5 min ago`, `3 h ago`, `2 days ago`.
pub fn ago(secs: u64) -> String {
    match secs {
        0..60 => "just now".to_string(),
        60..3600 => format!("{} min ago", secs / 60),
        3600..86_400 => format!("{} h ago", secs / 3600),
        86_400..172_800 => "yesterday".to_string(),
        _ => format!("{} days ago", secs / 86_400),
    }
}

pub use super::text::shorten_chars;

/// The key argument of a tool call on one line: its command or path, else
/// the arguments as JSON (nothing for `{}`).
pub fn key_argument(args: &Value, max: usize) -> String {
    let moved = match (
        args.get("from").and_then(Value::as_str),
        args.get("to").and_then(Value::as_str),
    ) {
        (Some(from), Some(to)) => Some(format!("{from} → {to}")),
        _ => None,
    };
    // A search by its pattern, and where it looks.
    let searched = args.get("pattern").and_then(Value::as_str).map(|p| {
        // Blanks at its ends are part of it: quoted, so they show.
        let mut text = if p.trim() == p && !p.is_empty() {
            p.to_string()
        } else {
            format!("{p:?}")
        };
        if let Some(path) = args.get("path").and_then(Value::as_str) {
            text.push_str(&format!(" in {path}"));
        }
        if let Some(glob) = args.get("glob").and_then(Value::as_str) {
            text.push_str(&format!(" ({glob})"));
        }
        text
    });
    let text = args
        .get("command")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or(searched)
        .or_else(|| args.get("path").and_then(Value::as_str).map(str::to_string))
        .or(moved)
        .or_else(|| {
            ["question", "description", "handle"]
                .iter()
                .find_map(|k| args.get(*k).and_then(Value::as_str))
                .map(str::to_string)
        })
        // A plan by its length (the plan itself is pinned on screen).
        .or_else(|| {
            let n = args.get("steps")?.as_array()?.len();
            Some(format!("{n} step{}", if n == 1 { "" } else { "s" }))
        })
        .unwrap_or_else(|| match args {
            Value::Object(m) if m.is_empty() => String::new(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    // One line, nothing hidden: the escape sequences and invisible
    // characters a name or a command may hold are named.
    let text = text.replace('\n', " ⏎ ");
    shorten_chars(&crate::visible::name(&text), max)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn forms_are_short() {
        assert_eq!(bytes(2048), "2.0 KiB");
        assert_eq!(duration_ms(1500), "1.5 s");
        assert_eq!(duration_ms(125_000), "2m05s");
        assert_eq!(key_argument(&json!({"command": "a\nb"}), 80), "a ⏎ b");
        assert_eq!(key_argument(&json!({}), 80), "");
        assert_eq!(
            key_argument(
                &json!({"pattern": "top_words|old", "path": "src", "glob": "*.py"}),
                80
            ),
            "top_words|old in src (*.py)"
        );
        assert_eq!(key_argument(&json!({"pattern": "**/*.py"}), 80), "**/*.py");
        assert_eq!(key_argument(&json!({"pattern": "def "}), 80), "\"def \"");
        assert_eq!(
            key_argument(&json!({"from": "a.rs", "to": "src/b.rs"}), 80),
            "a.rs → src/b.rs"
        );
        assert_eq!(
            key_argument(&json!({"path": "a\u{1b}[2J\u{200B}"}), 80),
            "a⟨U+001B⟩[2J⟨U+200B⟩"
        );
        assert_eq!(
            key_argument(&json!({"path": "x".repeat(300)}), 160)
                .chars()
                .count(),
            160
        );
    }
}
