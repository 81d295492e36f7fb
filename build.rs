//! Link settings for a smaller start: what a start runs placed together,
//! and relocations packed. Both only where the linker and C library are
//! known to take them; elsewhere the binary links as it always did.

use std::env;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=link/startup-order.txt");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let target = env::var("TARGET").unwrap_or_default();
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    // Rust links this target with its own lld since 1.90 (the workspace's
    // rust-version is later), unless told to use another linker.
    let release = env::var("PROFILE").is_ok_and(|p| p == "release");
    let own_lld = release
        && target == "x86_64-unknown-linux-gnu"
        && env::var_os("RUSTC_LINKER").is_none()
        && !flags.contains("linker");
    if !own_lld {
        return;
    }
    // The functions a start and a streamed answer run, first in the code
    // (scripts/startup_order.py): they touch 3.4 MB of it, not 10. A
    // name the build no longer has is skipped, never an error.
    let order = Path::new(env!("CARGO_MANIFEST_DIR")).join("link/startup-order.txt");
    if order.is_file() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
    // Relative relocations packed (DT_RELR): 1 MB of them read at every
    // start becomes 14 KB. The binary then needs glibc 2.36 or later, so
    // only when the C library it is built against has it.
    if glibc_packs_relocations() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether this machine's glibc reads packed relocations (it names the
/// version a packed binary asks for).
fn glibc_packs_relocations() -> bool {
    [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
        "/lib64/libc.so.6",
        "/usr/lib64/libc.so.6",
        "/usr/lib/libc.so.6",
    ]
    .iter()
    .find_map(|p| std::fs::read(p).ok())
    .is_some_and(|bytes| {
        bytes
            .windows(b"GLIBC_ABI_DT_RELR".len())
            .any(|w| w == b"GLIBC_ABI_DT_RELR")
    })
}
