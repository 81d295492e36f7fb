//! Agent Skills (the open format at agentskills.io): a directory holding
//! `SKILL.md` (YAML front matter with `name` and `description`, then
//! Markdown instructions) and the files it points to (`scripts/`,
//! `references/`, `assets/`).
//!
//! Found in the person's directories (`~/.config/lathe/skills/`,
//! `~/.agents/skills/`, `~/.claude/skills/`) and the workspace's
//! (`.lathe/skills/`, `.agents/skills/`, `.claude/skills/`). The person's
//! win: a workspace skill with the name of one of theirs is offered as
//! `ws-NAME`, and within one side the first directory wins (the others
//! are listed as shadowed). A workspace's skills are instructions from
//! the repository: offered only once trusted, pinned by [`digest`].
//!
//! Progressive disclosure: the model sees each skill's name and
//! description in the `skill` tool's description ([`catalog`], within
//! [`CATALOG_BUDGET`]); calling it returns the instructions and the
//! skill's files, which the file tools may then read where they are
//! (never write).

mod tool;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

pub use tool::SkillTool;

pub const SKILL_FILE: &str = "SKILL.md";
/// The most of a `SKILL.md` read.
const MAX_SKILL_BYTES: u64 = 256 * 1024;
/// How deep under a root skills are looked for, and how many
/// directories at most (the guide's bounds).
const MAX_DEPTH: usize = 4;
const MAX_DIRS: usize = 2_000;
/// The most files (and directories) of one skill, and the most bytes
/// they take: past them it is not offered (it could not be shown and
/// pinned whole).
const MAX_FILES: usize = 200;
const MAX_SKILL_SIZE: u64 = 16 * 1024 * 1024;
/// The most skills offered from each side (the person's, the
/// workspace's); past them the rest are left out, with a warning.
const MAX_SKILLS: usize = 100;
/// The most the catalog of skills takes in the `skill` tool's
/// description: about 2,000 tokens. Past it descriptions are shortened,
/// then skills are listed by name alone.
pub const CATALOG_BUDGET: usize = 8_000;
/// A description's length in the catalog when they must be shortened.
const SHORT_DESCRIPTION: usize = 120;
/// The spec's limits.
const MAX_NAME: usize = 64;
const MAX_DESCRIPTION: usize = 1_024;

/// Whose a skill is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Person,
    Workspace,
}

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// What the model and `/NAME` call it (a workspace skill that has
    /// the name of one of the person's: `ws-NAME`).
    pub name: String,
    pub description: String,
    /// Its directory (canonical).
    pub dir: PathBuf,
    pub origin: Origin,
    /// `SKILL.md`, whole: what the trust question shows.
    pub text: String,
    /// The instructions (`SKILL.md` after its front matter).
    pub body: String,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub metadata: BTreeMap<String, String>,
    /// Listed as the spec has it; never widens what the approval mode
    /// allows.
    pub allowed_tools: Vec<String>,
    /// Its other files, relative to `dir`.
    pub files: Vec<String>,
}

/// A skill left out for one of the same name found first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadowed {
    pub name: String,
    pub dir: PathBuf,
    pub by: PathBuf,
}

/// What was found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Found {
    pub person: Vec<Skill>,
    pub workspace: Vec<Skill>,
    pub shadowed: Vec<Shadowed>,
    /// Skills left out, each naming its file and why.
    pub warnings: Vec<String>,
}

/// Where skills are looked for, the person's first, each side in the
/// order it wins.
pub fn roots(
    workspace: &Path,
    config_dir: Option<&Path>,
    home: Option<&Path>,
) -> Vec<(PathBuf, Origin)> {
    roots_of(
        "skills",
        (workspace, &[".lathe", ".agents", ".claude"]),
        config_dir,
        (home, &[".agents", ".claude"]),
    )
}

/// `what` (`skills`, `agents`) beside the person's config, under each of
/// `home`'s directories, then under each of the workspace's.
pub(crate) fn roots_of(
    what: &str,
    (workspace, in_workspace): (&Path, &[&str]),
    config_dir: Option<&Path>,
    (home, in_home): (Option<&Path>, &[&str]),
) -> Vec<(PathBuf, Origin)> {
    let person = config_dir
        .map(Path::to_path_buf)
        .into_iter()
        .chain(
            home.into_iter()
                .flat_map(|h| in_home.iter().map(move |d| h.join(d))),
        )
        .map(|d| (d.join(what), Origin::Person));
    let theirs = in_workspace
        .iter()
        .map(|d| (workspace.join(d).join(what), Origin::Workspace));
    person.chain(theirs).collect()
}

