//! What the sandbox's probe found, kept until the machine restarts.
//!
//! The probe starts the warden and a command (`true`) to learn what this
//! kernel lets Lathe set up: a third of the CPU a start costs. Its answer
//! depends on the kernel and its settings, the process's situation, the
//! `lathe` binary and the sandbox's settings, so it is kept under a key
//! made of all of them: the boot's id; the user namespace settings of the
//! kernel (`unprivileged_userns_clone`, `max_user_namespaces`, AppArmor's
//! restriction); who Lathe runs as and in which namespaces, under which
//! seccomp filter and security label (a container that shares the host's
//! boot and home is another key); the binary's identity (device, inode,
//! size, change time); the settings with the workspace, and which of the
//! paths they name exist. Only a whole answer is kept: a sandbox that
//! could not be set up, or only in part, is tried at every start, so a
//! fix (the sysctl Lathe's warning names) shows at once.
//!
//! Only words depend on it: every command is still confined by what is
//! set up when it runs, and says so when that fails.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::sandbox::{Isolation, Mode, Probe, Settings};

/// How many answers the file keeps (one per workspace and settings).
const KEPT: usize = 32;

/// The file, in Lathe's data directory.
pub const FILE: &str = "sandbox-probes.json";

#[derive(Serialize, Deserialize)]
struct Kept {
    key: String,
    isolation: Isolation,
    own_proc: bool,
    landlock_abi: u8,
    sockets: bool,
    signal_scope: bool,
}

/// What makes the probe's answer what it is.
#[derive(Serialize)]
struct Key<'a> {
    boot: String,
    exe: (u64, u64, u64, i64, i64),
    mode: Mode,
    network: bool,
    namespaces: bool,
    workspace: &'a Path,
    writable_roots: &'a [PathBuf],
    hidden: &'a [PathBuf],
    protected: &'a [PathBuf],
    allow_sockets: &'a [String],
    private_tmp: bool,
    served: bool,
    /// Which of the paths the settings name exist (`/dev/shm` too).
    present: Vec<bool>,
    /// Who and where Lathe runs: uid, euid, its namespaces, seccomp and
    /// no_new_privs, its security label, and the kernel's user namespace
    /// settings.
    situation: Vec<String>,
}

/// What of the process's and the kernel's situation the answer depends on.
fn situation() -> Vec<String> {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let mut out = vec![format!(
        "{} {}",
        nix::unistd::getuid(),
        nix::unistd::geteuid()
    )];
    for ns in ["user", "pid", "mnt", "net"] {
        out.push(
            std::fs::read_link(format!("/proc/self/ns/{ns}"))
                .map(|l| l.display().to_string())
                .unwrap_or_default(),
        );
    }
    out.extend(
        read("/proc/self/status")
            .lines()
            .filter(|l| l.starts_with("Seccomp") || l.starts_with("NoNewPrivs"))
            .map(str::to_string),
    );
    for p in [
        "/proc/self/attr/current",
        "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    ] {
        out.push(read(p).trim().to_string());
    }
    out
}

fn key(settings: &Settings, workspace: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let exe = match &settings.helper {
        Some(h) => h.clone(),
        None => std::env::current_exe().ok()?,
    };
    let m = std::fs::metadata(exe).ok()?;
    let key = Key {
        boot: boot.trim().to_string(),
        exe: (m.dev(), m.ino(), m.size(), m.ctime(), m.ctime_nsec()),
        mode: settings.mode,
        network: settings.network,
        namespaces: settings.namespaces,
        workspace,
        writable_roots: &settings.writable_roots,
        hidden: &settings.hidden,
        protected: &settings.protected,
        allow_sockets: &settings.allow_sockets,
        private_tmp: settings.private_tmp.is_some(),
        served: settings.served.is_some(),
        present: settings
            .writable_roots
            .iter()
            .chain(&settings.hidden)
            .chain(&settings.protected)
            .map(|p| p.symlink_metadata().is_ok())
            .chain([Path::new("/dev/shm").is_dir()])
            .collect(),
        situation: situation(),
    };
    let json = serde_json::to_vec(&key).ok()?;
    let digest = ring::digest::digest(&ring::digest::SHA256, &json);
    Some(digest.as_ref().iter().map(|b| format!("{b:02x}")).collect())
}

fn read(file: &Path) -> Vec<Kept> {
    std::fs::read(file)
        .ok()
        .and_then(|raw| serde_json::from_slice(&raw).ok())
        .unwrap_or_default()
}

