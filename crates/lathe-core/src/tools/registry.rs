//! `ToolRegistry`: the tools the model may call, by name.
//!
//! Built with a builder or with the defaults; registering a name twice
//! replaces the earlier tool. Schemas come out sorted by name so the
//! prompt prefix stays byte-identical between requests (provider caches).
//! Each tool's argument validator is compiled once, here. Name resolution
//! forgives the usual model slips: an exact name first, then without a
//! leading `functions.`, then `server.tool` as `server__tool` (MCP tools).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::builtin::{self, BuiltinSettings};
use super::spec::{Tool, ToolError};
use super::validate::ArgValidator;
use crate::provider::ToolSchema;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("tool `{tool}` has an invalid parameter schema: {reason}")]
    InvalidSchema { tool: String, reason: String },
    #[error("tool name `{0}` is invalid: use 1-64 letters, digits, `_` or `-`")]
    InvalidName(String),
    #[error("tool name `{0}` is taken")]
    Taken(String),
}

/// A tool with its compiled validator and its schema for the model.
pub struct RegisteredTool {
    pub tool: Arc<dyn Tool>,
    pub schema: ToolSchema,
    validator: ArgValidator,
}

impl RegisteredTool {
    pub fn name(&self) -> &str {
        &self.schema.name
    }

    pub fn validate(&self, args: &Value) -> Result<(), ToolError> {
        self.validator.validate(args)
    }
}

impl std::fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.schema.name)
            .finish_non_exhaustive()
    }
}

