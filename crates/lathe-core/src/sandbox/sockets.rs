//! The warden's side of every `connect` a sandboxed command makes, and
//! of every `bind` and `listen` when the network is off.
//!
//! The command's seccomp filter ([`super::seccomp`]) makes each of these
//! wait for the warden, which reads the address once from the command's
//! memory, decides, and, when the rules allow it, does it itself on a
//! duplicate of the command's socket (`pidfd_getfd`). The command's own
//! call is never let through where it matters: what it might change in
//! its memory or descriptor table after the warden looked is never read
//! again.
//!
//! The rules:
//! - A Unix socket with a path is reached only if the socket file the
//!   path leads to (links followed, as `connect` follows them) lies
//!   beneath a place commands may write, or is one the person named
//!   (`[shell] allow_sockets`). The file is opened once and the
//!   connection is made through that very descriptor
//!   (`/proc/self/fd/N`), so what was checked is what is reached. A
//!   socket bound by a relative path, renamed or hard-linked after it
//!   was bound: all are files, found where they are now.
//! - An abstract Unix socket is reached when a sandboxed command of this
//!   Lathe listens on it, or when the person named it (`@name`): X11 and
//!   D-Bus listen there.
//! - With the network off, a TCP socket listens on the loopback
//!   interface only (one bound to every interface is bound to the
//!   loopback one instead; one bound to another address is refused), so
//!   the person's browser reaches a dev server and other machines do
//!   not; and connects to this machine only, to what a sandboxed command
//!   of this Lathe serves (or a port the person named,
//!   `localhost:PORT`). Other families are refused. With the network on,
//!   IP goes through.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use libseccomp::{ScmpNotifReq, ScmpNotifResp, ScmpNotifRespFlags, notify_id_valid};
use nix::errno::Errno;
use nix::libc;
use serde::{Deserialize, Serialize};

/// How the warden notes a refusal on the command's stderr (not
/// [`super::FAILURE_PREFIX`]: the command did run).
pub const REFUSAL_PREFIX: &str = "lathe sandbox: ";

/// The largest address `connect` takes (`sizeof(struct sockaddr_storage)`).
const MAX_ADDRESS: usize = 128;

/// The read rules, as the warden judges a command's opens by them: a
/// file of `root` whose path (relative to it, as it really is, links
/// followed) matches one of `globs` is not opened for reading. A file
/// covered when the command starts is not even there for it; this holds
/// the rules for one that comes to be covered while it runs (a key a
/// program writes, a `private/` made then). The warden reads the path once
/// and lets the kernel go on, so a command that changes the path in its
/// memory in that moment can still open it; what it reads then is kept
/// from the model all the same (`policy::withheld`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadWatch {
    pub root: PathBuf,
    pub globs: Vec<String>,
}

/// A [`ReadWatch`], compiled.
pub struct Reads {
    root: PathBuf,
    set: globset::GlobSet,
}

impl Reads {
    /// `None` when the watch names nothing (or nothing that compiles).
    pub fn new(watch: &ReadWatch) -> Option<Self> {
        let mut set = globset::GlobSetBuilder::new();
        for g in &watch.globs {
            if let Ok(glob) = globset::GlobBuilder::new(g).literal_separator(true).build() {
                set.add(glob);
            }
        }
        let set = set.build().ok().filter(|s| !s.is_empty())?;
        Some(Self {
            root: watch.root.clone(),
            set,
        })
    }

    /// Whether `real` (a path as it really is) is a covered file.
    pub fn covers(&self, real: &Path) -> bool {
        real.strip_prefix(&self.root)
            .is_ok_and(|rel| !rel.as_os_str().is_empty() && self.set.is_match(rel))
    }
}

/// What the warden lets commands connect to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    /// Where commands may write, as the command sees it: sockets beneath
    /// are reachable.
    pub writable: Vec<PathBuf>,
    /// Sockets the person allowed by name: paths, and abstract names
    /// written `@name`.
    pub allowed: Vec<String>,
    /// The network is allowed.
    pub network: bool,
}

/// An address as `connect` was given it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// `AF_UNSPEC`: dissolve a datagram socket's association.
    Unspec,
    UnixPath(PathBuf),
    UnixAbstract(Vec<u8>),
    /// A Unix address with neither (always refused by the kernel).
    UnixUnnamed,
    V4(SocketAddrV4),
    V6(SocketAddrV6),
    Netlink {
        pid: u32,
        groups: u32,
    },
    Other(u16),
}

