//! Loops broken: the same call (tool and arguments, whatever the order of
//! their keys or their spacing) made again and again in a turn, or the
//! same failure got again and again in a row, pauses the turn before it
//! goes on (`[limits] repeat_calls` times; a subagent is held to it too).

use std::collections::HashMap;

use serde_json::Value;

use crate::provider::{ToolCall, ToolOutput};

/// A call repeated, or a failure got again: what the person is shown.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Repeated {
    pub(crate) tool: String,
    pub(crate) arguments: Value,
    pub(crate) count: u32,
    pub(crate) failing: bool,
}

/// One turn's (or one subagent's) calls, counted.
#[derive(Debug, Default)]
pub(crate) struct Repeats {
    /// How many times each call came.
    calls: HashMap<String, u32>,
    /// The last failure (its tool and what it said, whatever the
    /// arguments) and how many times in a row it came.
    failing: Option<(String, u32)>,
}

/// A call as one key: its tool, and its arguments with their keys sorted
/// and no spacing (arguments that are not JSON, as they came).
fn key(call: &ToolCall) -> String {
    let args = serde_json::from_str::<Value>(&call.arguments)
        .map_or_else(|_| call.arguments.trim().to_string(), |v| canonical(&v));
    format!("{}\u{0}{args}", call.name)
}

fn canonical(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

fn shown(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()))
}

impl Repeats {
    /// The calls of a response, about to run: the first that would come
    /// the `limit`th time, if one would (nothing is counted then: a yes
    /// lets them through with [`Self::let_through`]). Otherwise they
    /// are counted.
    pub(crate) fn before(&mut self, calls: &[ToolCall], limit: u32) -> Option<Repeated> {
        let mut seen: HashMap<String, u32> = HashMap::new();
        for call in calls {
            let k = key(call);
            let n = seen.entry(k.clone()).or_insert(0);
            *n += 1;
            let count = self.calls.get(&k).copied().unwrap_or(0) + *n;
            if count >= limit {
                return Some(Repeated {
                    tool: call.name.clone(),
                    arguments: shown(call),
                    count,
                    failing: false,
                });
            }
        }
        self.let_through(calls);
        None
    }

    /// The person let the calls go on: they start counting again.
    pub(crate) fn let_through(&mut self, calls: &[ToolCall]) {
        for call in calls {
            let k = key(call);
            let n = self.calls.entry(k).or_insert(0);
            *n = n.saturating_add(1);
        }
    }

    /// A yes to a repeated call: its count starts over.
    pub(crate) fn forgive(&mut self, calls: &[ToolCall]) {
        for call in calls {
            self.calls.remove(&key(call));
        }
        self.failing = None;
    }

    /// The results of a round: the same failure (the same tool, the same
    /// error, whatever it was called with) the `limit`th time in a row,
    /// if it came.
    pub(crate) fn after(
        &mut self,
        calls: &[ToolCall],
        outputs: &[ToolOutput],
        limit: u32,
    ) -> Option<Repeated> {
        for out in outputs {
            let Some(call) = calls.iter().find(|c| c.id == out.call_id) else {
                continue;
            };
            if !out.is_error {
                self.failing = None;
                continue;
            }
            let k = format!("{}\u{0}{}", call.name, out.content);
            let n = match &self.failing {
                Some((last, n)) if *last == k => n + 1,
                _ => 1,
            };
            self.failing = Some((k, n));
            if n >= limit {
                return Some(Repeated {
                    tool: call.name.clone(),
                    arguments: shown(call),
                    count: n,
                    failing: true,
                });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        }
    }

    #[test]
    fn the_same_call_is_held_the_nth_time_whatever_its_spelling() {
        let mut r = Repeats::default();
        let spellings = [
            r#"{"path":"a","limit":5}"#,
            r#"{ "limit": 5, "path": "a" }"#,
            r#"{"path":"a","limit":5}"#,
            "{\n  \"limit\": 5,\n  \"path\": \"a\"\n}",
        ];
        for (i, s) in spellings.iter().enumerate() {
            assert_eq!(r.before(&[call(&i.to_string(), "read_file", s)], 5), None);
        }
        let held = r
            .before(&[call("5", "read_file", r#"{"limit":5,"path":"a"}"#)], 5)
            .expect("the fifth is held");
        assert_eq!(held.count, 5);
        assert_eq!(held.arguments["path"], "a");
        // Another file, another call.
        assert_eq!(
            r.before(&[call("6", "read_file", r#"{"path":"b"}"#)], 5),
            None
        );
        // A yes lets it through, and the count starts over.
        let five = [call("5", "read_file", r#"{"limit":5,"path":"a"}"#)];
        r.forgive(&five);
        r.let_through(&five);
        assert_eq!(r.before(&five, 5), None);
    }

    #[test]
    fn the_same_call_twice_in_one_response_counts_twice() {
        let mut r = Repeats::default();
        let calls: Vec<ToolCall> = (0..3).map(|i| call(&i.to_string(), "glob", "{}")).collect();
        assert_eq!(r.before(&calls, 3).map(|h| h.count), Some(3));
    }

    #[test]
    fn the_same_failure_in_a_row_is_held_and_a_success_breaks_the_row() {
        let mut r = Repeats::default();
        let c = [call("1", "exec_shell", r#"{"command":"make"}"#)];
        // Called otherwise, failing the same way: the same failure.
        let other = [call("1", "exec_shell", r#"{"command":"make all"}"#)];
        let failed = |id: &str| ToolOutput {
            call_id: id.into(),
            content: r#"{"error":"no such file"}"#.into(),
            is_error: true,
        };
        assert_eq!(r.after(&c, &[failed("1")], 3), None);
        assert_eq!(r.after(&c, &[failed("1")], 3), None);
        let ok = ToolOutput {
            is_error: false,
            ..failed("1")
        };
        assert_eq!(r.after(&c, &[ok], 3), None);
        assert_eq!(r.after(&c, &[failed("1")], 3), None);
        assert_eq!(r.after(&other, &[failed("1")], 3), None);
        let held = r.after(&c, &[failed("1")], 3).expect("three in a row");
        assert!(held.failing && held.count == 3);
    }

    proptest! {
        /// Whatever the arguments (not JSON, empty, non-ASCII, huge), the
        /// count never panics, a call is never held before the limit, and
        /// the limit-th identical call always is.
        #[test]
        fn any_arguments_are_counted(args in ".{0,200}", name in "[a-z_]{1,12}", limit in 2u32..8) {
            let mut r = Repeats::default();
            for i in 1..limit {
                prop_assert!(r.before(&[call(&i.to_string(), &name, &args)], limit).is_none());
            }
            let held = r.before(&[call("x", &name, &args)], limit);
            prop_assert_eq!(held.map(|h| h.count), Some(limit));
        }
    }
}
