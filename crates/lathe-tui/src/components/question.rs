//! The yes-or-no questions other than approval: whether to quit while
//! commands run, whether to trust a workspace's hooks, commands and MCP
//! servers, whether a turn may go on past its tool rounds, whether to
//! carry out a plan. Each says what its answers do ([`YesNo`]); when a key
//! may answer is [`Armed`]'s alone (`Arming::answer`), the same for all.

use std::cell::Cell;
use std::time::Instant;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::approval::{Ahead, Answer, Arming, READING};
use super::cells::NoticeKind;
use crate::component::{AppEvent, AppEvents, Component, Kind, Outcome, Question};
use crate::protocol::Op;
use crate::theme::Theme;

/// What a yes-or-no question does with its answers. When a key may
/// answer it at all is [`Armed`]'s to say, the same for every question.
pub trait YesNo {
    /// Which question it is (its place among the others).
    fn kind(&self) -> Kind;
    /// What it asks, in a notification's words.
    fn words(&self) -> Option<String>;
    /// The rows it takes at the bottom of `area` (`None`: the whole
    /// screen).
    fn rows(&self, area: Rect, theme: &Theme) -> Option<u16>;
    /// A key it takes once armed, before any answer: reading it (the
    /// trust question scrolls), which never restarts the quiet moment.
    fn reads(&mut self, _key: KeyEvent) -> bool {
        false
    }
    /// `y`: what it does, and whether it is answered (`Close`).
    fn yes(&mut self, events: &AppEvents) -> Outcome;
    /// `n` or Esc: what it does (it is then answered).
    fn no(&mut self, events: &AppEvents);
    /// A key that is no answer, once armed.
    fn other(&mut self, _key: KeyEvent, _events: &AppEvents) -> Outcome {
        Outcome::Consumed
    }
    fn draw(&self, area: Rect, buf: &mut Buffer, theme: &Theme);
}

/// A yes-or-no question armed against keys typed ahead, the one place of
/// the consent timing: a key answers only once the question was drawn
/// and a quiet moment passed (`Arming`); typed while the person was still
/// writing, it falls to the composer; too soon, it is dropped with a word.
pub struct Armed<Q> {
    arming: Arming,
    /// The last frame showed it.
    shown: Cell<bool>,
    pub question: Q,
}

impl<Q> Armed<Q> {
    /// `question`, asked at `now`, the person's last key into the
    /// composer at `last_typed`.
    pub fn new(question: Q, last_typed: Option<Instant>, now: Instant) -> Self {
        Self {
            arming: Arming::pending_after(last_typed, now),
            shown: Cell::new(false),
            question,
        }
    }
}

impl<Q: YesNo> Component for Armed<Q> {
    fn handle_key(&mut self, key: KeyEvent, events: &AppEvents, now: Instant) -> Outcome {
        if self.arming.is_armed(now) && self.question.reads(key) {
            return Outcome::Consumed;
        }
        match self.arming.answer(key, now) {
            Answer::Typing(key) => Outcome::Ignored(key),
            Answer::TooSoon => {
                events.send(AppEvent::Flash(READING.into()));
                Outcome::Consumed
            }
            Answer::Yes => self.question.yes(events),
            Answer::No { pass } => {
                self.question.no(events);
                pass.map_or(Outcome::Close, Outcome::CloseAndPass)
            }
            Answer::Nothing => self.question.other(key, events),
        }
    }

    fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, _: Instant) {
        self.question.draw(area, buf, theme);
        self.shown.set(true);
    }
}

impl<Q: YesNo> Question for Armed<Q> {
    fn kind(&self) -> Kind {
        self.question.kind()
    }

    fn words(&self) -> Option<String> {
        self.question.words()
    }

    fn rows(&self, area: Rect, theme: &Theme) -> Option<u16> {
        self.question.rows(area, theme)
    }

    fn input(&mut self, now: Instant) {
        self.arming.input(now);
    }

    fn drawn(&mut self, now: Instant) {
        self.arming.drawn(self.shown.take(), now);
    }

    fn type_ahead(&mut self, key: KeyEvent, composing: bool, now: Instant) -> Ahead {
        self.arming.type_ahead(key, composing, now)
    }
}

