//! The terminal UI: a full-screen ratatui + crossterm app over the agent.
//!
//! `run` takes over the terminal, starts the agent on its own task, and
//! drives `app::App` from `event_loop`. It talks to the core through
//! [`lathe_protocol`] (`Op`s out, `AgentEvent`s in) and through
//! `lathe_core::front`, the narrow API that starts a conversation, lists
//! sessions and remembers trust; the core's internals are out of its
//! reach. Only this crate uses ratatui and crossterm.

use std::io::IsTerminal;

use lathe_core::front::{agent, config, launch, session};
use lathe_protocol as protocol;

use crate::config::Config;
use crate::launch::{LaunchError, spawn_agent};

/// Declares the UI's modules: private, or public with `internals` (for
/// the benchmarks).
macro_rules! internal {
    ($($(#[$attr:meta])* mod $name:ident;)*) => {
        $(
            $(#[$attr])*
            #[cfg(feature = "internals")]
            pub mod $name;
            $(#[$attr])*
            #[cfg(not(feature = "internals"))]
            mod $name;
        )*
    };
}

internal! {
    mod app;
    mod color_depth;
    mod component;
    mod components;
    mod editor;
    mod event_loop;
    mod highlight;
    mod markdown;
    mod terminal;
    mod theme;
    mod width;
    mod wrap;
}

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("the terminal UI needs a terminal; for scripts and pipes use `lathe exec PROMPT`")]
    NotATerminal,
    #[error(
        "this terminal (TERM={0}) cannot draw the terminal UI; run it in a terminal that can \
         (xterm, tmux, …), or use `lathe exec PROMPT` here"
    )]
    DumbTerminal(String),
    #[error(transparent)]
    Theme(#[from] theme::ThemeError),
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error("terminal: {0}")]
    Io(#[from] std::io::Error),
}

/// How the UI ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The person quit.
    Quit,
    /// A signal ended it (its number).
    Signal(i32),
}

/// Which session the UI opens.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Start {
    /// A new one.
    #[default]
    New,
    /// This one, with its transcript (`lathe resume ID`, `--continue`).
    Resume(String),
    /// A new one, with the picker of earlier ones open (`lathe resume`).
    Pick,
}

/// How the UI ended, and the session it showed last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub ended: Ended,
    pub session_id: String,
    /// Whether the session holds anything to resume.
    pub has_turns: bool,
    /// What ran in the background, which the end stopped.
    pub stopped: Vec<String>,
}

/// Runs the UI until the person quits or a signal ends it.
pub async fn run(config: &Config, start: Start) -> Result<Outcome, TuiError> {
    // `/resume` goes on with another session, on its own server and model.
    let mut config = std::borrow::Cow::Borrowed(config);
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(TuiError::NotATerminal);
    }
    let term = std::env::var("TERM").ok();
    if color_depth::is_dumb(term.as_deref()) {
        return Err(TuiError::DumbTerminal(term.unwrap_or_default()));
    }
    let depth = color_depth::ColorDepth::from_env();
    highlight::warm_up();
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let user_themes = config.paths.config_file.parent().map(|d| d.join("themes"));
    let theme = theme::Theme::load(&config.theme, user_themes.as_deref(), no_color)?;
    let resume = match &start {
        Start::Resume(id) => Some(id.clone()),
        Start::New | Start::Pick => None,
    };
    // No model named and not the vendor's server: its only model, or the
    // person chooses among those it serves.
    let mut choose = None;
    match crate::launch::choose_model(&config).await? {
        crate::launch::ModelChoice::Chosen(m) if m != config.model => {
            config.to_mut().model = m;
        }
        crate::launch::ModelChoice::Chosen(_) => {}
        crate::launch::ModelChoice::Several(models) => choose = Some(models),
        crate::launch::ModelChoice::Unlisted(why) => {
            let c = config.to_mut();
            c.model = crate::launch::UNNAMED.to_string();
            c.warnings.push(why);
        }
    }
    let launched = spawn_agent(
        &config,
        None,
        crate::launch::Trust {
            resume,
            ..Default::default()
        },
    )?;
    let mut session_id = launched.session_id.clone();
    let (mut app, mut agent) = open(&config, launched, theme.clone(), start == Start::Pick);
    if let Some(models) = choose {
        app.choose_model(models);
    }
    let mut guard = terminal::TerminalGuard::enter()?;
    let result = loop {
        let exit = event_loop::run(&mut app, &mut agent, &mut guard.terminal, depth).await;
        let id = match exit {
            Ok(event_loop::Exit::Switch(id)) => id,
            Ok(event_loop::Exit::Quit) => break Ok(None),
            Ok(event_loop::Exit::Signal(n)) => break Ok(Some(n)),
            Err(e) => break Err(e),
        };
        // The session must open before this one is left.
        if let Err(e) =
            crate::session::store::check(&config.paths.sessions_dir, &id, &config.workspace)
        {
            app.warn(e.to_string());
            continue;
        }
        match crate::launch::config_for_session(&config, &id, &|k| std::env::var(k).ok()) {
            Ok(c) => config = std::borrow::Cow::Owned(c),
            Err(e) => {
                app.warn(format!("that session's model cannot be used: {e}"));
                continue;
            }
        }
        let config: &Config = &config;
        event_loop::shutdown(agent).await;
        let trust = crate::launch::Trust {
            resume: Some(id),
            ..Default::default()
        };
        let launched = match spawn_agent(config, None, trust) {
            Ok(l) => l,
            Err(e) => {
                // Read a moment ago, gone now: a new session instead.
                let mut l = spawn_agent(config, None, crate::launch::Trust::default())?;
                l.warnings
                    .push(format!("that session could not be opened: {e}"));
                l
            }
        };
        session_id = launched.session_id.clone();
        (app, agent) = open(config, launched, theme.clone(), false);
    };
    // What the quit stops, said after the terminal is given back.
    let stopped = app.running_jobs();
    // The commands die before the terminal is given back, whatever ended it.
    event_loop::shutdown(agent).await;
    drop(guard);
    let ended = match result? {
        Some(signal) => Ended::Signal(signal),
        None => Ended::Quit,
    };
    let has_turns =
        crate::session::store::list(&config.paths.sessions_dir, Some(&config.workspace))
            .iter()
            .any(|s| s.id == session_id);
    Ok(Outcome {
        ended,
        session_id,
        has_turns,
        stopped,
    })
}