/// Reads an address as the kernel would (`EINVAL` where it would).
pub fn parse(bytes: &[u8]) -> Result<Address, Errno> {
    let family = match bytes {
        [a, b, ..] => u16::from_ne_bytes([*a, *b]),
        _ => return Err(Errno::EINVAL),
    };
    let word = |at: usize| -> Result<[u8; 4], Errno> {
        bytes
            .get(at..at + 4)
            .and_then(|s| s.try_into().ok())
            .ok_or(Errno::EINVAL)
    };
    let port = |at: usize| -> Result<u16, Errno> {
        bytes
            .get(at..at + 2)
            .map(|p| u16::from_be_bytes([p[0], p[1]]))
            .ok_or(Errno::EINVAL)
    };
    match i32::from(family) {
        libc::AF_UNSPEC => Ok(Address::Unspec),
        libc::AF_UNIX => {
            let path = &bytes[2..];
            match path.first() {
                None => Ok(Address::UnixUnnamed),
                Some(0) => Ok(Address::UnixAbstract(path[1..].to_vec())),
                Some(_) => {
                    let end = path.iter().position(|b| *b == 0).unwrap_or(path.len());
                    Ok(Address::UnixPath(PathBuf::from(OsStr::from_bytes(
                        &path[..end],
                    ))))
                }
            }
        }
        libc::AF_INET => {
            if bytes.len() < 16 {
                return Err(Errno::EINVAL);
            }
            Ok(Address::V4(SocketAddrV4::new(
                Ipv4Addr::from(word(4)?),
                port(2)?,
            )))
        }
        libc::AF_INET6 => {
            if bytes.len() < 24 {
                return Err(Errno::EINVAL);
            }
            let ip: [u8; 16] = bytes[8..24].try_into().map_err(|_| Errno::EINVAL)?;
            let scope = if bytes.len() >= 28 {
                u32::from_ne_bytes(word(24)?)
            } else {
                0
            };
            Ok(Address::V6(SocketAddrV6::new(
                Ipv6Addr::from(ip),
                port(2)?,
                u32::from_be_bytes(word(4)?),
                scope,
            )))
        }
        libc::AF_NETLINK => {
            if bytes.len() < 12 {
                return Err(Errno::EINVAL);
            }
            Ok(Address::Netlink {
                pid: u32::from_ne_bytes(word(4)?),
                groups: u32::from_ne_bytes(word(8)?),
            })
        }
        _ => Ok(Address::Other(family)),
    }
}

