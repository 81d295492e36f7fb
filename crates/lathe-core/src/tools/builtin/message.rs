//! `message`: tell the person something when they are not watching.
//!
//! Channel `terminal` raises a desktop notification through the terminal
//! (the front end turns the `notify` progress line into OSC 9 and OSC 777
//! and a bell, and a note in the transcript; headless, a line on stderr).
//! Any other channel is a webhook from the user config
//! (`[tools.message.channels.NAME] url`), posted `{"text": …, "content": …}`
//! as Slack and Discord incoming webhooks take it. The result is the
//! seed's `{status, channel, chat_id, content_length}`.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::policy::Workspace;
use crate::protocol::Effect;
use crate::protocol::operation::Operation;
use crate::secret::Secret;
use crate::tools::args::schema;
use crate::tools::spec::{ToolContext, ToolError};
use crate::tools::typed::TypedTool;

pub use crate::protocol::NOTIFY_STREAM;
/// The longest message.
const MAX_CONTENT: usize = 4000;

pub struct Message {
    channels: BTreeMap<String, Secret>,
}

impl Message {
    pub fn new(channels: &BTreeMap<String, Secret>) -> Self {
        Self {
            channels: channels.clone(),
        }
    }

    fn webhook(&self, channel: &str) -> Result<Option<&Secret>, ToolError> {
        if channel == "terminal" {
            return Ok(None);
        }
        self.channels.get(channel).map(Some).ok_or_else(|| {
            let mut known: Vec<&str> = vec!["terminal"];
            known.extend(self.channels.keys().map(String::as_str));
            ToolError::InvalidArgs(format!(
                "unknown channel `{channel}`; the configured ones are: {}",
                known.join(", ")
            ))
        })
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Where to send it
    channel: String,
    /// A chat or thread id, if the channel has several (informational)
    chat_id: Option<String>,
    /// The message
    #[schemars(length(min = 1, max = MAX_CONTENT))]
    content: String,
}

#[async_trait]
impl TypedTool for Message {
    type Args = Args;

    fn name(&self) -> &'static str {
        "message"
    }

    fn description(&self) -> &str {
        "Send the person a short message when they may not be watching (a long task done, a \
         question that blocks you). Channel `terminal` raises a desktop notification; other \
         channels are the webhooks the person configured."
    }

    fn parameters(&self) -> Value {
        let mut channels: Vec<&str> = vec!["terminal"];
        channels.extend(self.channels.keys().map(String::as_str));
        // The channels are the person's: named in the schema as set up.
        let mut schema = schema::<Args>();
        schema["properties"]["channel"]["enum"] = json!(channels);
        schema
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Other
    }

    fn effect(&self) -> Effect {
        // A notification on the person's own screen changes nothing; a
        // webhook is the network, said so by its operation below.
        Effect::Read
    }

    /// It tells someone something: not for plan mode or subagents.
    fn only_looks(&self) -> bool {
        false
    }

    fn operations(
        &self,
        args: &Self::Args,
        _workspace: &Workspace,
    ) -> Result<Vec<Operation>, ToolError> {
        let Args { channel, .. } = args;
        Ok(match self.webhook(channel)? {
            None => Vec::new(),
            Some(url) => {
                let host = reqwest::Url::parse(url.expose())
                    .ok()
                    .and_then(|u| u.host_str().map(str::to_string))
                    .unwrap_or_default();
                vec![Operation::Net { host }]
            }
        })
    }

    async fn execute(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let Args {
            channel,
            content,
            chat_id,
        } = args;
        let content = content.trim().to_string();
        // A message leaves the machine: no secret goes with it.
        let content = ctx.redactor.redact_str(&content).unwrap_or(content);
        if content.is_empty() {
            return Err(ToolError::InvalidArgs("content is empty".into()));
        }
        let chat_id = chat_id.unwrap_or_default();
        match self.webhook(&channel)? {
            None => ctx.progress.emit(NOTIFY_STREAM, content.clone()),
            Some(url) => post(url, &content, &ctx.cancel).await?,
        }
        Ok(json!({
            "status": "sent",
            "channel": channel,
            "chat_id": chat_id,
            "content_length": content.chars().count(),
        }))
    }
}

async fn post(
    url: &Secret,
    content: &str,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<(), ToolError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(15))
        .user_agent(concat!("lathe/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ToolError::ExecutionFailed(format!("no HTTP client: {e}")))?;
    let body = json!({"text": content, "content": content});
    let sent = tokio::select! {
        r = client
            .post(url.expose())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string())
            .send() => r,
        () = cancel.cancelled() => return Err(ToolError::Cancelled("interrupted by the user".into())),
    };
    // The URL is a secret: errors name the channel, not the address.
    let response = sent.map_err(|e| {
        let why = if e.is_timeout() {
            "timed out"
        } else if e.is_connect() {
            "could not connect"
        } else {
            "failed"
        };
        ToolError::ExecutionFailed(format!("posting to the webhook {why}"))
    })?;
    let status = response.status();
    if !status.is_success() {
        let text = response.text().await.unwrap_or_default();
        let text: String = text.chars().take(200).collect();
        return Err(ToolError::ExecutionFailed(format!(
            "the webhook answered {status}: {text}"
        )));
    }
    Ok(())
}
