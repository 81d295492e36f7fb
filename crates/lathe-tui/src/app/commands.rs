//! The slash commands (`/help`, `/model`, `/diff`, `/undo`, …): what each
//! does to the app and asks of the agent.

use super::*;

impl App {
    /// The person's own `/commands` (see `components::custom`).
    pub fn custom_commands(&mut self, custom: Vec<crate::components::custom::Custom>) {
        self.composer.set_custom(custom);
    }

    /// The skills found (`/skills`, `/NAME`).
    pub fn skills(
        &mut self,
        found: &lathe_core::front::launch::SkillsFound,
        agents: lathe_core::front::launch::AgentsFound,
    ) {
        self.composer.skills = crate::components::skills::Listing::new(found);
        self.composer.skills.set_agents(agents);
    }

    /// `/clear`: a new conversation (what it cost is still counted).
    fn clear_command(&mut self) {
        self.unqueue();
        self.transcript.clear();
        self.turn.turn_marks.clear();
        self.questions.approvals.clear();
        self.questions.withdraw(Kind::Ask);
        self.questions.withdraw(Kind::Plan);
        self.turn.plan = None;
        self.status.usage = Usage::default();
        self.bus.op(Op::Clear);
        self.notice(
            NoticeKind::Info,
            "new conversation: history and approvals cleared",
        );
    }

    pub(super) fn on_command(&mut self, cmd: SlashCommand) {
        // What a command answers lands at the end of the transcript: in
        // view, however far it was scrolled back.
        self.transcript.scroll_to_bottom();
        match cmd {
            SlashCommand::Help => self.notice(NoticeKind::Info, help_table()),
            SlashCommand::Clear => self.clear_command(),
            SlashCommand::Model(m) => self.model_command(m),
            SlashCommand::Plan(what) => self.plan_command(what, self.screen.now),
            SlashCommand::Agents => {
                if let Some(types) = self.composer.skills.agents_report() {
                    self.notice(NoticeKind::Info, types);
                }
                self.open(Overlay::Agents(Default::default()));
                self.bus.op(Op::ListJobs);
            }
            SlashCommand::Ps => {
                let mut view = crate::components::jobs::JobsView::new();
                view.set(self.status.jobs.clone());
                self.open(Overlay::Jobs(view));
                self.bus.op(Op::ListJobs);
            }
            SlashCommand::Approvals(Some(mode)) => {
                self.status.approval = mode;
                self.bus.op(Op::SetApprovalMode { mode });
                self.notice(NoticeKind::Info, format!("approval mode: {mode}"));
            }
            SlashCommand::Approvals(None) => self.notice(
                NoticeKind::Info,
                format!(
                    "approval mode: {} (choose with /approvals read-only|ask|auto-edit|full-auto)",
                    self.status.approval
                ),
            ),
            SlashCommand::Effort(Some(effort)) => {
                self.status.effort = effort;
                let shown = effort.map_or("default", |e| e.as_str());
                self.composer.set_effort(shown);
                self.bus.op(Op::SetEffort { effort });
                self.notice(
                    NoticeKind::Info,
                    format!("effort: {shown} (from the next turn)"),
                );
            }
            SlashCommand::Effort(None) => self.notice(
                NoticeKind::Info,
                format!(
                    "effort: {} (choose with /effort none|minimal|low|medium|high|xhigh, or \
                     default for what the config or the server chooses)",
                    self.status.effort.map_or("default", |e| e.as_str())
                ),
            ),
            SlashCommand::Cost => self.bus.op(Op::ReportCost),
            SlashCommand::Log => self.open_log(),
            SlashCommand::Permissions => {
                self.open(Overlay::Permissions(PermissionsView::new()));
                self.bus.op(Op::ListPermissions);
            }
            SlashCommand::Mcp => {
                let text = mcp_report(&self.status.mcp);
                self.notice(NoticeKind::Info, text);
            }
            SlashCommand::McpRestart(name) => self.restart_mcp(name),
            SlashCommand::McpLogin(name) => self.login_mcp(name),
            SlashCommand::Skills => self.notice(NoticeKind::Info, self.composer.skills.report()),
            // The core knows `/init` (headless too): sent as it is.
            SlashCommand::Init(what) => self.send(match what {
                Some(w) => format!("/init {w}"),
                None => "/init".into(),
            }),
            SlashCommand::Compact => {
                self.bus.op(Op::Compact);
                self.notice(
                    NoticeKind::Info,
                    if self.is_running() {
                        "the conversation is compacted when this turn ends"
                    } else {
                        "compacting: the model summarizes the older turns…"
                    },
                );
            }
            SlashCommand::Trust => match self.session.untrusted.take() {
                Some(prompt) => {
                    self.questions.ask(
                        crate::components::question::TrustQuestion::new(prompt),
                        self.screen.now,
                    );
                }
                None => self.notice(
                    NoticeKind::Info,
                    "nothing of this workspace waits for your trust",
                ),
            },
            SlashCommand::Undo | SlashCommand::Rewind if self.is_running() => {
                self.notice(
                    NoticeKind::Warning,
                    "a turn runs: stop it (Ctrl-C) before going back",
                );
            }
            SlashCommand::Mouse => self.bus.request(Request::ToggleMouse),
            SlashCommand::Copy(n) => self.copy(n),
            SlashCommand::Diff => {
                self.bus.op(Op::SessionDiff);
                self.open(Overlay::Diff(Pager::new(
                    "Changes since the session began",
                    "reading the changes…",
                )));
            }
            // What it will do is shown first, and asked.
            SlashCommand::Undo => self.bus.op(Op::Rewind {
                turn: None,
                files: true,
                conversation: false,
                preview: true,
            }),
            SlashCommand::Rewind => {
                self.bus.op(Op::ListTurns);
                self.open(Overlay::Rewind(RewindPicker::new()));
            }
            SlashCommand::Resume(id) => self.resume(id),
            SlashCommand::Quit => self.quit(),
        }
    }

