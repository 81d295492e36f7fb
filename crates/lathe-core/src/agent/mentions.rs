//! `@path` in the person's message: each workspace file it names goes
//! along with the message, so the model need not ask for it. A mention
//! is taken only when it names a regular file inside the workspace (an
//! address like `@alice` or a path outside is left as text); contents are
//! capped, redacted, and fenced so that no file can close its block.

use crate::policy::workspace::PathError;
use crate::protocol::Attachment;
use crate::session::history::ATTACHED;
use crate::tools::fs::named::read_head_within;

use super::{Services, Shared};

/// The most of one file that goes along.
const FILE_CAP: u64 = 100 * 1024;
/// The most that goes along with one message.
const TOTAL_CAP: usize = 400 * 1024;
/// Files at most per message.
const MAX_FILES: usize = 10;

/// The workspace paths `text` mentions (`@src/main.rs`), in order, once.
/// What is inside a fenced block (code, piped input) mentions nothing: an
/// `@` there is the text's, not the person's.
fn mentions(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for word in outside_fences(text).flat_map(str::split_whitespace) {
        let Some(path) = word.strip_prefix('@') else {
            continue;
        };
        let path = path.trim_end_matches([',', '.', ';', ':', '!', '?', ')', ']', '"', '\'']);
        if !path.is_empty() && !path.contains('@') && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// The lines of `text` outside its fenced blocks (code, piped input):
/// what the person wrote, not what they quoted.
fn outside_fences(text: &str) -> impl Iterator<Item = &str> {
    let mut fence: Option<usize> = None;
    text.lines().filter(move |line| {
        let ticks = line.trim_start().chars().take_while(|c| *c == '`').count();
        match fence {
            Some(open) if ticks >= open => {
                fence = None;
                false
            }
            Some(_) => false,
            None if ticks >= 3 => {
                fence = Some(ticks);
                false
            }
            None => true,
        }
    })
}

/// A fence longer than any run of backticks in `content`.
fn fence(content: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// Whether a mention that names nothing looks meant as a path (`@src/x`,
/// `@notes.md`) rather than as a name (`@alice`, `@app.route`).
fn looks_like_a_path(m: &str) -> bool {
    let extension = m.rsplit_once('.').is_some_and(|(_, ext)| {
        (1..=4).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphanumeric())
    });
    m.contains('/') || m.starts_with('~') || extension
}

/// Why the person's rules keep `shown` from going along, if they do: a
/// mention is a read, judged as `read_file` would be.
fn refused_by_rules(shared: &Shared, shown: &str) -> Option<String> {
    use crate::policy::{Assessment, Assessor, Verdict};
    let args = serde_json::json!({ "path": shown });
    let ops = crate::tools::spec::file_operation(
        &shared.services.workspace,
        shown,
        crate::protocol::operation::Access::Read,
    )
    .ok()?;
    let ops = [ops];
    if let Verdict::Deny(e) =
        shared
            .services
            .guardrails
            .check("read_file", crate::protocol::ToolKind::Read, &args, &ops)
    {
        return Some(format!("not attached: your rules deny reading it ({e})"));
    }
    let assessor = Assessor {
        mode: shared.mode(),
        rules: shared.services.guardrails.rules(),
        workspace: &shared.services.workspace,
        protected: &shared.settings.protected_files,
    };
    match assessor.assess("read_file", crate::protocol::Effect::Read, &ops) {
        Assessment::Auto => None,
        Assessment::Refuse(why) => Some(format!("not attached: {why}")),
        Assessment::Ask(_) => Some(
            "not attached: your rules ask before it is read (the model can ask to read it)"
                .to_string(),
        ),
    }
}

/// Whether `path` names an image by its extension.
fn image_name(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".png", ".jpg", ".jpeg", ".gif", ".webp"]
        .iter()
        .any(|e| lower.ends_with(e))
}

/// Image files the person pasted into the message by their path (a
/// screenshot dragged into the terminal: `/tmp/shot.png`,
/// `'~/Desktop/Screen Shot.png'`, `file:///…`), wherever they are: the
/// person named them. Only files that are images by their bytes go.
fn pasted_images(text: &str) -> Vec<std::path::PathBuf> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let mut out: Vec<std::path::PathBuf> = Vec::new();
    for line in outside_fences(text) {
        let words = shlex::split(line)
            .unwrap_or_else(|| line.split_whitespace().map(str::to_string).collect());
        for word in words {
            let word = word.trim_end_matches([',', ';', ')', ']']);
            let word = match word.strip_prefix("file://") {
                Some(rest) => percent_decoded(rest),
                None => word.to_string(),
            };
            if !image_name(&word) {
                continue;
            }
            let path = match (word.strip_prefix("~/"), &home) {
                (Some(rest), Some(h)) => h.join(rest),
                _ => std::path::PathBuf::from(&word),
            };
            if path.is_absolute() && path.is_file() && !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

/// `%20` and the like, as a `file://` URL spells a path.
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads the image at `path` for the model, within `root` (see
/// `tools::fs::named`); `shown` names it.
pub(crate) fn load_image(
    path: &std::path::Path,
    root: &std::path::Path,
    shown: &str,
) -> Result<(crate::provider::image::Image, std::path::PathBuf), String> {
    let (named, more) = read_head_within(path, root, shown, crate::provider::image::MAX_FILE)
        .map_err(|e| e.to_string())?;
    if more {
        return Err(crate::provider::image::ImageError::TooLarge.to_string());
    }
    let (bytes, real) = (named.bytes, named.real);
    let name = path
        .file_name()
        .map_or_else(|| shown.to_string(), |n| n.to_string_lossy().into_owned());
    crate::provider::image::prepare(&name, &bytes)
        .map(|image| (image, real))
        .map_err(|e| e.to_string())
}

/// An image that went along, as the person is told of it.
pub(crate) fn image_attachment(shown: &str, image: &crate::provider::image::Image) -> Attachment {
    Attachment {
        path: shown.to_string(),
        bytes: image.data.len() / 4 * 3,
        attached: true,
        note: Some(format!("image {}×{}", image.width, image.height)),
    }
}

/// An image file to read for the message: its path, its name as the
/// person is told of it, and the root it must really be within.
pub(crate) struct ImageFile {
    pub path: std::path::PathBuf,
    pub shown: String,
    pub root: std::path::PathBuf,
}

impl ImageFile {
    /// An image the person named at `path` (absolute): within the
    /// workspace when named there.
    pub(crate) fn named(services: &Services, path: std::path::PathBuf, shown: String) -> Self {
        let root = crate::tools::fs::named::root_for(&path, services.workspace.root());
        Self { path, shown, root }
    }
}

/// Reads and scales the images off the agent's thread (a large picture
/// takes a moment); each one's outcome is added to `report`. One that
/// really is in the workspace is held to the read rules, as read (so a
/// link from outside, or one swapped in, changes nothing).
pub(crate) async fn load_images(
    shared: &Shared,
    files: Vec<ImageFile>,
    report: &mut Vec<Attachment>,
) -> Vec<crate::provider::image::Image> {
    let mut out = Vec::new();
    for f in files {
        let shown = f.shown.clone();
        let loaded = tokio::task::spawn_blocking(move || load_image(&f.path, &f.root, &f.shown))
            .await
            .unwrap_or_else(|e| Err(format!("it could not be read ({e})")))
            .and_then(|(image, real)| {
                if !real.starts_with(shared.services.workspace.root()) {
                    return Ok(image);
                }
                let inside = shared.services.workspace.display_relative(&real);
                match refused_by_rules(shared, &inside) {
                    Some(why) => Err(why.trim_start_matches("not attached: ").to_string()),
                    None => Ok(image),
                }
            });
        match loaded {
            Ok(image) => {
                report.push(image_attachment(&shown, &image));
                out.push(image);
            }
            Err(e) => report.push(Attachment {
                path: shown,
                bytes: 0,
                attached: false,
                note: Some(format!("not attached: {e}")),
            }),
        }
    }
    out
}

/// `text` with the files it mentions attached after it, the images it
/// mentions or pastes (to be read), and what became of each mention (for
/// the person: nothing is dropped unsaid). Pasted paths count only where
/// a person types (the terminal UI), not in a headless prompt, which may
/// be text from anywhere (`--image` names images there).
/// The MCP resources a message mentioned (`@server:uri`), read: their
/// contents go after the message (and its files), each reported.
pub(crate) fn add_resources(
    prompt: &mut String,
    files: &mut Vec<Attachment>,
    read: Vec<(String, Result<String, String>)>,
) {
    let mut parts = Vec::new();
    for (mention, r) in read {
        let path = mention.trim_start_matches('@').to_string();
        match r {
            Ok(text) => {
                files.push(Attachment {
                    path,
                    bytes: text.len(),
                    attached: true,
                    note: None,
                });
                parts.push(format!(
                    "<resource mention=\"{mention}\">\n{text}\n</resource>"
                ));
            }
            Err(e) => {
                let why = format!("not attached: {e}");
                parts.push(format!("{mention}: {why}"));
                files.push(Attachment {
                    path,
                    bytes: 0,
                    attached: false,
                    note: Some(why),
                });
            }
        }
    }
    if !parts.is_empty() {
        prompt.push_str(crate::session::history::RESOURCES);
        prompt.push_str("\n\n");
        prompt.push_str(&parts.join("\n\n"));
    }
}

pub(crate) fn attach(shared: &Shared, text: &str) -> (String, Vec<Attachment>, Vec<ImageFile>) {
    let mut images: Vec<ImageFile> = Vec::new();
    let mut parts: Vec<String> = Vec::new();
    let mut report: Vec<Attachment> = Vec::new();
    let parts_skipped: std::cell::RefCell<Vec<String>> = std::cell::RefCell::new(Vec::new());
    let skip = |report: &mut Vec<Attachment>, path: &str, why: &str| {
        // The model hears of it too (it may read the file itself, or say
        // it cannot).
        if !report.iter().any(|a| a.path == path) {
            parts_skipped.borrow_mut().push(format!("{path}: {why}"));
        }
        report.push(Attachment {
            path: path.to_string(),
            bytes: 0,
            attached: false,
            note: Some(why.to_string()),
        });
    };
    let mut total = 0usize;
    // `@server:uri` is an MCP resource, read with the message (and
    // counted on its own), not a file.
    let all: Vec<_> = mentions(text)
        .into_iter()
        .filter(|m| {
            !shared
                .services
                .mcp
                .as_ref()
                .is_some_and(|x| x.names_a_resource(m))
        })
        .collect();
    for extra in all.iter().skip(MAX_FILES).filter(|m| looks_like_a_path(m)) {
        skip(
            &mut report,
            extra,
            &format!("not attached: at most {MAX_FILES} files go along with a message"),
        );
    }
    for path in all.into_iter().take(MAX_FILES) {
        let file = match shared.services.workspace.resolve_existing(path) {
            Ok(file) => file,
            Err(PathError::Escapes { .. }) => {
                skip(&mut report, path, "not attached: outside the workspace");
                continue;
            }
            Err(_) if looks_like_a_path(path) => {
                skip(&mut report, path, "not attached: no such file");
                continue;
            }
            // `@alice`: a name, not a file.
            Err(_) => continue,
        };
        let shown = shared.services.workspace.display_relative(&file);
        if !file.is_file() {
            skip(&mut report, &shown, "not attached: not a regular file");
            continue;
        }
        // Once per file, whatever the names it was mentioned by.
        if report.iter().any(|a| a.attached && a.path == shown) {
            continue;
        }
        if let Some(why) = refused_by_rules(shared, &shown) {
            skip(&mut report, &shown, &why);
            continue;
        }
        if image_name(&shown) {
            if images.iter().all(|i| i.path != file) {
                images.push(ImageFile {
                    path: file,
                    shown,
                    root: shared.services.workspace.root().to_path_buf(),
                });
            }
            continue;
        }
        match text_part(&file, shared.services.workspace.root(), &shown, &mut total) {
            Ok((attachment, part)) => {
                report.push(attachment);
                parts.push(part);
            }
            Err(why) => skip(&mut report, &shown, &why),
        }
    }
    let typed = shared.services.approver.source() == crate::protocol::DecisionSource::User;
    for path in pasted_images(text).into_iter().filter(|_| typed) {
        let mut shown = path.display().to_string();
        // In the workspace, the person's read rules hold for it too.
        if let Ok(file) = shared.services.workspace.resolve_existing(&shown) {
            shown = shared.services.workspace.display_relative(&file);
            if let Some(why) = refused_by_rules(shared, &shown) {
                skip(&mut report, &shown, &why);
                continue;
            }
        }
        if images.len() >= MAX_FILES {
            skip(
                &mut report,
                &shown,
                &format!("not attached: at most {MAX_FILES} images go along with a message"),
            );
            continue;
        }
        if images.iter().all(|i| i.path != path) {
            images.push(ImageFile::named(&shared.services, path, shown));
        }
    }
    parts.extend(parts_skipped.into_inner());
    if parts.is_empty() {
        return (text.to_string(), report, images);
    }
    (
        format!("{text}{ATTACHED}\n\n{}", parts.join("\n\n")),
        report,
        images,
    )
}

/// A text file as it goes along with the message: whole or its first
/// `FILE_CAP`, fenced so that it cannot close its block, within what all
/// the attachments may take (`total`, counted); or why it does not go.
fn text_part(
    file: &std::path::Path,
    root: &std::path::Path,
    shown: &str,
    total: &mut usize,
) -> Result<(Attachment, String), String> {
    let (named, more) =
        read_head_within(file, root, shown, FILE_CAP).map_err(|e| format!("not attached: {e}"))?;
    let bytes = named.bytes;
    let content = String::from_utf8(bytes).map_err(|_| "not attached: not text".to_string())?;
    if *total + content.len() > TOTAL_CAP {
        return Err(format!(
            "not attached: the attachments reached {} KiB (the model can read it)",
            TOTAL_CAP / 1024
        ));
    }
    *total += content.len();
    let attachment = Attachment {
        path: shown.to_string(),
        bytes: content.len(),
        attached: true,
        note: more.then(|| format!("its first {} KiB", FILE_CAP / 1024)),
    };
    let cut = if more {
        format!(
            " (its first {} KiB; read_file has the rest)",
            FILE_CAP / 1024
        )
    } else {
        String::new()
    };
    let f = fence(&content);
    let body = content.strip_suffix('\n').unwrap_or(&content);
    Ok((attachment, format!("{shown}{cut}:\n{f}\n{body}\n{f}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #![proptest_config(crate::props::config(256))]

        /// Any message: no panic, and every mention is a piece of it.
        #[test]
        fn mentions_are_pieces_of_the_message(text in proptest::prelude::prop_oneof![
            proptest::prelude::any::<String>(),
            "([ -~é\n`]{0,6}@[a-z./_\\-é]{0,12}[,.;:!?)\\]\"' ]){0,6}",
        ]) {
            for m in mentions(&text) {
                proptest::prop_assert!(text.contains(m), "{:?}", m);
                proptest::prop_assert!(!m.is_empty());
            }
        }
    }

    #[test]
    fn mentions_are_paths_after_an_at_sign() {
        assert_eq!(
            mentions("look at @src/main.rs, and @README.md. mail me@x.org or @src/main.rs"),
            ["src/main.rs", "README.md"]
        );
        assert!(mentions("no mentions here").is_empty());
        // Inside a fenced block (code, piped input): the text's, not the
        // person's.
        assert_eq!(
            mentions("review @a.rs\n\n```\n+ see @private/notes.txt\n```\nand @b.rs"),
            ["a.rs", "b.rs"]
        );
        assert!(looks_like_a_path("src/x") && looks_like_a_path("notes.md"));
        assert!(!looks_like_a_path("alice") && !looks_like_a_path("app.route"));
    }

    #[test]
    fn pasted_image_paths_are_found_quoted_escaped_or_as_urls() {
        let dir = tempfile::tempdir().unwrap();
        let spaced = dir.path().join("Screen Shot 1.png");
        let plain = dir.path().join("a.jpg");
        let url = dir.path().join("c d.gif");
        let fenced = dir.path().join("fenced.png");
        for f in [&spaced, &plain, &url, &fenced] {
            std::fs::write(f, b"x").unwrap();
        }
        let text = format!(
            "what is wrong here? '{}' and {} and file://{}\n```\n{}\n```",
            spaced.display(),
            plain.display(),
            url.display().to_string().replace(' ', "%20"),
            fenced.display()
        );
        assert_eq!(
            pasted_images(&text),
            vec![spaced.clone(), plain.clone(), url.clone()]
        );
        let escaped = spaced.display().to_string().replace(' ', "\\ ");
        assert_eq!(pasted_images(&format!("see {escaped}")), vec![spaced]);
        // A relative name or a missing file is not an image to attach.
        assert!(pasted_images("shot.png /nowhere/x.png").is_empty());
        assert_eq!(percent_decoded("/a%20b.png"), "/a b.png");
    }

    #[test]
    fn a_fence_outlasts_the_backticks_inside() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("a ```` b"), "`````");
    }
}
