//! The system prompt: Lathe's own instructions (assets/system-prompt.md),
//! a few facts about the environment, and the workspace's AGENTS.md when
//! there is one (cut at 32 KiB). Built once per session, so the prompt
//! prefix is stable across requests and provider caches hit.

use std::path::Path;

const BASE: &str = include_str!("../../assets/system-prompt.md");
/// The most of AGENTS.md that goes into the prompt.
const MAX_AGENTS_MD: usize = 32 * 1024;

/// Builds the system prompt for a session in `workspace`.
pub fn build(workspace: &Path) -> String {
    let mut prompt = String::with_capacity(BASE.len() + 512);
    prompt.push_str(BASE.trim_end());
    prompt.push_str(&format!(
        "\n\n# Environment\n- Workspace: {}\n- Platform: {} ({})\n- Shell: sh\n",
        workspace.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
    ));
    if let Some(agents) = agents_md(workspace) {
        prompt
            .push_str("\n# Project instructions (AGENTS.md)\nThe workspace's AGENTS.md says:\n\n");
        prompt.push_str(&agents);
        prompt.push('\n');
    }
    prompt
}

fn agents_md(workspace: &Path) -> Option<String> {
    let text = std::fs::read_to_string(workspace.join("AGENTS.md")).ok()?;
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if text.len() <= MAX_AGENTS_MD {
        return Some(text.to_string());
    }
    let mut end = MAX_AGENTS_MD;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(format!("{}\n…[AGENTS.md cut at 32 KiB]", &text[..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_the_base_prompt_and_agents_md() {
        let d = tempfile::tempdir().unwrap();
        let p = build(d.path());
        assert!(p.starts_with("You are Lathe"));
        assert!(!p.contains("AGENTS.md says"));
        std::fs::write(
            d.path().join("AGENTS.md"),
            "Run `make check` before you finish.",
        )
        .unwrap();
        let p = build(d.path());
        assert!(p.contains("Run `make check` before you finish."));
    }
}
