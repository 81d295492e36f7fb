//! The namespaces a sandboxed command runs in, set up by the warden for
//! itself before it starts the confiner (and by the confiner, for the
//! command's own `/proc`). Best effort: where the system refuses one,
//! the command runs without it and Landlock's rules still hold; what was
//! set up is reported ([`Isolation`]) so Lathe can say what is missing.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use serde::{Deserialize, Serialize};

use super::Policy;

const NONE: Option<&str> = None;

/// What the warden managed to set up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Isolation {
    /// A user namespace of its own (no capability outside it).
    pub user: bool,
    /// A PID namespace: the kernel kills what is left when the command
    /// ends, and outside processes cannot be named.
    pub pid: bool,
    /// A private mount table: read-only outside the writable roots,
    /// protected paths read-only, sockets and secrets hidden.
    pub mounts: bool,
    /// The command can be given a `/proc` of its own PID namespace (the
    /// confiner holds the capability to mount it).
    pub proc: bool,
}

/// Moves the warden (and so the command) into namespaces of its own: a
/// PID namespace and a mount table of its own (see [`protect`]), through
/// a user namespace of its own. The network namespace stays the
/// system's: the command serves the person's browser on the loopback
/// interface, and the seccomp filter and the warden keep it off the rest. The command cannot undo these mounts:
/// Landlock denies every mount change to a sandboxed process.
pub fn isolate(policy: &mut Policy) -> Result<Isolation, String> {
    // The sockets other programs listen on, as this network namespace
    // lists them: read before leaving it.
    let sockets = listening_sockets();
    // System V shared memory, semaphores and queues of its own too.
    // (The PID namespace comes last, in [`enter_pid_namespace`]: after
    // it no thread can be started, and the warden needs a few.)
    let flags = CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWIPC;
    let mut got = Isolation::default();
    // A user namespace of its own first, even for root: capabilities
    // held in it count for nothing outside, so a root command cannot use
    // CAP_SYS_PTRACE to read Lathe's memory or environment through
    // Landlock's ptrace scoping. Where the system forbids user
    // namespaces, root still gets the rest.
    let uid = nix::unistd::getuid();
    let gid = nix::unistd::getgid();
    if unshare(flags | CloneFlags::CLONE_NEWUSER).is_ok() {
        // Keep the same ids inside, so files keep their owners.
        let _ = std::fs::write("/proc/self/setgroups", "deny");
        let _ = std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"));
        let _ = std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"));
        got.user = true;
    } else if unshare(flags).is_err() {
        return Ok(got);
    }
    got.mounts = protect(policy, &sockets)?;
    Ok(got)
}

/// A user namespace of its own alone (the same ids inside), for a command
/// run with the sandbox off: what makes a PID namespace possible, with no
/// filesystem rule. Nothing when the system forbids one.
pub fn own_user() -> Isolation {
    let uid = nix::unistd::getuid();
    let gid = nix::unistd::getgid();
    let mut got = Isolation::default();
    if unshare(CloneFlags::CLONE_NEWUSER).is_ok() {
        let _ = std::fs::write("/proc/self/setgroups", "deny");
        let _ = std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"));
        let _ = std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"));
        got.user = true;
    }
    got
}

/// The command starts a PID namespace of its own: when it ends, or its
/// warden dies, the kernel kills everything left in it, whatever the
/// command did to the warden (a `prlimit` that keeps it from reading
/// /proc, say). After this the warden can start no thread (the kernel
/// refuses threads whose children would be in another PID namespace).
pub fn enter_pid_namespace(got: &mut Isolation) {
    got.pid = unshare(CloneFlags::CLONE_NEWPID).is_ok();
    got.proc = got.pid && got.mounts && pass_mount_capability();
}

