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

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// `fchmodat2` (Linux 6.6), the same number on every architecture.
const SYS_FCHMODAT2: i64 = 452;

/// Applies the filters to this process (and what it executes);
/// `no_ipc` refuses System V IPC too (where the command has no IPC
/// namespace of its own, it would be the system's).
pub fn apply(no_ipc: bool) -> Result<(), String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| format!("no seccomp filter for this architecture: {e}"))?;
    for program in [refused(arch, no_ipc)?, missing(arch)?] {
        seccompiler::apply_filter(&program).map_err(|e| format!("seccomp: {e}"))?;
    }
    drop_file_capability_right();
    Ok(())
}

/// Where each call that takes a mode has it.
fn mode_arguments() -> Vec<(i64, u8)> {
    let mut calls = vec![
        (libc::SYS_fchmod, 1),
        (libc::SYS_fchmodat, 2),
        (SYS_FCHMODAT2, 2),
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

/// The calls that fail with EPERM.
fn refused(arch: TargetArch, no_ipc: bool) -> Result<BpfProgram, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let bit = |index: u8, bit: u32| -> Result<SeccompRule, String> {
        let condition = SeccompCondition::new(
            index,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(u64::from(bit)),
            u64::from(bit),
        )
        .map_err(|e| e.to_string())?;
        SeccompRule::new(vec![condition]).map_err(|e| e.to_string())
    };
    for (call, index) in mode_arguments() {
        let set_id = vec![bit(index, libc::S_ISUID)?, bit(index, libc::S_ISGID)?];
        // The x32 calls of x86_64 have numbers of their own.
        if cfg!(target_arch = "x86_64") {
            rules.insert(call | 0x4000_0000, set_id.clone());
        }
        rules.insert(call, set_id);
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
    for call in whole {
        rules.insert(call, Vec::new());
        if cfg!(target_arch = "x86_64") {
            rules.insert(call | 0x4000_0000, Vec::new());
        }
    }
    program(rules, libc::EPERM, arch)
}

/// The calls that fail as if the kernel had none (ENOSYS).
fn missing(arch: TargetArch) -> Result<BpfProgram, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_openat2,
    ] {
        rules.insert(call, Vec::new());
        if cfg!(target_arch = "x86_64") {
            rules.insert(call | 0x4000_0000, Vec::new());
        }
    }
    program(rules, libc::ENOSYS, arch)
}

fn program(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: i32,
    arch: TargetArch,
) -> Result<BpfProgram, String> {
    let errno = u32::try_from(errno).map_err(|e| e.to_string())?;
    SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )
    .and_then(BpfProgram::try_from)
    .map_err(|e| format!("seccomp: {e}"))
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
    fn the_filters_compile_for_this_machine() {
        let arch = TargetArch::try_from(std::env::consts::ARCH).unwrap();
        assert!(!refused(arch, false).unwrap().is_empty());
        assert!(!refused(arch, true).unwrap().is_empty());
        assert!(!missing(arch).unwrap().is_empty());
    }
}
