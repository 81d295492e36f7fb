//! The one loop: a biased `tokio::select!` over SIGTERM, terminal input
//! (crossterm's `EventStream`), agent events, animation ticks and the next
//! frame. Redraws are requested (the app marks itself dirty) and coalesced:
//! at most one frame per 16 ms, none while nothing changed, so an idle app
//! sleeps. Each frame is drawn inside a synchronized update, so streaming
//! never flickers.

use std::io;
use std::time::Duration;

use crossterm::event::EventStream;
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use futures_util::StreamExt;
use tokio::time::Instant;

use super::app::App;
use super::terminal::Tui;
use crate::agent::AgentHandle;
use crate::protocol::Op;

/// The shortest time between two frames (~60 fps).
pub const FRAME: Duration = Duration::from_millis(16);
/// Most agent events handled before the next frame gets a chance.
const EVENT_BATCH: usize = 512;

/// Runs until the person quits, SIGTERM arrives, or the agent stops.
pub async fn run(app: &mut App, agent: &mut AgentHandle, terminal: &mut Tui) -> io::Result<()> {
    let mut input = EventStream::new();
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut last_frame = Instant::now() - FRAME;
    loop {
        let now = Instant::now();
        let frame_at = app.is_dirty().then(|| (last_frame + FRAME).max(now));
        let tick_at = app.next_tick().map(Instant::from_std);
        tokio::select! {
            biased;
            _ = sigterm.recv() => break,
            ev = input.next() => match ev {
                Some(Ok(ev)) => app.on_terminal_event(ev, std::time::Instant::now()),
                Some(Err(e)) => return Err(e),
                None => break,
            },
            ev = agent.events.recv() => {
                let Some(ev) = ev else { break };
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
                draw(app, terminal)?;
                last_frame = Instant::now();
            }
            () = sleep_until(tick_at) => app.tick(std::time::Instant::now()),
        }
        for op in app.take_ops() {
            if agent.ops.send(op).await.is_err() {
                return Ok(());
            }
        }
        if app.should_quit() {
            break;
        }
    }
    Ok(())
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

/// Draws one frame inside a synchronized update.
pub fn draw(app: &mut App, terminal: &mut Tui) -> io::Result<()> {
    crossterm::execute!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    let result = terminal.draw(|f| app.draw(f)).map(|_| ());
    crossterm::execute!(terminal.backend_mut(), EndSynchronizedUpdate)?;
    result
}

/// Asks the agent to stop and waits a moment for it (tools are killed).
pub async fn shutdown(agent: AgentHandle) {
    let _ = agent.ops.send(Op::Shutdown).await;
    drop(agent.ops);
    let _ = tokio::time::timeout(Duration::from_secs(3), agent.task).await;
}
