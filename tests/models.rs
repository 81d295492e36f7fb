//! The model side, end to end: the real `lathe` binary against the
//! scripted mock LLM on each wire (Chat Completions, Responses,
//! Anthropic Messages). Thinking models across tool rounds, what goes
//! back to the server verbatim, stop reasons, errors mid-stream, cache
//! breakpoints, prices and cost, and sessions that remember their model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mock_llm;

use lathe_test_support::run::{Run, Setup};
use mock_llm::{MockLlm, Reply, Step, signature};
use serde_json::{Value, json};

const KEY: &str = "sk-lathe-models-test-0123456789";

/// A home and a workspace (with `notes.txt`) for `lathe`'s runs.
struct Env(Setup);

impl std::ops::Deref for Env {
    type Target = Setup;
    fn deref(&self) -> &Setup {
        &self.0
    }
}

impl Env {
    fn new() -> Self {
        let env = Self(Setup::new(env!("CARGO_BIN_EXE_lathe")));
        env.file("notes.txt", "three open tasks\n");
        env
    }

    async fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.0.run(args, env, "").await
    }

    /// `lathe exec --json -a full-auto` on the mock, with `extra` flags.
    async fn exec(&self, base_url: &str, extra: &[&str], prompt: &str) -> Run {
        let mut args = vec![
            "exec",
            "--json",
            "-a",
            "full-auto",
            "--checkpoints",
            "off",
            "--base-url",
            base_url,
        ];
        args.extend_from_slice(extra);
        args.push(prompt);
        self.run(
            &args,
            &[("OPENAI_API_KEY", KEY), ("ANTHROPIC_API_KEY", KEY)],
        )
        .await
    }

    /// `lathe exec --json -a full-auto --continue` with `extra` flags: on
    /// the session's own server unless they name one.
    async fn exec_continue(&self, extra: &[&str], prompt: &str) -> Run {
        let mut args = vec![
            "exec",
            "--json",
            "-a",
            "full-auto",
            "--checkpoints",
            "off",
            "--continue",
        ];
        args.extend_from_slice(extra);
        args.push(prompt);
        self.run(
            &args,
            &[("OPENAI_API_KEY", KEY), ("ANTHROPIC_API_KEY", KEY)],
        )
        .await
    }
}

fn read_notes(id: &str) -> Reply {
    Reply::tools().call(id, "read_file", json!({"path": "notes.txt"}))
}

#[tokio::test]
async fn responses_wire_carries_encrypted_reasoning_between_rounds() {
    let env = Env::new();
    let mock = MockLlm::start(vec![
        Step::Reply(read_notes("call_1").think("I should read the notes first.")),
        Step::Reply(Reply::text("Three open tasks.").cached(6)),
    ])
    .await;
    let r = env
        .exec(
            &mock.openai_url(),
            &[
                "--wire-api",
                "responses",
                "--model",
                "gpt-5.1-codex",
                "--effort",
                "high",
            ],
            "summarize notes.txt",
        )
        .await;
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs.iter().all(|q| q.path == "/v1/responses"));
    let first = &reqs[0].body;
    let session = r.first("session_started")["session_id"].clone();
    assert_eq!(first["store"], false);
    assert_eq!(first["stream"], true);
    assert_eq!(first["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(first["prompt_cache_key"], session);
    assert_eq!(first["reasoning"]["effort"], "high");
    assert_eq!(first["reasoning"]["summary"], "auto");
    assert!(
        first["instructions"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    let tool = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read_file")
        .unwrap();
    assert_eq!(tool["type"], "function");
    assert!(tool["parameters"].is_object(), "flat, not under `function`");
    assert_eq!(first["input"][0]["role"], "user");
    // The second request sends the reasoning item back as it came (but
    // for its id: nothing is stored), then the call, then its output.
    let input = reqs[1].body["input"].as_array().unwrap().clone();
    let kinds: Vec<&str> = input
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("message"))
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output"
        ],
        "{input:?}"
    );
    assert_eq!(
        input[1]["encrypted_content"],
        format!("enc-{}", signature("I should read the notes first."))
    );
    assert!(input[1].get("id").is_none(), "{}", input[1]);
    assert_eq!(input[2]["call_id"], "call_1");
    assert_eq!(input[3]["call_id"], "call_1");
    assert!(
        input[3]["output"]
            .as_str()
            .unwrap()
            .contains("three open tasks")
    );
    // Shown as it streamed (a burst comes out together), and counted.
    assert!(r.count("reasoning_delta") >= 1);
    let done = r.first("turn_completed");
    assert_eq!(done["text"], "Three open tasks.");
    assert_eq!(done["stop_reason"], "end_turn");
    assert_eq!(done["usage"]["reasoning_tokens"], 3);
    assert_eq!(done["usage"]["cache_read_tokens"], 6);
    assert!(done["usage"]["cost_usd"].as_f64().is_some(), "{done}");
}

