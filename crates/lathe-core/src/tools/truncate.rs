//! Type-aware truncation of tool results to what the model may see
//! (64 KiB of serialized JSON by default).
//!
//! Strings are cut and get a suffix that says how much was kept; arrays
//! keep their leading items plus a sentinel object; objects are wrapped in a
//! `_truncated_json` envelope holding the start of their serialized text.
//! Sizes are measured as serialized JSON, escapes included, and a cut never
//! splits a UTF-8 character. Cost is linear in the size of the value.

use serde_json::{Map, Value, json};

/// The most a tool result may take in the conversation (seed 000).
pub const MAX_TOOL_RESULT_BYTES: usize = 65_536;

/// Values smaller than this are never worth keeping as a cut first item.
const MIN_USEFUL: usize = 64;

/// A value after truncation.
#[derive(Debug, Clone, PartialEq)]
pub struct Truncated {
    pub value: Value,
    /// Serialized size before truncation.
    pub original_bytes: usize,
    pub truncated: bool,
}

/// Serialized JSON size of `v`, without allocating the text.
pub fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Writing to a counter cannot fail, and a `Value` always serializes.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// Truncates `value` so that it serializes to at most `limit` bytes.
#[cfg(any(test, feature = "internals"))]
pub fn truncate(value: Value, limit: usize) -> Truncated {
    let original_bytes = json_len(&value);
    truncate_sized(value, original_bytes, limit)
}

/// Like [`truncate`], for a value whose serialized size is already known.
pub fn truncate_sized(value: Value, original_bytes: usize, limit: usize) -> Truncated {
    if original_bytes <= limit {
        return Truncated {
            value,
            original_bytes,
            truncated: false,
        };
    }
    let value = shrink(value, original_bytes, limit);
    Truncated {
        value,
        original_bytes,
        truncated: true,
    }
}

fn shrink(value: Value, len: usize, limit: usize) -> Value {
    match value {
        Value::String(s) => Value::String(cut_string(&s, limit)),
        Value::Array(items) => shrink_array(items, limit),
        Value::Object(map) => wrap_object(&map, len, limit),
        // Numbers, booleans and null are far below any sensible limit.
        other => other,
    }
}

/// Bytes `s` takes inside a serialized JSON string, quotes excluded.
pub fn escaped_str_len(s: &str) -> usize {
    s.chars().map(escaped_len).sum()
}

