//! What a command runs besides itself, looked into when it is literal:
//! the shell's own builtins that run or evaluate code (`eval`, `source`,
//! `trap`, `alias`), programs that run a command string later or elsewhere
//! (`watch`, tmux, `at`, nix), and build tools that run code from
//! elsewhere (go, cargo, npm, make, `find -exec`).

use super::interpreters::{is_stdin_path, source_of};
use super::path_inside;
use super::roles::variable_names;
use super::tables::REDEFINERS;
use super::walk::{Ctx, Walker};
use super::wrappers::skip_options;
use crate::policy::options::{gives_option, has_option, operands, option_values};
use crate::protocol::operation::{Stdin, Word, join};

impl Walker<'_> {
    /// Commands that run other code: look into it when it is literal.
    pub(super) fn look_inside(&mut self, base: &str, args: &[Word], cx: &Ctx) {
        if let Some(source) = source_of(base, args) {
            return self.interpreter(base, args, source, cx);
        }
        // Every builtin that takes a variable's name evaluates the
        // subscript of an array element as code: a name with `[` in it,
        // whichever builtin and option it is given to, is code.
        if variable_names(base, args).iter().any(|n| n.contains('[')) {
            self.evaluates(&format!("gives `{base}` an array element by name"));
        }
        // Whichever of them takes `base` says so.
        let _ = self.shell_code(base, args, cx)
            || self.runs_later(base, args, cx)
            || self.build_tool(base, args);
    }

    /// The shell's own builtins that run or evaluate code (`eval`,
    /// `source`, `trap`, `alias`, arithmetic, variables by name), or change
    /// how later commands run.
    fn shell_code(&mut self, base: &str, args: &[Word], cx: &Ctx) -> bool {
        match base {
            "eval" => {
                self.complex("uses eval");
                if !args.is_empty() && args.iter().all(|a| !a.dynamic) {
                    let code = join(args);
                    self.nested(&code, false, cx.stdin.clone());
                }
            }
            "source" | "." => {
                self.complex("runs the commands of a file (source)");
                let from_stdin = operands(args)
                    .first()
                    .is_some_and(|a| is_stdin_path(&a.text));
                if from_stdin && let Stdin::Inline { code: Some(code) } = &cx.stdin {
                    let code = code.clone();
                    self.nested(&code, false, Stdin::Inherited);
                }
            }
            "trap" => {
                let ops = operands(args);
                if !gives_option(args, "pl", &[]) && ops.len() >= 2 {
                    self.code_string(ops[0], "trap");
                }
            }
            "alias" => {
                for a in args {
                    if let Some((name, value)) = a.text.split_once('=') {
                        let first = value.split_whitespace().next().unwrap_or("").to_string();
                        self.calls.entry(name.to_string()).or_default().push(first);
                        let code = Word {
                            text: value.to_string(),
                            ..a.clone()
                        };
                        self.code_string(&code, "alias");
                    }
                }
            }
            "hash" => {
                for path in option_values(args, 'p', "") {
                    let code = Word::literal(path);
                    self.code_string(&code, "hash -p");
                }
            }
            "mapfile" | "readarray" => {
                self.reads_into_variables = true;
                for code in option_values(args, 'C', "") {
                    let dynamic = args.iter().any(|a| a.dynamic && a.text.contains(code));
                    let w = Word {
                        dynamic,
                        ..Word::literal(code)
                    };
                    self.code_string(&w, "mapfile -C");
                }
            }
            "compgen" | "complete" => {
                for code in option_values(args, 'C', "") {
                    self.code_string(&Word::literal(code), "compgen -C");
                }
            }
            "printf" => {
                for name in option_values(args, 'v', "") {
                    self.assigned_by_name(name);
                }
            }
            "read" => {
                self.reads_into_variables = true;
                for a in operands(args) {
                    self.assigned_by_name(&a.text);
                }
            }
            "let" => self.evaluates("evaluates arithmetic (let)"),
            "test" | "[" if args.iter().any(|a| a.text == "-v") => {
                self.evaluates("tests a variable by name");
            }
            "declare" | "typeset" | "local" | "export" | "readonly"
                if has_option(args, "in", &[]) =>
            {
                self.evaluates("declares an integer or reference variable");
            }
            b if REDEFINERS.contains(&b) => {
                if b == "shopt" {
                    self.cd_redefined = true;
                }
                self.complex(format!("uses `{b}`, which changes how later commands run"));
            }
            _ => return false,
        }
        true
    }

    /// Programs that run a command string later or elsewhere (`watch`,
    /// tmux, `script -c`, nix, `at`, GNU parallel).
    fn runs_later(&mut self, base: &str, args: &[Word], cx: &Ctx) -> bool {
        match base {
            "watch" => {
                self.complex("runs a command string (watch)");
                let at = skip_options(args, 0, "nd", &["interval", "differences"]);
                let rest = &args[at.min(args.len())..];
                if !rest.is_empty() && rest.iter().all(|a| !a.dynamic) {
                    let code = join(rest);
                    self.nested(&code, true, Stdin::Inherited);
                }
            }
            // Programs that run a command string later or elsewhere.
            "tmux" | "screen" => {
                let ops = operands(args);
                let runs = ops.first().is_some_and(|sub| {
                    matches!(
                        sub.text.as_str(),
                        "new-session"
                            | "new"
                            | "new-window"
                            | "neww"
                            | "split-window"
                            | "splitw"
                            | "run-shell"
                            | "run"
                            | "respawn-pane"
                            | "respawnp"
                            | "respawn-window"
                            | "respawnw"
                            | "send-keys"
                            | "send"
                    )
                }) || base == "screen";
                if runs {
                    let rest: Vec<Word> = ops
                        .iter()
                        .skip(usize::from(base == "tmux"))
                        .map(|w| (*w).clone())
                        .collect();
                    if !rest.is_empty() {
                        let code = Word {
                            text: join(&rest),
                            dynamic: rest.iter().any(|w| w.dynamic),
                            ..Word::default()
                        };
                        self.code_string(&code, base);
                    }
                }
            }
            "script" => {
                for code in option_values(args, 'c', "command") {
                    self.code_string(&Word::literal(code), "script -c");
                }
            }
            "nix-shell" => {
                for code in option_values(args, '\0', "run")
                    .into_iter()
                    .chain(option_values(args, '\0', "command"))
                {
                    self.code_string(&Word::literal(code), "nix-shell --run");
                }
            }
            "nix" if args.iter().any(|a| a.text == "-c" || a.text == "--command") => {
                let at = args
                    .iter()
                    .position(|a| a.text == "-c" || a.text == "--command")
                    .unwrap_or(args.len());
                let rest = &args[at + 1..];
                self.code_string(
                    &Word {
                        text: join(rest),
                        dynamic: rest.iter().any(|w| w.dynamic),
                        ..Word::default()
                    },
                    "nix … -c",
                );
            }
            "at" | "batch" => {
                if let Stdin::Inline { code: Some(code) } = &cx.stdin {
                    self.code_string(&Word::literal(code.clone()), base);
                } else {
                    self.complex(format!("schedules commands for later ({base})"));
                }
            }
            "parallel" | "tsp" | "entr" | "expect" => {
                self.complex(format!("runs commands it is given ({base})"));
                for a in args.iter().filter(|a| a.text.contains(char::is_whitespace)) {
                    self.code_string(a, base);
                }
            }
            _ => return false,
        }
        true
    }

    /// Build tools and finders that can run code from elsewhere (git, go,
    /// cargo, the node package managers, make, `find -exec`).
    fn build_tool(&mut self, base: &str, args: &[Word]) -> bool {
        match base {
            "git" => self.git(args),
            "go" if args.iter().any(|a| {
                let name = a.text.trim_start_matches('-');
                a.text.starts_with('-')
                    && ["toolexec", "exec", "overlay", "modfile"]
                        .iter()
                        .any(|o| name == *o || name.starts_with(&format!("{o}=")))
            }) =>
            {
                self.complex("runs go with a program or files from elsewhere (-toolexec, -exec)");
            }
            "cargo" => {
                if has_option(args, "", &["config"]) {
                    self.complex("uses cargo --config, which can redefine what cargo runs");
                }
                let elsewhere = option_values(args, '\0', "manifest-path")
                    .into_iter()
                    .any(|m| !path_inside(m, false, self.cwd.as_deref(), self.env.workspace));
                if elsewhere {
                    self.complex("builds another project (--manifest-path)");
                }
            }
            "npm" | "pnpm" | "yarn" | "npx" | "bun" => self.node_package_manager(base, args),
            "make" | "gmake" => self.make(args),
            "find" => self.find_exec(args),
            _ => return false,
        }
        true
    }
}
