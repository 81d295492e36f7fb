//! `read_file`: a text file of the workspace, whole or by line window.
//!
//! The file is streamed line by line, so a huge file costs memory only for
//! the window shown. What the model sees stays under the result limit: when
//! the file (or the requested window) is larger, the result holds the
//! leading lines that fit, `"truncated": true`, and the `next_offset` to
//! continue from. A binary file (a NUL byte in its first 8 KiB) is refused
//! with a clear error.

use std::io::{BufRead, BufReader, Read};

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::policy::Workspace;
use crate::protocol::operation::{Access, Operation};
use crate::protocol::{Effect, Summary};
use crate::tools::args::whole;
use crate::tools::spec::{ToolContext, ToolError, file_operation};
use crate::tools::truncate::escaped_str_len;
use crate::tools::typed::TypedTool;

/// Escaped bytes of file content one result may carry (the rest of the
/// result and its envelope fit in the remaining ~4 KiB of the 64 KiB limit).
const CONTENT_BUDGET: usize = 60 * 1024;
const SNIFF_BYTES: usize = 8 * 1024;

pub struct ReadFile;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// File path, relative to the workspace
    path: String,
    /// First line to read (1-based)
    #[serde(default, deserialize_with = "whole")]
    #[schemars(with = "Option<u64>", range(min = 1))]
    offset: Option<u64>,
    /// Maximum number of lines
    #[serde(default, deserialize_with = "whole")]
    #[schemars(with = "Option<u64>", range(min = 1))]
    limit: Option<u64>,
}

#[async_trait]
impl TypedTool for ReadFile {
    type Args = Args;

    fn summary(&self, result: &Value) -> Option<Summary> {
        let line = |k: &str| result.get(k).and_then(Value::as_u64);
        let (start, end) = (line("start_line")?, line("end_line")?);
        Some(Summary::Lines {
            start,
            end,
            total: line("total_lines").unwrap_or(end),
        })
    }

    fn name(&self) -> &'static str {
        "read_file"
    }

    fn description(&self) -> &str {
        "Read a text file in the workspace. Returns its content (up to ~60 KB per call) \
         with line numbers of the window shown. For large files pass `offset` (1-based \
         first line) and `limit` (number of lines); a cut result says `next_offset`."
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Read
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn operations(
        &self,
        a: &Self::Args,
        workspace: &Workspace,
    ) -> Result<Vec<Operation>, ToolError> {
        Ok(vec![file_operation(workspace, &a.path, Access::Read)?])
    }

    async fn execute(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let Args {
            path,
            offset,
            limit,
        } = args;
        let offset = offset.unwrap_or(1).max(1);
        let resolved = ctx
            .workspace
            .resolve_readable(&path)
            .map_err(ToolError::from_path)?;
        let shown = ctx.workspace.display_relative(&resolved);
        // In an editor: the file as the person sees it, unsaved changes
        // included (a regular file of the workspace, as on disk).
        if resolved.starts_with(ctx.workspace.root()) && ctx.workspace.editor().reads() {
            let meta =
                std::fs::symlink_metadata(&resolved).map_err(|e| ToolError::from_io(&shown, &e))?;
            crate::tools::fs::regular::check(&meta, &shown)?;
            // `read` passes over what is not a regular file or too large:
            // the disk's windows then.
            match ctx.workspace.editor().read(&resolved).await {
                Some(Ok(text)) => {
                    if text.contains('\0') {
                        return Err(ToolError::ExecutionFailed(format!(
                            "{shown} is a binary file; read_file shows text files only"
                        )));
                    }
                    return collect_lines(text.as_bytes(), &shown, offset, limit);
                }
                Some(Err(e)) => {
                    tracing::warn!("the editor could not read {shown} ({e}): read from disk");
                }
                None => {}
            }
        }
        tokio::task::spawn_blocking(move || read_window(&resolved, &shown, offset, limit))
            .await
            .map_err(|e| ToolError::Internal(format!("read_file task failed: {e}")))?
    }
}

fn read_window(
    path: &std::path::Path,
    shown: &str,
    offset: u64,
    limit: Option<u64>,
) -> Result<Value, ToolError> {
    let (mut file, meta) = crate::tools::fs::regular::open(path, shown)?;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut file)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| ToolError::from_io(shown, &e))?;
    if head.contains(&0) {
        return Err(ToolError::ExecutionFailed(format!(
            "{shown} is a binary file ({} bytes); read_file shows text files only",
            meta.len()
        )));
    }
    let reader = BufReader::new(head.as_slice().chain(file));
    collect_lines(reader, shown, offset, limit)
}

/// The most of one line kept in memory; a longer line is cut (the result
/// could not carry more anyway), so a 400 MB one-line file costs no more.
const LINE_KEEP: usize = 2 * CONTENT_BUDGET;

/// Reads one line (through its `\n`) into `buf`, keeping at most `keep`
/// bytes of it; the number of bytes the line had.
fn read_line_capped(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    keep: usize,
) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(total);
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let room = keep.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..take.min(room)]);
        reader.consume(take);
        total += take;
        if done {
            return Ok(total);
        }
    }
}

