//! The `after_tool_call` stage: hooks that see a tool's result before the
//! model does. They may observe it, transform it, or reject it.
//!
//! The built-in hook is [`Redactor`]: it replaces secrets in results with
//! `[REDACTED]`: the configured API keys and other known secret values
//! (verbatim, reversed, and base64-encoded at any alignment, so `| base64`
//! or `| rev` recovers nothing), and strings shaped like well-known
//! credentials (OpenAI, Anthropic, GitHub, AWS, Slack tokens, JWTs, PEM
//! private keys, and secret-named assignments such as `DB_PASSWORD=…` or
//! `"token": "…"`).

use std::sync::LazyLock;

use crate::protocol::redact::Scrub;
use regex::Regex;

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

/// Redacts known secret values and credential-shaped strings.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Every form of every known secret, found in one pass.
    matcher: Option<aho_corasick::AhoCorasick>,
    /// The same secrets' letters and digits, and the hex of their bytes,
    /// in pieces, looked for in a text's letters and digits alone: what
    /// `sed 's/./& /g'`, `fold -w1`, `tr a-z A-Z`, `xxd` or `od -c` make of
    /// a key still shows them.
    skeleton: Option<aho_corasick::AhoCorasick>,
}

/// How many letters and digits of a secret make a piece worth hiding on
/// its own (12 random ones never turn up by chance).
const SKELETON_PIECE: usize = 12;

/// The bytes of a secret whose base32 is looked for on its own.
const BASE32_PIECE: usize = 10;

/// The alphabets of the 85-letter encodings: Python's `b85encode` (RFC
/// 1924), Ascii85 (`a85encode`, btoa) and ZeroMQ's Z85.
const B85: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
const A85: &[u8; 85] =
    b"!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstu";
const Z85: &[u8; 85] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/// `bytes` (a multiple of 4 long, or its whole groups) in an 85-letter
/// encoding.
fn base85(bytes: &[u8], alphabet: &[u8; 85]) -> String {
    let mut out = String::with_capacity(bytes.len() / 4 * 5);
    for group in bytes.chunks_exact(4) {
        let mut n = u32::from_be_bytes([group[0], group[1], group[2], group[3]]);
        let mut digits = [0u8; 5];
        for d in digits.iter_mut().rev() {
            *d = alphabet[(n % 85) as usize];
            n /= 85;
        }
        out.extend(digits.iter().map(|b| char::from(*b)));
    }
    out
}

/// `bytes`' whole 3-byte groups as uuencode writes them (a space for
/// zero, as classic uuencode does; `` ` `` is the other spelling).
fn uuencoded(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() / 3 * 4);
    for g in bytes.chunks_exact(3) {
        let n = u32::from(g[0]) << 16 | u32::from(g[1]) << 8 | u32::from(g[2]);
        for shift in [18, 12, 6, 0] {
            let six = u8::try_from((n >> shift) & 0x3f).unwrap_or(0);
            out.push(char::from(if six == 0 { b'`' } else { six + 32 }));
        }
    }
    out
}

/// `s` as UTF-16 bytes, little-endian unless `big`.
fn utf16(s: &str, big: bool) -> Vec<u8> {
    s.encode_utf16()
        .flat_map(|u| {
            if big {
                u.to_be_bytes()
            } else {
                u.to_le_bytes()
            }
        })
        .collect()
}

/// `s` as UTF-32 bytes, little-endian unless `big`.
fn utf32(s: &str, big: bool) -> Vec<u8> {
    s.chars()
        .flat_map(|c| {
            let u = u32::from(c);
            if big {
                u.to_be_bytes()
            } else {
                u.to_le_bytes()
            }
        })
        .collect()
}

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
        (r"\b[0-7]{6}\b", 8, 2),
        (r"\b[0-9]{1,5}\b", 10, 2),
        (r"\b[0-9]{1,10}\b", 10, 4),
        (r"\b[0-7]{11}\b", 8, 4),
    ]
    .iter()
    .filter_map(|(p, radix, size)| Regex::new(p).ok().map(|r| (r, *radix, *size)))
    .collect()
});

