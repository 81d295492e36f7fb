//! The two helper modes. They run in a fresh process with no runtime
//! and no other thread.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};
use nix::errno::Errno;
use nix::sys::prctl;
use nix::sys::signal::{Signal, kill};
use nix::sys::signalfd::{SigSet, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{Pid, getppid};

use super::namespaces::{self, Isolation};
use super::sockets;
use super::{CONFINER_ARG, Mode, Policy, REPORT_PREFIX, Report, fail};

/// Signals that end the command (and the warden waits on SIGCHLD).
const STOPS: [Signal; 4] = [
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];

/// One line of what the sandbox set up, on stderr, when asked to report
/// (the probe): Lathe reads these before the command's own output.
fn report(what: &Report) {
    if let Ok(line) = serde_json::to_string(what) {
        eprintln!("{REPORT_PREFIX}{line}");
    }
}

fn parent_is(expected: u32) -> bool {
    u32::try_from(getppid().as_raw()).is_ok_and(|p| p == expected)
}

/// Closes every descriptor but stdin, stdout and stderr: whatever started
/// Lathe may have left one open (an IDE, a CI runner), and a command must
/// not write through it where the sandbox forbids it.
fn close_inherited() {
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                .filter(|&fd| fd > 2)
                .collect()
        })
        .unwrap_or_default();
    for fd in fds {
        // The directory's own descriptor is closed already: EBADF.
        let _ = nix::unistd::close(fd);
    }
}

/// The warden takes charge: a session of its own (no terminal, a group
/// Lathe can kill whole), SIGTERM when Lathe goes, the orphans of the
/// command as its children, and the signals it waits on blocked and read
/// from a descriptor.
fn take_charge(parent: u32) -> Result<SignalFd, String> {
    // A session of its own: no terminal to write to, and a group Lathe
    // can kill as a whole.
    if let Err(e) = nix::unistd::setsid() {
        return Err(format!("cannot start a session: {e}"));
    }
    // Lathe going away (even by SIGKILL) is a SIGTERM here; if it went
    // before this line, the parent check sees it.
    if let Err(e) = prctl::set_pdeathsig(Signal::SIGTERM) {
        return Err(format!("cannot set the parent-death signal: {e}"));
    }
    if !parent_is(parent) {
        return Err("lathe is gone".into());
    }
    if let Err(e) = prctl::set_child_subreaper(true) {
        return Err(format!("cannot become a subreaper: {e}"));
    }
    let mut mask = SigSet::empty();
    mask.add(Signal::SIGCHLD);
    for s in STOPS {
        mask.add(s);
    }
    if let Err(e) = mask.thread_block() {
        return Err(format!("cannot block signals: {e}"));
    }
    // Close-on-exec: the command gets no descriptor of the warden's.
    SignalFd::with_flags(&mask, nix::sys::signalfd::SfdFlags::SFD_CLOEXEC)
        .map_err(|e| format!("cannot watch signals: {e}"))
}