/// Lets the confiner (a new program: capabilities do not survive `exec`
/// for a user other than root) mount the `/proc` of the new PID
/// namespace, by making CAP_SYS_ADMIN, held in the new user namespace
/// only, ambient. The confiner drops it before the command starts.
fn pass_mount_capability() -> bool {
    use caps::{CapSet, Capability};
    if nix::unistd::geteuid().is_root() {
        // Root in the user namespace keeps its capabilities over exec.
        return true;
    }
    caps::raise(None, CapSet::Inheritable, Capability::CAP_SYS_ADMIN).is_ok()
        && caps::raise(None, CapSet::Ambient, Capability::CAP_SYS_ADMIN).is_ok()
}

/// In the confiner, as the first process of the command's PID
/// namespace: a mount table of its own (so the warden keeps its view of
/// every process) with a `/proc` that shows only the command's
/// processes, then no capability left to pass on. Without this, the
/// command would see the command lines of every process on the system.
pub fn mount_own_proc() -> Result<(), String> {
    use caps::CapSet;
    let result = unshare(CloneFlags::CLONE_NEWNS)
        .map_err(|e| format!("no mount namespace: {e}"))
        .and_then(|()| {
            mount(
                Some("proc"),
                "/proc",
                Some("proc"),
                MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC | MsFlags::MS_RDONLY,
                NONE,
            )
            .map_err(|e| format!("cannot mount /proc: {e}"))
        });
    if !nix::unistd::geteuid().is_root() {
        let _ = caps::clear(None, CapSet::Ambient);
        let _ = caps::clear(None, CapSet::Inheritable);
    }
    result
}

/// The mount table the command sees (in this private mount namespace):
/// everything read-only, so no file outside the writable roots can have
/// its mode, owner, times or attributes changed either (Landlock does
/// not cover those); the writable roots writable; the protected paths
/// read-only inside them; the sockets other programs listen on hidden,
/// since connecting to one (a terminal multiplexer, an agent, the
/// desktop bus, Docker) would run code outside; and the hidden paths
/// (Lathe's own files, credential stores) empty. Whether it was set up.
fn protect(policy: &mut Policy, sockets: &[PathBuf]) -> Result<bool, String> {
    // Nothing done here reaches the rest of the system.
    if mount(NONE, "/", NONE, MsFlags::MS_REC | MsFlags::MS_PRIVATE, NONE).is_err() {
        return Ok(false);
    }
    if let Some(private) = policy.private_tmp.clone()
        && private_tmp(policy, &private)?
    {
        // From here on the command's temp directory is `/tmp`.
        for root in &mut policy.writable {
            if *root == private {
                *root = PathBuf::from("/tmp");
            }
        }
    }
    // Each writable root becomes a mount of its own, so the read-only
    // remounts below pass it by.
    let mut writable = Vec::new();
    for root in &policy.writable {
        if mount(
            Some(root),
            root,
            NONE,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            NONE,
        )
        .is_ok()
        {
            writable.push(root.clone());
        }
    }
    let under_writable = |p: &Path| {
        writable
            .iter()
            .any(|w| p.starts_with(w) && p != w.as_path())
    };
    for point in mount_points() {
        if writable.iter().any(|w| w == &point) || under_writable(&point) {
            continue;
        }
        read_only(&point);
    }
    for path in &policy.protected {
        if mount(
            Some(path),
            path,
            NONE,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            NONE,
        )
        .is_ok()
        {
            read_only(path);
        }
    }
    hide_sockets(sockets, &policy.allow_sockets);
    // A hidden path inside a writable root (a workspace that is the home
    // directory) is covered, and so cannot be moved; its parents are made
    // mounts of their own too, so that moving one of them (`~/.config`)
    // does not carry what is hidden out from under its cover.
    // Each parent once, parents before children (a path sorts after its
    // parent), then the covers.
    let mut parents = std::collections::BTreeSet::new();
    for path in &policy.hidden {
        for root in writable.iter().filter(|w| path.starts_with(w)) {
            parents.extend(
                path.ancestors()
                    .skip(1)
                    .take_while(|a| *a != root.as_path() && a.starts_with(root)),
            );
        }
    }
    for dir in parents {
        let _ = mount(
            Some(dir),
            dir,
            NONE,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            NONE,
        );
    }
    // What must show beneath a hidden path (the person's skills in
    // Lathe's config directory), held open before it is covered.
    let shown: Vec<(PathBuf, std::fs::File)> = policy
        .shown
        .iter()
        .filter(|s| policy.hidden.iter().any(|h| s.starts_with(h) && *s != h))
        .filter_map(|s| {
            let dir = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(nix::fcntl::OFlag::O_PATH.bits())
                .open(s)
                .ok()?;
            Some((s.clone(), dir))
        })
        .collect();
    for path in &policy.hidden {
        let beneath: Vec<&(PathBuf, std::fs::File)> = shown
            .iter()
            .filter(|(s, _)| s.starts_with(path) && s != path)
            .collect();
        if beneath.is_empty() {
            cover(path);
        } else {
            cover_but(path, &beneath);
        }
    }
    Ok(true)
}

