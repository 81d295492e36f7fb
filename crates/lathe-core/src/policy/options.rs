//! Command-line options as programs read them, in one place: every check
//! in `policy` that looks at a program's options reads them through
//! [`Scan`], so no two checks can read the same words differently.
//!
//! GNU `getopt_long`'s rules: short letters combine (`-uo` is `-u -o`),
//! a short option's value may be attached (`-ofile`) or the next word, long
//! options may be abbreviated (`--outp` is `--output`) and carry a value
//! after `=` or in the next word, `--` ends the options, and options may
//! follow operands unless the program stops at its first operand (POSIX
//! order, and every wrapper: what follows is the wrapped command's).
//! Checks that look for an option by its exact text miss all of these.
//!
//! Syntaxes that are not getopt's keep their own readers, each beside
//! the program it reads: git's global options (`handle_options` in
//! git.c: `-C` and `-c` take the next word only), find's expression,
//! kill's signal, chmod's modes, and the tool-rule canonical form.

use crate::protocol::operation::Word;

/// How a program reads its options: what `getopt_long` is told.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Spec<'s> {
    /// Short options that take a value: the rest of the cluster, or the
    /// next word when nothing is left.
    pub(crate) short_val: &'s str,
    /// Short options whose value is optional: the rest of the cluster
    /// only (`date -I`, `sed -i`).
    pub(crate) short_opt: &'s str,
    /// Long options that take a value: after `=`, or the next word.
    pub(crate) long_val: &'s [&'s str],
    /// Options end at the first operand. Otherwise (GNU) they may come
    /// after operands.
    pub(crate) posix: bool,
    /// `+x` is an option too (the shells' `+o`, `+O`).
    pub(crate) plus: bool,
    /// Long options take one dash and are written whole (Go's flags:
    /// `-tags x`, `-C dir`); there are no clusters.
    pub(crate) single_dash: bool,
}

