//! What a person brings and a workspace defines of its own (skills,
//! subagent types, commands), and what the person trusted of the
//! workspace's, pinned by digest.

use super::*;

/// What the person trusted of a workspace's own, by workspace: the
/// digest trusted (its commands, its skills).
#[derive(Debug, Default, Serialize, Deserialize)]
struct DigestStore {
    workspaces: BTreeMap<PathBuf, String>,
}

fn read_digest_store(path: &Path) -> DigestStore {
    crate::fs::read_own(path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// Whether the person trusted what `file` pins for this workspace as it
/// is now (`digest`).
fn digest_trusted(config: &Config, file: &str, digest: &str) -> bool {
    read_digest_store(&config.paths.data_dir.join(file))
        .workspaces
        .get(&config.workspace)
        .is_some_and(|d| d == digest)
}

/// Remembers that the person trusts what `digest` pins for this
/// workspace (a change asks again).
fn remember_digest(config: &Config, file: &str, digest: &str) -> Result<(), String> {
    let path = config.paths.data_dir.join(file);
    let mut store = read_digest_store(&path);
    store
        .workspaces
        .insert(config.workspace.clone(), digest.to_string());
    let body = serde_json::to_vec_pretty(&store).map_err(|e| e.to_string())?;
    write_private(&path, &body)
}

const TRUSTED_COMMANDS: &str = "trusted-commands.json";
const TRUSTED_SKILLS: &str = "trusted-skills.json";
const TRUSTED_AGENTS: &str = "trusted-agents.json";

/// Remembers that the person trusts this workspace's subagent types, as
/// they are now (a change asks again).
pub fn remember_workspace_agents(config: &Config, digest: &str) -> Result<(), String> {
    remember_digest(config, TRUSTED_AGENTS, digest)
}

/// The subagent types of the person and the workspace: the person's
/// offered, the workspace's once trusted (before, as they are now, or by
/// `trust`).
fn agent_types(config: &Config, trust: bool) -> (crate::agents::Registry, AgentsFound) {
    let home = home();
    let roots = crate::agents::roots(
        &config.workspace,
        config.paths.config_file.parent(),
        home.as_deref(),
    );
    let found = crate::agents::discover(&config.workspace, &roots);
    let digest = crate::agents::digest(&found.workspace);
    let trusted =
        found.workspace.is_empty() || trust || digest_trusted(config, TRUSTED_AGENTS, &digest);
    let mut offered = found.person.clone();
    let untrusted = if trusted {
        offered.extend(found.workspace.iter().cloned());
        offered.sort_by(|a, b| a.name.cmp(&b.name));
        Vec::new()
    } else {
        found.workspace.clone()
    };
    (
        crate::agents::Registry::new(offered, untrusted.clone()),
        AgentsFound {
            found,
            untrusted,
            digest,
        },
    )
}

/// Whether the person trusted this workspace's commands as they are now.
pub fn commands_trusted(config: &Config, digest: &str) -> bool {
    digest_trusted(config, TRUSTED_COMMANDS, digest)
}

/// Remembers that the person trusts this workspace's commands, as they
/// are now (a change asks again).
pub fn remember_workspace_commands(config: &Config, digest: &str) -> Result<(), String> {
    remember_digest(config, TRUSTED_COMMANDS, digest)
}

/// Remembers that the person trusts this workspace's skills, as they
/// are now, every file of them (a change asks again).
pub fn remember_workspace_skills(config: &Config, digest: &str) -> Result<(), String> {
    remember_digest(config, TRUSTED_SKILLS, digest)
}

/// The skills and subagent types, the person's and the workspace's, and
/// the sandbox around them: the person's skills read where they are (a
/// hidden config directory, `/tmp`), and their own directories, where
/// the workspace holds them (the home opened as a workspace), never
/// rewritten unasked (nor one of "theirs" planted): those are returned
/// too, relative.
pub(super) fn setup_of_their_own(
    config: &Config,
    workspace: &Workspace,
    trust: &Trust,
    sandbox: &mut crate::sandbox::Settings,
) -> (
    crate::skills::Catalog,
    SkillsFound,
    crate::agents::Registry,
    AgentsFound,
    Vec<String>,
) {
    let (catalog, skills) = skills(config, trust.skills);
    sandbox.shown = skills.found.person.iter().map(|s| s.dir.clone()).collect();
    let (types, agents) = agent_types(config, trust.agents);
    let own = persons_roots_within(config, workspace);
    sandbox
        .protected
        .extend(own.iter().map(|rel| workspace.root().join(rel)));
    (catalog, skills, types, agents, own)
}

/// The files of a home that run code or change who may log in, later:
/// protected like `.git/` when the home is (in) the workspace.
const HOME_STARTUP: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".config/fish",
    ".ssh",
    ".gnupg",
    ".gitconfig",
    ".config/git",
    ".npmrc",
    ".cargo/config.toml",
    ".config/systemd",
    ".config/autostart",
];

/// What of the person's own lies in the workspace (the home opened as a
/// workspace), relative to it: their skill and agent directories, Lathe's
/// config and data directories (its settings, trust and records), and
/// the home's startup files.
fn persons_roots_within(config: &Config, workspace: &Workspace) -> Vec<String> {
    let home = home();
    let config_dir = config.paths.config_file.parent();
    let lathes = config_dir
        .into_iter()
        .map(std::path::Path::to_path_buf)
        .chain([config.paths.data_dir.clone()]);
    let startup = home
        .iter()
        .flat_map(|h| HOME_STARTUP.iter().map(move |f| h.join(f)));
    crate::skills::roots(&config.workspace, config_dir, home.as_deref())
        .into_iter()
        .chain(crate::agents::roots(
            &config.workspace,
            config_dir,
            home.as_deref(),
        ))
        .filter(|(_, origin)| *origin == crate::skills::Origin::Person)
        .map(|(root, _)| root)
        .chain(lathes)
        .chain(startup)
        .filter_map(|root| {
            let real = root.canonicalize().unwrap_or(root);
            real.strip_prefix(workspace.root())
                .ok()
                .map(|rel| rel.display().to_string())
        })
        .filter(|rel| !rel.is_empty())
        .collect()
}

/// The skills of the person and the workspace: the person's offered,
/// the workspace's once trusted (before, as they are now, or by `trust`).
fn skills(config: &Config, trust: bool) -> (crate::skills::Catalog, SkillsFound) {
    let home = home();
    let roots = crate::skills::roots(
        &config.workspace,
        config.paths.config_file.parent(),
        home.as_deref(),
    );
    let found = crate::skills::discover(&config.workspace, &roots);
    let digest = crate::skills::digest(&found.workspace);
    let trusted =
        found.workspace.is_empty() || trust || digest_trusted(config, TRUSTED_SKILLS, &digest);
    let (offered, pending) = if trusted {
        let mut all = found.person.clone();
        all.extend(found.workspace.iter().cloned());
        (all, Vec::new())
    } else {
        (found.person.clone(), found.workspace.clone())
    };
    let untrusted = pending.clone();
    (
        crate::skills::Catalog::with_pending(offered, pending),
        SkillsFound {
            found,
            untrusted,
            digest,
        },
    )
}

/// The person's home, when the environment names one.
fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
}