#[tokio::test]
async fn deepseek_style_reasoning_goes_back_with_the_calls_it_led_to() {
    let env = Env::new();
    let mock = MockLlm::start(vec![
        Step::Reply(read_notes("call_a").think("Read it first.")),
        Step::Reply(read_notes("call_b").think("Once more, to be sure.")),
        Step::Reply(Reply::text("Done.").think("All read.")),
        Step::Reply(Reply::text("Yes.")),
    ])
    .await;
    let r = env
        .exec(&mock.openai_url(), &["--model", "deepseek-reasoner"], "go")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 3);
    let msgs = reqs[2].body["messages"].as_array().unwrap();
    let assistants: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "assistant").collect();
    assert_eq!(assistants[0]["reasoning_content"], "Read it first.");
    assert_eq!(assistants[1]["reasoning_content"], "Once more, to be sure.");
    // The session remembers it: the next turn still sends it back, and
    // the plain answer's reasoning stays home.
    let r = env
        .exec(&mock.openai_url(), &["--continue"], "are you sure?")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let reqs = mock.requests();
    let msgs = reqs[3].body["messages"].as_array().unwrap();
    let assistants: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "assistant").collect();
    assert_eq!(assistants.len(), 3);
    assert_eq!(assistants[0]["reasoning_content"], "Read it first.");
    assert!(assistants[2].get("reasoning_content").is_none());
    assert_eq!(
        reqs[3].body["model"], "deepseek-reasoner",
        "the session's model"
    );
}

#[tokio::test]
async fn anthropic_thinking_works_across_tool_rounds_and_caches_the_history() {
    let env = Env::new();
    env.config("[anthropic]\nthinking_budget = 2048\n");
    let mock = MockLlm::start(vec![
        Step::Reply(read_notes("toolu_1").think("Let me read it.")),
        Step::Reply(read_notes("toolu_2").think("And again.")),
        Step::Reply(Reply::text("Three.").think("Enough.")),
    ])
    .await;
    let r = env
        .exec(
            &mock.anthropic_url(),
            &["--provider", "anthropic", "--model", "claude-sonnet-4-5"],
            "count the tasks",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 3);
    for q in &reqs {
        assert_eq!(q.body["thinking"]["type"], "enabled");
        assert_eq!(q.body["thinking"]["budget_tokens"], 2048);
        assert!(q.body["max_tokens"].as_u64().unwrap() > 2048);
        // At most four breakpoints: the tools, the system prompt, and
        // the newest messages.
        let text = q.body.to_string();
        assert!(text.matches("cache_control").count() <= 4, "{text}");
        let tools = q.body["tools"].as_array().unwrap();
        assert!(tools.last().unwrap().get("cache_control").is_some());
        assert!(q.body["system"][0].get("cache_control").is_some());
        let msgs = q.body["messages"].as_array().unwrap();
        let last = msgs.last().unwrap()["content"].as_array().unwrap();
        assert!(last.last().unwrap().get("cache_control").is_some());
    }
    // Each assistant turn goes back with its signed thinking first.
    let msgs = reqs[2].body["messages"].as_array().unwrap();
    let assistants: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "assistant").collect();
    for (a, thought) in assistants.iter().zip(["Let me read it.", "And again."]) {
        let blocks = a["content"].as_array().unwrap();
        assert_eq!(blocks[0]["type"], "thinking", "{a}");
        assert_eq!(blocks[0]["thinking"], thought);
        assert_eq!(blocks[0]["signature"], signature(thought));
        assert_eq!(blocks[1]["type"], "tool_use");
    }
    // The earlier requests are a prefix of the later ones (breakpoints
    // aside): the history is never rewritten, so the cache holds.
    let strip = |v: &Value| {
        let mut v = v.clone();
        strip_cache_control(&mut v);
        v
    };
    for w in reqs.windows(2) {
        assert_eq!(strip(&w[0].body["tools"]), strip(&w[1].body["tools"]));
        assert_eq!(w[0].body["system"], w[1].body["system"]);
        let a = strip(&w[0].body["messages"]);
        let b = strip(&w[1].body["messages"]);
        let a = a.as_array().unwrap();
        assert_eq!(a[..], b.as_array().unwrap()[..a.len()]);
    }
    assert!(r.count("reasoning_delta") > 0);
}

