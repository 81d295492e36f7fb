//! The secret matcher both redaction boundaries use (what goes to the
//! model and what leaves as an event, `lathe_protocol::redact`), and what
//! is kept or sent back (the session record, the log file).
//!
//! [`Redactor`] replaces secrets with `[REDACTED]`: the configured API keys
//! and other known secret values in every form `forms` knows (verbatim,
//! reversed, spaced or cased, hex, base32, base64 and the 85-letter
//! encodings at any alignment, as UTF-8, UTF-16 or UTF-32, and spelled out
//! as byte dumps), and strings shaped like well-known credentials (OpenAI,
//! Anthropic, GitHub, AWS, Slack tokens, JWTs, PEM private keys, and
//! secret-named assignments such as `DB_PASSWORD=…` or `"token": "…"`).
//! Any secret, of any length and any characters, is safe to give it:
//! a secret shorter than [`forms::MIN_FORM`] bytes is not looked for, and
//! no pattern is empty.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use regex::Regex;

use crate::protocol::redact::Scrub;

mod columns;
pub mod forms;
pub mod log;
pub mod stream;

use forms::{Forms, MIN_FORM, skeleton};

pub const REDACTED: &str = "[REDACTED]";

static SECRET_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"sk-ant-[A-Za-z0-9_\-]{20,}",
        r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}",
        r"gh[pousr]_[A-Za-z0-9]{30,}",
        r"github_pat_[A-Za-z0-9_]{30,}",
        r"AKIA[0-9A-Z]{16}",
        r"xox[abposr]-[A-Za-z0-9\-]{10,}",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
        r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
        r"\b(?:ASIA|AKIA)[0-9A-Z]{16}\b",
    ]
    .iter()
    .filter_map(|p| Regex::new(p).ok())
    .collect()
});

/// Assignments whose name says secret: the value goes, the name stays.
/// Environment style (`export DB_PASSWORD=…`, `.env` lines, upper-case
/// names) and JSON/YAML style (`"password": "…"`); code such as
/// `token = get_token()` is left alone.
static SECRET_ASSIGNMENTS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r#"(?m)(\b[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY)[A-Z0-9_]*\s*=\s*["']?)([^\s"'$(){}]{6,})"#,
        r#"(?i)("(?:password|passwd|secret|client_secret|token|access_token|refresh_token|api_key|apikey)"\s*:\s*")([^"]{6,})"#,
        r#"(?im)(^\s*(?:password|passwd|secret|client_secret|token|api_key|apikey)\s*:\s*["']?)([^\s"']{6,})"#,
        // INI and properties style, any case (`password=…`,
        // `db.secret = …`, `export api_key=…`): the whole line is the
        // assignment, so `token = get_token()` stays.
        r#"(?im)(^\s*(?:export\s+)?[a-z0-9_.-]*(?:password|passwd|secret|api_?key|access_?key|auth_?token|token)[a-z0-9_.-]*\s*[=:]\s*["']?)([^\s"'$(){};,]{6,})(["']?\s*[;,]?\s*$)"#,
    ]
    .iter()
    .filter_map(|p| Regex::new(p).ok())
    .collect()
});

