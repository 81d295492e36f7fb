//! `task`: hand a self-contained job to a subagent (see `agent::task`):
//! its own context, the same pipeline, read-only tools unless the job
//! names others; its final answer is the result.

use async_trait::async_trait;
use serde_json::Value;

use crate::protocol::{Effect, Summary};
use crate::tools::spec::{TaskJob, ToolContext, ToolError};
use crate::tools::typed::TypedTool;

/// The longest job description and prompt (characters).
const MAX_DESCRIPTION: usize = 200;
const MAX_PROMPT: usize = 20_000;

/// `task`, with the subagent types it offers (`agent`).
#[derive(Default)]
pub struct Task {
    description: String,
    /// Each type's name and description.
    types: Vec<(String, String)>,
}

const ABOUT: &str = "Hand a self-contained job (research: find where X is done, read and summarize a \
     module) to a subagent with a context of its own, so your context keeps only its answer. \
     It has the read-only tools unless you name others in `tools`; it cannot ask the person or \
     start subagents. Several tasks in one response run side by side. Its final answer is the \
     result.";

impl Task {
    /// `task` offering `types` (name, description) as `agent`.
    pub fn new(types: Vec<(String, String)>) -> Self {
        let description = if types.is_empty() {
            ABOUT.to_string()
        } else {
            let list: String = types
                .iter()
                .map(|(n, d)| format!("\n- {n}: {}", d.replace('\n', " ")))
                .collect();
            format!(
                "{ABOUT}\n\nSubagent types (`agent`): each has instructions of its own and may \
                 have fewer tools:{list}"
            )
        };
        Self { description, types }
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The subagent type to run, by name (default: a general one)
    agent: Option<String>,
    /// What the job is, in a few words (the person sees it)
    #[schemars(length(min = 1, max = 200))]
    description: String,
    /// The whole job, self-contained: the subagent sees nothing of this conversation
    #[schemars(length(min = 1, max = 20000))]
    prompt: String,
    /// The tools it may use (default: those that only read and search); tools that change things still ask
    tools: Option<Vec<String>>,
}

#[async_trait]
impl TypedTool for Task {
    type Args = Args;

    fn summary(&self, result: &Value) -> Option<Summary> {
        Some(Summary::Task {
            calls: result.get("calls").and_then(Value::as_u64).unwrap_or(0),
        })
    }

    fn name(&self) -> &'static str {
        "task"
    }

    fn description(&self) -> &str {
        &self.description
    }

    /// The types offered, as the choices of `agent`.
    fn parameters(&self) -> Value {
        let mut schema = crate::tools::args::schema::<Args>();
        if self.types.is_empty() {
            // No types: no choice to offer.
            if let Some(props) = schema
                .pointer_mut("/properties")
                .and_then(Value::as_object_mut)
            {
                props.remove("agent");
            }
        } else if let Some(agent) = schema.pointer_mut("/properties/agent") {
            let names: Vec<&str> = self.types.iter().map(|(n, _)| n.as_str()).collect();
            agent["enum"] = serde_json::json!(names);
        }
        schema
    }

    /// The subagent's calls are each judged on their own.
    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Task
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    /// Its time is its calls' (each bounded by its own timeout, and by
    /// the person's approvals) and its rounds' (capped): no one timeout
    /// for the whole job.
    fn waits_for_person(&self) -> bool {
        true
    }

    async fn execute(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let Args {
            agent,
            description,
            prompt,
            tools,
        } = args;
        if let Some(a) = &agent
            && !self.types.iter().any(|(n, _)| n == a)
        {
            return Err(ToolError::InvalidArgs(format!(
                "`agent` names {a:?}, which is no subagent type{}",
                if self.types.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; the types are: {}",
                        self.types
                            .iter()
                            .map(|(n, _)| n.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            )));
        }
        let (description, prompt) = (description.trim(), prompt.trim());
        if description.is_empty() || prompt.is_empty() {
            return Err(ToolError::InvalidArgs(
                "`description` and `prompt` must say what the job is".into(),
            ));
        }
        if description.chars().count() > MAX_DESCRIPTION || prompt.chars().count() > MAX_PROMPT {
            return Err(ToolError::InvalidArgs(format!(
                "a description is at most {MAX_DESCRIPTION} characters, a prompt {MAX_PROMPT}"
            )));
        }
        let Some(together) = &ctx.together else {
            return Err(ToolError::ExecutionFailed(
                "subagents need a conversation to run in".into(),
            ));
        };
        let job = TaskJob {
            description: description.to_string(),
            prompt: prompt.to_string(),
            tools,
            agent,
        };
        together.task(&ctx.call_id, job, &ctx.cancel).await
    }
}
