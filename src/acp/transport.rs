//! Standard input and output as the connection's lines. A line that is
//! not UTF-8 is read with its bad bytes replaced (so it gets the parse
//! error any malformed line gets, and the connection goes on, where the
//! crate's own stdio would end it); blank lines are skipped. Each message
//! written is one line, flushed.

use std::io::BufRead;

use agent_client_protocol::Lines;
use tokio::io::AsyncWriteExt;

pub fn stdio() -> Lines<
    impl futures_util::Sink<String, Error = std::io::Error> + Send + 'static,
    impl futures_util::Stream<Item = std::io::Result<String>> + Send + 'static,
> {
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
    let outgoing =
        futures_util::sink::unfold(tokio::io::stdout(), |mut out, line: String| async move {
            out.write_all(line.as_bytes()).await?;
            out.write_all(b"\n").await?;
            out.flush().await?;
            Ok::<_, std::io::Error>(out)
        });
    Lines::new(Box::pin(outgoing), Box::pin(incoming))
}
