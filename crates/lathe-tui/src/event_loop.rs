//! The one loop: a biased `tokio::select!` over signals, terminal input
//! (crossterm's `EventStream`), agent events, animation ticks and the next
//! frame. Redraws are requested (the app marks itself dirty) and coalesced:
//! at most one frame per 16 ms, none while nothing changed, so an idle app
//! sleeps. Each frame is drawn inside a synchronized update, so streaming
//! never flickers, and brought down to the colours the terminal shows.
//!
//! SIGTERM, SIGHUP (the window closed), SIGINT and SIGQUIT end the loop:
//! the caller shuts the agent down (its commands are killed) and gives the
//! terminal back. Ctrl-Z and SIGTSTP suspend: the terminal is given back,
//! the process stops, and on `fg` the UI takes it again and redraws.

use std::io;
use std::time::Duration;

use crossterm::event::EventStream;
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use futures_util::StreamExt;
use tokio::time::Instant;

use super::app::{App, Request};
use super::color_depth::ColorDepth;
use super::terminal::Tui;
use crate::agent::AgentHandle;
use crate::protocol::Op;

/// The shortest time between two frames (~60 fps).
pub const FRAME: Duration = Duration::from_millis(16);
/// Most agent events handled before the next frame gets a chance.
const EVENT_BATCH: usize = 512;

/// Why the loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// The person quit, or the agent stopped.
    Quit,
    /// A signal (its number).
    Signal(i32),
    /// The person chose another session (`/resume`).
    Switch(String),
}

/// Runs until the person quits or switches sessions, the agent stops, or
/// a signal ends it.
pub async fn run(
    app: &mut App,
    agent: &mut AgentHandle,
    terminal: &mut Tui,
    depth: ColorDepth,
) -> io::Result<Exit> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut input = EventStream::new();
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sighup = signal(SignalKind::hangup())?;
    let mut sigint = signal(SignalKind::interrupt())?;
    let mut sigquit = signal(SignalKind::quit())?;
    let mut sigtstp = signal(SignalKind::from_raw(libc_sigtstp()))?;
    let mut last_frame = Instant::now() - FRAME;
    loop {
        let now = Instant::now();
        let frame_at = app.is_dirty().then(|| (last_frame + FRAME).max(now));
        let tick_at = app.next_tick().map(Instant::from_std);
        tokio::select! {
            biased;
            _ = sigterm.recv() => return Ok(Exit::Signal(15)),
            _ = sighup.recv() => return Ok(Exit::Signal(1)),
            _ = sigint.recv() => return Ok(Exit::Signal(2)),
            _ = sigquit.recv() => return Ok(Exit::Signal(3)),
            _ = sigtstp.recv() => {
                suspend(terminal)?;
                app.redraw();
            }
            ev = input.next() => match ev {
                Some(Ok(ev)) => app.on_terminal_event(ev, std::time::Instant::now()),
                Some(Err(e)) => return Err(e),
                None => return Ok(Exit::Quit),
            },
            Some(ev) = app.next_event() => app.on_app_event(ev),
            ev = agent.events.recv() => {
                let Some(ev) = ev else { return Ok(Exit::Quit) };
                let now = std::time::Instant::now();
                app.on_agent_event(ev, now);
                for _ in 0..EVENT_BATCH {
                    match agent.events.try_recv() {
                        Ok(ev) => app.on_agent_event(ev, now),
                        Err(_) => break,
                    }
                }
            }
            () = sleep_until(frame_at) => {
                draw(app, terminal, depth)?;
                last_frame = Instant::now();
            }
            () = sleep_until(tick_at) => app.tick(std::time::Instant::now()),
        }
        for request in app.take_requests() {
            match request {
                Request::Agent(op) => {
                    if agent.ops.send(op).await.is_err() {
                        return Ok(Exit::Quit);
                    }
                }
                Request::Suspend => {
                    suspend(terminal)?;
                    app.redraw();
                }
                Request::ToggleMouse => {
                    let on = super::terminal::toggle_mouse()?;
                    app.mouse_toggled(on);
                }
                Request::Edit(request) => {
                    // The editor has the terminal, and every key: no
                    // reader of ours may be left waiting on it.
                    drop(input);
                    super::terminal::restore();
                    let (text, name) = (request.text.clone(), request.name.clone());
                    let result =
                        tokio::task::spawn_blocking(move || super::editor::edit(&text, &name))
                            .await
                            .map_err(|e| e.to_string())
                            .and_then(|r| r.map_err(|e| e.to_string()));
                    super::terminal::setup()?;
                    // A full repaint without asking the terminal where its
                    // cursor is (`clear` would; an answer lost to the
                    // editor's exit is a failed UI).
                    let size = terminal.size()?;
                    terminal.resize(ratatui::layout::Rect::new(0, 0, size.width, size.height))?;
                    input = EventStream::new();
                    app.on_edited(request.purpose, result, std::time::Instant::now());
                    app.redraw();
                }
                Request::Repaint => {
                    terminal.clear()?;
                    app.redraw();
                }
                Request::Clipboard(text) => copy(terminal, &text)?,
                Request::Notify(text) => notify(terminal, &text)?,
                Request::Quit => return Ok(Exit::Quit),
                Request::Switch(id) => return Ok(Exit::Switch(id)),
            }
        }
    }
}

fn libc_sigtstp() -> i32 {
    nix::sys::signal::Signal::SIGTSTP as i32
}

/// Gives the terminal back, stops until `fg`, then takes it again.
fn suspend(terminal: &mut Tui) -> io::Result<()> {
    super::terminal::restore();
    // SIGSTOP cannot be caught: the shell sees a stopped job.
    nix::sys::signal::raise(nix::sys::signal::Signal::SIGSTOP).map_err(io::Error::from)?;
    super::terminal::setup()?;
    terminal.clear()
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

/// Draws one frame inside a synchronized update.
pub fn draw(app: &mut App, terminal: &mut Tui, depth: ColorDepth) -> io::Result<()> {
    crossterm::execute!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    let result = terminal
        .draw(|f| {
            app.draw(f);
            depth.reduce_buffer(f.buffer_mut());
        })
        .map(|_| ());
    crossterm::execute!(terminal.backend_mut(), EndSynchronizedUpdate)?;
    // Only now is the frame on screen.
    app.drawn(std::time::Instant::now());
    result
}

/// Puts `text` on the clipboard through the terminal (OSC 52: xterm,
/// kitty, WezTerm, iTerm2, foot, tmux with `set-clipboard on`).
fn copy(terminal: &mut Tui, text: &str) -> io::Result<()> {
    use base64::Engine;
    use std::io::Write;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    let out = terminal.backend_mut();
    write!(out, "\x1b]52;c;{encoded}\x07")?;
    out.flush()
}

/// A desktop notification through the terminal: OSC 9 (iTerm2, Windows
/// Terminal, kitty, WezTerm, Ghostty), OSC 777 (foot, urxvt, VTE), and
/// the bell for the rest. The text holds no control character.
fn notify(terminal: &mut Tui, text: &str) -> io::Result<()> {
    use std::io::Write;
    let clean: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(300)
        .collect();
    let out = terminal.backend_mut();
    write!(
        out,
        "\x1b]9;{clean}\x07\x1b]777;notify;Lathe;{clean}\x07\x07"
    )?;
    out.flush()
}

/// Asks the agent to stop and waits a moment for it (tools are killed).
pub async fn shutdown(agent: AgentHandle) {
    let _ = agent.ops.send(Op::Shutdown).await;
    drop(agent.ops);
    let _ = tokio::time::timeout(Duration::from_secs(3), agent.task).await;
}
