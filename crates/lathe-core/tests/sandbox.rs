//! The sandbox, tried as an attacker would: a command that has been
//! approved still cannot write outside the workspace, reach the network,
//! signal Lathe, or leave a process behind.
//!
//! These tests need Landlock (Linux 6.7+ for its TCP rules) and a network
//! namespace; where the kernel lacks them they fail and say so. CI's
//! kernel has them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::builtin_settings;
use lathe_core::policy::Workspace;
use lathe_core::sandbox::{self, Mode};
use lathe_core::tools::builtin::ExecShell;
use lathe_core::tools::{Tool, ToolContext, ToolError};
use serde_json::{Value, json};

fn shell(mode: Mode, network: bool) -> ExecShell {
    let mut settings = builtin_settings();
    settings.sandbox.mode = mode;
    settings.sandbox.network = network;
    ExecShell::new(&settings)
}

async fn run_in(tool: &ExecShell, ws: &Path, command: &str) -> Result<Value, ToolError> {
    let ctx = ToolContext::standalone(Arc::new(Workspace::new(ws).unwrap()));
    tool.execute(json!({ "command": command, "timeout": 20 }), &ctx)
        .await
}

async fn run(mode: Mode, ws: &Path, command: &str) -> Value {
    run_in(&shell(mode, false), ws, command)
        .await
        .unwrap_or_else(|e| panic!("{command}: {e}"))
}

fn stdout(v: &Value) -> &str {
    v["stdout"].as_str().unwrap_or("")
}

/// A directory outside the workspace (and outside the temp dir, which the
/// sandbox lets commands write).
fn outside() -> tempfile::TempDir {
    crate::places::outside("lathe-outside-")
}

/// A directory that exists under the system's `/tmp` is not in a
/// command's (its `/tmp` is the session's): writing there fails with "No
/// such file or directory", and the result says why and how to go on.
#[tokio::test]
async fn the_private_tmp_is_recognised_when_it_blocks() {
    let system = tempfile::Builder::new()
        .prefix("lathe-system-tmp-")
        .tempdir_in("/tmp")
        .unwrap();
    let ws = outside();
    let v = run_in(
        &ExecShell::new(&builtin_settings()),
        ws.path(),
        &format!("echo hi > {}/out.txt", system.path().display()),
    )
    .await
    .unwrap();
    assert_ne!(v["exit_code"], 0, "{v}");
    let note = v["sandbox"]
        .as_str()
        .unwrap_or_else(|| panic!("no note: {v}"));
    assert!(note.contains("is under /tmp"), "{note}");
    assert!(!system.path().join("out.txt").exists());
}

fn landlock_hint() -> &'static str {
    "this test needs Landlock enabled in the kernel (Linux 6.7+ with lsm=…,landlock)"
}

#[tokio::test]
async fn writes_go_only_to_the_workspace_and_the_temp_dir() {
    let ws = tempfile::tempdir().unwrap();
    let out = outside();
    let target = out.path().join("planted.txt");
    let v = run(
        Mode::WorkspaceWrite,
        ws.path(),
        &format!(
            "echo in > inside.txt; echo t > \"${{TMPDIR:-/tmp}}/lathe-sbx-$$\" && rm \"${{TMPDIR:-/tmp}}/lathe-sbx-$$\" && echo tmp-ok; \
             echo out > '{0}'; echo \"rc=$?\"; mkdir '{1}/d'",
            target.display(),
            out.path().display()
        ),
    )
    .await;
    assert!(ws.path().join("inside.txt").exists(), "{v}");
    assert!(stdout(&v).contains("tmp-ok"), "{v}");
    assert!(!target.exists(), "{}: {v}", landlock_hint());
    assert!(!out.path().join("d").exists(), "{v}");
    assert!(stdout(&v).contains("rc=1"), "{v}");
    assert!(
        v["sandbox"]
            .as_str()
            .unwrap_or("")
            .contains("may have blocked"),
        "a blocked command says why: {v}"
    );
}

#[tokio::test]
async fn links_and_renames_cannot_cross_the_boundary() {
    let ws = tempfile::tempdir().unwrap();
    let out = outside();
    std::fs::write(out.path().join("secret"), "s").unwrap();
    std::fs::write(out.path().join("config"), "keep").unwrap();
    std::fs::write(ws.path().join("mine"), "m").unwrap();
    let v = run(
        Mode::WorkspaceWrite,
        ws.path(),
        &format!(
            "ln '{o}/secret' hard 2>&1; mv mine '{o}/moved' 2>&1; mv '{o}/secret' stolen 2>&1; \
             ln -s '{o}/config' soft && echo x > soft; ls",
            o = out.path().display()
        ),
    )
    .await;
    assert!(!ws.path().join("hard").exists(), "{v}");
    assert!(!out.path().join("moved").exists(), "{v}");
    assert!(ws.path().join("mine").exists(), "{v}");
    // Moving an outside file in cannot take it away (at most `mv` copies
    // it, which reading allows).
    assert!(out.path().join("secret").exists(), "{v}");
    // Through a symlink the model made: still outside.
    assert_eq!(
        std::fs::read_to_string(out.path().join("config")).unwrap(),
        "keep",
        "{v}"
    );
}

#[tokio::test]
async fn read_only_mode_writes_nowhere() {
    let ws = tempfile::tempdir().unwrap();
    let v = run(
        Mode::ReadOnly,
        ws.path(),
        "echo x > f.txt; echo \"rc=$?\"; cat /etc/hostname >/dev/null && echo read-ok; echo x > /dev/null && echo null-ok",
    )
    .await;
    assert!(!ws.path().join("f.txt").exists(), "{v}");
    assert!(stdout(&v).contains("rc=1"), "{v}");
    assert!(stdout(&v).contains("read-ok"), "{v}");
    assert!(stdout(&v).contains("null-ok"), "{v}");
}

#[tokio::test]
async fn no_network_unless_allowed() {
    let ws = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let uport = udp.local_addr().unwrap().port();
    let probe = format!(
        "(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo tcp-open || echo tcp-blocked; \
         (echo ping > /dev/udp/127.0.0.1/{uport}) 2>/dev/null && echo udp-sent || echo udp-blocked"
    );
    let v = run_in(&shell(Mode::WorkspaceWrite, false), ws.path(), &probe)
        .await
        .unwrap();
    assert!(
        stdout(&v).contains("tcp-blocked"),
        "{}: {v}",
        landlock_hint()
    );
    assert!(
        stdout(&v).contains("udp-blocked"),
        "UDP needs a network namespace (root, or unprivileged user namespaces): {v}"
    );
    let mut buf = [0u8; 16];
    assert!(udp.recv(&mut buf).is_err(), "a datagram got out");
    // Allowed by the config: both work.
    let v = run_in(&shell(Mode::WorkspaceWrite, true), ws.path(), &probe)
        .await
        .unwrap();
    assert!(stdout(&v).contains("tcp-open"), "{v}");
    assert!(stdout(&v).contains("udp-sent"), "{v}");
}

