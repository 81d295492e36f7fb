//! The MCP servers an editor passes with a session (ACP's `mcpServers`):
//! the person configured them in their editor, so they are the person's
//! own, like those of their config, and go through the same checks (a
//! command or an http(s) URL), their values taken as given. A server of
//! the same name in the person's config wins; one of the workspace's
//! (not the person's) gives way to the editor's. A name Lathe does not
//! take (`Context7 MCP`) is made one it does (`Context7_MCP`).

use std::collections::BTreeMap;

use crate::config::Config;
use crate::config::mcp::{ServerEntry, literal_servers};
use crate::policy::RuleOrigin;

/// One server as the editor describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorMcp {
    Stdio {
        name: String,
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    Http {
        name: String,
        url: String,
        headers: Vec<(String, String)>,
    },
    /// A transport Lathe does not speak (the old SSE one): said, left out.
    Unsupported { name: String, transport: String },
}

/// A name as Lathe's servers take it: letters, digits, `-` and `_`, at
/// most 32, no `__` (the rest made `_`).
fn usable_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if c == '_' && out.ends_with('_') {
            continue;
        }
        out.push(c);
        if out.len() == 32 {
            break;
        }
    }
    let out = out.trim_matches('_').to_string();
    if out.is_empty() { "editor".into() } else { out }
}

/// Adds the editor's servers to `config`'s; returns what was left out and
/// why.
pub fn add_editor_mcp(config: &mut Config, editor: &[EditorMcp]) -> Vec<String> {
    let mut entries = BTreeMap::new();
    let mut warnings = Vec::new();
    for s in editor {
        let (name, entry) = match s {
            EditorMcp::Unsupported { name, transport } => {
                warnings.push(format!(
                    "the editor's MCP server `{name}` speaks {transport}, which Lathe does not: \
                     it is left out (give its streamable HTTP endpoint)"
                ));
                continue;
            }
            EditorMcp::Stdio {
                name,
                command,
                args,
                env,
            } => (
                name,
                ServerEntry {
                    command: Some(command.clone()),
                    args: args.clone(),
                    env: env.iter().cloned().collect(),
                    ..ServerEntry::default()
                },
            ),
            EditorMcp::Http { name, url, headers } => (
                name,
                ServerEntry {
                    url: Some(url.clone()),
                    headers: headers.iter().cloned().collect(),
                    kind: Some("http".into()),
                    ..ServerEntry::default()
                },
            ),
        };
        let name = usable_name(name);
        if config.mcp_servers.iter().any(|c| c.name == name) {
            warnings.push(format!(
                "the editor's MCP server `{name}` has the name of one in your config: yours is used"
            ));
            continue;
        }
        if entries.insert(name.clone(), entry).is_some() {
            warnings.push(format!(
                "the editor passes two MCP servers named `{name}`: the last is used"
            ));
        }
    }
    // The editor's values are used as given: no `${VAR}` is read from
    // Lathe's environment for them.
    let (found, left_out) = literal_servers(entries, RuleOrigin::User, "the editor's MCP servers");
    warnings.extend(left_out);
    // The workspace's server of a name the editor's has gives way.
    config.workspace_mcp.retain(|w| {
        let clash = found.iter().any(|f| f.name == w.name);
        if clash {
            warnings.push(format!(
                "the workspace's MCP server `{}` has the name of one the editor passes: the \
                 editor's is used",
                w.name
            ));
        }
        !clash
    });
    config.mcp_servers.extend(found);
    warnings
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn config() -> Config {
        let dir = tempfile::tempdir().unwrap();
        let overrides = crate::config::Overrides {
            workspace: Some(dir.path().to_path_buf()),
            no_model: true,
            ..Default::default()
        };
        let c = crate::launch::load_config(&overrides, &|_| None).unwrap();
        std::mem::forget(dir);
        c
    }

    #[test]
    fn the_editors_servers_join_the_persons_as_given_and_never_replace_them() {
        let mut c = config();
        let before = c.mcp_servers.len();
        // One of the workspace's, of a name the editor's has.
        c.workspace_mcp.extend(
            crate::config::mcp::literal_servers(
                [(
                    "gh".to_string(),
                    ServerEntry {
                        command: Some("their-gh".into()),
                        ..ServerEntry::default()
                    },
                )]
                .into(),
                RuleOrigin::Workspace,
                ".mcp.json",
            )
            .0,
        );
        let warnings = add_editor_mcp(
            &mut c,
            &[
                EditorMcp::Stdio {
                    name: "fs".into(),
                    command: "mcp-fs".into(),
                    args: vec!["--root".into(), "/w".into()],
                    env: vec![("TOKEN".into(), "ab${HOME}cd".into())],
                },
                EditorMcp::Http {
                    name: "docs".into(),
                    url: "https://docs.example/mcp".into(),
                    headers: vec![("Authorization".into(), "Bearer ${X:-y}".into())],
                },
                EditorMcp::Http {
                    name: "bad".into(),
                    url: "ftp://nope".into(),
                    headers: vec![],
                },
                EditorMcp::Stdio {
                    name: "Context7 MCP".into(),
                    command: "x".into(),
                    args: vec![],
                    env: vec![],
                },
                EditorMcp::Stdio {
                    name: "gh".into(),
                    command: "my-gh".into(),
                    args: vec![],
                    env: vec![],
                },
                EditorMcp::Unsupported {
                    name: "old".into(),
                    transport: "SSE".into(),
                },
            ],
        );
        let names: Vec<&str> = c.mcp_servers[before..]
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(names, ["Context7_MCP", "docs", "fs", "gh"], "{warnings:?}");
        // Values as the editor gave them: nothing read from Lathe's
        // environment, nothing dropped.
        let fs = c.mcp_servers.iter().find(|s| s.name == "fs").unwrap();
        assert!(format!("{:?}", fs.transport).contains("ab${HOME}cd"));
        let docs = c.mcp_servers.iter().find(|s| s.name == "docs").unwrap();
        assert!(format!("{:?}", docs.transport).contains("Bearer ${X:-y}"));
        // The bad URL and the SSE server are said; the workspace's `gh`
        // gave way to the editor's, said.
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(c.workspace_mcp.is_empty());
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("workspace's MCP server `gh`"))
        );
        assert!(
            c.mcp_servers
                .iter()
                .all(|s| s.origin == RuleOrigin::User && !s.trusted)
        );
        // A name already in the person's config: theirs is used.
        let w = add_editor_mcp(
            &mut c,
            &[EditorMcp::Http {
                name: "docs".into(),
                url: "https://other.example/mcp".into(),
                headers: vec![],
            }],
        );
        assert_eq!(w.len(), 1);
        assert_eq!(c.mcp_servers.iter().filter(|s| s.name == "docs").count(), 1);
    }

    #[test]
    fn names_are_made_usable() {
        assert_eq!(usable_name("Context7 MCP"), "Context7_MCP");
        assert_eq!(usable_name("a__b..c"), "a_b_c");
        assert_eq!(usable_name("  "), "editor");
        assert_eq!(usable_name(&"x".repeat(50)).len(), 32);
        assert_eq!(usable_name("é"), "editor");
    }
}
