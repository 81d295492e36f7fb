//! The person's own commands: each Markdown file in the `commands/`
//! directory beside their config (`~/.config/lathe/commands/review.md`)
//! is a `/review` command (and, once trusted, the workspace's
//! `.lathe/commands/`). Its first line, shown where the front end lists
//! commands, says what it does; the whole file is the message sent,
//! `$ARGUMENTS` replaced by what follows the command (or, without one,
//! what follows goes after it). A name one of the front end's own
//! commands has is left to it, with a warning. The terminal UI and the
//! editors (`lathe acp`) both read them here.

use std::path::Path;

/// The largest prompt file read.
const MAX_BYTES: u64 = 64 * 1024;

/// One command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Custom {
    /// `/name`.
    pub name: String,
    /// Its first line, for the popup.
    pub about: String,
    /// The prompt.
    pub body: String,
}

/// The commands in `dir`, by name, and what was left out and why;
/// `reserved` are the front end's own (`/diff`).
pub fn load(dir: &Path, reserved: &[&str]) -> (Vec<Custom>, Vec<String>) {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (out, warnings);
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("md") {
            continue;
        }
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let shown = crate::protocol::visible::name(&path.display().to_string()).into_owned();
        let name = stem.to_ascii_lowercase();
        let fits = !name.is_empty()
            && name.len() <= 40
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !fits {
            warnings.push(format!(
                "{shown}: a command's name is letters, digits, - and _ (at most 40)"
            ));
            continue;
        }
        let name = format!("/{name}");
        if reserved.contains(&name.as_str()) {
            warnings.push(format!(
                "{shown}: {name} is Lathe's own command; yours is left out"
            ));
            continue;
        }
        // Really in this directory (a link in a repository's commands
        // cannot hand over a file of the person's home), regular, capped.
        let body = match crate::tools::fs::named::read_within(&path, dir, &shown, MAX_BYTES) {
            Ok(named) => String::from_utf8(named.bytes),
            Err(e) => {
                warnings.push(format!("{e}; it is left out"));
                continue;
            }
        };
        let body = match body {
            Ok(b) if !b.trim().is_empty() => b,
            Ok(_) => continue,
            Err(_) => {
                warnings.push(format!("{shown}: not text; it is left out"));
                continue;
            }
        };
        let about = body
            .lines()
            .map(|l| l.trim().trim_start_matches('#').trim())
            .find(|l| !l.is_empty())
            .map(|l| {
                let mut about: String = l.chars().take(80).collect();
                if about.len() < l.len() {
                    about.pop();
                    about.push('…');
                }
                about
            })
            .unwrap_or_default();
        out.push(Custom { name, about, body });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    (out, warnings)
}

/// The message `line` (`/name what follows`) sends, if it names one of
/// `commands`.
pub fn expand(commands: &[Custom], line: &str) -> Option<String> {
    let line = line.trim();
    let (name, args) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let c = commands.iter().find(|c| c.name == name)?;
    let args = args.trim();
    let body = c.body.trim_end();
    Some(if body.contains("$ARGUMENTS") {
        body.replace("$ARGUMENTS", args)
    } else if args.is_empty() {
        body.to_string()
    } else {
        format!("{body}\n\n{args}")
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Prompt files become commands: named by the file, described by the
    /// first line, `$ARGUMENTS` replaced; a built-in's name, a bad name
    /// and a huge file are left out, each with why.
    #[test]
    fn prompt_files_become_commands() {
        let d = tempfile::tempdir().unwrap();
        let w = |n: &str, t: &str| std::fs::write(d.path().join(n), t).unwrap();
        w(
            "review.md",
            "# Review a file\n\nReview $ARGUMENTS for bugs.\n",
        );
        w("Tests.md", "Run the tests and fix what fails.\n");
        w("diff.md", "mine\n");
        w("bad name.md", "x\n");
        w("notes.txt", "not a command\n");
        w("huge.md", &"x".repeat(70_000));
        let (commands, warnings) = load(d.path(), &["/diff"]);
        let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["/review", "/tests"]);
        assert_eq!(commands[0].about, "Review a file");
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("/diff is Lathe's own")));
        assert_eq!(
            expand(&commands, "/review src/a.rs").as_deref(),
            Some("# Review a file\n\nReview src/a.rs for bugs.")
        );
        assert_eq!(
            expand(&commands, "/tests quickly").as_deref(),
            Some("Run the tests and fix what fails.\n\nquickly")
        );
        assert_eq!(expand(&commands, "/nope"), None);
        assert!(load(&d.path().join("none"), &[]).0.is_empty());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod safe_open_tests {
    use super::*;

    /// A repository's command that is a link to a file of the person's
    /// (`deploy.md -> ~/.config/gh/hosts.yml`) is left out, never shown
    /// in the trust question nor sent: only files really in the commands'
    /// directory are read.
    #[test]
    fn a_command_linked_out_of_its_directory_is_left_out() {
        let home = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("hosts.yml"), "oauth_token: gho_SECRET\n").unwrap();
        std::os::unix::fs::symlink(home.path().join("hosts.yml"), dir.path().join("deploy.md"))
            .unwrap();
        std::fs::write(dir.path().join("review.md"), "Review the diff.\n").unwrap();
        let (commands, warnings) = load(dir.path(), &[]);
        let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["/review"], "{warnings:?}");
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("deploy.md") && w.contains("leads outside")),
            "{warnings:?}"
        );
        assert!(!format!("{commands:?}{warnings:?}").contains("gho_SECRET"));
    }
}