/// Bytes `ch` takes inside a serialized JSON string.
fn escaped_len(ch: char) -> usize {
    match ch {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

fn suffix(total: usize, shown: usize) -> String {
    format!("\n…[truncated: showing the first {shown} of {total} bytes]")
}

/// Cuts `s` so that the result, suffix included, serializes (with quotes)
/// to at most `limit` bytes.
fn cut_string(s: &str, limit: usize) -> String {
    let total = s.len();
    let reserve = suffix(total, total).chars().map(escaped_len).sum::<usize>() + 2;
    let budget = limit.saturating_sub(reserve);
    let mut used = 0;
    let mut end = 0;
    for (i, ch) in s.char_indices() {
        let n = escaped_len(ch);
        if used + n > budget {
            break;
        }
        used += n;
        end = i + ch.len_utf8();
    }
    let mut out = String::with_capacity(end + 64);
    out.push_str(&s[..end]);
    out.push_str(&suffix(total, end));
    out
}

fn sentinel(omitted: usize, total: usize) -> Value {
    json!({"_truncated": true, "omitted_items": omitted, "total_items": total})
}

fn shrink_array(items: Vec<Value>, limit: usize) -> Value {
    let total = items.len();
    // Room for the brackets and the sentinel (sized for the worst case).
    let reserve = 2 + 1 + json_len(&sentinel(total, total));
    let budget = limit.saturating_sub(reserve);
    let mut kept = Vec::new();
    let mut used = 0;
    let mut rest = items.into_iter();
    for item in rest.by_ref() {
        let n = json_len(&item) + usize::from(!kept.is_empty());
        if used + n > budget {
            if kept.is_empty() && budget >= MIN_USEFUL {
                kept.push(shrink(item, n, budget));
            }
            break;
        }
        used += n;
        kept.push(item);
    }
    let omitted = total - kept.len();
    kept.push(sentinel(omitted, total));
    Value::Array(kept)
}

fn wrap_object(map: &Map<String, Value>, len: usize, limit: usize) -> Value {
    let text = serde_json::to_string(map).unwrap_or_default();
    let overhead = json_len(&json!({"_truncated_json": "", "original_bytes": len}));
    let prefix = cut_string(&text, limit.saturating_sub(overhead));
    json!({"_truncated_json": prefix, "original_bytes": len})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_pass_untouched() {
        let v = json!({"a": "b", "n": [1, 2, 3]});
        let t = truncate(v.clone(), MAX_TOOL_RESULT_BYTES);
        assert!(!t.truncated);
        assert_eq!(t.value, v);
        assert_eq!(t.original_bytes, v.to_string().len());
    }

    #[test]
    fn strings_get_a_suffix_and_fit() {
        let s = "x".repeat(300_000);
        let t = truncate(Value::String(s), 1000);
        assert!(t.truncated);
        assert!(json_len(&t.value) <= 1000);
        let out = t.value.as_str().unwrap();
        assert!(out.starts_with("xxxx"));
        assert!(out.contains("truncated: showing the first"), "{out}");
        assert!(out.contains("of 300000 bytes"), "{out}");
    }

    #[test]
    fn cuts_never_split_a_utf8_character() {
        for limit in 100..140 {
            let s = "é😀漢".repeat(200);
            let t = truncate(Value::String(s), limit);
            assert!(json_len(&t.value) <= limit, "limit {limit}");
            // A String is always valid UTF-8; check the kept prefix is whole chars.
            let kept = t.value.as_str().unwrap().split('\n').next().unwrap();
            assert!(kept.chars().all(|c| "é😀漢".contains(c)), "{kept}");
        }
    }

    #[test]
    fn escapes_count_toward_the_limit() {
        let s = "\u{1}\"".repeat(5000);
        let t = truncate(Value::String(s), 500);
        assert!(json_len(&t.value) <= 500, "{}", json_len(&t.value));
    }

    #[test]
    fn arrays_keep_leading_items_and_a_sentinel() {
        let items: Vec<Value> = (0..10_000).map(|i| json!({"i": i})).collect();
        let t = truncate(Value::Array(items), 2000);
        assert!(t.truncated);
        let arr = t.value.as_array().unwrap();
        assert!(json_len(&t.value) <= 2000);
        assert_eq!(arr[0], json!({"i": 0}));
        assert_eq!(arr[1], json!({"i": 1}));
        let last = arr.last().unwrap();
        assert_eq!(last["_truncated"], true);
        assert_eq!(last["total_items"], 10_000);
        assert_eq!(
            last["omitted_items"].as_u64().unwrap() as usize,
            10_000 - (arr.len() - 1)
        );
    }

    #[test]
    fn an_array_whose_first_item_is_huge_keeps_a_cut_first_item() {
        let t = truncate(json!(["y".repeat(10_000), "z"]), 1000);
        let arr = t.value.as_array().unwrap();
        assert_eq!(arr.len(), 2);
        assert!(arr[0].as_str().unwrap().starts_with("yyy"));
        assert_eq!(arr[1]["omitted_items"], 1);
        assert!(json_len(&t.value) <= 1000);
    }

    #[test]
    fn objects_are_wrapped_in_a_truncated_json_envelope() {
        let v = json!({"content": "z".repeat(100_000), "path": "a.txt"});
        let t = truncate(v, MAX_TOOL_RESULT_BYTES);
        assert!(t.truncated);
        assert!(json_len(&t.value) <= MAX_TOOL_RESULT_BYTES);
        let inner = t.value["_truncated_json"].as_str().unwrap();
        assert!(inner.starts_with("{\"content\":\"zzz"), "{}", &inner[..40]);
        assert_eq!(t.value["original_bytes"], t.original_bytes);
        assert!(t.original_bytes > 100_000);
    }
}
