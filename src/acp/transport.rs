//! Standard input and output as the connection's lines. A line that is
//! not UTF-8 is read with its bad bytes replaced (so it gets the parse
//! error any malformed line gets, and the connection goes on, where the
//! crate's own stdio would end it); blank lines are skipped. Each message
//! written is one line; lines that come together are flushed together.

use std::io::{BufRead, Write};

use agent_client_protocol::Lines;

/// The lines, and the thread that writes them (it ends, everything
/// written, once the connection drops its end).
pub fn stdio() -> (
    Lines<
        impl futures_util::Sink<String, Error = std::io::Error> + Send + 'static,
        impl futures_util::Stream<Item = std::io::Result<String>> + Send + 'static,
    >,
    std::thread::JoinHandle<()>,
) {
    let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<String>>(64);
    // A thread of its own: reading stdin blocks, and must not hold a
    // worker of the runtime.
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match input.read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf);
                    let line = line.trim_end_matches(['\n', '\r']);
                    if line.trim().is_empty() {
                        continue;
                    }
                    if tx.blocking_send(Ok(line.to_string())).is_err() {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.blocking_send(Err(e));
                    break;
                }
            }
        }
    });
    let incoming = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|line| (line, rx))
    });
    // Written from a thread of its own too: what comes while one line is
    // written is written after it in the same go, flushed once.
    let (out_tx, mut out_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let writer = std::thread::spawn(move || {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
        while let Some(line) = out_rx.blocking_recv() {
            let mut next = Some(line);
            while let Some(line) = next {
                if out
                    .write_all(line.as_bytes())
                    .and_then(|()| out.write_all(b"\n"))
                    .is_err()
                {
                    return;
                }
                next = out_rx.try_recv().ok();
            }
            if out.flush().is_err() {
                return;
            }
        }
    });
    let outgoing = futures_util::sink::unfold(out_tx, |tx, line: String| async move {
        tx.send(line)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        Ok::<_, std::io::Error>(tx)
    });
    (Lines::new(Box::pin(outgoing), Box::pin(incoming)), writer)
}
