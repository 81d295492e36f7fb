//! Texts whose lines carry something besides the data: a dump (`xxd`,
//! `hexdump -C`, `od -c`, `od -x`) puts an offset before each line's
//! bytes and their characters after them; `nl`, `cat -n` and `grep -n`
//! put a line number before each line. A secret that runs over two such
//! lines, or lines narrower than a piece (`xxd -c 8`, `fold -w8 | nl`),
//! shows whole in no line and in no run of the text's letters. These
//! streams put the data back together: for each run of dump lines, the
//! bytes its hex or character columns spell (both byte orders where a
//! group holds several) and its character column; for each run of
//! numbered lines, their bodies. Each byte keeps where it came from in
//! the text, so a match hides what spelled it.

use std::sync::LazyLock;

use regex::Regex;

/// Bytes, each with the span of the text that spelled it.
#[derive(Debug, Default)]
pub struct Stream {
    pub bytes: Vec<u8>,
    pub spans: Vec<(usize, usize)>,
}

impl Stream {
    fn push(&mut self, byte: u8, span: (usize, usize)) {
        self.bytes.push(byte);
        self.spans.push(span);
    }
}

/// The streams of a text: `data` (bytes a dump spells, matched as bytes),
/// `text` (character columns and line bodies, matched as text) and
/// `dense` (the text without blanks and separators, matched against the
/// secrets' forms without them).
#[derive(Debug, Default)]
pub struct Streams {
    pub data: Vec<Stream>,
    pub text: Vec<Stream>,
    pub dense: Vec<Stream>,
}

/// An offset before a dump line's data: hex or octal digits, maybe a
/// colon (`00000010:`, `0000020`).
static OFFSET: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\s*[0-9A-Fa-f]{6,16}:?(?:\s|$)").ok());

/// Where a dump line's offset ends (its digits and colon), if it has one.
fn offset_end(line: &str) -> Option<usize> {
    let m = OFFSET.as_ref()?.find(line)?;
    Some(m.start() + line[m.start()..m.end()].trim_end().len())
}

/// A line number before a line (`nl`, `cat -n`: right-aligned and a
/// tab; `grep -n`: a colon).
static NUMBER: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\s*[0-9]{1,9}(?:\t| {1,2}|:|-)").ok());

/// One dump line, decoded.
struct DumpLine {
    /// Bytes in the order written, with their spans.
    bytes: Vec<(u8, (usize, usize))>,
    /// The same with each group's bytes in the other order (a
    /// little-endian machine's words: `od -x`, `hexdump`, `xxd -e`).
    swapped: Vec<(u8, (usize, usize))>,
    /// The character column (`lm-studio.`), with where it starts.
    chars: Option<(usize, usize)>,
}

/// The streams of `text` (see the module's notes).
pub fn streams(text: &str) -> Streams {
    let mut out = Streams::default();
    // The text without its blanks and separators: a secret folded at any
    // width (`base64 -w0 | fold -w4`) or spelled out character by
    // character.
    if let Some(d) = dense(text) {
        out.dense.push(d);
    }
    // The text with its escapes read (`%21`, `\\x00`, `\\u00e4`, `&#228;`,
    // `\\303`, `M-C`): a secret escaped in part, or as bytes of UTF-16.
    for code_points in [false, true] {
        if let Some(u) = unescaped(text, code_points) {
            out.data.push(Stream {
                bytes: u.bytes.clone(),
                spans: u.spans.clone(),
            });
            if let Some(d) = dense(std::str::from_utf8(&u.bytes).unwrap_or("")) {
                // Dense, mapped back to the text.
                out.dense.push(Stream {
                    spans: d.spans.iter().map(|(a, _)| u.spans[*a]).collect(),
                    bytes: d.bytes,
                });
            }
            out.text.push(u);
        }
    }
    out.data.extend(binary_runs(text));
    // A cheap look first: most texts are neither dumps nor numbered.
    if !text.bytes().take(4096).any(|b| b.is_ascii_digit()) {
        return out;
    }
    // Each line read twice: with its first word as an offset, and as data
    // (`od -An -tx8` words look like offsets).
    for offsets in [true, false] {
        dumps(text, offsets, &mut out);
    }
    let mut bodies = Stream::default();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        match numbered(line) {
            Some(body) => {
                let line = line.trim_end_matches(['\n', '\r']);
                for (i, b) in line.bytes().enumerate().skip(body) {
                    bodies.push(b, (start + i, start + i + 1));
                }
            }
            None => flush(&mut bodies, &mut out.text),
        }
    }
    flush(&mut bodies, &mut out.text);
    out
}

