//! What a session, a turn and each subagent may spend ([`Caps`]: the
//! `[limits]` of the config, `--max-budget-usd`, `--max-turn-tokens`), and
//! how what was spent stands against them. The core stops a turn between
//! steps at a cap; a front end shows the spend against the caps and warns
//! as it nears one ([`WARN_AT`]).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::Usage;

/// The share of a cap past which a front end warns.
pub const WARN_AT: f64 = 0.8;

/// The caps; `None` is no cap. Dollars count only where the model's
/// prices are known; tokens count always (input and output of every
/// request, the subagents' too).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Caps {
    /// The whole session (every turn, model and subagent, before a
    /// resume too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_usd: Option<f64>,
    /// One turn, its subagents included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_tokens: Option<u64>,
    /// Each subagent (`task`) on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_tokens: Option<u64>,
}

/// One of the caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cap {
    SessionUsd,
    TurnUsd,
    TurnTokens,
    TaskUsd,
    TaskTokens,
}

impl Cap {
    /// Whether it counts dollars (else tokens).
    pub fn is_usd(self) -> bool {
        matches!(self, Cap::SessionUsd | Cap::TurnUsd | Cap::TaskUsd)
    }

    /// What it is a cap on, in a person's words.
    pub fn scope(self) -> &'static str {
        match self {
            Cap::SessionUsd => "the session's budget",
            Cap::TurnUsd | Cap::TurnTokens => "the turn's budget",
            Cap::TaskUsd | Cap::TaskTokens => "the subagent's budget",
        }
    }

    /// An amount of it: `$1.25`, `120,000 tokens`.
    pub fn amount(self, n: f64) -> String {
        if self.is_usd() {
            usd(n)
        } else {
            format!("{} tokens", thousands(n.max(0.0).round() as u64))
        }
    }

    /// The config key and the flag that set it.
    pub fn setting(self) -> &'static str {
        match self {
            Cap::SessionUsd => "[limits] session_usd (--max-budget-usd)",
            Cap::TurnUsd => "[limits] turn_usd",
            Cap::TurnTokens => "[limits] turn_tokens (--max-turn-tokens)",
            Cap::TaskUsd => "[limits] task_usd",
            Cap::TaskTokens => "[limits] task_tokens",
        }
    }
}

/// Dollars as a person reads them: cents, or more digits below a cent.
pub fn usd(n: f64) -> String {
    if n != 0.0 && n.abs() < 0.01 {
        format!("${n:.4}")
    } else {
        format!("${n:.2}")
    }
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// How much of a cap is spent, and what the next request is reckoned to
/// add to it before it is sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    pub cap: Cap,
    pub spent: f64,
    pub limit: f64,
    /// The next request's input, reckoned before it is sent (its output
    /// cannot be known): a request that would pass the cap on its input
    /// alone is not sent. 0 when nothing is reckoned.
    pub next: f64,
}

impl Standing {
    /// The share spent (1.0 and over: the cap is reached).
    pub fn share(&self) -> f64 {
        if self.limit <= 0.0 {
            return f64::INFINITY;
        }
        self.spent / self.limit
    }

    /// Whether the cap is spent, or the next request's input alone would
    /// pass it.
    pub fn reached(&self) -> bool {
        self.spent >= self.limit || self.spent + self.next.max(0.0) > self.limit
    }

    /// `$0.84 of $1.00`.
    pub fn words(&self) -> String {
        format!(
            "{} of {}",
            self.cap.amount(self.spent),
            self.cap.amount(self.limit)
        )
    }
}

impl fmt::Display for Standing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.spent < self.limit && self.next > 0.0 {
            return write!(
                f,
                "{} ({}) would be passed by the next request: {} spent, its input alone about {}",
                self.cap.scope(),
                self.cap.amount(self.limit),
                self.cap.amount(self.spent),
                self.cap.amount(self.next)
            );
        }
        write!(
            f,
            "{} ({}) is spent: {}",
            self.cap.scope(),
            self.cap.amount(self.limit),
            self.cap.amount(self.spent)
        )
    }
}