/// Shows an abstract name as the person writes it (`@name`, bytes that
/// are not printable escaped).
fn abstract_name(name: &[u8]) -> String {
    let mut out = String::from("@");
    for b in name {
        if b.is_ascii_graphic() || *b == b' ' {
            out.push(char::from(*b));
        } else {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// An IP address and port as a person writes them.
fn shown(address: &Address) -> String {
    match address {
        Address::V4(a) => a.to_string(),
        Address::V6(a) => match a.ip().to_ipv4_mapped() {
            Some(v4) => format!("{v4}:{}", a.port()),
            None => format!("[{}]:{}", a.ip(), a.port()),
        },
        Address::UnixAbstract(name) => abstract_name(name),
        Address::UnixPath(p) => p.display().to_string(),
        _ => "that address".into(),
    }
}

/// What the warden does with one `connect`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Make the connection.
    Connect,
    /// Make it only if the socket file lies where the rules allow: the
    /// path is checked once it is opened.
    CheckPath,
    /// Make it only if what listens there is served by a sandboxed
    /// command of this Lathe (or named by the person).
    CheckServer,
    /// Refuse with this error; the reason (if any) goes to the command's
    /// stderr.
    Refuse(Errno, Option<String>),
}

impl Rules {
    /// The verdict on an address, before any file is looked at.
    pub fn judge(&self, address: &Address) -> Verdict {
        match address {
            Address::Unspec => Verdict::Connect,
            Address::UnixUnnamed => Verdict::Refuse(Errno::EINVAL, None),
            Address::UnixPath(_) => Verdict::CheckPath,
            Address::UnixAbstract(name) => {
                if self.allowed.contains(&abstract_name(name)) {
                    Verdict::Connect
                } else {
                    Verdict::CheckServer
                }
            }
            Address::V4(_) | Address::V6(_) | Address::Netlink { .. } if self.network => {
                Verdict::Connect
            }
            // Netlink talks to the kernel only.
            Address::Netlink { .. } => Verdict::Connect,
            Address::V4(a) if super::ports::is_local((*a.ip()).into()) => self.local(a.port()),
            Address::V6(a) if super::ports::is_local((*a.ip()).into()) => self.local(a.port()),
            Address::V4(_) | Address::V6(_) => Verdict::Refuse(
                Errno::ENETUNREACH,
                Some(format!(
                    "refused a connection to {}: commands have no network in the sandbox \
                     ([shell] network = true allows it); they may reach only what commands \
                     of this session serve on localhost",
                    shown(address)
                )),
            ),
            Address::Other(family) => Verdict::Refuse(
                Errno::EACCES,
                Some(format!(
                    "refused a connection of address family {family}: commands may use IP \
                     and Unix sockets only"
                )),
            ),
        }
    }

    fn local(&self, port: u16) -> Verdict {
        if self.allowed.contains(&format!("localhost:{port}")) {
            Verdict::Connect
        } else {
            Verdict::CheckServer
        }
    }

    /// Whether the socket file at `found` (where it really is, as this
    /// process sees it) may be reached.
    pub fn path_allowed(&self, found: &Path) -> bool {
        self.writable.iter().any(|w| found.starts_with(w))
            || self
                .allowed
                .iter()
                .filter(|a| !a.starts_with('@'))
                .any(|a| Path::new(a) == found)
    }
}

/// How many connections can be in the making at once.
const WORKERS: usize = 8;

/// What the workers wait for: the listener (`Some(None)`: there is none).
type Slot = (Mutex<Option<Option<RawFd>>>, Condvar);

/// The warden's threads that make the command's connections. They are
/// started before the warden enters its PID namespace (no thread can be
/// started after), with its signals blocked (so none of them takes one),
/// and wait for the listener.
pub struct Workers {
    slot: Arc<Slot>,
    started: usize,
}

/// What the workers judge: connections, and opens when reads are watched.
struct Judge {
    rules: Rules,
    reads: Option<Reads>,
    /// What the commands of this Lathe serve.
    served: Option<super::ports::Registry>,
}

impl Workers {
    pub fn start(
        rules: Rules,
        reads: Option<Reads>,
        served: Option<super::ports::Registry>,
    ) -> Self {
        let slot: Arc<Slot> = Arc::new((Mutex::new(None), Condvar::new()));
        let rules = Arc::new(Judge {
            rules,
            reads,
            served,
        });
        let alive = Arc::new(AtomicUsize::new(0));
        let mut started = 0;
        for _ in 0..WORKERS {
            let (slot, rules, mine) = (Arc::clone(&slot), Arc::clone(&rules), Arc::clone(&alive));
            alive.fetch_add(1, Ordering::SeqCst);
            let spawned = std::thread::Builder::new()
                .name("connect".into())
                .stack_size(256 * 1024)
                .spawn(move || work(&slot, &rules, &mine));
            if spawned.is_ok() {
                started += 1;
            } else {
                alive.fetch_sub(1, Ordering::SeqCst);
            }
        }
        Self { slot, started }
    }

    /// Hands the workers the listener; whether they serve it. Without a
    /// worker the listener is closed: every `connect` then fails at once
    /// rather than waits for an answer that never comes.
    pub fn serve(self, listener: Option<RawFd>) -> bool {
        let served = match listener {
            Some(l) if self.started == 0 => {
                let _ = nix::unistd::close(l);
                None
            }
            other => other,
        };
        let (lock, ready) = &*self.slot;
        if let Ok(mut slot) = lock.lock() {
            *slot = Some(served);
        }
        ready.notify_all();
        served.is_some()
    }
}

fn work(slot: &Slot, rules: &Judge, alive: &AtomicUsize) {
    let listener = {
        let (lock, ready) = slot;
        let Ok(mut guard) = lock.lock() else {
            return;
        };
        loop {
            if let Some(listener) = *guard {
                break listener;
            }
            guard = match ready.wait(guard) {
                Ok(g) => g,
                Err(_) => return,
            };
        }
    };
    let Some(listener) = listener else {
        return;
    };
    loop {
        match ScmpNotifReq::receive(listener) {
            Ok(req) => answer(listener, &req, rules),
            // The caller was gone before it could be read.
            Err(e) if e.errno() == Some(libseccomp::error::SeccompErrno::ENOENT) => {}
            Err(_) => break,
        }
    }
    // The last worker out closes the listener, so that no `connect`
    // waits for an answer.
    if alive.fetch_sub(1, Ordering::SeqCst) == 1 {
        let _ = nix::unistd::close(listener);
    }
}

fn answer(listener: RawFd, req: &ScmpNotifReq, judge: &Judge) {
    let opens = i64::from(req.data.syscall.as_raw_syscall());
    #[cfg(target_arch = "x86_64")]
    let is_open = opens == libc::SYS_openat || opens == libc::SYS_open;
    #[cfg(not(target_arch = "x86_64"))]
    let is_open = opens == libc::SYS_openat;
    if is_open {
        let resp = match judge.reads.as_ref().map(|r| open_refused(listener, req, r)) {
            Some(Some(errno)) => {
                ScmpNotifResp::new_error(req.id, -(errno as i32), ScmpNotifRespFlags::empty())
            }
            // Not covered (or not watched): the kernel goes on with it.
            _ => ScmpNotifResp::new_continue(req.id, ScmpNotifRespFlags::empty()),
        };
        let _ = resp.respond(listener);
        return;
    }
    let call = i64::from(req.data.syscall.as_raw_syscall());
    let done = if call == libc::SYS_bind {
        bind(listener, req, judge)
    } else if call == libc::SYS_listen {
        listen(listener, req, judge).map(Some)
    } else {
        connect(listener, req, judge).map(Some)
    };
    let resp = match done {
        Ok(Some(())) => ScmpNotifResp::new_val(req.id, 0, ScmpNotifRespFlags::empty()),
        // The kernel does it, as the command asked (and Landlock allows).
        Ok(None) => ScmpNotifResp::new_continue(req.id, ScmpNotifRespFlags::empty()),
        Err((errno, why)) => {
            if let Some(why) = why {
                say(&why);
            }
            ScmpNotifResp::new_error(req.id, -(errno as i32), ScmpNotifRespFlags::empty())
        }
    };
    // The caller may be gone (killed, or interrupted by a signal and
    // asking again): nothing to tell.
    let _ = resp.respond(listener);
}

type Refusal = (Errno, Option<String>);

/// The most lines the warden writes on a command's stderr: a command
/// that tries again and again is told a few times, not flooded.
const MAX_SAID: usize = 20;

static SAID: AtomicUsize = AtomicUsize::new(0);

/// One line on the command's stderr, while there are not too many.
fn say(what: &str) {
    match SAID.fetch_add(1, Ordering::Relaxed) {
        n if n < MAX_SAID => {
            let _ = writeln!(std::io::stderr(), "{REFUSAL_PREFIX}{what}");
        }
        MAX_SAID => {
            let _ = writeln!(
                std::io::stderr(),
                "{REFUSAL_PREFIX}refused more; no more of this is said"
            );
        }
        _ => {}
    }
}

/// The longest path an open takes (`PATH_MAX`).
const MAX_PATH: usize = 4096;

/// Why an open for reading is refused: it names a file the read rules
/// cover, as it really is; `None` lets it go on.
fn open_refused(listener: RawFd, req: &ScmpNotifReq, reads: &Reads) -> Option<Errno> {
    let args = req.data.args;
    let opens = i64::from(req.data.syscall.as_raw_syscall());
    let (dirfd, path_at) = if opens == libc::SYS_openat {
        (
            i32::try_from(args[0] & 0xffff_ffff).unwrap_or(libc::AT_FDCWD),
            args[1],
        )
    } else {
        (libc::AT_FDCWD, args[0])
    };
    let tid = req.pid;
    // The path, up to its NUL, read a piece at a time (a page may end
    // right after it), straight from the thread's memory.
    let pid = nix::unistd::Pid::from_raw(i32::try_from(tid).ok()?);
    let mut path = Vec::new();
    let mut chunk = [0u8; 256];
    while path.len() < MAX_PATH {
        let at = usize::try_from(path_at).ok()?.checked_add(path.len())?;
        // Within one page, so that a piece never crosses into one that
        // is not mapped.
        let len = (4096 - at % 4096).min(chunk.len());
        let n = nix::sys::uio::process_vm_readv(
            pid,
            &mut [std::io::IoSliceMut::new(&mut chunk[..len])],
            &[nix::sys::uio::RemoteIoVec { base: at, len }],
        )
        .ok()
        .filter(|n| *n > 0)?;
        match chunk[..n].iter().position(|b| *b == 0) {
            Some(end) => {
                path.extend_from_slice(&chunk[..end]);
                break;
            }
            None => path.extend_from_slice(&chunk[..n]),
        }
    }
    // The thread that asked is still the one this pid names.
    notify_id_valid(listener, req.id).ok()?;
    let path = PathBuf::from(OsStr::from_bytes(&path));
    // Where the thread stands, or the directory it opens from, in its
    // own view (the links under /proc lead there).
    let full = if path.is_absolute() {
        path
    } else if dirfd == libc::AT_FDCWD {
        PathBuf::from(format!("/proc/{tid}/cwd")).join(path)
    } else {
        PathBuf::from(format!("/proc/{tid}/fd/{dirfd}")).join(path)
    };
    // Where it really is: found once as the kernel finds it (links
    // followed), then named by the descriptor.
    let found = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
        .open(&full)
        .ok()?;
    let real = std::fs::read_link(format!("/proc/self/fd/{}", found.as_raw_fd())).ok()?;
    reads.covers(&real).then_some(Errno::EACCES)
}

fn io_errno(e: &std::io::Error) -> Errno {
    e.raw_os_error().map_or(Errno::EIO, Errno::from_raw)
}

fn rustix_errno(e: rustix::io::Errno) -> Errno {
    Errno::from_raw(e.raw_os_error())
}

/// The address a `bind` or `connect` names (`fd, addr, len` are its
/// first arguments), read once from the thread's memory, and the socket.
fn their_address(listener: RawFd, req: &ScmpNotifReq) -> Result<(i32, Address), Refusal> {
    let [fd, addr, len, ..] = req.data.args;
    let tid = req.pid;
    // The call takes an int length; more than an address holds is
    // refused as the kernel refuses it.
    let len = usize::try_from(len & 0xffff_ffff)
        .ok()
        .filter(|l| *l <= MAX_ADDRESS)
        .ok_or((Errno::EINVAL, None))?;
    let fd = i32::try_from(fd & 0xffff_ffff).map_err(|_| (Errno::EBADF, None))?;
    let mem = File::open(format!("/proc/{tid}/mem")).map_err(|_| (Errno::ESRCH, None))?;
    // The thread that asked is still the one this pid names.
    notify_id_valid(listener, req.id).map_err(|_| (Errno::ESRCH, None))?;
    let mut bytes = vec![0u8; len];
    mem.read_exact_at(&mut bytes, addr)
        .map_err(|_| (Errno::EFAULT, None))?;
    drop(mem);
    Ok((fd, parse(&bytes).map_err(|e| (e, None))?))
}

/// Reads the address, decides, and connects: `Ok` when the connection
/// was made.
fn connect(listener: RawFd, req: &ScmpNotifReq, judge: &Judge) -> Result<(), Refusal> {
    let tid = req.pid;
    let rules = &judge.rules;
    let (fd, address) = their_address(listener, req)?;
    let verdict = rules.judge(&address);
    if let Verdict::Refuse(errno, why) = verdict {
        return Err((errno, why));
    }
    if verdict == Verdict::CheckServer {
        served_here(&address, judge.served.as_ref())?;
    }
    let socket = their_socket(tid, fd)?;
    notify_id_valid(listener, req.id).map_err(|_| (Errno::ESRCH, None))?;
    let made = match &address {
        Address::Unspec => rustix::net::connect_unspec(&socket),
        Address::V4(a) => rustix::net::connect(&socket, a),
        Address::V6(a) => rustix::net::connect(&socket, a),
        Address::Netlink { pid, groups } => rustix::net::connect(
            &socket,
            &rustix::net::netlink::SocketAddrNetlink::new(*pid, *groups),
        ),
        Address::UnixAbstract(name) => {
            let to = rustix::net::SocketAddrUnix::new_abstract_name(name)
                .map_err(|e| (rustix_errno(e), None))?;
            rustix::net::connect(&socket, &to)
        }
        Address::UnixPath(path) => {
            let file = open_socket(tid, path)?;
            let found = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
                .map_err(|e| (io_errno(&e), None))?;
            if !rules.path_allowed(&found) {
                return Err((
                    Errno::EACCES,
                    Some(format!(
                        "refused a connection to the socket {}: it lies outside the places \
                         commands may write, where other programs listen \
                         ([shell] allow_sockets = [\"{}\"] lets commands reach it)",
                        found.display(),
                        found.display()
                    )),
                ));
            }
            let via =
                rustix::net::SocketAddrUnix::new(format!("/proc/self/fd/{}", file.as_raw_fd()))
                    .map_err(|e| (rustix_errno(e), None))?;
            rustix::net::connect(&socket, &via)
        }
        Address::UnixUnnamed | Address::Other(_) => return Err((Errno::EACCES, None)),
    };
    made.map_err(|e| (rustix_errno(e), None))
}

/// Whether what listens at a local address (a TCP port of this machine,
/// an abstract name) is served by a sandboxed command of this Lathe (this
/// one, or one whose warden noted it in `served`): `Ok` when it is;
/// refused when another program serves it; "refused" when nothing does,
/// as the kernel would say.
fn served_here(address: &Address, served: Option<&super::ports::Registry>) -> Result<(), Refusal> {
    use super::ports;
    let (inodes, allow, port) = match address {
        Address::V4(a) => (
            ports::tcp_listeners(a.port()),
            format!("localhost:{}", a.port()),
            a.port(),
        ),
        Address::V6(a) => (
            ports::tcp_listeners(a.port()),
            format!("localhost:{}", a.port()),
            a.port(),
        ),
        Address::UnixAbstract(name) => (ports::abstract_listeners(name), abstract_name(name), 0),
        _ => return Err((Errno::EACCES, None)),
    };
    if inodes.is_empty() {
        return Err((Errno::ECONNREFUSED, None));
    }
    if all_ours(&inodes, port, served) {
        return Ok(());
    }
    Err((
        Errno::EACCES,
        Some(format!(
            "refused a connection to {}: a program outside the sandbox listens there, not a \
             command of this session ([shell] allow_sockets = [\"{allow}\"] lets commands \
             reach it)",
            shown(address)
        )),
    ))
}

/// Whether every socket of `inodes` (listening on `port`; 0 for an
/// abstract name) is held under this warden, or noted by a warden of
/// this Lathe as one its command listens on, on that very port.
fn all_ours(inodes: &[u64], port: u16, served: Option<&super::ports::Registry>) -> bool {
    // The registry first (a file looked up); the processes (every one
    // on the machine read) only for what it does not know.
    let mut unknown: Vec<u64> = inodes
        .iter()
        .copied()
        .filter(|i| !(port != 0 && served.is_some_and(|r| r.knows(*i, port))))
        .collect();
    unknown.sort_unstable();
    unknown.dedup();
    unknown.is_empty()
        || super::ports::held_under(&unknown, std::process::id()).len() == unknown.len()
}

/// Notes a socket the warden bound for its command as served by this
/// Lathe.
fn note_served(socket: &OwnedFd, served: Option<&super::ports::Registry>) {
    if let (Some(registry), Ok(stat), Some((_, port))) =
        (served, rustix::fs::fstat(socket), local_address(socket))
    {
        registry.record(stat.st_ino, port);
    }
}

/// Where a TCP socket of a command may listen, for the address it asked
/// for: the loopback interface, in the address's family. Every interface
/// (`0.0.0.0`, `::`) is the loopback one; `None` for any other address.
fn loopback_for(address: &Address, v6_only: bool) -> Option<Address> {
    match address {
        Address::V4(a) if a.ip().is_loopback() => Some(address.clone()),
        Address::V4(a) if a.ip().is_unspecified() => Some(Address::V4(SocketAddrV4::new(
            Ipv4Addr::LOCALHOST,
            a.port(),
        ))),
        Address::V6(a) => {
            let ip = match a.ip().to_ipv4_mapped() {
                Some(v4) if v4.is_loopback() => *a.ip(),
                Some(v4) if v4.is_unspecified() => Ipv4Addr::LOCALHOST.to_ipv6_mapped(),
                Some(_) => return None,
                None if a.ip().is_loopback() => *a.ip(),
                // Both families on `::` (unless IPV6_V6ONLY): one socket
                // cannot be on both loopback addresses, and 127.0.0.1 is
                // the one every `localhost` reaches (some systems name
                // only it so), browsers and curl included.
                None if a.ip().is_unspecified() && !v6_only => Ipv4Addr::LOCALHOST.to_ipv6_mapped(),
                None if a.ip().is_unspecified() => Ipv6Addr::LOCALHOST,
                None => return None,
            };
            Some(Address::V6(SocketAddrV6::new(
                ip,
                a.port(),
                a.flowinfo(),
                0,
            )))
        }
        _ => None,
    }
}

/// A `bind`: a TCP socket is bound by the warden, on the loopback
/// interface (`Ok(Some)`); any other is left to the kernel (`Ok(None)`),
/// where Landlock holds the rules for paths (and would refuse TCP, had
/// the socket been swapped meanwhile).
fn bind(listener: RawFd, req: &ScmpNotifReq, judge: &Judge) -> Result<Option<()>, Refusal> {
    let (fd, address) = their_address(listener, req)?;
    let socket = their_socket(req.pid, fd)?;
    let family =
        rustix::net::sockopt::socket_domain(&socket).map_err(|e| (rustix_errno(e), None))?;
    if family != rustix::net::AddressFamily::INET && family != rustix::net::AddressFamily::INET6 {
        return Ok(None);
    }
    let v6_only = rustix::net::sockopt::ipv6_v6only(&socket).unwrap_or(false);
    let Some(at) = loopback_for(&address, v6_only) else {
        return Err((
            Errno::EADDRNOTAVAIL,
            Some(format!(
                "refused to listen on {}: commands may listen on this machine's loopback \
                 interface only (localhost), which the person's browser reaches; the sandbox \
                 gives them no network ([shell] network = true allows it)",
                shown(&address)
            )),
        ));
    };
    let port = match &at {
        Address::V4(a) => a.port(),
        Address::V6(a) => a.port(),
        _ => 0,
    };
    // A port another program of this machine listens on is its own, at
    // any address and with SO_REUSEPORT too (which would share its
    // connections with the command).
    let there = if port == 0 {
        Vec::new()
    } else {
        super::ports::tcp_listeners(port)
    };
    if !there.is_empty() && !all_ours(&there, port, judge.served.as_ref()) {
        return Err((
            Errno::EADDRINUSE,
            Some(format!(
                "refused to listen on port {port}: another program of this machine listens \
                 there; choose another port"
            )),
        ));
    }
    notify_id_valid(listener, req.id).map_err(|_| (Errno::ESRCH, None))?;
    let bound = match &at {
        Address::V4(a) => rustix::net::bind(&socket, a),
        Address::V6(a) => rustix::net::bind(&socket, a),
        _ => return Err((Errno::EINVAL, None)),
    };
    bound.map_err(|e| (rustix_errno(e), None))?;
    note_served(&socket, judge.served.as_ref());
    if at != address {
        // A port chosen is a server for someone to open: say where.
        if port != 0 {
            say(&format!(
                "listening on {} instead of {}: in the sandbox a server is reachable from this \
                 machine only (http://localhost:{port})",
                shown(&at),
                shown(&address)
            ));
        }
    }
    Ok(Some(()))
}

/// A `listen`, made by the warden: a TCP socket not yet bound is first
/// bound to the loopback interface (the kernel would bind it to every
/// interface).
fn listen(listener: RawFd, req: &ScmpNotifReq, judge: &Judge) -> Result<(), Refusal> {
    let [fd, backlog, ..] = req.data.args;
    let fd = i32::try_from(fd & 0xffff_ffff).map_err(|_| (Errno::EBADF, None))?;
    // An int, as the kernel reads it.
    let backlog = i32::from_ne_bytes(((backlog & 0xffff_ffff) as u32).to_ne_bytes());
    let socket = their_socket(req.pid, fd)?;
    notify_id_valid(listener, req.id).map_err(|_| (Errno::ESRCH, None))?;
    let family =
        rustix::net::sockopt::socket_domain(&socket).map_err(|e| (rustix_errno(e), None))?;
    let ip =
        family == rustix::net::AddressFamily::INET || family == rustix::net::AddressFamily::INET6;
    if ip && !on_loopback(&socket) {
        // Not bound, or its binding dissolved (a socket connected, then
        // disconnected, keeps a port on no address): the kernel would
        // bind it to every interface. The loopback one, or nothing.
        let bound = if family == rustix::net::AddressFamily::INET {
            rustix::net::bind(&socket, &SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))
        } else {
            rustix::net::bind(&socket, &SocketAddrV6::new(Ipv6Addr::LOCALHOST, 0, 0, 0))
        };
        bound.map_err(|_| {
            (
                Errno::EACCES,
                Some(
                    "refused to listen on a socket not bound to the loopback interface: \
                     commands may listen on localhost only (bind the socket there first, or \
                     use a new one)"
                        .to_string(),
                ),
            )
        })?;
    }
    rustix::net::listen(&socket, backlog).map_err(|e| (rustix_errno(e), None))?;
    if ip {
        // Checked again: what listens, listens on the loopback interface.
        if !on_loopback(&socket) {
            let _ = rustix::net::shutdown(&socket, rustix::net::Shutdown::Both);
            return Err((Errno::EACCES, None));
        }
        note_served(&socket, judge.served.as_ref());
    }
    Ok(())
}

/// Where an IP socket is bound, as the kernel has it now.
fn local_address(socket: &OwnedFd) -> Option<(std::net::IpAddr, u16)> {
    let any = rustix::net::getsockname(socket).ok()?;
    if let Ok(v4) = SocketAddrV4::try_from(any.clone()) {
        return Some(((*v4.ip()).into(), v4.port()));
    }
    SocketAddrV6::try_from(any)
        .ok()
        .map(|v6| ((*v6.ip()).into(), v6.port()))
}

/// Whether an IP socket is bound to the loopback interface.
fn on_loopback(socket: &OwnedFd) -> bool {
    local_address(socket).is_some_and(|(ip, port)| port != 0 && super::ports::is_loopback(ip))
}

/// The socket the command named, duplicated into this process: the
/// same open socket, so connecting it connects theirs.
fn their_socket(tid: u32, fd: i32) -> Result<OwnedFd, Refusal> {
    use rustix::process::{Pid, PidfdFlags, PidfdGetfdFlags, pidfd_getfd, pidfd_open};
    let pid = i32::try_from(tid)
        .ok()
        .and_then(Pid::from_raw)
        .ok_or((Errno::ESRCH, None))?;
    // The thread itself where the kernel can name one (6.9); else its
    // process, whose descriptor table it shares (a thread with a table of
    // its own can only have the same address made on another socket).
    const PIDFD_THREAD: u32 = libc::O_EXCL as u32;
    let pidfd = pidfd_open(pid, PidfdFlags::from_bits_retain(PIDFD_THREAD))
        .or_else(|_| {
            let leader = thread_group(tid).ok_or(rustix::io::Errno::SRCH)?;
            pidfd_open(leader, PidfdFlags::empty())
        })
        .map_err(|e| (rustix_errno(e), None))?;
    pidfd_getfd(&pidfd, fd, PidfdGetfdFlags::empty()).map_err(|e| {
        // A descriptor that is not open there is EBADF there.
        (rustix_errno(e), None)
    })
}

/// The process a thread belongs to.
fn thread_group(tid: u32) -> Option<rustix::process::Pid> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let tgid = status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))?
        .trim()
        .parse::<i32>()
        .ok()?;
    rustix::process::Pid::from_raw(tgid)
}