fn strip_cache_control(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("cache_control");
            m.values_mut().for_each(strip_cache_control);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_cache_control),
        _ => {}
    }
}

#[tokio::test]
async fn stop_reasons_are_told_and_errors_mid_stream_fail() {
    let streams =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/provider-streams");
    let read = |name: &str| std::fs::read_to_string(streams.join(name)).unwrap();
    let env = Env::new();
    // Cut at the token limit: completed, but said so.
    let mock = MockLlm::start(vec![Step::Raw(read("openai-gpt4o-length.sse"))]).await;
    let r = env
        .exec(&mock.openai_url(), &["--model", "gpt-4o"], "hi")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.first("turn_completed")["stop_reason"], "max_tokens");
    let mock = MockLlm::start(vec![Step::Raw(read("openai-gpt4o-length.sse"))]).await;
    let url = mock.openai_url();
    let text = env
        .run(
            &["exec", "--base-url", &url, "--model", "gpt-4o", "hi"],
            &[("OPENAI_API_KEY", KEY)],
        )
        .await;
    assert_eq!(text.code, 0);
    assert!(
        text.stderr.contains("output token limit"),
        "{}",
        text.stderr
    );
    // vLLM's flat error after some text: an error, exit 1.
    let mock = MockLlm::start(vec![Step::Raw(read("vllm-midstream-error-flat.sse"))]).await;
    let r = env
        .exec(&mock.openai_url(), &["--model", "qwen3"], "hi")
        .await;
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(r.count("turn_completed"), 0);
    let e = r.first("error");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("maximum model length"),
        "{e}"
    );
    // A refusal: told as one, and the refused turn leaves the
    // conversation (or the model keeps refusing what follows).
    let mock = MockLlm::start(vec![
        Step::Raw(read("anthropic-refusal.sse")),
        Step::Reply(Reply::text("Sure.")),
    ])
    .await;
    let r = env
        .exec(
            &mock.anthropic_url(),
            &["--provider", "anthropic", "--model", "claude-sonnet-4-5"],
            "a request it refuses",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.first("turn_completed")["stop_reason"], "refusal");
    let r = env
        .exec(&mock.anthropic_url(), &["--continue"], "something else")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let reqs = mock.requests();
    let sent = reqs[1].body["messages"].to_string();
    assert!(!sent.contains("a request it refuses"), "{sent}");
    assert!(sent.contains("something else"));
}

#[tokio::test]
async fn prices_give_each_turn_and_session_a_cost() {
    let env = Env::new();
    env.config(
        "[models.\"mock-model\"]\nprice = { input = 2.0, cached_input = 0.5, cache_write = 2.0, output = 8.0 }\n",
    );
    let mock = MockLlm::start(vec![
        Step::Reply(read_notes("c1")),
        Step::Reply(Reply {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            ..Reply::text("ok").cached(400_000)
        }),
    ])
    .await;
    let r = env
        .exec(&mock.openai_url(), &["--model", "mock-model"], "go")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let usage = r.first("turn_completed")["usage"].clone();
    // 11 fresh tokens of the first round at 2, then 600k fresh at 2,
    // 400k cached at 0.5, 100k + 5 out at 8 (per million).
    let want = (11.0 * 2.0 + 5.0 * 8.0 + 600_000.0 * 2.0 + 400_000.0 * 0.5 + 100_000.0 * 8.0)
        / 1_000_000.0;
    let got = usage["cost_usd"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    assert_eq!(usage["cache_read_tokens"], 400_000);
    // `lathe sessions` tells what each cost.
    let s = env.run(&["sessions", "--json"], &[]).await;
    let line: Value = serde_json::from_str(s.stdout.lines().next().unwrap()).unwrap();
    assert!((line["usage"]["cost_usd"].as_f64().unwrap() - want).abs() < 1e-9);
    assert_eq!(line["model"], "mock-model");
    let s = env.run(&["sessions"], &[]).await;
    assert!(s.stdout.contains('$'), "{}", s.stdout);
}

#[tokio::test]
async fn a_session_reopens_on_its_server_and_model() {
    let env = Env::new();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::text("one")),
        Step::Reply(Reply::text("two")),
        Step::Reply(Reply::text("three")),
        Step::Reply(Reply::text("four")),
    ])
    .await;
    let url = mock.anthropic_url();
    let r = env
        .run(
            &[
                "exec",
                "--provider",
                "anthropic",
                "--base-url",
                &url,
                "--model",
                "claude-haiku-4-5",
                "first",
            ],
            &[("ANTHROPIC_API_KEY", KEY)],
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    // No flags at all: the session's provider, server and model.
    let r = env
        .run(
            &["exec", "--continue", "second"],
            &[("ANTHROPIC_API_KEY", KEY)],
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let reqs = mock.requests();
    assert_eq!(reqs[1].path, "/v1/messages");
    assert_eq!(reqs[1].body["model"], "claude-haiku-4-5");
    // A flag still wins.
    let r = env
        .run(
            &["exec", "--continue", "--model", "claude-opus-4-6", "third"],
            &[("ANTHROPIC_API_KEY", KEY)],
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(mock.requests()[2].body["model"], "claude-opus-4-6");
    // And the session goes on with it from there.
    let r = env
        .run(
            &["exec", "--continue", "fourth"],
            &[("ANTHROPIC_API_KEY", KEY)],
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(mock.requests()[3].body["model"], "claude-opus-4-6");
}

fn png(path: &std::path::Path, width: u32, height: u32) {
    let img = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 64])
    });
    img.save_with_format(path, image::ImageFormat::Png).unwrap();
}