/// The streams of the text's runs of dump lines, read with or without an
/// offset before each line's data.
fn dumps(text: &str, offsets: bool, out: &mut Streams) {
    let mut data = Stream::default();
    let mut swapped = Stream::default();
    let mut chars = Stream::default();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        match dump_line(line, start, offsets) {
            Some(d) => {
                for (b, span) in d.bytes {
                    data.push(b, span);
                }
                for (b, span) in d.swapped {
                    swapped.push(b, span);
                }
                if let Some((from, to)) = d.chars {
                    for (i, c) in line[from..to].char_indices() {
                        let s = start + from + i;
                        if c.is_ascii() {
                            chars.push(c as u8, (s, s + 1));
                        }
                    }
                }
            }
            None => {
                for s in [&mut data, &mut swapped] {
                    flush(s, &mut out.data);
                }
                flush(&mut chars, &mut out.text);
            }
        }
    }
    for s in [&mut data, &mut swapped] {
        flush(s, &mut out.data);
    }
    flush(&mut chars, &mut out.text);
}

/// Escapes that spell a byte or a character: `%21`, `\\x21` (a byte, or
/// Python's code point), `\\u00e4`, `&#x21;`, `&#33;`, octal `\\041`
/// (`sed -n l`, `printf %q`), and `cat -v`'s `M-` and `^` forms.
static ESCAPE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)%([0-9a-f]{2})|\\{1,2}x([0-9a-f]{2})|\\{1,2}u([0-9a-f]{4})|&#x([0-9a-f]{1,6});|&#([0-9]{1,7});|\\{1,2}([0-3][0-7]{2})|(M-\^.|M-.|\^[@-_?])",
    )
    .ok()
});

/// The bytes `cat -v` means by `M-x`, `M-^x` or `^x`.
fn meta(notation: &str) -> Option<u8> {
    let (high, rest) = match notation.strip_prefix("M-") {
        Some(rest) => (0x80u8, rest),
        None => (0, notation),
    };
    let low = match rest.as_bytes() {
        [b'^', b'?'] => 0x7f,
        [b'^', c] => c ^ 0x40,
        [c] => *c,
        _ => return None,
    };
    Some(high | low)
}

/// `text` with its escapes read (each escape's bytes keep its span),
/// `\\xNN` as a byte (`code_points`: as the character U+00NN, as Python
/// writes one); `None` when it holds none.
fn unescaped(text: &str, code_points: bool) -> Option<Stream> {
    let re = ESCAPE.as_ref()?;
    if !text.contains(['%', '\\', '&', '^']) && !text.contains("M-") {
        return None;
    }
    let mut out = Stream::default();
    let mut at = 0;
    let mut any = false;
    let push_char = |out: &mut Stream, c: u32, span| {
        let mut buf = [0u8; 4];
        let s = char::from_u32(c)
            .unwrap_or('\u{fffd}')
            .encode_utf8(&mut buf);
        for b in s.bytes() {
            out.push(b, span);
        }
    };
    for caps in re.captures_iter(text) {
        let Some(whole) = caps.get(0) else { continue };
        for (i, b) in text[at..whole.start()].bytes().enumerate() {
            out.push(b, (at + i, at + i + 1));
        }
        at = whole.end();
        let span = (whole.start(), whole.end());
        let value = |g: usize, radix| {
            caps.get(g)
                .and_then(|m| u32::from_str_radix(m.as_str(), radix).ok())
        };
        if let Some(b) = value(2, 16).filter(|_| code_points) {
            push_char(&mut out, b, span);
        } else if let Some(b) = value(1, 16)
            .or_else(|| value(2, 16))
            .or_else(|| value(6, 8))
            .or_else(|| caps.get(7).and_then(|m| meta(m.as_str())).map(u32::from))
        {
            out.push(u8::try_from(b).unwrap_or(0), span);
        } else if let Some(c) = value(3, 16)
            .or_else(|| value(4, 16))
            .or_else(|| value(5, 10))
        {
            push_char(&mut out, c, span);
        }
        any = true;
    }
    for (i, b) in text[at..].bytes().enumerate() {
        out.push(b, (at + i, at + i + 1));
    }
    (any && out.bytes.len() >= super::forms::MIN_FORM).then_some(out)
}