/// Whether `n` is nothing (what is not reckoned is not written).
pub fn is_zero(n: &f64) -> bool {
    *n == 0.0
}

/// The tokens a usage counts against a token cap: every input token
/// (cached or not: each request is billed whole) and every output token.
pub fn tokens(u: &Usage) -> u64 {
    u.input_tokens.saturating_add(u.output_tokens)
}

impl Caps {
    /// The session's and the turn's caps, each with what `session` and
    /// `turn` spent against it, the nearest to its cap first.
    pub fn standings(&self, session: &Usage, turn: &Usage) -> Vec<Standing> {
        self.standings_before(session, turn, &Usage::default())
    }

    /// The same, with `next`, what the next request is reckoned to use.
    pub fn standings_before(&self, session: &Usage, turn: &Usage, next: &Usage) -> Vec<Standing> {
        let usd = |u: &Usage| u.cost_usd.unwrap_or(0.0);
        let next_of = |cap: Cap| {
            if cap.is_usd() {
                usd(next)
            } else {
                tokens(next) as f64
            }
        };
        let mut out: Vec<Standing> = [
            (Cap::SessionUsd, self.session_usd, usd(session)),
            (Cap::TurnUsd, self.turn_usd, usd(turn)),
            (
                Cap::TurnTokens,
                self.turn_tokens.map(|n| n as f64),
                tokens(turn) as f64,
            ),
        ]
        .into_iter()
        .filter_map(|(cap, limit, spent)| {
            limit.map(|limit| Standing {
                cap,
                spent,
                limit,
                next: next_of(cap),
            })
        })
        .collect();
        out.sort_by(|a, b| b.share().total_cmp(&a.share()));
        out
    }

    /// A subagent's caps, with what it spent (`task`) and what its next
    /// request is reckoned to use (`next`).
    pub fn task_standings(&self, task: &Usage, next: &Usage) -> Vec<Standing> {
        [
            (
                Cap::TaskUsd,
                self.task_usd,
                task.cost_usd.unwrap_or(0.0),
                next.cost_usd.unwrap_or(0.0),
            ),
            (
                Cap::TaskTokens,
                self.task_tokens.map(|n| n as f64),
                tokens(task) as f64,
                tokens(next) as f64,
            ),
        ]
        .into_iter()
        .filter_map(|(cap, limit, spent, next)| {
            limit.map(|limit| Standing {
                cap,
                spent,
                limit,
                next,
            })
        })
        .collect()
    }

    /// The first cap reached, if one is.
    pub fn reached(&self, session: &Usage, turn: &Usage) -> Option<Standing> {
        self.reached_before(session, turn, &Usage::default())
    }

    /// The first cap reached, or that the next request (`next`) would
    /// pass on its input alone.
    pub fn reached_before(&self, session: &Usage, turn: &Usage, next: &Usage) -> Option<Standing> {
        self.standings_before(session, turn, next)
            .into_iter()
            .find(Standing::reached)
    }

    /// The value of `cap`.
    pub fn get(&self, cap: Cap) -> Option<f64> {
        match cap {
            Cap::SessionUsd => self.session_usd,
            Cap::TurnUsd => self.turn_usd,
            Cap::TurnTokens => self.turn_tokens.map(|n| n as f64),
            Cap::TaskUsd => self.task_usd,
            Cap::TaskTokens => self.task_tokens.map(|n| n as f64),
        }
    }

    /// Sets `cap` to `to`.
    pub fn set(&mut self, cap: Cap, to: f64) {
        let tokens = || Some(to.max(0.0).round() as u64);
        match cap {
            Cap::SessionUsd => self.session_usd = Some(to),
            Cap::TurnUsd => self.turn_usd = Some(to),
            Cap::TurnTokens => self.turn_tokens = tokens(),
            Cap::TaskUsd => self.task_usd = Some(to),
            Cap::TaskTokens => self.task_tokens = tokens(),
        }
    }

