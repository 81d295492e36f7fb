//! Redirections and here-documents on a command or a compound: the files
//! they read and write, and the code a here-document feeds a shell.

use std::path::{Path, PathBuf};

use tree_sitter::Node;

use super::lexical_join;
use super::walk::{Ctx, Walker, fields, kids, named, text};
use crate::protocol::operation::{Access, FileOp, Redirect, Stdin, Word};

impl Walker<'_> {
    pub(super) fn redirected(&mut self, s: &str, n: Node<'_>, ctx: &Ctx) {
        let mut cx = ctx.clone();
        let mut after: Vec<(bool, Node<'_>)> = Vec::new();
        for (field, c) in fields(n) {
            if field == Some("body") {
                continue;
            }
            match c.kind() {
                "file_redirect" => self.file_redirect(s, c, &mut cx),
                "herestring_redirect" => self.herestring(s, c, &mut cx),
                "heredoc_redirect" => self.heredoc(s, c, &mut cx, &mut after),
                _ if c.is_named() => self.scan(s, c),
                _ => {}
            }
        }
        if let Some(body) = n.child_by_field_name("body") {
            let before = self.cwd.clone();
            self.statement(s, body, &cx);
            // tree-sitter hangs a redirection of a list's last command on
            // the whole list (`cd /tmp && echo x > out`), and a group's
            // redirections are opened before it runs: when the body
            // changed directory, the target is taken in both places.
            if self.cwd != before {
                for c in fields(n)
                    .into_iter()
                    .filter(|(f, _)| *f != Some("body"))
                    .map(|(_, c)| c)
                    .filter(|c| c.kind() == "file_redirect")
                {
                    let mut scratch = Ctx::default();
                    self.file_redirect(s, c, &mut scratch);
                }
            }
        }
        // What tree-sitter hangs off a here-document: the rest of its
        // pipeline (fed by it) and the rest of its list.
        for (is_pipe, c) in after {
            if is_pipe {
                for stage in named(c) {
                    let cx = Ctx {
                        stdin: Stdin::Pipe,
                        ..Ctx::default()
                    };
                    self.child(s, stage, &cx);
                }
            } else {
                self.child(s, c, ctx);
            }
        }
    }

    pub(super) fn file_redirect(&mut self, s: &str, n: Node<'_>, cx: &mut Ctx) {
        let fd = n
            .child_by_field_name("descriptor")
            .map(|d| text(s, d).to_string());
        let op: String = kids(n)
            .into_iter()
            .filter(|k| !k.is_named())
            .map(|k| text(s, k))
            .collect();
        let mut targets = Vec::new();
        for (field, c) in fields(n) {
            if field == Some("destination") {
                targets.extend(self.words(s, c));
            }
        }
        let target = match targets.len() {
            1 => targets.remove(0),
            _ => Word {
                text: targets
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                dynamic: true,
                ..Word::default()
            },
        };
        let redirect = Redirect {
            fd: fd.clone(),
            op: op.clone(),
            target: target.text.clone(),
        };
        let on_stdin = fd.as_deref().is_none_or(|f| f == "0");
        if op == "<" || op == "<>" {
            if on_stdin {
                // `< <(cmd)` reads another command's output.
                cx.stdin = if target.text.starts_with("<(") {
                    Stdin::Pipe
                } else {
                    Stdin::File
                };
            }
            self.file_access(&target, Access::Read);
        }
        if redirect.writes() {
            self.file_access(&target, Access::Write);
        }
        cx.redirects.push(redirect);
    }

    pub(super) fn herestring(&mut self, s: &str, n: Node<'_>, cx: &mut Ctx) {
        let mut words = Vec::new();
        for c in named(n) {
            if c.kind() != "file_descriptor" {
                words.extend(self.words(s, c));
            }
        }
        let literal = words.iter().all(|w| !w.dynamic);
        let code = literal.then(|| {
            words
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        });
        cx.stdin = Stdin::Inline { code };
    }

    pub(super) fn heredoc<'t>(
        &mut self,
        s: &str,
        n: Node<'t>,
        cx: &mut Ctx,
        after: &mut Vec<(bool, Node<'t>)>,
    ) {
        let mut quoted = false;
        let mut body_text = String::new();
        let mut literal = true;
        for (field, c) in fields(n) {
            match (field, c.kind()) {
                (_, "heredoc_start") => {
                    quoted = text(s, c).contains(['\'', '"', '\\']);
                }
                (_, "heredoc_body") => {
                    body_text = text(s, c).to_string();
                    if !quoted {
                        for part in named(c) {
                            if part.kind() != "heredoc_content" {
                                literal = false;
                                self.scan(s, part);
                            }
                        }
                    }
                }
                (_, "file_redirect") => self.file_redirect(s, c, cx),
                (_, "herestring_redirect") => self.herestring(s, c, cx),
                (_, "pipeline") => after.push((true, c)),
                (Some("right"), _) => after.push((false, c)),
                _ if c.is_named() && c.kind() != "heredoc_end" => self.scan(s, c),
                _ => {}
            }
        }
        cx.stdin = Stdin::Inline {
            code: (quoted || literal).then_some(body_text),
        };
    }

    /// Records a file a redirection reads or writes. Device files that
    /// stand for streams are not files.
    pub(super) fn file_access(&mut self, target: &Word, access: Access) {
        let cwd = self.cwd.clone();
        self.file_op(target, access, cwd.as_deref(), false);
    }

    /// Records a file the line touches, as seen from `cwd`.
    pub(super) fn file_op(
        &mut self,
        target: &Word,
        access: Access,
        cwd: Option<&Path>,
        named: bool,
    ) {
        let t = target.text.as_str();
        if !target.dynamic
            && (matches!(
                t,
                "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/stdin" | "/dev/tty"
            ) || t.starts_with("/dev/fd/"))
        {
            return;
        }
        // A glob that matched nothing stays as written, as in bash.
        let op = match (cwd, !target.dynamic) {
            (Some(cwd), true) => self.resolve_file(cwd, t, access, named),
            _ => FileOp {
                path: t.to_string(),
                access,
                outside: true,
                named,
                deletes: false,
            },
        };
        if self.files_seen.insert(op.clone()) {
            self.out.files.push(op);
        }
    }

    /// Where `t` lands from `cwd`: symbolic links on the way are followed
    /// as the kernel follows them (`link/..` is the link target's parent).
    pub(super) fn resolve_file(&self, cwd: &Path, t: &str, access: Access, named: bool) -> FileOp {
        let ws = self.env.workspace;
        let joined = if Path::new(t).is_absolute() {
            PathBuf::from(t)
        } else {
            cwd.join(t)
        };
        match ws.check(&joined.to_string_lossy()) {
            Ok(abs) => FileOp {
                path: ws.display_relative(&abs),
                access,
                outside: false,
                named,
                deletes: false,
            },
            Err(_) => FileOp {
                path: lexical_join(cwd, t).display().to_string(),
                access,
                outside: true,
                named,
                deletes: false,
            },
        }
    }
}
