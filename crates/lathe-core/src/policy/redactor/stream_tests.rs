use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::*;

const KEY: &str = "lm-studio-local-key-0123456789";

/// Streams `pieces`, `gap` apart: every release, then the end.
fn stream(redactor: &Redactor, pieces: &[&str], gap: Duration) -> (Vec<String>, String) {
    let mut s = Stream::default();
    let t0 = Instant::now();
    let mut shown = Vec::new();
    for (i, p) in pieces.iter().enumerate() {
        let at = t0 + gap * u32::try_from(i).unwrap_or(u32::MAX);
        shown.extend(s.push(redactor, p, at));
    }
    let during = shown.clone();
    shown.extend(s.finish(redactor));
    (during, shown.concat())
}

/// A key split over deltas at every point, as a hostile server would
/// echo it: never shown, in a slow stream or a burst; the text around
/// it is.
#[test]
fn a_key_split_over_deltas_is_never_shown() {
    let r = Redactor::new([KEY.to_string()]);
    let text = format!("the key is {KEY} and that is all\n");
    for cut in 1..text.len() {
        for gap in [Duration::ZERO, Duration::from_millis(20)] {
            let (a, b) = text.split_at(cut);
            let (_, shown) = stream(&r, &[a, b], gap);
            assert!(!shown.contains(KEY), "{cut} {gap:?}: {shown}");
            assert!(shown.contains("[REDACTED]"), "{shown}");
            assert!(shown.starts_with("the key is ") && shown.ends_with("that is all\n"));
        }
    }
    // One character at a time.
    let chars: Vec<String> = text.chars().map(String::from).collect();
    let pieces: Vec<&str> = chars.iter().map(String::as_str).collect();
    let (_, shown) = stream(&r, &pieces, Duration::from_millis(20));
    assert!(!shown.contains(KEY), "{shown}");
}

/// A credential's shape (no key configured) and a private key's block,
/// streamed: held until whole, then hidden.
#[test]
fn shapes_and_private_key_blocks_are_held_until_whole() {
    let r = Redactor::default();
    let token = format!("ghp_{}", "a1B2c3D4".repeat(5));
    let text = format!("use {token} now\n");
    let pieces: Vec<String> = text
        .as_bytes()
        .chunks(3)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let (during, shown) = stream(&r, &refs, Duration::from_millis(20));
    assert!(!during.concat().contains("ghp_"), "{during:?}");
    assert_eq!(shown, "use [REDACTED] now\n");
    let pem = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n";
    let lines: Vec<&str> = pem.split_inclusive('\n').collect();
    let (during, shown) = stream(&r, &lines, Duration::from_millis(20));
    assert!(!during.concat().contains("MIIE"), "{during:?}");
    assert!(!shown.contains("MIIE"), "{shown}");
    // Cut anywhere, its END line too (`-----END PRIV` then `ATE KEY-----`):
    // the block goes out whole, as one [REDACTED].
    let text = format!("the key:\n{pem}done\n");
    for cut in 1..text.len() {
        for gap in [Duration::ZERO, Duration::from_millis(20)] {
            let (a, b) = text.split_at(cut);
            let (_, shown) = stream(&r, &[a, b], gap);
            assert!(
                !shown.contains("MIIE") && !shown.contains("BKcw"),
                "{cut}: {shown}"
            );
            assert!(!shown.contains("-----"), "{cut}: {shown}");
            assert_eq!(r.redact_str(&shown), None, "{cut}: {shown}");
        }
    }
}

/// A slow stream shows each word once the next one starts: nothing waits
/// for the end but the last word.
#[test]
fn a_slow_stream_shows_each_word_as_it_can() {
    let r = Redactor::new([KEY.to_string()]);
    let words = ["Hello", " there,", " how", " are", " you", " today?"];
    let mut s = Stream::default();
    let t0 = Instant::now();
    let mut shown = String::new();
    for (i, w) in words.iter().enumerate() {
        let at = t0 + Duration::from_millis(30) * u32::try_from(i).unwrap_or(0);
        shown.extend(s.push(&r, w, at));
    }
    assert_eq!(shown, "Hello there, how are you ", "with a key known too");
    let plain = Redactor::default();
    let mut s = Stream::default();
    let mut quick = String::new();
    for (i, w) in words.iter().enumerate() {
        let at = t0 + Duration::from_millis(30) * u32::try_from(i).unwrap_or(0);
        quick.extend(s.push(&plain, w, at));
    }
    assert_eq!(quick, "Hello there, how are you ", "all but the last word");
    quick.extend(s.finish(&plain));
    assert_eq!(quick, "Hello there, how are you today?");
}

