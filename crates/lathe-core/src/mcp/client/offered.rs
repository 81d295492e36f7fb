//! What a running server offers beside tools: its prompts and resources
//! (listed again when it says they changed), and reading them.

use std::time::Duration;

use serde_json::Value;

use super::{Server, plain};

/// How long notifications that its lists changed are gathered before they
/// are read again (a flood is read once).
const GATHER: Duration = Duration::from_millis(200);

impl Server {
    /// The server said its prompts or resources changed: they are read
    /// again, once for all that came together, never twice at once.
    pub(super) fn offers_changed(self: std::sync::Arc<Self>) {
        use std::sync::atomic::Ordering::SeqCst;
        self.offers_dirty.store(true, SeqCst);
        if self.offers_reading.swap(true, SeqCst) {
            return;
        }
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(GATHER).await;
                self.offers_dirty.store(false, SeqCst);
                self.refresh_offers().await;
                self.offers_reading.store(false, SeqCst);
                // News that came while reading is read once more.
                if !self.offers_dirty.load(SeqCst) || self.offers_reading.swap(true, SeqCst) {
                    break;
                }
            }
        });
    }

    /// Its prompts and resources now.
    pub fn offers(&self) -> crate::mcp::offers::Offers {
        self.offers
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Reads its prompts and resources again (it said they changed), and
    /// says so in its status.
    pub(super) async fn refresh_offers(&self) {
        let Ok(session) = self.session().await else {
            return;
        };
        let offers = crate::mcp::offers::list(&session).await;
        *self
            .offers
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = offers;
        let (state, message) = {
            let s = self.status();
            (s.state, s.message)
        };
        self.set_status(state, message);
    }

    /// A prompt's messages, as the server renders them with `arguments`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<Value, String> {
        let session = self.session().await.map_err(|e| e.to_string())?;
        let params = rmcp::model::GetPromptRequestParams::new(name).with_arguments(arguments);
        let limit = Duration::from_secs(self.config.timeout_secs);
        match tokio::time::timeout(limit, session.get_prompt(params)).await {
            Ok(Ok(r)) => serde_json::to_value(r).map_err(|e| e.to_string()),
            Ok(Err(e)) => Err(plain(&e)),
            Err(_) => Err(format!("no answer within {} s", limit.as_secs())),
        }
    }

    /// A resource's contents.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, String> {
        let session = self.session().await.map_err(|e| e.to_string())?;
        let params = rmcp::model::ReadResourceRequestParams::new(uri);
        let limit = Duration::from_secs(self.config.timeout_secs);
        match tokio::time::timeout(limit, session.read_resource(params)).await {
            Ok(Ok(r)) => serde_json::to_value(r).map_err(|e| e.to_string()),
            Ok(Err(e)) => Err(plain(&e)),
            Err(_) => Err(format!("no answer within {} s", limit.as_secs())),
        }
    }
}