/// What separates the characters of a key a program spells out one by
/// one (`fold -w1 | paste -sd,`, `print(list(key))`, `base64 | sed
/// 's/.../&:/g'`), besides blanks: dropped in the dense stream.
pub const SEPARATORS: &[u8] = b",;:|'\"[](){}";

/// The text without blanks and separators (see [`SEPARATORS`]), when it
/// holds any.
fn dense(text: &str) -> Option<Stream> {
    let mut out = Stream::default();
    for (i, b) in text.bytes().enumerate() {
        if !b.is_ascii_whitespace() && !SEPARATORS.contains(&b) {
            out.push(b, (i, i + 1));
        }
    }
    (out.bytes.len() < text.len() && out.bytes.len() >= super::forms::MIN_FORM).then_some(out)
}

/// Runs of binary digits written without a break (`perl -e 'print
/// unpack "B*"'`), read eight at a time from where each run starts.
fn binary_runs(text: &str) -> Vec<Stream> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !matches!(bytes[i], b'0' | b'1') {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && matches!(bytes[i], b'0' | b'1') {
            i += 1;
        }
        if i - start < 8 * super::forms::MIN_FORM {
            continue;
        }
        let mut s = Stream::default();
        for k in (start..i - 7).step_by(8) {
            let byte = bytes[k..k + 8]
                .iter()
                .fold(0u8, |acc, b| (acc << 1) | (b - b'0'));
            s.push(byte, (k, k + 8));
        }
        out.push(s);
    }
    out
}

/// Keeps a stream worth matching, and starts a new one.
fn flush(stream: &mut Stream, into: &mut Vec<Stream>) {
    let s = std::mem::take(stream);
    if s.bytes.len() >= super::forms::MIN_FORM {
        into.push(s);
    }
}

/// Where a numbered line's body starts.
fn numbered(line: &str) -> Option<usize> {
    NUMBER.as_ref()?.find(line).map(|m| m.end())
}

/// A line of a hex or character dump, decoded; `None` for any other.
fn dump_line(line: &str, start: usize, offsets: bool) -> Option<DumpLine> {
    let offset = if offsets { offset_end(line) } else { None };
    if let Some(at) = offset
        && let Some(d) = od_chars(line, start, at)
    {
        return Some(d);
    }
    hex_groups(line, start, offset.unwrap_or(0), offset.is_some())
}

/// `od -c`: after the offset, fields four characters wide, each a
/// character, an escape (`\n`) or three octal digits (a byte).
fn od_chars(line: &str, start: usize, body_at: usize) -> Option<DumpLine> {
    let body = line.get(body_at..)?;
    if body.is_empty() || body.len() % 4 != 0 || !body.is_ascii() {
        return None;
    }
    let mut bytes = Vec::new();
    for (k, field) in body.as_bytes().chunks(4).enumerate() {
        let field = std::str::from_utf8(field).ok()?;
        let s = start + body_at + 4 * k;
        let span = (s, s + 4);
        let t = field.trim_start();
        let byte = match t.as_bytes() {
            [] => b' ',
            [c] => *c,
            [b'\\', e] => match e {
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                b'0' => 0,
                b'a' => 7,
                b'b' => 8,
                b'f' => 12,
                b'v' => 11,
                b'\\' => b'\\',
                _ => return None,
            },
            [a, b, c] if [a, b, c].iter().all(|d| (b'0'..=b'7').contains(d)) => u8::try_from(
                u32::from(a - b'0') * 64 + u32::from(b - b'0') * 8 + u32::from(c - b'0'),
            )
            .ok()?,
            // `**`: a byte that continues a character shown before.
            [b'*', b'*'] => continue,
            _ => return None,
        };
        bytes.push((byte, span));
    }
    (bytes.len() >= 2).then(|| DumpLine {
        swapped: Vec::new(),
        bytes,
        chars: None,
    })
}

