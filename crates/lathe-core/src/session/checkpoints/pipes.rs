//! What git prints, read from threads while the caller keeps time (git
//! blocks for good on a FIFO where a `.gitignore` should be).

pub(super) fn drain<R: std::io::Read + Send + 'static>(
    pipe: Option<R>,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || read_all(pipe))
}

/// [`drain`], and says on `closed` when the pipe is closed.
pub(super) fn drain_then<R: std::io::Read + Send + 'static>(
    pipe: Option<R>,
    closed: std::sync::mpsc::Sender<()>,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let buf = read_all(pipe);
        let _ = closed.send(());
        buf
    })
}

fn read_all<R: std::io::Read>(pipe: Option<R>) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(mut p) = pipe {
        let _ = p.read_to_end(&mut buf);
    }
    buf
}