pub fn warden(mut policy: Policy) -> i32 {
    close_inherited();
    let signals = match take_charge(policy.parent) {
        Ok(signals) => signals,
        Err(e) => return fail(&e),
    };
    // Landlock covers TCP and writes, the seccomp filter every other way
    // onto the network; namespaces of its own add mounts that hold the
    // protected paths read-only and a PID namespace, where the system
    // lets us make them. The network namespace stays the system's: what
    // a command serves on the loopback interface, the person's browser
    // reaches (the warden binds it there, and nowhere else).
    let namespaced = policy.mode != Mode::Off && policy.namespaces;
    // Where this Lathe's wardens note what their commands serve: opened
    // while the system's mount table is still this process's.
    let served = policy
        .served
        .as_deref()
        .filter(|_| policy.mode != Mode::Off && !policy.network)
        .and_then(super::ports::Registry::open);
    let mut isolation = if namespaced {
        match namespaces::isolate(&mut policy) {
            Ok(isolation) => isolation,
            Err(e) => return fail(&e),
        }
    } else if policy.mode == Mode::Off {
        // With the sandbox off the command still may not reach its
        // warden (which ends what it leaves behind): a user and PID
        // namespace of its own, with no filesystem rule, where the
        // system allows one.
        namespaces::own_user()
    } else {
        Isolation::default()
    };
    let me = std::process::id();
    // The confiner hands the warden its filter's listener through this
    // pair, and the warden's workers (started now: none can be once the
    // PID namespace is entered) make every connection the command asks
    // for.
    let supervise = policy.mode != Mode::Off;
    let pair = if supervise {
        match listener_pair() {
            Ok(pair) => Some(pair),
            Err(e) => return fail(&e),
        }
    } else {
        None
    };
    let workers = pair.as_ref().map(|_| {
        sockets::Workers::start(
            sockets::Rules {
                // Where the command may write, as it sees it (its `/tmp` is
                // the session's own; without a mount table, `/dev/shm` is the
                // system's and not writable).
                writable: policy
                    .writable
                    .iter()
                    .filter(|w| isolation.mounts || *w != Path::new("/dev/shm"))
                    .cloned()
                    .collect(),
                allowed: policy.allow_sockets.clone(),
                network: policy.network,
            },
            policy.reads.as_ref().and_then(sockets::Reads::new),
            served,
        )
    });
    if namespaced || isolation.user {
        namespaces::enter_pid_namespace(&mut isolation);
    }
    if policy.report {
        report(&Report::Isolation(isolation));
    }
    let child_policy = Policy {
        parent: me,
        own_proc: isolation.proc,
        protected_mounted: isolation.mounts,
        supervisor: pair.as_ref().map(|(_, theirs)| theirs.as_raw_fd()),
        ..policy
    };
    let encoded = match serde_json::to_string(&child_policy) {
        Ok(e) => e,
        Err(e) => return fail(&format!("cannot encode the policy: {e}")),
    };
    // This very binary, wherever it lies (a path under the system's
    // /tmp is out of sight now).
    let exe = std::path::PathBuf::from("/proc/self/exe");
    let child = match Command::new(exe).arg(CONFINER_ARG).arg(encoded).spawn() {
        Ok(c) => c,
        Err(e) => return fail(&format!("cannot start the confiner: {e}")),
    };
    let Ok(shell) = i32::try_from(child.id()).map(Pid::from_raw) else {
        return fail("the confiner has no pid");
    };
    // The std handle is not waited on: the warden reaps everything.
    drop(child);
    if let (Some((ours, theirs)), Some(workers)) = (pair, workers) {
        drop(theirs);
        let served = workers.serve(receive_listener(&ours));
        if child_policy.report {
            report(&Report::Sockets(served));
        }
    }
    wait_for(shell, &signals)
}

/// Waits for the command (the confiner's shell) to end, reaping every
/// orphan on the way; a signal to the warden kills them all. The exit
/// code is the shell's (or 128 and the signal).
fn wait_for(shell: Pid, signals: &SignalFd) -> i32 {
    let mut outcome: Option<WaitStatus> = None;
    while outcome.is_none() {
        match signals.read_signal() {
            Ok(Some(info)) => {
                let signo = i32::try_from(info.ssi_signo).unwrap_or(0);
                if signo == Signal::SIGCHLD as i32 {
                    outcome = reap(shell);
                } else {
                    kill_all(Signal::SIGKILL);
                    return 128 + signo;
                }
            }
            Ok(None) => {}
            Err(Errno::EINTR) => {}
            Err(e) => {
                kill_all(Signal::SIGKILL);
                return fail(&format!("cannot read signals: {e}"));
            }
        }
    }
    // The command is done: nothing it started outlives it.
    kill_all(Signal::SIGKILL);
    match outcome {
        Some(WaitStatus::Exited(_, code)) => code,
        Some(WaitStatus::Signaled(_, sig, _)) => {
            // Die the way the shell died, so Lathe sees the signal.
            let _ = SigSet::all().thread_unblock();
            let _ = nix::sys::signal::raise(sig);
            128 + sig as i32
        }
        _ => 1,
    }
}