    /// What raising a reached cap gives: as much again as it was set to
    /// (`base`), past what is spent and what the next request would add.
    pub fn raised(base: &Caps, standing: &Standing) -> f64 {
        let step = base
            .get(standing.cap)
            .filter(|b| *b > 0.0)
            .unwrap_or(standing.limit.max(1.0));
        let needed = standing.spent + standing.next.max(0.0);
        let to = standing.limit + step;
        if to > needed {
            to
        } else {
            // Past what is needed, however small the step beside it.
            (needed + step).max(needed.next_up())
        }
    }

    /// The lower of two caps, key by key (a workspace may only lower).
    pub fn lowest(&self, other: &Caps) -> Caps {
        fn min<T: PartialOrd + Copy>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(if b < a { b } else { a }),
                (a, b) => a.or(b),
            }
        }
        Caps {
            session_usd: min(self.session_usd, other.session_usd),
            turn_usd: min(self.turn_usd, other.turn_usd),
            turn_tokens: min(self.turn_tokens, other.turn_tokens),
            task_usd: min(self.task_usd, other.task_usd),
            task_tokens: min(self.task_tokens, other.task_tokens),
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == Caps::default()
    }
}

/// Who spent: the conversation's own model, a subagent, the judge, or
/// the compaction of older turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Agent {
    Main,
    Task,
    Judge,
    Compaction,
}

/// What one agent spent on one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentSpend {
    pub agent: Agent,
    /// A subagent's `task` call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// A subagent's job, as the model described it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub model: String,
    pub usage: Usage,
}

impl AgentSpend {
    /// `main`, `task t1 (find the tests)`, `judge`.
    pub fn who(&self) -> String {
        match (self.agent, &self.task) {
            (Agent::Main, _) => "main".into(),
            (Agent::Judge, _) => "judge".into(),
            (Agent::Compaction, _) => "compaction".into(),
            (Agent::Task, task) => {
                let id = task.as_deref().unwrap_or("?");
                if self.description.is_empty() {
                    format!("task {id}")
                } else {
                    format!(
                        "task {id} ({})",
                        crate::text::shorten_chars(&self.description, 40)
                    )
                }
            }
        }
    }
}

