//! What comes back from the external editor: the composer's text, or the
//! person's own version of a change waiting for approval (asked again as
//! a change of the file, never written unseen).

use std::time::Instant;

use super::App;
use super::EditPurpose;
use crate::components::cells::NoticeKind;
use crate::components::diff_view::DiffView;

impl App {
    /// What came back from the editor: the text, `None` if the edit was
    /// abandoned, or why the editor could not run.
    pub fn on_edited(
        &mut self,
        purpose: EditPurpose,
        result: Result<Option<String>, String>,
        now: Instant,
    ) {
        self.screen.dirty = true;
        match (purpose, result) {
            (_, Err(e)) => self.notice(NoticeKind::Warning, format!("the editor did not run: {e}")),
            (EditPurpose::Composer, Ok(Some(text))) => {
                self.composer.set_text(text.trim_end_matches('\n'));
            }
            (EditPurpose::Composer, Ok(None)) => self.flash("edit abandoned", now),
            (EditPurpose::Approval(call_id), Ok(Some(content))) => {
                let opened = self.edits.edit_opened.remove(&call_id).unwrap_or_default();
                // Answered only if the call still waits (its turn may
                // have ended meanwhile).
                if !self.questions.approvals.call_ids().contains(&call_id) {
                    let kept = keep_edit(&call_id, &content);
                    self.notice(
                        NoticeKind::Warning,
                        format!(
                            "the call no longer waits for approval: your edit was not written{kept}"
                        ),
                    );
                    return;
                }
                // Saved as it opened: not an edit, and not an answer.
                if content == opened {
                    self.flash(
                        "nothing changed in the editor: the change still waits for your answer",
                        now,
                    );
                    return;
                }
                // Emptied: most likely a slip (or a way out of the editor);
                // erasing the file is asked again, not done.
                if content.trim().is_empty() && !opened.trim().is_empty() {
                    self.notice(
                        NoticeKind::Warning,
                        "you emptied the file in the editor: that would erase its content, so \
                         nothing was approved; press E to edit again, or y / n",
                    );
                    return;
                }
                // A second look: the dialog shows the person's version as
                // a change of the file, and `y` writes it.
                let Some(change) = self
                    .questions
                    .approvals
                    .change_of(&call_id)
                    .map(|c| c.with_new(&content))
                else {
                    return;
                };
                let diff = self.prepare_diff(DiffView::from_change(&change));
                self.questions.approvals.edited(&call_id, change, diff, now);
                self.calls
                    .decided(&call_id, "E, edited in the editor (asked again)");
                self.flash("your version: y writes it, E edits it again, n denies", now);
            }
            (EditPurpose::Approval(_), Ok(None)) => {
                self.flash(
                    "edit abandoned: the change still waits for your answer",
                    now,
                );
            }
        }
    }
}

/// Keeps the person's edited version of a change in a file of its own
/// (under the temporary directory), and says where: `" (kept in PATH)"`.
pub(super) fn keep_edit(call_id: &str, content: &str) -> String {
    let safe: String = call_id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(40)
        .collect();
    let kept = tempfile::Builder::new()
        .prefix(&format!("lathe-edit-{safe}-"))
        .suffix(".txt")
        .tempfile()
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(content.as_bytes())?;
            f.keep().map_err(|e| e.error)
        });
    match kept {
        Ok((_, path)) => format!(" (kept in {})", path.display()),
        Err(e) => {
            tracing::warn!(error = %e, "could not keep an edited version");
            String::new()
        }
    }
}

impl App {
    /// What `/undo` would do: asked first; said instead when it cannot
    /// (files changed since, which it refuses to overwrite) or has
    /// nothing to put back.
    pub(super) fn undo_preview(
        &mut self,
        plan: crate::components::undo_question::UndoPlan,
        changed_since: Vec<String>,
        error: Option<String>,
        now: Instant,
    ) {
        if let Some(e) = error {
            return self.notice(NoticeKind::Warning, format!("/undo: {e}"));
        }
        if !changed_since.is_empty() {
            return self.notice(
                NoticeKind::Warning,
                format!(
                    "/undo would overwrite files changed since the turn changed them (outside \
                     Lathe, or by hand): {}. Nothing was put back; keep your changes, or save \
                     them elsewhere and /undo again.",
                    changed_since.join(", ")
                ),
            );
        }
        if plan.restored.is_empty() && plan.removed.is_empty() {
            let lost = if plan.not_kept.is_empty() {
                String::new()
            } else {
                format!(
                    "; no checkpoint holds what else it did: {}",
                    plan.not_kept.join(", ")
                )
            };
            return self.notice(
                NoticeKind::Info,
                format!("/undo: turn {} left nothing to put back{lost}", plan.turn),
            );
        }
        self.questions.ask(
            crate::components::undo_question::UndoQuestion::new(plan),
            now,
        );
    }
}