/// Reaps every child that has exited; the shell's status if it was
/// one of them.
fn reap(shell: Pid) -> Option<WaitStatus> {
    let mut found = None;
    loop {
        match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) | Err(_) => return found,
            Ok(status) => {
                if status.pid() == Some(shell) {
                    found = Some(status);
                }
            }
        }
    }
}

/// Kills every process under the warden and reaps it. Orphans come to
/// the warden (it is their subreaper), so this goes on until there
/// are no children left.
fn kill_all(sig: Signal) {
    let me = std::process::id();
    for _ in 0..10_000 {
        // No child at all (the common case): nothing to look for.
        if waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) == Err(Errno::ECHILD) {
            return;
        }
        let children = children_of(me);
        if children.is_empty() {
            // Reap what is left; ECHILD means nothing is.
            while let Ok(status) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
                if status == WaitStatus::StillAlive {
                    break;
                }
            }
            if children_of(me).is_empty() {
                return;
            }
            continue;
        }
        for pid in &children {
            let _ = kill(*pid, sig);
        }
        for pid in &children {
            let _ = waitpid(*pid, None);
        }
    }
}

/// The children of `parent`, from `/proc`.
fn children_of(parent: u32) -> Vec<Pid> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    // pid (comm) state ppid …; comm may hold anything.
                    let rest = &stat[stat.rfind(')')? + 1..];
                    rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(parent)
        })
        .map(Pid::from_raw)
        .collect()
}

pub fn confine(policy: Policy) -> i32 {
    if let Err(e) = prctl::set_pdeathsig(Signal::SIGKILL) {
        return fail(&format!("cannot set the parent-death signal: {e}"));
    }
    // As the first process of a PID namespace of its own, the warden
    // (outside it) shows as parent 0.
    if !parent_is(policy.parent) && getppid().as_raw() != 0 {
        return fail("the warden is gone");
    }
    // Before Landlock, which forbids mounts: a `/proc` that shows the
    // command's processes only. Where it cannot be had, Landlock's
    // ptrace scoping still keeps other processes' memory and environment
    // out of reach.
    if policy.own_proc {
        let mounted = namespaces::mount_own_proc();
        if policy.report {
            report(&Report::Proc(mounted.is_ok()));
        }
    }
    // The warden blocked these for itself; the command gets them back.
    if let Err(e) = SigSet::all().thread_unblock() {
        return fail(&format!("cannot unblock signals: {e}"));
    }
    if policy.mode == Mode::Off {
        // Off, and still no signal reaches the warden or Lathe.
        let scoped = signal_scope();
        if policy.report {
            report(&Report::SignalScope(scoped));
        }
    } else {
        match restrict(&policy) {
            Ok(abi) if policy.report => report(&Report::Landlock(abi as u8)),
            Ok(_) => {}
            Err(e) => return fail(&e),
        }
        // Without an IPC namespace of its own, System V IPC is the
        // system's: refused.
        let listener = match super::seccomp::apply(
            !policy.protected_mounted,
            policy.supervisor.is_some(),
            policy.reads.as_ref().is_some_and(|r| !r.globs.is_empty()),
            policy.network,
        ) {
            Ok(listener) => listener,
            Err(e) => {
                return fail(&format!(
                    "{e}; set sandbox = \"off\" in the config to run commands without the sandbox"
                ));
            }
        };
        if let Some(pair) = policy.supervisor {
            let sent = send_listener(pair, listener);
            // Neither goes on to the command (the listener is
            // close-on-exec).
            let _ = nix::unistd::close(pair);
            if let Err(e) = sent {
                return fail(&format!("cannot hand the warden the connections: {e}"));
            }
        }
    }
    let Some((program, args)) = policy.argv.split_first() else {
        return fail("no command given");
    };
    let mut command = Command::new(program);
    command.args(args).current_dir(&policy.cwd);
    if let Some(private) = &policy.private_tmp {
        // The session's temp directory, where the command sees it.
        let tmp = Path::new("/tmp");
        let shown = if policy.writable.iter().any(|w| w == tmp) {
            tmp
        } else {
            private.as_path()
        };
        command.env("TMPDIR", shown);
    }
    let err = command.exec();
    fail(&format!("cannot run {program}: {err}"))
}