/// What the agents other than the main one cost, by kind, as a person
/// reads it in a list: `subagents $0.12, judge $0.01` (`None` when none
/// spent, or no price is known).
pub fn others_words(by_agent: &[AgentSpend]) -> Option<String> {
    let mut parts = Vec::new();
    for (agent, name) in [
        (Agent::Task, "subagents"),
        (Agent::Judge, "judge"),
        (Agent::Compaction, "compaction"),
    ] {
        let cost: Option<f64> = by_agent
            .iter()
            .filter(|s| s.agent == agent)
            .filter_map(|s| s.usage.cost_usd)
            .reduce(|a, b| a + b);
        if let Some(c) = cost {
            parts.push(format!("{name} {}", usd(c)));
        }
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// A subagent's job is the model's words.
impl crate::redact::Redact for AgentSpend {
    fn redact(&mut self, s: &dyn crate::redact::Scrub) {
        self.description.redact(s);
    }
}

/// Adds `spend` to `list`, to the entry of the same agent, task and
/// model if there is one.
pub fn add_spend(list: &mut Vec<AgentSpend>, spend: AgentSpend) {
    match list
        .iter_mut()
        .find(|s| s.agent == spend.agent && s.task == spend.task && s.model == spend.model)
    {
        Some(s) => s.usage.add(spend.usage),
        None => list.push(spend),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn spent(usd: Option<f64>, input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cost_usd: usd,
            ..Usage::default()
        }
    }

    #[test]
    fn the_nearest_cap_comes_first_and_a_reached_one_is_named() {
        let caps = Caps {
            session_usd: Some(1.0),
            turn_tokens: Some(10_000),
            ..Caps::default()
        };
        let s = caps.standings(&spent(Some(0.5), 0, 0), &spent(None, 8_000, 500));
        assert_eq!(s[0].cap, Cap::TurnTokens);
        assert!(s[0].share() > WARN_AT && !s[0].reached());
        assert_eq!(s[0].words(), "8,500 tokens of 10,000 tokens");
        let r = caps
            .reached(&spent(Some(1.02), 0, 0), &spent(None, 1, 1))
            .expect("the session's cap");
        assert_eq!(r.cap, Cap::SessionUsd);
        assert_eq!(
            r.to_string(),
            "the session's budget ($1.00) is spent: $1.02"
        );
        // Unknown prices spend no dollars: only tokens can hold them.
        assert!(
            caps.reached(&spent(None, 9_000_000, 0), &spent(None, 0, 0))
                .is_none()
        );
        assert_eq!(usd(0.0004), "$0.0004");
    }

    #[test]
    fn a_request_whose_input_would_pass_the_cap_is_not_sent() {
        let caps = Caps {
            turn_usd: Some(1.0),
            ..Caps::default()
        };
        let turn = spent(Some(0.93), 0, 0);
        let next = spent(Some(0.10), 40_000, 0);
        let r = caps
            .reached_before(&turn, &turn, &next)
            .expect("the next request passes the cap");
        assert_eq!(
            r.to_string(),
            "the turn's budget ($1.00) would be passed by the next request: $0.93 spent, its \
             input alone about $0.10"
        );
        assert!(Caps::raised(&caps, &r) > 1.03);
        // One that fits is sent.
        let small = spent(Some(0.05), 20_000, 0);
        assert!(caps.reached_before(&turn, &turn, &small).is_none());
    }

    #[test]
    fn a_raise_passes_what_is_spent_and_a_workspace_only_lowers() {
        let base = Caps {
            session_usd: Some(2.0),
            ..Caps::default()
        };
        let st = Standing {
            cap: Cap::SessionUsd,
            spent: 4.5,
            limit: 2.0,
            next: 0.0,
        };
        assert_eq!(Caps::raised(&base, &st), 6.5);
        let ws = Caps {
            session_usd: Some(5.0),
            turn_usd: Some(0.5),
            ..Caps::default()
        };
        let low = base.lowest(&ws);
        assert_eq!(low.session_usd, Some(2.0));
        assert_eq!(low.turn_usd, Some(0.5));
    }

    proptest! {
        /// Whatever was spent and set (zero, negative, NaN, huge), the
        /// standings never panic, a raise always passes what is spent,
        /// and `reached` names a cap only when it is reached.
        #[test]
        fn standings_hold_for_any_numbers(
            cap in prop::option::of(any::<f64>()),
            tokens_cap in prop::option::of(any::<u64>()),
            cost in prop::option::of(any::<f64>()),
            input in any::<u64>(),
            output in any::<u64>(),
        ) {
            let caps = Caps { session_usd: cap, turn_usd: cap, turn_tokens: tokens_cap, ..Caps::default() };
            let u = spent(cost, input, output);
            for s in caps.standings(&u, &u) {
                let _ = (s.words(), s.to_string(), s.share());
                if s.spent.is_finite() && s.limit.is_finite() && s.limit > 0.0 && s.spent < f64::MAX {
                    let to = Caps::raised(&caps, &s);
                    prop_assert!(to > s.spent);
                }
            }
            if let Some(r) = caps.reached(&u, &u) {
                prop_assert!(r.spent >= r.limit);
            }
        }

        /// A next request counts only as far as it would pass the cap:
        /// what is reached is spent or passed with it, and a raise makes
        /// room for it.
        #[test]
        fn the_next_request_counts_before_it_is_sent(
            cap in 0.01f64..100.0,
            cost in 0.0f64..100.0,
            next in prop::option::of(any::<f64>()),
            input in 0u64..1_000_000,
        ) {
            let caps = Caps { turn_usd: Some(cap), turn_tokens: Some(500_000), ..Caps::default() };
            let u = spent(Some(cost), input, 0);
            let n = spent(next, input, 0);
            if let Some(r) = caps.reached_before(&u, &u, &n) {
                let next = if r.next.is_nan() { 0.0 } else { r.next.max(0.0) };
                prop_assert!(r.spent >= r.limit || r.spent + next > r.limit);
                let _ = r.to_string();
                if r.next.is_finite() && r.next < 1e12 {
                    prop_assert!(Caps::raised(&caps, &r) > r.spent + next);
                }
            } else {
                prop_assert!(cost < cap);
            }
        }
    }
}