#[tokio::test]
async fn commands_cannot_signal_processes_outside() {
    let ws = tempfile::tempdir().unwrap();
    // Stands in for Lathe and the person's other processes.
    let mut victim = std::process::Command::new("sleep")
        .arg("97399")
        .spawn()
        .unwrap();
    let pid = victim.id();
    let v = run(
        Mode::WorkspaceWrite,
        ws.path(),
        &format!(
            "kill -0 {pid} 2>&1; echo \"rc=$?\"; kill -KILL {pid}; \
             prlimit --pid {pid} --nofile=0:0 2>&1; renice -n 19 -p {pid} 2>&1; true"
        ),
    )
    .await;
    let me = std::process::id();
    let peek = run(
        Mode::WorkspaceWrite,
        ws.path(),
        &format!("head -c 64 /proc/{me}/environ >/dev/null 2>&1; echo \"env=$?\"; head -c 64 /proc/{me}/mem >/dev/null 2>&1; echo \"mem=$?\""),
    )
    .await;
    assert!(
        stdout(&peek).contains("env=1") && stdout(&peek).contains("mem=1"),
        "a command read Lathe's environment or memory (root needs a user namespace here): {peek}"
    );
    // Nor change its limits or priority (a warden kept from opening files
    // could not clean up).
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap_or_default();
    assert!(
        !limits
            .lines()
            .any(|l| l.starts_with("Max open files") && l.split_whitespace().nth(3) == Some("0")),
        "{limits}"
    );
    let survived = victim.try_wait().unwrap().is_none();
    let _ = victim.kill();
    let _ = victim.wait();
    assert!(survived, "{}: {v}", landlock_hint());
    assert!(stdout(&v).contains("rc=1"), "{v}");
}

/// Whether a process whose command line holds `marker` is alive (zombies
/// aside).
fn alive(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            == Some("Z");
        if cmdline.contains(marker) && !zombie && !cmdline.contains("__sandbox") {
            found.push(format!("{pid}: {cmdline}"));
        }
    }
    found
}

async fn gone(marker: &str) -> Vec<String> {
    // The warden kills before it exits; allow the kernel a moment to
    // finish the deaths.
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left = alive(marker);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every way to outlive a shell: background jobs, nohup, setsid, a double
/// fork, a disowned job in a new session.
fn escapes(n: u32) -> String {
    format!(
        "sleep {n}1 & nohup sleep {n}2 >/dev/null 2>&1 & setsid sleep {n}3 & (sleep {n}4 &); \
         bash -c 'setsid bash -c \"sleep {n}5 & disown\" &'; disown -a"
    )
}

#[tokio::test]
async fn nothing_outlives_a_finished_command() {
    let ws = tempfile::tempdir().unwrap();
    let v = run(
        Mode::WorkspaceWrite,
        ws.path(),
        &format!("{}; sleep 0.2; echo started", escapes(9731)),
    )
    .await;
    assert!(stdout(&v).contains("started"), "{v}");
    let left = gone("sleep 9731").await;
    assert!(left.is_empty(), "still running: {left:?}");
}

#[tokio::test]
async fn nothing_outlives_a_timeout_or_an_interrupt() {
    let ws = tempfile::tempdir().unwrap();
    let tool = shell(Mode::WorkspaceWrite, false);
    let ctx = ToolContext::standalone(Arc::new(Workspace::new(ws.path()).unwrap()));
    let err = tool
        .execute(
            json!({ "command": format!("{}; sleep 60", escapes(9732)), "timeout": 1 }),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Timeout { .. }), "{err}");
    let left = gone("sleep 9732").await;
    assert!(left.is_empty(), "still running after a timeout: {left:?}");

    let ctx = ToolContext::standalone(Arc::new(Workspace::new(ws.path()).unwrap()));
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(700)).await;
        cancel.cancel();
    });
    let err = tool
        .execute(
            json!({ "command": format!("{}; sleep 60", escapes(9733)) }),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Cancelled(_)), "{err}");
    let left = gone("sleep 9733").await;
    assert!(
        left.is_empty(),
        "still running after an interrupt: {left:?}"
    );
}

/// Lathe killed with SIGKILL: the warden hears of it (its parent-death
/// signal) and takes everything down with it.
#[tokio::test]
async fn nothing_outlives_a_killed_lathe() {
    let ws = tempfile::tempdir().unwrap();
    // Stands in for Lathe: a shell that starts the warden and waits.
    let settings = sandbox::Settings {
        helper: Some(PathBuf::from(env!("CARGO_BIN_EXE_lathe-sandbox-helper"))),
        ..sandbox::Settings::default()
    };
    let mut policy = settings.policy(
        ws.path(),
        vec![
            "bash".into(),
            "-c".into(),
            format!("{}; sleep 60", escapes(9734)),
        ],
    );
    policy.parent = 0;
    let encoded = serde_json::to_string(&policy).unwrap();
    let script = format!(
        "\"$0\" {} \"$(printf '%s' \"$1\" | sed \"s/\\\"parent\\\":0/\\\"parent\\\":$$/\")\"; :",
        sandbox::WARDEN_ARG
    );
    let mut fake_lathe = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_lathe-sandbox-helper"))
        .arg(encoded)
        .current_dir(ws.path())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive("sleep 97345").is_empty() {
        assert!(Instant::now() < deadline, "the command never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    fake_lathe.kill().unwrap();
    fake_lathe.wait().unwrap();
    let left = gone("sleep 9734").await;
    assert!(left.is_empty(), "still running after Lathe died: {left:?}");
}

#[tokio::test]
async fn a_helper_that_cannot_set_up_stops_the_command() {
    let ws = tempfile::tempdir().unwrap();
    // The warden refuses a parent that is not its own.
    let settings = sandbox::Settings {
        helper: Some(PathBuf::from(env!("CARGO_BIN_EXE_lathe-sandbox-helper"))),
        ..sandbox::Settings::default()
    };
    let mut policy = settings.policy(ws.path(), vec!["touch".into(), "ran".into()]);
    policy.parent = 1;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lathe-sandbox-helper"))
        .arg(sandbox::WARDEN_ARG)
        .arg(serde_json::to_string(&policy).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(sandbox::SETUP_FAILED));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with(sandbox::FAILURE_PREFIX), "{stderr}");
    assert!(!ws.path().join("ran").exists());
    // exec_shell reports such a failure as the command not having run.
    let err = run_in(
        &shell(Mode::WorkspaceWrite, false),
        ws.path(),
        "echo 'lathe-sandbox: no Landlock here' >&2; exit 125",
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().contains("did not run: no Landlock here"),
        "{err}"
    );
}

#[tokio::test]
async fn secret_variables_never_reach_a_command() {
    let ws = tempfile::tempdir().unwrap();
    let v = run(Mode::Off, ws.path(), "env").await;
    for (name, _) in std::env::vars() {
        if sandbox::is_secret_name(&name) {
            assert!(!stdout(&v).contains(&format!("{name}=")), "{name} leaked");
        }
    }
    assert!(stdout(&v).contains("PATH="), "{v}");
}

/// `.git`, `.lathe`, `.mcp.json` and `.envrc` run code later or change
/// Lathe's settings: a sandboxed command can read them but not change,
/// move or remove them, nor remount them writable. Outside the command
/// nothing changed about them.
#[tokio::test]
async fn protected_paths_are_read_only_to_commands() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(root.join(".lathe")).unwrap();
    std::fs::write(root.join(".lathe/config.toml"), "").unwrap();
    std::fs::write(root.join(".mcp.json"), "{}").unwrap();
    std::fs::write(root.join(".envrc"), "").unwrap();
    let v = run(
        Mode::WorkspaceWrite,
        root,
        "cat .git/config >/dev/null && echo read-ok; \
         printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config; \
         echo 'evil' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
         rm -rf .git/hooks; mv .git .git-old; mv .lathe .lathe-old; \
         echo '[[hooks.before_tool_call]]' > .lathe/config.toml; \
         echo '{\"mcpServers\":{}}' > .mcp.json; echo 'evil' > .envrc; rm -f .envrc .mcp.json; \
         mount -o remount,rw .git 2>&1; umount .git 2>&1; \
         echo ok > normal.txt; true",
    )
    .await;
    assert!(stdout(&v).contains("read-ok"), "{v}");
    assert_eq!(
        std::fs::read_to_string(root.join(".git/config")).unwrap(),
        "[core]\n",
        "{v}"
    );
    assert!(!root.join(".git/hooks/pre-commit").exists(), "{v}");
    assert!(root.join(".git/hooks").is_dir(), "{v}");
    assert!(
        !root.join(".git-old").exists() && !root.join(".lathe-old").exists(),
        "{v}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".lathe/config.toml")).unwrap(),
        ""
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".mcp.json")).unwrap(),
        "{}"
    );
    assert_eq!(std::fs::read_to_string(root.join(".envrc")).unwrap(), "");
    assert!(
        root.join("normal.txt").exists(),
        "the rest stays writable: {v}"
    );
    // The read-only view was the command's alone.
    std::fs::write(root.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
}

