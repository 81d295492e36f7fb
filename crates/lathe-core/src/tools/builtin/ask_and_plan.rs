//! `ask_user` and `update_plan`: the model works with the person. A
//! question waits for the person's answer (in the TUI, a panel of its
//! own; headless, there is no one to ask and the model is told to decide
//! and say what it assumed); a plan is a short list of steps the person
//! sees pinned above the composer. Neither touches anything, so neither
//! asks for approval; both pass the pipeline as every call does.

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::protocol::visible::one_line;
use crate::protocol::{Effect, PlanStep, StepStatus, Summary};
use crate::tools::spec::{Asked, ToolContext, ToolError};
use crate::tools::typed::TypedTool;

/// The longest question, choice or step the person is shown (characters).
const MAX_QUESTION: usize = 2_000;
const MAX_CHOICE: usize = 200;
const MAX_STEP: usize = 300;
/// The most choices a question offers, and steps a plan holds.
const MAX_CHOICES: usize = 9;
const MAX_STEPS: usize = 30;

pub struct AskUser;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskArgs {
    /// The question, self-contained: the person reads it on its own
    #[schemars(length(min = 1, max = 2000))]
    question: String,
    /// Answers to choose from (the person may also write their own); none for an open question
    #[schemars(length(max = 9))]
    choices: Option<Vec<String>>,
}

#[async_trait]
impl TypedTool for AskUser {
    type Args = AskArgs;

    fn summary(&self, result: &Value) -> Option<Summary> {
        Some(Summary::Answer {
            answer: result
                .get("answer")
                .and_then(Value::as_str)
                .map(str::to_string),
        })
    }

    fn name(&self) -> &'static str {
        "ask_user"
    }

    fn description(&self) -> &str {
        "Ask the person a question and wait for the answer: when a choice is theirs to make \
         (which approach, which name, what they meant) and guessing wrong would waste their \
         time. One question at a time, self-contained, with `choices` when there are a few \
         likely answers. Do not ask what you can find out yourself by reading the code. If \
         no one can answer, you are told so: then decide, and say what you assumed."
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Ask
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn waits_for_person(&self) -> bool {
        true
    }

    async fn execute(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let AskArgs { question, choices } = args;
        // Lines kept, no other control character (a terminal's escape).
        let question: String = question
            .replace('\t', " ")
            .chars()
            .filter(|c| *c == '\n' || !c.is_control())
            .collect();
        let question = question.trim();
        if question.is_empty() {
            return Err(ToolError::InvalidArgs("`question` is empty".into()));
        }
        if question.chars().count() > MAX_QUESTION {
            return Err(ToolError::InvalidArgs(format!(
                "`question` is longer than {MAX_QUESTION} characters: ask something shorter"
            )));
        }
        let choices = tidy_choices(choices.unwrap_or_default())?;
        let no_one = || {
            ToolError::ExecutionFailed(
                "no one to ask: Lathe runs without a person at the keyboard here; decide \
                 yourself, and say in your answer what you assumed"
                    .into(),
            )
        };
        let Some(together) = &ctx.together else {
            return Err(no_one());
        };
        match together
            .ask(&ctx.call_id, question, &choices, &ctx.cancel)
            .await
        {
            Asked::Answer(answer) => Ok(json!({ "answer": answer })),
            Asked::Declined if ctx.cancel.is_cancelled() => Err(ToolError::Cancelled(
                "the turn was interrupted while the question waited".into(),
            )),
            Asked::Declined => Ok(json!({
                "answer": null,
                "note": "the person did not answer and leaves it to you: decide, and say what \
                         you assumed",
            })),
            Asked::NoOne => Err(no_one()),
        }
    }
}

/// The choices, trimmed, without blanks or repeats; too many or too long
/// is the model's to fix.
fn tidy_choices(choices: Vec<String>) -> Result<Vec<String>, ToolError> {
    let mut out: Vec<String> = Vec::new();
    for c in choices {
        let c = &one_line(&c);
        if c.is_empty() || out.iter().any(|o| o == c) {
            continue;
        }
        if c.chars().count() > MAX_CHOICE {
            return Err(ToolError::InvalidArgs(format!(
                "a choice is longer than {MAX_CHOICE} characters: keep choices short, and put \
                 the detail in the question"
            )));
        }
        out.push(c.to_string());
    }
    if out.len() > MAX_CHOICES {
        return Err(ToolError::InvalidArgs(format!(
            "at most {MAX_CHOICES} choices"
        )));
    }
    Ok(out)
}

