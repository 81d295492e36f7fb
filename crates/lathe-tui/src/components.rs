//! The UI's components: the transcript and its cells, the composer, the
//! approval dialog with its diff view, the tool-call log, the permissions
//! view, the session picker, the status bar.

pub mod agents;
pub mod approval;
pub mod ask;
pub mod cells;
pub mod composer;
pub mod custom;
pub mod diff_view;
pub mod explored;
pub mod go_on;
pub mod jobs;
pub mod keys_help;
pub mod pager;
pub mod permissions;
pub mod picker;
pub mod plan;
pub mod question;
pub mod rewind;
pub mod sessions;
pub mod skills;
pub mod status_bar;
pub mod tool_log;
pub mod transcript;
pub mod undo_question;