/// Covers the directory `path` as [`cover`] does, but for `shown`
/// beneath it, bound back where they were, read-only: all the rest of it
/// (what is there now and what comes later) stays out of sight.
fn cover_but(path: &Path, shown: &[&(PathBuf, std::fs::File)]) {
    use std::os::fd::AsRawFd;
    if mount(
        Some("tmpfs"),
        path,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("size=64k,mode=0755"),
    )
    .is_err()
    {
        return;
    }
    for (dir, fd) in shown {
        let Some(rel) = dir.strip_prefix(path).ok() else {
            continue;
        };
        let Some(target) = directory_beneath(path, rel) else {
            continue;
        };
        let source = format!("/proc/self/fd/{}", fd.as_raw_fd());
        let target = format!("/proc/self/fd/{}", target.as_raw_fd());
        if mount(
            Some(source.as_str()),
            target.as_str(),
            NONE,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            NONE,
        )
        .is_ok()
        {
            read_only(dir);
        }
    }
    remount_tmpfs_read_only(path);
}

/// The tmpfs at `path`, read-only from now on.
fn remount_tmpfs_read_only(path: &Path) {
    let _ = mount(
        Some("tmpfs"),
        path,
        Some("tmpfs"),
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("size=64k,mode=0755"),
    );
}

/// The session's own temporary directory in place of `/tmp`, and an empty
/// `/dev/shm`: what other programs keep there (their sockets, shared
/// memory, scratch files) is out of reach, and what the command leaves
/// there cannot be met by the person's programs. Paths the command must
/// still reach under `/tmp` are brought back: a workspace or writable
/// root there as it was, and the directory of the program it runs, named
/// by its absolute path there (an MCP server built in a checkout under
/// `/tmp`), read-only.
fn private_tmp(policy: &Policy, private: &Path) -> Result<bool, String> {
    use std::os::fd::AsRawFd;
    let tmp = Path::new("/tmp");
    let reachable = |p: &&Path| p.starts_with(tmp) && *p != private && !private.starts_with(p);
    // Held open, to be bound again once `/tmp` is covered.
    let mut under: Vec<(&Path, bool)> = policy
        .writable
        .iter()
        .chain([&policy.cwd])
        .map(PathBuf::as_path)
        .filter(reachable)
        .map(|p| (p, false))
        .collect();
    let program = policy
        .argv
        .first()
        .map(Path::new)
        .filter(|p| p.is_absolute())
        .and_then(Path::parent)
        .filter(reachable)
        .filter(|dir| !under.iter().any(|(p, _)| dir.starts_with(p)));
    under.extend(program.map(|dir| (dir, true)));
    under.extend(
        policy
            .shown
            .iter()
            .map(PathBuf::as_path)
            .filter(reachable)
            .map(|dir| (dir, true)),
    );
    under.sort();
    under.dedup();
    let keep: Vec<(PathBuf, bool, std::fs::File)> = under
        .into_iter()
        .filter_map(|(p, read_only)| {
            let dir = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(nix::fcntl::OFlag::O_PATH.bits())
                .open(p)
                .ok()?;
            Some((p.to_path_buf(), read_only, dir))
        })
        .collect();
    if mount(Some(private), tmp, NONE, MsFlags::MS_BIND, NONE).is_err() {
        return Ok(false);
    }
    for (path, to_read, dir) in keep {
        let source = format!("/proc/self/fd/{}", dir.as_raw_fd());
        // Where it goes in the session's `/tmp`, made without following a
        // link an earlier command left there (which would have the
        // warden create directories anywhere).
        let Some(target) = path
            .strip_prefix(tmp)
            .ok()
            .and_then(|rel| directory_beneath(tmp, rel))
        else {
            return Err(format!(
                "{} cannot be shown in the session's /tmp: an earlier command put a link \
                 in its way there; restart Lathe for a fresh temp directory",
                path.display()
            ));
        };
        let target = format!("/proc/self/fd/{}", target.as_raw_fd());
        let bound = mount(
            Some(source.as_str()),
            target.as_str(),
            NONE,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            NONE,
        );
        if to_read && bound.is_ok() {
            read_only(&path);
        }
    }
    if Path::new("/dev/shm").is_dir() {
        let _ = mount(
            Some("tmpfs"),
            "/dev/shm",
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some("mode=1777,size=25%"),
        );
    }
    Ok(true)
}