#[tokio::test]
async fn images_go_as_parts_on_every_wire_and_never_to_a_blind_model() {
    let env = Env::new();
    png(&env.ws.path().join("shot.png"), 1280, 720);
    let elsewhere = tempfile::tempdir().unwrap();
    let pasted = elsewhere.path().join("Screen Shot.png");
    png(&pasted, 3000, 1000);
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::text("A chart.")),
        Step::Reply(Reply::text("Two charts.")),
        Step::Reply(Reply::text("Seen.")),
    ])
    .await;
    // Chat: `--image`, as an image_url part before the text.
    let r = env
        .exec(
            &mock.openai_url(),
            &["--model", "gpt-4.1", "--image", "shot.png"],
            "what is this?",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let reqs = mock.requests();
    let user = reqs[0].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap()
        .clone();
    let parts = user["content"].as_array().unwrap();
    assert_eq!(parts[0]["type"], "image_url");
    assert!(
        parts[0]["image_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,iVBOR")
    );
    assert_eq!(parts[1], json!({"type": "text", "text": "what is this?"}));
    let files = r.first("attachments")["files"].clone();
    assert_eq!(files[0]["note"], "image 1280×720");
    // Anthropic: `@shot.png` and `--image` from elsewhere (scaled down).
    // A path in a headless prompt (text from anywhere) attaches nothing.
    let prompt = format!("compare @shot.png with '{}'", pasted.display());
    let pasted_arg = pasted.display().to_string();
    let r = env
        .exec(
            &mock.anthropic_url(),
            &[
                "--provider",
                "anthropic",
                "--model",
                "claude-sonnet-4-5",
                "--image",
                &pasted_arg,
            ],
            &prompt,
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let content = mock.requests()[1].body["messages"][0]["content"].clone();
    let blocks = content.as_array().unwrap();
    assert_eq!(blocks[0]["type"], "image");
    assert_eq!(blocks[0]["source"]["type"], "base64");
    assert_eq!(blocks[0]["source"]["media_type"], "image/png");
    assert_eq!(blocks[1]["type"], "image");
    assert_eq!(blocks[2]["type"], "text");
    assert_eq!(blocks.len(), 3, "the pasted path went once, by --image");
    let notes: Vec<String> = r.first("attachments")["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["note"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(notes, ["image 1280×720", "image 1568×523"], "{notes:?}");
    // Responses: input_image.
    let r = env
        .exec(
            &mock.openai_url(),
            &[
                "--wire-api",
                "responses",
                "--model",
                "gpt-5.1",
                "--image",
                "shot.png",
            ],
            "and now?",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let input = mock.requests()[2].body["input"][0]["content"].clone();
    assert_eq!(input[0]["type"], "input_image");
    assert!(
        input[0]["image_url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    assert_eq!(input[1]["type"], "input_text");
    // A model known to see no images is sent nothing.
    let r = env
        .exec(
            &mock.openai_url(),
            &["--model", "deepseek-chat", "--image", "shot.png"],
            "what is this?",
        )
        .await;
    assert_eq!(r.code, 1);
    assert!(
        r.first("error")["message"]
            .as_str()
            .unwrap()
            .contains("deepseek-chat does not take images"),
        "{}",
        r.stdout
    );
    assert_eq!(mock.requests().len(), 3, "nothing was sent");
    // A file that is not an image, whatever its name, is not one.
    std::fs::write(env.ws.path().join("key.png"), "-----BEGIN PRIVATE KEY-----").unwrap();
    let r = env
        .run(
            &[
                "exec",
                "--base-url",
                &mock.openai_url(),
                "--model",
                "gpt-4.1",
                "--image",
                "nope.png",
                "x",
            ],
            &[("OPENAI_API_KEY", KEY)],
        )
        .await;
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("nope.png: no such file"), "{}", r.stderr);
    let r = env
        .run(
            &[
                "exec",
                "--base-url",
                &mock.openai_url(),
                "--model",
                "gpt-4.1",
                "--image",
                "key.png",
                "x",
            ],
            &[("OPENAI_API_KEY", KEY)],
        )
        .await;
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not an image"), "{}", r.stderr);
    assert_eq!(mock.requests().len(), 3, "nothing was sent");
}

/// A resumed session goes back to its server, but a key set since is not
/// sent where that key never went (a local server, then a real key).
#[tokio::test]
async fn a_resumed_session_sends_no_key_its_server_never_had() {
    let env = Env::new();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::text("one")),
        Step::Reply(Reply::text("two")),
        Step::Reply(Reply::text("three")),
    ])
    .await;
    let url = mock.openai_url();
    let r = env
        .run(
            &["exec", "--base-url", &url, "--model", "local", "first"],
            &[],
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!mock.requests()[0].headers.contains_key("authorization"));
    let r = env
        .run(
            &["exec", "--continue", "second"],
            &[("OPENAI_API_KEY", KEY)],
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !mock.requests()[1].headers.contains_key("authorization"),
        "the new key went to the session's server"
    );
    assert!(r.stderr.contains("is not sent"), "{}", r.stderr);
    // Named on the command line, the server gets it.
    let r = env
        .run(
            &["exec", "--continue", "--base-url", &url, "third"],
            &[("OPENAI_API_KEY", KEY)],
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        mock.requests()[2].headers["authorization"],
        format!("Bearer {KEY}")
    );
}

/// A cloned repository's config cannot make the model think (and bill)
/// more, nor choose how it is asked.
#[tokio::test]
async fn a_workspace_config_cannot_raise_the_thinking() {
    let env = Env::new();
    std::fs::create_dir_all(env.ws.path().join(".lathe")).unwrap();
    std::fs::write(
        env.ws.path().join(".lathe/config.toml"),
        "[anthropic]\nthinking_budget = 60000\nreasoning_effort = \"xhigh\"\nextra_body = { max_tokens = 128000 }\n",
    )
    .unwrap();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]).await;
    let r = env
        .exec(
            &mock.anthropic_url(),
            &["--provider", "anthropic", "--model", "claude-sonnet-4-5"],
            "hi",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let body = &mock.requests()[0].body;
    assert!(body.get("thinking").is_none(), "{body}");
    assert_eq!(body["max_tokens"], 32_000);
    for key in ["thinking_budget", "reasoning_effort", "extra_body"] {
        assert!(r.stderr.contains(key), "{key}: {}", r.stderr);
    }
}

