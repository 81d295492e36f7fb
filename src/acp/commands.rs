//! The slash commands an editor offers (`available_commands_update`) and
//! how each typed one is carried out: most are the core's (`/init`, a
//! skill, an MCP server's prompt: sent as the message), the rest are
//! answered here from the engine's reports (`/cost`, `/diff`, `/undo`,
//! `/compact`, `/clear`, `/approvals`, `/model`, `/effort`).

use agent_client_protocol::v1::schema::{
    self as acp, AvailableCommand, AvailableCommandInput, UnstructuredCommandInput,
};

use super::map;
use super::session::{Command, Link};
use crate::protocol::{AgentEvent, Op};

/// Lathe's own commands that make sense in an editor, with their help.
const BUILT_IN: &[(&str, &str, Option<&str>)] = &[
    (
        "init",
        "study the repository and propose an AGENTS.md (or changes to it)",
        Some("what to stress (optional)"),
    ),
    (
        "plan",
        "the model looks (read-only) and proposes a plan to approve",
        Some("what to plan"),
    ),
    (
        "undo",
        "put back the files the last turn changed (shown and asked first)",
        None,
    ),
    ("diff", "every change of this session to the files", None),
    (
        "cost",
        "what this session has cost, by model and by agent",
        None,
    ),
    ("compact", "summarize the older turns to free context", None),
    (
        "clear",
        "start over: forget the conversation and its approvals",
        None,
    ),
    (
        "model",
        "switch the model for the following requests",
        Some("model name"),
    ),
    (
        "effort",
        "how hard the model thinks: none … xhigh, or default",
        Some("level"),
    ),
    (
        "trust",
        "the workspace's hooks, MCP servers, skills, agents and commands: shown and asked",
        None,
    ),
];

/// The names Lathe's own commands take (a person's command of the same
/// name is left out).
pub fn reserved() -> Vec<String> {
    BUILT_IN.iter().map(|(n, _, _)| format!("/{n}")).collect()
}

/// What a session offers besides Lathe's own commands: the person's
/// commands, the skills, each MCP server's prompts.
#[derive(Default)]
pub struct Offered {
    pub custom: Vec<lathe_core::front::commands::Custom>,
    pub skills: Vec<(String, String)>,
    pub prompts: std::collections::BTreeMap<String, Vec<(String, String)>>,
}

impl Offered {
    /// Every command, for `available_commands_update`.
    pub fn list(&self) -> Vec<AvailableCommand> {
        let mut others: Vec<(String, String)> = self
            .custom
            .iter()
            .map(|c| (c.name.trim_start_matches('/').to_string(), c.about.clone()))
            .collect();
        others.extend(self.skills.iter().cloned());
        for (server, prompts) in &self.prompts {
            for (name, about) in prompts {
                others.push((format!("{server}:{name}"), about.clone()));
            }
        }
        available(&others)
    }
}

/// Every command: Lathe's, then `others` (skills, MCP prompts, the
/// person's own), each `(name, description)`.
pub fn available(others: &[(String, String)]) -> Vec<AvailableCommand> {
    let mut out: Vec<AvailableCommand> = BUILT_IN
        .iter()
        .map(|(name, about, hint)| {
            let c = AvailableCommand::new(name.to_string(), about.to_string());
            match hint {
                Some(h) => c.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(h.to_string()),
                )),
                None => c,
            }
        })
        .collect();
    for (name, about) in others {
        if out.iter().any(|c| &c.name == name) {
            continue;
        }
        out.push(
            AvailableCommand::new(name.clone(), map::short(about, 200)).input(
                AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(
                    "arguments (optional)",
                )),
            ),
        );
    }
    out
}

