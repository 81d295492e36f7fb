//! What a server offers beside tools: its prompts, which the person sends
//! as `/server:prompt ARGS` (the prompt's messages become the message the
//! model reads), and its resources, which the person mentions as
//! `@server:uri` (their contents go along with the message, as a file's
//! do). Both lists are read at the start and again when the server says
//! they changed (`prompts/list_changed`, `resources/list_changed`).

use serde_json::{Map, Value};

use crate::protocol::visible::one_line as line;
use crate::protocol::{McpPrompt, McpPromptArgument, McpResource};

/// The most of one resource that goes along with a message.
pub const MAX_RESOURCE: usize = 256 * 1024;
/// How many resources go along with one message, and how much of them.
pub const MAX_RESOURCES: usize = 10;
pub const MAX_RESOURCES_TOTAL: usize = 1024 * 1024;
/// The most of a prompt's text that is sent.
pub const MAX_PROMPT: usize = 256 * 1024;
/// How many prompts and resources of a server are kept (offered for `/`
/// and `@`).
const MAX_LISTED: usize = 1000;

/// A server's prompts and resources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Offers {
    pub prompts: Vec<McpPrompt>,
    pub resources: Vec<McpResource>,
}

/// What the server offers, as its capabilities say (a list it fails to
/// give is empty, and logged).
pub(super) async fn list(session: &super::client::Session) -> Offers {
    let caps = session.peer_info().map(|i| i.capabilities.clone());
    let mut out = Offers::default();
    if caps.as_ref().is_some_and(|c| c.prompts.is_some()) {
        match session.list_all_prompts().await {
            Ok(prompts) => {
                out.prompts = prompts
                    .into_iter()
                    .filter_map(|p| serde_json::to_value(p).ok())
                    .filter_map(|p| prompt_of(&p))
                    .collect();
            }
            Err(e) => tracing::warn!(error = %e, "cannot list an MCP server's prompts"),
        }
    }
    if caps.as_ref().is_some_and(|c| c.resources.is_some()) {
        match session.list_all_resources().await {
            Ok(resources) => {
                out.resources = resources
                    .into_iter()
                    .filter_map(|r| serde_json::to_value(r).ok())
                    .filter_map(|r| resource_of(&r))
                    .collect();
            }
            Err(e) => tracing::warn!(error = %e, "cannot list an MCP server's resources"),
        }
    }
    out.prompts.sort_by(|a, b| a.name.cmp(&b.name));
    out.resources.sort_by(|a, b| a.uri.cmp(&b.uri));
    out.prompts.truncate(MAX_LISTED);
    out.resources.truncate(MAX_LISTED);
    out
}

fn text(v: &Value, k: &str) -> String {
    v.get(k)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn prompt_of(v: &Value) -> Option<McpPrompt> {
    let name = text(v, "name");
    // A name the person can type after `/server:`.
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    Some(McpPrompt {
        name,
        description: line(&text(v, "description")),
        arguments: v
            .get("arguments")
            .and_then(Value::as_array)
            .map(|args| {
                args.iter()
                    .filter(|a| {
                        let n = text(a, "name");
                        !n.is_empty() && !n.chars().any(|c| c.is_whitespace() || c.is_control())
                    })
                    .map(|a| McpPromptArgument {
                        name: text(a, "name"),
                        description: line(&text(a, "description")),
                        required: a.get("required").and_then(Value::as_bool) == Some(true),
                    })
                    .collect()
            })
            .unwrap_or_default(),
    })
}

fn resource_of(v: &Value) -> Option<McpResource> {
    let uri = text(v, "uri");
    if uri.is_empty() || uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    Some(McpResource {
        uri,
        name: line(&text(v, "name")),
        description: line(&text(v, "description")),
    })
}

/// How `/server:prompt` is used.
pub fn usage(server: &str, p: &McpPrompt) -> String {
    let mut out = format!("/{server}:{}", p.name);
    for a in &p.arguments {
        let name = a.name.to_uppercase();
        if a.required {
            out.push_str(&format!(" {name}"));
        } else {
            out.push_str(&format!(" [{name}]"));
        }
    }
    out
}

/// The arguments the person gave after `/server:prompt`: `NAME=value`
/// pairs (quoted as a shell quotes), or values in the prompt's order (the
/// last taking the rest of the line); a required one may be missing here
/// ([`check_complete`] says how the prompt is used).
pub fn given_arguments(
    server: &str,
    p: &McpPrompt,
    given: &str,
) -> Result<Map<String, Value>, String> {
    let words = shlex::split(given)
        .unwrap_or_else(|| given.split_whitespace().map(str::to_owned).collect());
    let named = |w: &str| {
        w.split_once('=')
            .filter(|(k, _)| p.arguments.iter().any(|a| a.name == *k))
            .map(|(k, v)| (k.to_string(), v.to_string()))
    };
    let mut out = Map::new();
    if !words.is_empty() && words.iter().all(|w| named(w).is_some()) {
        for w in &words {
            if let Some((k, v)) = named(w) {
                out.insert(k, Value::String(v));
            }
        }
    } else if !words.is_empty() {
        let n = p.arguments.len();
        if n == 0 {
            return Err(format!("{} takes no arguments", usage(server, p)));
        }
        for (i, a) in p.arguments.iter().enumerate() {
            let value = if i + 1 == n {
                words.get(i..).map(|rest| rest.join(" "))
            } else {
                words.get(i).cloned()
            };
            if let Some(v) = value.filter(|v| !v.is_empty()) {
                out.insert(a.name.clone(), Value::String(v));
            }
        }
    }
    Ok(out)
}

/// The required arguments of `p` that `given` lacks.
pub fn missing<'a>(p: &'a McpPrompt, given: &Map<String, Value>) -> Vec<&'a McpPromptArgument> {
    p.arguments
        .iter()
        .filter(|a| a.required && !given.contains_key(&a.name))
        .collect()
}

