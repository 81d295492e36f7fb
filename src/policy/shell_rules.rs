//! Shell rules: the denylist that refuses obviously destructive commands
//! before they run, and the program name that scopes shell grants.
//!
//! The denylist is a first line of defence, not a sandbox: it matches
//! case-insensitive substrings (after folding runs of white space) of the
//! patterns in the seeds. It holds in every approval mode.

/// A denylisted pattern and why it is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeniedPattern {
    pub pattern: &'static str,
    pub reason: &'static str,
}

/// The patterns from the tools reference (seed 002), matched case-insensitively.
pub const DENYLIST: &[DeniedPattern] = &[
    DeniedPattern {
        pattern: "rm -rf /",
        reason: "filesystem destruction",
    },
    DeniedPattern {
        pattern: "rm -fr /",
        reason: "filesystem destruction",
    },
    DeniedPattern {
        pattern: "sudo ",
        reason: "privilege escalation",
    },
    DeniedPattern {
        pattern: "mkfs",
        reason: "filesystem formatting",
    },
    DeniedPattern {
        pattern: "dd if=",
        reason: "raw disk write",
    },
    DeniedPattern {
        pattern: ":(){ :|:& };:",
        reason: "fork bomb",
    },
    DeniedPattern {
        pattern: ":(){:|:&};:",
        reason: "fork bomb",
    },
    DeniedPattern {
        pattern: "chmod 777 /",
        reason: "dangerous permission change",
    },
    DeniedPattern {
        pattern: "> /dev/sd",
        reason: "raw device write",
    },
    DeniedPattern {
        pattern: "shutdown",
        reason: "system shutdown",
    },
    DeniedPattern {
        pattern: "reboot",
        reason: "system reboot",
    },
    DeniedPattern {
        pattern: "poweroff",
        reason: "system power off",
    },
    DeniedPattern {
        pattern: "format c:",
        reason: "disk formatting",
    },
];

/// Returns the first denylisted pattern `command` contains.
pub fn denied(command: &str) -> Option<&'static DeniedPattern> {
    let folded = fold(command);
    DENYLIST.iter().find(|d| folded.contains(d.pattern))
}

/// Lower-cases and folds every run of white space to one space, so
/// `RM   -RF\t/` is caught like `rm -rf /`. A trailing `sudo` (no argument)
/// gets its space back so the `sudo ` pattern sees it.
fn fold(command: &str) -> String {
    let mut out = String::with_capacity(command.len() + 1);
    let mut in_space = false;
    for ch in command.chars() {
        if ch.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.extend(ch.to_lowercase());
            in_space = false;
        }
    }
    if !out.ends_with(' ') {
        out.push(' ');
    }
    out
}

/// The program a command runs, for grant scopes: the first word that is not
/// an environment assignment (`FOO=1 cargo test` → `cargo`), without its
/// directory (`/usr/bin/git` → `git`).
pub fn program_name(command: &str) -> String {
    command
        .split_whitespace()
        .find(|w| !is_assignment(w))
        .map(|w| {
            let w = w.trim_start_matches(['(', '{']);
            w.rsplit('/').next().unwrap_or(w).to_string()
        })
        .filter(|w| !w.is_empty())
        .unwrap_or_else(|| "sh".to_string())
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denylist_matches_case_insensitively_and_across_spacing() {
        for cmd in [
            "rm -rf /",
            "RM  -RF\t/ ",
            "echo hi && sudo rm x",
            "sudo",
            "mkfs.ext4 /dev/sda1",
            "dd if=/dev/zero of=/dev/sda",
            ":(){ :|:& };:",
            "chmod 777 /",
            "cat x > /dev/sda",
            "shutdown -h now",
            "systemctl reboot",
            "poweroff",
            "FORMAT C:",
        ] {
            assert!(denied(cmd).is_some(), "{cmd} should be denied");
        }
    }

    #[test]
    fn ordinary_commands_pass() {
        for cmd in [
            "cargo test",
            "rm -rf target",
            "ls -la /",
            "echo sudoku",
            "git status",
        ] {
            assert!(denied(cmd).is_none(), "{cmd} should pass");
        }
    }

    #[test]
    fn program_name_skips_assignments_and_directories() {
        assert_eq!(program_name("cargo test --all"), "cargo");
        assert_eq!(program_name("RUST_LOG=debug cargo run"), "cargo");
        assert_eq!(program_name("/usr/bin/git status"), "git");
        assert_eq!(program_name("  "), "sh");
        assert_eq!(program_name("(cd src && ls)"), "cd");
    }
}
