//! A small MCP server on rmcp that Lathe's tests start (over stdio, or
//! streamable HTTP with `--http ADDR`): tools that answer, fail, report
//! progress, hang, crash the server, or change the tool list. `refuse`
//! as the first argument exits before the handshake. `LATHE_TEST_TOOLS=N`
//! adds N more (`record-001` …), each with a full schema, for tests of
//! many tools.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, ListPromptsResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, Prompt, PromptArgument, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

#[derive(Clone, Default)]
struct TestServer {
    grown: Arc<AtomicBool>,
    /// `more-prompts` was called: a second prompt is offered.
    prompted: Arc<AtomicBool>,
}

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    let Value::Object(map) = schema else {
        panic!("schema must be an object")
    };
    Tool::new(name.to_string(), description.to_string(), Arc::new(map))
}

fn text(t: impl Into<String>) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(t)]).into()
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_resources()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let string = |d: &str| json!({"type": "string", "description": d});
        let mut tools = vec![
            tool(
                "echo",
                "Echo a message back",
                json!({"type": "object", "properties": {"message": string("what to echo")}, "required": ["message"]}),
            ),
            tool(
                "get-sum",
                "Add two numbers",
                json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
            ),
            tool(
                "slow",
                "Report progress, then finish",
                json!({"type": "object", "properties": {"steps": {"type": "integer"}}}),
            ),
            tool("fail", "Always an error result", json!({"type": "object"})),
            tool("hang", "Never answers", json!({"type": "object"})),
            tool(
                "crash",
                "The server dies mid-call",
                json!({"type": "object"}),
            ),
            tool("grow", "Adds a tool and says so", json!({"type": "object"})),
            tool(
                "more-prompts",
                "Adds a prompt and says so",
                json!({"type": "object"}),
            ),
            tool("image", "Returns an image", json!({"type": "object"})),
            tool(
                "leak",
                "Returns what its environment holds",
                json!({"type": "object"}),
            ),
            tool(
                "write",
                "Writes text to a file, wherever it is",
                json!({"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}}, "required": ["path"]}),
            ),
        ];
        if self.grown.load(Ordering::SeqCst) {
            tools.push(tool("late", "Added later", json!({"type": "object"})));
        }
        let many: usize = std::env::var("LATHE_TEST_TOOLS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        for i in 1..=many {
            tools.push(tool(
                &format!("record-{i:03}"),
                &format!("Look up a record of kind {i} in the inventory, by its id.\nIt answers with the record's fields."),
                json!({"type": "object", "properties": {
                    "id": string("the record's id"),
                    "fields": {"type": "array", "items": {"type": "string"}, "description": "which fields to return"},
                    "as_of": string("a date (YYYY-MM-DD): the record as it was then"),
                }, "required": ["id"]}),
            ));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    /// Twelve resources of 200 KB each (`mem://r01` …): more than a
    /// message takes.
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            (1..=12)
                .map(|i| Resource::new(format!("mem://r{i:02}"), format!("r{i:02}")))
                .collect(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let text = format!("{}\n", request.uri).repeat(200 * 1024 / 10);
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let mut prompts = vec![Prompt::new(
            "review",
            Some("Review a file"),
            Some(vec![{
                let mut a = PromptArgument::new("path");
                a.required = Some(true);
                a
            }]),
        )];
        if self.prompted.load(Ordering::SeqCst) {
            prompts.push(Prompt::new("later", Some("Added later"), None));
        }
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let arg = |k: &str| {
            request
                .arguments
                .as_ref()
                .and_then(|a| a.get(k))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let text = match request.name.as_str() {
            "review" => format!("Review {} for bugs, and say what you find.", arg("path")),
            "later" => "The prompt added later.".to_string(),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no prompt {other}"),
                    None,
                ));
            }
        };
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).into())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.clone().unwrap_or_default();
        match request.name.as_ref() {
            "echo" => Ok(text(format!(
                "Echo: {}",
                args.get("message").and_then(Value::as_str).unwrap_or("")
            ))),
            "get-sum" => {
                let n = |k: &str| args.get(k).and_then(Value::as_f64).unwrap_or(0.0);
                let sum = n("a") + n("b");
                let mut r = CallToolResult::success(vec![ContentBlock::text(format!(
                    "The sum of {} and {} is {sum}.",
                    n("a"),
                    n("b")
                ))]);
                r.structured_content = Some(json!({"sum": sum}));
                Ok(r.into())
            }
            "slow" => {
                let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(3);
                if let Some(token) = context.meta.get_progress_token() {
                    for i in 1..=steps {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        let _ = context
                            .peer
                            .notify_progress(
                                ProgressNotificationParam::new(token.clone(), i as f64)
                                    .with_total(steps as f64)
                                    .with_message(format!("step {i}")),
                            )
                            .await;
                    }
                }
                Ok(text(format!("done after {steps} steps")))
            }
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text(
                "it went wrong on purpose",
            )])
            .into()),
            "hang" => {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(3600)) => {}
                    () = context.ct.cancelled() => {
                        eprintln!("hang: cancelled by the client");
                    }
                }
                Ok(text("never"))
            }
            "crash" => {
                eprintln!("crash: dying on purpose");
                std::process::exit(3);
            }
            "grow" => {
                self.grown.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                Ok(text("grown"))
            }
            "late" => Ok(text("the late tool answers")),
            "more-prompts" => {
                self.prompted.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_prompt_list_changed().await;
                Ok(text("a prompt was added"))
            }
            name if name.starts_with("record-") => Ok(text(format!(
                "{name}: id {}",
                args.get("id").and_then(Value::as_str).unwrap_or("?")
            ))),
            "image" => Ok(CallToolResult::success(vec![ContentBlock::image(
                "iVBORw0KGgoAAAANSUhEUg==",
                "image/png",
            )])
            .into()),
            "leak" => Ok(text(
                std::env::vars()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )),
            "write" => {
                let path = args.get("path").and_then(Value::as_str).unwrap_or("");
                let body = args.get("text").and_then(Value::as_str).unwrap_or("x");
                Ok(match std::fs::write(path, body) {
                    Ok(()) => text(format!("wrote {path}")),
                    Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                        "cannot write {path}: {e}"
                    ))])
                    .into(),
                })
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("refuse") => {
            eprintln!("boom: this server refuses to start");
            std::process::exit(1);
        }
        Some("--http") => {
            use rmcp::transport::StreamableHttpService;
            use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
            let addr = args.get(2).cloned().unwrap_or_else(|| "127.0.0.1:0".into());
            let service = StreamableHttpService::new(
                || Ok(TestServer::default()),
                Arc::new(LocalSessionManager::default()),
                Default::default(),
            );
            let app = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind(&addr).await.unwrap();
            println!("{}", listener.local_addr().unwrap());
            axum::serve(listener, app).await.unwrap();
        }
        _ => {
            let server = TestServer::default()
                .serve(rmcp::transport::stdio())
                .await
                .unwrap();
            let _ = server.waiting().await;
        }
    }
}