    /// `/mcp restart [NAME]`: a server that runs, or all of them.
    fn restart_mcp(&mut self, name: Option<String>) {
        let running: Vec<&String> = self
            .status
            .mcp
            .iter()
            .filter(|(_, s)| s.state != McpState::Untrusted)
            .map(|(n, _)| n)
            .collect();
        match name {
            Some(n) if !running.contains(&&n) => {
                let known = if running.is_empty() {
                    "no MCP server runs".to_string()
                } else {
                    format!(
                        "the servers are {}",
                        running
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                self.notice(
                    NoticeKind::Warning,
                    format!("there is no MCP server `{n}`; {known}"),
                );
            }
            _ if running.is_empty() => {
                self.notice(NoticeKind::Warning, "no MCP server runs");
            }
            name => {
                let what = name
                    .as_ref()
                    .map_or_else(|| "every MCP server".to_string(), Clone::clone);
                self.bus.op(Op::RestartMcp { server: name });
                self.notice(NoticeKind::Info, format!("restarting {what}…"));
            }
        }
    }

    /// `/mcp login [NAME]`: the server named, or the one that asks.
    fn login_mcp(&mut self, name: Option<String>) {
        let asking: Vec<&String> = self
            .status
            .mcp
            .iter()
            .filter(|(_, s)| s.state == McpState::NeedsLogin)
            .map(|(n, _)| n)
            .collect();
        let server = match name {
            Some(n) if self.status.mcp.contains_key(&n) => n,
            Some(n) => {
                self.notice(NoticeKind::Warning, format!("there is no MCP server `{n}`"));
                return;
            }
            None if asking.len() == 1 => asking[0].clone(),
            None if asking.is_empty() => {
                self.notice(NoticeKind::Info, "no MCP server asks for a login");
                return;
            }
            None => {
                let names: Vec<&str> = asking.iter().map(|s| s.as_str()).collect();
                self.notice(
                    NoticeKind::Info,
                    format!("say which: /mcp login NAME ({} ask)", names.join(", ")),
                );
                return;
            }
        };
        self.bus.op(Op::McpLogin { server });
    }

    /// `/copy [N]`: the last answer, or its N-th code block, as shown.
    fn copy(&mut self, n: Option<usize>) {
        let Some(answer) = self.transcript.last_answer() else {
            self.notice(NoticeKind::Info, "no answer to copy yet");
            return;
        };
        let text = match n {
            None => Some(answer.to_string()),
            Some(n) => crate::markdown::code_blocks(answer).get(n - 1).cloned(),
        };
        // What is copied is what was shown: no control character
        // (an escape sequence hidden in a block) goes along.
        let text = text.map(|t| {
            t.chars()
                .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
                .collect::<String>()
        });
        match text {
            Some(text) => {
                let what = n.map_or_else(
                    || "the last answer".to_string(),
                    |n| format!("code block {n}"),
                );
                self.flash(
                    &format!("copied {what} ({} bytes)", text.len()),
                    self.screen.now,
                );
                self.bus.request(Request::Clipboard(text));
            }
            None => {
                let count = crate::markdown::code_blocks(answer).len();
                self.notice(
                    NoticeKind::Warning,
                    format!("the last answer has {count} code blocks"),
                );
            }
        }
    }

    /// `/model NAME` switches (once the server said it has it); `/model`
    /// says which one talks.
    fn model_command(&mut self, name: Option<String>) {
        let Some(m) = name else {
            let how = match &self.status.models {
                Models::Known(list) => format!(
                    "change it with /model NAME; the server lists {} (type /model and a \
                     part of the name to choose)",
                    plural(list.len(), "model")
                ),
                _ => "change it with /model NAME".to_string(),
            };
            self.notice(
                NoticeKind::Info,
                format!("model: {} ({how})", self.status.model),
            );
            return;
        };
        match &self.status.models {
            Models::Unknown | Models::Asked => {
                if self.status.models == Models::Unknown {
                    self.status.models = Models::Asked;
                    self.bus.op(Op::ListModels);
                }
                self.notice(
                    NoticeKind::Info,
                    format!("model {m}: asking the server whether it has it…"),
                );
                self.status.pending_model = Some(m);
            }
            _ => self.switch_model(m),
        }
    }

    /// `/resume`: the picker, or the session named.
    fn resume(&mut self, id: Option<String>) {
        if self.is_running() {
            self.notice(
                NoticeKind::Warning,
                "a turn runs: stop it (Ctrl-C) before /resume",
            );
        } else if id.as_deref() == Some(self.session.session_id.as_str()) {
            self.notice(NoticeKind::Info, "this is the session on screen");
        } else if let Some(id) = id {
            self.bus.request(Request::Switch(id));
        } else {
            self.open_picker();
        }
    }
}

/// `/mcp`: each server, its state and its tools.
fn mcp_report(servers: &std::collections::BTreeMap<String, McpStatus>) -> String {
    if servers.is_empty() {
        return "no MCP servers: add one under [mcp_servers.NAME] in your config, or in the \
                workspace's .mcp.json"
            .to_string();
    }
    let mut out = String::from("MCP servers:");
    for s in servers.values() {
        out.push_str(&format!(
            "\n  {} ({}) — {}",
            s.server,
            s.state.as_str(),
            s.endpoint
        ));
        if let Some(m) = &s.message {
            out.push_str(&format!("\n    {m}"));
        }
        if !s.tools.is_empty() {
            out.push_str(&format!("\n    tools: {}", s.tools.join(", ")));
        }
        if !s.prompts.is_empty() {
            let names: Vec<String> = s
                .prompts
                .iter()
                .map(|p| format!("/{}:{}", s.server, p.name))
                .collect();
            out.push_str(&format!("\n    prompts: {}", names.join(", ")));
        }
        if !s.resources.is_empty() {
            out.push_str(&format!(
                "\n    resources: {} (mention one as @{}:URI; Tab completes)",
                s.resources.len(),
                s.server
            ));
        }
    }
    out
}
