//! What a session spent, read back from its record: by model and by
//! agent (the main one from its responses, the others from what their
//! records say).

use super::{Item, Record};
use crate::protocol::Usage;

/// What each model was paid for, over the whole record (what `/clear`
/// forgot included, and what subagents, the judge and compaction spent).
pub(super) fn usage_by_model(records: &[Record]) -> std::collections::BTreeMap<String, Usage> {
    let mut by_model: std::collections::BTreeMap<String, Usage> = std::collections::BTreeMap::new();
    for s in spent_by_agent(records) {
        by_model.entry(s.model).or_default().add(s.usage);
    }
    by_model
}

/// What each agent spent on each model, over the whole record: the main
/// agent's responses, and what the others' records say.
pub fn spent_by_agent(records: &[Record]) -> Vec<crate::protocol::budget::AgentSpend> {
    use crate::protocol::budget::{Agent, AgentSpend, add_spend};
    let mut out = Vec::new();
    let mut model = String::new();
    for r in records {
        match &r.item {
            Item::Session { model: m, .. } | Item::Model { model: m } => model.clone_from(m),
            Item::Assistant {
                usage, model: m, ..
            } => {
                let m = if m.is_empty() { &model } else { m };
                add_spend(
                    &mut out,
                    AgentSpend {
                        agent: Agent::Main,
                        task: None,
                        description: String::new(),
                        model: m.clone(),
                        usage: *usage,
                    },
                );
            }
            Item::Spent(s) => add_spend(&mut out, s.clone()),
            _ => {}
        }
    }
    out
}
