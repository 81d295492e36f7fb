//! The person's editor (`$VISUAL`, else `$EDITOR`, else `vi`) on a text:
//! a private temporary file (named like the file it stands for, so the
//! editor picks its syntax), edited with the terminal handed over, read
//! back. An editor that exits with an error (`:cq`) abandons the edit.

use std::io::{self, Write};
use std::process::Command;

/// Edits `text` with the person's editor; `None` when the editor
/// abandoned the edit.
pub fn edit(text: &str, name: &str) -> io::Result<Option<String>> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".into());
    edit_with(&editor, text, name)
}

/// Edits `text` with `editor` (a shell command line).
pub fn edit_with(editor: &str, text: &str, name: &str) -> io::Result<Option<String>> {
    let suffix = std::path::Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .filter(|e| e.chars().all(|c| c.is_ascii_alphanumeric()))
        .map(|e| format!(".{e}"))
        .unwrap_or_else(|| ".txt".into());
    let mut file = tempfile::Builder::new()
        .prefix("lathe-edit-")
        .suffix(&suffix)
        .tempfile()?;
    file.write_all(text.as_bytes())?;
    file.as_file().sync_all()?;
    // The editor may carry arguments (`code --wait`): the shell splits
    // them; the file comes as "$1", never re-split.
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("lathe-edit")
        .arg(file.path())
        .status()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot run `{editor}`: {e}")))?;
    if !status.success() {
        return Ok(None);
    }
    let bytes = std::fs::read(file.path())?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "the edited text is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An "editor" that appends a line gives the text back changed; one
    /// that fails abandons the edit.
    #[test]
    fn the_editor_edits_or_abandons() {
        let appends = "sh -c 'echo added >> \"$0\"'";
        assert_eq!(
            edit_with(appends, "one\n", "a.rs").unwrap().as_deref(),
            Some("one\nadded\n")
        );
        assert_eq!(edit_with("false", "one\n", "a.rs").unwrap(), None);
    }
}
