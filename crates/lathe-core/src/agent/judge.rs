//! The judge: a second model that reviews risky calls before they run
//! without asking (seed 003's LLM evaluator). It can only tighten: it is
//! asked only about calls the rules and the approval mode let run on
//! their own, and a call it does not clearly allow becomes a question for
//! the person, shown with its reason (headless: denied, the model told
//! why). It never sees, and so never approves, what the rules or the
//! mode would ask or refuse. Off unless `[judge] model` is set.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Shared;
use crate::protocol::operation::{Access, Operation};
use crate::protocol::{AgentEvent, Effect, Usage};
use crate::provider::{ChatRequest, Message, Quiet};

/// What every question a judge raises starts with (the headless
/// approver words its denial for it).
pub(crate) use crate::policy::JUDGE_REASON;

/// Programs that install software or reach the network.
const INSTALLERS: &[&str] = &[
    "apt", "apt-get", "brew", "pip", "pip3", "pipx", "npm", "npx", "pnpm", "yarn", "bun", "gem",
    "go", "cargo", "uv", "conda", "dnf", "yum", "pacman", "snap",
];
const NETWORK: &[&str] = &[
    "curl", "wget", "ssh", "scp", "rsync", "nc", "ncat", "telnet", "ftp", "git",
];
/// Subcommands of the installers that install or publish.
const INSTALLING: &[&str] = &[
    "install",
    "add",
    "i",
    "get",
    "publish",
    "upgrade",
    "update",
    "remove",
    "uninstall",
];
/// Files whose change runs code later or changes how the project builds.
const BUILD_FILES: &[&str] = &[
    "Makefile",
    "makefile",
    "build.rs",
    "package.json",
    "setup.py",
    "pyproject.toml",
    "Cargo.toml",
    "Dockerfile",
    "justfile",
];

/// Why Lathe counts a call as risky, if it does: deletions, writes to
/// dotfiles and build files, the network, installs, commands it cannot
/// fully analyse, MCP tools.
pub(crate) fn risk(deletes: bool, effect: Effect, ops: &[Operation]) -> Option<String> {
    if deletes {
        return Some("it deletes a file".into());
    }
    for op in ops {
        match op {
            Operation::Exec(e) => {
                if e.is_complex() {
                    return Some(format!(
                        "Lathe cannot fully analyse the command ({})",
                        e.complex.join("; ")
                    ));
                }
                for c in &e.commands {
                    let program = c.basename();
                    let sub = c.argv.get(1).map_or("", |w| w.text.as_str());
                    if program == "rm" || program == "rmdir" || program == "shred" {
                        return Some(format!("it deletes files (`{program}`)"));
                    }
                    if INSTALLERS.contains(&program) && INSTALLING.contains(&sub) {
                        return Some(format!("it installs or publishes (`{program} {sub}`)"));
                    }
                    if NETWORK.contains(&program)
                        && (program != "git" || matches!(sub, "push" | "fetch" | "pull" | "clone"))
                    {
                        return Some(format!("it reaches the network (`{program}`)"));
                    }
                }
            }
            Operation::File(f) if f.access == Access::Write => {
                let name = f.path.rsplit('/').next().unwrap_or(&f.path);
                if f.outside {
                    return Some(format!("it writes outside the workspace ({})", f.path));
                }
                if f.path.split('/').any(|part| part.starts_with('.')) {
                    return Some(format!("it writes a hidden file ({})", f.path));
                }
                if BUILD_FILES.contains(&name) || name.ends_with(".sh") {
                    return Some(format!(
                        "it changes how the project builds or runs ({})",
                        f.path
                    ));
                }
            }
            Operation::Net { host } => return Some(format!("it reaches the network ({host})")),
            Operation::External { server, tool, .. } => {
                return Some(format!("it calls {server}'s tool {tool}"));
            }
            Operation::File(_) => {}
        }
    }
    (effect == Effect::Network).then(|| "it reaches the network".into())
}

/// The judge's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Allow(String),
    Escalate(String),
}

/// What the judge answered, read: `allow` only when it said so plainly;
/// anything else (another word, no JSON, a broken object) escalates.
pub(crate) fn read_verdict(text: &str) -> Verdict {
    let object = text
        .find('{')
        .zip(text.rfind('}'))
        .filter(|(a, b)| a < b)
        .and_then(|(a, b)| serde_json::from_str::<Value>(&text[a..=b]).ok());
    let Some(v) = object else {
        return Verdict::Escalate("the judge did not answer with its verdict".into());
    };
    let reason = v
        .get("reason")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map_or_else(
            || "no reason given".to_string(),
            |r| crate::protocol::text::shorten_chars(r, 300),
        );
    match v.get("verdict").and_then(Value::as_str) {
        Some("allow") => Verdict::Allow(reason),
        _ => Verdict::Escalate(reason),
    }
}