impl<'s> Spec<'s> {
    /// A program whose options end at its first operand.
    pub(crate) fn posix(short_val: &'s str, long_val: &'s [&'s str]) -> Self {
        Self {
            short_val,
            long_val,
            posix: true,
            ..Self::default()
        }
    }

    /// A program whose options may follow its operands (GNU).
    pub(crate) fn gnu(short_val: &'s str, long_val: &'s [&'s str]) -> Self {
        Self {
            short_val,
            long_val,
            ..Self::default()
        }
    }
}

/// An option's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Value<'a> {
    /// In the option's own word: `-ofile`, `--output=file`.
    Attached(&'a str),
    /// The next word: `-o file`, `--output file`.
    Next(&'a Word),
    /// The option takes a value and the words ran out.
    Missing,
}

impl<'a> Value<'a> {
    /// The value's text, when there is one.
    pub(crate) fn text(self) -> Option<&'a str> {
        match self {
            Value::Attached(t) => Some(t),
            Value::Next(w) => Some(w.text.as_str()),
            Value::Missing => None,
        }
    }

    /// The value as a word: the next word as it is (dynamic or not), an
    /// attached value as a literal (its word was).
    pub(crate) fn word(self) -> Option<Word> {
        match self {
            Value::Attached(t) => Some(Word::literal(t)),
            Value::Next(w) => Some(w.clone()),
            Value::Missing => None,
        }
    }

    /// Whether it came in the next word (which the option used up).
    pub(crate) fn is_next(self) -> bool {
        matches!(self, Value::Next(_))
    }
}

/// One thing read from a program's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arg<'a> {
    /// A short option, alone or in a cluster; its value if it takes one.
    Short {
        letter: char,
        value: Option<Value<'a>>,
    },
    /// A long option, named as written (perhaps abbreviated), without
    /// its `--`; its value if it has one.
    Long {
        name: &'a str,
        value: Option<Value<'a>>,
    },
    /// Not an option: before `--` a word not starting with `-` (or `-`
    /// alone), and every word after `--` (or, in POSIX order, after the
    /// first operand).
    Operand(&'a Word),
    /// A word whose text is known only when it runs (`$X`, `-r$F`),
    /// where an option could be: either. In POSIX order it ends the
    /// options, as a program would see an operand there or read it as
    /// an option whose value is unknown; a check decides which is safe.
    Dynamic(&'a Word),
}

impl<'a> Arg<'a> {
    /// Whether it is one of the `short` letters or one of the `long`
    /// options (abbreviated or not).
    pub(crate) fn is(&self, short: &str, long: &[&str]) -> bool {
        match *self {
            Arg::Short { letter, .. } => short.contains(letter),
            Arg::Long { name, .. } => long.iter().any(|l| long_is(name, l)),
            Arg::Operand(_) | Arg::Dynamic(_) => false,
        }
    }

    /// The option's value, if it has one.
    pub(crate) fn value(&self) -> Option<Value<'a>> {
        match *self {
            Arg::Short { value, .. } | Arg::Long { value, .. } => value,
            Arg::Operand(_) | Arg::Dynamic(_) => None,
        }
    }

    /// Whether it is an operand (known or not).
    pub(crate) fn is_operand(&self) -> bool {
        matches!(self, Arg::Operand(_) | Arg::Dynamic(_))
    }
}

/// Whether `name` (a long option as written, without `--` or `=value`)
/// names `full`, whole or abbreviated.
fn long_is(name: &str, full: &str) -> bool {
    !name.is_empty() && full.starts_with(name)
}

/// Reads `args` as a program told `spec` does: each item with the index
/// of the word it starts in.
pub(crate) struct Scan<'a, 's> {
    args: &'a [Word],
    spec: Spec<'s>,
    /// The next word to read.
    at: usize,
    /// Inside a short cluster of word `at`: the byte its next letter
    /// starts at (0: not inside one).
    letter: usize,
    /// The options have ended: every word left is an operand.
    ended: bool,
}

impl<'a, 's> Scan<'a, 's> {
    pub(crate) fn new(args: &'a [Word], spec: Spec<'s>) -> Self {
        Self {
            args,
            spec,
            at: 0,
            letter: 0,
            ended: false,
        }
    }

    /// The next letter of the cluster in word `at`.
    fn short(&mut self) -> Option<(usize, Arg<'a>)> {
        let word = self.at;
        let text = self.args.get(word)?.text.as_str();
        let c = text.get(self.letter..)?.chars().next()?;
        let after = self.letter + c.len_utf8();
        let rest = &text[after..];
        let (value, next) = if self.spec.short_val.contains(c) {
            if rest.is_empty() {
                match self.args.get(word + 1) {
                    Some(w) => (Some(Value::Next(w)), word + 2),
                    None => (Some(Value::Missing), word + 1),
                }
            } else {
                (Some(Value::Attached(rest)), word + 1)
            }
        } else if self.spec.short_opt.contains(c) {
            let value = (!rest.is_empty()).then_some(Value::Attached(rest));
            (value, word + 1)
        } else if rest.is_empty() {
            (None, word + 1)
        } else {
            self.letter = after;
            return Some((
                word,
                Arg::Short {
                    letter: c,
                    value: None,
                },
            ));
        };
        self.letter = 0;
        self.at = next;
        Some((word, Arg::Short { letter: c, value }))
    }
}

impl<'a> Iterator for Scan<'a, '_> {
    type Item = (usize, Arg<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.letter > 0 {
            return self.short();
        }
        loop {
            let i = self.at;
            let word = self.args.get(i)?;
            let t = word.text.as_str();
            if self.ended {
                self.at += 1;
                return Some((i, Arg::Operand(word)));
            }
            if word.dynamic {
                self.at += 1;
                self.ended = self.spec.posix;
                return Some((i, Arg::Dynamic(word)));
            }
            if t == "--" {
                self.at += 1;
                self.ended = true;
                continue;
            }
            let plus = self.spec.plus && t.len() > 1 && t.starts_with('+');
            if (!t.starts_with('-') || t == "-") && !plus {
                self.at += 1;
                self.ended = self.spec.posix;
                return Some((i, Arg::Operand(word)));
            }
            let long = if self.spec.single_dash {
                t.strip_prefix("--").or_else(|| t.strip_prefix('-'))
            } else {
                t.strip_prefix("--")
            };
            if let Some(body) = long {
                let single = self.spec.single_dash;
                let names = |n: &str, l: &str| if single { n == l } else { long_is(n, l) };
                let (name, value) = match body.split_once('=') {
                    Some((n, v)) => (n, Some(Value::Attached(v))),
                    None if self.spec.long_val.iter().any(|l| names(body, l)) => {
                        match self.args.get(i + 1) {
                            Some(w) => {
                                self.at += 1;
                                (body, Some(Value::Next(w)))
                            }
                            None => (body, Some(Value::Missing)),
                        }
                    }
                    None => (body, None),
                };
                self.at += 1;
                return Some((i, Arg::Long { name, value }));
            }
            self.letter = 1;
            return self.short();
        }
    }
}

/// Where a program's operands begin, reading its options as `spec` says
/// (`args.len()` when it has none).
pub(crate) fn operands_start(args: &[Word], spec: Spec<'_>) -> usize {
    Scan::new(args, spec)
        .find(|(_, a)| a.is_operand())
        .map_or(args.len(), |(i, _)| i)
}

/// Whether `arg` (with its leading `--`) names the long option `full`,
/// whole or abbreviated, with or without `=value`.
pub(crate) fn is_long(arg: &str, full: &str) -> bool {
    let Some(body) = arg.strip_prefix("--") else {
        return false;
    };
    let name = body.split_once('=').map_or(body, |(n, _)| n);
    long_is(name, full)
}

/// Whether any option is one of the `short` letters (alone or in a
/// cluster) or one of the `long` options (abbreviated or not). Not
/// knowing which options take values, it errs towards finding the
/// option: it reads an attached value's letters as options too, a
/// dynamic word's text as it stands (`-o$X` has `o`), and the words after
/// a `--` as well (that `--` may be an option's value: `sort
/// --random-source -- -o FILE`).
pub(crate) fn has_option(args: &[Word], short: &str, long: &[&str]) -> bool {
    args.iter().any(|w| {
        let t = w.text.as_str();
        if t.starts_with("--") {
            long.iter().any(|l| is_long(t, l))
        } else {
            t.len() > 1 && t.starts_with('-') && t[1..].chars().any(|c| short.contains(c))
        }
    })
}

/// Whether one of the `short` letters or `long` options is given as an
/// option: before a `--`, options and operands in any order. For a check
/// that finding the option makes less strict (a listing, a query), which
/// must not find one in an operand.
pub(crate) fn gives_option(args: &[Word], short: &str, long: &[&str]) -> bool {
    Scan::new(args, Spec::default()).any(|(_, a)| a.is(short, long))
}

/// The operands of a program whose options may follow them, not knowing
/// which options take values (a value in the next word counts as an
/// operand: that errs towards judging it).
pub(crate) fn operands(args: &[Word]) -> Vec<&Word> {
    Scan::new(args, Spec::default())
        .filter_map(|(_, a)| match a {
            Arg::Operand(w) | Arg::Dynamic(w) => Some(w),
            _ => None,
        })
        .collect()
}

/// The values of the option `-short` / `--long`, attached or in the next
/// word.
pub(crate) fn option_values<'a>(args: &'a [Word], short: char, long: &str) -> Vec<&'a str> {
    let short = short.to_string();
    let long = [long];
    Scan::new(args, Spec::gnu(&short, &long))
        .filter(|(_, a)| a.is(&short, &long))
        .filter_map(|(_, a)| a.value().and_then(Value::text))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<Word> {
        s.split(' ').map(Word::literal).collect()
    }

    #[test]
    fn combined_attached_and_abbreviated_options_are_found() {
        assert!(has_option(&w("-uo out"), "o", &["output"]));
        assert!(has_option(&w("--outp=x"), "o", &["output"]));
        // A `--` may be an option's value: what follows is still read.
        assert!(has_option(&w("--random-source -- -o f"), "o", &["output"]));
        assert!(!has_option(&w("--other"), "o", &["output"]));
        assert_eq!(option_values(&w("-uofile"), 'o', "output"), ["file"]);
        assert_eq!(option_values(&w("-o file"), 'o', "output"), ["file"]);
        assert_eq!(option_values(&w("--out=f"), 'o', "output"), ["f"]);
        assert_eq!(
            operands(&w("-n a -- -b"))
                .iter()
                .map(|x| x.text.as_str())
                .collect::<Vec<_>>(),
            ["a", "-b"]
        );
    }

    /// `-fu root`, `--sig KILL`, `-KILL` after `--`: what a program reads.
    #[test]
    fn a_scan_reads_clusters_values_and_the_end_of_options() {
        let args = w("-fu root --sig KILL pat -- -x");
        let spec = Spec::gnu("u", &["signal"]);
        let items: Vec<_> = Scan::new(&args, spec).collect();
        assert_eq!(
            items[0],
            (
                0,
                Arg::Short {
                    letter: 'f',
                    value: None
                }
            )
        );
        assert_eq!(
            items[1],
            (
                0,
                Arg::Short {
                    letter: 'u',
                    value: Some(Value::Next(&args[1]))
                }
            )
        );
        assert_eq!(
            items[2],
            (
                2,
                Arg::Long {
                    name: "sig",
                    value: Some(Value::Next(&args[3]))
                }
            )
        );
        assert_eq!(items[3], (4, Arg::Operand(&args[4])));
        assert_eq!(items[4], (6, Arg::Operand(&args[6])));
        assert_eq!(items.len(), 5);
        // In POSIX order the first operand ends the options.
        let args = w("-n 5 cmd -u x");
        assert_eq!(operands_start(&args, Spec::posix("n", &[])), 2);
        // A value-taking letter at the end, with nothing after it.
        let args = w("-xu");
        let last = Scan::new(&args, Spec::gnu("u", &[])).last();
        assert_eq!(
            last,
            Some((
                0,
                Arg::Short {
                    letter: 'u',
                    value: Some(Value::Missing)
                }
            ))
        );
        // Letters outside ASCII are letters.
        let args = w("-éu");
        let items: Vec<_> = Scan::new(&args, Spec::gnu("u", &[])).collect();
        assert_eq!(
            items[0],
            (
                0,
                Arg::Short {
                    letter: 'é',
                    value: None
                }
            )
        );
    }

    fn word() -> impl proptest::strategy::Strategy<Value = Word> {
        use proptest::prelude::*;
        (
            prop_oneof![
                Just("--".to_string()),
                Just("-".to_string()),
                "-[a-zé]{1,4}",
                "--[a-z]{0,5}(=[a-z-]{0,3})?",
                "[+a-zé=-]{0,6}",
                "\\PC{0,8}",
            ],
            proptest::bool::weighted(0.1),
        )
            .prop_map(|(text, dynamic)| Word {
                dynamic,
                ..Word::literal(text)
            })
    }

    proptest::proptest! {
        /// Any words, any spec: no panic, and every word is read exactly
        /// once: as the word of an item, as an option's value, or as the
        /// `--` that ends the options.
        #[test]
        fn every_word_is_read_once(
            args in proptest::collection::vec(word(), 0..12),
            short_val in "[a-zé]{0,3}",
            short_opt in "[a-z]{0,2}",
            posix: bool,
            plus: bool,
            single_dash: bool,
        ) {
            let long_val = ["output", "file", "signal"];
            let spec = Spec { short_val: &short_val, short_opt: &short_opt, long_val: &long_val, posix, plus, single_dash };
            let mut read = vec![0u32; args.len()];
            let mut last = 0;
            for (i, arg) in Scan::new(&args, spec) {
                proptest::prop_assert!(i >= last);
                if i != last || read[i] == 0 {
                    read[i] += 1;
                }
                last = i;
                if let Some(Value::Next(v)) = arg.value() {
                    let at = args.iter().position(|a| std::ptr::eq(a, v)).unwrap();
                    proptest::prop_assert_eq!(at, i + 1);
                    read[at] += 1;
                }
            }
            let first_end = args.iter().position(|a| a.text == "--" && !a.dynamic);
            for (i, n) in read.iter().enumerate() {
                let end_marker = args[i].text == "--" && !args[i].dynamic && read[i] == 0;
                proptest::prop_assert!(*n == 1 || (end_marker && first_end.is_some()), "word {} read {} times: {:?}", i, n, args);
            }
        }
    }
}
