//! The source layout the docs promise, held by tests: the core's floors
//! (the table at the top of `lib.rs`, which ARCHITECTURE.md repeats) and
//! the size of every production file in the workspace.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const CORE: &str = env!("CARGO_MANIFEST_DIR");

/// The most production lines (test items left out wherever they stand)
/// one source file may hold; past it, split it by concern.
const MAX_LINES: usize = 1_000;

/// A Rust source without its test items: every item under `#[cfg(test)]`
/// (a `mod tests { … }`, a helper `fn`, a `mod x;`) is left out, wherever
/// it stands in the file.
fn production(text: &str) -> String {
    let mut out = String::new();
    let mut state = Lex::Code;
    let mut skipping: Option<(i64, bool)> = None;
    for line in text.lines() {
        let at_code = state == Lex::Code;
        let mut code = code_of(line, &mut state);
        if skipping.is_none() && at_code && line.trim_start().starts_with("#[cfg(test)]") {
            // The item starts after the attribute, on this line or below.
            skipping = Some((0, false));
            code = code
                .trim_start()
                .trim_start_matches("#[cfg(test)]")
                .to_string();
            if code.trim().is_empty() {
                continue;
            }
        }
        if let Some((depth, opened)) = &mut skipping {
            if !*opened && code.trim_start().starts_with("#[") {
                continue;
            }
            for c in code.chars() {
                match c {
                    '{' => {
                        *depth += 1;
                        *opened = true;
                    }
                    '}' => *depth -= 1,
                    _ => {}
                }
            }
            // A whole item ends at its braces or its `;`; a field, a
            // variant or an arm at its `,`.
            let end = code.trim_end();
            if (*opened && *depth <= 0) || (!*opened && (end.ends_with(';') || end.ends_with(',')))
            {
                skipping = None;
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Where a line starts: in code, or inside a string, a raw string (with
/// its number of `#`) or a block comment (with its depth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lex {
    Code,
    Str,
    Raw(usize),
    Comment(usize),
}

/// The code of a line: its string and character literals emptied and its
/// comments left out (a `"{"` or `'}'` is not a brace of the code).
/// `state` carries what continues onto the next line.
fn code_of(line: &str, state: &mut Lex) -> String {
    let c: Vec<char> = line.chars().collect();
    let at = |i: usize| c.get(i).copied();
    let mut out = String::new();
    let mut i = 0;
    while i < c.len() {
        match *state {
            Lex::Code => {
                let ident_before = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
                match c[i] {
                    '/' if at(i + 1) == Some('/') => break,
                    '/' if at(i + 1) == Some('*') => {
                        *state = Lex::Comment(1);
                        i += 2;
                    }
                    '"' => {
                        *state = Lex::Str;
                        out.push_str("\"\"");
                        i += 1;
                    }
                    'r' | 'b' if !ident_before => {
                        // r"…", r#"…"#, br"…": count the hashes.
                        let from = if c[i] == 'b' && at(i + 1) == Some('r') {
                            i + 2
                        } else {
                            i + 1
                        };
                        let hashes = c[from.min(c.len())..]
                            .iter()
                            .take_while(|&&h| h == '#')
                            .count();
                        if (c[i] != 'b' || from == i + 2) && at(from + hashes) == Some('"') {
                            *state = Lex::Raw(hashes);
                            out.push_str("\"\"");
                            i = from + hashes + 1;
                            continue;
                        }
                        out.push(c[i]);
                        i += 1;
                    }
                    '\'' => {
                        // A character ('x', '\n', '{') or a lifetime ('a).
                        if at(i + 1) == Some('\\') {
                            let close = (i + 2..c.len()).find(|&j| c[j] == '\'');
                            i = close.map_or(c.len(), |j| j + 1);
                        } else if at(i + 2) == Some('\'') {
                            i += 3;
                        } else {
                            i += 1;
                        }
                        out.push('\'');
                    }
                    other => {
                        out.push(other);
                        i += 1;
                    }
                }
            }
            Lex::Str => match c[i] {
                '\\' => i += 2,
                '"' => {
                    *state = Lex::Code;
                    i += 1;
                }
                _ => i += 1,
            },
            Lex::Raw(n) => {
                if c[i] == '"' && (1..=n).all(|k| at(i + k) == Some('#')) {
                    *state = Lex::Code;
                    i += n + 1;
                } else {
                    i += 1;
                }
            }
            Lex::Comment(d) => {
                if c[i] == '*' && at(i + 1) == Some('/') {
                    *state = if d == 1 {
                        Lex::Code
                    } else {
                        Lex::Comment(d - 1)
                    };
                    i += 2;
                } else if c[i] == '/' && at(i + 1) == Some('*') {
                    *state = Lex::Comment(d + 1);
                    i += 2;
                } else {
                    i += 1;
                }
            }
        }
    }
    out
}

/// A text's code alone: its comments and the insides of its literals
/// left out.
fn code(text: &str) -> String {
    let mut state = Lex::Code;
    text.lines()
        .map(|l| code_of(l, &mut state) + "\n")
        .collect()
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The files a source declares only for its tests (`#[cfg(test)]` then
/// `mod x;`, with or without `#[path = "…"]`).
fn test_files(file: &Path, text: &str) -> Vec<PathBuf> {
    let dir = file.parent().unwrap();
    let stem = file.file_stem().unwrap().to_str().unwrap();
    let own_dir = if matches!(stem, "lib" | "main" | "mod") {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if *line != "#[cfg(test)]" {
            continue;
        }
        let mut path = None;
        for next in &lines[i + 1..] {
            if let Some(p) = next
                .strip_prefix("#[path = \"")
                .and_then(|p| p.strip_suffix("\"]"))
            {
                path = Some(dir.join(p));
            } else if let Some(name) = next
                .strip_prefix("mod ")
                .or_else(|| next.strip_prefix("pub mod "))
                .or_else(|| next.strip_prefix("pub(crate) mod "))
                .and_then(|n| n.strip_suffix(';'))
            {
                out.push(
                    path.take()
                        .unwrap_or_else(|| own_dir.join(format!("{name}.rs"))),
                );
                break;
            } else if !next.starts_with("#[") {
                break;
            }
        }
    }
    out
}

/// The production files under `src`: every `.rs` file but those declared
/// only for tests (and the files those declare).
fn production_files(src: &Path) -> BTreeMap<PathBuf, String> {
    let mut texts: BTreeMap<PathBuf, String> = rust_files(src)
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    let mut tests: Vec<PathBuf> = texts.iter().flat_map(|(p, t)| test_files(p, t)).collect();
    while let Some(t) = tests.pop() {
        if let Some(text) = texts.remove(&t) {
            // What a test file declares is the tests' too.
            let own = t.with_extension("");
            tests.extend(rust_files_in(&own, &text));
        }
    }
    texts
}

/// The `mod x;` files a test file declares.
fn rust_files_in(own_dir: &Path, text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';'))
        .map(|name| own_dir.join(format!("{name}.rs")))
        .collect()
}

/// The floors of `lib.rs`'s table, top first: the modules of each (the
/// words before the column where the first row's description starts).
fn floors(lib: &str) -> Vec<Vec<String>> {
    let table = lib
        .split("//! ```text\n")
        .nth(1)
        .and_then(|t| t.split("//! ```").next())
        .expect("lib.rs has the floors table");
    let rows: Vec<&str> = table
        .lines()
        .map(|l| l.strip_prefix("//! ").unwrap_or(""))
        .filter(|r| !r.trim().is_empty())
        .collect();
    let first = rows[0];
    let name_end = first.find(' ').unwrap();
    let column = name_end + first[name_end..].find(|c: char| c != ' ').unwrap();
    rows.iter()
        .map(|r| {
            r.get(..column)
                .unwrap_or(r)
                .split_whitespace()
                .map(str::to_string)
                .collect()
        })
        .collect()
}

/// The table's rows as ARCHITECTURE.md must show them.
fn table_rows(lib: &str) -> Vec<String> {
    let table = lib.split("//! ```text\n").nth(1).unwrap();
    table
        .split("//! ```")
        .next()
        .unwrap()
        .lines()
        .map(|l| l.trim_start_matches("//!").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The modules `lib.rs` declares in its `internal!` block.
fn declared(lib: &str) -> BTreeSet<String> {
    let block = lib
        .split("internal! {")
        .nth(1)
        .unwrap()
        .split('}')
        .next()
        .unwrap();
    block
        .lines()
        .filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

/// The modules of the core a production text names: `crate::x::…`,
/// `crate::{x, y::z}`, and `super::…` chains that reach the crate's root
/// from a file `depth` modules down (`fs.rs` is 1, `config/layers.rs` 2).
/// A glob or `self` of the root is named `*` or `self`.
fn named_modules(text: &str, depth: usize) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut roots: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        roots.push(rest);
    }
    let mut rest = text;
    while let Some(at) = rest.find("super::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at..];
        let mut ups = 0;
        while let Some(more) = rest.strip_prefix("super::") {
            ups += 1;
            rest = more;
        }
        if ups >= depth && !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            roots.push(rest);
        }
    }
    for rest in roots {
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(first_name(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 {
                    item.push(c);
                }
            }
            out.insert(first_name(&item));
        } else {
            out.insert(first_name(rest));
        }
    }
    out.remove("");
    out
}

fn first_name(path: &str) -> String {
    let path = path.trim();
    if path.starts_with('*') {
        return "*".into();
    }
    path.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The top module a file of `src` belongs to (`config` for
/// `config/layers.rs`).
fn top_module(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_str()
        .unwrap();
    first.strip_suffix(".rs").unwrap_or(first).to_string()
}

/// Every import between the core's modules goes down the floors of
/// `lib.rs`'s table; ARCHITECTURE.md shows the same table, and every
/// module is on it.
#[test]
fn the_core_stands_on_its_floors() {
    let lib = std::fs::read_to_string(Path::new(CORE).join("src/lib.rs")).unwrap();
    let floors = floors(&lib);
    let rank: BTreeMap<&str, usize> = floors
        .iter()
        .enumerate()
        .flat_map(|(i, f)| f.iter().map(move |m| (m.as_str(), i)))
        .collect();
    let on_table: BTreeSet<String> = rank.keys().map(|m| (*m).to_string()).collect();
    assert_eq!(
        on_table,
        declared(&lib),
        "lib.rs's floors name every module, once"
    );
    let architecture =
        std::fs::read_to_string(Path::new(CORE).join("../../ARCHITECTURE.md")).unwrap();
    let shown: Vec<String> = architecture.lines().map(|l| l.trim().to_string()).collect();
    for row in table_rows(&lib) {
        assert!(
            shown.contains(&row),
            "ARCHITECTURE.md lacks the floor row `{row}`"
        );
    }
    let src = Path::new(CORE).join("src");
    let mut wrong = Vec::new();
    for (path, text) in production_files(&src) {
        let rel = path.strip_prefix(&src).unwrap();
        let top = top_module(rel);
        let Some(&own) = rank.get(top.as_str()) else {
            continue;
        };
        let depth = rel.components().count();
        for used in named_modules(&code(&production(&text)), depth) {
            if matches!(used.as_str(), "front" | "*" | "self") {
                wrong.push(format!(
                    "{}: crate::{used} reaches every floor at once (the front ends' door, or \
                     the whole crate)",
                    rel.display()
                ));
                continue;
            }
            if let Some(&theirs) = rank.get(used.as_str())
                && used != top
                && theirs <= own
            {
                wrong.push(format!(
                    "{}: crate::{used} is not below {top} (floors in lib.rs)",
                    rel.display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports across the floors:\n{}",
        wrong.join("\n")
    );
}

/// No source file of the workspace holds more than 1,000 production
/// lines, its test items left out wherever they stand.
#[test]
fn no_source_file_is_too_long() {
    let root = Path::new(CORE).join("../..");
    let mut dirs = vec![root.join("src")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            dirs.push(src);
        }
    }
    let mut long = Vec::new();
    for dir in dirs {
        for (path, text) in production_files(&dir) {
            let n = production(&text).lines().count();
            if n > MAX_LINES {
                long.push(format!("{}: {n} lines", path.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "split these by concern (CONTRIBUTING.md):\n{}",
        long.join("\n")
    );
}

/// The checks above read sources the way they are written: a test item
/// anywhere in a file, braces in strings, raw strings over lines and
/// characters, a lifetime, an item on one line, one ending in `;`.
#[test]
fn test_items_are_left_out_wherever_they_stand() {
    let text = r##"use crate::config::Config;
#[cfg(test)]
use crate::agent::X;
fn a<'a>(s: &'a str) -> char {
    let _ = "{";
    '{'
}
#[cfg(test)]
#[allow(dead_code)]
fn helper() -> &'static str {
    "}"
}
#[cfg(test)]
mod tests {
    use crate::launch::Y;
    fn inner() { let _ = '}'; }
}
fn b() { crate::{policy::Rules, sandbox}::go(); }
#[cfg(test)]
fn raw() -> &'static str {
    r#"{"a": "}
    }}"#
}
// crate::agent in a comment is no import
fn c() {}
"##;
    let kept = production(text);
    assert!(
        kept.contains("fn a<'a>") && kept.contains("fn b()") && kept.contains("fn c()"),
        "{kept}"
    );
    assert!(!kept.contains("helper") && !kept.contains("launch") && !kept.contains("raw"));
    let named = named_modules(&code(&kept), 1);
    let want: BTreeSet<String> = ["config", "policy", "sandbox"].map(String::from).into();
    assert_eq!(named, want);
}

/// The ways around the floors that a search for `crate::` alone would
/// miss: `super::` up to the root, the front ends' door, a glob; and a
/// test attribute on a field, or on an item on its own line, hiding the
/// lines after it.
#[test]
fn imports_are_found_however_written() {
    let names = |text: &str, depth| named_modules(&code(&production(text)), depth);
    let set = |v: &[&str]| -> BTreeSet<String> { v.iter().map(|s| (*s).to_string()).collect() };
    // From `fs.rs` (one down), `super::` is the root; from
    // `config/layers.rs` (two down), `super::` is `config` and
    // `super::super::` the root.
    assert_eq!(names("use super::agent::Shared;", 1), set(&["agent"]));
    assert_eq!(names("use super::defaults;", 2), set(&[]));
    assert_eq!(
        names("use super::super::{agent, tools::X};", 2),
        set(&["agent", "tools"])
    );
    assert_eq!(
        names("fn f() { crate::front::agent::go() }", 1),
        set(&["front"])
    );
    assert_eq!(names("use crate::*;", 1), set(&["*"]));
    assert_eq!(names("use crate::{self as root};", 1), set(&["self"]));
    // A field kept only for tests hides nothing after it.
    let fields = "struct S {\n    #[cfg(test)]\n    probe: u32,\n    real: crate::agent::X,\n}\n";
    assert_eq!(names(fields, 1), set(&["agent"]));
    let one_line = "#[cfg(test)] use crate::launch::Y;\nuse crate::agent::X;\n";
    assert_eq!(names(one_line, 1), set(&["agent"]));
}