/// Whether to trust the workspace's hooks and servers.
pub struct TrustQuestion {
    /// Taken when answered.
    prompt: Option<TrustPrompt>,
    view: Cell<TrustView>,
}

impl TrustQuestion {
    pub fn new(prompt: TrustPrompt) -> Self {
        Self {
            prompt: Some(prompt),
            view: Cell::new(TrustView::default()),
        }
    }
}

/// `y` trusts the workspace's hooks (and remembers it), `n` or Esc leaves
/// them off for this session. Keys are ignored for a moment after the
/// question shows, as in the approval dialog.
impl YesNo for TrustQuestion {
    fn kind(&self) -> Kind {
        Kind::Trust
    }

    fn words(&self) -> Option<String> {
        Some("Lathe asks: trust what this workspace defines?".into())
    }

    /// It takes the whole screen: all it would trust is shown.
    fn rows(&self, _: Rect, _: &Theme) -> Option<u16> {
        None
    }

    fn reads(&mut self, key: KeyEvent) -> bool {
        let mut view = self.view.get();
        let scrolled = view.scroll_key(key);
        self.view.set(view);
        scrolled
    }

    fn yes(&mut self, events: &AppEvents) -> Outcome {
        // Nothing is trusted that was not on screen.
        if !self.view.get().seen_end() {
            events.send(AppEvent::Flash(
                "read the question to its end first (↓, PgDn, Space, End)".into(),
            ));
            return Outcome::Consumed;
        }
        let Some(mut prompt) = self.prompt.take() else {
            return Outcome::Close;
        };
        let what = prompt.what();
        if !prompt.hooks.is_empty() {
            events.send(AppEvent::Op(Op::TrustWorkspaceHooks));
        }
        if !prompt.commands.is_empty() {
            events.send(AppEvent::Commands(std::mem::take(&mut prompt.commands)));
        }
        if !prompt.servers.is_empty() {
            events.send(AppEvent::Op(Op::TrustWorkspaceMcp));
        }
        if !prompt.skills.is_empty() {
            events.send(AppEvent::Op(Op::TrustWorkspaceSkills));
        }
        if !prompt.agents.is_empty() {
            events.send(AppEvent::Op(Op::TrustWorkspaceAgents));
        }
        events.send(match (prompt.remember)() {
            Ok(()) => AppEvent::Notice(
                NoticeKind::Info,
                format!("the workspace's {what} are trusted; they run from now on"),
            ),
            Err(e) => AppEvent::Notice(
                NoticeKind::Warning,
                format!(
                    "the workspace's {what} run this session, but the trust could not \
                     be saved: {e}"
                ),
            ),
        });
        Outcome::Close
    }

    fn no(&mut self, events: &AppEvents) {
        let what = self
            .prompt
            .as_ref()
            .map_or_else(|| "settings".to_string(), TrustPrompt::what);
        events.send(AppEvent::Notice(
            NoticeKind::Info,
            format!(
                "the workspace's {what} stay off for now; /trust asks again, and so \
                 does the next start"
            ),
        ));
        if let Some(prompt) = self.prompt.take() {
            events.send(AppEvent::Untrusted(prompt));
        }
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let Some(prompt) = &self.prompt else {
            return;
        };
        let mut view = self.view.get();
        render_trust(prompt, &mut view, area, buf, theme);
        self.view.set(view);
    }
}

pub use super::go_on::{BudgetQuestion, LimitQuestion, LoopQuestion};

/// What the person says when they approve a plan: their own words, in
/// the conversation.
pub const PLAN_APPROVED: &str = "The plan is approved: carry it out, step by step, keeping \
     the plan up to date.";

/// A plan-mode turn proposed a plan: carry it out?
#[derive(Default)]
pub struct PlanQuestion;

impl PlanQuestion {
    pub fn new() -> Self {
        Self
    }
}

impl PlanQuestion {
    fn lines(t: &Theme) -> Vec<ratatui::text::Line<'static>> {
        use ratatui::text::{Line, Span};
        vec![Line::from(Span::styled(
            "The model proposes the plan above (pinned over the message box). Nothing has \
             changed yet. Carry it out, in the approval mode you chose?",
            t.text(),
        ))]
    }
}