/// Entries are shared: a registry extended with more tools (an MCP
/// server's) reuses the compiled validators of the ones it had.
#[derive(Debug, Default, Clone)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn builder() -> ToolRegistryBuilder {
        ToolRegistryBuilder::default()
    }

    /// The built-in tools: read_file, write_file, edit_file, list_directory,
    /// exec_shell.
    pub fn with_defaults(settings: &BuiltinSettings) -> Result<Self, RegistryError> {
        builtin::all(settings)
            .into_iter()
            .fold(Self::builder(), ToolRegistryBuilder::tool)
            .build()
    }

    /// Adds `tool`, replacing any tool of the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let name = tool.name().to_string();
        if name.is_empty()
            || name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(RegistryError::InvalidName(name));
        }
        let parameters = tool.parameters();
        let validator =
            ArgValidator::compile(&parameters).map_err(|reason| RegistryError::InvalidSchema {
                tool: name.clone(),
                reason,
            })?;
        let schema = ToolSchema {
            name: name.clone(),
            description: tool.description().to_string(),
            parameters,
        };
        if self.tools.contains_key(&name) {
            tracing::debug!(tool = %name, "tool registered again; the new one replaces the old");
        }
        self.tools.insert(
            name,
            Arc::new(RegisteredTool {
                tool,
                schema,
                validator,
            }),
        );
        Ok(())
    }

    /// This registry with `more` tools added (each replacing none of the
    /// ones here); the tools that could not be added, with why.
    pub fn extended(&self, more: Vec<Arc<dyn Tool>>) -> (Self, Vec<RegistryError>) {
        let mut out = self.clone();
        let mut refused = Vec::new();
        for tool in more {
            if out.tools.contains_key(tool.name()) {
                refused.push(RegistryError::Taken(tool.name().to_string()));
                continue;
            }
            if let Err(e) = out.register(tool) {
                refused.push(e);
            }
        }
        (out, refused)
    }

    /// Finds the tool a model asked for (see the module docs for the rules).
    pub fn resolve(&self, requested: &str) -> Result<&RegisteredTool, ToolError> {
        let requested = requested.trim();
        if requested.is_empty() {
            return Err(ToolError::NotFound(format!(
                "a call with no tool name; available tools: {}",
                self.names().join(", ")
            )));
        }
        if let Some(t) = self.get(requested) {
            return Ok(t);
        }
        let bare = requested.strip_prefix("functions.").unwrap_or(requested);
        if let Some(t) = self.get(bare) {
            return Ok(t);
        }
        if let Some((server, tool)) = bare.split_once('.')
            && let Some(t) = self.get(&format!("{server}__{tool}"))
        {
            return Ok(t);
        }
        Err(ToolError::NotFound(format!(
            "`{requested}`; available tools: {}",
            self.names().join(", ")
        )))
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name).map(|t| &**t)
    }

    /// Schemas for the model, sorted by name.
    pub fn schemas(&self) -> Vec<ToolSchema> {
        self.tools.values().map(|t| t.schema.clone()).collect()
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    #[cfg(any(test, feature = "internals"))]
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    #[cfg(any(test, feature = "internals"))]
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

#[derive(Default)]
pub struct ToolRegistryBuilder {
    tools: Vec<Arc<dyn Tool>>,
}

impl ToolRegistryBuilder {
    #[must_use]
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    pub fn build(self) -> Result<ToolRegistry, RegistryError> {
        let mut registry = ToolRegistry::new();
        for tool in self.tools {
            registry.register(tool)?;
        }
        Ok(registry)
    }
}

#[cfg(test)]
mod tests {
    use async_trait::async_trait;
    use serde_json::json;

    use super::*;
    use crate::protocol::Effect;
    use crate::tools::ToolContext;

    struct Named(&'static str, &'static str);

    #[async_trait]
    impl Tool for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            self.1
        }
        fn parameters(&self) -> Value {
            json!({"type": "object", "properties": {}})
        }
        fn effect(&self) -> Effect {
            Effect::Read
        }
        async fn execute(&self, _args: Value, _ctx: &ToolContext) -> Result<Value, ToolError> {
            Ok(json!(self.1))
        }
    }

    fn registry() -> ToolRegistry {
        ToolRegistry::builder()
            .tool(Arc::new(Named("zeta", "z")))
            .tool(Arc::new(Named("alpha", "a")))
            .tool(Arc::new(Named("github__search", "mcp")))
            .build()
            .unwrap()
    }

    #[test]
    fn schemas_are_sorted_by_name() {
        let names: Vec<_> = registry().schemas().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["alpha", "github__search", "zeta"]);
    }

    #[test]
    fn a_duplicate_name_replaces_the_earlier_tool() {
        let mut r = registry();
        r.register(Arc::new(Named("alpha", "second"))).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r.get("alpha").unwrap().schema.description, "second");
    }

    #[test]
    fn resolution_tries_exact_then_functions_prefix_then_dotted() {
        let r = registry();
        assert_eq!(r.resolve("alpha").unwrap().name(), "alpha");
        assert_eq!(r.resolve("functions.alpha").unwrap().name(), "alpha");
        assert_eq!(r.resolve("github.search").unwrap().name(), "github__search");
        assert_eq!(
            r.resolve("functions.github.search").unwrap().name(),
            "github__search"
        );
        match r.resolve("nope") {
            Err(ToolError::NotFound(m)) => {
                assert!(
                    m.contains("`nope`") && m.contains("alpha, github__search, zeta"),
                    "{m}"
                );
            }
            other => panic!("expected NotFound, got {other:?}"),
        }
    }

    #[test]
    fn invalid_names_and_schemas_are_refused() {
        struct Bad;
        #[async_trait]
        impl Tool for Bad {
            fn name(&self) -> &str {
                "bad"
            }
            fn description(&self) -> &str {
                ""
            }
            fn parameters(&self) -> Value {
                json!({"type": 5})
            }
            fn effect(&self) -> Effect {
                Effect::Read
            }
            async fn execute(&self, _: Value, _: &ToolContext) -> Result<Value, ToolError> {
                Ok(Value::Null)
            }
        }
        assert!(matches!(
            ToolRegistry::new().register(Arc::new(Bad)),
            Err(RegistryError::InvalidSchema { .. })
        ));
        assert!(matches!(
            ToolRegistry::new().register(Arc::new(Named("has space", ""))),
            Err(RegistryError::InvalidName(_))
        ));
    }
}
