//! Undo and rewind: the workspace's files are checkpointed before the
//! first call of a turn that may change them and again at the turn's end
//! (trees in the shadow repository of [`crate::session::checkpoints`],
//! recorded in the session's history), so that `/undo` can put back the
//! files of the last turn that changed any, and `/rewind` the files, the
//! conversation or both as they were before any turn. The model is told
//! what was undone, in a note before the person's next message.

use std::path::{Path, PathBuf};

use crate::protocol::change::FileChange;
use crate::protocol::{AgentEvent, Effect, TurnInfo};
use crate::session::checkpoints::{Ignored, Preview, Restored, Snapshot, Store, TurnTrees};
use crate::session::history::Item;

use super::{Conversation, Services, Shared};

/// The checkpoints of one conversation.
pub(crate) struct Checkpoints {
    data_dir: PathBuf,
    workspace: PathBuf,
    state: tokio::sync::Mutex<State>,
}

impl std::fmt::Debug for Checkpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoints").finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    /// Opened at first use; why not, if it cannot be.
    store: Option<Result<Store, String>>,
    /// The turn running, and the tree before its round of calls running.
    turn: u64,
    before: Option<String>,
    /// The rounds of calls that changed files and were not undone (each
    /// with its turn), oldest first.
    turns: Vec<TurnTrees>,
    /// The files before the session first changed them.
    start: Option<String>,
    /// Files too large to keep, already told of.
    large_told: std::collections::BTreeSet<String>,
    /// What each turn did that no checkpoint holds (large files, ignored
    /// directories a command deleted or changed), by turn.
    not_kept: Vec<(u64, String)>,
    /// The ignored entries as the round's last change call left them:
    /// the next call of the round starts from them (calls that change
    /// files run one at a time), rather than listing them again.
    ignored: Option<Ignored>,
}

impl State {
    /// The rounds of `turn` and later turns.
    fn since(&self, turn: u64) -> Vec<TurnTrees> {
        self.turns
            .iter()
            .filter(|t| t.turn >= turn)
            .cloned()
            .collect()
    }

    /// The large files of `snapshot` not told of yet, marked told.
    fn newly_large(&mut self, snapshot: &Snapshot) -> Vec<String> {
        snapshot
            .large
            .iter()
            .filter(|p| self.large_told.insert((*p).clone()))
            .cloned()
            .collect()
    }
}

/// Says, on the call's output, which files are too large to keep.
fn tell_large(services: &Services, call_id: &str, tool: &str, large: &[String]) {
    if large.is_empty() {
        return;
    }
    let mb = crate::session::checkpoints::LARGE_FILE / (1024 * 1024);
    services.emitter.emit(AgentEvent::ToolProgress {
        call_id: call_id.to_string(),
        tool: tool.to_string(),
        stream: "lathe".into(),
        text: format!(
            "lathe: not checkpointed (over {mb} MiB; /undo leaves {} alone): {}",
            if large.len() == 1 { "it" } else { "them" },
            large.join(", ")
        ),
    });
}

impl State {
    async fn store(&mut self, data_dir: &Path, workspace: &Path) -> Result<Store, String> {
        if self.store.is_none() {
            let (d, w) = (data_dir.to_path_buf(), workspace.to_path_buf());
            let opened = tokio::task::spawn_blocking(move || Store::open(&d, &w))
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r.map_err(|e| e.to_string()));
            if let Err(e) = &opened {
                tracing::warn!(error = %e, "checkpoints are not available");
            }
            self.store = Some(opened);
        }
        match &self.store {
            Some(Ok(s)) => Ok(s.clone()),
            Some(Err(e)) => Err(format!("checkpoints are not available: {e}")),
            None => Err("checkpoints are not available".into()),
        }
    }
}

/// Runs `f` on the store off the runtime.
async fn blocking<T: Send + 'static>(
    store: Store,
    f: impl FnOnce(&Store) -> Result<T, crate::session::checkpoints::CheckpointError> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(move || f(&store))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}

/// Whether a call of this effect may change the workspace's files.
pub(crate) fn may_change_files(effect: Effect) -> bool {
    matches!(effect, Effect::Write | Effect::Exec | Effect::External)
}

impl Checkpoints {
    /// Checkpoints of `workspace` under `data_dir`, knowing the turns a
    /// resumed session can still undo.
    pub(crate) fn new(
        data_dir: PathBuf,
        workspace: PathBuf,
        turns: Vec<TurnTrees>,
        start: Option<String>,
    ) -> Self {
        Self {
            data_dir,
            workspace,
            state: tokio::sync::Mutex::new(State {
                turns,
                start,
                ..State::default()
            }),
        }
    }

    /// A turn begins.
    pub(crate) async fn begin(&self, turn: u64) {
        let mut st = self.state.lock().await;
        st.turn = turn;
        st.before = None;
    }

