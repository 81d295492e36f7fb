//! `lathe hooks import`: the hooks of a Claude Code settings file
//! (`~/.claude/settings.json`) written as Lathe's `[[hooks.…]]` entries.
//!
//! Claude Code's shape: `{"hooks": {"PreToolUse": [{"matcher": "Bash",
//! "hooks": [{"type": "command", "command": "…", "timeout": 60}]}]}}`.
//! Its events map to Lathe's (`PreToolUse` to `before_tool_call`,
//! `Stop` to `stop`, …); its tool names in a matcher to Lathe's (`Bash`
//! to `exec_shell`, `Edit|Write` to `edit_file|write_file`,
//! `mcp__github__create_issue` to `github__create_issue`). What has no
//! counterpart (an event Lathe does not have, a hook that is not a
//! command, a matcher that is not a list of names) is left out, each with
//! why.

use serde_json::Value;

use crate::policy::session_hooks::SessionEvent;

/// What an import makes of a settings file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    /// The entries, as TOML to add to the config.
    pub toml: String,
    /// How many hooks were brought.
    pub count: usize,
    /// What was left out, and why.
    pub skipped: Vec<String>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ImportError {
    #[error("not JSON: {0}")]
    Json(String),
    #[error("no `hooks` object in it")]
    NoHooks,
}

/// Lathe's key for Claude Code's event.
fn event_key(name: &str) -> Option<&'static str> {
    match name {
        "PreToolUse" => Some("before_tool_call"),
        "PostToolUse" => Some("after_tool_call"),
        other => SessionEvent::from_claude(other).map(SessionEvent::key),
    }
}

/// Lathe's name for a Claude Code tool name in a matcher.
fn tool_name(name: &str) -> Option<String> {
    if let Some(rest) = name.strip_prefix("mcp__") {
        // `mcp__.*`: every MCP tool (`SERVER__TOOL`), not every tool.
        let rest = rest.replace(".*", "*");
        return Some(
            if rest.contains("__") {
                rest
            } else {
                format!("{rest}__*")
            }
            .replace("**", "*"),
        );
    }
    Some(
        match name {
            "Bash" => "exec_shell",
            "Read" => "read_file",
            "Edit" | "MultiEdit" => "edit_file",
            "Write" => "write_file",
            "Grep" => "grep",
            "Glob" => "glob",
            "LS" => "list_directory",
            "WebFetch" => "web_fetch",
            "WebSearch" => "web_search",
            "Task" | "Agent" => "task",
            "TodoWrite" => "update_plan",
            _ => return None,
        }
        .to_string(),
    )
}

/// A tool event's matcher in Lathe's words (`None`: one it cannot say).
fn tool_matcher(matcher: &str) -> Result<String, String> {
    let m = matcher.trim();
    if m.is_empty() || m == "*" || m == ".*" {
        return Ok("*".into());
    }
    let mut out = Vec::new();
    for alt in m.split('|').map(str::trim) {
        match tool_name(alt) {
            Some(n) if !out.contains(&n) => out.push(n),
            Some(_) => {}
            None => {
                return Err(format!(
                    "the matcher `{m}` names `{alt}`, which Lathe does not have"
                ));
            }
        }
    }
    Ok(out.join("|"))
}

/// The subjects Lathe sends for a session event (its matcher's choices).
fn subjects(key: &str) -> Option<&'static [&'static str]> {
    Some(match key {
        "session_start" => &["startup", "resume", "clear"],
        "notification" => &["permission_prompt", "elicitation_dialog", "idle_prompt"],
        "pre_compact" => &["manual", "auto"],
        "session_end" => &["exit"],
        _ => return None,
    })
}

/// The alternatives of `matcher` that Lathe never sends for `key`
/// (`compact`, `auth_success`), if any.
fn never_fires(key: &str, matcher: &str) -> Option<String> {
    let known = subjects(key)?;
    let dead: Vec<&str> = matcher
        .split('|')
        .map(str::trim)
        .filter(|alt| {
            !alt.contains(['*', '?', '[', '.']) && !alt.is_empty() && !known.contains(alt)
        })
        .collect();
    (!dead.is_empty()).then(|| format!("`{}`", dead.join("`, `")))
}

/// A TOML basic string, quoted and escaped.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The hooks of `settings` (a Claude Code settings file's text).
pub fn import(settings: &str) -> Result<Imported, ImportError> {
    let v: Value = serde_json::from_str(settings).map_err(|e| ImportError::Json(e.to_string()))?;
    let Some(Value::Object(events)) = v.get("hooks") else {
        return Err(ImportError::NoHooks);
    };
    let mut out = Imported::default();
    for (name, groups) in events {
        let Some(key) = event_key(name) else {
            out.skipped.push(format!("{name}: Lathe has no such event"));
            continue;
        };
        let tool_event = matches!(key, "before_tool_call" | "after_tool_call");
        for group in groups.as_array().into_iter().flatten() {
            let raw = match group.get("matcher") {
                None | Some(Value::Null) => "",
                Some(Value::String(m)) => m.as_str(),
                Some(other) => {
                    out.skipped.push(format!(
                        "{name}: a matcher that is not text ({other}); its hooks are left out"
                    ));
                    continue;
                }
            };
            let matcher = if tool_event {
                match tool_matcher(raw) {
                    Ok(m) => m,
                    Err(why) => {
                        out.skipped.push(format!("{name}: {why}"));
                        continue;
                    }
                }
            } else if raw.trim().is_empty() {
                "*".into()
            } else {
                let m = raw.trim().to_string();
                if let Some(dead) = never_fires(key, &m) {
                    out.skipped.push(format!(
                        "{name}: the matcher `{m}` names {dead}, which Lathe never sends; \
                         imported as it is"
                    ));
                }
                m
            };
            for hook in group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let kind = hook
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("command");
                let Some(command) = hook
                    .get("command")
                    .and_then(Value::as_str)
                    .filter(|c| kind == "command" && !c.trim().is_empty())
                else {
                    out.skipped.push(format!(
                        "{name}: a hook of type `{kind}`; Lathe runs commands only"
                    ));
                    continue;
                };
                out.toml.push_str(&format!(
                    "\n[[hooks.{key}]]\nmatch = {}\ncommand = {}\n",
                    quoted(&matcher),
                    quoted(command)
                ));
                // Claude Code waits 60 s for a hook that names no time.
                let timeout = match hook.get("timeout") {
                    None | Some(Value::Null) => 60,
                    Some(t) => match t.as_u64() {
                        Some(t) => t,
                        None => {
                            out.skipped.push(format!(
                                "{name}: `{command}` has a timeout Lathe cannot read ({t}); it \
                                 waits 60 s"
                            ));
                            60
                        }
                    },
                };
                out.toml
                    .push_str(&format!("timeout_secs = {}\n", timeout.clamp(1, 600)));
                out.count += 1;
            }
        }
    }
    Ok(out)
}