/// What a prompt's text asks of the engine: an op that answers with a
/// report (`Some`), or the message itself (`None`: a turn).
pub fn parse(text: &str) -> Option<Parsed> {
    let text = text.trim();
    let rest = text.strip_prefix('/')?;
    let (name, arg) = match rest.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (rest, ""),
    };
    let arg = (!arg.is_empty()).then(|| arg.to_string());
    let usage = |u: &str| Some(Parsed::Usage(u.to_string()));
    let (op, waits, said) = match (name, arg) {
        ("cost", _) => (Op::ReportCost, Some(Command::Cost), None),
        ("diff", _) => (Op::SessionDiff, Some(Command::Diff), None),
        ("compact", _) => (Op::Compact, Some(Command::Compact), None),
        ("undo", _) => (
            Op::Rewind {
                turn: None,
                files: true,
                conversation: false,
                preview: true,
            },
            Some(Command::UndoPreview),
            None,
        ),
        ("clear", _) => (
            Op::Clear,
            None,
            Some("The conversation and its approvals are forgotten.".into()),
        ),
        ("plan", Some(what)) => (Op::Plan { text: what }, None, None),
        ("model", Some(model)) => (
            Op::SetModel {
                model: model.clone(),
            },
            None,
            Some(format!("Model: {model} (from the next request).")),
        ),
        ("effort", Some(level)) => {
            let effort = if level == "default" {
                None
            } else {
                match level.parse() {
                    Ok(e) => Some(e),
                    Err(_) => return usage(EFFORT_USAGE),
                }
            };
            (
                Op::SetEffort { effort },
                None,
                Some(format!("Effort: {level} (from the next turn).")),
            )
        }
        ("plan", None) => return usage("/plan WHAT: what the model should look at and plan"),
        ("model", None) => return usage("/model NAME: the model for the following requests"),
        ("effort", None) => return usage(EFFORT_USAGE),
        // An empty `/`: nothing to send.
        ("", _) => return usage("type a command after /: see the / menu"),
        _ => return None,
    };
    Some(Parsed::Op(op, waits, said))
}

const EFFORT_USAGE: &str = "/effort LEVEL: none, minimal, low, medium, high, xhigh, or default";

/// What a typed command is.
pub enum Parsed {
    /// An op, the report it waits for (if any), and what to say once sent.
    Op(Op, Option<Command>, Option<String>),
    /// Lathe's command, written wrong: how to write it (nothing is sent).
    Usage(String),
}

/// An event that answers a command the person typed.
pub fn on_answer(link: &Link, ev: AgentEvent) {
    // The answer of a command cancelled before it came: dropped.
    if let Ok(mut t) = link.turn.lock()
        && let Some(i) = t.discard.iter().position(|c| c.answered_by(&ev))
    {
        t.discard.remove(i);
        return;
    }
    let waiting = link.turn.lock().ok().and_then(|t| t.command);
    match (waiting, ev) {
        (Some(Command::Cost), AgentEvent::Cost { models, total, .. }) => {
            let mut text = String::from("What this session has cost:\n");
            for m in &models {
                text.push_str(&format!(
                    "- {}: {} in, {} out{}\n",
                    m.model,
                    m.usage.input_tokens,
                    m.usage.output_tokens,
                    dollars(m.usage.cost_usd)
                ));
            }
            text.push_str(&format!(
                "- in all: {} in, {} out{}",
                total.input_tokens,
                total.output_tokens,
                dollars(total.cost_usd)
            ));
            link.say(text);
            link.end(acp::StopReason::EndTurn);
        }
        (
            Some(Command::Diff),
            AgentEvent::SessionDiff {
                diff, error, cut, ..
            },
        ) => {
            let text = match (error, diff.is_empty()) {
                (Some(e), _) => format!("No diff: {e}"),
                (None, true) => "Nothing has changed in this session.".into(),
                (None, false) => {
                    let cut = if cut { "\n(cut at 2 MiB)" } else { "" };
                    format!("```diff\n{}\n```{cut}", diff.trim_end())
                }
            };
            link.say(text);
            link.end(acp::StopReason::EndTurn);
        }
        (
            Some(Command::Compact),
            AgentEvent::ContextCompacted {
                before_tokens,
                after_tokens,
                ..
            },
        ) => {
            link.say(format!(
                "Compacted: about {before_tokens} tokens down to {after_tokens}."
            ));
            link.end(acp::StopReason::EndTurn);
        }
        (_, ev) => {
            undo_asked(link, &ev);
        }
    }
}

