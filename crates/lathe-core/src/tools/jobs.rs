//! Commands running in the background: `exec_shell` and `spawn` with
//! `background: true` start one and return at once with its handle
//! (`bg1`); `shell_output` reads what it printed since the last read,
//! `shell_kill` stops it. Each runs exactly as a command does (judged,
//! approved, sandboxed, its processes contained by the warden), with no
//! timeout unless asked. Its output goes into a buffer of 1 MiB (the
//! oldest bytes dropped, and counted), nothing else: a command nobody
//! reads costs no events and no work beyond that. At most a few run at
//! once; the agent stops every one when the conversation is cleared or
//! ends, and the warden's parent-death signal ends them should Lathe be
//! killed.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::protocol::JobInfo;
use crate::tools::spec::{ProgressSink, ToolError};

/// The most output a background command keeps unread.
pub const BUFFER_BYTES: usize = 1 << 20;
/// The most one read gives the model (the newest part; the rest counted).
pub const READ_BYTES: usize = 32 * 1024;
/// How many commands may run in the background at once, by default.
pub use crate::config::defaults::MAX_BACKGROUND as DEFAULT_MAX;
/// Lines of each command `/ps` shows.
const TAIL_LINES: usize = 8;
/// The end of a buffer `/ps` looks at for those lines.
const TAIL_BYTES: usize = 16 * 1024;
/// Ended commands kept for `/ps`.
const ENDED_KEPT: usize = 8;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How a background command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub exit_code: Option<i32>,
    /// Why, when it did not simply exit (stopped, failed to start, the
    /// sandbox's note).
    pub note: Option<String>,
}

/// What a read gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    pub output: String,
    /// Bytes printed since the last read that are not in `output` (the
    /// buffer dropped them, or the read was cut to its newest part).
    pub skipped: u64,
    pub ended: Option<Ended>,
}

#[derive(Default)]
struct State {
    buf: VecDeque<u8>,
    /// The offset, in all the command printed, of `buf[0]`.
    start: u64,
    /// How far the model has read.
    read: u64,
    ended: Option<Ended>,
    /// `shell_kill` or the conversation stopped it.
    stopped: bool,
}

impl State {
    fn end(&self) -> u64 {
        self.start + self.buf.len() as u64
    }
}

pub struct Job {
    pub handle: String,
    pub command: String,
    /// The call that started it.
    call_id: Option<String>,
    started_ms: u64,
    cancel: CancellationToken,
    state: Mutex<State>,
    changed: Notify,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("handle", &self.handle)
            .field("command", &self.command)
            .finish_non_exhaustive()
    }
}

impl Job {
    /// Where the command's output goes: into the buffer, a line at a time
    /// (stdout and stderr as a terminal shows them, one after the other).
    pub fn sink(self: &Arc<Self>) -> ProgressSink {
        let job = Arc::clone(self);
        ProgressSink::new(move |p| {
            let mut s = lock(&job.state);
            s.buf.extend(p.text.as_bytes());
            s.buf.push_back(b'\n');
            if s.buf.len() > BUFFER_BYTES {
                let excess = s.buf.len() - BUFFER_BYTES;
                s.buf.drain(..excess);
                s.start += excess as u64;
            }
            drop(s);
            job.changed.notify_waiters();
        })
    }

    /// The token that stops it.
    pub fn cancel(&self) -> CancellationToken {
        self.cancel.clone()
    }

    pub fn is_running(&self) -> bool {
        lock(&self.state).ended.is_none()
    }

