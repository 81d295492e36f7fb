//! A server's elicitation request (`elicitation/create`), answered by the
//! person through the question panel, as the model's questions are (armed
//! like every question, one at a time): a form is asked field by field
//! (its choices offered, a yes/no for a boolean, free text otherwise, each
//! answer checked against its type); a URL is shown whole, never fetched,
//! for the person to open. Headless, or outside a call, no one is asked:
//! the request is declined, and the turn's `asked` says so.

use std::sync::Arc;

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::tools::{Asked, Together};

/// Who can answer while a call runs: the call's conversation.
#[derive(Clone)]
pub(super) struct Asker {
    /// The server that asks.
    pub(super) server: String,
    pub(super) together: Arc<dyn Together>,
    pub(super) call_id: String,
    pub(super) cancel: CancellationToken,
}

/// How many times a field is asked again when the answer is not of its
/// type.
const RETRIES: usize = 2;
/// Past this many, a field's choices are typed, not offered in the panel.
const MAX_CHOICES: usize = 50;

/// The person's answer to `server`'s `request` (declined when no one can
/// be asked).
pub(super) async fn answer(
    asker: Option<Asker>,
    server: &str,
    request: ElicitRequestParams,
) -> ElicitResult {
    let Some(asker) = asker else {
        tracing::info!(%server, "an elicitation outside a call is declined");
        return ElicitResult::new(ElicitationAction::Decline);
    };
    match request {
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => {
            // Asked in the order the server wrote them.
            let order = requested_schema.property_order.clone().unwrap_or_default();
            let mut schema = serde_json::to_value(&requested_schema).unwrap_or_default();
            schema["x-order"] = json!(order);
            form(&asker, server, &message, &schema).await
        }
        ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
            let question = format!(
                "MCP server {server} asks you to open a page:\n{message}\n{url}\n(Lathe does not \
                 open it: copy it to your browser if you want to.)"
            );
            let choices = ["I opened it".to_string(), "decline".to_string()];
            match ask(&asker, &question, &choices).await {
                Some(Asked::Answer(a)) if a == choices[0] => {
                    ElicitResult::new(ElicitationAction::Accept)
                }
                None => ElicitResult::new(ElicitationAction::Cancel),
                Some(_) => ElicitResult::new(ElicitationAction::Decline),
            }
        }
        // A kind of request this Lathe does not know.
        _ => ElicitResult::new(ElicitationAction::Decline),
    }
}

/// Asks; `None` when the call was interrupted.
async fn ask(asker: &Asker, question: &str, choices: &[String]) -> Option<Asked> {
    if asker.cancel.is_cancelled() {
        return None;
    }
    let asked = asker
        .together
        .ask_from(
            &format!("MCP server {}", asker.server),
            &asker.call_id,
            question,
            choices,
            &asker.cancel,
        )
        .await;
    (!asker.cancel.is_cancelled()).then_some(asked)
}

/// One field of a form.
struct Field<'a> {
    name: &'a str,
    spec: &'a Value,
    required: bool,
}