/// The directory `rel` beneath `root`, made where missing, each step
/// opened without following a link: `None` if one is in the way.
fn directory_beneath(root: &Path, rel: &Path) -> Option<std::os::fd::OwnedFd> {
    use nix::fcntl::{OFlag, openat};
    use nix::sys::stat::{Mode, mkdirat};
    let flags = OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let mut dir = nix::fcntl::open(root, flags, Mode::empty()).ok()?;
    for part in rel.components() {
        let std::path::Component::Normal(name) = part else {
            return None;
        };
        let next = match openat(&dir, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(nix::errno::Errno::ENOENT) => {
                mkdirat(&dir, name, Mode::from_bits_truncate(0o700)).ok()?;
                openat(&dir, name, flags, Mode::empty()).ok()?
            }
            Err(_) => return None,
        };
        dir = next;
    }
    Some(dir)
}

/// Remounts the mount at `path` read-only, keeping the flags a user
/// namespace may not drop.
fn read_only(path: &Path) {
    remount(path, MsFlags::MS_RDONLY);
}

/// Remounts the mount at `path` with `more` flags added to the ones it
/// has (which a mount from outside the user namespace must keep).
fn remount(path: &Path, more: MsFlags) {
    use nix::sys::statvfs::{FsFlags, statvfs};
    let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | more;
    if let Ok(st) = statvfs(path) {
        for (fs, ms) in [
            (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
            (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
            (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
            (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
            (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
            (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
        ] {
            if st.flags().contains(fs) {
                flags |= ms;
            }
        }
    }
    let _ = mount(NONE, path, NONE, flags, NONE);
}

/// Every mount point, from `/proc/self/mountinfo`, parents first.
fn mount_points() -> Vec<PathBuf> {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    info.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(|p| PathBuf::from(unescape_mount_path(p)))
        .collect()
}

/// Mount paths escape space, tab, newline and backslash as `\ooo`.
fn unescape_mount_path(p: &str) -> String {
    let mut out = Vec::with_capacity(p.len());
    let bytes = p.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        if let Some(d) = octal {
            let v = d.iter().fold(0u32, |acc, b| acc * 8 + u32::from(b - b'0'));
            out.push(u8::try_from(v).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Puts nothing in place of `path`: an empty read-only directory over a
/// directory, `/dev/null` over anything else (a file reads as empty, a
/// socket refuses connections).
fn cover(path: &Path) {
    // Where a link leads is what is covered (a dotfile manager links
    // `~/.ssh` elsewhere).
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    if meta.is_dir() {
        let _ = mount(
            Some("tmpfs"),
            path,
            Some("tmpfs"),
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some("size=4k,mode=0555"),
        );
    } else if mount(Some("/dev/null"), path, NONE, MsFlags::MS_BIND, NONE).is_ok() {
        // A device that cannot be opened there: reading or writing the
        // file fails plainly ("Permission denied"), rather than read
        // empty or write into nothing.
        remount(
            path,
            MsFlags::MS_RDONLY | MsFlags::MS_NODEV | MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        );
    }
}

/// Covers every socket another program listens on: the ones this
/// network namespace lists, and the usual places of those that live in
/// another one (the desktop's, a container engine's). A second line of
/// defence: the warden decides every connection (`sockets`); this holds
/// where it cannot. What the person allowed by name stays (and so does
/// the directory that holds it).
fn hide_sockets(listed: &[PathBuf], allowed: &[String]) {
    use std::os::unix::fs::FileTypeExt;
    let uid = nix::unistd::getuid();
    let dirs = [
        format!("/run/user/{uid}"),
        format!("/tmp/tmux-{uid}"),
        "/tmp/.X11-unix".to_string(),
        "/run/dbus".to_string(),
        "/var/run/dbus".to_string(),
        "/run/systemd/private".to_string(),
    ];
    let allowed: Vec<&Path> = allowed
        .iter()
        .filter(|a| !a.starts_with('@'))
        .map(Path::new)
        .collect();
    for dir in dirs.iter().map(Path::new).filter(|d| d.is_dir()) {
        if !allowed.iter().any(|a| a.starts_with(dir)) {
            cover(dir);
        }
    }
    let known = [
        "/var/run/docker.sock",
        "/run/docker.sock",
        "/run/podman/podman.sock",
    ]
    .map(PathBuf::from);
    for sock in listed
        .iter()
        .chain(known.iter())
        .filter(|s| !allowed.contains(&s.as_path()))
    {
        let is_socket = std::fs::symlink_metadata(sock).is_ok_and(|m| m.file_type().is_socket());
        if is_socket {
            cover(sock);
        }
    }
}

/// The paths of the sockets bound in this network namespace, from
/// `/proc/net/unix` (abstract ones, which a network namespace of its own
/// and Landlock keep apart, and relative ones, which cannot be found,
/// left out).
fn listening_sockets() -> Vec<PathBuf> {
    std::fs::read_to_string("/proc/net/unix")
        .map(|table| parse_unix_table(&table))
        .unwrap_or_default()
}

/// `Num RefCount Protocol Flags Type St Inode Path`: the path is what
/// follows the seventh field and one space (it may hold spaces).
fn parse_unix_table(table: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for line in table.lines().skip(1) {
        let mut rest = line;
        for _ in 0..7 {
            rest = rest.trim_start_matches(' ');
            rest = rest.find(' ').map_or("", |i| &rest[i..]);
        }
        let Some(path) = rest.strip_prefix(' ') else {
            continue;
        };
        if path.starts_with('/') {
            out.push(PathBuf::from(path));
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unix_socket_table_gives_absolute_paths_only() {
        let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01    77 /tmp/tmux-0/default\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 12345 /run/my dir/agent.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 12346 @/tmp/.X11-unix/X0\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 12347\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 12348 relative.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 12349 /tmp/tmux-0/default\n";
        assert_eq!(
            parse_unix_table(table),
            [
                PathBuf::from("/run/my dir/agent.sock"),
                PathBuf::from("/tmp/tmux-0/default")
            ]
        );
    }

    #[test]
    fn mount_paths_unescape() {
        assert_eq!(unescape_mount_path(r"/a\040b\011c\134d"), "/a b\tc\\d");
        assert_eq!(unescape_mount_path(r"/x\999"), r"/x\999");
    }
}
