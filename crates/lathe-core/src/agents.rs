//! A person's own subagent types: Markdown files with front matter
//! (`name`, `description`, `tools`, `model`, `effort`) whose body is the
//! subagent's instructions, as Claude Code and OpenCode define them.
//!
//! Found in the person's `~/.config/lathe/agents/` and `~/.claude/agents/`
//! and the workspace's `.lathe/agents/` and `.claude/agents/`. As with
//! skills, the person's win (a workspace type of the same name is
//! `ws-NAME`), and the workspace's wait for trust, pinned by [`digest`].
//! `task` takes `agent: NAME`; a type's `tools` only narrow what `task`
//! allows a subagent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

pub use crate::skills::Origin;

/// The most of a definition read.
const MAX_BYTES: u64 = 256 * 1024;
/// The most definitions read from one directory (and its folders).
const MAX_FILES: usize = 500;
const MAX_DEPTH: usize = 3;

/// One subagent type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentType {
    pub name: String,
    pub description: String,
    /// Lathe's names of the tools it may have (`None`: what `task`
    /// gives by default).
    pub tools: Option<Vec<String>>,
    /// Its model (`None`: the conversation's).
    pub model: Option<String>,
    pub effort: Option<crate::protocol::Effort>,
    /// Its instructions: the file's body.
    pub prompt: String,
    pub file: PathBuf,
    pub origin: Origin,
    /// The file, whole: what the trust question shows.
    pub text: String,
}

/// What was found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Found {
    pub person: Vec<AgentType>,
    pub workspace: Vec<AgentType>,
    pub warnings: Vec<String>,
}

/// Where types are looked for, the person's first, each side in the
/// order it wins.
pub fn roots(
    workspace: &Path,
    config_dir: Option<&Path>,
    home: Option<&Path>,
) -> Vec<(PathBuf, Origin)> {
    crate::skills::roots_of(
        "agents",
        (workspace, &[".lathe", ".claude"]),
        config_dir,
        (home, &[".claude"]),
    )
}

/// What another client calls a tool, in Lathe's words (`tools: Read,
/// Grep, Bash` in a Claude Code definition).
fn lathe_tool(name: &str) -> Option<&'static str> {
    Some(match name {
        "Read" | "read_file" => "read_file",
        "Grep" | "grep" => "grep",
        "Glob" | "glob" => "glob",
        "LS" | "list_directory" => "list_directory",
        "Bash" | "exec_shell" => "exec_shell",
        "Edit" | "MultiEdit" | "edit_file" => "edit_file",
        "Write" | "write_file" => "write_file",
        "WebFetch" | "web_fetch" => "web_fetch",
        "WebSearch" | "web_search" => "web_search",
        "delete_file" => "delete_file",
        "move_file" => "move_file",
        "memory_read" => "memory_read",
        "skill" | "Skill" => "skill",
        _ => return None,
    })
}

/// The types under `roots`; `workspace` bounds the workspace's.
pub fn discover(workspace: &Path, roots: &[(PathBuf, Origin)]) -> Found {
    let mut found = Found::default();
    let workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut names: BTreeMap<(bool, String), PathBuf> = BTreeMap::new();
    for (root, origin) in roots {
        for file in definitions(root) {
            let Ok(real) = file.canonicalize() else {
                continue;
            };
            if seen.contains(&real) {
                continue;
            }
            seen.push(real.clone());
            let shown = crate::protocol::visible::name(&file.display().to_string()).into_owned();
            if *origin == Origin::Workspace && !real.starts_with(&workspace) {
                found.warnings.push(format!(
                    "{shown}: the agent's file leads out of the workspace; it is left out"
                ));
                continue;
            }
            let agent = match read(&real, *origin, &shown, &mut found.warnings) {
                Ok(a) => a,
                Err(why) => {
                    found
                        .warnings
                        .push(format!("{shown}: {why}; the agent is left out"));
                    continue;
                }
            };
            let key = (*origin == Origin::Workspace, agent.name.clone());
            if let Some(first) = names.get(&key) {
                found.warnings.push(format!(
                    "{shown}: an agent called `{}` was found first ({}); this one is left out",
                    agent.name,
                    first.display()
                ));
                continue;
            }
            names.insert(key, real);
            match origin {
                Origin::Person => found.person.push(agent),
                Origin::Workspace => found.workspace.push(agent),
            }
        }
    }
    rename_workspace_types(&mut found);
    found.person.sort_by(|a, b| a.name.cmp(&b.name));
    found.workspace.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

fn rename_workspace_types(found: &mut Found) {
    let mut taken: std::collections::BTreeSet<String> =
        found.person.iter().map(|a| a.name.clone()).collect();
    for a in &mut found.workspace {
        if let Some(renamed) = crate::skills::workspace_name(&a.name, &mut taken) {
            found.warnings.push(format!(
                "the workspace's agent `{}` has the name of one of yours; yours is `{}`, the \
                 workspace's is `{renamed}`",
                a.name, a.name
            ));
            a.name = renamed;
        }
    }
}

/// The `.md` files under `root`, sorted, bounded.
fn definitions(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                if depth + 1 < MAX_DEPTH {
                    stack.push((path, depth + 1));
                }
            } else if path.extension().is_some_and(|x| x == "md") {
                out.push(path);
            }
            if out.len() >= MAX_FILES {
                break;
            }
        }
    }
    out.sort();
    out
}

