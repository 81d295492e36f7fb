//! The seccomp filter of a sandboxed command: what Landlock and the
//! namespaces leave open.
//!
//! - No set-user-ID or set-group-ID bit on any file (`chmod`, `open` and
//!   `mknod` with such a mode): files a command writes stay on disk after
//!   it, and one that runs as its owner (root, when Lathe runs as root)
//!   would be a way up for anyone on the machine. (Capabilities on files
//!   need CAP_SETFCAP, which the command does not keep.)
//! - No kernel keyrings (`keyctl`, `add_key`, `request_key`): the session
//!   keyring is shared with the person's other programs.
//! - No io_uring, whose operations no filter sees, and no `openat2`,
//!   whose mode no filter can read: both fail as missing, and programs
//!   fall back to the plain calls.
//! - No Unix datagram sockets: a datagram goes wherever the address in a
//!   `sendmsg` says, and no filter can read it, so none is made.
//! - Every `connect` waits for the warden ([`super::sockets`]), which
//!   makes the connection itself when the rules allow it: a listening
//!   socket is reached only where commands may write (or where the
//!   person named it), however it was bound, renamed or linked.
//! - With the network off: sockets of the Unix, IP and netlink families
//!   only, IP sockets of TCP only (no datagram goes anywhere without the
//!   warden), no TCP Fast Open (a send that connects); every `bind` and
//!   `listen` waits for the warden too, which puts what listens on the
//!   loopback interface: a dev server the person's browser reaches, and
//!   nobody else.

use std::os::fd::RawFd;

use libseccomp::{ScmpAction, ScmpArgCompare, ScmpCompareOp, ScmpFilterContext};
use nix::libc;

/// `fchmodat2` (Linux 6.6), the same number on every architecture.
const SYS_FCHMODAT2: i32 = 452;

/// Applies the filter to this process (and what it executes); `no_ipc`
/// refuses System V IPC too (where the command has no IPC namespace of
/// its own, it would be the system's). With `supervise`, `connect`
/// waits for a supervisor, and the filter's listener is returned
/// (close-on-exec). `None`: this system cannot have one (an older
/// kernel, or a supervisor of Lathe's own already listening); the
/// filter is then applied without it and the caller says so.
pub fn apply(
    no_ipc: bool,
    supervise: bool,
    watch_reads: bool,
    network: bool,
) -> Result<Option<RawFd>, String> {
    let mut listener = None;
    if supervise {
        let mut ctx = filter(no_ipc, true, network)?;
        if watch_reads {
            watch_opens(&mut ctx)?;
        }
        if ctx.load().is_ok() {
            listener = Some(
                ctx.get_notify_fd()
                    .map_err(|e| format!("seccomp listener: {e}"))?,
            );
        }
    }
    if listener.is_none() {
        filter(no_ipc, false, network)?
            .load()
            .map_err(|e| format!("seccomp: {e}"))?;
    }
    drop_file_capability_right();
    Ok(listener)
}

/// Where each call that takes a mode has it.
fn mode_arguments() -> Vec<(i64, u32)> {
    let mut calls = vec![
        (libc::SYS_fchmod, 1),
        (libc::SYS_fchmodat, 2),
        (i64::from(SYS_FCHMODAT2), 2),
        (libc::SYS_openat, 3),
        (libc::SYS_mknodat, 2),
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        (libc::SYS_chmod, 1),
        (libc::SYS_open, 2),
        (libc::SYS_creat, 1),
        (libc::SYS_mknod, 1),
    ]);
    calls
}

fn call(nr: i64) -> Result<i32, String> {
    i32::try_from(nr).map_err(|e| format!("seccomp: system call {nr}: {e}"))
}

fn errno(e: i32) -> ScmpAction {
    ScmpAction::Errno(e)
}