/// `"sandbox": false` runs outside Landlock (once the person approved it;
/// here the tool is called directly), and the warden still contains it.
#[tokio::test]
async fn an_approved_unsandboxed_run_is_unconfined_but_contained() {
    let ws = tempfile::tempdir().unwrap();
    let out = outside();
    let target = out.path().join("allowed.txt");
    let tool = shell(Mode::WorkspaceWrite, false);
    let ctx = ToolContext::standalone(Arc::new(Workspace::new(ws.path()).unwrap()));
    let v = tool
        .execute(
            json!({
                "command": format!("echo x > '{}'; setsid sleep 97351 & echo started", target.display()),
                "sandbox": false
            }),
            &ctx,
        )
        .await
        .unwrap();
    assert!(target.exists(), "{v}");
    assert!(gone("sleep 97351").await.is_empty());
}

/// Landlock does not cover a file's mode, owner, times or extended
/// attributes: outside the writable roots everything is mounted read-only
/// for the command, so `chmod`, `chown` and `touch` fail there too.
#[tokio::test]
async fn metadata_outside_cannot_change() {
    use std::os::unix::fs::PermissionsExt;
    let ws = tempfile::tempdir().unwrap();
    let out = outside();
    let victim = out.path().join("victim");
    std::fs::write(&victim, "v").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    let before = std::fs::metadata(&victim).unwrap();
    let v = run(
        Mode::WorkspaceWrite,
        ws.path(),
        &format!(
            "chmod 4777 '{0}'; chown 1:1 '{0}'; touch -d 2030-01-01 '{0}'; chmod 777 '{1}'; true",
            victim.display(),
            out.path().display()
        ),
    )
    .await;
    let after = std::fs::metadata(&victim).unwrap();
    assert_eq!(after.permissions().mode() & 0o7777, 0o644, "{v}");
    assert_eq!(after.modified().unwrap(), before.modified().unwrap(), "{v}");
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        (after.uid(), after.gid()),
        (before.uid(), before.gid()),
        "{v}"
    );
}

/// A workspace inside another writable root (here the temp directory)
/// cannot be moved aside and replaced by one with a planted `.git`.
#[tokio::test]
async fn the_workspace_cannot_be_swapped_out() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".git")).unwrap();
    std::fs::write(ws.path().join(".git/config"), "[core]\n").unwrap();
    let name = ws
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let v = run(
        Mode::WorkspaceWrite,
        ws.path(),
        &format!("cd .. && mv '{name}' '{name}.orig' 2>&1; mkdir -p '{name}/.git' 2>&1; true"),
    )
    .await;
    let parent = ws.path().parent().unwrap();
    assert!(!parent.join(format!("{name}.orig")).exists(), "{v}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join(".git/config")).unwrap(),
        "[core]\n",
        "{v}"
    );
}

/// Lathe's own config (with its keys) and data (journals) are not even
/// readable to a command: an empty directory stands in their place.
#[tokio::test]
async fn lathes_own_files_are_hidden() {
    let ws = tempfile::tempdir().unwrap();
    let home = outside();
    std::fs::write(
        home.path().join("config.toml"),
        "api_key = \"sk-hidden-from-commands\"\n",
    )
    .unwrap();
    let mut settings = builtin_settings();
    settings.sandbox.hidden = vec![home.path().to_path_buf()];
    let tool = ExecShell::new(&settings);
    let v = run_in(
        &tool,
        ws.path(),
        &format!(
            "cat '{0}/config.toml'; ls -A '{0}'; echo listed",
            home.path().display()
        ),
    )
    .await
    .unwrap();
    assert!(!stdout(&v).contains("sk-hidden"), "{v}");
    assert!(!stdout(&v).contains("config.toml"), "{v}");
    assert!(stdout(&v).contains("listed"), "{v}");
    // A hidden directory that holds the workspace is not hidden.
    settings.sandbox.hidden = vec![ws.path().parent().unwrap().to_path_buf()];
    let v = run_in(
        &ExecShell::new(&settings),
        ws.path(),
        "echo ok > f && cat f",
    )
    .await
    .unwrap();
    assert!(stdout(&v).contains("ok"), "{v}");
}

/// A Unix socket another program listens on, anywhere (here outside the
/// workspace and the temp dir, as a terminal multiplexer's custom
/// socket or an agent's could be), is a way out: connecting to it runs
/// code outside. The command finds every such socket covered.
#[tokio::test]
async fn sockets_of_other_programs_cannot_be_reached() {
    let ws = tempfile::tempdir().unwrap();
    let out = outside();
    let path = out.path().join("daemon.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let v = run(
        Mode::WorkspaceWrite,
        ws.path(),
        &format!(
            "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(\"CONNECTED\")' '{}' 2>&1; echo done",
            path.display()
        ),
    )
    .await;
    assert!(stdout(&v).contains("done"), "{v}");
    assert!(!stdout(&v).contains("CONNECTED"), "{v}");
    assert!(
        listener.accept().is_err(),
        "nothing may have connected: {v}"
    );
    // Sockets the command makes itself still work.
    let v = run(
        Mode::WorkspaceWrite,
        ws.path(),
        "python3 -c 'import socket; a=socket.socket(socket.AF_UNIX); a.bind(\"own.sock\"); a.listen(); \
         b=socket.socket(socket.AF_UNIX); b.connect(\"own.sock\"); print(\"OWN-OK\")'",
    )
    .await;
    assert!(stdout(&v).contains("OWN-OK"), "{v}");
}

/// The command's `/proc` shows its own processes only: the command lines
/// of everything else on the system (secrets in arguments included) stay
/// out of sight.
#[tokio::test]
async fn other_processes_cannot_be_seen() {
    let ws = tempfile::tempdir().unwrap();
    let mut marker = std::process::Command::new("sleep")
        .arg("86421")
        .spawn()
        .unwrap();
    let v = run(
        Mode::WorkspaceWrite,
        ws.path(),
        "cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo; ls /proc | grep -c '^[0-9]'",
    )
    .await;
    let _ = marker.kill();
    let _ = marker.wait();
    assert!(!stdout(&v).contains("86421"), "{v}");
    let count: u32 = stdout(&v)
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(u32::MAX);
    assert!(count < 10, "the command sees {count} processes: {v}");
}