/// A retry drops what waited; a burst is released in batches, and all of
/// it by the end.
#[test]
fn a_retry_drops_what_waits_and_a_burst_is_batched() {
    let r = Redactor::default();
    let mut s = Stream::default();
    let t0 = Instant::now();
    assert_eq!(s.push(&r, "partial answ", t0), Some("partial ".into()));
    s.discard();
    assert_eq!(s.finish(&r), None);
    let word = "word ".repeat(400);
    let mut releases = 0;
    let mut out = String::new();
    for chunk in word.as_bytes().chunks(5) {
        if let Some(t) = s.push(&r, std::str::from_utf8(chunk).unwrap(), t0) {
            releases += 1;
            out.push_str(&t);
        }
    }
    out.extend(s.finish(&r));
    assert_eq!(out, word);
    assert!(
        releases < 10,
        "{releases} releases for 400 deltas in a burst"
    );
}

/// A burst of numbers (no word of prose to stop at) and one endless
/// word neither wait for ever nor are looked at again with every delta:
/// what waits stays under a bound, and comes out whole.
#[test]
fn what_waits_is_bounded() {
    let r = Redactor::new([KEY.to_string()]);
    let t0 = Instant::now();
    for text in ["163 ".repeat(20_000), "x".repeat(80_000)] {
        let mut s = Stream::default();
        let mut out = String::new();
        for chunk in text.as_bytes().chunks(5) {
            out.extend(s.push(&r, std::str::from_utf8(chunk).unwrap(), t0));
            assert!(
                s.pending.len() <= MAX_WAIT + 2 * BATCH,
                "{}",
                s.pending.len()
            );
        }
        out.extend(s.finish(&r));
        assert_eq!(out, text);
    }
}

proptest! {
    #![proptest_config(crate::props::config(64))]

    /// Any text, a configured secret put anywhere in it (or none), cut
    /// into any deltas at any pace: the secret never shows, before the
    /// end or after; text without a secret comes out as it went in.
    #[test]
    fn no_split_shows_a_secret(
        before in "[ -~é\n]{0,60}",
        after in "[ -~é\n]{0,60}",
        secret in "[A-Za-z0-9_-]{8,40}",
        with_secret in any::<bool>(),
        cuts in proptest::collection::vec(1usize..20, 0..40),
        gaps in proptest::collection::vec(0u64..20, 0..40),
    ) {
        let r = Redactor::new([secret.clone()]);
        let text = if with_secret {
            format!("{before} {secret} {after}")
        } else {
            format!("{before}{after}")
        };
        let mut pieces = Vec::new();
        let mut rest = text.as_str();
        for c in &cuts {
            if rest.is_empty() {
                break;
            }
            let mut at = (*c).min(rest.len());
            while !rest.is_char_boundary(at) {
                at += 1;
            }
            let (a, b) = rest.split_at(at);
            pieces.push(a.to_string());
            rest = b;
        }
        pieces.push(rest.to_string());
        let mut s = Stream::default();
        let t0 = Instant::now();
        let mut t = t0;
        let mut shown = String::new();
        for (i, p) in pieces.iter().enumerate() {
            t += Duration::from_millis(gaps.get(i).copied().unwrap_or(0));
            shown.extend(s.push(&r, p, t));
            prop_assert!(!shown.contains(&secret), "during: {shown:?}");
        }
        shown.extend(s.finish(&r));
        prop_assert!(!shown.contains(&secret), "{shown:?}");
        if !with_secret && r.redact_str(&text).is_none() {
            prop_assert_eq!(&shown, &text);
        }
        // The whole message is what was shown, and only for the text
        // that streamed.
        prop_assert_eq!(s.shown_whole(&text), Some(shown.as_str()));
        prop_assert_eq!(s.shown_whole(&format!("{text}x")), None);
        if let Some((last, _)) = text.char_indices().next_back() {
            prop_assert_eq!(s.shown_whole(&text[..last]), None);
        }
    }
}

/// The whole message is given only once all of it was shown, and for
/// the very text that streamed; a retry starts it again.
#[test]
fn the_whole_is_given_only_for_what_streamed() {
    let r = Redactor::new([KEY.to_string()]);
    let t0 = Instant::now();
    let mut s = Stream::default();
    let _ = s.push(&r, "the key is lm-studio-loc", t0);
    assert_eq!(
        s.shown_whole("the key is lm-studio-loc"),
        None,
        "still waiting"
    );
    let _ = s.push(&r, "al-key-0123456789 ok", t0 + Duration::from_millis(30));
    let _ = s.finish(&r);
    let whole = format!("the key is {KEY} ok");
    assert_eq!(s.shown_whole(&whole), Some("the key is [REDACTED] ok"));
    // Same length, other bytes (a server whose final text differs).
    assert_eq!(s.shown_whole(&whole.replace("ok", "no")), None);
    s.discard();
    assert_eq!(s.shown_whole(&whole), None);
    assert_eq!(s.shown_whole(""), Some(""));
}

