//! `/init`: the model studies the repository with what only reads (its
//! commands run in a read-only sandbox for the turn) and proposes an
//! `AGENTS.md`, or changes to the one there, written through the
//! ordinary approval with its diff.

use std::path::Path;

/// The person's `/init [what to stress]` as the turn's message; `None`
/// when the message is not `/init`.
pub(crate) fn expanded(message: &str, root: &Path) -> Option<String> {
    let rest = message.trim_start().strip_prefix("/init")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let exists = root.join("AGENTS.md").is_file();
    let write = if exists {
        "AGENTS.md exists: read it first, then propose changes to it with edit_file, keeping what \
         is still right and correcting what is not"
    } else {
        "Then write it with write_file"
    };
    let asked = match rest.trim() {
        "" => String::new(),
        more => format!("\n\nThe person adds: {more}"),
    };
    Some(format!(
        "Study this repository and propose an AGENTS.md at its root: what a coding agent, or a \
         new contributor, needs to know to work here.\n\n\
         Look first, with what only reads: list the top level and the main directories; read \
         the README, the build files (Cargo.toml, package.json, pyproject.toml, go.mod, \
         Makefile, …), the CI configuration and a few representative source and test files. \
         Find the commands that build, test, lint and format, and check them where a run that \
         changes nothing can (this turn's commands run in a read-only sandbox: a dry run, \
         `--help`, a listing); say which you could not check.\n\n\
         {write}. Keep it short and specific to this repository, with no generic advice:\n\
         - Build and test: the exact commands.\n\
         - Layout: the main directories and what lives in each.\n\
         - Conventions: style, naming, errors, tests, commits, as the code shows them.\n\
         - Pitfalls: what is easy to get wrong here.\n\
         The person reviews the change before it is written.{asked}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_asks_to_write_or_to_change_what_is_there() {
        let ws = tempfile::tempdir().unwrap();
        assert!(expanded("/initialize", ws.path()).is_none());
        assert!(expanded("init", ws.path()).is_none());
        let fresh = expanded(" /init", ws.path()).unwrap();
        assert!(fresh.contains("write it with write_file"), "{fresh}");
        std::fs::write(ws.path().join("AGENTS.md"), "# Old\n").unwrap();
        let again = expanded("/init stress the release steps", ws.path()).unwrap();
        assert!(
            again.contains("AGENTS.md exists") && again.contains("edit_file"),
            "{again}"
        );
        assert!(
            again.ends_with("The person adds: stress the release steps"),
            "{again}"
        );
    }
}