/// `y` sends the approval (the turn runs in the approval mode chosen),
/// `e` starts `/plan ` in the composer to say what to change, `n` or Esc
/// leaves the plan as it is; armed like the other questions.
impl YesNo for PlanQuestion {
    fn kind(&self) -> Kind {
        Kind::Plan
    }

    fn words(&self) -> Option<String> {
        Some("Lathe asks: carry out the plan?".into())
    }

    fn rows(&self, area: Rect, t: &Theme) -> Option<u16> {
        Some(modal_height(&Self::lines(t), area))
    }

    fn yes(&mut self, events: &AppEvents) -> Outcome {
        events.send(AppEvent::Send(PLAN_APPROVED.into()));
        Outcome::Close
    }

    fn no(&mut self, events: &AppEvents) {
        events.send(AppEvent::Notice(
            NoticeKind::Info,
            "the plan was not carried out; /plan revises it, or say what to do".into(),
        ));
    }

    fn other(&mut self, key: KeyEvent, events: &AppEvents) -> Outcome {
        if key.code != crossterm::event::KeyCode::Char('e') || !key.modifiers.is_empty() {
            return Outcome::Consumed;
        }
        events.send(AppEvent::Compose("/plan ".into()));
        events.send(AppEvent::Flash(
            "say what to change; Enter asks for a new plan".into(),
        ));
        Outcome::Close
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, t: &Theme) {
        use ratatui::text::{Line, Span};
        let lines = Self::lines(t);
        let keys = Line::from(vec![
            Span::styled("y", t.bold(t.colors.accent)),
            Span::styled(" carry it out  ", t.muted()),
            Span::styled("e", t.bold(t.colors.accent)),
            Span::styled(" say what to change  ", t.muted()),
            Span::styled("n", t.bold(t.colors.accent)),
            Span::styled(" not now", t.muted()),
        ]);
        render_question(" Carry out the plan? ", lines, keys, area, buf, t);
    }
}

/// Whether to quit while commands run in the background: quitting stops
/// them (a dev server the person may be using), so it is asked, with
/// what runs; armed like the other questions.
pub struct QuitQuestion {
    /// What runs: `bg1 python3 -m http.server`.
    jobs: Vec<String>,
}

impl QuitQuestion {
    pub fn new(jobs: Vec<String>) -> Self {
        Self { jobs }
    }

    fn lines(&self, t: &Theme) -> Vec<ratatui::text::Line<'static>> {
        use ratatui::text::{Line, Span};
        let mut lines = vec![Line::from(Span::styled(
            if self.jobs.len() == 1 {
                "A command runs in the background; quitting stops it:".to_string()
            } else {
                format!(
                    "{} commands run in the background; quitting stops them:",
                    self.jobs.len()
                )
            },
            t.text(),
        ))];
        for job in self.jobs.iter().take(5) {
            lines.push(Line::from(Span::styled(format!("  {job}"), t.accent())));
        }
        if self.jobs.len() > 5 {
            lines.push(Line::from(Span::styled(
                format!("  and {} more (/ps)", self.jobs.len() - 5),
                t.muted(),
            )));
        }
        lines
    }
}

/// `y` stops them and quits; `n` or Esc stays.
impl YesNo for QuitQuestion {
    fn kind(&self) -> Kind {
        Kind::Quit
    }

    /// None: the person is quitting, not away.
    fn words(&self) -> Option<String> {
        None
    }

    fn rows(&self, area: Rect, t: &Theme) -> Option<u16> {
        Some(modal_height(&self.lines(t), area))
    }

    fn yes(&mut self, events: &AppEvents) -> Outcome {
        events.send(AppEvent::Quit);
        Outcome::Close
    }

    fn no(&mut self, events: &AppEvents) {
        events.send(AppEvent::Flash(
            "still running: /ps lists them, k stops one".into(),
        ));
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, t: &Theme) {
        use ratatui::text::{Line, Span};
        let keys = Line::from(vec![
            Span::styled("y", t.bold(t.colors.accent)),
            Span::styled(" stop them and quit  ", t.muted()),
            Span::styled("n", t.bold(t.colors.accent)),
            Span::styled(" stay", t.muted()),
        ]);
        render_question(" Quit? ", self.lines(t), keys, area, buf, t);
    }
}