const SYSTEM: &str = "You review one tool call that an AI coding agent is about to make in a \
     developer's project without asking them. Lathe flagged it as risky. Decide whether the \
     call clearly serves the developer's request and is safe to run unasked. Answer with one \
     JSON object and nothing else: {\"verdict\": \"allow\" | \"escalate\", \"reason\": \"one \
     short sentence\"}. Escalate (the developer is asked) when the call does more than the \
     request needs, could lose work, sends data out, installs or publishes something not \
     asked for, or when you are unsure.";

/// Asks the judge about a call; its verdict and cost are an event.
pub(crate) async fn review(
    shared: &Shared,
    model: &str,
    call_id: &str,
    tool: &str,
    args: &Value,
    why: &str,
    cancel: &CancellationToken,
) -> Verdict {
    let mut request_text = shared.services.desk.prompt();
    shared.to_model(&mut request_text);
    let mut shown_args = args.clone();
    shared.to_model(&mut shown_args);
    let question = format!(
        "The developer's last request:\n{request_text}\n\nThe call:\n{}\n\nWhy Lathe flags \
         it: {why}",
        json!({"tool": tool, "arguments": shown_args})
    );
    let messages = vec![Message::User(question)];
    let request = ChatRequest::new(model, SYSTEM, &messages, &[]);
    let (verdict, usage) = match shared
        .services
        .provider
        .complete(request, &mut Quiet("judge"), cancel)
        .await
    {
        Ok(mut c) => {
            if c.usage.cost_usd.is_none() {
                c.usage.cost_usd = shared.price(model).map(|p| p.cost(&c.usage));
            }
            (read_verdict(&c.text), c.usage)
        }
        Err(e) => (
            Verdict::Escalate(format!("the judge could not be asked ({e})")),
            Usage::default(),
        ),
    };
    shared.spend(super::budget::By::JUDGE, model, usage).await;
    let (allowed, reason) = match &verdict {
        Verdict::Allow(r) => (true, r.clone()),
        Verdict::Escalate(r) => (false, r.clone()),
    };
    shared.services.emitter.emit(AgentEvent::Judged {
        call_id: call_id.to_string(),
        model: model.to_string(),
        allowed,
        flagged: why.to_string(),
        reason,
        usage,
    });
    verdict
}

/// A call about to run without asking, reviewed by the judge when one
/// is set and Lathe counts the call risky: what to ask the person, when
/// the judge did not clearly allow it.
pub(crate) async fn question(
    shared: &Shared,
    call: &crate::provider::ToolCall,
    tool: &crate::tools::RegisteredTool,
    args: &Value,
    ops: &[Operation],
    cancel: &CancellationToken,
) -> Option<crate::policy::Need> {
    let model = shared.settings.judge.as_deref()?;
    let name = tool.name();
    let why = super::judge::risk(tool.tool.deletes_files(), tool.tool.effect(), ops)?;
    match review(shared, model, &call.id, name, args, &why, cancel).await {
        Verdict::Allow(_) => None,
        Verdict::Escalate(reason) => Some(crate::policy::Need {
            what: format!("{name}, which the judge flagged: {why}"),
            reason: format!("{}{reason}", JUDGE_REASON),
            grant: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_allow_allows() {
        assert_eq!(
            read_verdict(r#"{"verdict": "allow", "reason": "asked for"}"#),
            Verdict::Allow("asked for".into())
        );
        assert_eq!(
            read_verdict("Sure! ```json\n{\"verdict\":\"allow\",\"reason\":\"ok\"}\n```"),
            Verdict::Allow("ok".into())
        );
        for not in [
            r#"{"verdict": "ALLOW"}"#,
            r#"{"verdict": "allowed", "reason": "x"}"#,
            r#"{"verdict": "escalate", "reason": "deletes the tests"}"#,
            "allow",
            "",
            r#"{"verdict": "allow""#,
            r#"{"verdict": ["allow"]}"#,
        ] {
            assert!(matches!(read_verdict(not), Verdict::Escalate(_)), "{not}");
        }
    }

    #[test]
    fn what_counts_as_risky() {
        use crate::protocol::operation::FileOp;
        let write = |p: &str| {
            vec![Operation::File(FileOp {
                path: p.into(),
                access: Access::Write,
                outside: false,
                named: false,
                deletes: false,
            })]
        };
        assert!(risk(false, Effect::Write, &write("src/main.rs")).is_none());
        assert!(risk(false, Effect::Write, &write(".github/workflows/ci.yml")).is_some());
        assert!(risk(false, Effect::Write, &write("package.json")).is_some());
        assert!(risk(true, Effect::Write, &write("a.txt")).is_some());
        assert!(risk(false, Effect::Network, &[]).is_some());
        assert!(risk(false, Effect::Read, &[]).is_none());
    }
}