    /// Before a call that may change files: the files as they are, once
    /// per round of calls (so that what the person does between rounds
    /// is never taken for the turn's work). A checkpoint that cannot be
    /// taken never stops the call.
    pub(crate) async fn before_change(&self, shared: &Shared, call_id: &str, tool: &str) {
        let mut st = self.state.lock().await;
        if st.before.is_some() {
            return;
        }
        let Ok(store) = st.store(&self.data_dir, &self.workspace).await else {
            return;
        };
        // A big tree seen for the first time takes a while: the call says
        // what it waits for.
        let snapshot = blocking(store, Store::snapshot_noting);
        tokio::pin!(snapshot);
        let taken = tokio::select! {
            r = &mut snapshot => r,
            () = tokio::time::sleep(std::time::Duration::from_millis(500)) => {
                shared.services.emitter.emit(AgentEvent::ToolProgress {
                    call_id: call_id.to_string(),
                    tool: tool.to_string(),
                    stream: "lathe".into(),
                    text: "lathe: checkpointing the workspace's files for /undo…".into(),
                });
                snapshot.await
            }
        };
        if let Err(e) = &taken
            && e.contains("did not finish within")
        {
            // Never again this session: each round would wait as long.
            st.store = Some(Err(e.clone()));
            shared.services.emitter.emit(AgentEvent::ToolProgress {
                call_id: call_id.to_string(),
                tool: tool.to_string(),
                stream: "lathe".into(),
                text: format!("lathe: {e}"),
            });
        }
        match taken {
            Ok(snapshot) => {
                let large = st.newly_large(&snapshot);
                tell_large(&shared.services, call_id, tool, &large);
                let turn = st.turn;
                st.not_kept.extend(
                    large
                        .into_iter()
                        .map(|p| (turn, format!("{p} (too large to keep)"))),
                );
                let tree = snapshot.tree;
                st.before = Some(tree.clone());
                if st.start.is_none() {
                    st.start = Some(tree.clone());
                }
                shared
                    .record(Item::Checkpoint {
                        turn: st.turn,
                        before: tree,
                        after: None,
                    })
                    .await;
            }
            Err(e) => tracing::warn!(error = %e, "no checkpoint before this turn's changes"),
        }
    }

    /// A round of calls that may have changed files is over: the files as
    /// it left them (taken before the turn's end is told, so that nothing
    /// the person does after it passes for the turn's work).
    pub(crate) async fn after_round(&self, shared: &Shared) {
        let mut st = self.state.lock().await;
        st.ignored = None;
        let Some(before) = st.before.take() else {
            return;
        };
        let Ok(store) = st.store(&self.data_dir, &self.workspace).await else {
            return;
        };
        let after = match blocking(store, Store::snapshot).await {
            Ok(tree) => tree,
            Err(e) => {
                // Unknown: what the round changed cannot be undone, and
                // an undo of what came before refuses the paths it touched.
                tracing::warn!(error = %e, "no checkpoint after this round of calls");
                return;
            }
        };
        let turn = st.turn;
        shared
            .record(Item::Checkpoint {
                turn,
                before: before.clone(),
                after: Some(after.clone()),
            })
            .await;
        if after != before {
            st.turns.push(TurnTrees {
                turn,
                before,
                after: Some(after),
            });
        }
    }

    /// The turn ended: a round still open (the turn stopped within it)
    /// is closed.
    pub(crate) async fn end(&self, shared: &Shared) {
        self.after_round(shared).await;
    }

    /// The turns whose files can be restored.
    pub(crate) async fn undoable(&self) -> Vec<u64> {
        self.state
            .lock()
            .await
            .turns
            .iter()
            .map(|t| t.turn)
            .collect()
    }

    /// The ignored files and directories as they stand (`None`: no
    /// checkpoints to compare with): what a call may change that no
    /// checkpoint holds.
    pub(crate) async fn ignored_now(&self) -> Option<Ignored> {
        let mut st = self.state.lock().await;
        if let Some(known) = st.ignored.take() {
            return Some(known);
        }
        let store = st.store(&self.data_dir, &self.workspace).await.ok()?;
        drop(st);
        blocking(store, Store::ignored).await.ok()
    }