/// The question whether to run the hooks a workspace config defines.
pub struct TrustPrompt {
    /// The hooks, one line each.
    pub hooks: Vec<String>,
    /// The MCP servers, one line each (`name: command` or `name: url`).
    pub servers: Vec<String>,
    /// The workspace files they run, which the trust pins.
    pub files: Vec<String>,
    /// The workspace's own commands (`.lathe/commands/`), offered once
    /// trusted.
    pub commands: Vec<super::custom::Custom>,
    /// The workspace's skills, shown whole: instructions the model
    /// follows once offered.
    pub skills: Vec<lathe_core::front::skills::Skill>,
    /// The workspace's subagent types, each file whole.
    pub agents: Vec<lathe_core::front::agents::AgentType>,
    /// Remembers the trust for this workspace (its hooks as they are).
    pub remember: Box<dyn FnMut() -> Result<(), String> + Send>,
}

impl TrustPrompt {
    /// What it asks about, in words: "hooks", "MCP servers",
    /// "commands", or some of them.
    pub fn what(&self) -> String {
        let kinds: Vec<&str> = [
            (!self.hooks.is_empty(), "hooks"),
            (!self.servers.is_empty(), "MCP servers"),
            (!self.commands.is_empty(), "commands"),
            (!self.skills.is_empty(), "skills"),
            (!self.agents.is_empty(), "subagent types"),
        ]
        .into_iter()
        .filter_map(|(on, k)| on.then_some(k))
        .collect();
        match kinds.as_slice() {
            [] => "settings".into(),
            [one] => (*one).into(),
            [init @ .., last] => format!("{} and {last}", init.join(", ")),
        }
    }
}

/// Where the person is in a trust question too long for the window,
/// and whether its end has been on screen.
#[derive(Debug, Clone, Copy, Default)]
pub struct TrustView {
    /// The first wrapped row shown.
    scroll: usize,
    /// Wrapped rows of text, and rows to show them in, at the last draw.
    rows: usize,
    view: usize,
    /// The last row has been on screen.
    seen_end: bool,
}

impl TrustView {
    /// Scrolls for a reading key; whether it was one.
    pub fn scroll_key(&mut self, key: crossterm::event::KeyEvent) -> bool {
        use crossterm::event::{KeyCode, KeyModifiers};
        if !(key.modifiers.is_empty() || key.modifiers == KeyModifiers::SHIFT) {
            return false;
        }
        let page = self.view.saturating_sub(1).max(1);
        let last = self.rows.saturating_sub(self.view);
        self.scroll = match key.code {
            KeyCode::Down | KeyCode::Char('j') => self.scroll + 1,
            KeyCode::Up | KeyCode::Char('k') => self.scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll + page,
            KeyCode::PageUp => self.scroll.saturating_sub(page),
            KeyCode::End | KeyCode::Char('G') => last,
            KeyCode::Home | KeyCode::Char('g') => 0,
            _ => return false,
        }
        .min(last);
        true
    }

    /// Whether the whole question has been on screen.
    pub fn seen_end(&self) -> bool {
        self.seen_end
    }
}