/// Files and directories that hold credentials read as empty.
#[tokio::test]
async fn hidden_files_read_as_empty() {
    let ws = tempfile::tempdir().unwrap();
    let home = outside();
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_ed25519"), "PRIVATE-KEY-MATERIAL").unwrap();
    std::fs::write(
        home.path().join(".netrc"),
        "machine x password hunter2hunter2",
    )
    .unwrap();
    let mut settings = builtin_settings();
    settings.sandbox.hidden = vec![home.path().join(".ssh"), home.path().join(".netrc")];
    let v = run_in(
        &ExecShell::new(&settings),
        ws.path(),
        &format!(
            "cat '{0}/.ssh/id_ed25519' '{0}/.netrc' 2>&1; ls -A '{0}/.ssh'; echo listed",
            home.path().display()
        ),
    )
    .await
    .unwrap();
    assert!(!stdout(&v).contains("PRIVATE-KEY"), "{v}");
    assert!(!stdout(&v).contains("hunter2"), "{v}");
    assert!(stdout(&v).contains("listed"), "{v}");
}

/// Where no namespace can be had, Landlock alone keeps `.git` and
/// `.lathe` read-only: the workspace root is granted around them (its
/// files and subdirectories writable, nothing new in the root itself).
#[tokio::test]
async fn without_namespaces_protected_paths_stay_read_only() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("README"), "r").unwrap();
    let home = outside();
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_rsa"), "PRIVATE-KEY-MATERIAL").unwrap();
    std::fs::write(home.path().join("notes"), "readable").unwrap();
    let mut settings = builtin_settings();
    settings.sandbox.namespaces = false;
    settings.sandbox.hidden = vec![home.path().join(".ssh")];
    let v = run_in(
        &ExecShell::new(&settings),
        root,
        &format!(
            "printf '\\tfsmonitor = evil\\n' >> .git/config; mv .git .old; rm -rf .git; \
             echo edited >> README; echo new > src/new.rs; cat '{h}/.ssh/id_rsa' '{h}/notes'; \
             echo tmp > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"; true",
            h = home.path().display()
        ),
    )
    .await
    .unwrap();
    assert!(!stdout(&v).contains("PRIVATE-KEY"), "{v}");
    assert!(stdout(&v).contains("readable"), "{v}");
    assert!(stdout(&v).contains("tmp"), "{v}");
    assert_eq!(
        std::fs::read_to_string(root.join(".git/config")).unwrap(),
        "[core]\n",
        "{}: {v}",
        landlock_hint()
    );
    assert!(!root.join(".old").exists(), "{v}");
    assert!(
        std::fs::read_to_string(root.join("README"))
            .unwrap()
            .contains("edited"),
        "{v}"
    );
    assert!(root.join("src/new.rs").exists(), "{v}");
    // The probe says what is missing.
    let probe = settings.sandbox.probe(root).unwrap();
    let missing = probe.missing().join("; ");
    assert!(missing.contains("namespaces = false"), "{missing}");
    assert!(missing.contains("read-only"), "{missing}");
}

/// With everything available, the probe finds nothing missing.
#[tokio::test]
async fn the_probe_reports_a_whole_sandbox() {
    let ws = tempfile::tempdir().unwrap();
    let probe = builtin_settings().sandbox.probe(ws.path()).unwrap();
    assert!(probe.landlock_abi >= 4, "{probe:?}: {}", landlock_hint());
    assert!(probe.isolation.user && probe.isolation.pid, "{probe:?}");
    assert!(probe.isolation.mounts && probe.own_proc, "{probe:?}");
    assert!(probe.missing().is_empty(), "{:?}", probe.missing());
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap()
}

/// A command can create a git repository (nothing stops a name), or
/// change a nested one, so that the person's next `git status` there runs
/// a program outside any sandbox. Lathe looks after every command: such a
/// repository is disarmed (its config and hooks moved aside) and the
/// model and the person are told.
#[tokio::test]
async fn git_repositories_armed_by_a_command_are_disarmed() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let marker = root.join("RAN");
    let v = run(
        Mode::WorkspaceWrite,
        root,
        &format!(
            "git init -q sub && git -C sub config core.fsmonitor 'touch {m}; false' && \
             mkdir -p deep/er && git init -q deep/er && printf '#!/bin/sh\\ntouch {m}\\n' > deep/er/.git/hooks/post-checkout && \
             chmod +x deep/er/.git/hooks/post-checkout && \
             git init -q plain && echo armed",
            m = marker.display()
        ),
    )
    .await;
    assert!(stdout(&v).contains("armed"), "{v}");
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("sub/.git"), "{v}");
    assert!(warnings.contains("core.fsmonitor"), "{v}");
    assert!(warnings.contains("hook post-checkout"), "{v}");
    assert!(
        !warnings.contains("plain"),
        "a plain repository is fine: {v}"
    );
    assert!(root.join("sub/.git/config.lathe-disarmed").exists());
    assert!(root.join("deep/er/.git/hooks.lathe-disarmed").exists());
    assert!(root.join("plain/.git/config").exists());
    // The person's git runs nothing there now.
    std::fs::write(root.join("sub/f"), "x").unwrap();
    git(&root.join("sub"), &["status"]);
    git(&root.join("deep/er"), &["status"]);
    assert!(!marker.exists(), "git ran the planted program");
}

/// The other ways to arm one: a `.git` where the workspace had none, a
/// `.git` file pointing into the temp directory, a `.git` above the
/// workspace (inside a writable root), a bare repository, a changed
/// nested one, and timestamps set back.
#[tokio::test]
async fn every_way_to_plant_a_git_repository_is_found() {
    // Outside the temp dir: the workspace's parent and another directory
    // are writable roots of their own.
    let parent = outside();
    let root = parent.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    // A nested repository of the person's own, with a pager they chose:
    // untouched by the command, so left alone.
    std::fs::create_dir(root.join("vendor")).unwrap();
    git(&root.join("vendor"), &["init", "-q", "mine"]);
    git(
        &root.join("vendor/mine"),
        &["config", "core.pager", "less -R"],
    );
    git(&root.join("vendor"), &["init", "-q", "theirs"]);
    let elsewhere = outside();
    let mut settings = builtin_settings();
    settings.sandbox.writable_roots = vec![parent.path().into(), elsewhere.path().into()];
    let private = settings.sandbox.private_tmp.clone().unwrap();
    // Changes older than the command are the person's.
    std::thread::sleep(Duration::from_millis(200));
    let v = run_in(
        &ExecShell::new(&settings),
        &root,
        &format!(
            "git init -q . && git config core.pager evil; \
             git init -q --bare bare.git && printf '[alias]\\n\\tx = !evil\\n' >> bare.git/config; \
             git init -q '{e}/gd' && git -C '{e}/gd' config diff.external evil && mkdir wt && echo 'gitdir: {e}/gd/.git' > wt/.git; \
             git init -q .. && git -C .. config core.fsmonitor evil; \
             git -C vendor/theirs config core.sshCommand evil && touch -d 2001-01-01 vendor/theirs/.git/config; \
             git init -q /tmp/scratch && git -C /tmp/scratch config core.editor evil; \
             echo planted",
            e = elsewhere.path().display()
        ),
    )
    .await
    .unwrap();
    assert!(stdout(&v).contains("planted"), "{v}");
    let warnings = v["warnings"].to_string();
    for found in [
        "core.pager",
        "alias.x",
        "diff.external",
        "core.fsmonitor",
        "core.sshcommand",
        "core.editor",
    ] {
        assert!(warnings.contains(found), "{found} missing: {v}");
    }
    assert!(root.join(".git/config.lathe-disarmed").exists(), "{v}");
    assert!(root.join("bare.git/config.lathe-disarmed").exists(), "{v}");
    assert!(
        elsewhere
            .path()
            .join("gd/.git/config.lathe-disarmed")
            .exists(),
        "{v}"
    );
    assert!(
        parent.path().join(".git/config.lathe-disarmed").exists(),
        "{v}"
    );
    assert!(
        root.join("vendor/theirs/.git/config.lathe-disarmed")
            .exists(),
        "{v}"
    );
    assert!(root.join("vendor/mine/.git/config").exists(), "{v}");
    assert!(!warnings.contains("vendor/mine"), "{v}");
    // The command's /tmp is the session's own, looked through whole.
    assert!(
        private.join("scratch/.git/config.lathe-disarmed").exists(),
        "{v}"
    );
    assert!(!Path::new("/tmp/scratch").exists(), "{v}");
}

