//! What the conversation spends, against its caps: each model's use for
//! `/cost`, this turn's (its subagents, the judge and compaction
//! included) and the caps as they stand (a person may raise one and go
//! on). Every response is counted here ([`super::Shared::spend`]).

use std::collections::BTreeMap;

use crate::protocol::Usage;
use crate::protocol::budget::{Caps, Standing};

pub(crate) struct Budget {
    /// What each model used in this session (a `/clear` forgets the
    /// conversation, not what it cost).
    pub(crate) spent: BTreeMap<String, Usage>,
    /// What this turn used so far.
    pub(crate) turn: Usage,
    pub(crate) caps: Caps,
}

impl Budget {
    pub(crate) fn new(spent: BTreeMap<String, Usage>, caps: Caps) -> Self {
        Self {
            spent,
            turn: Usage::default(),
            caps,
        }
    }

    /// What the whole session used.
    pub(crate) fn session(&self) -> Usage {
        let mut total = Usage::default();
        for u in self.spent.values() {
            total.add(*u);
        }
        total
    }

    pub(crate) fn spend(&mut self, model: &str, usage: Usage) {
        self.spent.entry(model.to_string()).or_default().add(usage);
        self.turn.add(usage);
    }

    /// The first session or turn cap reached, if one is.
    pub(crate) fn reached(&self) -> Option<Standing> {
        self.caps.reached(&self.session(), &self.turn)
    }
}
