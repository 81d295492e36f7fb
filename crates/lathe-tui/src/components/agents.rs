//! `/agents`: a live meter of the turn's agents as a tree: the main one,
//! each subagent under it with its job, model, calls, tokens, cost and
//! state, and under each the background commands it started. ↑/↓ choose,
//! `k` stops the chosen one and everything under it (the main agent: the
//! whole turn, as Esc does), Esc closes. The [`Meter`] is fed the agent's
//! events by the app; the view borrows it.

use std::collections::HashMap;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use crate::protocol::{AgentEvent, JobInfo, ToolKind, ToolStatus, Usage};
use crate::theme::Theme;

/// How an agent stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Running,
    Done,
    Failed,
    /// The person stopped it (`k`, Esc).
    Stopped,
}

impl State {
    fn word(self) -> &'static str {
        match self {
            State::Running => "running",
            State::Done => "done",
            State::Failed => "failed",
            State::Stopped => "stopped",
        }
    }
}

/// One agent of the turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    /// The `task` call that runs it (`None`: the main agent).
    pub task: Option<String>,
    pub description: String,
    pub model: String,
    pub calls: u32,
    pub usage: Usage,
    pub state: State,
    /// `k` was pressed on it: its end is a stop.
    stopping: bool,
}

impl Agent {
    fn new(task: Option<String>, description: String) -> Self {
        Self {
            task,
            description,
            model: String::new(),
            calls: 0,
            usage: Usage::default(),
            state: State::Running,
            stopping: false,
        }
    }
}

/// The agents of the latest turn, as their events tell.
#[derive(Debug, Default)]
pub struct Meter {
    agents: Vec<Agent>,
    /// Each call of the turn, and the `task` it was made for.
    parents: HashMap<String, Option<String>>,
}

impl Meter {
    /// The agent of `task` (`None`: the main one).
    fn agent(&mut self, task: Option<&str>) -> Option<&mut Agent> {
        self.agents.iter_mut().find(|a| a.task.as_deref() == task)
    }

    pub fn on_event(&mut self, ev: &AgentEvent) {
        match ev {
            AgentEvent::TurnStarted { .. } => {
                self.agents = vec![Agent::new(None, "this turn".into())];
                self.parents.clear();
            }
            AgentEvent::ToolCallStarted {
                call_id,
                arguments,
                kind,
                parent,
                ..
            } => {
                self.parents.insert(call_id.clone(), parent.clone());
                if let Some(a) = self.agent(parent.as_deref()) {
                    a.calls += 1;
                }
                if *kind == Some(ToolKind::Task) && parent.is_none() {
                    let job = arguments
                        .get("description")
                        .and_then(|d| d.as_str())
                        .unwrap_or("")
                        .to_string();
                    self.agents.push(Agent::new(Some(call_id.clone()), job));
                }
            }
            AgentEvent::UsageUpdated {
                last, task, model, ..
            } => {
                if let Some(a) = self.agent(task.as_deref()) {
                    a.usage.add(*last);
                    a.model.clone_from(model);
                }
            }
            AgentEvent::ToolCallFinished {
                call_id, status, ..
            } => {
                if let Some(a) = self.agent(Some(call_id)) {
                    a.state = match (a.stopping, status) {
                        (true, _) => State::Stopped,
                        (false, ToolStatus::Ok) => State::Done,
                        (false, _) => State::Failed,
                    };
                }
            }
            AgentEvent::TurnCompleted { .. }
            | AgentEvent::Error {
                turn_id: Some(_), ..
            } => {
                let interrupted = matches!(
                    ev,
                    AgentEvent::Error { kind, .. } if *kind == crate::protocol::ErrorKind::Interrupted
                );
                let failed = matches!(ev, AgentEvent::Error { .. });
                for a in self.agents.iter_mut().filter(|a| a.state == State::Running) {
                    a.state = match (interrupted || a.stopping, failed) {
                        (true, _) => State::Stopped,
                        (false, true) => State::Failed,
                        (false, false) => State::Done,
                    };
                }
            }
            _ => {}
        }
    }

    /// The person asked to stop the agent of `task`.
    pub fn stopping(&mut self, task: Option<&str>) {
        if let Some(a) = self.agent(task) {
            a.stopping = true;
        }
    }

    pub fn agents(&self) -> &[Agent] {
        &self.agents
    }

    /// The subagents running, and what they spent (when prices are known):
    /// what the status bar counts.
    pub fn running_subagents(&self) -> Option<(usize, Option<f64>)> {
        let running: Vec<&Agent> = self
            .agents
            .iter()
            .filter(|a| a.task.is_some() && a.state == State::Running)
            .collect();
        if running.is_empty() {
            return None;
        }
        let cost = running
            .iter()
            .filter_map(|a| a.usage.cost_usd)
            .reduce(|x, y| x + y);
        Some((running.len(), cost))
    }

    /// The agent (`Some(None)`: the main one) that started the command
    /// of call `call_id`; `None`: not a call of this turn.
    fn owner(&self, call_id: Option<&str>) -> Option<Option<&str>> {
        self.parents.get(call_id?).map(|p| p.as_deref())
    }
}