/// Everything the question trusts, as lines: nothing cut, blank runs
/// counted, hidden characters named.
fn trust_lines(prompt: &TrustPrompt, theme: &Theme) -> Vec<ratatui::text::Line<'static>> {
    use ratatui::text::{Line, Span};
    let mut lines = Vec::new();
    let items = |items: &[String], lines: &mut Vec<Line<'static>>| {
        for item in items {
            for (i, part) in crate::protocol::visible::command(item)
                .split('\n')
                .enumerate()
            {
                let indent = if i == 0 { "  " } else { "      " };
                lines.push(Line::from(Span::styled(
                    format!("{indent}{part}"),
                    theme.accent(),
                )));
            }
        }
    };
    if !prompt.hooks.is_empty() {
        lines.push(Line::from(Span::styled(
            format!(
                "This workspace's .lathe/config.toml runs {} around tool calls. A cloned \
                 repository could run anything this way, so they stay off until you trust \
                 them (they run in the sandbox):",
                count(prompt.hooks.len(), "program")
            ),
            theme.text(),
        )));
        items(&prompt.hooks, &mut lines);
    }
    if !prompt.servers.is_empty() {
        lines.push(Line::from(Span::styled(
            format!(
                "This workspace names {} (in .mcp.json or .lathe/config.toml): programs to run \
                 on this machine (in the sandbox), or addresses to send your requests to. They \
                 stay off until you trust them:",
                count(prompt.servers.len(), "MCP server")
            ),
            theme.text(),
        )));
        items(&prompt.servers, &mut lines);
    }
    if !prompt.commands.is_empty() {
        lines.push(Line::from(Span::styled(
            format!(
                "This workspace defines {} (.lathe/commands/): prompts sent as your message \
                 when you type them. They stay off until you trust them:",
                count(prompt.commands.len(), "command")
            ),
            theme.text(),
        )));
        // Each with what it sends: a prompt can tell the model anything.
        for c in &prompt.commands {
            items(&[format!("{} {}", c.name, c.about)], &mut lines);
            // The prompt under it, not its first line again where that is
            // what the command says of itself.
            let mut body: Vec<&str> = c.body.lines().collect();
            if let Some(first) = body.iter().position(|l| !l.trim().is_empty())
                && body[first].trim().trim_start_matches('#').trim() == c.about
            {
                body.drain(..=first);
            }
            for line in body.iter().take(COMMAND_LINES_SHOWN) {
                lines.push(Line::from(Span::styled(
                    format!("      │ {}", crate::protocol::visible::name(line)),
                    theme.muted(),
                )));
            }
            if body.len() > COMMAND_LINES_SHOWN {
                lines.push(Line::from(Span::styled(
                    format!(
                        "      │ … {} more lines (.lathe/commands/{}.md)",
                        body.len() - COMMAND_LINES_SHOWN,
                        c.name.trim_start_matches('/')
                    ),
                    theme.muted(),
                )));
            }
        }
    }
    skill_lines(&prompt.skills, theme, &mut lines);
    agent_lines(&prompt.agents, theme, &mut lines);
    if !prompt.files.is_empty() {
        lines.push(Line::from(Span::styled(
            "Read the files they run first. Trust covers them as they are now: if one changes, \
             its hook stops and Lathe asks again. Writes to them always ask.",
            theme.text(),
        )));
        items(&prompt.files, &mut lines);
    }
    lines
}

/// Lines of each workspace command's prompt the trust question shows.
const COMMAND_LINES_SHOWN: usize = 12;

/// `n thing` or `n things`.
fn count(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// The trust question, as a modal over the transcript: as tall as the
/// window lets it be, scrolled by the reading keys, with what is below
/// counted on its last row; `y` is offered once the end has been shown.
pub fn render_trust(
    prompt: &TrustPrompt,
    view: &mut TrustView,
    area: Rect,
    buf: &mut ratatui::buffer::Buffer,
    theme: &Theme,
) {
    use ratatui::text::{Line, Span};
    use ratatui::widgets::{Paragraph, Wrap};
    let lines = trust_lines(prompt, theme);
    // As in render_question: the text is wrapped 4 columns in from the
    // modal's edges, and borders, a blank row and the keys take 4 rows.
    let w = area.width.saturating_sub(4).max(20).min(area.width);
    let text_width = w.saturating_sub(4);
    let rows = Paragraph::new(lines.clone())
        .wrap(Wrap { trim: false })
        .line_count(text_width);
    let room = usize::from(area.height.saturating_sub(4));
    let fits = rows <= room;
    // A row for "N more lines" when it does not fit.
    let view_rows = if fits { rows } else { room.saturating_sub(1) };
    view.rows = rows;
    view.view = view_rows;
    view.scroll = view.scroll.min(rows.saturating_sub(view_rows));
    let below = rows.saturating_sub(view.scroll + view_rows);
    if below == 0 && view_rows > 0 {
        view.seen_end = true;
    }
    let mut shown: Vec<Line<'static>> = Vec::new();
    let keys = if view.seen_end {
        Line::from(vec![
            Span::styled("y", theme.bold(theme.colors.accent)),
            Span::styled(" trust them for this workspace  ", theme.muted()),
            Span::styled("n", theme.bold(theme.colors.accent)),
            Span::styled(" not now", theme.muted()),
        ])
    } else {
        Line::from(vec![
            Span::styled("↓ PgDn Space", theme.bold(theme.colors.accent)),
            Span::styled(" read on (y once the end was shown)  ", theme.muted()),
            Span::styled("n", theme.bold(theme.colors.accent)),
            Span::styled(" not now", theme.muted()),
        ])
    };
    // The rows in view, cut from the wrapped text, then the count.
    let paragraph = Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((u16::try_from(view.scroll).unwrap_or(u16::MAX), 0));
    if fits {
        render_question_with(title(prompt), paragraph, rows, None, keys, area, buf, theme);
    } else {
        shown.push(Line::from(Span::styled(
            if below > 0 {
                format!(
                    "↓ {below} more {} below",
                    if below == 1 { "line" } else { "lines" }
                )
            } else {
                "(the end)".to_string()
            },
            theme.bold(theme.colors.warning),
        )));
        render_question_with(
            title(prompt),
            paragraph,
            view_rows,
            shown.pop(),
            keys,
            area,
            buf,
            theme,
        );
    }
}

fn title(prompt: &TrustPrompt) -> &'static str {
    match (
        prompt.hooks.is_empty(),
        prompt.servers.is_empty(),
        prompt.commands.is_empty(),
        prompt.skills.is_empty() && prompt.agents.is_empty(),
    ) {
        (false, true, true, true) => " Run this workspace's hooks? ",
        (true, false, true, true) => " Start this workspace's MCP servers? ",
        (true, true, false, true) => " Offer this workspace's commands? ",
        (true, true, true, false) if prompt.agents.is_empty() => " Offer this workspace's skills? ",
        (true, true, true, false) if prompt.skills.is_empty() => {
            " Offer this workspace's subagent types? "
        }
        (false, false, true, true) => " Trust this workspace's hooks and servers? ",
        _ => " Trust this workspace's settings? ",
    }
}