    /// After a call: the ignored directories and files it deleted or
    /// changed, said on its output (before its result) and kept for
    /// `/undo`'s preview.
    pub(crate) async fn tell_ignored_lost(
        &self,
        shared: &Shared,
        before: Ignored,
        call_id: &str,
        tool: &str,
    ) {
        let Some(after) = self.ignored_now().await else {
            return;
        };
        let lost = before.lost(&after);
        self.state.lock().await.ignored = Some(after);
        if lost.is_empty() {
            return;
        }
        shared.services.emitter.emit(AgentEvent::ToolProgress {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            stream: "lathe".into(),
            text: format!(
                "lathe: ignored (by .gitignore, or a build directory), so not checkpointed; /undo \
                 cannot bring back: {}",
                lost.join(", ")
            ),
        });
        let mut st = self.state.lock().await;
        let turn = st.turn;
        st.not_kept
            .extend(lost.into_iter().map(|p| (turn, format!("{p} (ignored)"))));
    }

    /// What putting back the files of `turn` and later would do.
    async fn preview(&self, turn: u64) -> Result<(Preview, Vec<String>), String> {
        let mut st = self.state.lock().await;
        let turns = st.since(turn);
        let not_kept = st
            .not_kept
            .iter()
            .filter(|(t, _)| *t >= turn)
            .map(|(_, p)| p.clone())
            .collect();
        let store = st.store(&self.data_dir, &self.workspace).await?;
        drop(st);
        let preview = blocking(store, move |s| s.preview(&turns)).await?;
        Ok((preview, not_kept))
    }

    /// The last turn whose files can be restored.
    async fn last(&self) -> Option<u64> {
        self.state.lock().await.turns.last().map(|t| t.turn)
    }

    /// Puts the files back as they were before `turn`, undoing it and
    /// every later turn.
    async fn rewind(&self, turn: u64) -> Result<Restored, String> {
        let mut st = self.state.lock().await;
        let turns = st.since(turn);
        if turns.is_empty() {
            return Ok(Restored::default());
        }
        let store = st.store(&self.data_dir, &self.workspace).await?;
        let restored = blocking(store, move |s| s.rewind(&turns)).await?;
        st.turns.retain(|t| t.turn < turn);
        Ok(restored)
    }
}

/// The largest session diff sent.
const DIFF_LIMIT: usize = 2 * 1024 * 1024;

/// `/diff`: every change of the session to the workspace's files (by
/// tools and commands alike), against the files before the session first
/// changed them.
pub(crate) async fn session_diff(services: &Services) {
    let answer = |diff: String, changes: Vec<FileChange>, cut: bool, error: Option<String>| {
        services.emitter.emit(AgentEvent::SessionDiff {
            diff,
            changes,
            cut,
            error,
        });
    };
    let Some(c) = &services.checkpoints else {
        return answer(
            String::new(),
            Vec::new(),
            false,
            Some("checkpoints are off (--checkpoints off): there is nothing to compare".into()),
        );
    };
    let mut st = c.state.lock().await;
    let Some(start) = st.start.clone() else {
        return answer(String::new(), Vec::new(), false, None);
    };
    let store = match st.store(&c.data_dir, &c.workspace).await {
        Ok(s) => s,
        Err(e) => return answer(String::new(), Vec::new(), false, Some(e)),
    };
    drop(st);
    match blocking(store, move |s| {
        let now = s.snapshot()?;
        let (diff, cut) = s.patch(&start, &now, DIFF_LIMIT)?;
        let (changes, more) = s.changes(&start, &now, DIFF_LIMIT)?;
        Ok((diff, changes, cut || more))
    })
    .await
    {
        Ok((diff, changes, cut)) => answer(diff, changes, cut, None),
        Err(e) => answer(String::new(), Vec::new(), false, Some(e)),
    }
}

/// The turns a rewind can go back to.
pub(crate) async fn list(services: &Services, conv: &Conversation) {
    let undoable = match &services.checkpoints {
        Some(c) => c.undoable().await,
        None => Vec::new(),
    };
    let mut turns: Vec<TurnInfo> = conv
        .prompts
        .iter()
        .map(|(turn, prompt)| TurnInfo {
            turn_id: *turn,
            prompt: prompt.clone(),
            files: undoable.contains(turn),
            conversation: services.history.is_some(),
        })
        .collect();
    // A turn the conversation no longer holds (cleared) whose files can
    // still be put back.
    for turn in undoable {
        if !turns.iter().any(|t| t.turn_id == turn) {
            turns.push(TurnInfo {
                turn_id: turn,
                prompt: String::new(),
                files: true,
                conversation: false,
            });
        }
    }
    turns.sort_by_key(|t| t.turn_id);
    services.emitter.emit(AgentEvent::Turns { turns });
}