/// A row of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Row {
    Agent(Option<String>),
    Job(String),
}

/// What a key asks of the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentsAction {
    None,
    Close,
    /// Stop the whole turn (`k` on the main agent).
    StopTurn,
    StopAgent(String),
    KillJob(String),
    /// `k` on what has already ended.
    Ended(String),
}

/// The view over a [`Meter`] and the background commands.
#[derive(Debug, Default)]
pub struct AgentsView {
    selected: usize,
}

fn rows(meter: &Meter, jobs: &[JobInfo]) -> Vec<Row> {
    let mut out = Vec::new();
    for a in meter.agents() {
        out.push(Row::Agent(a.task.clone()));
        for j in jobs
            .iter()
            .filter(|j| meter.owner(j.call_id.as_deref()) == Some(a.task.as_deref()))
        {
            out.push(Row::Job(j.handle.clone()));
        }
    }
    // Commands of earlier turns, last.
    for j in jobs
        .iter()
        .filter(|j| meter.owner(j.call_id.as_deref()).is_none())
    {
        out.push(Row::Job(j.handle.clone()));
    }
    out
}

impl AgentsView {
    pub fn handle_key(&mut self, key: KeyEvent, meter: &Meter, jobs: &[JobInfo]) -> AgentsAction {
        let rows = rows(meter, jobs);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => AgentsAction::Close,
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(rows.len().saturating_sub(1));
                AgentsAction::None
            }
            KeyCode::Up => {
                self.selected = self.selected.saturating_sub(1);
                AgentsAction::None
            }
            KeyCode::Char('k') | KeyCode::Delete => match rows.get(self.selected) {
                Some(Row::Agent(task)) => {
                    let agent = meter.agents().iter().find(|a| &a.task == task);
                    match (agent, task) {
                        (Some(a), _) if a.state != State::Running => {
                            AgentsAction::Ended(task.clone().unwrap_or_else(|| "the turn".into()))
                        }
                        (_, None) => AgentsAction::StopTurn,
                        (_, Some(t)) => AgentsAction::StopAgent(t.clone()),
                    }
                }
                Some(Row::Job(handle)) => {
                    if jobs.iter().any(|j| &j.handle == handle && j.running) {
                        AgentsAction::KillJob(handle.clone())
                    } else {
                        AgentsAction::Ended(handle.clone())
                    }
                }
                None => AgentsAction::None,
            },
            _ => AgentsAction::None,
        }
    }

    pub fn render(&self, meter: &Meter, jobs: &[JobInfo], area: Rect, buf: &mut Buffer, t: &Theme) {
        Clear.render(area, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border())
            .title(Span::styled(
                " Agents of this turn ",
                t.bold(t.colors.accent),
            ));
        let inner = block.inner(area);
        block.render(area, buf);
        let rows = rows(meter, jobs);
        let selected = self.selected.min(rows.len().saturating_sub(1));
        let mut lines: Vec<Line> = Vec::new();
        if rows.is_empty() {
            lines.push(Line::from(Span::styled(
                "no turn yet: the agents of a turn show here as it runs",
                t.muted(),
            )));
        }
        for (i, row) in rows.iter().enumerate() {
            let (mark, style) = if i == selected {
                ("▸ ", t.bold(t.colors.accent).add_modifier(Modifier::BOLD))
            } else {
                ("  ", t.text())
            };
            let text = match row {
                Row::Agent(task) => meter
                    .agents()
                    .iter()
                    .find(|a| &a.task == task)
                    .map(agent_line)
                    .unwrap_or_default(),
                Row::Job(handle) => jobs
                    .iter()
                    .find(|j| &j.handle == handle)
                    .map(|j| job_line(j, meter))
                    .unwrap_or_default(),
            };
            lines.push(Line::from(vec![
                Span::styled(mark, style),
                Span::styled(crate::protocol::visible::name(&text).into_owned(), style),
            ]));
        }
        let keys = Line::from(Span::styled(
            "↑↓ choose · k stops it and everything under it · Esc closes",
            t.muted(),
        ));
        let room = usize::from(inner.height.saturating_sub(1));
        let start = selected.saturating_sub(room.saturating_sub(1));
        for (row, line) in lines.into_iter().skip(start).take(room).enumerate() {
            let y = inner.y + u16::try_from(row).unwrap_or(u16::MAX);
            buf.set_line(inner.x, y, &line, inner.width);
        }
        if inner.height > 0 {
            buf.set_line(inner.x, inner.bottom() - 1, &keys, inner.width);
        }
    }
}