/// The workspace's subagent types, each file whole (its instructions
/// and the tools it names).
fn agent_lines(
    agents: &[lathe_core::front::agents::AgentType],
    theme: &Theme,
    lines: &mut Vec<ratatui::text::Line<'static>>,
) {
    use ratatui::text::{Line, Span};
    if agents.is_empty() {
        return;
    }
    lines.push(Line::from(Span::styled(
        format!(
            "This workspace defines {} (.lathe/agents, .claude/agents): instructions a \
             subagent follows when the model runs one. They stay off until you trust them, \
             as they are now; a change asks again:",
            count(agents.len(), "subagent type")
        ),
        theme.text(),
    )));
    for a in agents {
        lines.push(Line::from(Span::styled(
            format!(
                "  {} · {}",
                a.name,
                crate::protocol::visible::name(&a.file.display().to_string())
            ),
            theme.accent(),
        )));
        for line in a.text.lines() {
            lines.push(Line::from(Span::styled(
                format!("      │ {}", crate::protocol::visible::name(line)),
                theme.muted(),
            )));
        }
    }
}

/// The workspace's skills, each `SKILL.md` whole (what the model would
/// follow) and the files beside it (what it may run).
fn skill_lines(
    skills: &[lathe_core::front::skills::Skill],
    theme: &Theme,
    lines: &mut Vec<ratatui::text::Line<'static>>,
) {
    use ratatui::text::{Line, Span};
    if skills.is_empty() {
        return;
    }
    lines.push(Line::from(Span::styled(
        format!(
            "This workspace defines {} (Agent Skills): instructions the model follows when \
             it loads one, and scripts it may run (each command asks as usual). They stay \
             off until you trust them, as they are now; a change asks again:",
            count(skills.len(), "skill")
        ),
        theme.text(),
    )));
    for s in skills {
        lines.push(Line::from(Span::styled(
            format!(
                "  {} · {}",
                s.name,
                crate::protocol::visible::name(&s.dir.join("SKILL.md").display().to_string())
            ),
            theme.accent(),
        )));
        for line in s.text.lines() {
            lines.push(Line::from(Span::styled(
                format!("      │ {}", crate::protocol::visible::name(line)),
                theme.muted(),
            )));
        }
        for f in &s.files {
            lines.push(Line::from(Span::styled(
                format!("      + {}", crate::protocol::visible::name(f)),
                theme.muted(),
            )));
        }
    }
}