/// The skills under `roots` (see [`roots`]); `workspace` bounds the
/// workspace's (a link out of it is not followed).
pub fn discover(workspace: &Path, roots: &[(PathBuf, Origin)]) -> Found {
    let mut found = Found::default();
    let workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let mut seen_dirs: Vec<PathBuf> = Vec::new();
    let mut by_name: BTreeMap<(bool, String), PathBuf> = BTreeMap::new();
    for (root, origin) in roots {
        for dir in skill_dirs(root) {
            let Ok(real) = dir.canonicalize() else {
                continue;
            };
            // One directory found twice (the workspace is the home, a
            // link): the first finding counts.
            if seen_dirs.contains(&real) {
                continue;
            }
            seen_dirs.push(real.clone());
            let shown = crate::protocol::visible::name(&dir.join(SKILL_FILE).display().to_string())
                .into_owned();
            if *origin == Origin::Workspace && !real.starts_with(&workspace) {
                found.warnings.push(format!(
                    "{shown}: the skill's directory leads out of the workspace; it is left out"
                ));
                continue;
            }
            let skill = match read_skill(&real, *origin, &shown) {
                Ok(s) => s,
                Err(why) => {
                    found
                        .warnings
                        .push(format!("{shown}: {why}; the skill is left out"));
                    continue;
                }
            };
            let key = (*origin == Origin::Workspace, skill.name.clone());
            if let Some(by) = by_name.get(&key) {
                found.shadowed.push(Shadowed {
                    name: skill.name.clone(),
                    dir: skill.dir.clone(),
                    by: by.clone(),
                });
                continue;
            }
            let side = match origin {
                Origin::Person => found.person.len(),
                Origin::Workspace => found.workspace.len(),
            };
            if side >= MAX_SKILLS {
                found.warnings.push(format!(
                    "{shown}: more than {MAX_SKILLS} skills on one side; the skill is left out"
                ));
                continue;
            }
            by_name.insert(key, skill.dir.clone());
            match origin {
                Origin::Person => found.person.push(skill),
                Origin::Workspace => found.workspace.push(skill),
            }
        }
    }
    name_workspace_skills(&mut found);
    found.person.sort_by(|a, b| a.name.cmp(&b.name));
    found.workspace.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// A workspace skill never passes for one of the person's: one with the
/// same name is offered as `ws-NAME`.
fn name_workspace_skills(found: &mut Found) {
    let mut taken: std::collections::BTreeSet<String> =
        found.person.iter().map(|s| s.name.clone()).collect();
    for skill in &mut found.workspace {
        if let Some(renamed) = workspace_name(&skill.name, &mut taken) {
            found.warnings.push(format!(
                "the workspace's skill `{}` has the name of one of yours; yours is `{}`, the \
                 workspace's is `{renamed}`",
                skill.name, skill.name
            ));
            skill.name = renamed;
        }
    }
}

/// The name a workspace's `name` goes by beside `taken` (the person's,
/// and those named so far): `None` when it is free, else `ws-NAME` (or
/// `ws-NAME-2`, …), taken now.
pub(crate) fn workspace_name(
    name: &str,
    taken: &mut std::collections::BTreeSet<String>,
) -> Option<String> {
    if taken.insert(name.to_string()) {
        return None;
    }
    let base: String = format!("ws-{name}").chars().take(MAX_NAME - 3).collect();
    let mut renamed = base.clone();
    let mut n = 2;
    while !taken.insert(renamed.clone()) {
        renamed = format!("{base}-{n}");
        n += 1;
    }
    Some(renamed)
}

/// The directories under `root` holding a `SKILL.md` (not looked into
/// further), breadth first, bounded; `.git` and `node_modules` skipped.
fn skill_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut queue = std::collections::VecDeque::from([(root.to_path_buf(), 0usize)]);
    let mut visited = 0usize;
    while let Some((dir, depth)) = queue.pop_front() {
        visited += 1;
        if visited > MAX_DIRS {
            tracing::warn!(root = %root.display(), "too many directories; the rest of the skills are not looked for");
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut subdirs: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| {
                let name = e.file_name();
                name != ".git" && name != "node_modules"
            })
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        subdirs.sort();
        for sub in subdirs {
            if sub.join(SKILL_FILE).is_file() {
                out.push(sub);
            } else if depth + 1 < MAX_DEPTH {
                queue.push_back((sub, depth + 1));
            }
        }
    }
    out
}