/// Without `--model`, on a server that is not the vendor's: its only
/// model is used; several are named and the run asks for one (exit 2); a
/// server with no list gets a placeholder name, said aloud.
#[tokio::test]
async fn with_no_model_named_the_server_is_asked() {
    let env = Env::new();
    let one = MockLlm::with_models(
        vec![Step::Reply(Reply::text("hi"))],
        Some(vec!["qwen3:8b".into()]),
    )
    .await;
    let r = env.exec(&one.openai_url(), &[], "hello").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(one.requests()[0].body["model"], "qwen3:8b");
    assert!(r.stderr.contains("using qwen3:8b"), "{}", r.stderr);
    let several = MockLlm::start(vec![Step::Reply(Reply::text("hi"))]).await;
    let r = env.exec(&several.openai_url(), &[], "hello").await;
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("serves 3 models") && r.stderr.contains("mock-large"),
        "{}",
        r.stderr
    );
    assert!(several.requests().is_empty(), "nothing was sent");
    let none = MockLlm::with_models(vec![Step::Reply(Reply::text("hi"))], None).await;
    let r = env.exec(&none.openai_url(), &[], "hello").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(none.requests()[0].body["model"], "default");
    assert!(r.stderr.contains("lists none"), "{}", r.stderr);
    assert_ne!(none.requests()[0].body["model"], "gpt-4.1");
}

