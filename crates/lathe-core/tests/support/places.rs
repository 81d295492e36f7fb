//! Where the tests make directories outside the workspace.

use std::path::Path;

/// A directory outside the workspace that a sandboxed command sees, as
/// the rest of the machine, read-only: under the build's temp directory,
/// unless that lies under the system's `/tmp` (a checkout there), which a
/// command does not see at all (its `/tmp` is the session's); then under
/// `/var/tmp`. So the tests read the same from any checkout.
pub fn outside(prefix: &str) -> tempfile::TempDir {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let var_tmp = Path::new("/var/tmp");
    let base = if target.starts_with("/tmp") && var_tmp.is_dir() {
        var_tmp
    } else {
        target
    };
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(base)
        .unwrap()
}