/// Byte dumps: numbers that spell bytes one by one, as `od -b` (octal),
/// `od -tu1` (decimal), `xxd -b` (binary) print them, or as escapes do
/// (`\u0073`, `\x73`, `&#115;`, `&#x73;`, `%73`). Each way of reading
/// the numbers of a text is decoded; a decoded secret hides the numbers
/// that spell it.
///
/// Word dumps too: numbers that spell 2 or 4 bytes each, as a
/// little-endian machine prints them (`od` with no option prints 2-byte
/// words in octal, `od -d` in decimal, `od -tu4` and `od -to4` 4-byte
/// ones). Each entry: the pattern, its radix, the bytes one number spells.
static BYTE_DUMPS: LazyLock<Vec<(Regex, u32, usize)>> = LazyLock::new(|| {
    [
        (r"\b[01]{8}\b", 2, 1),
        (r"\b[0-3][0-7]{2}\b", 8, 1),
        (
            r"\b(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\b",
            10,
            1,
        ),
        (r"(?i)\\u00([0-9a-f]{2})", 16, 1),
        (r"(?i)\\x([0-9a-f]{2})", 16, 1),
        (r"(?i)&#x0*([0-9a-f]{1,2});", 16, 1),
        (r"&#0*([0-9]{1,3});", 10, 1),
        (r"(?i)%([0-9a-f]{2})", 16, 1),
        (r"(?i)\b0x([0-9a-f]{2})\b", 16, 1),
        (r"(?i)\b0o([0-3][0-7]{2})\b", 8, 1),
        // `printf "0%o"`: a leading zero, no padding.
        (r"\b0?([0-3]?[0-7]{1,2})\b", 8, 1),
        (r"\b[0-7]{6}\b", 8, 2),
        (r"\b[0-7]{11}\b", 8, 4),
        (r"\b[0-7]{22}\b", 8, 8),
        // Decimal words of 1, 2, 4 and 8 bytes, signed or not (`od -td1`
        // prints a byte from 0x80 up as negative, `od -tu8` and `od -td8`
        // 8-byte words): one pattern each, so one stream holds them all.
        (r"(?:^|[\s,\[(])(-?[0-9]{1,3})\b", 10, 1),
        (r"(?:^|[\s,\[(])(-?[0-9]{1,5})\b", 10, 2),
        (r"(?:^|[\s,\[(])(-?[0-9]{1,10})\b", 10, 4),
        (r"(?:^|[\s,\[(])(-?[0-9]{1,20})\b", 10, 8),
    ]
    .iter()
    .filter_map(|(p, radix, size)| Regex::new(p).ok().map(|r| (r, *radix, *size)))
    .collect()
});

/// Secrets this process came to hold after the conversation's matcher was
/// built (a login's tokens, refreshed while it runs): every matcher that
/// looks for credential shapes looks for these too.
static LATE: LazyLock<std::sync::RwLock<Vec<String>>> =
    LazyLock::new(|| std::sync::RwLock::new(Vec::new()));

/// Hides `secrets` from now on, wherever this process shows, records,
/// logs or sends text (see [`LATE`]).
pub fn learn(secrets: impl IntoIterator<Item = String>) {
    // Known already (every request reads the same token): no write.
    let new: Vec<String> = {
        let late = LATE
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        secrets
            .into_iter()
            .filter(|s| !s.is_empty() && !late.contains(s))
            .collect()
    };
    if new.is_empty() {
        return;
    }
    let mut late = LATE
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for s in new {
        if !late.contains(&s) {
            late.push(s);
        }
    }
}

/// A matcher rebuilt with the learned secrets, by how many there were.
type Merged = (usize, std::sync::Arc<Redactor>);

/// How many secrets were learned so far (they are only ever added).
fn learned() -> usize {
    LATE.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .len()
}

/// Redacts known secret values and credential-shaped strings.
#[derive(Debug, Clone)]
pub struct Redactor {
    /// The secrets' forms as they show in text.
    verbatim: Option<AhoCorasick>,
    /// The secrets' forms read in a text's letters and digits alone.
    letters: Option<AhoCorasick>,
    /// The secrets' bytes, for what a dump's columns spell.
    raw: Option<AhoCorasick>,
    /// The verbatim forms without blanks and separators.
    dense: Option<AhoCorasick>,
    /// Credential shapes and secret-named assignments are looked for too.
    shapes: bool,
    /// The secrets it was built with, and its matcher rebuilt with the
    /// ones learned since merged in (by how many were learned then):
    /// one pass over a text, whatever came later. Shared by its clones.
    own: std::sync::Arc<Vec<String>>,
    merged: std::sync::Arc<std::sync::Mutex<Option<Merged>>>,
    /// It is such a rebuilt matcher (it merges nothing more).
    is_merged: bool,
}

/// No secret known: credential shapes only.
impl Default for Redactor {
    fn default() -> Self {
        Self {
            verbatim: None,
            letters: None,
            raw: None,
            dense: None,
            shapes: true,
            own: std::sync::Arc::default(),
            merged: std::sync::Arc::default(),
            is_merged: false,
        }
    }
}