/// The key spelled as hex, as a byte dump and in base64, split over two
/// deltas at every point: no whole form shows.
#[test]
fn a_key_s_encodings_split_over_deltas_are_never_shown() {
    use std::fmt::Write;
    let r = Redactor::new([KEY.to_string()]);
    let hex: String = KEY.bytes().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    });
    let dump: String = KEY.bytes().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:03o} ");
        s
    });
    for form in [hex.as_str(), dump.trim_end()] {
        let text = format!("here: {form}\ndone\n");
        for cut in 1..text.len() {
            let (a, b) = text.split_at(cut);
            let (_, shown) = stream(&r, &[a, b], Duration::from_millis(20));
            assert!(!shown.contains(form), "{cut}: {shown}");
            assert!(shown.contains("[REDACTED]"), "{cut}: {shown}");
        }
    }
}

/// The forms a test secret is written in: as it is, hex, an octal dump
/// over lines of 16, base64, spaced letters, in an assignment and in JSON.
fn forms_of(secret: &str) -> Vec<String> {
    use base64::Engine as _;
    use std::fmt::Write;
    let hex = secret.bytes().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    });
    let dump = secret
        .as_bytes()
        .chunks(16)
        .enumerate()
        .fold(String::new(), |mut s, (i, row)| {
            let _ = write!(s, "{:07o}", i * 16);
            for b in row {
                let _ = write!(s, " {b:03o}");
            }
            s.push('\n');
            s
        });
    let spaced: String = secret.chars().flat_map(|c| [c, ' ']).collect();
    vec![
        secret.to_string(),
        hex,
        dump,
        base64::engine::general_purpose::STANDARD.encode(secret),
        spaced,
        format!("export API_TOKEN={secret}\n"),
        format!("{{\"password\": \"{secret}\"}}"),
        format!("-----BEGIN RSA PRIVATE KEY-----\nMIIE{secret}\n-----END RSA PRIVATE KEY-----\n"),
    ]
}

proptest! {
    #![proptest_config(crate::props::config(48))]

    /// What a stream shows is clean by the whole text's standard: the
    /// redactor run over all of it afterwards finds nothing more to hide
    /// (so the whole message can be taken as it streamed).
    #[test]
    fn what_streams_needs_no_second_pass(
        before in "[ -~\n]{0,40}",
        after in "[ -~\n]{0,40}",
        secret in "[A-Za-z0-9_-]{12,40}",
        form in 0usize..8,
        cuts in proptest::collection::vec(1usize..30, 0..60),
        gaps in proptest::collection::vec(0u64..20, 0..60),
    ) {
        let r = Redactor::new([secret.clone()]);
        let text = format!("{before} {} {after}", forms_of(&secret)[form]);
        let mut s = Stream::default();
        let mut t = Instant::now();
        let mut shown = String::new();
        let mut rest = text.as_str();
        for (i, c) in cuts.iter().enumerate() {
            if rest.is_empty() {
                break;
            }
            let at = char_start(rest, (*c).min(rest.len()));
            let at = if at == 0 { rest.len().min(rest.chars().next().map_or(0, char::len_utf8)) } else { at };
            let (a, b) = rest.split_at(at);
            t += Duration::from_millis(gaps.get(i).copied().unwrap_or(0));
            shown.extend(s.push(&r, a, t));
            rest = b;
        }
        shown.extend(s.push(&r, rest, t));
        shown.extend(s.finish(&r));
        prop_assert_eq!(r.redact_str(&shown), None, "shown: {:?}", shown);
        prop_assert_eq!(s.shown_whole(&text), Some(shown.as_str()));
    }
}

/// A key block longer than what may wait goes out before it is whole:
/// the whole message is then not taken as it streamed (it is redacted
/// again whole, for the record and the final message).
#[test]
fn a_block_longer_than_what_may_wait_is_judged_again_whole() {
    let r = Redactor::default();
    let body: String = (0..200).map(|i| format!("MIIE{:060}\n", i)).collect();
    let text =
        format!("-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\nok\n");
    assert!(text.len() > MAX_WAIT);
    // Line by line, 20 ms apart.
    let streamed = |text: &str| {
        let mut s = Stream::default();
        let t0 = Instant::now();
        for (i, line) in text.split_inclusive('\n').enumerate() {
            let at = t0 + Duration::from_millis(20) * u32::try_from(i).unwrap();
            let _ = s.push(&r, line, at);
        }
        let _ = s.finish(&r);
        s
    };
    assert_eq!(streamed(&text).shown_whole(&text), None);
    // Short enough to wait for: taken as it streamed.
    let short = "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----\nok\n";
    let s = streamed(short);
    assert_eq!(s.shown_whole(short), Some("[REDACTED]\nok\n"));
}