/// An error that says how `/server:prompt` is used, if `given` lacks a
/// required argument.
pub fn check_complete(
    server: &str,
    p: &McpPrompt,
    given: &Map<String, Value>,
) -> Result<(), String> {
    let missing: Vec<&str> = missing(p, given).iter().map(|a| a.name.as_str()).collect();
    if !missing.is_empty() {
        let described: Vec<String> = p
            .arguments
            .iter()
            .filter(|a| !a.description.is_empty())
            .map(|a| format!("{}: {}", a.name.to_uppercase(), a.description))
            .collect();
        let described = if described.is_empty() {
            String::new()
        } else {
            format!(" ({})", described.join("; "))
        };
        return Err(format!(
            "/{server}:{} needs {}: {}{described}",
            p.name,
            missing.join(", "),
            usage(server, p),
        ));
    }
    Ok(())
}

/// A prompt's messages as one message for the model: each text as it is,
/// a resource's text with its URI, what cannot be sent as text named.
pub fn rendered(result: &Value) -> String {
    let mut parts = Vec::new();
    for m in result
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let content = m.get("content").unwrap_or(&Value::Null);
        let role = text(m, "role");
        let body = match content.get("type").and_then(Value::as_str) {
            Some("text") => text(content, "text"),
            Some("resource") => {
                let r = content.get("resource").unwrap_or(&Value::Null);
                format!(
                    "<resource uri=\"{}\">\n{}\n</resource>",
                    text(r, "uri"),
                    text(r, "text")
                )
            }
            Some(other) => format!("[{other} content from the prompt, not sent as text]"),
            None => continue,
        };
        parts.push(if role == "assistant" {
            format!("[the prompt's example answer:]\n{body}")
        } else {
            body
        });
    }
    cut(parts.join("\n\n"), MAX_PROMPT, "the prompt is longer")
}

/// `text`, cut at `max` bytes (a whole character) with `why` said.
fn cut(mut text: String, max: usize, why: &str) -> String {
    if text.len() > max {
        let mut at = max;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
        text.push_str(&format!("\n[… cut: {why}]"));
    }
    text
}

/// A resource's contents as text to go with a message (cut at
/// [`MAX_RESOURCE`]); binary contents are named, not sent.
pub fn contents(result: &Value) -> String {
    let mut parts = Vec::new();
    for c in result
        .get("contents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(t) = c.get("text").and_then(Value::as_str) {
            parts.push(t.to_string());
        } else if let Some(b) = c.get("blob").and_then(Value::as_str) {
            parts.push(format!(
                "[binary contents ({}, about {} bytes), not sent]",
                text(c, "mimeType"),
                b.len() / 4 * 3
            ));
        }
    }
    cut(parts.join("\n"), MAX_RESOURCE, "the resource is longer")
}