/// The pair the confiner hands its listener through: the warden's end
/// close-on-exec, the confiner's inherited.
fn listener_pair() -> Result<(OwnedFd, OwnedFd), String> {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};
    let (ours, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|e| format!("cannot make a socket pair: {e}"))?;
    fcntl(&theirs, FcntlArg::F_SETFD(FdFlag::empty()))
        .map_err(|e| format!("cannot pass a socket on: {e}"))?;
    Ok((ours, theirs))
}

/// Sends the listener (or, without one, a message that says so).
fn send_listener(pair: RawFd, listener: Option<RawFd>) -> Result<(), Errno> {
    use nix::sys::socket::{ControlMessage, MsgFlags, sendmsg};
    let fds = listener.map(|l| [l]);
    let cmsgs: Vec<ControlMessage<'_>> = fds
        .as_ref()
        .map(|f| ControlMessage::ScmRights(f))
        .into_iter()
        .collect();
    let what: &[u8] = if listener.is_some() { b"l" } else { b"n" };
    sendmsg::<()>(
        pair,
        &[std::io::IoSlice::new(what)],
        &cmsgs,
        MsgFlags::empty(),
        None,
    )
    .map(|_| ())
}

/// The listener the confiner sent; `None` when it had none or went away
/// first.
fn receive_listener(pair: &OwnedFd) -> Option<RawFd> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
    let mut byte = [0u8; 1];
    let mut iov = [std::io::IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([RawFd; 1]);
    let msg = loop {
        match recvmsg::<()>(
            pair.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Err(Errno::EINTR) => {}
            other => break other.ok()?,
        }
    };
    let fds: Vec<RawFd> = msg
        .cmsgs()
        .ok()?
        .filter_map(|c| match c {
            ControlMessageOwned::ScmRights(fds) => Some(fds),
            _ => None,
        })
        .flatten()
        .collect();
    fds.first().copied()
}

/// What to grant so that everything beneath `roots` is covered but
/// `keep` (and what is beneath it): a root with nothing to keep as it is;
/// one that holds a kept path through its entries, one by one. The
/// second list holds the directories split so (to be granted their own
/// listing only). Symbolic links are not followed: a grant is for what
/// is inside the roots.
pub(super) fn around(roots: &[PathBuf], keep: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    fn split(dir: &Path, keep: &[PathBuf], out: &mut (Vec<PathBuf>, Vec<PathBuf>), depth: usize) {
        if keep.iter().any(|k| k == dir) {
            return;
        }
        if !keep.iter().any(|k| k.starts_with(dir)) {
            out.0.push(dir.to_path_buf());
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        if depth > 32 {
            return;
        }
        out.1.push(dir.to_path_buf());
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| !t.is_symlink()) {
                split(&entry.path(), keep, out, depth + 1);
            }
        }
    }
    let mut out = (Vec::new(), Vec::new());
    for root in roots {
        split(root, keep, &mut out, 0);
    }
    out
}

/// Applies the Landlock ruleset to this process and what it starts;
/// the ABI the kernel enforced it with.
/// A Landlock domain that handles no access but signals (kernel 6.12):
/// the command cannot signal a process outside it, its warden and Lathe
/// above all. Whether it holds.
fn signal_scope() -> bool {
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .scope(Scope::Signal)
        .and_then(Ruleset::create)
        .and_then(|r| r.restrict_self());
    matches!(status, Ok(s) if s.ruleset == landlock::RulesetStatus::FullyEnforced)
}

