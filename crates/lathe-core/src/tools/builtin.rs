//! The built-in tools: `read_file`, `write_file`, `edit_file`,
//! `delete_file`, `move_file`,
//! `list_directory`, `exec_shell`, `grep`, `glob`, `memory_read`,
//! `memory_write`, `web_fetch`, `web_search`, `spawn`, `message`, `ask_user`,
//! `update_plan`, `shell_output`, `shell_kill` and `task`. File tools resolve every path through
//! the workspace (containment is checked again here, after the guardrail,
//! because the tool is what touches the disk); writes are atomic.

use std::sync::Arc;

use super::spec::Tool;

mod ask_and_plan;
mod background;
mod delete_file;
mod edit_file;
mod exec_shell;
mod list_directory;
mod memory;
mod message;
mod move_file;
mod read_file;
mod search;
mod spawn;
mod task;
mod web;
mod write_file;

pub use ask_and_plan::{AskUser, UpdatePlan};
pub use background::{ShellKill, ShellOutput};
pub use delete_file::DeleteFile;
pub use edit_file::EditFile;
pub use exec_shell::ExecShell;
pub use list_directory::ListDirectory;
pub use memory::{MemoryRead, MemoryWrite};
pub use message::Message;
pub use move_file::MoveFile;
pub use read_file::ReadFile;
pub use search::{Glob, Grep};
pub use spawn::Spawn;
pub use task::Task;
pub use web::{WebFetch, WebSearch, WebSettings};
pub use write_file::WriteFile;

pub use crate::config::defaults::{
    SHELL_MAX_TIMEOUT_SECS as MAX_SHELL_TIMEOUT_SECS,
    SHELL_TIMEOUT_SECS as DEFAULT_SHELL_TIMEOUT_SECS,
};

/// Settings the built-in tools take from configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltinSettings {
    pub shell_timeout_secs: u64,
    pub shell_max_timeout_secs: u64,
    /// Environment variables the shell's children never see (API keys),
    /// besides every name that looks like a secret.
    pub shell_env_remove: Vec<String>,
    /// How commands are confined.
    pub sandbox: crate::sandbox::Settings,
    /// Where each workspace's MEMORY.md lives (`None`: no memory).
    pub memory_dir: Option<std::path::PathBuf>,
    /// `web_fetch` and `web_search`.
    pub web: WebSettings,
    /// The `message` tool's webhooks, by channel name.
    pub message_channels: std::collections::BTreeMap<String, crate::secret::Secret>,
    /// The subagent types `task` offers: name and description.
    pub agent_types: Vec<(String, String)>,
}

impl Default for BuiltinSettings {
    fn default() -> Self {
        Self {
            shell_timeout_secs: DEFAULT_SHELL_TIMEOUT_SECS,
            shell_max_timeout_secs: MAX_SHELL_TIMEOUT_SECS,
            shell_env_remove: vec!["OPENAI_API_KEY".into(), "ANTHROPIC_API_KEY".into()],
            sandbox: crate::sandbox::Settings::default(),
            memory_dir: None,
            web: WebSettings::default(),
            message_channels: std::collections::BTreeMap::new(),
            agent_types: Vec::new(),
        }
    }
}

/// Every built-in tool, configured.
pub fn all(settings: &BuiltinSettings) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadFile),
        Arc::new(WriteFile),
        Arc::new(EditFile),
        Arc::new(DeleteFile),
        Arc::new(MoveFile),
        Arc::new(ListDirectory),
        Arc::new(ExecShell::new(settings)),
        Arc::new(Grep),
        Arc::new(Glob),
        Arc::new(MemoryRead::new(settings.memory_dir.clone())),
        Arc::new(MemoryWrite::new(settings.memory_dir.clone())),
        Arc::new(WebFetch::new(&settings.web)),
        Arc::new(WebSearch::new(&settings.web)),
        Arc::new(Spawn::new(settings)),
        Arc::new(Message::new(&settings.message_channels)),
        Arc::new(AskUser),
        Arc::new(UpdatePlan),
        Arc::new(ShellOutput),
        Arc::new(ShellKill),
        Arc::new(Task::new(settings.agent_types.clone())),
    ]
}

