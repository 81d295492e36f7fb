//! The redactor's tests: the forms a key is hidden in, the attacks of
//! each round, and properties over arbitrary secrets and texts.

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

/// A secret learned after a matcher was built (a refreshed login's token)
/// is hidden by that matcher too, in every form, and in a stream.
#[test]
fn a_secret_learned_later_is_hidden_by_matchers_built_before() {
    let before = Redactor::new(Vec::new());
    let late = "tok-late-5f2c9a7e31d04b8a";
    assert_eq!(before.redact_str(&format!("a {late} b")), None);
    learn([late.to_string(), String::new()]);
    let out = before.redact_str(&format!("a {late} b")).unwrap();
    assert_eq!(out, format!("a {REDACTED} b"));
    let spaced: String = late.chars().flat_map(|c| [c, ' ']).collect();
    assert!(
        !before
            .redact_str(&spaced)
            .unwrap_or(spaced.clone())
            .contains("5f2c9a7e")
    );
    assert!(before.hold() >= late.len(), "a stream holds back its start");
    // Learned twice, or learned empty, changes nothing.
    learn([late.to_string()]);
    assert!(before.redact_str("nothing here").is_none());
    // A matcher of file contents (no shapes) is not widened.
    assert!(Redactor::for_content(&[]).redact_str(late).is_none());
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
        longest_run < 2 * forms::BYTE_PIECE * 2,
        "too much of the key is left in hex: {out}"
    );
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("x{long}\n"));
    let wrapped: Vec<&str> = b64
        .as_bytes()
        .chunks(76)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let out = r.redact_str(&wrapped.join("\n")).unwrap();
    // Hidden over the line breaks (put back together), nothing of it
    // left worth a piece.
    assert!(out.contains(REDACTED), "{out}");
    let left = out.replace(REDACTED, "\n");
    assert!(left.lines().all(|l| l.len() < 16), "{out}");
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

/// The start-up crash: every secret of 8 to 14 bytes made an empty
/// pattern (the hex of 8-byte words of a secret too short to fill one),
/// and an empty match panicked the redactor on any text.
#[test]
fn short_secrets_start_and_are_hidden() {
    for key in [
        "lm-studio",
        "sk-local",
        "postgres",
        "changeme",
        "abc123def456",
        "abcdefghijklm",
        "ollama-key",
        "пароль12",
        "🔑🔑",
    ] {
        let r = Redactor::new([key.to_string()]);
        for text in ["", "a", "plain text with nothing", "x=1\n", "🔑", key] {
            let out = r.redact_str(text).unwrap_or_else(|| text.to_string());
            assert!(!out.contains(key), "{key:?} in {text:?}: {out:?}");
        }
        let out = r.redact_str(&format!("DB_PASSWORD={key}\n")).unwrap();
        assert!(!out.contains(key), "{key:?}: {out:?}");
    }
}

mod properties {
    use base64::Engine;
    use proptest::prelude::*;

    use super::super::forms::skeleton;
    use super::*;

    /// Secrets as people have them: short and long, printable ASCII,
    /// any Unicode, and one character over and over.
    fn secret() -> impl Strategy<Value = String> {
        prop_oneof![
            "[ -~]{0,64}",
            "[a-zA-Z0-9_-]{8,40}",
            proptest::collection::vec(any::<char>(), 0..50).prop_map(String::from_iter),
            (any::<char>(), 1usize..40).prop_map(|(c, n)| c.to_string().repeat(n)),
            "[a-z]{2,8}(-[a-z0-9]{2,8}){0,3}",
        ]
        .prop_filter("at most 200 bytes", |s| s.len() <= 200)
    }