/// The whole filter for this machine's architecture (calls of any other
/// kill the process: a 64-bit program cannot slip past through the
/// 32-bit entry points).
fn filter(no_ipc: bool, supervise: bool, network: bool) -> Result<ScmpFilterContext, String> {
    let err = |e: libseccomp::error::SeccompError| format!("seccomp: {e}");
    let mut ctx = ScmpFilterContext::new(ScmpAction::Allow).map_err(err)?;
    ctx.set_act_badarch(ScmpAction::KillProcess).map_err(err)?;
    for (nr, index) in mode_arguments() {
        for bit in [libc::S_ISUID, libc::S_ISGID] {
            let cmp = ScmpArgCompare::new(
                index,
                ScmpCompareOp::MaskedEqual(u64::from(bit)),
                u64::from(bit),
            );
            ctx.add_rule_conditional(errno(libc::EPERM), call(nr)?, &[cmp])
                .map_err(err)?;
        }
    }
    let mut whole = vec![libc::SYS_keyctl, libc::SYS_add_key, libc::SYS_request_key];
    if no_ipc {
        whole.extend([
            libc::SYS_shmget,
            libc::SYS_shmat,
            libc::SYS_shmctl,
            libc::SYS_shmdt,
            libc::SYS_semget,
            libc::SYS_semop,
            libc::SYS_semctl,
            libc::SYS_semtimedop,
            libc::SYS_msgget,
            libc::SYS_msgsnd,
            libc::SYS_msgrcv,
            libc::SYS_msgctl,
        ]);
    }
    for nr in whole {
        ctx.add_rule(errno(libc::EPERM), call(nr)?).map_err(err)?;
    }
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_openat2,
    ] {
        ctx.add_rule(errno(libc::ENOSYS), call(nr)?).map_err(err)?;
    }
    // Unix sockets of any type but stream and seqpacket, made alone or in
    // pairs: a datagram goes to an address without `connect`, and the
    // kernel makes SOCK_RAW (and may make other types) datagram sockets,
    // so only the two connected types are let through. The type may carry
    // SOCK_NONBLOCK and SOCK_CLOEXEC: its low four bits are the type.
    let unix = u64::try_from(libc::AF_UNIX).map_err(|e| e.to_string())?;
    let connected = [libc::SOCK_STREAM, libc::SOCK_SEQPACKET];
    for nr in [libc::SYS_socket, libc::SYS_socketpair] {
        for kind in (0..16).filter(|t| !connected.contains(t)) {
            let kind = u64::try_from(kind).map_err(|e| e.to_string())?;
            ctx.add_rule_conditional(
                errno(libc::EACCES),
                call(nr)?,
                // The kernel reads these `int` arguments' low 32 bits
                // only: a family of `1 << 32 | AF_UNIX` is AF_UNIX to it,
                // so the comparison may not look at more.
                &[
                    ScmpArgCompare::new(0, ScmpCompareOp::MaskedEqual(0xffff_ffff), unix),
                    ScmpArgCompare::new(1, ScmpCompareOp::MaskedEqual(0xf), kind),
                ],
            )
            .map_err(err)?;
        }
    }
    if !network {
        no_network(&mut ctx, supervise)?;
    }
    if supervise {
        ctx.add_rule(ScmpAction::Notify, call(libc::SYS_connect)?)
            .map_err(err)?;
    }
    Ok(ctx)
}

/// What keeps a command off the network in the system's own network
/// namespace (where its loopback interface is the person's): Landlock
/// refuses TCP `bind` and `connect` of its own; this refuses every other
/// way out, and hands `bind` and `listen` to the warden.
fn no_network(ctx: &mut ScmpFilterContext, supervise: bool) -> Result<(), String> {
    let err = |e: libseccomp::error::SeccompError| format!("seccomp: {e}");
    let int = |v: i32| u64::try_from(v).map_err(|e| e.to_string());
    // The kernel reads `int` arguments' low 32 bits only.
    let low = ScmpCompareOp::MaskedEqual(0xffff_ffff);
    // Families: Unix, IP and netlink (which only talks to the kernel);
    // none of the others (packet, vsock, Bluetooth, CAN, XDP, …).
    let kept = [
        libc::AF_UNIX,
        libc::AF_INET,
        libc::AF_INET6,
        libc::AF_NETLINK,
    ];
    for family in (0..64).filter(|f| !kept.contains(f)) {
        ctx.add_rule_conditional(
            errno(libc::EAFNOSUPPORT),
            call(libc::SYS_socket)?,
            &[ScmpArgCompare::new(0, low, int(family)?)],
        )
        .map_err(err)?;
    }
    for family in [libc::AF_INET, libc::AF_INET6] {
        let family = ScmpArgCompare::new(0, low, int(family)?);
        // Stream sockets only (the type's low four bits; it may carry
        // SOCK_NONBLOCK and SOCK_CLOEXEC).
        for kind in (0..16).filter(|t| *t != libc::SOCK_STREAM) {
            ctx.add_rule_conditional(
                errno(libc::EACCES),
                call(libc::SYS_socket)?,
                &[
                    family,
                    ScmpArgCompare::new(1, ScmpCompareOp::MaskedEqual(0xf), int(kind)?),
                ],
            )
            .map_err(err)?;
        }
        // Of TCP (0 or IPPROTO_TCP): not SCTP, MPTCP or any other
        // protocol Landlock's TCP rules do not cover. A protocol with
        // bits above the low 32 is refused too (no program passes one).
        ctx.add_rule_conditional(
            errno(libc::EACCES),
            call(libc::SYS_socket)?,
            &[
                family,
                ScmpArgCompare::new(2, ScmpCompareOp::Greater, int(libc::IPPROTO_TCP)?),
            ],
        )
        .map_err(err)?;
        for protocol in 1..libc::IPPROTO_TCP {
            ctx.add_rule_conditional(
                errno(libc::EACCES),
                call(libc::SYS_socket)?,
                &[family, ScmpArgCompare::new(2, low, int(protocol)?)],
            )
            .map_err(err)?;
        }
    }
    // Netlink of the kernel's own protocols that only answer (routes
    // and addresses, socket diagnostics, device events, generic): not
    // NETLINK_USERSOCK and the like, which carry messages between
    // programs.
    let netlink = ScmpArgCompare::new(0, low, int(libc::AF_NETLINK)?);
    let answers = [
        libc::NETLINK_ROUTE,
        libc::NETLINK_SOCK_DIAG,
        libc::NETLINK_KOBJECT_UEVENT,
        libc::NETLINK_GENERIC,
    ];
    for protocol in (0..32).filter(|p| !answers.contains(p)) {
        ctx.add_rule_conditional(
            errno(libc::EPROTONOSUPPORT),
            call(libc::SYS_socket)?,
            &[netlink, ScmpArgCompare::new(2, low, int(protocol)?)],
        )
        .map_err(err)?;
    }
    ctx.add_rule_conditional(
        errno(libc::EPROTONOSUPPORT),
        call(libc::SYS_socket)?,
        &[netlink, ScmpArgCompare::new(2, ScmpCompareOp::Greater, 31)],
    )
    .map_err(err)?;
    // Options that send a connection's packets somewhere else than its
    // address: IPv6 routing headers (the kernel routes to their first
    // hop, after the warden looked), IPv4 options (source routes).
    for (level, name) in [
        (libc::IPPROTO_IPV6, libc::IPV6_RTHDR),
        (libc::IPPROTO_IPV6, libc::IPV6_2292RTHDR),
        (libc::IPPROTO_IPV6, libc::IPV6_2292PKTOPTIONS),
        (libc::IPPROTO_IP, libc::IP_OPTIONS),
    ] {
        ctx.add_rule_conditional(
            errno(libc::EPERM),
            call(libc::SYS_setsockopt)?,
            &[
                ScmpArgCompare::new(1, low, int(level)?),
                ScmpArgCompare::new(2, low, int(name)?),
            ],
        )
        .map_err(err)?;
    }
    // A send with MSG_FASTOPEN connects where its address says.
    let fast_open = int(libc::MSG_FASTOPEN)?;
    for (nr, flags) in [
        (libc::SYS_sendto, 3),
        (libc::SYS_sendmsg, 2),
        (libc::SYS_sendmmsg, 3),
    ] {
        ctx.add_rule_conditional(
            errno(libc::EPERM),
            call(nr)?,
            &[ScmpArgCompare::new(
                flags,
                ScmpCompareOp::MaskedEqual(fast_open),
                fast_open,
            )],
        )
        .map_err(err)?;
    }
    if supervise {
        for nr in [libc::SYS_bind, libc::SYS_listen] {
            ctx.add_rule(ScmpAction::Notify, call(nr)?).map_err(err)?;
        }
    }
    Ok(())
}

