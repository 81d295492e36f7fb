//! The MCP servers an editor passes with a session (ACP's `mcpServers`):
//! the person configured them in their editor, so they are the person's
//! own, like those of their config, and go through the same checks (a
//! name, a command or an http(s) URL). A server of the same name in
//! Lathe's config wins.

use std::collections::BTreeMap;

use crate::config::Config;
use crate::config::mcp::{ServerEntry, servers};
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
}

/// Adds the editor's servers to `config`'s; returns what was left out and
/// why.
pub fn add_editor_mcp(config: &mut Config, editor: &[EditorMcp]) -> Vec<String> {
    let mut entries = BTreeMap::new();
    let mut warnings = Vec::new();
    for s in editor {
        let (name, entry) = match s {
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
        let taken = config
            .mcp_servers
            .iter()
            .chain(&config.workspace_mcp)
            .any(|c| &c.name == name);
        if taken {
            warnings.push(format!(
                "the editor's MCP server `{name}` has the name of one in Lathe's config: that one is used"
            ));
            continue;
        }
        entries.insert(name.clone(), entry);
    }
    // The editor's values are used as given: no `${VAR}` is read from
    // Lathe's environment for them.
    let (found, left_out) = servers(
        entries,
        RuleOrigin::User,
        "the editor's MCP servers",
        &|_| None,
    );
    warnings.extend(left_out);
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
    fn the_editors_servers_join_the_persons_checked_and_never_replace_them() {
        let mut c = config();
        let before = c.mcp_servers.len();
        let warnings = add_editor_mcp(
            &mut c,
            &[
                EditorMcp::Stdio {
                    name: "fs".into(),
                    command: "mcp-fs".into(),
                    args: vec!["--root".into(), "/w".into()],
                    env: vec![("TOKEN".into(), "${HOME}".into())],
                },
                EditorMcp::Http {
                    name: "docs".into(),
                    url: "https://docs.example/mcp".into(),
                    headers: vec![("Authorization".into(), "Bearer x".into())],
                },
                EditorMcp::Http {
                    name: "bad".into(),
                    url: "ftp://nope".into(),
                    headers: vec![],
                },
                EditorMcp::Stdio {
                    name: "no spaces allowed".into(),
                    command: "x".into(),
                    args: vec![],
                    env: vec![],
                },
            ],
        );
        let names: Vec<&str> = c.mcp_servers[before..]
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(names, ["docs"], "{warnings:?}");
        // `${HOME}` is not read from Lathe's environment: that server is
        // left out, said.
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(
            c.mcp_servers
                .iter()
                .all(|s| s.origin == RuleOrigin::User && !s.trusted)
        );
        // A second server of a name already there is not added.
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
}
