//! Command-line options as GNU programs read them: short letters combine
//! (`-uo` is `-u -o`), a short option's value may be attached (`-ofile`),
//! long options may be abbreviated (`--outp` is `--output`) and carry a
//! value after `=`, and `--` ends the options. Checks that look for an
//! option by its exact text miss all of these; these helpers do not.

use crate::protocol::operation::Word;

/// The arguments before `--` (or all of them).
fn before_end(args: &[Word]) -> &[Word] {
    let end = args
        .iter()
        .position(|a| a.text == "--")
        .unwrap_or(args.len());
    &args[..end]
}

/// Whether `arg` (with its leading `--`) names the long option `full`,
/// whole or abbreviated, with or without `=value`.
pub(crate) fn is_long(arg: &str, full: &str) -> bool {
    let Some(body) = arg.strip_prefix("--") else {
        return false;
    };
    let name = body.split_once('=').map_or(body, |(n, _)| n);
    !name.is_empty() && full.starts_with(name)
}

/// Whether any argument before `--` is one of the `short` letters (alone
/// or in a cluster) or one of the `long` options (abbreviated or not).
/// A short option with an attached value counts its value's letters too:
/// that errs towards finding the option.
pub(crate) fn has_option(args: &[Word], short: &str, long: &[&str]) -> bool {
    before_end(args).iter().any(|a| {
        let t = a.text.as_str();
        if t.starts_with("--") {
            return long.iter().any(|l| is_long(t, l));
        }
        t.len() > 1 && t.starts_with('-') && t[1..].chars().any(|c| short.contains(c))
    })
}

/// The operands: arguments that are not options, plus everything after `--`.
pub(crate) fn operands(args: &[Word]) -> Vec<&Word> {
    let mut out = Vec::new();
    let mut done = false;
    for a in args {
        if !done && a.text == "--" {
            done = true;
        } else if done || !a.text.starts_with('-') || a.text == "-" || a.dynamic {
            out.push(a);
        }
    }
    out
}

/// The value of an option taking one: attached (`-ofile`, `--output=f`) or
/// in the next argument (`-o file`, `--output f`).
pub(crate) fn option_values<'a>(args: &'a [Word], short: char, long: &str) -> Vec<&'a str> {
    let args = before_end(args);
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        if t.starts_with("--") {
            if is_long(t, long) {
                match t.split_once('=') {
                    Some((_, v)) => out.push(v),
                    None => {
                        if let Some(next) = args.get(i + 1) {
                            out.push(next.text.as_str());
                        }
                    }
                }
            }
        } else if t.len() > 1
            && t.starts_with('-')
            && let Some(at) = t[1..].find(short)
        {
            let rest = &t[1 + at + short.len_utf8()..];
            if rest.is_empty() {
                if let Some(next) = args.get(i + 1) {
                    out.push(next.text.as_str());
                }
            } else {
                out.push(rest);
            }
        }
    }
    out
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
        assert!(!has_option(&w("-- -o"), "o", &["output"]));
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
}