/// `/undo` and `/rewind`: puts back the files, the conversation or both
/// as they were before `turn` (no turn: the last that changed files),
/// and tells the model.
/// `/undo`'s first step: what putting back the files of `turn` (the
/// last that changed any, when none is given) would do, nothing written.
pub(crate) async fn preview(shared: &Shared, turn: Option<u64>) {
    let emit = |turn_id: u64, preview: Result<(Preview, Vec<String>), String>| {
        let (p, not_kept, error) = match preview {
            Ok((p, n)) => (p, n, None),
            Err(e) => (Preview::default(), Vec::new(), Some(e)),
        };
        shared.services.emitter.emit(AgentEvent::Rewound {
            turn_id,
            files: true,
            conversation: false,
            restored: p.put_back.restored,
            removed: p.put_back.removed,
            skipped: p.put_back.skipped,
            preview: true,
            changed_since: p.changed_since,
            not_kept,
            prompt: None,
            error,
        });
    };
    let Some(c) = &shared.services.checkpoints else {
        return emit(
            turn.unwrap_or(0),
            Err(
                "checkpoints are off (--checkpoints off, or checkpoints = false in the config): \
                 there is nothing to restore the files from"
                    .into(),
            ),
        );
    };
    let turn = match turn {
        Some(t) => t,
        None => match c.last().await {
            Some(t) => t,
            None => return emit(0, Err("no turn's file changes are left to put back".into())),
        },
    };
    emit(turn, c.preview(turn).await);
}

pub(crate) async fn rewind(
    shared: &Shared,
    conv: &mut Conversation,
    turn: Option<u64>,
    files: bool,
    conversation: bool,
) {
    let failed = |turn: u64, error: String| {
        shared.services.emitter.emit(AgentEvent::Rewound {
            turn_id: turn,
            files,
            conversation,
            restored: Vec::new(),
            removed: Vec::new(),
            skipped: Vec::new(),
            preview: false,
            changed_since: Vec::new(),
            not_kept: Vec::new(),
            prompt: None,
            error: Some(error),
        });
    };
    if !files && !conversation {
        return failed(
            0,
            "nothing to rewind: neither files nor conversation".into(),
        );
    }
    let checkpoints = match (&shared.services.checkpoints, files) {
        (Some(c), _) => Some(c),
        (None, true) => {
            return failed(
                turn.unwrap_or(0),
                "checkpoints are off (--checkpoints off, or checkpoints = false in the \
                 config): there is nothing to restore the files from"
                    .into(),
            );
        }
        (None, false) => None,
    };
    let turn = match turn {
        Some(t) => t,
        None => match checkpoints {
            Some(c) => match c.last().await {
                Some(t) => t,
                None => return failed(0, "no turn's file changes are left to put back".into()),
            },
            None => return failed(0, "no turn given".into()),
        },
    };
    let prompt = conv
        .prompts
        .iter()
        .find(|(t, _)| *t == turn)
        .map(|(_, p)| p.clone());
    if conversation {
        if shared.services.history.is_none() {
            return failed(
                turn,
                "the conversation cannot be rewound: this session is not recorded".into(),
            );
        }
        if prompt.is_none() {
            return failed(
                turn,
                format!("turn {turn} is not in the conversation (it was cleared or rewound)"),
            );
        }
    }
    let restored = match checkpoints.filter(|_| files) {
        Some(c) => match c.rewind(turn).await {
            Ok(r) => r,
            Err(e) => return failed(turn, e),
        },
        None => Restored::default(),
    };
    shared
        .record(Item::Rewind {
            turn,
            restored: restored.restored.clone(),
            removed: restored.removed.clone(),
            files,
            conversation,
        })
        .await;
    shared.sync_history().await;
    let note = crate::session::history::rewind_note(
        turn,
        &restored.restored,
        &restored.removed,
        files,
        conversation,
    );
    if conversation && let Err(e) = reload(&shared.services, conv).await {
        return failed(turn, e);
    }
    conv.note = Some(note);
    shared.services.emitter.emit(AgentEvent::Rewound {
        turn_id: turn,
        files,
        conversation,
        restored: restored.restored,
        removed: restored.removed,
        skipped: restored.skipped,
        preview: false,
        changed_since: Vec::new(),
        not_kept: Vec::new(),
        prompt: prompt.filter(|_| conversation),
        error: None,
    });
    if !conv.messages.is_empty() {
        super::compact::report(shared, conv);
    }
}

/// The conversation as its record now has it: exact, whatever was
/// compacted or cleared since.
async fn reload(services: &Services, conv: &mut Conversation) -> Result<(), String> {
    let Some(h) = &services.history else {
        return Ok(());
    };
    let path = h.path().to_path_buf();
    match tokio::task::spawn_blocking(move || crate::session::history::read(&path)).await {
        Ok(Ok(records)) => {
            let r = crate::session::history::rebuild(&records, &services.redactor);
            conv.messages = r.messages;
            conv.usage = r.usage;
            conv.prompts = r.prompts;
            conv.context = super::compact::ContextCount::default();
            Ok(())
        }
        Ok(Err(e)) => Err(format!("the session record cannot be read: {e}")),
        Err(e) => Err(e.to_string()),
    }
}