/// The ASCII letters and digits of `text`, lower-cased, with the byte
/// span of each in `text`. A letter written in a compatibility form that
/// stands for one ASCII letter or digit (fullwidth `ｓｋ`, mathematical
/// `𝐬𝐤`, circled `ⓢ`) counts as that letter: a key spelled so still
/// reads as the key.
fn skeleton(text: &str) -> (Vec<u8>, Vec<(usize, usize)>) {
    use unicode_normalization::UnicodeNormalization;
    let mut letters = Vec::with_capacity(text.len());
    let mut spans = Vec::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        let ascii = if c.is_ascii() {
            Some(c as u8)
        } else {
            let mut folded = std::iter::once(c).nfkc();
            match (folded.next(), folded.next()) {
                (Some(f), None) if f.is_ascii() => Some(f as u8),
                _ => None,
            }
        };
        if let Some(b) = ascii.filter(u8::is_ascii_alphanumeric) {
            letters.push(b.to_ascii_lowercase());
            spans.push((i, i + c.len_utf8()));
        }
    }
    (letters, spans)
}

/// Every window of `len` bytes of `s` (or `s` itself when shorter).
fn windows(s: &[u8], len: usize) -> impl Iterator<Item = &[u8]> {
    let n = s.len().saturating_sub(len) + 1;
    (0..n).map(move |k| &s[k..(k + len).min(s.len())])
}

/// The parts of `secret` worth hiding in pieces: the secret itself, or,
/// for a URL, its password, path, query and fragment (each long enough).
fn secret_parts(secret: &str) -> Vec<String> {
    let Ok(url) = reqwest::Url::parse(secret) else {
        return vec![secret.to_string()];
    };
    if url.host_str().is_none() {
        return vec![secret.to_string()];
    }
    [
        url.password().map(str::to_string),
        Some(url.path().to_string()),
        url.query().map(str::to_string),
        url.fragment().map(str::to_string),
    ]
    .into_iter()
    .flatten()
    .filter(|p| p.len() >= 8)
    .collect()
}

/// The piece of a secret whose encodings are looked for on their own: a
/// line-wrapped encoding (`base64` wraps at 76 columns, `xxd -p` at 60)
/// still shows every whole piece.
const PIECE: usize = 12;

