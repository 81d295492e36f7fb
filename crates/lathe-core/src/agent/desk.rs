//! What the model and the person share while a turn runs: the questions
//! the model asks (`ask_user`, answered with `Op::Answer`, one at a time),
//! its plan (`update_plan`), and the messages the person sends while it
//! works (`Op::Steer`), which go to the model with its next request.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::Emitter;
use crate::protocol::{AgentEvent, AskedQuestion, PlanStep};
use crate::tools::{Asked, Together};

/// The conversation's side of `ask_user`, `update_plan` and steering.
pub(crate) struct Desk {
    emitter: Emitter,
    /// Whether a person answers (a front end that answers approvals);
    /// headless, no one does.
    interactive: bool,
    /// The turn running, for the events.
    turn: AtomicU64,
    /// One question at a time: the person reads one panel.
    one_at_a_time: tokio::sync::Mutex<()>,
    waiting: Mutex<HashMap<String, oneshot::Sender<Option<String>>>>,
    /// The person's message that began this turn (the judge reads it).
    prompt: Mutex<String>,
    /// The questions of this turn, with their answers.
    asked: Mutex<Vec<AskedQuestion>>,
    /// Messages sent while the turn runs, not yet given to the model.
    steering: Mutex<Vec<String>>,
    /// The conversation, for subagents (set once it exists).
    shared: std::sync::OnceLock<std::sync::Weak<super::Shared>>,
    /// Subagents run a few at a time.
    tasks: tokio::sync::Semaphore,
}

impl std::fmt::Debug for Desk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Desk")
            .field("interactive", &self.interactive)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Desk {
    pub(crate) fn new(emitter: Emitter, interactive: bool) -> Self {
        Self {
            emitter,
            interactive,
            turn: AtomicU64::new(0),
            one_at_a_time: tokio::sync::Mutex::new(()),
            waiting: Mutex::new(HashMap::new()),
            asked: Mutex::new(Vec::new()),
            prompt: Mutex::new(String::new()),
            steering: Mutex::new(Vec::new()),
            shared: std::sync::OnceLock::new(),
            tasks: tokio::sync::Semaphore::new(super::task::MAX_CONCURRENT),
        }
    }

    /// Whether a person answers (a front end that answers approvals).
    pub(crate) fn interactive(&self) -> bool {
        self.interactive
    }

    /// The conversation the desk serves (subagents run in it).
    pub(crate) fn attach(&self, shared: std::sync::Weak<super::Shared>) {
        let _ = self.shared.set(shared);
    }

    /// A turn begins: its questions are its own.
    pub(crate) fn begin(&self, turn_id: u64, prompt: &str) {
        self.turn.store(turn_id, Ordering::Relaxed);
        prompt.clone_into(&mut lock(&self.prompt));
        lock(&self.asked).clear();
    }

    /// The person's message that began the turn.
    pub(crate) fn prompt(&self) -> String {
        lock(&self.prompt).clone()
    }

    /// The questions of the turn, for `turn_completed`.
    pub(crate) fn take_asked(&self) -> Vec<AskedQuestion> {
        std::mem::take(&mut *lock(&self.asked))
    }

    /// The person's answer to a question (one for no question waiting is
    /// ignored).
    pub(crate) fn answer(&self, call_id: &str, answer: Option<String>) {
        match lock(&self.waiting).remove(call_id) {
            Some(tx) => {
                let _ = tx.send(answer);
            }
            None => tracing::debug!(%call_id, "answer for no waiting question; ignored"),
        }
    }

    /// A message for the running turn's next request.
    pub(crate) fn steer(&self, text: String) {
        lock(&self.steering).push(text);
    }

    /// The messages sent while the turn ran, taken.
    pub(crate) fn take_steering(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.steering))
    }
}

impl Desk {
    /// A question to the person, from the model (`None`) or another.
    async fn asked_by(
        &self,
        from: Option<&str>,
        call_id: &str,
        question: &str,
        choices: &[String],
        cancel: &CancellationToken,
    ) -> Asked {
        let mut asked = AskedQuestion {
            call_id: call_id.to_string(),
            question: question.to_string(),
            choices: choices.to_vec(),
            answer: None,
        };
        if !self.interactive {
            lock(&self.asked).push(asked);
            return Asked::NoOne;
        }
        let _turn_to_ask = tokio::select! {
            g = self.one_at_a_time.lock() => g,
            () = cancel.cancelled() => return Asked::Declined,
        };
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(call_id.to_string(), tx);
        self.emitter.emit(AgentEvent::QuestionAsked {
            turn_id: self.turn.load(Ordering::Relaxed),
            call_id: call_id.to_string(),
            question: question.to_string(),
            choices: choices.to_vec(),
            from: from.map(str::to_owned),
        });
        // The person is told through the `notification` hooks meanwhile
        // (the answer does not wait for them).
        let shared = self.shared.get().and_then(std::sync::Weak::upgrade);
        let notify = async {
            if let Some(shared) = &shared {
                super::events::fire(
                    shared,
                    crate::policy::session_hooks::SessionEvent::Notification,
                    "elicitation_dialog",
                    serde_json::json!({
                        "message": format!("Lathe asks: {question}"),
                        "notification_type": "elicitation_dialog",
                    }),
                )
                .await;
            }
        };
        tokio::pin!(notify, rx);
        let mut told = false;
        let answer = loop {
            tokio::select! {
                a = &mut rx => break a.ok().flatten(),
                () = cancel.cancelled() => break None,
                () = &mut notify, if !told => told = true,
            }
        };
        lock(&self.waiting).remove(call_id);
        let answer = answer
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty());
        asked.answer.clone_from(&answer);
        lock(&self.asked).push(asked);
        match answer {
            Some(a) => Asked::Answer(a),
            None => Asked::Declined,
        }
    }
}

#[async_trait]
impl Together for Desk {
    async fn ask(
        &self,
        call_id: &str,
        question: &str,
        choices: &[String],
        cancel: &CancellationToken,
    ) -> Asked {
        self.asked_by(None, call_id, question, choices, cancel)
            .await
    }

    async fn ask_from(
        &self,
        from: &str,
        call_id: &str,
        question: &str,
        choices: &[String],
        cancel: &CancellationToken,
    ) -> Asked {
        self.asked_by(Some(from), call_id, question, choices, cancel)
            .await
    }

    async fn task(
        &self,
        call_id: &str,
        job: crate::tools::spec::TaskJob,
        cancel: &CancellationToken,
    ) -> Result<serde_json::Value, crate::tools::ToolError> {
        let shared = self
            .shared
            .get()
            .and_then(std::sync::Weak::upgrade)
            .ok_or_else(|| crate::tools::ToolError::Internal("no conversation".into()))?;
        let _slot = tokio::select! {
            s = self.tasks.acquire() => s.map_err(|e| crate::tools::ToolError::Internal(e.to_string()))?,
            () = cancel.cancelled() => {
                return Err(crate::tools::ToolError::Cancelled("interrupted before it started".into()));
            }
        };
        super::task::run(
            &shared,
            self.turn.load(Ordering::Relaxed),
            call_id,
            job,
            cancel,
        )
        .await
    }

    fn plan(&self, call_id: &str, steps: Vec<PlanStep>, explanation: Option<String>) {
        self.emitter.emit(AgentEvent::PlanUpdated {
            turn_id: self.turn.load(Ordering::Relaxed),
            call_id: call_id.to_string(),
            steps,
            explanation,
        });
    }
}