/// The built-in tools' names, in the registry's order: what permission
/// rules and hooks may name.
pub fn names() -> Vec<&'static str> {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    NAMES
        .get_or_init(|| {
            all(&BuiltinSettings::default())
                .iter()
                .map(|t| t.name().to_string())
                .collect()
        })
        .iter()
        .map(String::as_str)
        .collect()
}

/// What a result of the built-in tool `name` means (for a journal or a
/// record written before events said it); an unknown tool's, by the keys
/// every tool shares.
pub fn summary_of(name: &str, result: &serde_json::Value) -> Option<crate::protocol::Summary> {
    static TOOLS: std::sync::OnceLock<Vec<std::sync::Arc<dyn super::Tool>>> =
        std::sync::OnceLock::new();
    let tools = TOOLS.get_or_init(|| all(&BuiltinSettings::default()));
    match tools.iter().find(|t| t.name() == name) {
        Some(t) => t.summary(result),
        None => crate::protocol::Summary::generic(result),
    }
}

/// A recorded call of the tool `name` (a resumed conversation's): the
/// kind of its tool and, when it worked, what its result means.
pub fn described(
    name: &str,
    result: &crate::provider::ToolOutput,
) -> (crate::protocol::ToolKind, Option<crate::protocol::Summary>) {
    let summary = (!result.is_error)
        .then(|| serde_json::from_str(&result.content).ok())
        .flatten()
        .and_then(|v| summary_of(name, &v));
    (kind_of(name), summary)
}

/// What kind of work the built-in tool named `name` does (`Other` for
/// any other name): for records written before events said it.
pub fn kind_of(name: &str) -> crate::protocol::ToolKind {
    static KINDS: std::sync::OnceLock<
        std::collections::HashMap<String, crate::protocol::ToolKind>,
    > = std::sync::OnceLock::new();
    KINDS
        .get_or_init(|| {
            all(&BuiltinSettings::default())
                .iter()
                .map(|t| (t.name().to_string(), t.kind()))
                .collect()
        })
        .get(name)
        .copied()
        .unwrap_or(crate::protocol::ToolKind::Other)
}

#[cfg(test)]
mod names_tests {
    /// The names rules are checked against are the registry's, each once.
    #[test]
    fn names_are_the_registry_s_each_once() {
        let names = super::names();
        assert_eq!(
            names.len(),
            super::all(&super::BuiltinSettings::default()).len()
        );
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        assert!(names.contains(&"exec_shell") && names.contains(&"read_file"));
    }

    /// Each tool says what kind of work it does; the front ends and the
    /// subagents read that, never the name. A subagent gets neither a
    /// subagent of its own nor a question or a plan.
    #[test]
    fn each_tool_says_its_kind() {
        use crate::protocol::ToolKind::*;
        let tools = super::all(&super::BuiltinSettings::default());
        let kinds: Vec<(&str, crate::protocol::ToolKind)> =
            tools.iter().map(|t| (t.name(), t.kind())).collect();
        assert_eq!(
            kinds,
            [
                ("read_file", Read),
                ("write_file", Edit),
                ("edit_file", Edit),
                ("delete_file", Edit),
                ("move_file", Edit),
                ("list_directory", List),
                ("exec_shell", Shell),
                ("grep", Search),
                ("glob", Search),
                ("memory_read", Other),
                ("memory_write", Other),
                ("web_fetch", Web),
                ("web_search", Web),
                ("spawn", Shell),
                ("message", Other),
                ("ask_user", Ask),
                ("update_plan", Plan),
                ("shell_output", Shell),
                ("shell_kill", Shell),
                ("task", Task),
            ]
        );
        let withheld: Vec<&str> = tools
            .iter()
            .filter(|t| !t.subagent_may_use())
            .map(|t| t.name())
            .collect();
        assert_eq!(withheld, ["ask_user", "update_plan", "task"]);
        // The judge counts a deletion risky by this, not by the name.
        let deleting: Vec<&str> = tools
            .iter()
            .filter(|t| t.deletes_files())
            .map(|t| t.name())
            .collect();
        assert_eq!(deleting, ["delete_file"]);
    }