/// A call cut at the output token limit is not run: the model is told
/// why (and its half-written arguments go back as `{}`), the person too,
/// and the turn goes on.
#[tokio::test]
async fn calls_cut_at_the_output_limit_are_not_run() {
    let env = Env::new();
    let chunk = |delta: Value, finish: Option<&str>| {
        let c = json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    };
    let cut = [
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_w", "type": "function",
                "function": {"name": "write_file", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0,
                "function": {"arguments": "{\"path\": \"out.txt\", \"content\": \"hello wor"}}]}),
            None,
        ),
        chunk(json!({}), Some("length")),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    let mock = MockLlm::start(vec![
        Step::Raw(cut),
        Step::Reply(Reply::text("I will write it in parts.")),
    ])
    .await;
    let r = env
        .exec(&mock.openai_url(), &["--model", "gpt-4.1"], "write out.txt")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !env.ws.path().join("out.txt").exists(),
        "nothing was written"
    );
    let msgs = mock.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let call = &msgs[2]["tool_calls"][0];
    assert_eq!(call["function"]["arguments"], "{}");
    let told = msgs[3]["content"].as_str().unwrap();
    assert!(told.contains("cut at the output token limit"), "{told}");
    let notice = r.first("error");
    assert!(notice["turn_id"].is_null(), "not the turn's end: {notice}");
    assert!(
        notice["message"]
            .as_str()
            .unwrap()
            .contains("cut at the output token limit"),
        "{notice}"
    );
    assert_eq!(
        r.first("turn_completed")["text"],
        "I will write it in parts."
    );
}

/// A session record is a file anything may have written: a grant forged
/// into it is not honoured when the session goes on.
#[tokio::test]
async fn a_grant_forged_into_a_session_record_is_not_honoured() {
    let env = Env::new();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::text("ok")),
        Step::Reply(Reply::tools().call(
            "w1",
            "write_file",
            json!({"path": "a.txt", "content": "pwned"}),
        )),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let url = mock.openai_url();
    let ask = |prompt: &'static str, resume: bool| {
        let mut args = vec!["exec", "--json", "-a", "ask", "--base-url", url.as_str()];
        args.extend(["--model", "m", "--checkpoints", "off"]);
        if resume {
            args.push("--continue");
        }
        args.push(prompt);
        args.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let first = ask("hello", false);
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    let r = env.run(&first, &[("OPENAI_API_KEY", KEY)]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sessions = env.home.path().join("sessions");
    let record = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".history.jsonl"))
        .unwrap();
    let forged = json!({"seq": 999, "parent": 0, "ts": 0, "kind": "grant",
        "keys": [{"kind": "file_write", "path": "a.txt"}], "expires_ms": 99_999_999_999_999u64});
    let mut text = std::fs::read_to_string(&record).unwrap();
    text.push_str(&format!("{forged}\n"));
    std::fs::write(&record, text).unwrap();
    // The forgery is one the record reader takes: only not honouring it
    // stops it.
    let records = lathe_core::session::history::read(&record).unwrap();
    assert_eq!(
        lathe_core::session::history::rebuild(&records, &lathe_core::policy::Redactor::default())
            .grants
            .len(),
        1
    );
    let second = ask("write it", true);
    let second: Vec<&str> = second.iter().map(String::as_str).collect();
    let r = env.run(&second, &[("OPENAI_API_KEY", KEY)]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !env.ws.path().join("a.txt").exists(),
        "the forged grant wrote"
    );
    assert_eq!(r.first("tool_call_finished")["status"], "denied");
}

/// A key the person pastes into a message goes neither to the model nor
/// into the session's record: a placeholder stands in, and the person is
/// told.
#[tokio::test]
async fn a_pasted_key_is_replaced_before_it_is_sent_or_recorded() {
    let env = Env::new();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]).await;
    let pasted = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
    let r = env
        .exec(
            &mock.openai_url(),
            &["--model", "m"],
            &format!("why does {pasted} fail with 401?"),
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sent = mock.requests()[0].body.to_string();
    assert!(!sent.contains(pasted), "{sent}");
    assert!(sent.contains("[REDACTED]"), "{sent}");
    assert!(r.stdout.contains("looks like a secret"), "{}", r.stdout);
    let mut on_disk = String::new();
    for f in std::fs::read_dir(env.home.path().join("sessions"))
        .unwrap()
        .flatten()
    {
        on_disk.push_str(&std::fs::read_to_string(f.path()).unwrap_or_default());
    }
    assert!(!on_disk.contains(pasted), "the record kept it");
}

