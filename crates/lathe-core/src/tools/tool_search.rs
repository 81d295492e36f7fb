//! `tool_search`: when the connected servers' tool schemas would take more
//! than a set share of the model's context (`[tools] search_at`, 10 % by
//! default), their schemas are deferred. The model sees each deferred
//! tool's name and one line in this tool's description (a fixed order, so
//! the request's prefix stays the same from one request to the next); a
//! call returns the full schemas of the tools it asks for, by name or by
//! words, and those tools are then called by name like any other. The
//! tools array sent never changes when a tool is loaded, so nothing the
//! server cached is lost.

use std::collections::BTreeSet;

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::protocol::{Effect, ToolKind};
use crate::provider::ToolSchema;
use crate::tools::spec::{ToolContext, ToolError};
use crate::tools::typed::TypedTool;

/// The tool's name.
pub const NAME: &str = "tool_search";

/// Tools returned when the call says no number.
const DEFAULT_LIMIT: usize = 5;
/// The most a call returns.
const MAX_LIMIT: usize = 20;
/// The longest line a deferred tool gets in the description.
const LINE: usize = 100;
/// Past this many tools, the listing names them only.
const DESCRIBED: usize = 300;
/// The most the listing takes (bytes); tools past it are found by query.
const LISTING: usize = 32 * 1024;

pub struct ToolSearch {
    description: String,
    deferred: Vec<ToolSchema>,
}

impl ToolSearch {
    /// The search over `deferred` (listed by name, in order).
    pub fn new(mut deferred: Vec<ToolSchema>) -> Self {
        deferred.sort_by(|a, b| a.name.cmp(&b.name));
        // So many tools that their lines would fill the context again are
        // named only; past the listing's size, counted and found by query.
        let described = deferred.len() <= DESCRIBED;
        let mut listed: Vec<String> = Vec::new();
        let mut size = 0;
        for (i, t) in deferred.iter().enumerate() {
            let line = one_line(&t.description);
            let entry = if line.is_empty() || !described {
                format!("- {}", t.name)
            } else {
                format!("- {}: {line}", t.name)
            };
            if size + entry.len() > LISTING {
                listed.push(format!(
                    "… and {} more: find them with `query`",
                    deferred.len() - i
                ));
                break;
            }
            size += entry.len() + 1;
            listed.push(entry);
        }
        let description = format!(
            "Many tools are connected, so the schemas of those below are not loaded. To use \
             one, call this first with its name in `names` (or words for what you need in \
             `query`): it returns the full schemas; then call the tool by its name, as any \
             other. Loaded tools stay available.\n\nTools not loaded:\n{}",
            listed.join("\n")
        );
        Self {
            description,
            deferred,
        }
    }

    /// The deferred tool called `name` (`server.tool` for `server__tool`
    /// too).
    fn named(&self, name: &str) -> Option<&ToolSchema> {
        let dotted = name.replacen('.', "__", 1);
        self.deferred
            .iter()
            .find(|t| t.name == name || t.name == dotted)
    }