/// The rows a modal question of `lines` takes at the bottom of `area`
/// (its text wrapped, borders, a blank row and the keys): what the
/// transcript gives up for it, so its newest lines stay in sight above.
pub fn modal_height(lines: &[ratatui::text::Line<'static>], area: Rect) -> u16 {
    use ratatui::widgets::{Paragraph, Wrap};
    let w = area.width.saturating_sub(4).max(20).min(area.width);
    let rows = Paragraph::new(lines.to_vec())
        .wrap(Wrap { trim: false })
        .line_count(w.saturating_sub(4));
    u16::try_from(rows + 4).unwrap_or(u16::MAX).min(area.height)
}

/// A modal question over `area`: the text wrapped, the keys on the last
/// row whatever the text needs.
pub fn render_question(
    title: &str,
    lines: Vec<ratatui::text::Line<'static>>,
    keys: ratatui::text::Line<'static>,
    area: Rect,
    buf: &mut ratatui::buffer::Buffer,
    theme: &Theme,
) {
    use ratatui::widgets::{Paragraph, Wrap};
    let w = area.width.saturating_sub(4).max(20).min(area.width);
    let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
    let rows = paragraph.line_count(w.saturating_sub(4));
    render_question_with(title, paragraph, rows, None, keys, area, buf, theme);
}

/// A modal of `rows` rows of `paragraph` (and a `marker` row under them),
/// a blank row and the keys, at the bottom of `area` and no taller.
#[allow(clippy::too_many_arguments)]
fn render_question_with(
    title: &str,
    paragraph: ratatui::widgets::Paragraph<'static>,
    rows: usize,
    marker: Option<ratatui::text::Line<'static>>,
    keys: ratatui::text::Line<'static>,
    area: Rect,
    buf: &mut ratatui::buffer::Buffer,
    theme: &Theme,
) {
    use ratatui::text::Span;
    use ratatui::widgets::{Block, Borders, Clear, Widget};
    let w = area.width.saturating_sub(4).max(20).min(area.width);
    let extra = usize::from(marker.is_some());
    // Borders, a blank line and the keys around the wrapped text.
    let h = u16::try_from(rows + extra + 4)
        .unwrap_or(u16::MAX)
        .min(area.height);
    // At the bottom, where the approval dialog stands: the transcript
    // above (what the model did, what it said) stays in sight. The rows
    // it takes are cleared across the screen, so nothing (half of a wide
    // character cut by its border) shows beside it.
    let modal = Rect::new(area.x + (area.width - w) / 2, area.bottom() - h, w, h);
    Clear.render(Rect::new(area.x, modal.y, area.width, h), buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.bold(theme.colors.warning))
        .title(Span::styled(
            title.to_string(),
            theme.bold(theme.colors.warning),
        ));
    let inner = block.inner(modal);
    block.render(modal, buf);
    // The keys keep the last row, whatever the text needs.
    let width = inner.width.saturating_sub(2);
    let text_rows = inner
        .height
        .saturating_sub(2)
        .saturating_sub(u16::try_from(extra).unwrap_or(0));
    paragraph.render(Rect::new(inner.x + 1, inner.y, width, text_rows), buf);
    if let Some(marker) = marker
        && text_rows < inner.height
    {
        marker.render(Rect::new(inner.x + 1, inner.y + text_rows, width, 1), buf);
    }
    if inner.height > 0 {
        keys.render(
            Rect::new(inner.x + 1, inner.y + inner.height - 1, width, 1),
            buf,
        );
    }
}

#[cfg(test)]
mod trust_tests {
    use super::*;

    /// A workspace command's first line is what it says of itself: shown
    /// once, on its name's line, then the rest of its prompt.
    #[test]
    fn a_workspace_commands_prompt_is_shown_once() {
        let prompt = TrustPrompt {
            hooks: vec![],
            servers: vec![],
            files: vec![],
            commands: vec![super::super::custom::Custom {
                name: "/review".into(),
                about: "Review a file".into(),
                body: "# Review a file\n\nRead $ARGUMENTS and list its bugs.\n".into(),
            }],
            skills: vec![],
            agents: vec![],
            remember: Box::new(|| Ok(())),
        };
        let text: String = trust_lines(&prompt, &Theme::plain())
            .iter()
            .map(|l| l.to_string() + "\n")
            .collect();
        assert_eq!(text.matches("Review a file").count(), 1, "{text}");
        assert!(
            text.contains("Read $ARGUMENTS and list its bugs."),
            "{text}"
        );
    }
}