/// A credential store kept elsewhere and linked into place (as dotfile
/// managers do) is hidden all the same.
#[tokio::test]
async fn linked_credential_stores_are_hidden_too() {
    let ws = tempfile::tempdir().unwrap();
    let home = outside();
    let dots = outside();
    std::fs::create_dir(dots.path().join("ssh")).unwrap();
    std::fs::write(dots.path().join("ssh/id_ed25519"), "PRIVATE-KEY-MATERIAL").unwrap();
    std::fs::write(
        dots.path().join("netrc"),
        "machine x password hunter2hunter2",
    )
    .unwrap();
    std::os::unix::fs::symlink(dots.path().join("ssh"), home.path().join(".ssh")).unwrap();
    std::os::unix::fs::symlink(dots.path().join("netrc"), home.path().join(".netrc")).unwrap();
    let mut settings = builtin_settings();
    settings.sandbox.hidden = vec![home.path().join(".ssh"), home.path().join(".netrc")];
    for namespaces in [true, false] {
        settings.sandbox.namespaces = namespaces;
        let v = run_in(
            &ExecShell::new(&settings),
            ws.path(),
            &format!(
                "cat '{0}/.ssh/id_ed25519' '{0}/.netrc' 2>&1; echo listed",
                home.path().display()
            ),
        )
        .await
        .unwrap();
        assert!(!stdout(&v).contains("PRIVATE-KEY"), "{namespaces}: {v}");
        assert!(!stdout(&v).contains("hunter2"), "{namespaces}: {v}");
        assert!(stdout(&v).contains("listed"), "{v}");
    }
}

/// Descriptors whatever started Lathe left open (an IDE, a CI runner) do
/// not reach the command: it cannot write through one where the sandbox
/// forbids it.
#[tokio::test]
async fn inherited_descriptors_are_closed() {
    use std::os::fd::AsRawFd;
    let ws = tempfile::tempdir().unwrap();
    let out = outside();
    let log = out.path().join("log.txt");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .unwrap();
    // `dup` leaves the copy open across exec, as an inherited one is.
    let inherited = nix::unistd::dup(&file).unwrap();
    let fd = inherited.as_raw_fd();
    let v = run(
        Mode::WorkspaceWrite,
        ws.path(),
        &format!("echo leaked >&{fd}; echo rc=$?"),
    )
    .await;
    drop(inherited);
    assert!(stdout(&v).contains("rc=1"), "{v}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "", "{v}");
}

/// `/tmp` is the session's own (kept from one command to the next), and
/// `/dev/shm` and System V IPC are the command's: other programs' scratch
/// files, sockets and shared memory are out of reach, and nothing the
/// command leaves there meets the person's programs.
#[tokio::test]
async fn temp_shared_memory_and_ipc_are_the_sessions_own() {
    let ws = tempfile::tempdir().unwrap();
    let tool = shell(Mode::WorkspaceWrite, false);
    let marker = format!("lathe-private-{}", std::process::id());
    let v = run_in(
        &tool,
        ws.path(),
        &format!(
            "echo one > /tmp/{marker} && echo shm > /dev/shm/{marker} && echo \"tmpdir=$TMPDIR\"; \
             readlink /proc/self/ns/ipc"
        ),
    )
    .await
    .unwrap();
    assert!(stdout(&v).contains("tmpdir=/tmp"), "{v}");
    assert!(!Path::new("/tmp").join(&marker).exists(), "{v}");
    assert!(!Path::new("/dev/shm").join(&marker).exists(), "{v}");
    let ours = std::fs::read_link("/proc/self/ns/ipc").unwrap();
    assert!(
        !stdout(&v).contains(&*ours.to_string_lossy()),
        "the same IPC namespace: {v}"
    );
    let v = run_in(&tool, ws.path(), &format!("cat /tmp/{marker}"))
        .await
        .unwrap();
    assert_eq!(stdout(&v), "one\n", "kept for the session: {v}");
}

/// What an attacker tried against the sweep: a `.git` linked to the
/// workspace's own (read-only) repository must not get it disarmed; a
/// FIFO as a config must not hang Lathe; a `.git` file whose path ends in
/// a space, a link into a writable root, a config that is a link, a bare
/// repository whose `HEAD` is a link, a config over 1 MiB, a comment that
/// ends in a backslash, an LFS filter that runs more than git-lfs: all
/// found.
#[tokio::test]
async fn the_sweep_holds_against_its_attackers() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    git(root, &["init", "-q", "."]);
    git(root, &["config", "core.editor", "vim"]);
    let other = outside();
    let mut settings = builtin_settings();
    settings.sandbox.writable_roots = vec![other.path().into()];
    std::thread::sleep(Duration::from_millis(200));
    let o = other.path().display();
    let started = Instant::now();
    let v = run_in(
        &ExecShell::new(&settings),
        root,
        &format!(
            "mkdir -p link && ln -s ../.git link/.git; \
             git init -q fifo && rm fifo/.git/config && mkfifo fifo/.git/config; \
             git init -q 'sp ' && git -C 'sp ' config core.pager evil && mkdir wt && printf 'gitdir: %s/sp \\n' \"$PWD\" > wt/.git && mv 'sp /.git' 'sp /real' && printf 'gitdir: %s/sp /real ' \"$PWD\" > wt/.git; \
             git init -q '{o}/far' && git -C '{o}/far' config core.pager evil && ln -s '{o}/far' farlink; \
             git init -q cfglink && printf '[core]\\n\\tpager = evil\\n' > '{o}/cfg' && rm cfglink/.git/config && ln -s '{o}/cfg' cfglink/.git/config; \
             git init -q --bare headlink.git && rm headlink.git/HEAD && ln -s refs/heads/main headlink.git/HEAD && printf '[core]\\n\\tpager = evil\\n' >> headlink.git/config; \
             git init -q big && (for i in $(seq 1 20000); do echo '#################################################################'; done; printf '[core]\\n\\tfsmonitor = evil\\n') >> big/.git/config; \
             git init -q comment && printf '[core]\\n\\t# note \\\\\\n\\tfsmonitor = evil\\n' >> comment/.git/config; \
             echo '{{}}' > .mcp.json; \
             git init -q lfs && printf '[filter \"lfs\"]\\n\\tclean = \"git-lfs clean -- %%f; evil\"\\n' >> lfs/.git/config; \
             echo planted"
        ),
    )
    .await
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the sweep hung"
    );
    assert!(stdout(&v).contains("planted"), "{v}");
    let warnings = v["warnings"].to_string();
    assert!(
        root.join(".git/config").exists() && !root.join(".git/config.lathe-disarmed").exists(),
        "the workspace's own repository was disarmed: {v}"
    );
    assert!(!warnings.contains("core.editor"), "{v}");
    // No FIFO can be made in the workspace any more (the sweep would
    // have disarmed it).
    assert!(
        std::fs::symlink_metadata(root.join("fifo/.git/config")).is_err(),
        "a FIFO was made: {v}"
    );
    for (what, armed) in [
        ("far", format!("{o}/far/.git/config.lathe-disarmed")),
        ("cfglink", "cfglink/.git/config.lathe-disarmed".to_string()),
        ("headlink", "headlink.git/config.lathe-disarmed".to_string()),
        ("big", "big/.git/config.lathe-disarmed".to_string()),
        ("comment", "comment/.git/config.lathe-disarmed".to_string()),
        ("lfs", "lfs/.git/config.lathe-disarmed".to_string()),
    ] {
        assert!(root.join(&armed).exists(), "{what}: {v}");
    }
    assert!(
        root.join("sp /real/config.lathe-disarmed").exists(),
        "gitdir with a space: {v}"
    );
    assert!(warnings.contains("over 1 MiB"), "{v}");
    assert!(warnings.contains("created .mcp.json"), "{v}");
}