fn read_skill(dir: &Path, origin: Origin, shown: &str) -> Result<Skill, String> {
    let file = dir.join(SKILL_FILE);
    let named = crate::tools::fs::named::read_within(&file, dir, shown, MAX_SKILL_BYTES)
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8(named.bytes).map_err(|_| "not UTF-8 text".to_string())?;
    let doc = crate::front_matter::parse(&text).map_err(|e| e.to_string())?;
    let dir_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The directory names the skill (the spec has `name` equal it); a
    // `name` that differs is said, not fatal.
    let name = if valid_name(&dir_name) {
        dir_name.clone()
    } else {
        match doc.text("name") {
            Some(n) if valid_name(&n) => n,
            _ => {
                return Err(format!(
                    "field `name`: the directory's name `{dir_name}` is not a skill's name \
                     (lowercase letters, digits and single hyphens, at most {MAX_NAME})"
                ));
            }
        }
    };
    if let Some(declared) = doc.text("name")
        && declared != name
    {
        tracing::warn!(%shown, %declared, %name, "a skill's name differs from its directory's");
    }
    let Some(description) = doc.text("description") else {
        return Err("field `description` is missing or empty".into());
    };
    let description: String = description.chars().take(MAX_DESCRIPTION).collect();
    Ok(Skill {
        name,
        description,
        dir: dir.to_path_buf(),
        origin,
        license: doc.text("license"),
        compatibility: doc.text("compatibility"),
        metadata: doc.map("metadata"),
        allowed_tools: doc.list("allowed-tools"),
        files: files_of(dir)?,
        body: doc.body,
        text,
    })
}

/// A skill's name as the spec has it: 1 to 64 of `a-z`, `0-9` and `-`,
/// no hyphen at either end or twice in a row.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// The skill's files but `SKILL.md`, relative, sorted: every one of
/// them (`.git` and `node_modules` too), links not followed. Refused
/// (with why) past [`MAX_FILES`] files or [`MAX_SKILL_SIZE`] bytes, and
/// for a link that leads out of the skill: what cannot all be shown and
/// pinned is not offered.
fn files_of(dir: &Path) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut size = 0u64;
    let mut dirs = 0usize;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        dirs += 1;
        if dirs > MAX_FILES {
            return Err(format!("more than {MAX_FILES} directories"));
        }
        let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for e in entries.flatten() {
            let path = e.path();
            let meta = std::fs::symlink_metadata(&path).map_err(|e| e.to_string())?;
            let rel = path
                .strip_prefix(dir)
                .map(|r| r.to_string_lossy().into_owned())
                .unwrap_or_default();
            if meta.is_dir() {
                stack.push(path);
                continue;
            }
            if meta.file_type().is_symlink() {
                let inside = path.canonicalize().is_ok_and(|real| real.starts_with(dir));
                if !inside {
                    return Err(format!("`{rel}` is a link that leads out of the skill"));
                }
                size = size.saturating_add(std::fs::metadata(&path).map_or(0, |m| m.len()));
            } else {
                size = size.saturating_add(meta.len());
            }
            if rel != SKILL_FILE {
                out.push(rel);
            }
            if out.len() > MAX_FILES {
                return Err(format!(
                    "more than {MAX_FILES} files: too many to show and pin"
                ));
            }
            if size > MAX_SKILL_SIZE {
                return Err(format!(
                    "over {} MiB of files: too large to pin",
                    MAX_SKILL_SIZE / (1024 * 1024)
                ));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Hashes the file at `path` into `ctx`, streamed, at most `cap` bytes
/// (the skill was refused at discovery past its size).
fn hash_file(ctx: &mut ring::digest::Context, path: &Path, cap: u64) {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        ctx.update(b"unreadable");
        return;
    };
    let mut reader = file.take(cap);
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    while let Ok(n) = reader.read(&mut buf) {
        if n == 0 {
            break;
        }
        total += n as u64;
        ctx.update(&buf[..n]);
    }
    ctx.update(&total.to_le_bytes());
}

/// What trusting the workspace's skills pins: each one's name and every
/// file of its directory, content included (a change asks again).
pub fn digest(skills: &[Skill]) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    let part = |ctx: &mut ring::digest::Context, bytes: &[u8]| {
        ctx.update(&(bytes.len() as u64).to_le_bytes());
        ctx.update(bytes);
    };
    for s in skills {
        part(&mut ctx, s.name.as_bytes());
        part(&mut ctx, s.text.as_bytes());
        for f in &s.files {
            part(&mut ctx, f.as_bytes());
            let path = s.dir.join(f);
            // A link: where it leads, and what is there.
            if let Ok(target) = std::fs::read_link(&path) {
                part(&mut ctx, target.as_os_str().as_encoded_bytes());
            }
            if std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
                hash_file(&mut ctx, &path, MAX_SKILL_SIZE);
            }
        }
    }
    crate::fs::hex(ctx)
}