pub struct UpdatePlan;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanArgs {
    /// The whole plan as it stands now, in order
    #[schemars(length(min = 1, max = 30))]
    steps: Vec<StepArg>,
    /// Why the plan changed, in a sentence (optional)
    explanation: Option<String>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct StepArg {
    /// What the step does, in a few words
    #[schemars(length(min = 1, max = 300))]
    step: String,
    status: StatusArg,
}

#[derive(Clone, Copy, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum StatusArg {
    Pending,
    InProgress,
    Done,
}

impl From<StatusArg> for StepStatus {
    fn from(s: StatusArg) -> Self {
        match s {
            StatusArg::Pending => StepStatus::Pending,
            StatusArg::InProgress => StepStatus::InProgress,
            StatusArg::Done => StepStatus::Done,
        }
    }
}

#[async_trait]
impl TypedTool for UpdatePlan {
    type Args = PlanArgs;

    fn summary(&self, result: &Value) -> Option<Summary> {
        let n = |k: &str| result.get(k).and_then(Value::as_u64).unwrap_or(0);
        Some(Summary::Plan {
            done: n("done"),
            steps: n("steps"),
            current: result
                .get("current")
                .and_then(Value::as_str)
                .map(str::to_string),
        })
    }

    fn name(&self) -> &'static str {
        "update_plan"
    }

    fn description(&self) -> &str {
        "Keep a short plan the person can see: the whole list of steps each time, each \
         `pending`, `in_progress` or `done`, at most one in progress. Use it for work of \
         several steps; update it as steps are done or the plan changes. Not for a single \
         quick step."
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Plan
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    async fn execute(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let PlanArgs { steps, explanation } = args;
        let steps = plan_steps(steps)?;
        let explanation = explanation
            .map(|e| e.trim().to_string())
            .filter(|e| !e.is_empty());
        let (done, current) = crate::protocol::plan_and_questions::plan_progress(&steps);
        let reply = json!({
            "steps": steps.len(),
            "done": done,
            "current": current.map(|s| s.step.clone()),
        });
        if let Some(together) = &ctx.together {
            together.plan(&ctx.call_id, steps, explanation);
        }
        Ok(reply)
    }
}