fn collect_lines(
    mut reader: impl BufRead,
    shown: &str,
    offset: u64,
    limit: Option<u64>,
) -> Result<Value, ToolError> {
    let last_wanted = limit.map_or(u64::MAX, |l| offset.saturating_add(l - 1));
    let mut content = String::new();
    let mut used = 0usize;
    let mut line_no = 0u64;
    let mut end_line = offset.saturating_sub(1);
    let mut cut_by_budget = false;
    let mut lossy = false;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = read_line_capped(&mut reader, &mut buf, LINE_KEEP)
            .map_err(|e| ToolError::from_io(shown, &e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if line_no < offset || line_no > last_wanted || cut_by_budget {
            continue;
        }
        let text = match std::str::from_utf8(&buf) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => {
                lossy = true;
                String::from_utf8_lossy(&buf)
            }
        };
        let cost = escaped_str_len(&text);
        if used + cost > CONTENT_BUDGET && line_no > offset {
            cut_by_budget = true;
            continue;
        }
        used += cost;
        content.push_str(&text);
        end_line = line_no;
    }
    let total_lines = line_no;
    if offset > total_lines.max(1) {
        return Err(ToolError::InvalidArgs(format!(
            "offset {offset} is past the end of {shown} ({total_lines} lines)"
        )));
    }
    if content.len() > CONTENT_BUDGET * 2 {
        // One enormous line: keep its start; the pipeline would cut it anyway.
        content.truncate(content.floor_char_boundary(CONTENT_BUDGET));
        cut_by_budget = true;
    }
    let mut out = json!({
        "path": shown,
        "content": content,
        "total_lines": total_lines,
        "start_line": offset.min(total_lines.max(1)),
        "end_line": end_line,
    });
    if lossy {
        out["encoding"] = json!("not valid UTF-8; invalid bytes shown as U+FFFD");
    }
    if cut_by_budget {
        out["truncated"] = json!(true);
        out["next_offset"] = json!(end_line + 1);
        out["note"] = json!(format!(
            "{shown} has {total_lines} lines; showing {offset}-{end_line}. \
             Call read_file with offset={} to read on.",
            end_line + 1
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize, width: usize) -> String {
        (1..=n).map(|i| format!("{i:0width$}\n")).collect()
    }

    #[test]
    fn a_huge_line_is_kept_only_in_part() {
        let line = "x".repeat(5 * 1024 * 1024);
        let text = format!("{line}\nsecond\n");
        let mut reader = std::io::BufReader::new(text.as_bytes());
        let mut buf = Vec::new();
        let n = read_line_capped(&mut reader, &mut buf, 1000).unwrap();
        assert_eq!((n, buf.len()), (line.len() + 1, 1000));
        buf.clear();
        read_line_capped(&mut reader, &mut buf, 1000).unwrap();
        assert_eq!(buf, b"second\n");
        let v = collect_lines(text.as_bytes(), "f", 1, None).unwrap();
        assert_eq!(v["truncated"], true);
        assert_eq!(v["total_lines"], 2);
        assert!(v["content"].as_str().unwrap().len() <= CONTENT_BUDGET * 2);
    }

    #[test]
    fn a_small_file_comes_back_whole() {
        let v = collect_lines(b"a\nb\nc".as_slice(), "f", 1, None).unwrap();
        assert_eq!(v["content"], "a\nb\nc");
        assert_eq!(v["total_lines"], 3);
        assert_eq!(v["end_line"], 3);
        assert!(v.get("truncated").is_none());
    }

    #[test]
    fn offset_and_limit_select_a_window() {
        let text = lines(10, 2);
        let v = collect_lines(text.as_bytes(), "f", 3, Some(2)).unwrap();
        assert_eq!(v["content"], "03\n04\n");
        assert_eq!(v["start_line"], 3);
        assert_eq!(v["end_line"], 4);
        assert_eq!(v["total_lines"], 10);
    }

    #[test]
    fn a_large_file_is_cut_at_a_line_with_a_next_offset() {
        let text = lines(30_000, 9); // 300 KB
        let v = collect_lines(text.as_bytes(), "big.txt", 1, None).unwrap();
        assert_eq!(v["truncated"], true);
        let end = v["end_line"].as_u64().unwrap();
        assert_eq!(v["next_offset"], end + 1);
        assert!(v["content"].as_str().unwrap().ends_with('\n'));
        assert!(
            crate::tools::truncate::json_len(&v) < crate::tools::truncate::MAX_TOOL_RESULT_BYTES
        );
        assert!(v["note"].as_str().unwrap().contains("offset="));
    }

    #[test]
    fn an_offset_past_the_end_is_invalid() {
        let err = collect_lines(b"a\n".as_slice(), "f", 5, None).unwrap_err();
        assert!(matches!(err, ToolError::InvalidArgs(_)), "{err:?}");
    }

    #[test]
    fn invalid_utf8_is_shown_lossily() {
        let v = collect_lines(b"ok\n\xff\xfe\n".as_slice(), "f", 1, None).unwrap();
        assert!(v["encoding"].is_string());
        assert!(v["content"].as_str().unwrap().contains('\u{FFFD}'));
    }
}
