//! A program in a real terminal: a tmux server of its own (its own
//! socket) running it in one pane. Keys go in with `send-keys`, the screen
//! comes back with `capture-pane`, and a test waits for what should appear
//! (polling, with a deadline), never for a fixed time.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// Whether tmux is here. Without it a terminal test is skipped with a
/// message, unless `LATHE_REQUIRE_TMUX` is set (as `.ci/run` sets it):
/// then its absence fails the test.
pub fn have_tmux() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("LATHE_REQUIRE_TMUX").is_none(),
            "tmux is required (LATHE_REQUIRE_TMUX is set) but not installed"
        );
        eprintln!("tmux not found: skipping the terminal end-to-end test");
    }
    ok
}

/// One tmux server running one program in one pane; killed when dropped.
pub struct Pane {
    socket: String,
    /// The home the program runs with, kept as long as the pane.
    pub home: tempfile::TempDir,
}

impl Pane {
    /// `program` (a shell line) in a 110×34 pane.
    pub fn open(program: &str, home: tempfile::TempDir) -> Self {
        Self::open_sized(program, home, (110, 34))
    }

    /// `program` in a pane of `(columns, rows)`.
    pub fn open_sized(program: &str, home: tempfile::TempDir, (cols, rows): (u16, u16)) -> Self {
        let socket = format!(
            "lathe-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let (cols, rows) = (cols.to_string(), rows.to_string());
        let status = Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null", "new-session", "-d"])
            .args(["-x", &cols, "-y", &rows, program])
            .status()
            .unwrap();
        assert!(status.success(), "tmux new-session failed");
        Self { socket, home }
    }

    /// Runs a tmux command against this pane's server; its output.
    pub fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p"])
    }

    /// Sends keys by tmux's names (`Enter`, `C-c`, `Down`, …).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Types `text` as it is, at once.
    pub fn text(&self, text: &str) {
        self.tmux(&["send-keys", "-l", text]);
    }

    /// Types `text` one key at a time, `gap` apart, as a person does.
    pub async fn type_slowly(&self, text: &str, gap: Duration) {
        for c in text.chars() {
            self.text(&c.to_string());
            tokio::time::sleep(gap).await;
        }
    }

    /// Pastes `text` as the terminal does (bracketed, when the program
    /// asks for it).
    pub fn paste(&self, text: &str) {
        self.tmux(&["set-buffer", "--", text]);
        self.tmux(&["paste-buffer", "-p"]);
    }

    /// The pid of the pane's first process (its shell or program).
    pub fn pane_pid(&self) -> String {
        self.tmux(&["display-message", "-p", "#{pane_pid}"])
            .trim()
            .to_string()
    }

    /// Waits until the screen shows `needle` (20 s at most); returns the
    /// screen.
    pub async fn wait_for(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {needle:?}; the screen:\n{screen}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}