/// Hex groups of one width (`6c6d 2d73`, `6c 6d 2d`), then maybe a
/// character column (after two spaces, or between `|`s).
fn hex_groups(line: &str, start: usize, body_at: usize, has_offset: bool) -> Option<DumpLine> {
    let body = line.get(body_at..)?;
    let mut tokens: Vec<(usize, &str)> = Vec::new();
    let mut width = 0;
    let mut end = body_at;
    for (i, tok) in split_spans(body) {
        let hex = tok.len() % 2 == 0 && tok.bytes().all(|b| b.is_ascii_hexdigit());
        if width == 0 && hex && (2..=16).contains(&tok.len()) {
            width = tok.len();
        }
        // The line's last group may be shorter (`xxd -c 5 -g 2`).
        let shorter = hex && tok.len() < width && !tokens.is_empty();
        if !hex || (tok.len() != width && !shorter) {
            break;
        }
        tokens.push((body_at + i, tok));
        end = body_at + i + tok.len();
        if shorter {
            break;
        }
    }
    if tokens.len() < 2 && !(has_offset && tokens.len() == 1) {
        return None;
    }
    let mut bytes = Vec::new();
    let mut swapped = Vec::new();
    for (i, tok) in &tokens {
        let s = start + i;
        let span = (s, s + tok.len());
        let group: Vec<u8> = tok
            .as_bytes()
            .chunks(2)
            .filter_map(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok())
            .collect();
        bytes.extend(group.iter().map(|b| (*b, span)));
        swapped.extend(group.iter().rev().map(|b| (*b, span)));
    }
    if width == 2 {
        swapped.clear();
    }
    // The character column: what follows the groups.
    let rest = &line[end..];
    let chars = if let (Some(open), Some(close)) = (rest.find('|'), rest.rfind('|')) {
        (close > open + 1).then(|| (end + open + 1, end + close))
    } else {
        let trimmed = rest.trim_start();
        (has_offset && !trimmed.is_empty() && rest.len() - trimmed.len() >= 2)
            .then(|| (line.len() - trimmed.len(), line.len()))
    };
    Some(DumpLine {
        bytes,
        swapped,
        chars,
    })
}

/// The words of `s` with where each starts.
fn split_spans(s: &str) -> impl Iterator<Item = (usize, &str)> {
    s.split(' ')
        .scan(0usize, |at, w| {
            let here = *at;
            *at += w.len() + 1;
            Some((here, w))
        })
        .filter(|(_, w)| !w.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(s: &Stream) -> String {
        String::from_utf8_lossy(&s.bytes).into_owned()
    }

    #[test]
    fn dumps_give_back_their_bytes_and_characters_across_lines() {
        let xxd = "00000000: 6161 6161 6161 6161 6161 6161 6c6d 2d73  aaaaaaaaaaaalm-s\n\
                   00000010: 7475 6469 6f0a                           tudio.\n";
        let s = streams(xxd);
        assert!(
            s.data
                .iter()
                .any(|d| d.bytes.windows(9).any(|w| w == b"lm-studio"))
        );
        assert!(
            s.text.iter().any(|t| text_of(t).contains("lm-studio")),
            "{:?}",
            s.text
        );
        let hexdump = "00000000  61 62 63 6c 6d 2d 73 74  75 64 69 6f 0a 41 42 43  |abclm-studio.ABC|\n\
                       00000010  44 45 46                                          |DEF|\n";
        let s = streams(hexdump);
        assert!(
            s.data
                .iter()
                .any(|d| d.bytes.windows(9).any(|w| w == b"lm-studio"))
        );
        assert!(s.text.iter().any(|t| text_of(t).contains("lm-studioABCDEF") || text_of(t).contains("lm-studio")));
        let od_c = "0000000   a   b   c   l   m   -   s   t   u   d   i   o  \\n   A   B   C\n\
                    0000020   D  \\n\n";
        let s = streams(od_c);
        assert!(
            s.data
                .iter()
                .any(|d| d.bytes.windows(9).any(|w| w == b"lm-studio")),
            "{:?}",
            s.data
        );
        let od_x = "0000000 6d6c 732d 7574 6964 0a6f\n0000012\n";
        let s = streams(od_x);
        assert!(
            s.data
                .iter()
                .any(|d| d.bytes.windows(9).any(|w| w == b"lm-studio"))
        );
        let nl = "     1\tlm-stud\n     2\tio-sec\n     3\tret\n";
        let s = streams(nl);
        assert!(
            s.text
                .iter()
                .any(|t| text_of(t).contains("lm-studio-secret"))
        );
        assert!(streams("plain words, no dump\nat all\n").data.is_empty());
    }
}