/// A file a command leaves behind cannot run as its owner (root, when
/// Lathe runs as root) or carry capabilities: set-user-ID and
/// set-group-ID bits are refused however they are asked for, and so is a
/// file capability. Ordinary modes, `cp -a` and `tar` work.
#[tokio::test]
async fn no_set_id_bits_or_file_capabilities() {
    let ws = tempfile::tempdir().unwrap();
    let v = run(
        Mode::WorkspaceWrite,
        ws.path(),
        "cp /bin/true t && chmod 4755 t; echo suid=$?; chmod g+s t; echo sgid=$?; chmod 755 t; echo plain=$?; \
         python3 -c 'import os; os.open(\"o\", os.O_CREAT|os.O_WRONLY, 0o4755)' 2>/dev/null; echo open=$?; \
         python3 -c 'import os; os.setxattr(\"t\", \"security.capability\", bytes.fromhex(\"0100000200200000000000000000000000000000\"))' 2>/dev/null; echo cap=$?; \
         python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); r=l.syscall(425, 8, 0); print(\"uring\", r, ctypes.get_errno())'; \
         python3 -c 'import ctypes,os; l=ctypes.CDLL(None, use_errno=True); n={\"x86_64\": 250, \"aarch64\": 219}[os.uname().machine]; r=l.syscall(n, 0, -3, 0); print(\"keyring\", r, ctypes.get_errno())'; \
         touch a && cp -a a b && tar cf t.tar a b && mkdir x && tar xf t.tar -C x && echo archive-ok",
    )
    .await;
    let out = stdout(&v);
    for refused in [
        "suid=1",
        "sgid=1",
        "open=1",
        "cap=1",
        "uring -1 38",
        "keyring -1 1",
    ] {
        assert!(out.contains(refused), "{refused}: {v}");
    }
    assert!(out.contains("plain=0") && out.contains("archive-ok"), "{v}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(ws.path().join("t"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o6000, 0, "{v}");
    assert!(
        !ws.path().join("o").exists()
            || std::fs::metadata(ws.path().join("o"))
                .unwrap()
                .permissions()
                .mode()
                & 0o6000
                == 0
    );
}

/// The second round of attacks on the sweep: a NUL that git stops at, a
/// `.git` file ending in one, HEADs git takes that are not spelt the
/// usual way, a git directory whose objects live in its `commondir`, a
/// directory the command made unreadable.
#[tokio::test]
async fn the_sweep_reads_git_directories_as_git_does() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    std::thread::sleep(Duration::from_millis(100));
    let v = run(
        Mode::WorkspaceWrite,
        root,
        "git init -q nul && printf '[remote \"origin.uploadpack\\0x\"]\\n\\turl = evil\\n' >> nul/.git/config; \
         git init -q --bare store && printf 'ref:refs/heads/main' > store/HEAD && printf '[core]\\n\\tfsmonitor = evil\\n' >> store/config && \
         mkdir app && printf 'gitdir: ../store\\0' > app/.git; \
         git init -q --bare hex && printf '0123456789012345678901234567890123456789 junk' > hex/HEAD && printf '[core]\\n\\tpager = evil\\n' >> hex/config; \
         git init -q --bare common && mkdir linked && printf 'ref: refs/heads/main\\n' > linked/HEAD && echo ../common > linked/commondir && printf '[core]\\n\\tpager = evil\\n' >> common/config; \
         mkdir -p locked/sub && git init -q locked/sub && git -C locked/sub config core.fsmonitor evil && chmod 111 locked; \
         echo planted",
    )
    .await;
    assert!(stdout(&v).contains("planted"), "{v}");
    for armed in [
        "nul/.git/config.lathe-disarmed",
        "store/config.lathe-disarmed",
        "hex/config.lathe-disarmed",
        "common/config.lathe-disarmed",
        "locked/sub/.git/config.lathe-disarmed",
    ] {
        assert!(root.join(armed).exists(), "{armed}: {v}");
    }
}

/// Where the workspace lies under /tmp, an earlier command cannot swap a
/// directory on its way for a link to have the next command's workspace
/// (or the warden's directories) land elsewhere: the next command does
/// not run, and says why.
#[tokio::test]
async fn a_link_in_the_sessions_tmp_stops_the_next_command() {
    let parent = tempfile::tempdir().unwrap();
    let ws = parent.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let elsewhere = outside();
    let tool = shell(Mode::WorkspaceWrite, false);
    let p = parent.path().display();
    let _ = run_in(
        &tool,
        &ws,
        &format!(
            "cd / && mv '{p}' /tmp/moved && ln -s '{}' '{p}'",
            elsewhere.path().display()
        ),
    )
    .await;
    let e = run_in(&tool, &ws, "echo ran").await.unwrap_err();
    assert!(e.to_string().contains("link"), "{e}");
    assert!(!elsewhere.path().join("ws").exists());
}

/// The scripts a repository runs from the workspace when the person uses
/// git (husky's, files its config includes) are as protected as `.git`.
#[tokio::test]
async fn what_the_repository_runs_from_the_workspace_is_read_only() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    git(root, &["init", "-q", "."]);
    git(root, &["config", "core.hooksPath", ".husky/_"]);
    git(root, &["config", "include.path", "../.gitconfig.local"]);
    std::fs::create_dir_all(root.join(".husky/_")).unwrap();
    std::fs::write(root.join(".husky/pre-commit"), "npm test\n").unwrap();
    std::fs::write(root.join(".gitconfig.local"), "[user]\n\tname = A\n").unwrap();
    std::fs::write(root.join(".pre-commit-config.yaml"), "repos: []\n").unwrap();
    let v = run(
        Mode::WorkspaceWrite,
        root,
        "echo evil >> .husky/pre-commit; printf '[core]\\n\\tfsmonitor = evil\\n' >> .gitconfig.local; \
         echo evil >> .pre-commit-config.yaml; echo ok > other.txt; true",
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(root.join(".husky/pre-commit")).unwrap(),
        "npm test\n",
        "{v}"
    );
    assert!(
        !std::fs::read_to_string(root.join(".gitconfig.local"))
            .unwrap()
            .contains("evil")
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".pre-commit-config.yaml")).unwrap(),
        "repos: []\n"
    );
    assert!(root.join("other.txt").exists());
}