/// `main · gpt-5 · 3 calls · 12.3k tokens · $0.04 · running`.
fn agent_line(a: &Agent) -> String {
    let k = crate::protocol::humanize::count;
    let who = match &a.task {
        None => "main".to_string(),
        Some(t) => format!(
            "  └ {t} {}",
            crate::protocol::text::shorten_chars(&a.description, 40)
        ),
    };
    let mut parts = vec![who];
    if !a.model.is_empty() {
        parts.push(a.model.clone());
    }
    parts.push(format!(
        "{} call{}",
        a.calls,
        if a.calls == 1 { "" } else { "s" }
    ));
    parts.push(format!(
        "{} tokens",
        k(a.usage.input_tokens.saturating_add(a.usage.output_tokens))
    ));
    if let Some(c) = a.usage.cost_usd {
        parts.push(crate::protocol::budget::usd(c));
    }
    parts.push(a.state.word().to_string());
    parts.join(" · ")
}

/// `      bg1 npm run dev · running`, indented under its agent.
fn job_line(j: &JobInfo, meter: &Meter) -> String {
    let indent = match meter.owner(j.call_id.as_deref()) {
        Some(Some(_)) => "        ",
        Some(None) => "    ",
        None => "  earlier: ",
    };
    let state = if j.running {
        "running".to_string()
    } else {
        j.exit_code
            .map_or_else(|| "ended".to_string(), |c| format!("ended, exit {c}"))
    };
    format!(
        "{indent}{} {} · {state}",
        j.handle,
        crate::protocol::text::shorten_chars(&j.command, 50)
    )
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyModifiers;
    use serde_json::json;

    use super::*;

    fn started(
        id: &str,
        kind: ToolKind,
        parent: Option<&str>,
        args: serde_json::Value,
    ) -> AgentEvent {
        AgentEvent::ToolCallStarted {
            turn_id: 1,
            call_id: id.into(),
            tool: "t".into(),
            arguments: args,
            effect: None,
            kind: Some(kind),
            parent: parent.map(str::to_string),
        }
    }

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    #[test]
    fn the_tree_meters_each_agent_and_k_stops_the_chosen_one() {
        let mut m = Meter::default();
        m.on_event(&AgentEvent::TurnStarted {
            turn_id: 1,
            prompt: "go".into(),
        });
        m.on_event(&started(
            "t1",
            ToolKind::Task,
            None,
            json!({"description": "find tests"}),
        ));
        m.on_event(&started("t1-s1", ToolKind::Shell, Some("t1"), json!({})));
        m.on_event(&AgentEvent::UsageUpdated {
            turn_id: 1,
            last: Usage {
                input_tokens: 1200,
                cost_usd: Some(0.02),
                ..Usage::default()
            },
            total: Usage::default(),
            task: Some("t1".into()),
            model: "mock-small".into(),
        });
        let jobs = vec![
            JobInfo {
                handle: "bg1".into(),
                command: "npm run dev".into(),
                started_ms: 0,
                running: true,
                exit_code: None,
                tail: vec![],
                call_id: Some("t1-s1".into()),
            },
            JobInfo {
                handle: "bg0".into(),
                command: "python3 -m http.server".into(),
                started_ms: 0,
                running: true,
                exit_code: None,
                tail: vec![],
                call_id: Some("old".into()),
            },
        ];
        assert_eq!(m.running_subagents(), Some((1, Some(0.02))));
        let area = Rect::new(0, 0, 90, 10);
        let mut buf = Buffer::empty(area);
        let mut view = AgentsView::default();
        view.render(&m, &jobs, area, &mut buf, &Theme::plain());
        let shown = crate::buffer_text(&buf);
        assert!(shown.contains("▸ main · 1 call"), "{shown}");
        assert!(
            shown.contains("└ t1 find tests · mock-small · 1 call · 1.2k tokens · $0.02 · running"),
            "{shown}"
        );
        assert!(shown.contains("bg1 npm run dev · running"), "{shown}");
        assert!(shown.contains("earlier: bg0"), "{shown}");
        // k on the main agent stops the turn; on the subagent, it alone;
        // on its command, the command.
        assert_eq!(
            view.handle_key(key(KeyCode::Char('k')), &m, &jobs),
            AgentsAction::StopTurn
        );
        view.handle_key(key(KeyCode::Down), &m, &jobs);
        assert_eq!(
            view.handle_key(key(KeyCode::Char('k')), &m, &jobs),
            AgentsAction::StopAgent("t1".into())
        );
        view.handle_key(key(KeyCode::Down), &m, &jobs);
        assert_eq!(
            view.handle_key(key(KeyCode::Char('k')), &m, &jobs),
            AgentsAction::KillJob("bg1".into())
        );
        // Stopped: its end says so, and a second k says it has ended.
        m.stopping(Some("t1"));
        m.on_event(&AgentEvent::ToolCallFinished {
            call_id: "t1".into(),
            tool: "task".into(),
            status: ToolStatus::Error,
            content: json!({"error": "stopped"}),
            metadata: Default::default(),
            exit_code: None,
            diff: None,
            change: None,
            summary: None,
        });
        assert_eq!(m.agents()[1].state, State::Stopped);
        assert_eq!(m.running_subagents(), None);
        view.handle_key(key(KeyCode::Up), &m, &jobs);
        assert_eq!(
            view.handle_key(key(KeyCode::Char('k')), &m, &jobs),
            AgentsAction::Ended("t1".into())
        );
    }
}
