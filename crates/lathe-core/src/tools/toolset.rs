//! `Toolset`: the registry a conversation uses, which may change while it
//! runs. The built-ins never change; each other source (an MCP server)
//! says when its tools did (a generation number), and the next snapshot
//! (taken once per model request, and once per batch of calls) is built
//! anew: sorted by name, sharing the built-ins' compiled validators. A
//! call resolves against the snapshot it was dispatched with, so a tool
//! that disappeared since is a clear `NotFound`, never a panic.

use std::sync::{Arc, RwLock};

use super::registry::ToolRegistry;
use super::spec::Tool;
use crate::provider::ToolSchema;

/// Tools that may come and go.
#[async_trait::async_trait]
pub trait ToolSource: Send + Sync {
    /// Changes whenever [`ToolSource::tools`] would return something else.
    fn generation(&self) -> u64;
    /// The tools now.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
    /// Waits until the source is done starting (bounded by the source).
    async fn settle(&self) {}
}

/// The tools at one moment.
#[derive(Debug)]
pub struct Snapshot {
    pub registry: ToolRegistry,
    pub schemas: Vec<ToolSchema>,
    generations: Vec<u64>,
}

pub struct Toolset {
    /// The built-ins, with how often one was put anew
    /// ([`Toolset::replace_builtin`]) or the deferral changed.
    base: RwLock<(ToolRegistry, u64)>,
    /// How many bytes the sources' schemas may take before those that
    /// may wait are deferred behind `tool_search`; none, never.
    defer_above: RwLock<Option<usize>>,
    sources: Vec<Arc<dyn ToolSource>>,
    current: RwLock<Arc<Snapshot>>,
}

impl std::fmt::Debug for Toolset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolset")
            .field("sources", &self.sources.len())
            .finish_non_exhaustive()
    }
}

impl Toolset {
    /// A set of fixed tools only.
    #[cfg(any(test, feature = "internals"))]
    pub fn fixed(base: ToolRegistry) -> Self {
        Self::new(base, Vec::new())
    }

    pub fn new(base: ToolRegistry, sources: Vec<Arc<dyn ToolSource>>) -> Self {
        let first = Arc::new(build(&base, 0, &sources, None));
        Self {
            base: RwLock::new((base, 0)),
            defer_above: RwLock::new(None),
            sources,
            current: RwLock::new(first),
        }
    }

    /// Defers the sources' schemas (those that may wait) behind
    /// `tool_search` when together they take more than `bytes`: from the
    /// next snapshot.
    pub fn defer_above(&self, bytes: Option<usize>) {
        let mut defer = self
            .defer_above
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *defer != bytes {
            *defer = bytes;
            self.base
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .1 += 1;
        }
    }

    /// Puts `tool` in place of the built-in of its name (`task`, once the
    /// workspace's agent types are trusted): the next snapshot has it.
    pub fn replace_builtin(&self, tool: Arc<dyn Tool>) {
        let mut base = self
            .base
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match base.0.register(tool) {
            Ok(()) => base.1 += 1,
            Err(e) => tracing::warn!(error = %e, "a built-in could not be replaced"),
        }
    }

    /// Waits for every source still starting (before a turn's first
    /// request, so the model sees their tools).
    pub async fn settle(&self) {
        for source in &self.sources {
            source.settle().await;
        }
    }

    /// The tools now; rebuilt only when a source changed.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        let base_generation = self
            .base
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .1;
        let now: Vec<u64> = std::iter::once(base_generation)
            .chain(self.sources.iter().map(|s| s.generation()))
            .collect();
        {
            let current = self
                .current
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if current.generations == now {
                return current.clone();
            }
        }
        let fresh = {
            let defer = *self
                .defer_above
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let base = self
                .base
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            Arc::new(build(&base.0, base.1, &self.sources, defer))
        };
        *self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = fresh.clone();
        fresh
    }
}