/// A key a server quotes back (a 401 that says which key it refused)
/// reaches neither the screen nor the session's record nor the log.
#[tokio::test]
async fn a_key_a_server_quotes_back_is_kept_out_of_records_and_logs() {
    let env = Env::new();
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}. You can find your API key at https://x","type":"invalid_request_error"}}}}"#
    );
    let mock = MockLlm::start(vec![Step::RawStatus {
        status: 401,
        body,
        retry_after: None,
    }])
    .await;
    let r = env.exec(&mock.openai_url(), &["--model", "m"], "hi").await;
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout.contains("Incorrect API key provided"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains(KEY) && !r.stderr.contains(KEY));
    let mut on_disk = String::new();
    for dir in ["sessions", "logs"] {
        for f in std::fs::read_dir(env.home.path().join(dir))
            .into_iter()
            .flatten()
            .flatten()
        {
            on_disk.push_str(&std::fs::read_to_string(f.path()).unwrap_or_default());
        }
    }
    assert!(
        on_disk.contains("Incorrect API key"),
        "the error was recorded"
    );
    assert!(!on_disk.contains(KEY), "a record or log kept the key");
}

/// Every file a session keeps under Lathe's home, as one text.
fn kept(home: &std::path::Path) -> String {
    let mut out = String::new();
    for dir in ["sessions", "logs"] {
        for entry in std::fs::read_dir(home.join(dir))
            .into_iter()
            .flatten()
            .flatten()
        {
            out.push_str(&String::from_utf8_lossy(
                &std::fs::read(entry.path()).unwrap_or_default(),
            ));
        }
    }
    out
}

/// The session's record, with its header's `base_url` set to `url`.
fn respell_record(home: &std::path::Path, url: &str) {
    let sessions = home.join("sessions");
    for entry in std::fs::read_dir(&sessions).unwrap().flatten() {
        let path = entry.path();
        if !path.to_string_lossy().ends_with(".history.jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut header: Value = serde_json::from_str(&lines[0]).unwrap();
        header["base_url"] = json!(url);
        lines[0] = header.to_string();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    }
}

/// A record whose server is respelled (a trailing `/`, spaces, a newline,
/// `//`) is checked on the form requests go to: the key goes to the
/// session's own server however it is spelled, and never to another
/// server however that one is spelled.
#[tokio::test]
async fn a_respelled_session_server_gets_the_key_only_if_it_had_it() {
    let own = MockLlm::cycling(vec![Step::Reply(Reply::text("ok"))]).await;
    let other = MockLlm::start(vec![Step::Reply(Reply::text("ok")); 8]).await;
    let respell = |url: &str| {
        let (scheme, rest) = url.split_once("://").unwrap();
        vec![
            format!("{url}/"),
            format!(" {url} "),
            format!("{url}\n"),
            format!("{scheme}://{}", rest.replacen('/', "//", 1)),
            format!("{}://{rest}//", scheme.to_uppercase()),
        ]
    };
    // A session on `own`, its record's server respelled, then continued.
    let go_on = |spelled: String| {
        let own = own.openai_url();
        async move {
            let env = Env::new();
            let r = env.exec(&own, &["--model", "m"], "first").await;
            assert_eq!(r.code, 0, "{}", r.stderr);
            respell_record(env.home.path(), &spelled);
            let r = env.exec_continue(&[], "second").await;
            assert_eq!(r.code, 0, "{spelled:?}: {}", r.stderr);
            r
        }
    };
    for spelled in respell(&other.openai_url()) {
        let r = go_on(spelled.clone()).await;
        assert!(
            r.stderr.contains("is not sent"),
            "{spelled:?}: {}",
            r.stderr
        );
        let sent = other.requests();
        let last = sent.last().expect("the record's server was asked");
        assert!(
            !last.headers.contains_key("authorization"),
            "{spelled:?}: the key went to another server"
        );
    }
    for spelled in respell(&own.openai_url()) {
        let r = go_on(spelled.clone()).await;
        assert!(
            !r.stderr.contains("is not sent"),
            "{spelled:?}: {}",
            r.stderr
        );
    }
}

/// A key a server echoes in reasoning (Chat `reasoning_content`,
/// Anthropic thinking and its signature, Responses summaries and
/// encrypted content) is kept redacted and never sent again after
/// `--continue`; a record kept in clear before redaction reached it is
/// redacted as it is read.
#[tokio::test]
async fn a_key_echoed_in_reasoning_is_neither_kept_nor_sent_back() {
    let leak = format!("the key is {KEY}, noted");
    let anthropic_signed = {
        let events = [
            json!({"type": "message_start", "message": {"id": "m1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "usage": {"input_tokens": 5, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": leak}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": KEY}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\":\"notes.txt\"}"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
            json!({"type": "message_stop"}),
        ];
        events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect::<String>()
    };
    let cases: Vec<(Vec<&str>, Step)> = vec![
        (
            vec!["--model", "deepseek-reasoner"],
            Step::Reply(Reply::tools().think(&leak).call(
                "c1",
                "read_file",
                json!({"path": "notes.txt"}),
            )),
        ),
        (
            vec!["--provider", "anthropic", "--model", "claude-sonnet-4-5"],
            Step::Raw(anthropic_signed),
        ),
        (
            vec!["--wire-api", "responses", "--model", "gpt-5"],
            Step::Reply(Reply::tools().think(&leak).call(
                "c1",
                "read_file",
                json!({"path": "notes.txt"}),
            )),
        ),
    ];
    for (flags, first) in cases {
        let env = Env::new();
        let mock = MockLlm::start(vec![
            first,
            Step::Reply(Reply::text("read")),
            Step::Reply(Reply::text("again")),
        ])
        .await;
        let url = if flags.contains(&"anthropic") {
            mock.anthropic_url()
        } else {
            mock.openai_url()
        };
        let r = env.exec(&url, &flags, "read the notes").await;
        assert_eq!(r.code, 0, "{flags:?}: {}", r.stderr);
        assert!(
            !kept(env.home.path()).contains(KEY),
            "{flags:?}: kept in clear"
        );
        let r = env.exec_continue(&flags, "go on").await;
        assert_eq!(r.code, 0, "{flags:?}: {}", r.stderr);
        let resent = mock.requests()[2].body.to_string();
        assert!(!resent.contains(KEY), "{flags:?}: sent again: {resent}");
        assert!(!r.stdout.contains(KEY) && !r.stderr.contains(KEY));
    }
    // A record kept in clear (before this release) is redacted as read.
    let env = Env::new();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::text("the answer")),
        Step::Reply(Reply::text("again")),
    ])
    .await;
    let r = env.exec(&mock.openai_url(), &["--model", "m"], "ask").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    for entry in std::fs::read_dir(env.home.path().join("sessions"))
        .unwrap()
        .flatten()
    {
        let path = entry.path();
        if path.to_string_lossy().ends_with(".history.jsonl") {
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(
                &path,
                text.replace("the answer", &format!("the answer {KEY}")),
            )
            .unwrap();
        }
    }
    let r = env.exec_continue(&[], "go on").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let resent = mock.requests()[1].body.to_string();
    assert!(
        resent.contains("the answer") && !resent.contains(KEY),
        "{resent}"
    );
}

