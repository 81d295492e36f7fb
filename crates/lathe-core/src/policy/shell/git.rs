//! git on a command line: its global options, the subcommand, what it
//! runs (aliases, `-c` settings, hooks) and the files it writes.

use super::path_inside;
use super::roles::words_of;
use super::tables::{GIT_COMMANDS, SUBCOMMANDS, known_flags};
use super::walk::Walker;
use crate::policy::options::{gives_option, has_option, operands, option_values};
use crate::protocol::operation::{Access, Word, join};

impl Walker<'_> {
    pub(super) fn git(&mut self, args: &[Word]) {
        let Some(i) = self.git_global_options(args) else {
            return;
        };
        let Some(sub) = args.get(i) else {
            return;
        };
        let rest = args.get(i + 1..).unwrap_or_default();
        if !sub.is_plain() {
            self.complex("computes the git subcommand at run time");
            return;
        }
        if !GIT_COMMANDS.contains(&sub.text.as_str()) {
            self.complex(format!(
                "`git {}` may be an alias or an external command",
                sub.text
            ));
        }
        if has_option(
            rest,
            "",
            &[
                "output",
                "ext-diff",
                "upload-pack",
                "receive-pack",
                "config",
                "template",
            ],
        ) || (has_option(rest, "u", &[])
            && matches!(
                sub.text.as_str(),
                "fetch" | "clone" | "pull" | "ls-remote" | "archive"
            ))
        {
            self.complex("uses a git option that writes a file or runs a configured program");
        }
        let strings = self.git_command_strings(&sub.text, rest);
        for code in strings {
            self.code_string(&code, "a git command string");
        }
    }

    /// git's global options, each judged; where the subcommand is (`None`
    /// when it cannot be known).
    fn git_global_options(&mut self, args: &[Word]) -> Option<usize> {
        // Global options: those Lathe knows, with or without a value; an
        // unknown one may take the next word, so the subcommand is unsure.
        let flags = known_flags("git").unwrap_or_default();
        let with_value = SUBCOMMANDS
            .iter()
            .find(|(p, _)| *p == "git")
            .map_or(&[][..], |(_, v)| *v);
        let mut i = 0;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            if a.dynamic {
                self.complex("computes a git option at run time");
                return None;
            }
            if !t.starts_with('-') {
                break;
            }
            if t == "-c" || (t.starts_with("-c") && t.len() > 2) {
                let setting = if t == "-c" {
                    args.get(i + 1).cloned()
                } else {
                    Some(Word {
                        text: t[2..].to_string(),
                        ..a.clone()
                    })
                };
                if let Some(w) = setting
                    && let Some((key, value)) = w.text.split_once('=')
                {
                    let value = Word {
                        text: value.to_string(),
                        ..w.clone()
                    };
                    self.git_config(key, &value);
                }
            }
            let name = t.split_once('=').map_or(t, |(n, _)| n);
            if matches!(
                name,
                "-c" | "--config-env"
                    | "--git-dir"
                    | "--work-tree"
                    | "--namespace"
                    | "--super-prefix"
            ) || t.starts_with("-c")
                || (name == "--exec-path" && t.contains('='))
            {
                self.complex(
                    "uses a git option that changes which repository or configuration git uses",
                );
            }
            if t == "-C" {
                let inside = args.get(i + 1).is_some_and(|d| {
                    !d.dynamic
                        && path_inside(&d.text, d.glob, self.cwd.as_deref(), self.env.workspace)
                });
                if !inside {
                    self.complex("runs git in another directory");
                }
            }
            if flags.contains(&name) || t.contains('=') || (t.starts_with("-c") && t.len() > 2) {
                i += 1;
            } else if with_value.contains(&name) {
                i += 2;
            } else {
                self.complex(format!(
                    "uses `{t}`, a git option Lathe does not know, so its subcommand is unsure"
                ));
                return None;
            }
        }
        Some(i)
    }

    /// The command strings a subcommand runs (`rebase -x`, `bisect run`,
    /// filters); `git config` writes are judged on the way.
    fn git_command_strings(&mut self, sub: &str, rest: &[Word]) -> Vec<Word> {
        match sub {
            "rebase" => words_of(option_values(rest, 'x', "exec"), rest),
            "difftool" | "mergetool" => words_of(option_values(rest, 'x', "extcmd"), rest),
            "filter-branch" => [
                "tree-filter",
                "index-filter",
                "msg-filter",
                "commit-filter",
                "env-filter",
                "parent-filter",
                "tag-name-filter",
            ]
            .iter()
            .flat_map(|f| words_of(option_values(rest, '\0', f), rest))
            .collect(),
            "bisect" | "submodule" => {
                let ops = operands(rest);
                let at = ops
                    .iter()
                    .position(|w| matches!(w.text.as_str(), "run" | "foreach"));
                match at {
                    Some(k) => {
                        let after: Vec<Word> = ops[k + 1..].iter().map(|w| (*w).clone()).collect();
                        vec![Word {
                            text: join(&after),
                            dynamic: after.iter().any(|w| w.dynamic),
                            ..Word::default()
                        }]
                    }
                    None => Vec::new(),
                }
            }
            "config" => {
                self.git_config_write(rest);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// `git config KEY VALUE` writes `.git/config` (or `~/.gitconfig`,
    /// or `--file F`): a protected file; a value git runs is looked into.
    fn git_config_write(&mut self, rest: &[Word]) {
        let reading = gives_option(
            rest,
            "l",
            &[
                "get",
                "get-all",
                "get-regexp",
                "list",
                "get-urlmatch",
                "get-color",
                "get-colorbool",
            ],
        );
        let ops = operands(rest);
        let writes = !reading
            && (ops.len() >= 2
                || has_option(
                    rest,
                    "e",
                    &[
                        "unset",
                        "unset-all",
                        "add",
                        "replace-all",
                        "edit",
                        "rename-section",
                        "remove-section",
                    ],
                ));
        if !writes {
            return;
        }
        if let [key, value, ..] = ops.as_slice() {
            self.git_config(&key.text, value);
        }
        let target = if has_option(rest, "", &["global"]) {
            self.env
                .home
                .as_ref()
                .map(|h| h.join(".gitconfig").display().to_string())
        } else if has_option(rest, "", &["system"]) {
            Some("/etc/gitconfig".into())
        } else if let Some(f) = option_values(rest, 'f', "file").first() {
            Some((*f).to_string())
        } else {
            Some(".git/config".into())
        };
        if let Some(t) = target {
            let cwd = self.cwd.clone();
            self.file_op(&Word::literal(t), Access::Write, cwd.as_deref(), false);
        }
    }
}
