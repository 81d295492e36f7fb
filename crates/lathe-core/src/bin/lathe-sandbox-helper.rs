//! The sandbox's helper modes alone (`__sandbox`, `__sandbox-exec`), for
//! the core's own tests: the `lathe` binary runs them the same way.

fn main() -> std::process::ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let code = lathe_core::front::sandbox::helper_main(&args).unwrap_or(2);
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}
