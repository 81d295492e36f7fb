//! Properties of the three wires' stream decoders over arbitrary events:
//! whatever a server sends (any event name, any JSON, fields of the
//! wrong type, indexes out of range, pieces in any order), decoding never
//! panics, and what a decoder holds grows with what it was sent, never
//! beyond it.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::http::{StreamDecoder, Wire};
use super::sse::SseEvent;
use super::{ProviderKind, ProviderSettings, WireApi};

/// The words the three wires use, so arbitrary JSON often means
/// something to a decoder.
const KEYS: &[&str] = &[
    "type",
    "delta",
    "choices",
    "index",
    "content",
    "tool_calls",
    "function",
    "arguments",
    "name",
    "id",
    "text",
    "partial_json",
    "content_block",
    "message",
    "usage",
    "item",
    "item_id",
    "output_index",
    "summary_index",
    "content_index",
    "signature",
    "thinking",
    "finish_reason",
    "stop_reason",
    "error",
    "reasoning_content",
    "reasoning",
    "reasoning_details",
    "response",
    "output",
    "status",
    "refusal",
    "call_id",
    "data",
    "encrypted_content",
    "summary",
    "input",
    "extra_content",
    "input_tokens",
    "output_tokens",
    "prompt_tokens",
    "completion_tokens",
    "cache_read_input_tokens",
    "code",
];

const WORDS: &[&str] = &[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "error",
    "ping",
    "text",
    "text_delta",
    "tool_use",
    "input_json_delta",
    "thinking",
    "thinking_delta",
    "signature_delta",
    "redacted_thinking",
    "response.output_item.added",
    "response.output_item.done",
    "response.output_text.delta",
    "response.function_call_arguments.delta",
    "response.reasoning_summary_text.delta",
    "response.completed",
    "response.failed",
    "response.incomplete",
    "function_call",
    "reasoning",
    "tool_calls",
    "stop",
    "length",
    "assistant",
    "[DONE]",
    "",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (0u64..4).prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        proptest::sample::select(WORDS).prop_map(|w| json!(w)),
        "[ -~é😀\\n]{0,12}".prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((proptest::sample::select(KEYS), inner), 0..6).prop_map(
                |pairs| {
                    Value::Object(
                        pairs
                            .into_iter()
                            .map(|(k, v)| (k.to_string(), v))
                            .collect::<Map<String, Value>>(),
                    )
                }
            ),
        ]
    })
}

fn event() -> impl Strategy<Value = SseEvent> {
    (
        proptest::sample::select(WORDS),
        prop_oneof![
            value().prop_map(|v| v.to_string()),
            "[ -~]{0,20}",
            Just("[DONE]".to_string()),
        ],
    )
        .prop_map(|(event, data)| SseEvent {
            event: event.to_string(),
            data,
        })
}

fn decoders() -> Vec<(&'static str, Box<dyn StreamDecoder>)> {
    let openai = ProviderSettings::new(ProviderKind::OpenAi, "http://127.0.0.1:9/v1");
    let mut responses = openai.clone();
    responses.wire = WireApi::Responses;
    let anthropic = ProviderSettings::new(ProviderKind::Anthropic, "http://127.0.0.1:9");
    let mut out: Vec<(&'static str, Box<dyn StreamDecoder>)> = Vec::new();
    if let Ok(w) = super::openai::OpenAi::new(openai) {
        out.push(("chat", w.decoder()));
    }
    if let Ok(w) = super::responses::Responses::new(responses) {
        out.push(("responses", w.decoder()));
    }
    if let Ok(w) = super::anthropic::Anthropic::new(anthropic) {
        out.push(("anthropic", w.decoder()));
    }
    out
}

proptest! {
    #![proptest_config(crate::props::config(256))]

    #[test]
    fn any_events_decode_without_panic_and_hold_no_more_than_they_were_sent(
        events in proptest::collection::vec(event(), 0..24),
        saw_end in any::<bool>(),
    ) {
        let decoders = decoders();
        prop_assert_eq!(decoders.len(), 3);
        let sent: usize = events.iter().map(|e| e.data.len() + e.event.len()).sum();
        for (wire, mut decoder) in decoders {
            for ev in &events {
                if matches!(decoder.event(ev, &mut super::NoopObserver), Ok(true) | Err(_)) {
                    break;
                }
                let held = decoder.held();
                let total = held.text + held.reasoning + held.arguments;
                // Linear in what was sent (a call counts for its slot too).
                prop_assert!(total <= 32 * sent + 64, "{}: holds {} of {} sent", wire, total, sent);
            }
            let _ = decoder.finish(saw_end);
        }
    }
}
