//! The `lathe` binary: parses the command line, loads the configuration,
//! sets up logging (a daily file under the data directory, filtered by
//! `RUST_LOG` or `LATHE_LOG`; never stdout), and hands over to a front end.
//! `anyhow` lives only here, at the edge.

mod acp;
mod cli;
mod exec;
mod say;

use std::io::{IsTerminal, Read};
use std::path::Path;
use std::process::ExitCode;

use crate::cli::{Cli, Command, ExecArgs};
use crate::exec::{EXIT_USAGE, ExecOptions};
use crate::say::say;
use anyhow::Context;
use clap::Parser;
use lathe_core::front::{config, launch, policy, protocol, provider, sandbox, session};
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// A line on stdout; a reader that went away (`lathe sessions | head`)
/// ends the listing quietly, as for any Unix tool.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write;
        let line = crate::say::shown(&format!($($arg)*));
        if let Err(e) = writeln!(std::io::stdout().lock(), "{line}") {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            return Err(e.into());
        }
    }};
}

fn main() -> ExitCode {
    // The sandbox helper modes run before anything else starts.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(code) = crate::sandbox::helper_main(&args) {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let cli = Cli::parse();
    let code = match run(cli) {
        Ok(code) => code,
        Err(e) => {
            say!("lathe: {e:#}");
            EXIT_USAGE
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn run(mut cli: Cli) -> anyhow::Result<i32> {
    if cli.continue_ && cli.command.is_some() {
        anyhow::bail!(
            "--continue before a subcommand means the terminal UI; for headless use `lathe exec --continue PROMPT`"
        );
    }
    let args = match cli.command.take() {
        None if cli.continue_ => return run_tui(&cli, Continue::Newest),
        None => return run_tui(&cli, Continue::No),
        Some(Command::Resume { id: Some(id) }) => return run_tui(&cli, Continue::Id(id)),
        Some(Command::Resume { id: None }) => return run_tui(&cli, Continue::Pick),
        Some(Command::Mcp(mcp)) => return run_mcp(&cli, mcp),
        Some(Command::Acp) => return run_acp(&cli),
        Some(Command::Hooks(hooks)) => return run_hooks(&cli, hooks),
        Some(Command::Sessions { json, all }) => return run_sessions(&cli, json, all),
        Some(Command::Exec(args)) => args,
    };
    let prompt = read_prompt(&args)?;
    // A session to go on with brings its own server and model: the key
    // the default one needs is not asked for yet.
    let resuming = args.continue_ || args.resume.is_some();
    let overrides = crate::config::Overrides {
        no_model: resuming,
        ..cli.common.overrides()
    };
    let config = launch::load_config(&overrides, &|k| std::env::var(k).ok())?;
    let resume = match (&args.resume, args.continue_) {
        (Some(id), _) => Some(id.clone()),
        (None, true) => Some(crate::session::store::newest(
            &config.paths.sessions_dir,
            &config.workspace,
        )?),
        (None, false) => None,
    };
    // A session goes on where it was served, by the model it used.
    let config = match &resume {
        Some(id) => crate::launch::config_for_session(&config, id, &|k| std::env::var(k).ok())?,
        None => config,
    };
    for warning in &config.warnings {
        say!("lathe: warning: {warning}");
    }
    let _log_guard = init_logging(&config.paths.logs_dir);
    tracing::info!(
        provider = %config.provider,
        model = %config.model,
        base_url = %config.base_url,
        approval = %config.approval,
        workspace = %config.workspace.display(),
        "lathe exec starting"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // Images are the person's files, named from where they stand.
    let cwd = std::env::current_dir().context("the current directory")?;
    let mut images = Vec::new();
    for path in &args.images {
        let path = cwd.join(path);
        let shown = format!("--image {}", path.display());
        // Named in the workspace, it must really be there (a link in a
        // repository cannot hand over a picture of the person's home).
        let root = lathe_core::front::fs::root_for(&path, &config.workspace);
        let (head, _) = lathe_core::front::fs::read_head_within(&path, &root, &shown, 64)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        // By its first bytes: PNG, JPEG, GIF or WebP, whatever its name.
        if crate::provider::image::sniff(&head.bytes).is_none() {
            anyhow::bail!(
                "--image {}: not an image the models take (PNG, JPEG, GIF or WebP)",
                path.display()
            );
        }
        images.push(path);
    }
    let opts = ExecOptions {
        json: args.json,
        prompt,
        trust_workspace_hooks: args.trust_workspace_hooks,
        trust_workspace_mcp: args.trust_workspace_mcp,
        trust_workspace_mcp_env: args.trust_workspace_mcp_env,
        trust_workspace_skills: args.trust_workspace_skills,
        trust_workspace_agents: args.trust_workspace_agents,
        resume,
        images,
        deny_exit_code: args.deny_exit_code,
        plan: args.plan,
    };
    Ok(runtime.block_on(exec::run(&config, opts))?)
}

/// `lathe acp`: an editor's agent on stdin/stdout until it closes them.
/// Nothing but the protocol reaches stdout; logs go to the log file.
fn run_acp(cli: &Cli) -> anyhow::Result<i32> {
    let overrides = cli.common.overrides();
    // Where the logs go: the data directory does not depend on the
    // workspace, which each session names.
    // A config that does not load still lets the editor connect: each
    // session it opens is refused with the config's error, which the
    // editor shows (stderr alone is seldom seen).
    let _log_guard = match launch::load_config(
        &crate::config::Overrides {
            no_model: true,
            ..overrides.clone()
        },
        &|k| std::env::var(k).ok(),
    ) {
        Ok(config) => init_logging(&config.paths.logs_dir),
        Err(e) => {
            say!("lathe: {e}");
            None
        }
    };
    tracing::info!("lathe acp starting");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime
        .block_on(acp::serve(overrides))
        .map_err(|e| anyhow::anyhow!("the editor's connection failed: {e}"))?;
    // Whatever the sessions left running ends with the process.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    Ok(0)
}

/// `lathe hooks import`: Claude Code's hooks into the person's config,
/// as a diff they approve.
fn run_hooks(cli: &Cli, args: crate::cli::HooksArgs) -> anyhow::Result<i32> {
    let crate::cli::HooksCommand::Import { from, yes } = args.command;
    let overrides = crate::config::Overrides {
        no_model: true,
        ..cli.common.overrides()
    };
    let config = launch::load_config(&overrides, &|k| std::env::var(k).ok())?;
    let from = match from {
        Some(f) => f,
        None => std::env::var_os("HOME")
            .map(|h| Path::new(&h).join(".claude/settings.json"))
            .context("no home directory: name the file with --from")?,
    };
    let text = std::fs::read_to_string(&from)
        .with_context(|| format!("cannot read {}", from.display()))?;
    let imported = config::import_claude_hooks(&text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", from.display()))?;
    for s in &imported.skipped {
        say!("lathe: left out: {s}");
    }
    if imported.count == 0 {
        out!("no hooks to bring from {}", from.display());
        return Ok(0);
    }
    let path = &config.paths.config_file;
    let old = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => anyhow::bail!("cannot read {}: {e}", path.display()),
    };
    let (new, diff) = config::appended(path, &old, &imported.toml).map_err(anyhow::Error::msg)?;
    out!("{diff}");
    if !yes {
        eprint!(
            "Add these {} hooks to {}? [y/N] ",
            imported.count,
            path.display()
        );
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            say!("lathe: nothing written");
            return Ok(1);
        }
    }
    config::write_config(path, &new).map_err(anyhow::Error::msg)?;
    say!(
        "lathe: {} hooks added to {}; tool-call hooks see Lathe's tool names and arguments \
         (`exec_shell` takes `command`, the file tools `path`)",
        imported.count,
        path.display()
    );
    Ok(0)
}

/// `lathe sessions`: the sessions of this workspace (or all), newest first.
fn run_sessions(cli: &Cli, json: bool, all: bool) -> anyhow::Result<i32> {
    let overrides = crate::config::Overrides {
        no_model: true,
        ..cli.common.overrides()
    };
    let config = launch::load_config(&overrides, &|k| std::env::var(k).ok())?;
    let sessions = crate::session::store::list(
        &config.paths.sessions_dir,
        (!all).then_some(config.workspace.as_path()),
    );
    if json {
        for s in &sessions {
            out!("{}", serde_json::to_string(s)?);
        }
        return Ok(0);
    }
    if sessions.is_empty() {
        out!("no sessions in {}", config.workspace.display());
        return Ok(0);
    }
    for s in &sessions {
        let when = |ms: u64| {
            humantime::format_rfc3339_seconds(
                std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms),
            )
            .to_string()
        };
        let prompt: String = s.first_prompt.chars().take(60).collect();
        // What it cost, when its model's prices are known.
        let cost = s
            .usage
            .cost_usd
            .map(|c| {
                let others = crate::protocol::budget::others_words(&s.by_agent)
                    .map(|o| format!(" (of which {o})"))
                    .unwrap_or_default();
                format!("  {}{others}", crate::protocol::humanize::dollars(c))
            })
            .unwrap_or_default();
        out!(
            "{}  {}  {} turn{}  {}{cost}  {prompt}",
            s.id,
            when(s.last_activity),
            s.turns,
            if s.turns == 1 { "" } else { "s" },
            s.model,
        );
        if all {
            out!("    {}", s.workspace.display());
        }
    }
    Ok(0)
}

/// `lathe mcp list|login|logout`.
fn run_mcp(cli: &Cli, args: crate::cli::McpArgs) -> anyhow::Result<i32> {
    let overrides = crate::config::Overrides {
        no_model: true,
        ..cli.common.overrides()
    };
    let config = launch::load_config(&overrides, &|k| std::env::var(k).ok())?;
    for warning in &config.warnings {
        say!("lathe: warning: {warning}");
    }
    let _log_guard = init_logging(&config.paths.logs_dir);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let (json, trust_workspace_mcp, trust_workspace_mcp_env) = match args.command {
        crate::cli::McpCommand::List {
            json,
            trust_workspace_mcp,
            trust_workspace_mcp_env,
        } => (json, trust_workspace_mcp, trust_workspace_mcp_env),
        crate::cli::McpCommand::Login { name } => {
            let tell = |line: String| {
                use std::io::Write;
                let _ = writeln!(std::io::stdout().lock(), "{}", crate::say::shown(&line));
            };
            return match runtime.block_on(launch::mcp_login(&config, &name, &tell)) {
                Ok(()) => {
                    out!("logged in to {name}");
                    Ok(0)
                }
                Err(e) => {
                    say!("lathe: {e}");
                    Ok(1)
                }
            };
        }
        crate::cli::McpCommand::Logout { name } => {
            return match launch::mcp_logout(&config, &name) {
                Ok(true) => {
                    out!("logged out of {name}");
                    Ok(0)
                }
                Ok(false) => {
                    out!("not logged in to {name}");
                    Ok(0)
                }
                Err(e) => {
                    say!("lathe: {e}");
                    Ok(1)
                }
            };
        }
    };
    let statuses = runtime.block_on(crate::launch::mcp_statuses(
        &config,
        trust_workspace_mcp,
        &trust_workspace_mcp_env,
    ));
    if statuses.is_empty() {
        if !json {
            out!(
                "no MCP servers: add one under [mcp_servers.NAME] in {}, or in the workspace's .mcp.json",
                config.paths.config_file.display()
            );
        }
        return Ok(0);
    }
    for s in &statuses {
        if json {
            out!("{}", serde_json::to_string(s)?);
        } else {
            let login = match launch::mcp_logged_in(&config, &s.server) {
                Some(true) if s.state != crate::protocol::McpState::NeedsLogin => " · logged in",
                _ => "",
            };
            let how = if s.endpoint.starts_with("http://") || s.endpoint.starts_with("https://") {
                "http"
            } else {
                "stdio"
            };
            out!(
                "{} ({}) {how} {}{login}",
                s.server,
                s.state.as_str(),
                s.endpoint
            );
            if let Some(m) = &s.message {
                out!("  {m}");
            }
            for t in &s.tools {
                out!("  {t}");
            }
        }
    }
    let failed = statuses
        .iter()
        .any(|s| s.state == crate::protocol::McpState::Failed);
    Ok(i32::from(failed))
}

/// Which session the terminal UI opens.
enum Continue {
    No,
    Newest,
    Id(String),
    Pick,
}

/// `lathe` with no subcommand: the terminal UI. Exits 0 when the person
/// quits, and says how to come back to the session.
fn run_tui(cli: &Cli, which: Continue) -> anyhow::Result<i32> {
    // A session to go on with brings its own server and model: the key
    // the default one needs is not asked for yet.
    let overrides = crate::config::Overrides {
        no_model: matches!(which, Continue::Newest | Continue::Id(_) | Continue::Pick),
        ..cli.common.overrides()
    };
    let config = launch::load_config(&overrides, &|k| std::env::var(k).ok())?;
    let start = match which {
        Continue::No => lathe_tui::Start::New,
        Continue::Pick => lathe_tui::Start::Pick,
        Continue::Id(id) => {
            crate::session::store::check(&config.paths.sessions_dir, &id, &config.workspace)?;
            lathe_tui::Start::Resume(id)
        }
        Continue::Newest => lathe_tui::Start::Resume(crate::session::store::newest(
            &config.paths.sessions_dir,
            &config.workspace,
        )?),
    };
    // A session goes on where it was served, by the model it used.
    let config = match &start {
        lathe_tui::Start::Resume(id) => {
            crate::launch::config_for_session(&config, id, &|k| std::env::var(k).ok())?
        }
        _ => config,
    };
    let _log_guard = init_logging(&config.paths.logs_dir);
    tracing::info!(
        provider = %config.provider,
        model = %config.model,
        approval = %config.approval,
        workspace = %config.workspace.display(),
        "lathe starting"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    match runtime.block_on(lathe_tui::run(&config, start)) {
        Ok(outcome) => {
            for job in &outcome.stopped {
                out!("Stopped in the background: {job}");
            }
            if outcome.has_turns {
                out!("{}", resume_hint(&outcome.session_id, &config.workspace));
            }
            Ok(match outcome.ended {
                lathe_tui::Ended::Quit => 0,
                lathe_tui::Ended::Signal(n) => 128 + n,
            })
        }
        Err(
            e @ (lathe_tui::TuiError::NotATerminal
            | lathe_tui::TuiError::DumbTerminal(_)
            | lathe_tui::TuiError::Theme(_)
            | lathe_tui::TuiError::Launch(crate::launch::LaunchError::Session(_))),
        ) => {
            say!("lathe: {e}");
            Ok(EXIT_USAGE)
        }
        Err(e) => {
            tracing::error!(error = %e, "the terminal UI failed");
            say!("lathe: {e}");
            Ok(1)
        }
    }
}

/// What the terminal shows after the UI: the session, and the command
/// that reopens it (from here: with `-C` when the workspace is elsewhere).
fn resume_hint(session_id: &str, workspace: &Path) -> String {
    let here = std::env::current_dir()
        .ok()
        .and_then(|d| d.canonicalize().ok());
    let dir = if here.as_deref() == Some(workspace) {
        String::new()
    } else {
        let shown = workspace.to_string_lossy();
        let quoted =
            shlex::try_quote(&shown).map_or_else(|_| shown.to_string(), |q| q.into_owned());
        format!(" -C {quoted}")
    };
    // A line each, so an id is never cut by the terminal's wrapping.
    format!(
        "Session {session_id} saved.\nResume it with: lathe resume {session_id}{dir}\n\
         (or lathe --continue{dir}: the workspace's newest session)"
    )
}

fn read_prompt(args: &ExecArgs) -> anyhow::Result<String> {
    match args.prompt.as_deref() {
        Some("-") => {}
        Some(p) => {
            // `git diff | lathe exec "review this"`: the piped text goes
            // along. Only from a pipe or a file: a terminal, /dev/null or a
            // socket is not read.
            let prompt = non_empty(p.to_string())?;
            if !stdin_is_piped() {
                return Ok(prompt);
            }
            let mut piped = Vec::new();
            std::io::stdin()
                .take(exec::MAX_PIPED_INPUT + 1)
                .read_to_end(&mut piped)
                .context("cannot read the piped input")?;
            return Ok(exec::prompt_with_input(&prompt, &piped));
        }
        None if !std::io::stdin().is_terminal() => {}
        None => {
            anyhow::bail!("a prompt is required: lathe exec \"what to do\" (or `-` to read stdin)")
        }
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("cannot read the prompt from stdin")?;
    non_empty(text)
}

/// Whether stdin holds input to send along: a file, or a pipe that has
/// something to read (or its end) within a moment. A pipe a parent keeps
/// open and never writes to (an IDE, a CI runner) is not waited on.
fn stdin_is_piped() -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use nix::sys::stat::{SFlag, fstat};
    use std::os::fd::AsFd;
    let stdin = std::io::stdin();
    let Ok(st) = fstat(&stdin) else {
        return false;
    };
    match SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT {
        SFlag::S_IFREG => true,
        SFlag::S_IFIFO => {
            let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
            poll(&mut fds, PollTimeout::from(1000u16)).is_ok_and(|n| n > 0)
        }
        _ => false,
    }
}

fn non_empty(prompt: String) -> anyhow::Result<String> {
    anyhow::ensure!(!prompt.trim().is_empty(), "the prompt is empty");
    Ok(prompt)
}

/// Logs to `<logs_dir>/lathe.log.YYYY-MM-DD`. Without a writable directory
/// Lathe runs without a log rather than failing.
fn init_logging(logs_dir: &Path) -> Option<WorkerGuard> {
    // Logs stay their owner's: the directory is closed to everyone else.
    if let Err(e) = crate::session::journal::private_dir(logs_dir) {
        say!("lathe: warning: no log file ({}: {e})", logs_dir.display());
        return None;
    }
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix("lathe.log")
        .max_log_files(14)
        .build(logs_dir)
        .map_err(|e| say!("lathe: warning: no log file ({}: {e})", logs_dir.display()))
        .ok()?;
    // Every line passes the secret matcher before it is kept. The queue
    // holds 4,096 lines: the crate's default (128,000) is allocated and
    // touched whole at start, 6 MB of resident memory for nothing.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(4_096)
        .finish(lathe_core::front::log::Scrubbed::new(appender));
    let filter = std::env::var("LATHE_LOG")
        .ok()
        .and_then(|v| EnvFilter::try_new(v).ok())
        .or_else(|| EnvFilter::try_from_default_env().ok())
        .unwrap_or_else(|| EnvFilter::new("lathe=info,warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .init();
    Some(guard)
}
