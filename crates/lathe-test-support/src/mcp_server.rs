//! The MCP test server (`src/bin/lathe-mcp-test-server.rs`): tools that
//! answer, fail, report progress, hang, crash the server, or change the
//! tool list, over stdio or streamable HTTP.

use std::path::PathBuf;
use std::sync::OnceLock;

const NAME: &str = "lathe-mcp-test-server";

/// The server's binary, beside the running test binary's profile
/// directory. A workspace `cargo test` has built it; a crate's tests run
/// alone (`cargo test -p lathe`) build it here first, once, with the same
/// Cargo, target directory and profile.
pub fn bin() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(build).clone()
}

fn build() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/<test binary>
    let profile_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    let target = profile_dir.parent().unwrap();
    let profile = profile_dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.args([
        "build",
        "--quiet",
        "-p",
        "lathe-test-support",
        "--bin",
        NAME,
    ])
    .env("CARGO_TARGET_DIR", target);
    match profile.as_str() {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            cmd.args(["--profile", other]);
        }
    }
    let status = cmd.status().unwrap();
    assert!(status.success(), "building {NAME} failed");
    let bin = profile_dir.join(NAME);
    assert!(bin.exists(), "{} is missing after its build", bin.display());
    bin
}