    /// The command ended, as its run says.
    pub fn finish(&self, result: &Result<serde_json::Value, ToolError>) {
        let mut s = lock(&self.state);
        let ended = match result {
            Ok(v) => Ended {
                exit_code: v
                    .get("exit_code")
                    .and_then(serde_json::Value::as_i64)
                    .and_then(|c| i32::try_from(c).ok()),
                note: v
                    .get("sandbox")
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_string),
            },
            Err(_) if s.stopped => Ended {
                exit_code: None,
                note: Some("stopped; every process it started was killed".into()),
            },
            Err(e) => Ended {
                exit_code: None,
                note: Some(e.model_message()),
            },
        };
        s.ended = Some(ended);
        drop(s);
        self.changed.notify_waiters();
    }

    /// What it printed since the last read (its newest `READ_BYTES`), and
    /// whether it ended.
    pub fn read(&self) -> Read {
        let mut s = lock(&self.state);
        let end = s.end();
        let from = s
            .read
            .max(s.start)
            .max(end.saturating_sub(READ_BYTES as u64));
        let skipped = from - s.read.min(from);
        let at = usize::try_from(from - s.start).unwrap_or(0);
        let bytes: Vec<u8> = s.buf.iter().skip(at).copied().collect();
        s.read = end;
        let output = String::from_utf8_lossy(whole_chars(&bytes)).into_owned();
        Read {
            output,
            skipped,
            ended: s.ended.clone(),
        }
    }

    /// Waits until it prints or ends, at most `most`.
    pub async fn wait(&self, most: Duration) {
        let changed = self.changed.notified();
        {
            let s = lock(&self.state);
            if s.ended.is_some() || s.end() > s.read {
                return;
            }
        }
        let _ = tokio::time::timeout(most, changed).await;
    }

    /// Stops it and waits (a few seconds at most) for it to end.
    pub async fn stop(&self) {
        lock(&self.state).stopped = true;
        self.cancel.cancel();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while self.is_running() && tokio::time::Instant::now() < deadline {
            let changed = self.changed.notified();
            if !self.is_running() {
                break;
            }
            let _ = tokio::time::timeout_at(deadline, changed).await;
        }
    }

    /// How `/ps` shows it.
    pub fn info(&self) -> JobInfo {
        let s = lock(&self.state);
        // Only the end of the buffer: enough for the last lines shown.
        let skip = s.buf.len().saturating_sub(TAIL_BYTES);
        let bytes: Vec<u8> = s.buf.iter().skip(skip).copied().collect();
        let text = String::from_utf8_lossy(whole_chars(&bytes)).into_owned();
        let mut lines: Vec<&str> = text.lines().collect();
        if skip > 0 && lines.len() > 1 {
            // The first line of the window is cut.
            lines.remove(0);
        }
        let tail = lines[lines.len().saturating_sub(TAIL_LINES)..]
            .iter()
            .map(|l| crate::protocol::text::shorten_chars(l, 300))
            .collect();
        JobInfo {
            handle: self.handle.clone(),
            command: self.command.clone(),
            started_ms: self.started_ms,
            running: s.ended.is_none(),
            exit_code: s.ended.as_ref().and_then(|e| e.exit_code),
            tail,
            call_id: self.call_id.clone(),
        }
    }
}

/// The bytes without a character cut at either end.
fn whole_chars(b: &[u8]) -> &[u8] {
    let skip = b.iter().take(3).take_while(|&&c| c & 0xC0 == 0x80).count();
    let b = &b[skip..];
    match std::str::from_utf8(b) {
        Err(e) if e.error_len().is_none() => &b[..e.valid_up_to()],
        _ => b,
    }
}

type OnChange = Box<dyn Fn(Vec<JobInfo>) + Send + Sync>;

/// The conversation's background commands.
pub struct Jobs {
    jobs: Mutex<Vec<Arc<Job>>>,
    next: AtomicU64,
    max: usize,
    on_change: Mutex<Option<OnChange>>,
}

impl std::fmt::Debug for Jobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jobs").field("max", &self.max).finish()
    }
}

impl Jobs {
    pub fn new(max: usize) -> Self {
        Self {
            jobs: Mutex::new(Vec::new()),
            next: AtomicU64::new(1),
            max: max.max(1),
            on_change: Mutex::new(None),
        }
    }

    /// Told the list whenever a command starts or ends.
    pub fn on_change(&self, f: impl Fn(Vec<JobInfo>) + Send + Sync + 'static) {
        *lock(&self.on_change) = Some(Box::new(f));
    }

    /// Tells whoever listens how the list stands.
    pub fn changed(&self) {
        if let Some(f) = lock(&self.on_change).as_ref() {
            f(self.list());
        }
    }

    /// A new job for `command`, if fewer than the most run. It is stopped
    /// with `owner` (the call that started it, under its turn or
    /// subagent): a stop stops what the stopped agent left running.
    pub fn reserve(
        &self,
        command: &str,
        owner: &CancellationToken,
        call_id: Option<&str>,
    ) -> Result<Arc<Job>, ToolError> {
        let mut jobs = lock(&self.jobs);
        let running: Vec<&Arc<Job>> = jobs.iter().filter(|j| j.is_running()).collect();
        if running.len() >= self.max {
            let names: Vec<String> = running
                .iter()
                .map(|j| {
                    format!(
                        "{} ({})",
                        j.handle,
                        crate::protocol::text::shorten_chars(&j.command, 60)
                    )
                })
                .collect();
            return Err(ToolError::ExecutionFailed(format!(
                "{} commands already run in the background ({}): stop one with shell_kill first",
                running.len(),
                names.join(", ")
            )));
        }
        // Ended ones beyond a few are forgotten.
        let ended = jobs.iter().filter(|j| !j.is_running()).count();
        if ended >= ENDED_KEPT
            && let Some(i) = jobs.iter().position(|j| !j.is_running())
        {
            jobs.remove(i);
        }
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let job = Arc::new(Job {
            handle: format!("bg{n}"),
            command: command.to_string(),
            call_id: call_id.map(str::to_string),
            started_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            cancel: owner.child_token(),
            state: Mutex::new(State::default()),
            changed: Notify::new(),
        });
        jobs.push(Arc::clone(&job));
        Ok(job)
    }