/// The app over a started agent.
fn open(
    config: &Config,
    launched: crate::launch::Launched,
    theme: theme::Theme,
    pick: bool,
) -> (app::App, crate::agent::AgentHandle) {
    let mut notices = config.warnings.clone();
    notices.extend(launched.warnings);
    // The person's own commands, beside their config.
    let (custom, left_out) = config
        .paths
        .config_file
        .parent()
        .map(|d| components::custom::load(&d.join("commands")))
        .unwrap_or_default();
    notices.extend(left_out);
    let mut custom = custom;
    // The workspace's own commands: offered once trusted, as they are.
    let (ws_commands, left_out) =
        components::custom::load(&config.workspace.join(".lathe").join("commands"));
    notices.extend(left_out);
    let digest = crate::launch::commands_digest(
        &ws_commands
            .iter()
            .map(|c| (c.name.clone(), c.body.clone()))
            .collect::<Vec<_>>(),
    );
    let untrusted_commands = if ws_commands.is_empty() {
        Vec::new()
    } else if crate::launch::commands_trusted(config, &digest) {
        for c in ws_commands {
            if !custom.iter().any(|m| m.name == c.name) {
                custom.push(c);
            }
        }
        Vec::new()
    } else {
        ws_commands
    };
    let skills_found = launched.skills.clone();
    let agents_found = launched.agents.clone();
    let untrusted_agents = launched.agents.untrusted.clone();
    let agents_digest = launched.agents.digest.clone();
    let untrusted_skills = launched.skills.untrusted.clone();
    let skills_digest = launched.skills.digest.clone();
    let untrusted = !launched.untrusted_hooks.is_empty()
        || !launched.untrusted_mcp.is_empty()
        || !untrusted_commands.is_empty()
        || !untrusted_skills.is_empty()
        || !untrusted_agents.is_empty();
    let trust = untrusted.then(|| {
        let config = config.clone();
        let hooks = launched.untrusted_hooks.clone();
        let servers = launched.untrusted_mcp.clone();
        let commands = !untrusted_commands.is_empty();
        app::TrustPrompt {
            hooks: hooks.describe(),
            servers: servers.iter().map(|s| s.describe()).collect(),
            files: hooks.files(),
            commands: untrusted_commands,
            skills: untrusted_skills.clone(),
            agents: untrusted_agents.clone(),
            remember: Box::new(move || {
                if !untrusted_agents.is_empty() {
                    crate::launch::remember_workspace_agents(&config, &agents_digest)?;
                }
                if !untrusted_skills.is_empty() {
                    crate::launch::remember_workspace_skills(&config, &skills_digest)?;
                }
                if !hooks.is_empty() {
                    crate::launch::remember_workspace_hooks(&config, &hooks)?;
                }
                if !servers.is_empty() {
                    crate::launch::remember_workspace_mcp(&config, &servers)?;
                }
                if commands {
                    crate::launch::remember_workspace_commands(&config, &digest)?;
                }
                Ok(())
            }),
        }
    });
    let mut app = app::App::new(
        app::AppInit {
            model: config.model.clone(),
            workspace: config.workspace.clone(),
            approval: config.approval,
            theme,
            notices,
            trust,
            session: app::SessionInit {
                id: launched.session_id,
                dir: Some(config.paths.sessions_dir.clone()),
                prompts: Some(crate::session::prompts::PromptLog::new(
                    &config.paths.data_dir,
                    &config.workspace,
                )),
                resumed: launched.resumed,
                pick,
                caps: config.caps,
            },
        },
        std::time::Instant::now(),
    );
    app.call_back_when_away(config.notify);
    app.custom_commands(custom);
    app.skills(&skills_found, agents_found);
    (app, launched.handle)
}

/// A test's rendered buffer as text, a line per row.
#[cfg(test)]
pub(crate) fn buffer_text(buf: &ratatui::buffer::Buffer) -> String {
    let area = buf.area;
    (area.top()..area.bottom())
        .map(|y| {
            (area.left()..area.right())
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                + "\n"
        })
        .collect()
}