/// The config's text with `entries` added at its end: checked to be a
/// config Lathe reads, and the change as a unified diff for the person.
pub fn appended(
    path: &std::path::Path,
    old: &str,
    entries: &str,
) -> Result<(String, String), String> {
    let sep = if old.is_empty() || old.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let new = format!("{old}{sep}{entries}");
    // Read as Lathe reads its config: what it would refuse is not written.
    if new.len() as u64 > crate::fs::OWN_FILE_MAX {
        return Err(format!(
            "{} would be over {} KiB with them, more than Lathe reads",
            path.display(),
            crate::fs::OWN_FILE_MAX / 1024
        ));
    }
    super::file::ConfigFile::parse(path, &new)
        .map_err(|e| format!("{} would not be read with them: {e}", path.display()))?;
    let shown = path.display().to_string();
    let diff = similar::TextDiff::from_lines(old, &new)
        .unified_diff()
        .header(&shown, &shown)
        .to_string();
    Ok((new, diff))
}

/// Writes the config atomically, readable by the person only (it may
/// hold keys), its directory made.
pub fn write_config(path: &std::path::Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    // A config linked from elsewhere (a dotfiles repository) is written
    // where it is, not replaced by a file of its own.
    let real = path.canonicalize().ok();
    let path = real.as_deref().unwrap_or(path);
    let dir = path
        .parent()
        .ok_or_else(|| format!("{} has no directory", path.display()))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mode = std::fs::metadata(path).map_or(0o600, |m| m.permissions().mode() & 0o777);
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .and_then(|()| tmp.write_all(text.as_bytes()))
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| format!("{}: {}", path.display(), e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn claude_codes_hooks_become_lathes() {
        let settings = r#"{
          "permissions": {"allow": ["Bash(npm test)"]},
          "hooks": {
            "PreToolUse": [
              {"matcher": "Edit|MultiEdit|Write", "hooks": [{"type": "command", "command": "~/.claude/guard.sh", "timeout": 30}]},
              {"matcher": "NotebookEdit", "hooks": [{"type": "command", "command": "x"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "npm test --silent || echo '{\"decision\":\"block\"}'"}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "prompt", "prompt": "judge it"}]}],
            "TeammateIdle": [{"hooks": [{"type": "command", "command": "y"}]}]
          }
        }"#;
        let got = import(settings).unwrap();
        assert_eq!(got.count, 2);
        assert!(
            got.toml.contains(
                "[[hooks.before_tool_call]]\nmatch = \"edit_file|write_file\"\ncommand = \"~/.claude/guard.sh\"\ntimeout_secs = 30\n"
            ),
            "{}",
            got.toml
        );
        assert!(
            got.toml.contains("[[hooks.stop]]\nmatch = \"*\""),
            "{}",
            got.toml
        );
        let skipped = got.skipped.join("\n");
        assert!(skipped.contains("NotebookEdit"), "{skipped}");
        assert!(skipped.contains("type `prompt`"), "{skipped}");
        assert!(skipped.contains("TeammateIdle"), "{skipped}");
        // What it writes is a config Lathe reads.
        let section: crate::config::file::ConfigFile = toml::from_str(&got.toml).unwrap();
        assert!(section.hooks.is_some());
        // Added to a config: checked, shown, and written whole.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let (new, diff) = appended(&path, "model = \"m\"", &got.toml).unwrap();
        assert!(diff.contains("+[[hooks.stop]]"), "{diff}");
        write_config(&path, &new).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), new);
        assert!(appended(&path, "[hooks]\nstop = 3\n", &got.toml).is_err());
        assert_eq!(import("[]"), Err(ImportError::NoHooks));
        assert!(matches!(import("{"), Err(ImportError::Json(_))));
    }

    proptest! {
        /// Whatever the file holds, it is imported or refused, and what
        /// is imported is TOML Lathe reads.
        #[test]
        fn any_settings_import_safely(matcher in ".{0,40}", command in ".{0,80}", event in "[A-Za-z]{0,20}") {
            let settings = serde_json::json!({"hooks": {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}}).to_string();
            if let Ok(got) = import(&settings) {
                let parsed: Result<crate::config::file::ConfigFile, _> = toml::from_str(&got.toml);
                prop_assert!(parsed.is_ok(), "{}", got.toml);
            }
        }
    }
}