    /// The job named `handle`; an unknown name is the model's to fix.
    pub fn get(&self, handle: &str) -> Result<Arc<Job>, ToolError> {
        let jobs = lock(&self.jobs);
        let handle = handle.trim();
        if let Some(j) = jobs.iter().find(|j| j.handle == handle) {
            return Ok(Arc::clone(j));
        }
        let known: Vec<&str> = jobs.iter().map(|j| j.handle.as_str()).collect();
        Err(ToolError::InvalidArgs(if known.is_empty() {
            format!("no background command {handle:?}: none was started")
        } else {
            format!(
                "no background command {handle:?}; there are: {}",
                known.join(", ")
            )
        }))
    }

    /// Whether any runs now.
    pub fn any_running(&self) -> bool {
        lock(&self.jobs).iter().any(|j| j.is_running())
    }

    pub fn list(&self) -> Vec<JobInfo> {
        lock(&self.jobs).iter().map(|j| j.info()).collect()
    }

    /// Stops every one that runs (the conversation was cleared or ends),
    /// and forgets them all: those there now, whenever the stopping is
    /// awaited.
    pub fn stop_all(self: &Arc<Self>) -> impl std::future::Future<Output = ()> + Send + 'static {
        let jobs: Vec<Arc<Job>> = std::mem::take(&mut *lock(&self.jobs));
        let me = Arc::clone(self);
        async move {
            if jobs.is_empty() {
                return;
            }
            let running = jobs.iter().filter(|j| j.is_running()).map(|j| j.stop());
            futures_util::future::join_all(running).await;
            me.changed();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_give_what_is_new_and_the_buffer_stays_bounded() {
        let jobs = Jobs::new(2);
        let job = jobs
            .reserve("npm run dev", &CancellationToken::new(), None)
            .unwrap();
        assert_eq!(job.handle, "bg1");
        let sink = job.sink();
        sink.emit("stdout", "listening on :3000");
        let r = job.read();
        assert_eq!(r.output, "listening on :3000\n");
        assert_eq!(r.skipped, 0);
        assert_eq!(job.read().output, "", "nothing new");
        // Far more than the buffer holds: the oldest is dropped, counted.
        let line = "x".repeat(1023);
        for _ in 0..2048 {
            sink.emit("stdout", line.clone());
        }
        let r = job.read();
        assert!(r.output.len() <= READ_BYTES, "{}", r.output.len());
        assert_eq!(r.skipped, 2048 * 1024 - r.output.len() as u64);
        assert!(lock(&job.state).buf.len() <= BUFFER_BYTES);
        // /ps reads only the buffer's end, whole lines of it.
        let tail = job.info().tail;
        assert_eq!(tail.len(), TAIL_LINES);
        assert!(tail.iter().all(|l| l.starts_with("xxx")), "{tail:?}");
        assert!(r.ended.is_none());
        job.finish(&Ok(serde_json::json!({"exit_code": 3})));
        assert_eq!(job.read().ended.unwrap().exit_code, Some(3));
    }

    #[tokio::test]
    async fn at_most_max_run_and_names_are_the_models_to_fix() {
        let jobs = Jobs::new(1);
        let first = jobs
            .reserve("sleep 100", &CancellationToken::new(), None)
            .unwrap();
        let err = jobs
            .reserve("sleep 200", &CancellationToken::new(), None)
            .unwrap_err();
        assert!(err.to_string().contains("bg1 (sleep 100)"), "{err}");
        first.finish(&Err(ToolError::Cancelled("x".into())));
        assert_eq!(
            jobs.reserve("sleep 300", &CancellationToken::new(), None)
                .unwrap()
                .handle,
            "bg2"
        );
        // A job ends with the agent that started it.
        let owner = CancellationToken::new();
        let owned = Jobs::new(2).reserve("sleep 400", &owner, None).unwrap();
        assert!(!owned.cancel().is_cancelled());
        owner.cancel();
        assert!(owned.cancel().is_cancelled(), "stopped with its owner");
        let err = jobs.get("bg9").unwrap_err();
        assert!(err.to_string().contains("bg1, bg2"), "{err}");
    }
}
