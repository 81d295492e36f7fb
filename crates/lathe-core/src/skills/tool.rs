//! `skill`: the model loads a skill's instructions when its description
//! fits the task. The result is the instructions, the skill's directory
//! and its files, which the file tools may then read where they are.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::Skill;
use crate::protocol::{Effect, ToolKind};
use crate::tools::spec::{ToolContext, ToolError};
use crate::tools::typed::TypedTool;

pub struct SkillTool {
    description: String,
    names: Vec<String>,
    skills: Vec<Skill>,
}

impl SkillTool {
    pub fn new(skills: &[Skill]) -> Self {
        let listed = super::catalog(skills);
        // The choices are the names the catalog lists (it is bounded; the
        // schema is too).
        let names: Vec<String> = skills
            .iter()
            .filter(|s| {
                listed.lines().any(|l| {
                    l == format!("- {}", s.name) || l.starts_with(&format!("- {}: ", s.name))
                })
            })
            .map(|s| s.name.clone())
            .collect();
        let description = format!(
            "Load a skill: instructions for a kind of task, with the scripts and references it \
             points to. Before a task a skill below fits, call this with its name and follow \
             what it says. Its files are then readable with read_file and list_directory \
             (paths as given); run its scripts with exec_shell.\n\nSkills:\n{}",
            listed
        );
        Self {
            description,
            names,
            skills: skills.to_vec(),
        }
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The skill's name, as listed
    name: String,
}

/// A skill's instructions as the model reads them: where it lives, what
/// it holds, then its body.
pub(super) fn content(skill: &Skill) -> String {
    let files = if skill.files.is_empty() {
        String::new()
    } else {
        format!(
            "\nIts files (relative to {}):\n{}\n",
            skill.dir.display(),
            skill
                .files
                .iter()
                .map(|f| format!("- {f}"))
                .collect::<Vec<_>>()
                .join("\n")
        )
    };
    format!(
        "<skill name=\"{}\" directory=\"{}\">{files}\n{}\n</skill>",
        skill.name,
        skill.dir.display(),
        skill.body.trim_end()
    )
}

#[async_trait]
impl TypedTool for SkillTool {
    type Args = Args;

    fn name(&self) -> &'static str {
        "skill"
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    /// The names offered, as a choice.
    fn parameters(&self) -> Value {
        let mut schema = crate::tools::args::schema::<Args>();
        if let Some(name) = schema.pointer_mut("/properties/name") {
            name["enum"] = json!(self.names);
        }
        schema
    }

    async fn execute(&self, args: Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let Some(skill) = self.skills.iter().find(|s| s.name == args.name) else {
            return Err(ToolError::ExecutionFailed(format!(
                "no skill is called `{}`; the skills are: {}",
                args.name,
                self.names.join(", ")
            )));
        };
        if !ctx.workspace.allow_reading(&skill.dir) {
            return Err(ToolError::ExecutionFailed(format!(
                "the skill `{}` is no longer where it was found ({}): a link or another \
                 directory is in its place; it is not loaded",
                skill.name,
                skill.dir.display()
            )));
        }
        Ok(json!({
            "name": skill.name,
            "directory": skill.dir.display().to_string(),
            "files": skill.files,
            "instructions": content(skill),
        }))
    }
}