/// Every open that can read (its access mode is not write-only) waits
/// for the warden, which refuses one of a file the read rules cover
/// ([`super::sockets::ReadWatch`]). A set-user-ID mode is refused first
/// (errors rank above notifications).
fn watch_opens(ctx: &mut ScmpFilterContext) -> Result<(), String> {
    let err = |e: libseccomp::error::SeccompError| format!("seccomp: {e}");
    let access = u64::try_from(libc::O_ACCMODE).map_err(|e| e.to_string())?;
    let mut calls = vec![(libc::SYS_openat, 2)];
    #[cfg(target_arch = "x86_64")]
    calls.push((libc::SYS_open, 1));
    for (nr, flags) in calls {
        for mode in [libc::O_RDONLY, libc::O_RDWR] {
            let mode = u64::try_from(mode).map_err(|e| e.to_string())?;
            ctx.add_rule_conditional(
                ScmpAction::Notify,
                call(nr)?,
                &[ScmpArgCompare::new(
                    flags,
                    ScmpCompareOp::MaskedEqual(access),
                    mode,
                )],
            )
            .map_err(err)?;
        }
    }
    Ok(())
}

/// A command that is root in its user namespace could still give a file
/// capabilities that count outside it; without CAP_SETFCAP it cannot.
fn drop_file_capability_right() {
    use caps::{CapSet, Capability};
    let _ = caps::drop(None, CapSet::Bounding, Capability::CAP_SETFCAP);
    for set in [CapSet::Inheritable, CapSet::Effective, CapSet::Permitted] {
        let _ = caps::drop(None, set, Capability::CAP_SETFCAP);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_build_for_this_machine() {
        for (no_ipc, supervise, network) in [
            (false, false, true),
            (true, false, false),
            (false, true, false),
            (true, true, true),
        ] {
            let ctx = filter(no_ipc, supervise, network).unwrap();
            let mut bpf = tempfile::tempfile().unwrap();
            ctx.export_bpf(&bpf).unwrap();
            use std::io::{Read, Seek};
            bpf.rewind().unwrap();
            let mut program = Vec::new();
            bpf.read_to_end(&mut program).unwrap();
            // Instructions are 8 bytes each.
            assert!(program.len() > 8 && program.len() % 8 == 0);
        }
    }
}