impl Field<'_> {
    fn kind(&self) -> &str {
        self.spec
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("string")
    }

    /// The values it may take, when it has a list (an array's: those of
    /// its items).
    fn choices(&self) -> Vec<String> {
        if self.kind() == "boolean" {
            return vec!["yes".into(), "no".into()];
        }
        let spec = if self.kind() == "array" {
            self.spec.get("items").unwrap_or(&Value::Null)
        } else {
            self.spec
        };
        let listed: Vec<String> = spec
            .get("enum")
            .and_then(Value::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if !listed.is_empty() {
            return listed;
        }
        // `oneOf: [{const, title}]`, the titled form.
        spec.get("oneOf")
            .or_else(|| spec.get("anyOf"))
            .and_then(Value::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(|c| c.get("const").and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// How the person is asked for it.
    fn question(&self, server: &str, message: &str) -> String {
        let title = self
            .spec
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or(self.name);
        let mut out = format!("MCP server {server} asks: {message}\n{title}");
        if let Some(d) = self.spec.get("description").and_then(Value::as_str) {
            out.push_str(&format!(" ({d})"));
        }
        let choices = self.choices();
        if self.kind() == "array" {
            out.push_str(" (several, separated by commas)");
        }
        if choices.len() > MAX_CHOICES {
            let some: Vec<&str> = choices.iter().take(10).map(String::as_str).collect();
            out.push_str(&format!(
                " (one of {} values: {} …)",
                choices.len(),
                some.join(", ")
            ));
        }
        if !self.required {
            out.push_str(" (optional: Esc leaves it out)");
        }
        out
    }

    /// The choices offered in the panel (a long list is typed, not
    /// offered).
    fn offered(&self) -> Vec<String> {
        let choices = self.choices();
        if choices.len() > MAX_CHOICES || self.kind() == "array" {
            Vec::new()
        } else {
            choices
        }
    }

    /// The answer as the field's type, or why it is not one.
    fn value(&self, answer: &str) -> Result<Value, String> {
        let answer = answer.trim();
        match self.kind() {
            "boolean" => match answer.to_lowercase().as_str() {
                "yes" | "y" | "true" => Ok(Value::Bool(true)),
                "no" | "n" | "false" => Ok(Value::Bool(false)),
                _ => Err("answer yes or no".into()),
            },
            "integer" => answer
                .parse::<i64>()
                .map(|n| json!(n))
                .map_err(|_| "a whole number, please".into())
                .and_then(|v| self.within(v)),
            "number" => answer
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .map(|n| json!(n))
                .ok_or_else(|| "a number, please".to_string())
                .and_then(|v| self.within(v)),
            "array" => {
                let choices = self.choices();
                let picked: Vec<String> = answer
                    .split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .collect();
                if let Some(bad) = picked
                    .iter()
                    .find(|p| !choices.is_empty() && !choices.contains(p))
                {
                    return Err(format!("{bad} is not one of the choices"));
                }
                Ok(json!(picked))
            }
            _ => {
                let choices = self.choices();
                if !choices.is_empty() && !choices.iter().any(|c| c == answer) {
                    let shown: Vec<&str> = choices.iter().take(10).map(String::as_str).collect();
                    return Err(format!("one of {}", shown.join(", ")));
                }
                self.fits(answer)?;
                Ok(Value::String(answer.to_string()))
            }
        }
    }

    /// Whether a text answer keeps to the field's length and format.
    fn fits(&self, answer: &str) -> Result<(), String> {
        let n = answer.chars().count() as u64;
        let bound = |k: &str| self.spec.get(k).and_then(Value::as_u64);
        if let Some(lo) = bound("minLength")
            && n < lo
        {
            return Err(format!("at least {lo} characters"));
        }
        if let Some(hi) = bound("maxLength")
            && n > hi
        {
            return Err(format!("at most {hi} characters"));
        }
        let ok = match self.spec.get("format").and_then(Value::as_str) {
            Some("email") => answer
                .split_once('@')
                .is_some_and(|(a, d)| !a.is_empty() && d.contains('.') && !answer.contains(' ')),
            Some("uri") => reqwest::Url::parse(answer).is_ok(),
            Some("date") => {
                let b = answer.as_bytes();
                b.len() == 10
                    && b[4] == b'-'
                    && b[7] == b'-'
                    && answer.chars().filter(char::is_ascii_digit).count() == 8
            }
            _ => true,
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "a {}, please",
                self.spec
                    .get("format")
                    .and_then(Value::as_str)
                    .unwrap_or("value")
            ))
        }
    }

    /// `v` if it is within the field's `minimum` and `maximum`.
    fn within(&self, v: Value) -> Result<Value, String> {
        let n = v.as_f64().unwrap_or_default();
        let bound = |k: &str| self.spec.get(k).and_then(Value::as_f64);
        match (bound("minimum"), bound("maximum")) {
            (Some(lo), _) if n < lo => Err(format!("at least {lo}")),
            (_, Some(hi)) if n > hi => Err(format!("at most {hi}")),
            _ => Ok(v),
        }
    }
}

/// The fields of a form schema, in the order its `x-order` names (the
/// server's), the rest after them by name.
fn fields(schema: &Value) -> Vec<Field<'_>> {
    let names = |k: &str| -> Vec<&str> {
        schema
            .get(k)
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let required = names("required");
    let order = names("x-order");
    let mut out: Vec<Field<'_>> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, spec)| Field {
                    name,
                    spec,
                    required: required.contains(&name.as_str()),
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort_by_key(|f| {
        order
            .iter()
            .position(|o| *o == f.name)
            .unwrap_or(usize::MAX)
    });
    out
}

async fn form(asker: &Asker, server: &str, message: &str, schema: &Value) -> ElicitResult {
    let mut content = Map::new();
    for field in fields(schema) {
        let choices = field.offered();
        let mut question = field.question(server, message);
        let mut tries = 0;
        let value = loop {
            match ask(asker, &question, &choices).await {
                None => return ElicitResult::new(ElicitationAction::Cancel),
                Some(Asked::NoOne) => {
                    tracing::info!(%server, "an elicitation is declined: no one answers headless");
                    return ElicitResult::new(ElicitationAction::Decline);
                }
                Some(Asked::Declined) if field.required => {
                    return ElicitResult::new(ElicitationAction::Decline);
                }
                Some(Asked::Declined) => break None,
                Some(Asked::Answer(a)) => match field.value(&a) {
                    Ok(v) => break Some(v),
                    Err(why) if tries < RETRIES => {
                        tries += 1;
                        question = format!("{} — {why}", field.question(server, message));
                    }
                    Err(_) => return ElicitResult::new(ElicitationAction::Decline),
                },
            }
        };
        if let Some(v) = value {
            content.insert(field.name.to_string(), v);
        }
    }
    ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use async_trait::async_trait;

    use super::*;

    /// A person who answers from a list, and remembers what was asked.
    #[derive(Debug)]
    struct Person {
        answers: Mutex<Vec<Asked>>,
        asked: Mutex<Vec<(String, Vec<String>)>>,
    }

    #[async_trait]
    impl Together for Person {
        async fn ask(&self, _: &str, q: &str, choices: &[String], _: &CancellationToken) -> Asked {
            self.asked
                .lock()
                .unwrap()
                .push((q.into(), choices.to_vec()));
            let mut a = self.answers.lock().unwrap();
            if a.is_empty() {
                Asked::Declined
            } else {
                a.remove(0)
            }
        }
        async fn task(
            &self,
            _: &str,
            _: crate::tools::spec::TaskJob,
            _: &CancellationToken,
        ) -> Result<Value, crate::tools::ToolError> {
            unreachable!()
        }
        fn plan(&self, _: &str, _: Vec<crate::protocol::PlanStep>, _: Option<String>) {}
    }

    fn asker(answers: Vec<Asked>) -> (Asker, Arc<Person>) {
        let person = Arc::new(Person {
            answers: Mutex::new(answers),
            asked: Mutex::new(Vec::new()),
        });
        (
            Asker {
                server: "demo".into(),
                together: person.clone(),
                call_id: "c1".into(),
                cancel: CancellationToken::new(),
            },
            person,
        )
    }

    fn feedback() -> Value {
        json!({
            "x-order": ["rating", "comments", "recommend", "theme"],
            "type": "object",
            "properties": {
                "rating": {"type": "integer", "title": "Rating", "minimum": 1, "maximum": 5},
                "comments": {"type": "string", "title": "Comments"},
                "recommend": {"type": "boolean", "title": "Would you recommend this?"},
                "theme": {"type": "string", "enum": ["light", "dark"]}
            },
            "required": ["rating", "recommend"]
        })
    }

    fn answer(a: &str) -> Asked {
        Asked::Answer(a.into())
    }

    #[tokio::test]
    async fn a_form_is_asked_field_by_field_and_answers_are_checked() {
        let (a, person) = asker(vec![
            answer("9"),
            answer("4"),
            Asked::Declined,
            answer("y"),
            answer("dark"),
        ]);
        let r = form(&a, "demo", "Your feedback", &feedback()).await;
        assert_eq!(r.action, ElicitationAction::Accept);
        assert_eq!(
            r.content.unwrap(),
            json!({"rating": 4, "recommend": true, "theme": "dark"})
        );
        let asked = person.asked.lock().unwrap();
        assert_eq!(asked.len(), 5);
        assert!(
            asked[0]
                .0
                .contains("MCP server demo asks: Your feedback\nRating")
        );
        assert!(asked[1].0.contains("at most 5"), "{}", asked[1].0);
        assert!(asked[2].0.contains("optional"));
        assert_eq!(asked[3].1, ["yes", "no"]);
        assert_eq!(asked[4].1, ["light", "dark"]);
    }

    #[test]
    fn text_keeps_to_its_bounds_and_format_and_arrays_pick_from_their_items() {
        let f = |spec: Value| Field {
            name: "n",
            spec: Box::leak(Box::new(spec)),
            required: true,
        };
        let email =
            f(json!({"type": "string", "minLength": 5, "maxLength": 20, "format": "email"}));
        assert!(email.value("ab").is_err());
        assert!(email.value("not-an-email").is_err());
        assert_eq!(email.value("a@b.co").unwrap(), json!("a@b.co"));
        assert!(email.value(&"x".repeat(30)).is_err());
        let date = f(json!({"type": "string", "format": "date"}));
        assert!(date.value("2026-11-29").is_ok() && date.value("tomorrow").is_err());
        let many = f(json!({"type": "array", "items": {"enum": ["a", "b", "c"]}}));
        assert_eq!(many.value("a, c").unwrap(), json!(["a", "c"]));
        assert!(many.value("a, z").is_err());
        assert!(many.offered().is_empty() && many.question("s", "m").contains("commas"));
        let huge: Vec<String> = (0..10_000).map(|i| format!("v{i}")).collect();
        let big = f(json!({"type": "string", "enum": huge}));
        assert!(big.offered().is_empty(), "typed, not offered");
        assert!(big.question("s", "m").contains("one of 10000 values"));
        assert!(big.value("v9999").is_ok() && big.value("v10000").is_err());
    }

    #[tokio::test]
    async fn a_required_field_left_out_declines_and_headless_declines() {
        let (a, _) = asker(vec![Asked::Declined]);
        let r = form(&a, "demo", "m", &feedback()).await;
        assert_eq!(r.action, ElicitationAction::Decline);
        let (a, _) = asker(vec![Asked::NoOne]);
        let r = form(&a, "demo", "m", &feedback()).await;
        assert_eq!(r.action, ElicitationAction::Decline);
        assert!(r.content.is_none());
        // Three wrong answers decline rather than send a wrong value.
        let (a, _) = asker(vec![answer("x"), answer("y"), answer("z")]);
        let r = form(&a, "demo", "m", &feedback()).await;
        assert_eq!(r.action, ElicitationAction::Decline);
    }

    #[tokio::test]
    async fn an_interrupted_call_cancels_and_no_call_declines() {
        let (a, _) = asker(vec![answer("4")]);
        a.cancel.cancel();
        let r = form(&a, "demo", "m", &feedback()).await;
        assert_eq!(r.action, ElicitationAction::Cancel);
        let url = ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: "Sign the form".into(),
            url: "https://example.com/x".into(),
            elicitation_id: String::new(),
        };
        assert_eq!(answer_none(url).await.action, ElicitationAction::Decline);
    }

    async fn answer_none(r: ElicitRequestParams) -> ElicitResult {
        super::answer(None, "demo", r).await
    }

    proptest::proptest! {
        /// Any schema a server sends, and any answer, is read without a
        /// panic; an accepted value is of the field's type.
        #[test]
        fn any_schema_and_answer_is_read_without_a_panic(schema in proptest_json(), reply in "\\PC{0,20}") {
            for f in fields(&schema) {
                let _ = f.choices();
                let _ = f.question("s", "m");
                if let Ok(v) = f.value(&reply) {
                    match f.kind() {
                        "boolean" => proptest::prop_assert!(v.is_boolean()),
                        "integer" | "number" => proptest::prop_assert!(v.is_number()),
                        "array" => proptest::prop_assert!(v.is_array()),
                        _ => proptest::prop_assert!(v.is_string()),
                    }
                }
            }
        }
    }

    fn proptest_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            "\\PC{0,8}".prop_map(Value::String),
            Just(json!("integer")),
            Just(json!("boolean")),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(
                    prop_oneof![
                        Just("type".to_string()),
                        Just("properties".to_string()),
                        Just("required".to_string()),
                        Just("enum".to_string()),
                        Just("minimum".to_string()),
                        "[a-z]{1,4}"
                    ],
                    inner,
                    0..4
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }
}