/// `@server:uri` mentions in `text` whose server is one of `servers`:
/// each mention as written, the server and the URI.
pub fn mentioned<'a>(text: &'a str, servers: &[String]) -> Vec<(&'a str, String, String)> {
    let mut out: Vec<(&str, String, String)> = Vec::new();
    for (i, _) in text.match_indices('@') {
        // A mention starts a word.
        if text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| !c.is_whitespace())
        {
            continue;
        }
        let rest = &text[i + 1..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = rest[..end].trim_end_matches(['.', ',', ';', ')', '!', '?']);
        let Some((server, uri)) = word.split_once(':') else {
            continue;
        };
        if uri.is_empty() || !servers.iter().any(|s| s == server) {
            continue;
        }
        let mention = &text[i..i + 1 + word.len()];
        if !out.iter().any(|(m, _, _)| *m == mention) {
            out.push((mention, server.to_string(), uri.to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn arguments(server: &str, p: &McpPrompt, given: &str) -> Result<Map<String, Value>, String> {
        let out = given_arguments(server, p, given)?;
        check_complete(server, p, &out)?;
        Ok(out)
    }

    fn review() -> McpPrompt {
        prompt_of(&json!({
            "name": "review",
            "description": "Review\n  some code",
            "arguments": [
                {"name": "code", "description": "what to review", "required": true},
                {"name": "focus"}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn arguments_are_named_or_in_order_and_a_missing_one_says_how() {
        let p = review();
        assert_eq!(p.description, "Review some code");
        assert_eq!(usage("git", &p), "/git:review CODE [FOCUS]");
        let a = arguments("git", &p, "src/main.rs the error paths").unwrap();
        assert_eq!(a["code"], "src/main.rs");
        assert_eq!(a["focus"], "the error paths");
        let a = arguments("git", &p, "focus='naming' code=\"a b\"").unwrap();
        assert_eq!(a["code"], "a b");
        assert_eq!(a["focus"], "naming");
        let e = arguments("git", &p, "").unwrap_err();
        assert!(
            e.contains("/git:review needs code: /git:review CODE [FOCUS]"),
            "{e}"
        );
        assert!(e.contains("CODE: what to review"), "{e}");
        let none = prompt_of(&json!({"name": "hello"})).unwrap();
        assert!(arguments("s", &none, "").unwrap().is_empty());
        assert!(
            arguments("s", &none, "x")
                .unwrap_err()
                .contains("takes no arguments")
        );
        assert!(prompt_of(&json!({"name": "two words"})).is_none());
    }

    #[test]
    fn a_prompts_messages_become_one_message() {
        let r = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "Review this"}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "file:///a", "text": "fn a() {}"}}},
            {"role": "assistant", "content": {"type": "text", "text": "Sure"}},
            {"role": "user", "content": {"type": "image", "data": "xx", "mimeType": "image/png"}}
        ]});
        let t = rendered(&r);
        assert!(
            t.starts_with("Review this\n\n<resource uri=\"file:///a\">\nfn a() {}\n</resource>")
        );
        assert!(t.contains("[the prompt's example answer:]\nSure"));
        assert!(t.contains("[image content from the prompt, not sent as text]"));
    }

    #[test]
    fn resources_are_mentioned_by_a_known_server_and_cut() {
        let servers = vec!["docs".to_string()];
        let m = mentioned(
            "see @docs:file:///guide.md, and @other:x, email@docs:y and @docs: (@docs:z)",
            &servers,
        );
        assert_eq!(
            m,
            vec![(
                "@docs:file:///guide.md",
                "docs".to_string(),
                "file:///guide.md".to_string()
            )]
        );
        let big = "é".repeat(MAX_RESOURCE);
        let c = contents(&json!({"contents": [{"uri": "x", "text": big}]}));
        assert!(c.len() <= MAX_RESOURCE + 64 && c.ends_with("longer]"));
        let b =
            contents(&json!({"contents": [{"uri": "x", "blob": "AAAA", "mimeType": "image/png"}]}));
        assert!(b.contains("binary contents (image/png"), "{b}");
    }

    proptest::proptest! {
        #[test]
        fn any_text_and_arguments_are_read_without_a_panic(t in "\\PC{0,200}", a in "\\PC{0,60}") {
            let servers = vec!["s".to_string(), "docs".to_string()];
            for (m, s, u) in mentioned(&t, &servers) {
                proptest::prop_assert!(t.contains(m));
                proptest::prop_assert!(servers.contains(&s) && !u.is_empty());
            }
            let _ = arguments("s", &review(), &a);
        }
    }
}
