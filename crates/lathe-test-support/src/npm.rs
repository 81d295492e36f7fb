//! Packages from npm the tests run on node (the reference MCP server, the
//! MCP SDK), as `.ci/run` installs them into `target/npm`.

use std::path::PathBuf;

/// `path` (a file of a package under `target/npm`, or where the variable
/// `env` says), when node and it are there. Without them the calling test
/// is skipped with a message naming `install`, unless
/// `LATHE_REQUIRE_NODE=1` (as `.ci/run` sets) makes that a failure.
pub fn installed(path: PathBuf, env: &str, install: &str) -> Option<PathBuf> {
    let path = std::env::var_os(env).map_or(path, PathBuf::from);
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if node && path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("LATHE_REQUIRE_NODE").is_none(),
        "node and {} are required (LATHE_REQUIRE_NODE is set)",
        path.display()
    );
    eprintln!(
        "skipping: {} is not installed; install node and npm, then `npm install --prefix \
         target/npm {install}`",
        path.display()
    );
    None
}