/// An image is opened through the one safe open: `--image` (or `@`) of a
/// repository's link to a picture in the person's home is refused, and
/// one that is, or leads to, a file the read rules cover is not sent.
#[tokio::test]
async fn images_named_in_the_workspace_must_really_be_there_and_readable() {
    let env = Env::new();
    let home_pic = env.home.path().join("private-photo.png");
    png(&home_pic, 32, 32);
    std::os::unix::fs::symlink(&home_pic, env.ws.path().join("shot.png")).unwrap();
    std::fs::create_dir(env.ws.path().join("private")).unwrap();
    png(&env.ws.path().join("private/secret.png"), 16, 16);
    std::os::unix::fs::symlink("private/secret.png", env.ws.path().join("alias.png")).unwrap();
    env.config("[permissions]\ndeny = [\"read_file(private/**)\"]\n");
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok")); 4]).await;
    let r = env
        .exec(
            &mock.openai_url(),
            &["--model", "gpt-4.1", "--image", "shot.png"],
            "look",
        )
        .await;
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("leads outside"), "{}", r.stderr);
    assert!(mock.requests().is_empty(), "nothing was sent");
    for named in ["private/secret.png", "alias.png"] {
        let r = env
            .exec(
                &mock.openai_url(),
                &["--model", "gpt-4.1", "--image", named],
                "look",
            )
            .await;
        assert_eq!(r.code, 0, "{named}: {}", r.stderr);
        let sent = mock.requests().last().unwrap().body.to_string();
        assert!(
            !sent.contains("image_url"),
            "{named}: an image was sent: {sent}"
        );
        let files = r.first("attachments")["files"].to_string();
        assert!(files.contains("deny"), "{named}: {files}");
    }
    // `@` in a message: the same.
    let r = env
        .exec(
            &mock.openai_url(),
            &["--model", "gpt-4.1"],
            "look at @shot.png",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sent = mock.requests().last().unwrap().body.to_string();
    assert!(!sent.contains("image_url"), "{sent}");
}
