//! The forms a secret takes in text, as the patterns the redactor looks
//! for. Two projections of a text are searched: the text as it is
//! (`verbatim`: the secret, reversed, and its encodings that use symbols
//! or case, such as base64 and the 85-letter ones) and its ASCII letters
//! and digits alone, lower-cased (`letters`: the secret's letters however
//! spaced or cased, and its hex and base32, however grouped or wrapped).
//!
//! Every form is cut into pieces by one function, [`pieces`], which never
//! gives a piece shorter than [`MIN_FORM`] bytes: a pattern that short
//! (or empty) would match by chance, or everywhere. An encoding is read at
//! every way the secret can fall on its groups, and only the characters
//! the secret's bytes alone decide are kept (the first and last ones also
//! depend on what stands beside it in the text).

use base64::Engine;

/// The shortest pattern looked for. A secret shorter than this is not
/// hidden at all (it would hide ordinary words), and a form of a longer
/// one that comes out shorter is not looked for.
pub const MIN_FORM: usize = 8;

/// The letters and digits of a secret in one piece (8 random ones do not
/// turn up by chance); a secret with fewer is looked for whole. A piece
/// shorter than the longest run a program can be made to print of it
/// leaks the key a run at a time (`cut -c1-11`, `cut -c12-22`, …).
pub const LETTER_PIECE: usize = 8;

/// The same for a secret URL's parts (a webhook's path): they hold words
/// (`services`) that a piece of 8 would hide wherever they stand.
const URL_LETTER_PIECE: usize = 12;

/// The bytes of a secret in one encoded piece: a line-wrapped encoding
/// (`base64` wraps at 76 columns, `xxd -p` at 60) still shows every piece
/// that falls within a line.
pub const BYTE_PIECE: usize = 9;

/// Base64 (and uuencode) characters in a piece: 9 bytes.
const B64_PIECE: usize = 12;
/// Base32 characters in a piece: 5 bytes (one group).
const B32_PIECE: usize = 8;
/// 85-letter characters in a piece: 8 bytes (two groups).
const B85_PIECE: usize = 10;

/// A secret longer than this (a certificate, a blob in a `.env`) is
/// looked for as it is and by its letters only: its encodings in pieces
/// would be millions of patterns and stall every start.
pub const LONG_SECRET: usize = 512;

/// The most patterns all secrets make; past it, further secrets are
/// looked for as they are and by their letters only.
const MAX_PATTERNS: usize = 400_000;

/// The alphabets of the 85-letter encodings: Python's `b85encode` (RFC
/// 1924), Ascii85 (`a85encode`, btoa) and ZeroMQ's Z85.
const B85: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
const A85: &[u8; 85] =
    b"!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstu";
const Z85: &[u8; 85] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/// Every pattern of a set of secrets, per projection.
#[derive(Default)]
pub struct Forms {
    pub verbatim: Vec<Vec<u8>>,
    pub letters: Vec<Vec<u8>>,
    /// The secrets' own bytes (and as UTF-16), in pieces: what a dump's
    /// columns spell once put back together (`columns`).
    pub raw: Vec<Vec<u8>>,
    /// The verbatim forms without blanks and separators, for a text read
    /// the same way (`columns::SEPARATORS`).
    pub dense: Vec<Vec<u8>>,
}

impl Forms {
    /// The forms of `secrets` (those of [`MIN_FORM`] bytes or more).
    pub fn of(secrets: &[String]) -> Self {
        let mut forms = Self::default();
        for whole in secrets.iter().filter(|s| s.len() >= MIN_FORM) {
            // A secret URL (a webhook, a DSN) is hidden whole, but only
            // its secret parts in other forms: pieces of its scheme and
            // host would hide every mention of the site.
            forms.add_verbatim(whole.as_bytes());
            let parts = secret_parts(whole);
            let piece = if parts.len() == 1 && parts[0] == *whole {
                LETTER_PIECE
            } else {
                URL_LETTER_PIECE
            };
            for part in parts {
                forms.add_secret(&part, piece);
            }
        }
        forms.finish()
    }

    /// The dense forms, and every set sorted without repeats.
    fn finish(mut self) -> Self {
        self.dense = dense_of(&self.verbatim);
        for set in [
            &mut self.verbatim,
            &mut self.letters,
            &mut self.raw,
            &mut self.dense,
        ] {
            set.sort();
            set.dedup();
        }
        self
    }