/// A hidden store inside the workspace (a workspace that is the home
/// directory) cannot be carried out from under its cover by moving a
/// parent.
#[tokio::test]
async fn moving_a_parent_does_not_uncover_a_hidden_store() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    std::fs::create_dir_all(root.join(".config/gh")).unwrap();
    std::fs::write(
        root.join(".config/gh/hosts.yml"),
        "oauth_token: gho_secret123456",
    )
    .unwrap();
    let mut settings = builtin_settings();
    settings.sandbox.hidden = vec![root.join(".config/gh")];
    let tool = ExecShell::new(&settings);
    let v = run_in(&tool, root, "mv .config cfg 2>&1; echo moved=$?")
        .await
        .unwrap();
    assert!(stdout(&v).contains("moved=1"), "{v}");
    let v = run_in(
        &tool,
        root,
        "cat .config/gh/hosts.yml cfg/gh/hosts.yml 2>&1",
    )
    .await
    .unwrap();
    assert!(!stdout(&v).contains("gho_secret"), "{v}");
}

/// Without namespaces, the system's /dev/shm and System V IPC are other
/// programs': neither can be used.
#[tokio::test]
async fn without_namespaces_shared_memory_is_refused() {
    let ws = tempfile::tempdir().unwrap();
    let mut settings = builtin_settings();
    settings.sandbox.namespaces = false;
    let marker = format!("lathe-shm-{}", std::process::id());
    let v = run_in(
        &ExecShell::new(&settings),
        ws.path(),
        &format!(
            "echo x > /dev/shm/{marker}; echo shm=$?; \
             python3 -c 'import ctypes,os; l=ctypes.CDLL(None, use_errno=True); n={{\"x86_64\": 29, \"aarch64\": 194}}[os.uname().machine]; r=l.syscall(n, 0, 4096, 0o1600); print(\"sysv\", r, ctypes.get_errno())'"
        ),
    )
    .await
    .unwrap();
    assert!(!Path::new("/dev/shm").join(&marker).exists(), "{v}");
    assert!(stdout(&v).contains("sysv -1 1"), "{v}");
}

/// A Unix socket server outside the workspace, run by `python3` in `dir`:
/// it binds `name` (a relative path, as `tmux -S dev.sock` does), then
/// renames or links the socket as `how` says, and leaves `CONNECTED` in
/// `dir` for every connection it accepts. `prefix` runs it some other
/// way (`unshare -rn`: in a network namespace of its own).
struct SocketServer {
    child: std::process::Child,
    dir: PathBuf,
}

impl SocketServer {
    fn start(dir: &Path, name: &str, how: &str, prefix: &[&str]) -> Self {
        let script = r#"
import os, socket, sys
d, name, how = sys.argv[1:4]
os.chdir(d)
s = socket.socket(socket.AF_UNIX)
s.bind(name)
s.listen()
if how == "rename":
    os.rename(name, "moved.sock")
elif how == "link":
    os.link(name, "linked.sock")
open("ready", "w").close()
while True:
    c, _ = s.accept()
    open("CONNECTED", "a").write("x")
    c.close()
"#;
        let mut argv: Vec<&str> = prefix.to_vec();
        argv.extend(["python3", "-c", script]);
        let child = std::process::Command::new(argv[0])
            .args(&argv[1..])
            .arg(dir)
            .arg(name)
            .arg(how)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !dir.join("ready").exists() {
            assert!(Instant::now() < deadline, "the socket server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            child,
            dir: dir.to_path_buf(),
        }
    }

    /// Whether anything connected (asked a moment after the command, so
    /// that a connection it made has been accepted).
    fn reached(&self) -> bool {
        std::thread::sleep(Duration::from_millis(300));
        self.dir.join("CONNECTED").exists()
    }
}

impl Drop for SocketServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `python3` connecting to `path` from `cwd` (relative paths as given).
fn connect_from(cwd: &Path, path: &str) -> String {
    format!(
        "cd '{}' && python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); \
         s.connect(sys.argv[1]); print(\"CONNECTED\")' '{path}' 2>&1; echo done",
        cwd.display()
    )
}

/// However a socket outside the writable roots was bound, a sandboxed
/// command cannot reach it: by a relative path (which `/proc/net/unix`
/// shows as such), renamed after it was bound, through a hard link, or
/// bound in another network namespace (which `/proc/net/unix` here does
/// not list at all). Each is tried through every path that leads to it.
#[tokio::test]
async fn sockets_however_bound_are_out_of_reach() {
    let ws = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &[&str]); 4] = [
        ("dev.sock", "plain", &[]),
        ("dev.sock", "rename", &[]),
        ("dev.sock", "link", &[]),
        ("dev.sock", "plain", &["unshare", "-rn"]),
    ];
    for (name, how, prefix) in cases {
        let out = outside();
        let server = SocketServer::start(out.path(), name, how, prefix);
        let target = match how {
            "rename" => "moved.sock",
            "link" => "linked.sock",
            _ => name,
        };
        // Absolute, relative from its directory, through `..`, through a
        // link in the workspace.
        std::os::unix::fs::symlink(out.path().join(target), ws.path().join("via-link.sock"))
            .unwrap();
        let absolute = out.path().join(target);
        for (cwd, path) in [
            (ws.path().to_path_buf(), absolute.display().to_string()),
            (out.path().to_path_buf(), target.to_string()),
            (
                ws.path().to_path_buf(),
                format!("../../../../../../../..{}", absolute.display()),
            ),
            (ws.path().to_path_buf(), "via-link.sock".to_string()),
        ] {
            let v = run(Mode::WorkspaceWrite, ws.path(), &connect_from(&cwd, &path)).await;
            assert!(stdout(&v).contains("done"), "{v}");
            assert!(
                !stdout(&v).contains("CONNECTED"),
                "{how} {prefix:?} {path}: {v}"
            );
            assert!(
                stdout(&v).contains("Permission denied"),
                "refused, not missing: {how} {prefix:?} {path}: {v}"
            );
            assert!(!server.reached(), "{how} {prefix:?} {path}: {v}");
        }
        std::fs::remove_file(ws.path().join("via-link.sock")).unwrap();
        // The same socket, reached from outside the sandbox: the server
        // was listening all along.
        let v = std::process::Command::new("bash")
            .arg("-c")
            .arg(connect_from(out.path(), target))
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&v.stdout).contains("CONNECTED"));
        assert!(server.reached(), "the server was not listening");
    }
}