/// How many times a text is gone over at most: a replacement can make a
/// form that was not there before (`[REDACTED]` beside what is left), so
/// redaction is repeated until nothing changes.
const MAX_PASSES: usize = 4;

/// Byte spans of a text to hide, merged where they touch.
#[derive(Default)]
struct Spans(Vec<(usize, usize)>);

impl Spans {
    fn add(&mut self, start: usize, end: usize) {
        if start < end {
            self.0.push((start, end));
        }
    }

    /// `text` with every span replaced by one [`REDACTED`] (spans that
    /// touch are one); `None` when there is none.
    fn apply(mut self, text: &str) -> Option<String> {
        if self.0.is_empty() {
            return None;
        }
        self.0.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(self.0.len());
        for (s, e) in self.0 {
            // A span is widened to whole characters, never narrowed.
            let (s, e) = (char_start(text, s), char_end(text, e));
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (s, e) in merged {
            out.push_str(&text[at..s]);
            out.push_str(REDACTED);
            at = e;
        }
        out.push_str(&text[at..]);
        Some(out)
    }
}

/// The start of the character at byte `i` of `text` (or its end).
fn char_start(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The end of the character at byte `i - 1` of `text`.
fn char_end(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

impl Redactor {
    /// `secrets` are exact values to hide (API keys, passwords), of any
    /// length and any characters; those shorter than [`MIN_FORM`] bytes
    /// are ignored, as hiding them would mangle ordinary text.
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let secrets: Vec<String> = secrets.into_iter().collect();
        let mut out = Self::of_forms(&Forms::of(&secrets), true);
        out.own = std::sync::Arc::new(secrets);
        out
    }

    /// This matcher with the secrets learned since it was built merged in
    /// (built once per secret learned, shared by its clones); `None` when
    /// nothing was learned, or for a matcher of file contents.
    fn with_learned(&self) -> Option<std::sync::Arc<Redactor>> {
        if !self.shapes || self.is_merged {
            return None;
        }
        let n = learned();
        if n == 0 {
            return None;
        }
        let mut merged = self
            .merged
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((k, r)) = merged.as_ref()
            && *k == n
        {
            return Some(r.clone());
        }
        let mut all: Vec<String> = self.own.as_ref().clone();
        all.extend(
            LATE.read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .iter()
                .cloned(),
        );
        let mut r = Self::of_forms(&Forms::of(&all), true);
        r.is_merged = true;
        let r = std::sync::Arc::new(r);
        *merged = Some((n, r.clone()));
        Some(r)
    }

    /// The lines of files the read rules cover, in the forms a program
    /// prints them (see `Forms::of_content`); no credential shapes.
    pub fn for_content(lines: &[String]) -> Self {
        Self::of_forms(&Forms::of_content(lines), false)
    }

    fn of_forms(forms: &Forms, shapes: bool) -> Self {
        let build = |patterns: &[Vec<u8>], any_case: bool| {
            debug_assert!(patterns.iter().all(|p| p.len() >= MIN_FORM));
            if patterns.is_empty() {
                return None;
            }
            AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::Standard)
                // `tr a-z A-Z` of a key whose letters are not all ASCII
                // leaves no letters form; its bytes in any case still do.
                .ascii_case_insensitive(any_case)
                .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
                .build(patterns)
                .inspect_err(|e| tracing::error!("the secret matcher could not be built: {e}"))
                .ok()
        };
        Self {
            // Every match, overlapping, so a run is hidden to its last
            // byte.
            verbatim: build(&forms.verbatim, true),
            // Lower-cased, as the text's letters are when searched.
            letters: build(&forms.letters, false),
            raw: build(&forms.raw, true),
            dense: build(&forms.dense, true),
            shapes,
            own: std::sync::Arc::default(),
            merged: std::sync::Arc::default(),
            is_merged: false,
        }
    }

    /// Hides every run of `text` whose letters and digits spell a piece
    /// of a secret, separators and case aside.
    fn letter_spans(&self, text: &str, spans: &mut Spans) {
        let Some(matcher) = &self.letters else {
            return;
        };
        let (letters, offsets) = skeleton(text);
        for m in matcher.find_overlapping_iter(&letters) {
            if let (Some(first), Some(last)) = (
                offsets.get(m.start()),
                m.end().checked_sub(1).and_then(|i| offsets.get(i)),
            ) {
                spans.add(first.0, last.1);
            }
        }
    }

    /// Hides the numbers of a byte dump (or escapes) that spell a piece
    /// of a secret.
    fn dump_spans(&self, text: &str, spans: &mut Spans) {
        let Some(matcher) = &self.letters else {
            return;
        };
        // Cheap to rule out: a dump is mostly digits.
        if !text.bytes().any(|b| b.is_ascii_digit()) {
            return;
        }
        for (re, radix, size) in BYTE_DUMPS.iter() {
            // The bytes the numbers spell, letters and digits only (as
            // the skeleton reads text), with where each came from.
            let mut letters = Vec::new();
            let mut from = Vec::new();
            let mut bytes = Vec::new();
            let mut spelled = Vec::new();
            for caps in re.captures_iter(text) {
                let (Some(whole), Some(num)) = (caps.get(0), caps.get(1).or_else(|| caps.get(0)))
                else {
                    continue;
                };
                let Ok(word) = i128::from_str_radix(num.as_str(), *radix) else {
                    continue;
                };
                // A negative number is its two's complement in `size`
                // bytes; anything that does not fit spells nothing.
                let span = 1i128 << (8 * size);
                let word = if word < 0 { word + span } else { word };
                if !(0..span).contains(&word) {
                    continue;
                }
                for byte in word.to_le_bytes().into_iter().take(*size) {
                    bytes.push(byte);
                    spelled.push((whole.start(), whole.end()));
                    if byte.is_ascii_alphanumeric() {
                        letters.push(byte.to_ascii_lowercase());
                        from.push((whole.start(), whole.end()));
                    }
                }
            }
            // The bytes the numbers spell, all of them: a key not all of
            // whose letters are ASCII.
            if let Some(raw) = &self.raw
                && bytes.len() >= MIN_FORM
            {
                for m in raw.find_overlapping_iter(&bytes) {
                    if let (Some(first), Some(last)) = (
                        spelled.get(m.start()),
                        m.end().checked_sub(1).and_then(|i| spelled.get(i)),
                    ) {
                        spans.add(first.0, last.1);
                    }
                }
            }
            if letters.len() < MIN_FORM {
                continue;
            }
            for m in matcher.find_overlapping_iter(&letters) {
                if let (Some(first), Some(last)) = (
                    from.get(m.start()),
                    m.end().checked_sub(1).and_then(|i| from.get(i)),
                ) {
                    spans.add(first.0, last.1);
                }
            }
        }
    }

    /// Hides what a dump's columns or numbered lines spell once put back
    /// together (`columns`): a secret that runs over two lines of `xxd`,
    /// or over lines narrower than a piece.
    fn column_spans(&self, text: &str, spans: &mut Spans) {
        if self.verbatim.is_none() && self.letters.is_none() {
            return;
        }
        // The key's own bytes anywhere in the text: a run of it cut out
        // (`cut -c1-11`), whatever it holds besides letters.
        if let Some(raw) = &self.raw {
            for m in raw.find_overlapping_iter(text.as_bytes()) {
                spans.add(m.start(), m.end());
            }
        }
        let streams = columns::streams(text);
        let hide = |s: &columns::Stream, from: usize, to: usize, spans: &mut Spans| {
            if let (Some(a), Some(b)) = (
                s.spans.get(from),
                to.checked_sub(1).and_then(|i| s.spans.get(i)),
            ) {
                spans.add(a.0, b.1);
            }
        };
        for s in &streams.data {
            if let Some(raw) = &self.raw {
                for m in raw.find_overlapping_iter(&s.bytes) {
                    hide(s, m.start(), m.end(), spans);
                }
            }
        }
        if let Some(dense) = &self.dense {
            for s in &streams.dense {
                for m in dense.find_overlapping_iter(&s.bytes) {
                    hide(s, m.start(), m.end(), spans);
                }
            }
        }
        for s in &streams.text {
            if let Some(v) = &self.verbatim {
                for m in v.find_overlapping_iter(&s.bytes) {
                    hide(s, m.start(), m.end(), spans);
                }
            }
            if let (Some(letters), Ok(body)) = (&self.letters, std::str::from_utf8(&s.bytes)) {
                let (skel, offsets) = skeleton(body);
                for m in letters.find_overlapping_iter(&skel) {
                    if let (Some(first), Some(last)) = (
                        offsets.get(m.start()),
                        m.end().checked_sub(1).and_then(|i| offsets.get(i)),
                    ) {
                        hide(s, first.0, last.1, spans);
                    }
                }
            }
        }
    }

    /// One pass over `text`: every span any form or shape matches, in
    /// the same text, hidden at once (so one match never cuts another
    /// short); `None` when nothing changed.
    fn pass(&self, text: &str) -> Option<String> {
        self.spans(text).apply(text).filter(|out| out != text)
    }

    /// Bytes at the end of a streamed text that may be the start of one
    /// of the secrets' forms (0: no secret known). A form's letters may
    /// stand apart (`s k - l i v e`), so theirs count thrice.
    pub fn hold(&self) -> usize {
        if let Some(merged) = self.with_learned() {
            return merged.hold();
        }
        let len = |m: &Option<AhoCorasick>| m.as_ref().map_or(0, AhoCorasick::max_pattern_len);
        let forms = len(&self.verbatim)
            .max(len(&self.raw))
            .max(len(&self.dense))
            .max(len(&self.letters).saturating_mul(3));
        // A piece spelled out as numbers, or over two lines of a dump,
        // takes up to nine characters a byte.
        let dumps = if self.letters.is_some() || self.raw.is_some() {
            forms::BYTE_PIECE * 9 * 2
        } else {
            0
        };
        forms.max(dumps)
    }

    /// Where every form and shape matches in `text`, in one pass.
    fn spans(&self, text: &str) -> Spans {
        if let Some(merged) = self.with_learned() {
            return merged.spans(text);
        }
        let mut spans = Spans::default();
        if let Some(m) = &self.verbatim {
            for m in m.find_overlapping_iter(text) {
                spans.add(m.start(), m.end());
            }
        }
        self.letter_spans(text, &mut spans);
        self.dump_spans(text, &mut spans);
        self.column_spans(text, &mut spans);
        if !self.shapes {
            return spans;
        }
        for re in SECRET_PATTERNS.iter() {
            for m in re.find_iter(text) {
                spans.add(m.start(), m.end());
            }
        }
        // An assignment's value goes, its name stays.
        for re in SECRET_ASSIGNMENTS.iter() {
            for c in re.captures_iter(text) {
                if let Some(value) = c.get(2) {
                    spans.add(value.start(), value.end());
                }
            }
        }
        spans
    }

    /// Where in `text` a match runs over byte `cut` begins (the earliest
    /// such start), if one does: text before `cut` is shown only up to it.
    fn split_at(&self, text: &str, cut: usize) -> Option<usize> {
        self.spans(text)
            .0
            .iter()
            .filter(|(s, e)| *s < cut && *e > cut)
            .map(|(s, _)| *s)
            .min()
    }

    /// Redacts one string; returns `None` when nothing changed. Redacting
    /// what it returns changes nothing more.
    pub fn redact_str(&self, text: &str) -> Option<String> {
        if !self.shapes && self.verbatim.is_none() && self.letters.is_none() {
            return None;
        }
        let mut out = self.pass(text)?;
        for _ in 1..MAX_PASSES {
            match self.pass(&out) {
                Some(next) => out = next,
                None => break,
            }
        }
        Some(out)
    }
}

/// The matcher behind both boundaries: what goes to the model and what
/// leaves as an event (`lathe_protocol::redact`).
impl Scrub for Redactor {
    fn scrub(&self, text: &str) -> Option<String> {
        self.redact_str(text)
    }
}

#[cfg(test)]
#[path = "redactor_tests.rs"]
mod tests;