/// `/undo`'s preview shown and asked; yes puts the files back.
fn undo_asked(link: &Link, ev: &AgentEvent) -> bool {
    let AgentEvent::Rewound {
        restored,
        removed,
        skipped,
        preview,
        changed_since,
        not_kept,
        error,
        ..
    } = ev
    else {
        return false;
    };
    let waiting = link.turn.lock().ok().and_then(|t| t.command);
    match waiting {
        Some(Command::UndoPreview) if *preview && error.is_none() && changed_since.is_empty() => {
            let mut text = String::new();
            let list = |title: &str, items: &[String], text: &mut String| {
                if !items.is_empty() {
                    text.push_str(&format!("{title}:\n"));
                    for i in items {
                        text.push_str(&format!("- {i}\n"));
                    }
                }
            };
            list("Put back", restored, &mut text);
            list("Remove (the turn made them)", removed, &mut text);
            list("Left alone", skipped, &mut text);
            list(
                "Cannot bring back (no checkpoint holds it)",
                not_kept,
                &mut text,
            );
            if restored.is_empty() && removed.is_empty() {
                link.say(format!("Nothing to undo.\n{text}"));
                link.end(acp::StopReason::EndTurn);
                return true;
            }
            let link = link.clone();
            let prompt_no = link.prompt_gen();
            tokio::spawn(async move {
                let epoch = link.epoch();
                let yes = link
                    .confirm(
                        "Undo the last turn's changes",
                        acp::ToolKind::Edit,
                        text,
                        "Put them back",
                        "Keep the files as they are",
                    )
                    .await;
                if link.epoch() != epoch {
                    return;
                }
                // Only for the prompt that asked (a cancel ended it).
                if link.prompt_gen() != prompt_no {
                    return;
                }
                if yes {
                    if let Ok(mut t) = link.turn.lock() {
                        t.command = Some(Command::Undo);
                    }
                    let _ = link
                        .ops
                        .send(Op::Rewind {
                            turn: None,
                            files: true,
                            conversation: false,
                            preview: false,
                        })
                        .await;
                } else {
                    link.say("Nothing was changed.");
                    link.end_for(prompt_no, acp::StopReason::EndTurn);
                }
            });
            true
        }
        Some(Command::UndoPreview | Command::Undo) => {
            let text = if let Some(e) = error {
                format!("Cannot undo: {e}")
            } else if !changed_since.is_empty() {
                format!(
                    "Not undone: changed since Lathe changed them (outside Lathe): {}",
                    changed_since.join(", ")
                )
            } else {
                let mut t = format!(
                    "Undone: {} put back, {} removed.",
                    restored.len(),
                    removed.len()
                );
                if !not_kept.is_empty() {
                    t.push_str(&format!(" Could not bring back: {}.", not_kept.join(", ")));
                }
                t
            };
            link.say(text);
            link.end(acp::StopReason::EndTurn);
            true
        }
        _ => false,
    }
}

fn dollars(cost: Option<f64>) -> String {
    cost.map(|c| format!(", {}", crate::protocol::humanize::dollars(c)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_commands_become_the_engines_ops() {
        let op = |t: &str| match parse(t) {
            Some(Parsed::Op(op, waits, said)) => Some((op, waits, said)),
            _ => None,
        };
        assert!(matches!(
            op("/cost"),
            Some((Op::ReportCost, Some(Command::Cost), None))
        ));
        assert!(matches!(
            op("  /undo  "),
            Some((
                Op::Rewind { preview: true, .. },
                Some(Command::UndoPreview),
                None
            ))
        ));
        assert!(matches!(
            op("/plan add a cache"),
            Some((Op::Plan { text }, None, None)) if text == "add a cache"
        ));
        assert!(matches!(
            op("/effort high"),
            Some((Op::SetEffort { effort: Some(_) }, None, Some(_)))
        ));
        // The core's own (/init, skills, MCP prompts) and plain text are
        // the message.
        for t in ["/init", "/review-pr 12", "/srv:prompt a=1", "hello /cost"] {
            assert!(parse(t).is_none(), "{t}");
        }
        // Lathe's own, written wrong: how to write it, nothing sent.
        for t in ["/plan", "/effort loud", "/model", "/"] {
            assert!(matches!(parse(t), Some(Parsed::Usage(_))), "{t}");
        }
    }

    #[test]
    fn the_list_has_lathes_commands_then_the_others_once() {
        let others = vec![
            ("review".to_string(), "review a PR\nwith care".to_string()),
            (
                "cost".to_string(),
                "a skill named like a command".to_string(),
            ),
        ];
        let all = available(&others);
        let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        assert!(names.starts_with(&["init", "plan", "undo"]));
        assert_eq!(names.iter().filter(|n| **n == "cost").count(), 1);
        let review = all.iter().find(|c| c.name == "review").unwrap();
        assert!(!review.description.contains('\n'));
    }
}