/// The attack the third round found: a tmux server the person runs
/// outside the workspace, on a socket named by a relative path. Through
/// its `run-shell`, a sandboxed command wrote outside; no more.
#[tokio::test]
async fn a_tmux_server_outside_runs_nothing_for_a_command() {
    let ws = tempfile::tempdir().unwrap();
    let out = outside();
    let started = std::process::Command::new("tmux")
        .current_dir(out.path())
        .args(["-S", "dev.sock", "new-session", "-d", "sleep 120"])
        .status()
        .expect("tmux is needed for this test (.ci/run installs it)");
    assert!(started.success());
    let socket = out.path().join("dev.sock");
    let pwned = out.path().join("PWNED");
    let v = run(
        Mode::WorkspaceWrite,
        ws.path(),
        &format!(
            "tmux -S '{s}' run-shell 'touch {p}' 2>&1; cd '{d}' && tmux -S dev.sock run-shell \
             'touch {p}' 2>&1; echo done",
            s = socket.display(),
            p = pwned.display(),
            d = out.path().display()
        ),
    )
    .await;
    assert!(stdout(&v).contains("done"), "{v}");
    assert!(
        !pwned.exists(),
        "tmux ran a command outside the sandbox: {v}"
    );
    // The server was there to be reached: from outside, it runs.
    let ran = std::process::Command::new("tmux")
        .args(["-S"])
        .arg(&socket)
        .args(["run-shell"])
        .arg(format!("touch {}", pwned.display()))
        .status()
        .unwrap();
    let _ = std::process::Command::new("tmux")
        .arg("-S")
        .arg(&socket)
        .arg("kill-server")
        .status();
    assert!(
        ran.success() && pwned.exists(),
        "the tmux server was not running"
    );
}

/// Abstract sockets belong to a network namespace: with the network
/// allowed, the command shares the system's, where X11 and D-Bus listen.
/// They stay out of reach unless the person names one.
#[tokio::test]
async fn abstract_sockets_stay_out_of_reach_with_the_network_allowed() {
    let ws = tempfile::tempdir().unwrap();
    let name = format!("lathe-test-{}", std::process::id());
    let listener = std::os::unix::net::UnixListener::bind_addr(
        &<std::os::unix::net::SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(
            name.as_bytes(),
        )
        .unwrap(),
    )
    .unwrap();
    listener.set_nonblocking(true).unwrap();
    let probe = format!(
        "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"\\0{name}\"); \
         print(\"CONNECTED\")' 2>&1; echo done"
    );
    for network in [false, true] {
        let v = run_in(&shell(Mode::WorkspaceWrite, network), ws.path(), &probe)
            .await
            .unwrap();
        assert!(stdout(&v).contains("done"), "{v}");
        assert!(!stdout(&v).contains("CONNECTED"), "network {network}: {v}");
        assert!(listener.accept().is_err(), "network {network}: {v}");
    }
    // Named by the person: reached.
    let mut settings = builtin_settings();
    settings.sandbox.network = true;
    settings.sandbox.allow_sockets = vec![format!("@{name}")];
    let v = run_in(&ExecShell::new(&settings), ws.path(), &probe)
        .await
        .unwrap();
    assert!(stdout(&v).contains("CONNECTED"), "{v}");
    assert!(listener.accept().is_ok(), "{v}");
}

/// A socket outside the writable roots the person named is reached; the
/// one beside it is not. And no Unix datagram socket can be made, since
/// a datagram goes wherever its address says.
#[tokio::test]
async fn a_named_socket_is_reached_and_no_datagram_socket_is_made() {
    let ws = tempfile::tempdir().unwrap();
    let out = outside();
    let named = std::os::unix::net::UnixListener::bind(out.path().join("named.sock")).unwrap();
    named.set_nonblocking(true).unwrap();
    let other = std::os::unix::net::UnixListener::bind(out.path().join("other.sock")).unwrap();
    other.set_nonblocking(true).unwrap();
    let mut settings = builtin_settings();
    settings.sandbox.allow_sockets = vec![out.path().join("named.sock").display().to_string()];
    let tool = ExecShell::new(&settings);
    for (sock, listener, reached) in [("named.sock", &named, true), ("other.sock", &other, false)] {
        let v = run_in(&tool, ws.path(), &connect_from(out.path(), sock))
            .await
            .unwrap();
        assert_eq!(stdout(&v).contains("CONNECTED"), reached, "{sock}: {v}");
        assert_eq!(listener.accept().is_ok(), reached, "{sock}: {v}");
    }
    // A datagram socket outside, waiting for anything.
    let inbox = std::os::unix::net::UnixDatagram::bind(out.path().join("dgram.sock")).unwrap();
    inbox.set_nonblocking(true).unwrap();
    let script = format!(
        "python3 -c 'import socket; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)' 2>&1 | tail -1; \
         python3 -c 'import socket; socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)' 2>&1 | tail -1; \
         python3 -c 'import socket; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC)' 2>&1 | tail -1; \
         python3 -c 'import socket; s = socket.socket(socket.AF_UNIX, socket.SOCK_RAW); s.sendto(b\"x\", \"{inbox}\")' 2>&1 | tail -1; \
         python3 -c 'import socket; s = socket.socket(socket.AF_UNIX, 10); s.sendto(b\"x\", \"{inbox}\")' 2>&1 | tail -1; \
         python3 -c 'import socket; socket.socketpair(); print(\"PAIR-OK\")'; \
         python3 -c 'import socket; socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET); print(\"SEQ-OK\")'; \
         python3 -c 'import ctypes, os; fd = ctypes.CDLL(None, use_errno=True).syscall(41, ctypes.c_long((1 << 32) | 1), 2, 0); print(\"WIDE\", fd, os.strerror(ctypes.get_errno()))'",
        inbox = out.path().join("dgram.sock").display()
    );
    let v = run(Mode::WorkspaceWrite, ws.path(), &script).await;
    assert_eq!(stdout(&v).matches("Permission denied").count(), 6, "{v}");
    let mut buf = [0u8; 8];
    assert!(inbox.recv(&mut buf).is_err(), "a datagram got out: {v}");
    assert!(stdout(&v).contains("SEQ-OK"), "{v}");
    // The family's high bits, which the kernel ignores, do not get one
    // past either.
    assert!(stdout(&v).contains("WIDE -1 Permission denied"), "{v}");
    assert!(stdout(&v).contains("PAIR-OK"), "{v}");
}

/// No FIFO can be made in the workspace: git, and Lathe's checkpoints
/// with it, block for good on one put where a `.gitignore` should be.
#[tokio::test]
async fn no_fifo_is_made_in_the_workspace() {
    let ws = tempfile::tempdir().unwrap();
    let v = run(
        Mode::WorkspaceWrite,
        ws.path(),
        "mkdir -p d && mkfifo d/.gitignore 2>&1; mkfifo p 2>&1; touch ok; echo done",
    )
    .await;
    assert!(stdout(&v).contains("done"), "{v}");
    assert!(ws.path().join("ok").exists(), "{v}");
    assert!(!ws.path().join("d/.gitignore").exists(), "{v}");
    assert!(!ws.path().join("p").exists(), "{v}");
}

/// With the sandbox off, a command still runs under a warden it cannot
/// stop: killing it (`kill -9 $PPID`, by its pid from `/proc`) fails,
/// and nothing the command started (in a new session, double-forked)
/// outlives it.
#[tokio::test]
async fn with_the_sandbox_off_nothing_outlives_a_command_that_kills_its_warden() {
    let ws = tempfile::tempdir().unwrap();
    let v = run_in(
        &shell(Mode::Off, false),
        ws.path(),
        &format!(
            "{}; sleep 0.3; kill -9 $PPID; echo ppid=$?; \
             kill -9 \"$(awk '/^PPid/ {{print $2}}' /proc/$$/status)\"; sleep 0.3; echo started",
            escapes(9741)
        ),
    )
    .await;
    // Refused, or the warden died and took everything with it: either
    // way nothing is left.
    let _ = v;
    let left = gone("sleep 9741").await;
    assert!(
        left.is_empty(),
        "still running with the sandbox off: {left:?}"
    );
}