fn restrict(policy: &Policy) -> Result<ABI, String> {
    // V9 adds connecting to Unix sockets to what is checked (only beneath
    // the writable roots); older kernels drop it (best effort), and the
    // mount table hides the sockets listening at the start instead.
    let abi = ABI::V9;
    let off = "set sandbox = \"off\" in the config (~/.config/lathe/config.toml) \
               to run commands without it";
    // Without a mount table of its own nothing else holds the protected
    // paths read-only: the writable roots are granted around them.
    // Nor are the hidden paths hidden: the reads are granted around them.
    let (writable, readable, listable) = if policy.protected_mounted {
        (
            policy.writable.clone(),
            vec![PathBuf::from("/")],
            Vec::new(),
        )
    } else {
        let (mut readable, listable) = around(&[PathBuf::from("/")], &policy.hidden);
        // What must show beneath a hidden path (the person's skills).
        readable.extend(
            policy
                .shown
                .iter()
                .filter(|s| policy.hidden.iter().any(|h| s.starts_with(h)))
                .cloned(),
        );
        // No empty `/dev/shm` of its own: the system's is other programs'.
        let roots: Vec<PathBuf> = policy
            .writable
            .iter()
            .filter(|w| *w != Path::new("/dev/shm"))
            .cloned()
            .collect();
        // Nor is a hidden path beneath them written (or read through the
        // write grant).
        let keep: Vec<PathBuf> = policy
            .protected
            .iter()
            .chain(&policy.hidden)
            .cloned()
            .collect();
        (around(&roots, &keep).0, readable, listable)
    };
    let in_workspace = |p: &Path| p.starts_with(&policy.cwd) || policy.cwd.starts_with(p);
    let build = || -> Result<landlock::RestrictionStatus, landlock::RulesetError> {
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(abi))?;
        // Abstract sockets outside the sandbox stay out of reach with the
        // network allowed too (X11 and D-Bus listen there); the warden
        // makes the connections the person allowed by name.
        if !policy.network {
            ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
        }
        let scope = Scope::from_all(abi);
        ruleset
            .scope(scope)?
            .create()?
            .add_rules(path_beneath_rules(&readable, AccessFs::from_read(abi)))?
            .add_rules(path_beneath_rules(&listable, AccessFs::ReadDir))?
            // No FIFO in the workspace: git (and Lathe's checkpoints)
            // would block for good on one put where a `.gitignore`
            // should be. The temp directories keep them.
            .add_rules(path_beneath_rules(
                writable.iter().filter(|w| !in_workspace(w)),
                AccessFs::from_all(abi),
            ))?
            .add_rules(path_beneath_rules(
                writable.iter().filter(|w| in_workspace(w)),
                AccessFs::from_all(abi) & !AccessFs::MakeFifo,
            ))?
            .add_rules(path_beneath_rules(
                policy.allow_sockets.iter().filter(|s| !s.starts_with('@')),
                AccessFs::ResolveUnix,
            ))?
            .add_rules(path_beneath_rules(
                ["/dev/null", "/dev/zero", "/dev/full"],
                AccessFs::from_file(abi),
            ))?
            .restrict_self()
    };
    let status = build().map_err(|e| format!("the Landlock sandbox failed: {e}; {off}"))?;
    let effective = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => effective_abi,
        LandlockStatus::NotEnabled => {
            return Err(format!(
                "Landlock is built into this kernel but not enabled (add `landlock` to the \
                 kernel's lsm= boot parameter); {off}"
            ));
        }
        _ => {
            return Err(format!(
                "this kernel has no Landlock (it needs Linux 5.13 or newer); {off}"
            ));
        }
    };
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(format!(
            "the kernel did not enforce the Landlock ruleset; {off}"
        ));
    }
    if !policy.network && effective < ABI::V4 {
        return Err(format!(
            "this kernel's Landlock (ABI {effective:?}) cannot block the network (it needs \
             Linux 6.7); allow it with [shell] network = true, or {off}"
        ));
    }
    Ok(effective)
}