    /// The deferred tools that match most of `query`'s words, best first.
    fn matching(&self, query: &str, limit: usize) -> Vec<&ToolSchema> {
        let words: BTreeSet<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut scored: Vec<(usize, &ToolSchema)> = self
            .deferred
            .iter()
            .filter_map(|t| {
                let name = t.name.to_lowercase();
                let text = t.description.to_lowercase();
                let score: usize = words
                    .iter()
                    .map(|w| {
                        2 * usize::from(name.contains(w.as_str()))
                            + usize::from(text.contains(w.as_str()))
                    })
                    .sum();
                (score > 0).then_some((score, t))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
        scored.into_iter().take(limit).map(|(_, t)| t).collect()
    }
}

/// The first line of a description, at most [`LINE`] characters.
fn one_line(description: &str) -> String {
    let first = description
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    if first.chars().count() <= LINE {
        first.to_string()
    } else {
        let cut: String = first.chars().take(LINE - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The tools to load, by name, as listed.
    #[serde(default)]
    names: Vec<String>,
    /// Words for what you need; the best matching tools are loaded.
    #[serde(default)]
    query: Option<String>,
    /// The most tools a query loads (default 5, at most 20).
    #[serde(default)]
    limit: Option<usize>,
}

#[async_trait]
impl TypedTool for ToolSearch {
    type Args = Args;

    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Search
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    async fn execute(&self, args: Args, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let mut found: Vec<&ToolSchema> = Vec::new();
        let mut unknown = Vec::new();
        for name in &args.names {
            match self.named(name) {
                Some(t) if !found.iter().any(|f| f.name == t.name) => found.push(t),
                Some(_) => {}
                None => unknown.push(name.clone()),
            }
        }
        if let Some(query) = args.query.as_deref().filter(|q| !q.trim().is_empty()) {
            for t in self.matching(query, limit) {
                if !found.iter().any(|f| f.name == t.name) {
                    found.push(t);
                }
            }
        }
        if found.is_empty() {
            let why = if args.names.is_empty() && args.query.is_none() {
                "give `names` (as listed in this tool's description) or a `query`".to_string()
            } else if unknown.is_empty() {
                "no tool not loaded matches that query; the tools are listed in this tool's \
                 description"
                    .to_string()
            } else {
                format!(
                    "no tool not loaded is called {}; the tools are listed in this tool's \
                     description",
                    unknown.join(", ")
                )
            };
            return Err(ToolError::InvalidArgs(why));
        }
        let tools: Vec<Value> = found
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                })
            })
            .collect();
        let mut out = json!({
            "tools": tools,
            "next": "Call these tools by name, with arguments that follow their parameters.",
        });
        if !unknown.is_empty() {
            out["unknown"] = json!(unknown);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(name: &str, description: &str) -> ToolSchema {
        ToolSchema {
            name: name.into(),
            description: description.into(),
            parameters: json!({"type": "object", "properties": {"id": {"type": "string"}}}),
        }
    }

    #[test]
    fn the_description_lists_each_tool_once_in_order_in_one_line() {
        let long = "x".repeat(300);
        let s = ToolSearch::new(vec![
            schema("b__two", "Second\nmore detail"),
            schema("a__one", &long),
            schema("c__three", ""),
        ]);
        let listed: Vec<&str> = s
            .description
            .lines()
            .filter(|l| l.starts_with("- "))
            .collect();
        assert_eq!(listed.len(), 3);
        assert!(listed[0].starts_with("- a__one: xxx") && listed[0].ends_with('…'));
        assert!(listed[0].chars().count() < 120);
        assert_eq!(listed[1], "- b__two: Second");
        assert_eq!(listed[2], "- c__three");
        // The same tools in any order give the same bytes.
        let again = ToolSearch::new(vec![
            schema("c__three", ""),
            schema("a__one", &long),
            schema("b__two", "Second\nmore detail"),
        ]);
        assert_eq!(s.description, again.description);
    }

    #[test]
    fn names_and_words_find_tools_best_first() {
        let s = ToolSearch::new(vec![
            schema("jira__create_issue", "Create an issue in a project"),
            schema("jira__search", "Search issues with JQL"),
            schema("github__create_issue", "Open an issue on a repository"),
        ]);
        assert_eq!(
            s.named("jira.search").map(|t| t.name.as_str()),
            Some("jira__search")
        );
        assert!(s.named("nope").is_none());
        let found: Vec<&str> = s
            .matching("create issue", 5)
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        // Words in the name count twice; both words in the description
        // put jira's first.
        assert_eq!(
            found,
            ["jira__create_issue", "github__create_issue", "jira__search"]
        );
        assert_eq!(s.matching("create issue", 1).len(), 1);
        assert!(s.matching("", 5).is_empty());
        assert!(s.matching("!!! ---", 5).is_empty());
    }

    #[test]
    fn thousands_of_tools_are_named_only_and_the_listing_is_bounded() {
        let many: Vec<ToolSchema> = (0..5000)
            .map(|i| {
                schema(
                    &format!("srv__tool_{i:05}"),
                    "Does a thing to a record by id",
                )
            })
            .collect();
        let s = ToolSearch::new(many);
        assert!(
            s.description.len() < LISTING + 1024,
            "{}",
            s.description.len()
        );
        assert!(!s.description.contains("Does a thing"), "named only");
        assert!(s.description.contains("more: find them with `query`"));
        // Every tool is still found.
        assert_eq!(
            s.named("srv__tool_04999").map(|t| t.name.as_str()),
            Some("srv__tool_04999")
        );
        assert_eq!(s.matching("tool_04999", 5)[0].name, "srv__tool_04999");
    }

    proptest::proptest! {
        #[test]
        fn any_query_and_description_is_read_without_a_panic(
            query in "\\PC{0,60}",
            description in "\\PC{0,400}",
        ) {
            let s = ToolSearch::new(vec![schema("srv__t", &description)]);
            let _ = s.matching(&query, 3);
            proptest::prop_assert!(one_line(&description).chars().count() <= LINE);
        }
    }
}