    /// The forms of the lines of files the read rules cover (fewer than a
    /// key's: a file has many lines): each line as it is, its letters
    /// however spaced or cased, and its hex and base64.
    pub fn of_content(lines: &[String]) -> Self {
        let mut forms = Self::default();
        for line in lines.iter().filter(|l| l.len() >= MIN_FORM) {
            forms.add_verbatim(line.as_bytes());
            let letters = skeleton(line).0;
            if letters.len() >= MIN_FORM {
                for piece in pieces(&letters, LETTER_PIECE, 1) {
                    forms.add_letters(piece);
                }
            }
            let bytes = line.as_bytes();
            for run in bit_encoded(bytes, 4, |b| hex(b).into_bytes()) {
                for piece in pieces(&run, 2 * BYTE_PIECE, 2) {
                    forms.add_letters(piece);
                }
            }
            for run in bit_encoded(bytes, 6, |b| {
                base64::engine::general_purpose::STANDARD_NO_PAD
                    .encode(b)
                    .into_bytes()
            }) {
                for piece in pieces(&run, B64_PIECE, 4) {
                    forms.add_verbatim(piece);
                }
            }
        }
        forms.finish()
    }

    fn add_verbatim(&mut self, pattern: &[u8]) {
        if pattern.len() >= MIN_FORM {
            self.verbatim.push(pattern.to_vec());
        }
    }

    fn add_letters(&mut self, pattern: &[u8]) {
        if pattern.len() >= MIN_FORM {
            self.letters.push(pattern.to_ascii_lowercase());
        }
    }

    /// Every form of one secret (or secret part).
    fn add_secret(&mut self, s: &str, letter_piece: usize) {
        self.add_verbatim(s.as_bytes());
        let reversed: String = s.chars().rev().collect();
        self.add_verbatim(reversed.as_bytes());
        // A long one, or once the budget is spent: its letters, in
        // windows that overlap by half (any run of 18 of them holds one).
        let light =
            s.len() > LONG_SECRET || self.verbatim.len() + self.letters.len() > MAX_PATTERNS;
        // Its letters and digits, however spaced, cased or folded, either
        // way round (`sed 's/./& /g'`, `fold -w1`, `tr a-z A-Z`, `rev`).
        let letters = skeleton(s).0;
        if letters.len() >= MIN_FORM {
            let backwards: Vec<u8> = letters.iter().rev().copied().collect();
            let step = if light { letter_piece / 2 } else { 1 };
            for run in [&letters, &backwards] {
                for piece in pieces(run, letter_piece, step) {
                    self.add_letters(piece);
                }
            }
        }
        if light {
            return;
        }
        // Its bytes, and as UTF-16 either way round, as a dump spells
        // them.
        // (A URL's parts hold words: their pieces are longer.)
        let raw_piece = if letter_piece > LETTER_PIECE {
            letter_piece
        } else {
            BYTE_PIECE
        };
        for form in [s.as_bytes().to_vec(), utf16(s, false), utf16(s, true)] {
            for piece in pieces(&form, raw_piece, 1) {
                self.raw.push(piece.to_vec());
            }
        }
        // Its bytes, and as UTF-16 and UTF-32 either way round (`iconv -t
        // UTF-16LE | base64`, PowerShell's `-EncodedCommand`).
        let bytes = s.as_bytes();
        for form in [
            bytes.to_vec(),
            utf16(s, false),
            utf16(s, true),
            utf32(s, false),
            utf32(s, true),
        ] {
            self.add_encodings(&form);
        }
        // Base32 (`base32`, TOTP secrets) and base32hex of its bytes,
        // however cased and wrapped.
        for engine in [
            &data_encoding::BASE32_NOPAD,
            &data_encoding::BASE32HEX_NOPAD,
        ] {
            for run in bit_encoded(bytes, 5, |b| engine.encode(b).into_bytes()) {
                for piece in pieces(&run, B32_PIECE, 8) {
                    self.add_letters(piece);
                }
            }
        }
        // The hex of its 2-, 4- and 8-byte words as a little-endian
        // machine prints them (`od -x`, `od -tx4`, `hexdump`), at each
        // way the secret can fall on the words.
        for word in [2, 4, 8] {
            for align in 0..word {
                let hex: Vec<u8> = bytes
                    .get(align..)
                    .unwrap_or_default()
                    .chunks_exact(word)
                    .flat_map(|w| w.iter().rev())
                    .flat_map(|b| format!("{b:02x}").into_bytes())
                    .collect();
                for piece in pieces(&hex, 2 * BYTE_PIECE, 2 * word) {
                    self.add_letters(piece);
                }
            }
        }
    }

