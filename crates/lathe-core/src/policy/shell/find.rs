//! `find … -exec`: the command it runs for everything it finds.

use super::lexical_join;
use super::roles::{find_filters, find_starts};
use super::walk::{Ctx, Walker};
use crate::protocol::operation::Word;

impl Walker<'_> {
    /// `find … -exec CMD … ;` runs CMD: it is a command of the line too.
    /// Its `{}` stands for what find finds under its start points, so it is
    /// judged as each start point (`-execdir`: as `.` there); `{}` as the
    /// program runs whatever find finds.
    pub(super) fn find_exec(&mut self, args: &[Word]) {
        let starts = find_starts(args);
        let mut i = 0;
        while i < args.len() {
            let t = args[i].text.as_str();
            if !matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir") {
                i += 1;
                continue;
            }
            // `;` ends it, and `+` right after a `{}`.
            let end = (i + 1..args.len())
                .find(|&k| args[k].text == ";" || (args[k].text == "+" && args[k - 1].text == "{}"))
                .unwrap_or(args.len());
            let inner = &args[i + 1..end];
            i = end + 1;
            if inner.is_empty() {
                continue;
            }
            if self.depth >= 12 {
                // A find that runs a find that runs a find…: a few levels.
                self.unchecked("it nests commands too deeply to check".into());
                return;
            }
            let dir_mode = t.ends_with("dir");
            // Without a test, find finds everything under a start point;
            // with one, some things there.
            let found = if find_filters(args) {
                "found-by-find"
            } else {
                "*"
            };
            let places: Vec<Option<Word>> = match &starts {
                Some(list) => list.iter().take(4).cloned().map(Some).collect(),
                None => vec![None],
            };
            for place in places {
                let saved = self.cwd.clone();
                let under = |dir: &str| Word {
                    glob: found == "*",
                    ..Word::literal(format!("{}/{found}", dir.trim_end_matches('/')))
                };
                let stands_for = match (&place, dir_mode) {
                    (Some(start), true) => {
                        self.cwd = match (&saved, start.is_plain()) {
                            (Some(c), true) => Some(lexical_join(c, &start.text)),
                            _ => None,
                        };
                        under(".")
                    }
                    (Some(start), false) if start.is_plain() => under(&start.text),
                    (Some(start), false) => Word {
                        text: format!("{}/{found}", start.text),
                        ..start.clone()
                    },
                    (None, _) => Word {
                        text: "{}".into(),
                        dynamic: true,
                        known_prefix: 0,
                        ..Word::default()
                    },
                };
                let argv: Vec<Word> = inner
                    .iter()
                    .enumerate()
                    .map(|(k, w)| {
                        if !w.text.contains("{}") {
                            return w.clone();
                        }
                        if k == 0 {
                            // The program is whatever find finds.
                            return Word {
                                dynamic: true,
                                known_prefix: 0,
                                ..w.clone()
                            };
                        }
                        Word {
                            text: w.text.replace("{}", &stands_for.text),
                            dynamic: w.dynamic || stands_for.dynamic,
                            glob: stands_for.glob,
                            known_prefix: if stands_for.dynamic { 0 } else { w.text.len() },
                            ..w.clone()
                        }
                    })
                    .collect();
                self.depth += 1;
                let outer = std::mem::replace(&mut self.in_find_exec, true);
                self.interpret(Vec::new(), argv, Vec::new(), Ctx::default(), false);
                self.in_find_exec = outer;
                self.depth -= 1;
                self.cwd = saved;
            }
        }
    }
}