impl Redactor {
    /// `secrets` are exact values to hide (API keys); values shorter than 8
    /// characters are ignored, as hiding them would mangle ordinary text.
    /// Each is also hidden reversed, and every 12-byte piece of it
    /// base64-encoded (standard and URL-safe, at any alignment) and
    /// hex-encoded, so encoding it, even with line breaks, gives back at
    /// most pieces too short to use.
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        use base64::Engine;
        let whole: Vec<String> = secrets.into_iter().filter(|s| s.len() >= 8).collect();
        // A secret URL (a webhook, a DSN) is hidden whole, but only its
        // secret parts are hidden in pieces: pieces of its scheme and host
        // would hide every mention of the site.
        let kept: Vec<String> = whole.iter().flat_map(|s| secret_parts(s)).collect();
        let mut all: Vec<String> = whole.clone();
        for s in kept.iter().cloned() {
            all.push(s.chars().rev().collect());
            // Its bytes, and as UTF-16 either way round (`iconv -t
            // UTF-16LE | base64`, PowerShell's `-EncodedCommand`).
            let forms = [
                s.as_bytes().to_vec(),
                utf16(&s, false),
                utf16(&s, true),
                utf32(&s, false),
                utf32(&s, true),
            ];
            let pieces = forms.iter().flat_map(|bytes| {
                (0..=bytes.len().saturating_sub(PIECE))
                    .map(move |k| &bytes[k..(k + PIECE).min(bytes.len())])
            });
            for piece in pieces {
                for engine in [
                    &base64::engine::general_purpose::STANDARD_NO_PAD,
                    &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                ] {
                    // 12 bytes encode to 16 characters with no padding, so
                    // the piece shows as is wherever it starts on a
                    // 3-byte boundary of the encoded text.
                    all.push(engine.encode(piece));
                }
                let hex: String = piece.iter().map(|b| format!("{b:02x}")).collect();
                all.push(hex.to_ascii_uppercase());
                all.push(hex);
                // The 85-letter encodings (Python's b85, Ascii85, Z85):
                // 12 bytes are 15 letters wherever the piece starts on a
                // 4-byte boundary; base32hex; uuencode's 3-byte groups.
                for alphabet in [B85, A85, Z85] {
                    all.push(base85(piece, alphabet));
                }
                all.push(uuencoded(piece));
            }
            all.push(s);
        }
        all.retain(|p| !p.is_empty());
        all.sort();
        all.dedup();
        let build = |patterns: &[Vec<u8>], kind| {
            (!patterns.is_empty())
                .then(|| {
                    aho_corasick::AhoCorasick::builder()
                        .match_kind(kind)
                        .build(patterns)
                        .ok()
                })
                .flatten()
        };
        let mut skeletons: Vec<Vec<u8>> = Vec::new();
        for s in &kept {
            let (letters, _) = skeleton(s);
            if letters.len() >= 8 {
                let reversed: Vec<u8> = letters.iter().rev().copied().collect();
                skeletons.extend(windows(&letters, SKELETON_PIECE).map(<[u8]>::to_vec));
                skeletons.extend(windows(&reversed, SKELETON_PIECE).map(<[u8]>::to_vec));
            }
            // Base32 (`base32`, TOTP secrets), upper or lower case and
            // however wrapped: every 10-byte piece, which encodes to 16
            // letters wherever it starts on a 5-byte boundary.
            let bytes = s.as_bytes();
            for piece in windows(bytes, BASE32_PIECE) {
                for engine in [
                    &data_encoding::BASE32_NOPAD,
                    &data_encoding::BASE32HEX_NOPAD,
                ] {
                    skeletons.push(engine.encode(piece).to_ascii_lowercase().into_bytes());
                }
            }
            // The hex of its bytes, however grouped (`xxd`, `od -tx1`),
            // and of its 2- and 4-byte words as a little-endian machine
            // prints them (`od -x`, `od -tx4`, `hexdump`), at each way the
            // secret can fall on the words.
            for word in [1, 2, 4, 8] {
                for align in 0..word {
                    let hex: Vec<u8> = bytes
                        .get(align..)
                        .unwrap_or_default()
                        .chunks_exact(word)
                        .flat_map(|w| w.iter().rev())
                        .flat_map(|b| format!("{b:02x}").into_bytes())
                        .collect();
                    skeletons.extend(windows(&hex, 2 * PIECE).map(<[u8]>::to_vec));
                }
            }
        }
        skeletons.sort();
        skeletons.dedup();
        let all: Vec<Vec<u8>> = all.into_iter().map(String::into_bytes).collect();
        Self {
            matcher: build(&all, aho_corasick::MatchKind::LeftmostLongest),
            // Every window, overlapping, so a run is hidden to its last
            // letter.
            skeleton: build(&skeletons, aho_corasick::MatchKind::Standard),
        }
    }

    /// Hides every run of `text` whose letters and digits spell a piece
    /// of a secret, separators and case aside; `None` when there is none.
    fn redact_skeleton(&self, text: &str) -> Option<String> {
        let matcher = self.skeleton.as_ref()?;
        let (letters, offsets) = skeleton(text);
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for m in matcher.find_overlapping_iter(&letters) {
            let start = offsets[m.start()].0;
            let end = offsets[m.end() - 1].1;
            match spans.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => spans.push((start, end)),
            }
        }
        if spans.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end) in spans {
            out.push_str(&text[at..start]);
            out.push_str(REDACTED);
            at = end;
        }
        out.push_str(&text[at..]);
        Some(out)
    }

    /// Hides the numbers of a byte dump (or escapes) that spell a piece
    /// of a secret; `None` when there is none.
    fn redact_byte_dumps(&self, text: &str) -> Option<String> {
        let matcher = self.skeleton.as_ref()?;
        // Cheap to rule out: a dump is mostly digits.
        if !text.bytes().any(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for (re, radix, size) in BYTE_DUMPS.iter() {
            // The bytes the numbers spell, letters and digits only (as
            // the skeleton reads text), with where each came from.
            let mut letters = Vec::new();
            let mut from = Vec::new();
            for caps in re.captures_iter(text) {
                let (Some(whole), Some(num)) = (caps.get(0), caps.get(1).or_else(|| caps.get(0)))
                else {
                    continue;
                };
                let Ok(word) = u64::from_str_radix(num.as_str(), *radix) else {
                    continue;
                };
                if word >> (8 * size) != 0 {
                    continue;
                }
                for byte in word.to_le_bytes().into_iter().take(*size) {
                    if byte.is_ascii_alphanumeric() {
                        letters.push(byte.to_ascii_lowercase());
                        from.push((whole.start(), whole.end()));
                    }
                }
            }
            if letters.len() < SKELETON_PIECE {
                continue;
            }
            for m in matcher.find_overlapping_iter(&letters) {
                spans.push((from[m.start()].0, from[m.end() - 1].1));
            }
        }
        if spans.is_empty() {
            return None;
        }
        spans.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (s, e) in spans {
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

    /// Redacts one string; returns `None` when nothing changed.
    pub fn redact_str(&self, text: &str) -> Option<String> {
        let mut out: Option<String> = None;
        if let Some(m) = &self.matcher
            && m.is_match(text)
        {
            let mut replaced = String::with_capacity(text.len());
            m.replace_all_with(text, &mut replaced, |_, _, dst| {
                dst.push_str(REDACTED);
                true
            });
            out = Some(replaced);
        }
        if let Some(r) = self.redact_skeleton(out.as_deref().unwrap_or(text)) {
            out = Some(r);
        }
        if let Some(r) = self.redact_byte_dumps(out.as_deref().unwrap_or(text)) {
            out = Some(r);
        }
        for re in SECRET_PATTERNS.iter() {
            let current = out.as_deref().unwrap_or(text);
            if re.is_match(current) {
                out = Some(re.replace_all(current, REDACTED).into_owned());
            }
        }
        for re in SECRET_ASSIGNMENTS.iter() {
            let current = out.as_deref().unwrap_or(text);
            if re.is_match(current) {
                out = Some(
                    re.replace_all(current, |c: &regex::Captures<'_>| {
                        format!("{}{REDACTED}{}", &c[1], c.get(3).map_or("", |m| m.as_str()))
                    })
                    .into_owned(),
                );
            }
        }
        out
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
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::redact::Redact;

    #[test]
    fn configured_keys_and_credential_shapes_are_redacted() {
        let r = Redactor::new(["my-very-secret-key-123".to_string(), "short".to_string()]);
        let mut v = json!({
            "stdout": "OPENAI_API_KEY=my-very-secret-key-123\nshort stays",
            "list": ["token sk-abcdefghijklmnopqrstuvwxyz0123", "AKIAABCDEFGHIJKLMNOP"],
            "n": 3
        });
        v.redact(&r);
        let s = v.to_string();
        assert!(!s.contains("my-very-secret-key-123"), "{s}");
        assert!(!s.contains("sk-abcdefghij"), "{s}");
        assert!(!s.contains("AKIAABCDEFGHIJKLMNOP"), "{s}");
        assert!(s.contains("short stays"), "{s}");
        assert_eq!(v["n"], 3);
    }

    /// A secret URL hides its secret parts, not every mention of its site.
    #[test]
    fn a_secret_url_hides_its_secret_parts_not_its_host() {
        let hook = "https://hooks.example.org/services/T0A1B2C3/B4D5E6F7/abcdEFGHijklMNOP";
        let r = Redactor::new([hook.to_string()]);
        let text = "see https://hooks.example.org/about and https://hooks.example.org";
        assert_eq!(r.redact_str(text), None, "the site alone is no secret");
        let out = r.redact_str(&format!("posting to {hook} now")).unwrap();
        assert!(
            !out.contains("abcdEFGHijklMNOP") && !out.contains("T0A1B2C3"),
            "{out}"
        );
        // Its path, spelled out with spaces, still is.
        let spaced: String = "abcdEFGHijklMNOP".chars().flat_map(|c| [c, ' ']).collect();
        let out = r.redact_str(&spaced).unwrap();
        assert!(out.contains(REDACTED), "{out}");
    }

    /// The third round's leaks: a key in base32 (any alignment, either
    /// case, wrapped) and in fullwidth or other compatibility letters.
    #[test]
    fn base32_and_look_alike_letters_of_a_key_are_redacted() {
        let key = "sk-live-0123456789abcdefXYZ";
        let r = Redactor::new([key.to_string()]);
        for prefix in ["", "a", "ab", "abc", "abcd", "KEY="] {
            let text = format!("{prefix}{key}");
            let encoded = data_encoding::BASE32.encode(text.as_bytes());
            for shown in [
                encoded.clone(),
                encoded.to_ascii_lowercase(),
                encoded
                    .as_bytes()
                    .chunks(7)
                    .map(|c| String::from_utf8_lossy(c).into_owned())
                    .collect::<Vec<_>>()
                    .join("\n"),
            ] {
                let out = r.redact_str(&shown).unwrap_or_default();
                assert!(out.contains(REDACTED), "{prefix:?}: {shown}");
                // No 16-letter run of the key's encoding is left.
                let left: String = out.replace(REDACTED, " ");
                let plain: String = left.chars().filter(char::is_ascii_alphanumeric).collect();
                assert!(plain.len() < 16 + prefix.len() * 2, "{prefix:?}: {out}");
            }
        }
        let fullwidth: String = key
            .chars()
            .map(|c| {
                if c.is_ascii_graphic() {
                    char::from_u32(u32::from(c) + 0xFEE0).unwrap_or(c)
                } else {
                    c
                }
            })
            .collect();
        let out = r
            .redact_str(&format!("the key: {fullwidth} (copied)"))
            .unwrap();
        assert!(
            out.starts_with("the key: ") && out.ends_with(" (copied)"),
            "{out}"
        );
        assert!(!out.contains("ｓｋ－ｌｉｖｅ－０１２"), "{out}");
        let math: String = "0123456789abcdefXYZ"
            .chars()
            .map(|c| match c {
                'a'..='z' => char::from_u32(0x1D41A + (c as u32 - 'a' as u32)).unwrap_or(c),
                'A'..='Z' => char::from_u32(0x1D400 + (c as u32 - 'A' as u32)).unwrap_or(c),
                '0'..='9' => char::from_u32(0x1D7CE + (c as u32 - '0' as u32)).unwrap_or(c),
                _ => c,
            })
            .collect();
        assert!(r.redact_str(&math).is_some(), "{math}");
    }

    /// The third round's other encodings: byte dumps (`od -b`, `od
    /// -tu1`, `xxd -b`), escapes (JSON, HTML, URL), the 85-letter
    /// encodings, base32hex and uuencode, made by the real programs.
    #[test]
    fn byte_dumps_escapes_and_other_encodings_of_a_key_are_redacted() {
        let key = "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678";
        let r = Redactor::new([key.to_string()]);
        let run = |program: &str, args: &[&str], input: &str| -> String {
            use std::io::Write;
            let mut child = std::process::Command::new(program)
                .args(args)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("{program}: {e}"));
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
            String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
        };
        let line = format!("OPENAI_API_KEY={key}\n");
        let py = |code: &str| run("python3", &["-c", code], &line);
        let shown = [
            ("od -b", run("od", &["-b"], &line)),
            ("od -An -tu1", run("od", &["-An", "-tu1"], &line)),
            ("xxd -b", run("xxd", &["-b"], &line)),
            ("basenc --base32hex", run("basenc", &["--base32hex"], &line)),
            (
                "basenc --z85",
                run(
                    "basenc",
                    &["--z85"],
                    &format!("{line}{}", "x".repeat((4 - line.len() % 4) % 4)),
                ),
            ),
            (
                "b85",
                py("import sys,base64; print(base64.b85encode(sys.stdin.buffer.read()).decode())"),
            ),
            (
                "a85",
                py("import sys,base64; print(base64.a85encode(sys.stdin.buffer.read()).decode())"),
            ),
            (
                "uu",
                py(
                    "import sys,binascii; d=sys.stdin.buffer.read(); print(binascii.b2a_uu(d[:45]).decode()+binascii.b2a_uu(d[45:]).decode())",
                ),
            ),
            (
                "json",
                py(
                    "import sys,json; print(json.dumps(''.join('\\\\u%04x' % ord(c) for c in sys.stdin.read())))",
                ),
            ),
            (
                "html",
                py("import sys; print(''.join('&#%d;' % ord(c) for c in sys.stdin.read()))"),
            ),
            (
                "url",
                py("import sys; print(''.join('%%%02X' % ord(c) for c in sys.stdin.read()))"),
            ),
            // A second look: words as a little-endian machine prints
            // them, and UTF-16 before an encoding.
            ("od -x", run("od", &["-x"], &line)),
            ("od -An -tx2", run("od", &["-An", "-tx2"], &line)),
            ("od -tx4", run("od", &["-tx4"], &line)),
            (
                "od -tx4 shifted",
                run("od", &["-tx4"], &format!("ab{line}")),
            ),
            ("od -x shifted", run("od", &["-x"], &format!("a{line}"))),
            (
                "utf16le base64",
                py(
                    "import sys,base64; print(base64.b64encode(sys.stdin.read().encode('utf-16-le')).decode())",
                ),
            ),
            (
                "utf16be hex",
                py("import sys; print(sys.stdin.read().encode('utf-16-be').hex())"),
            ),
            (
                "utf16 base64",
                py(
                    "import sys,base64; print(base64.b64encode(sys.stdin.read().encode('utf-16')).decode())",
                ),
            ),
            ("od", run("od", &[], &line)),
            ("od -d", run("od", &["-d"], &line)),
            ("od -tu4", run("od", &["-tu4"], &line)),
            ("od -to4", run("od", &["-to4"], &line)),
            ("od -tx8", run("od", &["-tx8"], &line)),
            ("xxd -e -g8", run("xxd", &["-e", "-g8"], &line)),
            (
                "utf32le base64",
                py(
                    "import sys,base64; print(base64.b64encode(sys.stdin.read().encode('utf-32-le')).decode())",
                ),
            ),
            (
                "utf16le b85",
                py(
                    "import sys,base64; print(base64.b85encode(sys.stdin.read().encode('utf-16-le')).decode())",
                ),
            ),
        ];
        for (how, text) in shown {
            let out = r.redact_str(&text).unwrap_or_else(|| text.clone());
            assert!(out.contains(REDACTED), "{how}: {text}");
            // What is left holds no run of the key's letters worth having.
            for part in out.split(REDACTED) {
                assert!(
                    !part.contains("Abc123Def456") && !part.contains("Mno345Pqr"),
                    "{how}: {out}"
                );
            }
        }
        // Numbers that spell nothing stay.
        assert_eq!(
            r.redact_str("0000000 163 153 055 160\nport 8080, 255 0 127"),
            None
        );
    }

    /// What a command can do to a key to get it past verbatim matching.
    #[test]
    fn encoded_and_reversed_keys_are_redacted() {
        use base64::Engine;
        let key = "sk-lathe-test-SECRET-0123456789abcdef";
        let r = Redactor::new([key.to_string()]);
        for prefix in ["", "x", "xy", "OPENAI_API_KEY="] {
            let text = format!("{prefix}{key}\n");
            for encoded in [
                base64::engine::general_purpose::STANDARD.encode(&text),
                base64::engine::general_purpose::URL_SAFE.encode(&text),
            ] {
                let out = r.redact_str(&encoded).unwrap_or_default();
                assert!(out.contains(REDACTED), "{prefix:?}: {encoded}");
                // What is left cannot be decoded back to the key.
                for part in out.split(REDACTED) {
                    let decoded = base64::engine::general_purpose::STANDARD
                        .decode(part.trim_end_matches('='))
                        .unwrap_or_default();
                    assert!(!String::from_utf8_lossy(&decoded).contains(&key[4..20]));
                }
            }
        }
        let reversed: String = key.chars().rev().collect();
        assert_eq!(r.redact_str(&reversed).unwrap(), REDACTED);
        // Hex, wrapped as `xxd -p` wraps it, and base64 wrapped at 76.
        let long = format!("{key}-{key}");
        let r = Redactor::new([long.clone()]);
        let hex: String = long.bytes().map(|b| format!("{b:02x}")).collect();
        let wrapped: Vec<&str> = hex
            .as_bytes()
            .chunks(60)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        let out = r.redact_str(&wrapped.join("\n")).unwrap();
        let left: String = out.split(REDACTED).collect::<Vec<_>>().join("");
        let longest_run = left.split('\n').map(str::len).max().unwrap_or(0);
        assert!(
            longest_run < 2 * PIECE * 2,
            "too much of the key is left in hex: {out}"
        );
        let b64 = base64::engine::general_purpose::STANDARD.encode(format!("x{long}\n"));
        let wrapped: Vec<&str> = b64
            .as_bytes()
            .chunks(76)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        let out = r.redact_str(&wrapped.join("\n")).unwrap();
        assert!(out.matches(REDACTED).count() >= 2, "{out}");
    }

    /// Separators, line breaks and case added to a key, or its bytes
    /// dumped, still hide it: what is left of each line is shorter than a
    /// piece (12 letters), and nothing of the middle shows.
    #[test]
    fn spaced_folded_upper_cased_and_dumped_keys_are_redacted() {
        let key = "sk-lathe-test-SECRET-0123456789abcdef";
        let r = Redactor::new([key.to_string()]);
        let spaced: String = key.chars().flat_map(|c| [c, ' ']).collect();
        let folded: String = key.chars().flat_map(|c| [c, '\n']).collect();
        let xxd = "00000000: 736b 2d6c 6174 6865 2d74 6573 742d 5345  sk-lathe-test-SE\n\
                   00000010: 4352 4554 2d30 3132 3334 3536 3738 3961  CRET-0123456789a\n\
                   00000020: 6263 6465 660a                           bcdef.\n";
        let od = "0000000   s   k   -   l   a   t   h   e   -   t   e   s   t   -   S   E\n\
                  0000020   C   R   E   T   -   0   1   2   3   4   5   6   7   8   9   a\n\
                  0000040   b   c   d   e   f  \\n\n";
        for text in [
            spaced.clone(),
            folded,
            key.to_uppercase(),
            format!("x {} y", spaced.chars().rev().collect::<String>()),
            xxd.to_string(),
            od.to_string(),
        ] {
            let out = r.redact_str(&text).unwrap_or_else(|| text.clone());
            assert!(out.contains(REDACTED), "{text:?} -> {out:?}");
            // No line keeps ten letters of the key, or the hex of ten of
            // its bytes, in a row (nor reversed).
            let (letters, _) = skeleton(key);
            let hex: Vec<u8> = key
                .bytes()
                .flat_map(|b| format!("{b:02x}").into_bytes())
                .collect();
            let reversed: Vec<u8> = letters.iter().rev().copied().collect();
            for line in out.replace(REDACTED, "\n").lines() {
                let (left, _) = skeleton(line);
                let has = |piece: &[u8]| left.windows(piece.len()).any(|w| w == piece);
                assert!(
                    !letters.windows(10).any(has)
                        && !reversed.windows(10).any(has)
                        && !hex.windows(20).any(has),
                    "{text:?} -> {out:?}"
                );
            }
        }
        // Text that merely shares a few letters stays.
        assert_eq!(r.redact_str("the secret is 0123, and a test"), None);
    }

    #[test]
    fn secret_assignments_and_tokens_are_redacted_but_code_is_not() {
        let r = Redactor::default();
        for (text, gone) in [
            ("export DB_PASSWORD=hunter2hunter2\n", "hunter2hunter2"),
            (
                "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCY\n",
                "wJalrXUtnFEMI",
            ),
            (r#"{"password": "correct-horse-battery"}"#, "correct-horse"),
            ("token: abcdef123456\n", "abcdef123456"),
            (
                "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "eyJhbGciOiJIUzI1NiJ9",
            ),
        ] {
            let out = r.redact_str(text).unwrap_or_else(|| text.to_string());
            assert!(!out.contains(gone), "{text} -> {out}");
        }
        for (text, gone) in [
            ("password=hunter2hunter2\n", "hunter2hunter2"),
            ("[db]\ndb.password = s3cr3t-pw-99\n", "s3cr3t-pw-99"),
            ("secret: 'abcdef123456';\n", "abcdef123456"),
            ("export api_key=zyxw98765432\n", "zyxw98765432"),
        ] {
            let out = r.redact_str(text).unwrap_or_else(|| text.to_string());
            assert!(!out.contains(gone), "{text} -> {out}");
            assert!(out.contains("[REDACTED]"), "{text} -> {out}");
        }
        for code in [
            "let token = get_token();",
            "password = input(\"Password: \")",
            "token = get_token()",
            "if api_key.is_empty() { return; }",
            "secret_count = 12",
        ] {
            assert_eq!(r.redact_str(code), None, "{code}");
        }
    }

    #[test]
    fn private_keys_are_redacted_whole() {
        let r = Redactor::default();
        let pem = "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\nb";
        assert_eq!(r.redact_str(pem).unwrap(), "a\n[REDACTED]\nb");
        assert_eq!(r.redact_str("nothing here"), None);
    }
}