    /// Text around a secret: anything, including what looks like one.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[ -~\n]{0,80}",
            "[a-f0-9 ]{0,40}",
            Just(REDACTED.to_string()),
        ]
    }

    /// The characters of `encoded` (of `lead` bytes, then the secret, then
    /// more) that the secret's bytes alone decide, `bits` bits each.
    fn decided(encoded: &str, bits: usize, lead: usize, len: usize) -> &str {
        let first = (8 * lead).div_ceil(bits);
        let end = (8 * (lead + len)) / bits;
        encoded.get(first..end.min(encoded.len())).unwrap_or("")
    }

    /// The forms of `secret` the redactor promises to hide, each as the
    /// text shown and the part of it that must not be left.
    fn shown_forms(secret: &str, lead: &[u8], tail: &[u8]) -> Vec<(String, String)> {
        let mut forms = vec![
            (secret.to_string(), secret.to_string()),
            (
                secret.chars().rev().collect(),
                secret.chars().rev().collect(),
            ),
        ];
        let letters = skeleton(secret).0;
        if letters.len() >= forms::MIN_FORM {
            let spaced: String = secret.chars().flat_map(|c| [c, ' ']).collect();
            let folded: String = secret.chars().flat_map(|c| [c, '\n']).collect();
            let upper = secret.to_ascii_uppercase();
            for shown in [spaced, folded, upper] {
                forms.push((shown.clone(), shown));
            }
        }
        let mut bytes = lead.to_vec();
        bytes.extend_from_slice(secret.as_bytes());
        bytes.extend_from_slice(tail);
        let n = secret.len();
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let keep = |s: &str, bits| decided(s, bits, lead.len(), n).to_string();
        forms.push((hex.clone(), keep(&hex, 4)));
        forms.push((hex.to_ascii_uppercase(), keep(&hex.to_ascii_uppercase(), 4)));
        for engine in [
            &base64::engine::general_purpose::STANDARD,
            &base64::engine::general_purpose::URL_SAFE,
        ] {
            let b64 = engine.encode(&bytes);
            forms.push((b64.clone(), keep(&b64, 6)));
        }
        let b32 = data_encoding::BASE32.encode(&bytes);
        forms.push((b32.clone(), keep(&b32, 5)));
        let utf16: Vec<u8> = secret.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(&utf16);
        forms.push((b64.clone(), decided(&b64, 6, 0, utf16.len()).to_string()));
        forms
    }

    proptest! {
        #![proptest_config(crate::props::config(96))]

        /// Any secrets and any text: no panic, and redacting again
        /// changes nothing.
        #[test]
        fn any_secret_any_text_never_panics_and_is_idempotent(
            secrets in proptest::collection::vec(secret(), 0..4),
            text in text(),
            inside in any::<bool>(),
        ) {
            let r = Redactor::new(secrets.clone());
            let text = if inside {
                // The secrets themselves, in pieces and whole, among the
                // text.
                let mut t = text;
                for s in &secrets {
                    let half: String = s.chars().take(s.chars().count() / 2).collect();
                    t = format!("{half}|{t}|{s}|{s}{s}");
                }
                t
            } else {
                text
            };
            if let Some(out) = r.redact_str(&text) {
                prop_assert_eq!(r.redact_str(&out), None, "again: {:?}", out);
            }
        }

        /// A secret of 8 bytes or more is never left in any form the
        /// redactor knows, wherever it stands and whatever surrounds it.
        #[test]
        fn a_secret_is_never_left_in_a_form_it_knows(
            secret in secret().prop_filter("8 bytes or more", |s| s.len() >= 8),
            before in text(),
            after in text(),
            lead in proptest::collection::vec(any::<u8>(), 0..5),
            tail in proptest::collection::vec(any::<u8>(), 0..5),
        ) {
            let r = Redactor::new([secret.clone()]);
            for (shown, kept) in shown_forms(&secret, &lead, &tail) {
                prop_assume!(!REDACTED.contains(&kept));
                let text = format!("{before}{shown}{after}");
                let out = r.redact_str(&text).unwrap_or_else(|| text.clone());
                prop_assert!(
                    kept.is_empty() || !out.contains(&kept),
                    "{:?} shown as {:?}: {:?}", secret, shown, out
                );
            }
        }
    }
}

/// A blob of a secret (a `.env` value of 250,000 characters) is looked
/// for as it is and by its letters, without stalling the start; its
/// pieces are still hidden wherever they show.
#[test]
fn a_long_secret_is_hidden_as_it_is_and_by_its_letters() {
    let blob: String = (0u32..250_000)
        .map(|i| char::from_u32(48 + (i.wrapping_mul(2_654_435_761) >> 7) % 75).unwrap_or('x'))
        .collect();
    let r = Redactor::new([blob.clone()]);
    let piece = &blob[1000..1040];
    let out = r.redact_str(&format!("x {piece} y")).unwrap();
    assert!(!out.contains(piece), "{out}");
    let spaced: String = piece.chars().flat_map(|c| [c, ' ']).collect();
    let out = r.redact_str(&spaced).unwrap_or_default();
    assert!(out.contains(REDACTED), "{out}");
}