    /// The encodings of one byte form of a secret.
    fn add_encodings(&mut self, bytes: &[u8]) {
        // Hex, however grouped, cased or wrapped (`xxd`, `od -tx1`).
        for run in bit_encoded(bytes, 4, |b| hex(b).into_bytes()) {
            for piece in pieces(&run, 2 * BYTE_PIECE, 2) {
                self.add_letters(piece);
            }
        }
        // Base64, standard and URL-safe, and uuencode's 3-byte groups.
        for engine in [
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ] {
            for run in bit_encoded(bytes, 6, |b| engine.encode(b).into_bytes()) {
                for piece in pieces(&run, B64_PIECE, 4) {
                    self.add_verbatim(piece);
                }
            }
        }
        for run in bit_encoded(bytes, 6, uuencoded) {
            for piece in pieces(&run, B64_PIECE, 4) {
                self.add_verbatim(piece);
            }
        }
        // The 85-letter encodings (Python's b85, Ascii85, Z85): whole
        // 4-byte groups, at each way the secret falls on them.
        for alphabet in [B85, A85, Z85] {
            for align in 0..4 {
                let run = base85(bytes.get(align..).unwrap_or_default(), alphabet);
                for piece in pieces(run.as_bytes(), B85_PIECE, 5) {
                    self.add_verbatim(piece);
                }
            }
        }
    }
}

/// The forms without blanks and separators (as the dense stream reads
/// text), those still long enough.
fn dense_of(verbatim: &[Vec<u8>]) -> Vec<Vec<u8>> {
    verbatim
        .iter()
        .map(|p| {
            p.iter()
                .copied()
                .filter(|b| !b.is_ascii_whitespace() && !super::columns::SEPARATORS.contains(b))
                .collect::<Vec<u8>>()
        })
        .filter(|p| p.len() >= MIN_FORM)
        .collect()
}

/// `run` in pieces of `width` bytes, starting every `step` bytes; `run`
/// whole when it is shorter than `width`. No piece is shorter than
/// [`MIN_FORM`]: a run that short gives none.
pub fn pieces(run: &[u8], width: usize, step: usize) -> impl Iterator<Item = &[u8]> {
    let step = step.max(1);
    let width = width.max(MIN_FORM);
    let count = if run.len() < MIN_FORM {
        0
    } else if run.len() <= width {
        1
    } else {
        (run.len() - width) / step + 1
    };
    (0..count).map(move |k| {
        let start = k * step;
        &run[start..(start + width).min(run.len())]
    })
}

/// The runs of an encoding of `bytes` with `bits` bits a character
/// (`encode` writes the characters, unpadded), one for each way the
/// secret can fall on the encoding's groups: only the characters that
/// `bytes` alone decide.
fn bit_encoded(bytes: &[u8], bits: usize, encode: impl Fn(&[u8]) -> Vec<u8>) -> Vec<Vec<u8>> {
    if bytes.is_empty() {
        return Vec::new();
    }
    // A group is the fewest bytes that make whole characters.
    let group = (1..=8).find(|g| (8 * g) % bits == 0).unwrap_or(1);
    (0..group)
        .filter_map(|lead| {
            let mut padded = vec![0u8; lead];
            padded.extend_from_slice(bytes);
            let encoded = encode(&padded);
            let first = (8 * lead).div_ceil(bits);
            let end = (8 * (lead + bytes.len())) / bits;
            encoded
                .get(first..end.min(encoded.len()))
                .map(<[u8]>::to_vec)
        })
        .filter(|run| !run.is_empty())
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `bytes`' whole 4-byte groups in an 85-letter encoding.
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

/// `bytes` as uuencode writes them (`` ` `` for zero, as modern uuencode
/// does), unpadded: the last group's characters as far as it goes.
fn uuencoded(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    for g in bytes.chunks(3) {
        let b = |i: usize| u32::from(g.get(i).copied().unwrap_or(0));
        let n = b(0) << 16 | b(1) << 8 | b(2);
        for (k, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            // The characters the group's bytes reach.
            if 6 * k < 8 * g.len() {
                let six = u8::try_from((n >> shift) & 0x3f).unwrap_or(0);
                out.push(if six == 0 { b'`' } else { six + 32 });
            }
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

/// The parts of `secret` worth hiding in other forms: the secret itself,
/// or, for a URL, its password, path, query and fragment (each long
/// enough).
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
    .filter(|p| p.len() >= MIN_FORM)
    .collect()
}

/// The ASCII letters and digits of `text`, lower-cased, with the byte
/// span of each in `text`. A letter written in a compatibility form that
/// stands for one ASCII letter or digit (fullwidth `ｓｋ`, mathematical
/// `𝐬𝐤`, circled `ⓢ`) counts as that letter: a key spelled so still
/// reads as the key.
pub fn skeleton(text: &str) -> (Vec<u8>, Vec<(usize, usize)>) {
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
