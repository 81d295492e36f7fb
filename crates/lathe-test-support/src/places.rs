//! Where the tests make directories outside the workspace.

use std::path::{Path, PathBuf};

/// The build's own temporary directory (`target/tmp`, as Cargo's
/// `CARGO_TARGET_TMPDIR`), from where the running test binary lies
/// (`target/<profile>/deps/…`); the system's when that cannot be told.
pub fn target_tmp() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.join("tmp")))
        .filter(|dir| std::fs::create_dir_all(dir).is_ok())
        .unwrap_or_else(std::env::temp_dir)
}

/// A directory outside the workspace that a sandboxed command sees, as
/// the rest of the machine, read-only: under the build's temp directory,
/// unless that lies under the system's `/tmp` (a checkout there), which a
/// command does not see at all (its `/tmp` is the session's); then under
/// `/var/tmp`. So the tests read the same from any checkout.
pub fn outside(prefix: &str) -> tempfile::TempDir {
    let target = target_tmp();
    let var_tmp = Path::new("/var/tmp");
    let base = if target.starts_with("/tmp") && var_tmp.is_dir() {
        var_tmp
    } else {
        &target
    };
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(base)
        .unwrap()
}