fn build(
    base: &ToolRegistry,
    base_generation: u64,
    sources: &[Arc<dyn ToolSource>],
    defer_above: Option<usize>,
) -> Snapshot {
    // Generations first: a change while the tools are read shows at the
    // next snapshot rather than never.
    let generations = std::iter::once(base_generation)
        .chain(sources.iter().map(|s| s.generation()))
        .collect();
    let more: Vec<Arc<dyn Tool>> = sources.iter().flat_map(|s| s.tools()).collect();
    let from_sources: Vec<(String, bool)> = more
        .iter()
        .map(|t| (t.name().to_string(), t.deferrable()))
        .collect();
    let (mut registry, refused) = base.extended(more);
    for e in refused {
        tracing::warn!(error = %e, "a tool was left out");
    }
    let mut schemas = registry.schemas();
    if let Some(limit) = defer_above {
        let theirs = |s: &ToolSchema| from_sources.iter().any(|(n, _)| *n == s.name);
        let size: usize = schemas.iter().filter(|s| theirs(s)).map(schema_size).sum();
        let may_wait = |s: &ToolSchema| from_sources.iter().any(|(n, d)| *d && *n == s.name);
        if size > limit && schemas.iter().any(may_wait) {
            let (deferred, mut kept): (Vec<ToolSchema>, Vec<ToolSchema>) =
                schemas.into_iter().partition(may_wait);
            let search: Arc<dyn Tool> = Arc::new(super::tool_search::ToolSearch::new(deferred));
            match registry.register(search) {
                Ok(()) => {
                    if let Ok(t) = registry.resolve(super::tool_search::NAME) {
                        kept.push(t.schema.clone());
                    }
                    kept.sort_by(|a, b| a.name.cmp(&b.name));
                    schemas = kept;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "tool_search could not be offered");
                    schemas = registry.schemas();
                }
            }
        }
    }
    Snapshot {
        schemas,
        registry,
        generations,
    }
}

/// About how many bytes a schema takes in a request.
fn schema_size(s: &ToolSchema) -> usize {
    s.name.len() + s.description.len() + s.parameters.to_string().len()
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU64, Ordering};

    use async_trait::async_trait;
    use serde_json::{Value, json};

    use super::*;
    use crate::protocol::Effect;
    use crate::tools::{ToolContext, ToolError};

    struct Named(String);

    #[async_trait]
    impl Tool for Named {
        fn name(&self) -> &str {
            &self.0
        }
        fn description(&self) -> &str {
            ""
        }
        fn parameters(&self) -> Value {
            json!({"type": "object"})
        }
        fn effect(&self) -> Effect {
            Effect::External
        }
        async fn execute(&self, _: Value, _: &ToolContext) -> Result<Value, ToolError> {
            Ok(Value::Null)
        }
    }

    #[derive(Default)]
    struct Source {
        generation: AtomicU64,
        names: Mutex<Vec<String>>,
    }

    #[async_trait]
    impl ToolSource for Source {
        fn generation(&self) -> u64 {
            self.generation.load(Ordering::SeqCst)
        }
        fn tools(&self) -> Vec<Arc<dyn Tool>> {
            self.names
                .lock()
                .unwrap()
                .iter()
                .map(|n| Arc::new(Named(n.clone())) as Arc<dyn Tool>)
                .collect()
        }
    }

    #[test]
    fn a_source_that_changes_changes_the_next_snapshot_only() {
        let base = ToolRegistry::builder()
            .tool(Arc::new(Named("read_file".into())))
            .build()
            .unwrap();
        let source = Arc::new(Source::default());
        *source.names.lock().unwrap() = vec!["srv__b".into(), "srv__a".into()];
        let set = Toolset::new(base, vec![source.clone() as Arc<dyn ToolSource>]);
        let before = set.snapshot();
        assert_eq!(before.registry.names(), ["read_file", "srv__a", "srv__b"]);
        assert!(Arc::ptr_eq(&before, &set.snapshot()), "nothing changed");
        *source.names.lock().unwrap() = vec!["srv__a".into(), "read_file".into()];
        source.generation.fetch_add(1, Ordering::SeqCst);
        let after = set.snapshot();
        assert_eq!(
            after.registry.names(),
            ["read_file", "srv__a"],
            "a source cannot replace a built-in"
        );
        assert!(
            before.registry.resolve("srv__b").is_ok(),
            "the old snapshot keeps it"
        );
        assert!(after.registry.resolve("srv__b").is_err());
    }

    /// `task` put anew (the workspace's agent types trusted) shows in the
    /// next snapshot, and only there.
    #[test]
    fn a_builtin_put_anew_shows_in_the_next_snapshot() {
        let base = ToolRegistry::builder()
            .tool(Arc::new(crate::tools::builtin::Task::new(Vec::new())))
            .build()
            .unwrap();
        let set = Toolset::new(base, Vec::new());
        let before = set.snapshot();
        assert!(!before.schemas[0].description.contains("reviewer"));
        set.replace_builtin(Arc::new(crate::tools::builtin::Task::new(vec![(
            "reviewer".into(),
            "Reviews".into(),
        )])));
        let after = set.snapshot();
        assert!(after.schemas[0].description.contains("- reviewer: Reviews"));
        assert_eq!(
            after.schemas[0].parameters["properties"]["agent"]["enum"],
            serde_json::json!(["reviewer"])
        );
        assert!(!before.schemas[0].description.contains("reviewer"));
        assert!(
            Arc::ptr_eq(&after, &set.snapshot()),
            "nothing changed since"
        );
    }
}
