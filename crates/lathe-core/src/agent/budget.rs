//! What the conversation spends, against its caps: each model's use for
//! `/cost`, each agent's (the main one, each subagent, the judge, the
//! compaction of older turns), this turn's, and the caps as they stand (a
//! person may raise one and go on). Every response is counted here
//! ([`super::Shared::spend`]).

use std::collections::BTreeMap;

use crate::protocol::Usage;
use crate::protocol::budget::{Agent, AgentSpend, Caps, Standing, add_spend};

/// Who spends: an agent, and for a subagent its `task` call and job.
#[derive(Debug, Clone, Copy)]
pub(crate) struct By<'a> {
    pub(crate) agent: Agent,
    pub(crate) task: Option<&'a str>,
    pub(crate) description: &'a str,
}

impl By<'static> {
    pub(crate) const MAIN: Self = Self::of(Agent::Main);
    pub(crate) const JUDGE: Self = Self::of(Agent::Judge);
    pub(crate) const COMPACTION: Self = Self::of(Agent::Compaction);

    const fn of(agent: Agent) -> Self {
        Self {
            agent,
            task: None,
            description: "",
        }
    }
}

impl<'a> By<'a> {
    pub(crate) fn task(call: &'a str, description: &'a str) -> Self {
        Self {
            agent: Agent::Task,
            task: Some(call),
            description,
        }
    }

    pub(crate) fn spent(self, model: &str, usage: Usage) -> AgentSpend {
        AgentSpend {
            agent: self.agent,
            task: self.task.map(str::to_string),
            description: self.description.to_string(),
            model: model.to_string(),
            usage,
        }
    }
}

pub(crate) struct Budget {
    /// What each model used in this session (a `/clear` forgets the
    /// conversation, not what it cost).
    pub(crate) spent: BTreeMap<String, Usage>,
    /// The same, by agent.
    pub(crate) by_agent: Vec<AgentSpend>,
    /// What this turn used so far, by agent.
    pub(crate) turn: Vec<AgentSpend>,
    pub(crate) caps: Caps,
}

impl Budget {
    /// A session's budget; `spent` is what it had spent (resumed).
    pub(crate) fn new(spent: &[AgentSpend], caps: Caps) -> Self {
        let mut budget = Self {
            spent: BTreeMap::new(),
            by_agent: Vec::new(),
            turn: Vec::new(),
            caps,
        };
        for s in spent {
            budget.spend(s.clone());
        }
        budget.turn.clear();
        budget
    }

    /// What the whole session used.
    pub(crate) fn session(&self) -> Usage {
        sum(self.spent.values())
    }

    /// What this turn used, its subagents', the judge's and compaction's
    /// included.
    pub(crate) fn turn(&self) -> Usage {
        sum(self.turn.iter().map(|s| &s.usage))
    }

    pub(crate) fn spend(&mut self, spend: AgentSpend) {
        self.spent
            .entry(spend.model.clone())
            .or_default()
            .add(spend.usage);
        add_spend(&mut self.by_agent, spend.clone());
        add_spend(&mut self.turn, spend);
    }

    /// The first session or turn cap reached, or that the next request
    /// (`next`, [`next_request`]) would pass on its input alone.
    pub(crate) fn reached(&self, next: &Usage) -> Option<Standing> {
        self.caps
            .reached_before(&self.session(), &self.turn(), next)
    }
}

/// What a request of about `input` tokens costs before its output, the
/// `seen` of them that the last request sent and was answered with read
/// from the prompt cache (as the providers do for a prefix sent again):
/// the least it will cost, so a cap never stops a request that fits.
pub(crate) fn next_request(
    input: u64,
    seen: u64,
    price: Option<crate::provider::models::Price>,
) -> Usage {
    let mut usage = Usage {
        input_tokens: input,
        cache_read_tokens: seen.min(input),
        ..Usage::default()
    };
    usage.cost_usd = price.map(|p| p.cost(&usage));
    usage
}

fn sum<'a>(usages: impl Iterator<Item = &'a Usage>) -> Usage {
    let mut total = Usage::default();
    for u in usages {
        total.add(*u);
    }
    total
}