/// The fourth round's dumps: a key that runs over two lines of a dump
/// (`xxd`, `hexdump -C`, `od -c`), over lines narrower than a piece
/// (`xxd -c 8`, `fold -w8 | nl`), folded base64, little-endian words out
/// of line, UTF-16 as `od -c` shows it, a binary run, partial escapes,
/// and a key whose letters are not all ASCII, dumped or upper-cased: the
/// real programs' output, with the key at every offset.
#[test]
fn keys_across_dump_lines_and_narrow_lines_are_redacted() {
    use std::io::Write;
    let run = |cmd: &str, input: &[u8]| -> String {
        let mut child = std::process::Command::new("bash")
            .args(["-c", cmd])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        String::from_utf8_lossy(&child.wait_with_output().unwrap().stdout).into_owned()
    };
    let keys = [
        "lm-studio",
        "Zq8-k_Lp3!x",
        "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678Stu901Vwx234Yz567890abcd",
        "pässwörd-ключ-秘密",
        "p4$$-w0d!%",
        "pässwörd-ü1",
    ];
    let commands = [
        "xxd",
        "xxd -c 8",
        "xxd -c 4 -g 1",
        "xxd -e",
        "hexdump -C",
        "od -c",
        "od -x",
        "od -An -tx8",
        "fold -w8 | nl",
        "fold -w3",
        "base64 -w0 | fold -w4",
        "iconv -t UTF-16LE | od -c",
        "perl -e 'local $/; print unpack(\"B*\", <STDIN>)'",
        "python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.stdin.read()))'",
        "python3 -c 'import sys; print(repr(sys.stdin.read().encode(\"utf-16-le\")))'",
        "python3 -c 'import sys,json; print(json.dumps(sys.stdin.read()))'",
        "od -b",
        "tr a-z A-Z",
        // The fifth round's.
        "xxd -c 5 -g 2",
        "xxd -c 3",
        "xxd -u -c 3 -g 3",
        "od -An -td8",
        "od -An -tu8",
        "od -td1",
        // (`-v`: without it hexdump writes `*` for a repeated byte, and
        // the key is not all there to find.)
        "hexdump -v -e '1/1 \"0%o \"'",
        "base64 | fold -w3 | paste -sd:",
        "fold -w1 | paste -sd,",
        "python3 -c 'import sys; print(list(sys.stdin.read()))'",
        "cat -A",
        "sed -n l",
        "python3 -c 'import sys; print(sys.stdin.read().encode(\"unicode_escape\"))'",
        "python3 -c 'import sys; print(ascii(sys.stdin.read()))'",
    ];
    for key in keys {
        let r = Redactor::new([key.to_string()]);
        for cmd in commands {
            // Folding by bytes cuts a character that is not ASCII in two:
            // what is shown of the halves is no form of the key.
            if !key.is_ascii() && cmd.starts_with("fold") {
                continue;
            }
            for lead in [0, 3] {
                let input = format!("{}{key}\nmore text after it\n", "a".repeat(lead));
                let out = run(cmd, input.as_bytes());
                let red = r.redact_str(&out).unwrap_or_else(|| out.clone());
                assert!(
                    red.contains(REDACTED),
                    "{key:?} | {cmd} (lead {lead}):\n{out}"
                );
                // No line the program makes of the key alone is left whole
                // (a line of escapes is four characters a byte: one that
                // spells fewer than 8 bytes is a leftover, not the key).
                let plain = run(cmd, key.as_bytes());
                let worth = |l: &&str| {
                    let l = l.trim();
                    let escaped = l.matches('\\').count() * 4 >= l.len() / 2;
                    l.len() >= if escaped { 32 } else { 12 }
                };
                for line in plain.lines().filter(worth) {
                    let core = line.trim();
                    assert!(
                        !red.contains(core),
                        "{key:?} | {cmd} (lead {lead}): {core:?} left in\n{red}"
                    );
                }
            }
        }
    }
}

/// A long key read a few characters at a time (`cut -c1-11`, `cut
/// -c9-19`, …): every run of 8 of its characters is hidden, so no run
/// long enough to matter comes out.
#[test]
fn a_key_cut_into_short_runs_is_hidden_run_by_run() {
    let key = "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678Stu901Vwx234Yz567890abcd";
    let r = Redactor::new([key.to_string()]);
    let chars: Vec<char> = key.chars().collect();
    for start in 0..chars.len().saturating_sub(8) {
        let run: String = chars[start..(start + 9).min(chars.len())].iter().collect();
        let out = r.redact_str(&format!("part: {run}\n")).unwrap_or_default();
        assert!(out.contains(REDACTED), "{run}: {out}");
    }
}
