//! The system prompt: Lathe's own instructions (assets/system-prompt.md),
//! a few facts about the environment, and the workspace's AGENTS.md when
//! there is one (cut at 32 KiB). Built once per session, so the prompt
//! prefix is stable across requests and provider caches hit.
//!
//! AGENTS.md is read as `read_file` reads: inside the workspace (a symlink
//! out is ignored), a regular file only (a FIFO or a device is ignored, so
//! it cannot hang or flood the start), at most 32 KiB; the agent hides
//! secrets in it as in all that goes to the model (`Shared::to_model`).

use crate::policy::Workspace;
use crate::tools::fs::regular;

const BASE: &str = include_str!("../../assets/system-prompt.md");
/// The most of AGENTS.md that goes into the prompt.
const MAX_AGENTS_MD: usize = 32 * 1024;

/// Builds the system prompt for a session in `workspace`.
pub fn build(workspace: &Workspace) -> String {
    let mut prompt = String::with_capacity(BASE.len() + 512);
    prompt.push_str(BASE.trim_end());
    prompt.push_str(&format!(
        "\n\n# Environment\n- Workspace: {}\n- Platform: {} ({})\n- Shell: sh\n",
        workspace.root().display(),
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

fn agents_md(workspace: &Workspace) -> Option<String> {
    let path = match workspace.resolve_existing("AGENTS.md") {
        Ok(p) => p,
        Err(e) => {
            if workspace.root().join("AGENTS.md").exists() {
                tracing::warn!("AGENTS.md ignored: {e}");
            }
            return None;
        }
    };
    let (bytes, more) = match regular::read_capped(&path, "AGENTS.md", MAX_AGENTS_MD as u64) {
        Ok(read) => read,
        Err(e) => {
            tracing::warn!("AGENTS.md ignored: {e}");
            return None;
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if more {
        Some(format!("{text}\n…[AGENTS.md cut at 32 KiB]"))
    } else {
        Some(text.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build_in(d: &std::path::Path) -> String {
        build(&Workspace::new(d).unwrap())
    }

    #[test]
    fn includes_the_base_prompt_and_agents_md() {
        let d = tempfile::tempdir().unwrap();
        let p = build_in(d.path());
        assert!(p.starts_with("You are Lathe"));
        assert!(!p.contains("AGENTS.md says"));
        std::fs::write(
            d.path().join("AGENTS.md"),
            "Run `make check` before you finish.",
        )
        .unwrap();
        let p = build_in(d.path());
        assert!(p.contains("Run `make check` before you finish."));
    }

    /// A symlink out of the workspace, a FIFO, a device and a huge file:
    /// none hangs, floods or leaks.
    #[test]
    fn agents_md_is_contained() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("key"), "TOP-SECRET-OUTSIDE").unwrap();
        let d = tempfile::tempdir().unwrap();
        let agents = d.path().join("AGENTS.md");
        std::os::unix::fs::symlink(outside.path().join("key"), &agents).unwrap();
        assert!(!build_in(d.path()).contains("TOP-SECRET-OUTSIDE"));
        std::fs::remove_file(&agents).unwrap();
        nix::unistd::mkfifo(&agents, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(!build_in(d.path()).contains("AGENTS.md says"));
        std::fs::remove_file(&agents).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &agents).unwrap();
        assert!(!build_in(d.path()).contains("AGENTS.md says"));
        std::fs::remove_file(&agents).unwrap();
        std::fs::write(&agents, "x".repeat(1 << 20)).unwrap();
        let p = build_in(d.path());
        assert!(p.contains("[AGENTS.md cut at 32 KiB]"));
        assert!(p.len() < 40 * 1024 + 8 * 1024);
    }
}