/// The probe's answer: kept from an earlier start of this boot with the
/// same binary and settings, or found now (and kept when the sandbox
/// could be set up). `dir`: Lathe's data directory.
pub fn probe(settings: &Settings, workspace: &Path, dir: &Path) -> Result<Probe, String> {
    let Some(key) = key(settings, workspace) else {
        return settings.probe(workspace);
    };
    let file = dir.join(FILE);
    let mut kept = read(&file);
    if let Some(k) = kept.iter().find(|k| k.key == key) {
        return Ok(Probe {
            mode: settings.mode,
            network: settings.network,
            namespaces: settings.namespaces,
            isolation: k.isolation,
            own_proc: k.own_proc,
            landlock_abi: k.landlock_abi,
            sockets: k.sockets,
            signal_scope: k.signal_scope,
        });
    }
    let probe = settings.probe(workspace)?;
    if !probe.missing().is_empty() {
        // In part: tried again at the next start.
        return Ok(probe);
    }
    kept.retain(|k| k.key != key);
    kept.push(Kept {
        key,
        isolation: probe.isolation,
        own_proc: probe.own_proc,
        landlock_abi: probe.landlock_abi,
        sockets: probe.sockets,
        signal_scope: probe.signal_scope,
    });
    let over = kept.len().saturating_sub(KEPT);
    kept.drain(..over);
    // Not kept (a read-only home): the next start probes again.
    if let Ok(json) = serde_json::to_vec(&kept)
        && crate::session::journal::private_dir(dir).is_ok()
        && let Err(e) = crate::tools::fs::atomic::write_atomic(&file, &json)
    {
        tracing::debug!("the sandbox probe's answer was not kept: {e}");
    }
    Ok(probe)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            helper: Some(PathBuf::from("/bin/true")),
            ..Settings::default()
        }
    }

    #[test]
    fn the_key_changes_with_every_setting_that_shapes_the_answer() {
        let ws = Path::new("/work/a");
        let base = key(&settings(), ws).unwrap();
        assert_eq!(key(&settings(), ws).unwrap(), base);
        assert_ne!(key(&settings(), Path::new("/work/b")).unwrap(), base);
        let changes: [fn(&mut Settings); 9] = [
            |s| s.network = !s.network,
            |s| s.namespaces = !s.namespaces,
            |s| s.mode = Mode::Off,
            |s| s.writable_roots.push("/data".into()),
            |s| s.hidden.push("/secret".into()),
            |s| s.protected.push("/work/a/hook.sh".into()),
            |s| s.allow_sockets.push("localhost:5432".into()),
            |s| s.helper = Some(PathBuf::from("/bin/false")),
            |s| s.served = Some(PathBuf::from("/tmp/served")),
        ];
        for change in changes {
            let mut s = settings();
            change(&mut s);
            assert_ne!(key(&s, ws).unwrap(), base);
        }
        // A path the settings name comes to exist.
        let dir = tempfile::tempdir().unwrap();
        let mut s = settings();
        s.hidden.push(dir.path().join("later"));
        let before = key(&s, ws).unwrap();
        std::fs::create_dir(dir.path().join("later")).unwrap();
        assert_ne!(key(&s, ws).unwrap(), before);
    }

    /// A sandbox set up only in part (here: a helper that sets nothing
    /// up) is not kept: the next start tries again, so a fix shows.
    #[test]
    fn an_answer_in_part_is_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = probe(&settings(), dir.path(), dir.path()).unwrap();
        assert!(!p.missing().is_empty());
        assert!(read(&dir.path().join(FILE)).is_empty());
    }

    #[test]
    fn a_kept_answer_is_read_back_and_a_broken_file_is_probed_again() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings();
        let k = key(&s, Path::new("/w")).unwrap();
        let kept = vec![Kept {
            key: k,
            isolation: Isolation {
                user: true,
                pid: true,
                mounts: false,
                proc: true,
            },
            own_proc: true,
            landlock_abi: 5,
            sockets: true,
            signal_scope: false,
        }];
        std::fs::write(dir.path().join(FILE), serde_json::to_vec(&kept).unwrap()).unwrap();
        let p = probe(&s, Path::new("/w"), dir.path()).unwrap();
        assert_eq!(p.landlock_abi, 5);
        assert!(p.isolation.user && !p.isolation.mounts && p.own_proc);
        // Garbage in the file: read as nothing kept, never an error.
        for junk in ["", "{", "[{\"key\": 3}]", "null", "\u{0}\u{ff}"] {
            std::fs::write(dir.path().join(FILE), junk).unwrap();
            assert!(read(&dir.path().join(FILE)).is_empty(), "{junk:?}");
        }
    }
}