fn read(
    file: &Path,
    origin: Origin,
    shown: &str,
    warnings: &mut Vec<String>,
) -> Result<AgentType, String> {
    let dir = file.parent().unwrap_or(file);
    let named = crate::tools::fs::named::read_within(file, dir, shown, MAX_BYTES)
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8(named.bytes).map_err(|_| "not UTF-8 text".to_string())?;
    let doc = crate::front_matter::parse(&text).map_err(|e| e.to_string())?;
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = doc.text("name").unwrap_or(stem);
    if !crate::skills::valid_name(&name) {
        return Err(format!(
            "field `name`: `{name}` is not an agent's name (lowercase letters, digits and single \
             hyphens)"
        ));
    }
    let Some(description) = doc.text("description") else {
        return Err("field `description` is missing or empty".into());
    };
    let tools = if doc.fields.contains_key("tools") {
        let mut tools = Vec::new();
        for t in doc.list("tools") {
            // `Bash(git:*)`: the tool; the pattern is the rules' business.
            let bare = t.split('(').next().unwrap_or(&t);
            match lathe_tool(bare) {
                Some(l) if !tools.iter().any(|x| x == l) => tools.push(l.to_string()),
                Some(_) => {}
                None => warnings.push(format!(
                    "{shown}: field `tools`: `{t}` is no tool Lathe has; it is left out"
                )),
            }
        }
        Some(tools)
    } else {
        None
    };
    let model = match doc.text("model").as_deref() {
        None | Some("inherit") => None,
        Some(alias @ ("sonnet" | "opus" | "haiku")) => {
            warnings.push(format!(
                "{shown}: field `model`: `{alias}` is Claude Code's name for a model; the \
                 conversation's model is used"
            ));
            None
        }
        Some(m) => Some(m.to_string()),
    };
    let effort = match doc.text("effort") {
        None => None,
        Some(e) => match e.parse() {
            Ok(e) => Some(e),
            Err(why) => {
                warnings.push(format!(
                    "{shown}: field `effort`: {why}; the default is used"
                ));
                None
            }
        },
    };
    Ok(AgentType {
        name,
        description: description.chars().take(1_024).collect(),
        tools,
        model,
        effort,
        prompt: doc.body,
        file: file.to_path_buf(),
        origin,
        text,
    })
}

/// What trusting the workspace's types pins: each file, whole.
pub fn digest(types: &[AgentType]) -> String {
    crate::fs::pin(
        types
            .iter()
            .flat_map(|a| [a.name.as_bytes(), a.text.as_bytes()]),
    )
}

/// The types a conversation offers, and the workspace's waiting for
/// trust.
#[derive(Debug, Default)]
pub struct Registry {
    offered: RwLock<Vec<AgentType>>,
    pending: RwLock<Vec<AgentType>>,
}

impl Registry {
    pub fn new(offered: Vec<AgentType>, pending: Vec<AgentType>) -> Self {
        Self {
            offered: RwLock::new(offered),
            pending: RwLock::new(pending),
        }
    }

    /// Offers the workspace's (the person trusts them now); whether any
    /// came.
    pub fn trust_pending(&self) -> bool {
        let pending = std::mem::take(
            &mut *self
                .pending
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if pending.is_empty() {
            return false;
        }
        let mut offered = self
            .offered
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for a in pending {
            if !offered.iter().any(|o| o.name == a.name) {
                offered.push(a);
            }
        }
        offered.sort_by(|a, b| a.name.cmp(&b.name));
        true
    }

    pub fn all(&self) -> Vec<AgentType> {
        self.offered
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub fn get(&self, name: &str) -> Option<AgentType> {
        self.all().into_iter().find(|a| a.name == name)
    }
}

#[cfg(test)]
#[path = "agents_tests.rs"]
mod tests;