/// The lines of the catalog, within [`CATALOG_BUDGET`]: each skill with
/// its description; past the budget, descriptions shortened, then names
/// alone. Deterministic, so the request's prefix stays the same.
pub fn catalog(skills: &[Skill]) -> String {
    let line = |s: &Skill, cut: Option<usize>| {
        let d = match cut {
            Some(n) if s.description.chars().count() > n => {
                format!("{}…", s.description.chars().take(n).collect::<String>())
            }
            _ => s.description.clone(),
        };
        // One line each, whatever the description holds (a carriage
        // return or a control character could fake an entry).
        let d = d.split_whitespace().collect::<Vec<_>>().join(" ");
        format!("- {}: {}\n", s.name, crate::protocol::visible::name(&d))
    };
    let whole: String = skills.iter().map(|s| line(s, None)).collect();
    if whole.len() <= CATALOG_BUDGET {
        return whole;
    }
    let short: String = skills
        .iter()
        .map(|s| line(s, Some(SHORT_DESCRIPTION)))
        .collect();
    if short.len() <= CATALOG_BUDGET {
        return short;
    }
    let mut out = String::new();
    for s in skills {
        let name = format!("- {}\n", s.name);
        if out.len() + name.len() > CATALOG_BUDGET {
            break;
        }
        out.push_str(&name);
    }
    out
}

/// The skills a conversation offers: the person's, and the workspace's
/// once trusted. A tool source: the `skill` tool is there when a skill
/// is.
#[derive(Debug, Default)]
pub struct Catalog {
    skills: RwLock<Vec<Skill>>,
    /// The workspace's, until the person trusts them.
    pending: RwLock<Vec<Skill>>,
    generation: AtomicU64,
}

impl Catalog {
    /// `skills` offered, `pending` once trusted ([`Self::trust_pending`]).
    pub fn with_pending(skills: Vec<Skill>, pending: Vec<Skill>) -> Self {
        Self {
            skills: RwLock::new(skills),
            pending: RwLock::new(pending),
            generation: AtomicU64::new(0),
        }
    }

    /// Offers the workspace's skills (the person trusts them now).
    pub fn trust_pending(&self) {
        let pending = std::mem::take(
            &mut *self
                .pending
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        self.add(pending);
    }

    /// Offers `more` too.
    fn add(&self, more: Vec<Skill>) {
        if more.is_empty() {
            return;
        }
        let mut skills = self
            .skills
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for s in more {
            if !skills.iter().any(|k| k.name == s.name) {
                skills.push(s);
            }
        }
        self.generation.fetch_add(1, Ordering::Relaxed);
    }

    pub fn all(&self) -> Vec<Skill> {
        self.skills
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub fn get(&self, name: &str) -> Option<Skill> {
        self.skills
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .find(|s| s.name == name)
            .cloned()
    }

    /// `/NAME arguments` as the person's message: the skill's
    /// instructions, then what they asked; its files made readable.
    /// `None` when the message does not invoke a skill offered.
    pub fn invoked(&self, message: &str, workspace: &crate::policy::Workspace) -> Option<String> {
        let rest = message.trim_start().strip_prefix('/')?;
        let (name, arguments) = match rest.split_once(char::is_whitespace) {
            Some((n, a)) => (n, a.trim()),
            None => (rest.trim_end(), ""),
        };
        let skill = self.get(name)?;
        if !workspace.allow_reading(&skill.dir) {
            // Moved since the start: its instructions are not sent as if
            // it were there (the model is told when it calls `skill`).
            tracing::warn!(skill = %skill.name, "a skill's directory is no longer where it was");
            return None;
        }
        Some(format!(
            "{}\n\n{}",
            tool::content(&skill),
            if arguments.is_empty() {
                format!("Use the skill `{name}`.")
            } else {
                arguments.to_string()
            }
        ))
    }
}

impl crate::tools::toolset::ToolSource for Catalog {
    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    fn tools(&self) -> Vec<Arc<dyn crate::tools::spec::Tool>> {
        let skills = self.all();
        if skills.is_empty() {
            return Vec::new();
        }
        vec![Arc::new(SkillTool::new(&skills))]
    }
}

#[cfg(test)]
#[path = "skills_tests.rs"]
mod tests;
