//! What the model and the person share while they work: the model's plan
//! (`update_plan`) and the questions it asks the person (`ask_user`).

use serde::{Deserialize, Serialize};

use crate::redact::{Redact, Scrub};

/// Where a step of the plan stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    #[default]
    Pending,
    InProgress,
    Done,
}

impl StepStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::InProgress => "in_progress",
            StepStatus::Done => "done",
        }
    }
}

/// One step of the model's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    pub step: String,
    #[serde(default)]
    pub status: StepStatus,
}

/// The model's words: a plan may quote what it read.
impl Redact for PlanStep {
    fn redact(&mut self, s: &dyn Scrub) {
        self.step.redact(s);
    }
}

/// A question the model asked the person, and the answer (`None`: none
/// came: no one to ask, the person let the model decide, or the turn was
/// interrupted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskedQuestion {
    pub call_id: String,
    pub question: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    #[serde(default)]
    pub answer: Option<String>,
}

impl Redact for AskedQuestion {
    fn redact(&mut self, s: &dyn Scrub) {
        self.question.redact(s);
        self.choices.redact(s);
        self.answer.redact(s);
    }
}

/// A command running in the background (`exec_shell` or `spawn` with
/// `background: true`), as `/ps` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobInfo {
    /// What the model names it by (`bg1`).
    pub handle: String,
    /// The command line.
    pub command: String,
    /// When it started (milliseconds since the Unix epoch).
    pub started_ms: u64,
    /// Still running; else how it ended.
    pub running: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Its last lines of output.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tail: Vec<String>,
    /// The call that started it (a subagent's: `t1-…`, under its task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

/// A command line and its output are text from outside.
impl Redact for JobInfo {
    fn redact(&mut self, s: &dyn Scrub) {
        self.command.redact(s);
        self.tail.redact(s);
    }
}

/// How many of `steps` are done, and the one in progress (or else the
/// first still pending): what a folded plan shows.
pub fn plan_progress(steps: &[PlanStep]) -> (usize, Option<&PlanStep>) {
    let done = steps
        .iter()
        .filter(|s| s.status == StepStatus::Done)
        .count();
    let current = steps
        .iter()
        .find(|s| s.status == StepStatus::InProgress)
        .or_else(|| steps.iter().find(|s| s.status == StepStatus::Pending));
    (done, current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_read_and_write_as_the_tool_names_them() {
        let steps: Vec<PlanStep> = serde_json::from_str(
            r#"[{"step":"read","status":"done"},{"step":"edit","status":"in_progress"},{"step":"test"}]"#,
        )
        .unwrap();
        assert_eq!(steps[2].status, StepStatus::Pending);
        let (done, current) = plan_progress(&steps);
        assert_eq!(done, 1);
        assert_eq!(current.map(|s| s.step.as_str()), Some("edit"));
        assert_eq!(
            serde_json::to_value(&steps[1]).unwrap(),
            serde_json::json!({"step": "edit", "status": "in_progress"})
        );
    }
}
