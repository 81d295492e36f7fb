//! The editor's files (`fs/read_text_file`, `fs/write_text_file`), when
//! it offers them: the engine's file tools read the buffers the person
//! sees, unsaved changes included, and write through the editor, so it
//! shows what changed. Commands still run in Lathe's sandbox on disk.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ReadTextFileRequest, WriteTextFileRequest,
};

use crate::policy::{Editor, EditorFiles};

/// The longest one read or write through the editor may take.
const WAIT: Duration = Duration::from_secs(60);

pub struct Fs {
    cx: ConnectionTo<Client>,
    /// The session's id, named once the session has started (no tool runs
    /// before).
    session: Arc<OnceLock<String>>,
    reads: bool,
    writes: bool,
    /// The workspace as Lathe resolves paths (canonical), and as the
    /// editor named it (`cwd`, perhaps through a link): the editor is
    /// asked for its own paths, so it finds its own buffers.
    root: PathBuf,
    cwd: PathBuf,
}

impl Fs {
    /// The editor as the engine sees it, and where to name the session.
    pub fn editor(
        cx: ConnectionTo<Client>,
        caps: &ClientCapabilities,
        cwd: &Path,
    ) -> (Editor, Arc<OnceLock<String>>) {
        let session = Arc::new(OnceLock::new());
        let fs = Self {
            cx,
            session: session.clone(),
            reads: caps.fs.read_text_file,
            writes: caps.fs.write_text_file,
            root: cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf()),
            cwd: cwd.to_path_buf(),
        };
        // Both or neither: a change computed from a buffer the editor
        // cannot write would be refused as stale again and again.
        let editor = if fs.reads && fs.writes {
            Editor::new(Arc::new(fs))
        } else {
            Editor::default()
        };
        (editor, session)
    }

    /// `path` as the editor names it.
    fn theirs(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.root) {
            Ok(rest) => self.cwd.join(rest),
            Err(_) => path.to_path_buf(),
        }
    }

    fn session(&self) -> Result<String, String> {
        self.session
            .get()
            .cloned()
            .ok_or_else(|| "the session has not started".to_string())
    }
}

#[async_trait::async_trait]
impl EditorFiles for Fs {
    fn reads(&self) -> bool {
        self.reads
    }

    fn writes(&self) -> bool {
        self.writes
    }

    async fn read(&self, path: &Path) -> Result<String, String> {
        let req = ReadTextFileRequest::new(self.session()?, self.theirs(path));
        match tokio::time::timeout(WAIT, self.cx.send_request(req).block_task()).await {
            Ok(Ok(r)) => Ok(r.content),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer in {} s", WAIT.as_secs())),
        }
    }

    async fn write(&self, path: &Path, text: &str) -> Result<(), String> {
        let req = WriteTextFileRequest::new(self.session()?, self.theirs(path), text.to_string());
        match tokio::time::timeout(WAIT, self.cx.send_request(req).block_task()).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer in {} s", WAIT.as_secs())),
        }
    }
}
