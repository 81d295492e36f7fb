//! A built-in tool described once: [`TypedTool`]. Its arguments are one
//! type; the JSON Schema the model is told is generated from it, and a
//! call's JSON is read into it once ([`Tool::prepare`]), so every stage of
//! the pipeline (operations, the change, the preview, the run) works on
//! the same typed value and none parses again. A blanket implementation
//! makes every `TypedTool` a [`Tool`], which is what the registry, the
//! pipeline and MCP's tools share.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::args::{parse, schema};
use super::spec::{Prepared, Tool, ToolContext, ToolError};
use crate::policy::Workspace;
use crate::protocol::change::FileChange;
use crate::protocol::operation::Operation;
use crate::protocol::{Effect, Summary, ToolKind};

/// A tool whose arguments are one type. What it is (name, kind, effect),
/// what a call does (operations, change), and how it runs; the flags the
/// pipeline, plan mode, subagents and the judge read default from its
/// kind and effect.
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    /// The arguments, as the model sends them (doc comments are the
    /// descriptions it reads).
    type Args: DeserializeOwned + JsonSchema + Send + Sync + 'static;

    fn name(&self) -> &'static str;
    fn description(&self) -> &str;
    fn kind(&self) -> ToolKind;
    fn effect(&self) -> Effect;

    /// The JSON Schema of [`Self::Args`] (a tool that adds what a type
    /// cannot say, such as choices known only at run time, refines it).
    fn parameters(&self) -> Value {
        schema::<Self::Args>()
    }

    /// What a call will do (see [`Tool::operations`]).
    fn operations(
        &self,
        _args: &Self::Args,
        _workspace: &Workspace,
    ) -> Result<Vec<Operation>, ToolError> {
        Ok(Vec::new())
    }

    /// What a call would change in a file (see [`Tool::change`]).
    fn change(
        &self,
        _args: &Self::Args,
        _workspace: &Workspace,
    ) -> Result<Option<FileChange>, ToolError> {
        Ok(None)
    }

    /// What a call would change, as a unified diff (see [`Tool::preview`]).
    fn preview(
        &self,
        args: &Self::Args,
        workspace: &Workspace,
    ) -> Result<Option<String>, ToolError> {
        Ok(self.change(args, workspace)?.map(|c| c.unified()))
    }

    async fn execute(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError>;

    /// See [`Tool::summary`]: what its own result means.
    fn summary(&self, result: &Value) -> Option<Summary> {
        Summary::generic(result)
    }
    /// See [`Tool::only_looks`].
    fn only_looks(&self) -> bool {
        self.effect() == Effect::Read
    }
    /// See [`Tool::prints_unchecked`].
    fn prints_unchecked(&self) -> bool {
        super::spec::prints_unchecked(self.effect())
    }
    /// See [`Tool::offered_when_planning`].
    fn offered_when_planning(&self) -> bool {
        self.only_looks()
    }
    /// See [`Tool::deletes_files`].
    fn deletes_files(&self) -> bool {
        false
    }
    /// See [`Tool::subagent_may_use`].
    fn subagent_may_use(&self) -> bool {
        super::spec::subagent_may_use(self.kind())
    }
    /// See [`Tool::waits_for_person`].
    fn waits_for_person(&self) -> bool {
        false
    }
    /// See [`Tool::unsandboxed_retry`]: the new call's JSON, made from
    /// the call's as the model sent it.
    fn unsandboxed_retry(&self, _args: &Value, _result: &Value) -> Option<Value> {
        None
    }
}

/// A call of a typed tool, its arguments read once.
struct TypedCall<'t, T: TypedTool> {
    tool: &'t T,
    args: T::Args,
}