/// Opens the socket file a path names, as the command would find it:
/// a relative path from the thread's working directory, links followed.
/// Only a socket is kept (anything else refuses the connection as the
/// kernel would).
fn open_socket(tid: u32, path: &Path) -> Result<File, Refusal> {
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        // The thread's working directory, whichever mount table it is
        // in: the walk goes on from there.
        PathBuf::from(format!("/proc/{tid}/cwd")).join(path)
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
        .open(&full)
        .map_err(|e| (io_errno(&e), None))?;
    let is_socket = file.metadata().is_ok_and(|m| m.file_type().is_socket());
    if !is_socket {
        return Err((Errno::ECONNREFUSED, None));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unix(path: &[u8]) -> Vec<u8> {
        let mut b = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        b.extend_from_slice(path);
        b
    }

    #[test]
    fn addresses_are_read_as_the_kernel_reads_them() {
        assert_eq!(
            parse(&unix(b"dev.sock\0junk")).unwrap(),
            Address::UnixPath("dev.sock".into())
        );
        assert_eq!(
            parse(&unix(b"/var/tmp/x/dev.sock")).unwrap(),
            Address::UnixPath("/var/tmp/x/dev.sock".into())
        );
        assert_eq!(
            parse(&unix(b"\0/tmp/.X11-unix/X0")).unwrap(),
            Address::UnixAbstract(b"/tmp/.X11-unix/X0".to_vec())
        );
        assert_eq!(parse(&unix(b"")).unwrap(), Address::UnixUnnamed);
        assert_eq!(parse(&[1]), Err(Errno::EINVAL));
        let mut v4 = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        v4.extend_from_slice(&8080u16.to_be_bytes());
        v4.extend_from_slice(&[127, 0, 0, 1]);
        assert_eq!(parse(&v4), Err(Errno::EINVAL), "too short for sockaddr_in");
        v4.extend_from_slice(&[0; 8]);
        assert_eq!(
            parse(&v4).unwrap(),
            Address::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 8080))
        );
        let other = (libc::AF_VSOCK as u16).to_ne_bytes();
        assert_eq!(
            parse(&other).unwrap(),
            Address::Other(libc::AF_VSOCK as u16)
        );
    }

    #[test]
    fn abstract_sockets_need_a_server_of_this_session_or_a_name() {
        let name = Address::UnixAbstract(b"/tmp/.X11-unix/X0".to_vec());
        for network in [false, true] {
            let bare = Rules {
                network,
                ..Rules::default()
            };
            assert_eq!(bare.judge(&name), Verdict::CheckServer);
        }
        let named = Rules {
            allowed: vec!["@/tmp/.X11-unix/X0".into()],
            ..Rules::default()
        };
        assert_eq!(named.judge(&name), Verdict::Connect);
        // A name with a byte more is another name.
        assert_eq!(
            named.judge(&Address::UnixAbstract(b"/tmp/.X11-unix/X0\0".to_vec())),
            Verdict::CheckServer
        );
    }

    #[test]
    fn paths_are_judged_where_the_socket_really_is() {
        let rules = Rules {
            writable: vec!["/work/ws".into(), "/tmp".into()],
            allowed: vec!["/run/user/1000/bus".into(), "@x".into()],
            ..Rules::default()
        };
        assert!(rules.path_allowed(Path::new("/work/ws/app.sock")));
        assert!(rules.path_allowed(Path::new("/tmp/t/s")));
        assert!(rules.path_allowed(Path::new("/run/user/1000/bus")));
        assert!(!rules.path_allowed(Path::new("/work/wsx/app.sock")));
        assert!(!rules.path_allowed(Path::new("/var/tmp/x/dev.sock")));
        assert!(!rules.path_allowed(Path::new("@x")));
        assert!(!rules.path_allowed(Path::new("socket:[1234]")));
    }

    #[test]
    fn the_network_off_means_this_machine_only() {
        let rules = Rules::default();
        let v4 = |ip: [u8; 4], port| Address::V4(SocketAddrV4::new(Ipv4Addr::from(ip), port));
        let v6 = |ip: &str, port| Address::V6(SocketAddrV6::new(ip.parse().unwrap(), port, 0, 0));
        for local in [
            v4([127, 0, 0, 1], 80),
            v4([127, 9, 9, 9], 80),
            v4([0, 0, 0, 0], 80),
            v6("::1", 80),
            v6("::", 80),
            v6("::ffff:127.0.0.1", 80),
        ] {
            assert_eq!(rules.judge(&local), Verdict::CheckServer, "{local:?}");
        }
        for far in [
            v4([10, 0, 0, 1], 80),
            v4([93, 184, 216, 34], 443),
            v6("2001:db8::1", 443),
            v6("::ffff:10.0.0.1", 80),
        ] {
            assert!(
                matches!(
                    rules.judge(&far),
                    Verdict::Refuse(Errno::ENETUNREACH, Some(_))
                ),
                "{far:?}"
            );
        }
        // A port the person named is reached whoever serves it.
        let named = Rules {
            allowed: vec!["localhost:5432".into()],
            ..Rules::default()
        };
        assert_eq!(named.judge(&v4([127, 0, 0, 1], 5432)), Verdict::Connect);
        assert_eq!(named.judge(&v4([127, 0, 0, 1], 5433)), Verdict::CheckServer);
        // With the network on, IP goes through.
        let open = Rules {
            network: true,
            ..Rules::default()
        };
        assert_eq!(open.judge(&v4([93, 184, 216, 34], 443)), Verdict::Connect);
        assert!(matches!(
            rules.judge(&Address::Other(libc::AF_VSOCK as u16)),
            Verdict::Refuse(Errno::EACCES, Some(_))
        ));
    }

    #[test]
    fn servers_listen_on_the_loopback_interface_only() {
        let v4 = |ip: [u8; 4]| Address::V4(SocketAddrV4::new(Ipv4Addr::from(ip), 8000));
        let v6 = |ip: &str| Address::V6(SocketAddrV6::new(ip.parse().unwrap(), 8000, 0, 0));
        let both = |a: &Address| loopback_for(a, false);
        assert_eq!(both(&v4([0, 0, 0, 0])), Some(v4([127, 0, 0, 1])));
        assert_eq!(both(&v4([127, 0, 0, 2])), Some(v4([127, 0, 0, 2])));
        // Both families on `::`: 127.0.0.1, which every localhost reaches.
        assert_eq!(both(&v6("::")), Some(v6("::ffff:127.0.0.1")));
        assert_eq!(loopback_for(&v6("::"), true), Some(v6("::1")));
        assert_eq!(both(&v6("::1")), Some(v6("::1")));
        assert_eq!(both(&v6("::ffff:0.0.0.0")), Some(v6("::ffff:127.0.0.1")));
        for far in [
            v4([192, 168, 1, 5]),
            v6("2001:db8::1"),
            v6("::ffff:10.0.0.1"),
        ] {
            assert_eq!(both(&far), None, "{far:?}");
            assert_eq!(loopback_for(&far, true), None, "{far:?}");
        }
        assert_eq!(both(&Address::UnixPath("x".into())), None);
    }
}