/// The steps as the person sees them; an unreadable plan is the model's
/// to fix.
fn plan_steps(steps: Vec<StepArg>) -> Result<Vec<PlanStep>, ToolError> {
    if steps.is_empty() || steps.len() > MAX_STEPS {
        return Err(ToolError::InvalidArgs(format!(
            "a plan has 1 to {MAX_STEPS} steps"
        )));
    }
    let mut out = Vec::with_capacity(steps.len());
    for s in steps {
        let step = one_line(&s.step);
        if step.is_empty() {
            return Err(ToolError::InvalidArgs("a step is empty".into()));
        }
        if step.chars().count() > MAX_STEP {
            return Err(ToolError::InvalidArgs(format!(
                "a step is longer than {MAX_STEP} characters: say it in a few words"
            )));
        }
        out.push(PlanStep {
            step,
            status: s.status.into(),
        });
    }
    let in_progress = out
        .iter()
        .filter(|s| s.status == StepStatus::InProgress)
        .count();
    if in_progress > 1 {
        return Err(ToolError::InvalidArgs(format!(
            "{in_progress} steps are in_progress: at most one is"
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::policy::Workspace;
    use crate::tools::spec::Together;

    /// A conversation that answers every question with `answer`, and
    /// keeps the plans it is given.
    #[derive(Debug, Default)]
    struct Scripted {
        answer: Option<Asked>,
        asked: Mutex<Vec<(String, Vec<String>)>>,
        plans: Mutex<Vec<Vec<PlanStep>>>,
    }

    #[async_trait]
    impl Together for Scripted {
        async fn ask(
            &self,
            _call_id: &str,
            question: &str,
            choices: &[String],
            _cancel: &CancellationToken,
        ) -> Asked {
            self.asked
                .lock()
                .unwrap()
                .push((question.to_string(), choices.to_vec()));
            self.answer.clone().unwrap_or(Asked::NoOne)
        }

        async fn task(
            &self,
            _call_id: &str,
            _job: crate::tools::spec::TaskJob,
            _cancel: &CancellationToken,
        ) -> Result<Value, ToolError> {
            Err(ToolError::Internal("no subagents here".into()))
        }

        fn plan(&self, _call_id: &str, steps: Vec<PlanStep>, _explanation: Option<String>) {
            self.plans.lock().unwrap().push(steps);
        }
    }

    fn ctx(together: Option<Arc<Scripted>>) -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Arc::new(Workspace::new(dir.path()).unwrap());
        let mut ctx = ToolContext::standalone(ws);
        ctx.call_id = "c1".into();
        ctx.together = together.map(|t| t as Arc<dyn Together>);
        (dir, ctx)
    }

    #[tokio::test]
    async fn a_question_gets_the_persons_answer_or_leaves_it_to_the_model() {
        let person = Arc::new(Scripted {
            answer: Some(Asked::Answer("tabs".into())),
            ..Scripted::default()
        });
        let (_d, c) = ctx(Some(person.clone()));
        let out = (&AskUser as &dyn crate::tools::Tool)
            .execute(
                json!({"question": " Tabs or spaces? ", "choices": ["tabs", " spaces", "tabs", ""]}),
                &c,
            )
            .await
            .unwrap();
        assert_eq!(out["answer"], "tabs");
        assert_eq!(
            person.asked.lock().unwrap()[0],
            (
                "Tabs or spaces?".to_string(),
                vec!["tabs".into(), "spaces".into()]
            )
        );

        let person = Arc::new(Scripted {
            answer: Some(Asked::Declined),
            ..Scripted::default()
        });
        let (_d, c) = ctx(Some(person));
        let out = (&AskUser as &dyn crate::tools::Tool)
            .execute(json!({"question": "Which port?"}), &c)
            .await
            .unwrap();
        assert!(out["answer"].is_null());
        assert!(out["note"].as_str().unwrap().contains("decide"), "{out}");
    }

    #[tokio::test]
    async fn with_no_one_to_ask_the_model_is_told_to_decide() {
        for together in [None, Some(Arc::new(Scripted::default()))] {
            let (_d, c) = ctx(together);
            let err = (&AskUser as &dyn crate::tools::Tool)
                .execute(json!({"question": "Which port?"}), &c)
                .await
                .unwrap_err();
            assert!(
                matches!(&err, ToolError::ExecutionFailed(m) if m.contains("no one to ask") && m.contains("what you assumed")),
                "{err}"
            );
        }
    }

    #[tokio::test]
    async fn a_question_the_model_must_fix_is_refused() {
        let (_d, c) = ctx(Some(Arc::new(Scripted::default())));
        for bad in [
            json!({"question": "   "}),
            json!({"question": "x".repeat(MAX_QUESTION + 1)}),
            json!({"question": "q", "choices": ["c".repeat(MAX_CHOICE + 1)]}),
            json!({"question": "q", "choices": (0..10).map(|i| i.to_string()).collect::<Vec<_>>()}),
        ] {
            assert!(
                matches!(
                    (&AskUser as &dyn crate::tools::Tool)
                        .execute(bad.clone(), &c)
                        .await,
                    Err(ToolError::InvalidArgs(_))
                ),
                "{bad}"
            );
        }
    }

    #[tokio::test]
    async fn a_plan_goes_to_the_conversation_and_is_summed_up_for_the_model() {
        let person = Arc::new(Scripted::default());
        let (_d, c) = ctx(Some(person.clone()));
        let out = (&UpdatePlan as &dyn crate::tools::Tool)
            .execute(
                json!({"steps": [
                    {"step": "read   the code", "status": "done"},
                    {"step": "fix the bug", "status": "in_progress"},
                    {"step": "run the tests", "status": "pending"},
                ]}),
                &c,
            )
            .await
            .unwrap();
        assert_eq!(
            out,
            json!({"steps": 3, "done": 1, "current": "fix the bug"})
        );
        let plans = person.plans.lock().unwrap();
        assert_eq!(plans[0][0].step, "read the code");
        assert_eq!(plans[0][1].status, StepStatus::InProgress);
    }

    #[tokio::test]
    async fn a_plan_with_two_steps_in_progress_is_the_models_to_fix() {
        let (_d, c) = ctx(None);
        for bad in [
            json!({"steps": [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]}),
            json!({"steps": []}),
            json!({"steps": [{"step": "  ", "status": "pending"}]}),
            json!({"steps": [{"step": "a", "status": "started"}]}),
        ] {
            assert!(
                matches!(
                    (&UpdatePlan as &dyn crate::tools::Tool)
                        .execute(bad.clone(), &c)
                        .await,
                    Err(ToolError::InvalidArgs(_))
                ),
                "{bad}"
            );
        }
    }
}