    /// What the model is told of each tool: its name, description and
    /// argument schema, reviewed when it changes.
    #[test]
    fn the_schemas_the_model_sees() {
        let mut settings = super::BuiltinSettings::default();
        if let Some(url) = crate::secret::Secret::new("https://hooks.example/team") {
            settings.message_channels.insert("team".into(), url);
        }
        let tools: Vec<serde_json::Value> = super::all(&settings)
            .iter()
            .map(|t| {
                serde_json::json!({
                    "name": t.name(),
                    "description": t.description(),
                    "parameters": t.parameters(),
                })
            })
            .collect();
        // Keys sorted: the binary's maps keep insertion order (a
        // dependency turns serde_json's `preserve_order` on), the core's
        // own tests' do not; what is compared is the schemas, not that.
        let tools = sorted(&serde_json::Value::Array(tools));
        insta::assert_snapshot!(serde_json::to_string_pretty(&tools).unwrap_or_default());
    }

    fn sorted(v: &serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                serde_json::Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            serde_json::Value::Array(a) => serde_json::Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
}

#[cfg(test)]
mod summary_tests {
    use serde_json::json;

    use super::summary_of;
    use crate::protocol::Summary;

    /// Each tool reads its own result into what it means; a tool that
    /// says nothing of its own is read by the keys every tool shares.
    #[test]
    fn each_tool_says_what_its_result_means() {
        let cases = [
            (
                "glob",
                json!({"files": ["a"], "count": 6}),
                Summary::Files { count: 6 },
            ),
            (
                "grep",
                json!({"matches": "", "count": 9, "files": 5}),
                Summary::Matches { count: 9, files: 5 },
            ),
            (
                "read_file",
                json!({"content": "x", "start_line": 1, "end_line": 40, "total_lines": 90}),
                Summary::Lines {
                    start: 1,
                    end: 40,
                    total: 90,
                },
            ),
            (
                "list_directory",
                json!({"entries": [1, 2]}),
                Summary::Entries { count: 2 },
            ),
            (
                "exec_shell",
                json!({"exit_code": 2, "stdout": ""}),
                Summary::Exited { code: 2 },
            ),
            (
                "exec_shell",
                json!({"handle": "bg1", "running": true, "output": ""}),
                Summary::Background {
                    handle: "bg1".into(),
                },
            ),
            (
                "shell_output",
                json!({"handle": "bg1", "running": false, "output": "a\nb\n", "exit_code": 0}),
                Summary::Output {
                    lines: 2,
                    running: false,
                    exit_code: Some(0),
                },
            ),
            (
                "ask_user",
                json!({"answer": "tabs"}),
                Summary::Answer {
                    answer: Some("tabs".into()),
                },
            ),
            (
                "task",
                json!({"answer": "x", "calls": 3}),
                Summary::Task { calls: 3 },
            ),
            (
                "update_plan",
                json!({"steps": 2, "done": 1, "current": "docs"}),
                Summary::Plan {
                    done: 1,
                    steps: 2,
                    current: Some("docs".into()),
                },
            ),
            (
                "write_file",
                json!({"message": "created a.py (27 bytes)"}),
                Summary::Said {
                    message: "created a.py (27 bytes)".into(),
                },
            ),
            (
                "edit_file",
                json!({"path": "a.rs", "hunks_applied": 1, "not_applied": [2, 3]}),
                Summary::Written {
                    path: "a.rs".into(),
                    written: 1,
                    left_out: 2,
                },
            ),
        ];
        for (tool, result, want) in cases {
            assert_eq!(summary_of(tool, &result), Some(want), "{tool}: {result}");
        }
        // An MCP server's result: nothing shared to read.
        assert_eq!(summary_of("mcp__x__y", &json!([{"type": "text"}])), None);
    }
}