#[async_trait]
impl<T: TypedTool> Prepared for TypedCall<'_, T> {
    fn operations(&self, workspace: &Workspace) -> Result<Vec<Operation>, ToolError> {
        self.tool.operations(&self.args, workspace)
    }

    fn change(&self, workspace: &Workspace) -> Result<Option<FileChange>, ToolError> {
        self.tool.change(&self.args, workspace)
    }

    fn preview(&self, workspace: &Workspace) -> Result<Option<String>, ToolError> {
        self.tool.preview(&self.args, workspace)
    }

    async fn execute(self: Box<Self>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let TypedCall { tool, args } = *self;
        tool.execute(args, ctx).await
    }
}

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        TypedTool::name(self)
    }

    fn description(&self) -> &str {
        TypedTool::description(self)
    }

    fn parameters(&self) -> Value {
        TypedTool::parameters(self)
    }

    fn kind(&self) -> ToolKind {
        TypedTool::kind(self)
    }

    fn effect(&self) -> Effect {
        TypedTool::effect(self)
    }

    fn prepare<'t>(&'t self, args: &Value) -> Result<Box<dyn Prepared + 't>, ToolError> {
        Ok(Box::new(TypedCall {
            tool: self,
            args: parse(args)?,
        }))
    }

    fn operations(&self, args: &Value, workspace: &Workspace) -> Result<Vec<Operation>, ToolError> {
        TypedTool::operations(self, &parse(args)?, workspace)
    }

    fn preview(&self, args: &Value, workspace: &Workspace) -> Result<Option<String>, ToolError> {
        TypedTool::preview(self, &parse(args)?, workspace)
    }

    fn change(&self, args: &Value, workspace: &Workspace) -> Result<Option<FileChange>, ToolError> {
        TypedTool::change(self, &parse(args)?, workspace)
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        TypedTool::execute(self, parse(&args)?, ctx).await
    }

    fn summary(&self, result: &Value) -> Option<Summary> {
        TypedTool::summary(self, result)
    }

    fn only_looks(&self) -> bool {
        TypedTool::only_looks(self)
    }

    fn prints_unchecked(&self) -> bool {
        TypedTool::prints_unchecked(self)
    }

    fn offered_when_planning(&self) -> bool {
        TypedTool::offered_when_planning(self)
    }

    fn deletes_files(&self) -> bool {
        TypedTool::deletes_files(self)
    }

    fn subagent_may_use(&self) -> bool {
        TypedTool::subagent_may_use(self)
    }

    fn waits_for_person(&self) -> bool {
        TypedTool::waits_for_person(self)
    }

    fn unsandboxed_retry(&self, args: &Value, result: &Value) -> Option<Value> {
        TypedTool::unsandboxed_retry(self, args, result)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;

    static READS: AtomicUsize = AtomicUsize::new(0);

    fn counted<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        READS.fetch_add(1, Ordering::SeqCst);
        <String as serde::Deserialize>::deserialize(d)
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Args {
        /// A path.
        #[serde(deserialize_with = "counted")]
        path: String,
    }

    struct Probe;

    #[async_trait]
    impl TypedTool for Probe {
        type Args = Args;

        fn name(&self) -> &'static str {
            "probe"
        }
        fn description(&self) -> &str {
            "reads its arguments"
        }
        fn kind(&self) -> ToolKind {
            ToolKind::Read
        }
        fn effect(&self) -> Effect {
            Effect::Read
        }
        fn preview(&self, args: &Args, _: &Workspace) -> Result<Option<String>, ToolError> {
            Ok(Some(args.path.clone()))
        }
        async fn execute(&self, args: Args, _: &ToolContext) -> Result<Value, ToolError> {
            Ok(json!({ "path": args.path }))
        }
    }

    /// A prepared call reads the model's JSON into the tool's type once:
    /// the operations, the change, the preview and the run all get that
    /// value. Arguments the type cannot take are the call's error.
    #[tokio::test]
    async fn a_call_is_read_once_for_every_stage() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let ctx = ToolContext::standalone(std::sync::Arc::new(ws.clone()));
        let call = Tool::prepare(&Probe, &json!({"path": "a.rs"})).unwrap();
        call.operations(&ws).unwrap();
        call.change(&ws).unwrap();
        assert_eq!(call.preview(&ws).unwrap().as_deref(), Some("a.rs"));
        let out = call.execute(&ctx).await.unwrap();
        assert_eq!(out["path"], "a.rs");
        assert_eq!(READS.load(Ordering::SeqCst), 1);
        let refused = Tool::prepare(&Probe, &json!({"path": 3}));
        assert!(matches!(refused, Err(ToolError::InvalidArgs(_))));
        // The schema is the type's.
        assert_eq!(
            Tool::parameters(&Probe)["properties"]["path"]["type"],
            "string"
        );
    }
}
