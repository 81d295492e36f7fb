//! Lathe's engine: everything between a person's message and the model's
//! answer, with no terminal in it.
//!
//! Floors inside the core (a module uses only what stands on a floor
//! below its own; `layout_tests.rs` fails on any other edge, naming it):
//!
//! ```text
//! launch                     wiring a conversation for a front end
//! agent                      the turn loop and the tool-call pipeline
//! agents                     subagent types of the person's and the workspace's
//! mcp     session  skills    MCP tool sources, session records, skills,
//! commands                   the person's own commands
//! tools                      built-in tools
//! config                     settings from files, flags and environment
//! policy  provider           consent rules and hooks, model wires
//! sandbox                    containment
//! secret  fs  front_matter   keys that never print, the one safe open, YAML headers
//! ```
//!
//! One tool call goes resolve ▸ parse ▸ validate ▸ guardrail ▸ authorize ▸
//! execute ▸ after-hooks ▸ normalize (`agent::dispatch`), and the front
//! ends see only `Op`s going in and `AgentEvent`s coming out
//! ([`lathe_protocol`]).
//!
//! What the front ends may use is [`front`]; every other module is the
//! core's own (public only with the `internals` feature, for the core's
//! tests and benchmarks), so a front end that reaches into the core does
//! not compile and unused code is reported.

pub use lathe_protocol as protocol;

/// Declares the core's modules: private, or public with `internals`.
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

#[cfg(test)]
mod layout_tests;

/// Settings the core's property tests share.
#[cfg(test)]
pub(crate) mod props {
    /// `cases` cases in `cargo test`; a longer run sets `PROPTEST_CASES`
    /// (CONTRIBUTING.md).
    pub fn config(cases: u32) -> proptest::test_runner::Config {
        let mut config = proptest::test_runner::Config::default();
        if std::env::var_os("PROPTEST_CASES").is_none() {
            config.cases = cases;
        }
        // Failures are reported with their input, not saved beside the
        // sources.
        config.failure_persistence = None;
        config
    }
}

internal! {
    mod agent;
    mod agents;
    mod commands;
    mod config;
    mod front_matter;
    mod fs;
    mod launch;
    mod mcp;
    mod policy;
    mod provider;
    mod sandbox;
    mod secret;
    mod session;
    mod skills;
    mod tools;
}

/// What a front end (the terminal UI, the headless runner, the binary)
/// needs to start and follow a conversation: nothing more.
pub mod front {
    pub use lathe_protocol as protocol;

    pub mod agent {
        pub use crate::agent::AgentHandle;
    }

    pub mod config {
        pub use crate::config::claude_hooks::{
            ImportError, Imported, appended, import as import_claude_hooks, write_config,
        };
        pub use crate::config::{Config, ConfigError, Overrides};
    }

    pub mod skills {
        pub use crate::skills::{Found, Origin, Shadowed, Skill};
    }

    /// The person's own slash commands (prompt files).
    pub mod commands {
        pub use crate::commands::{Custom, expand, load};
    }

    pub mod agents {
        pub use crate::agents::{AgentType, Found};
    }

    pub mod launch {
        pub use crate::launch::{
            AgentsFound, EditorMcp, LaunchError, Launched, McpLoginError, ModelChoice, SkillsFound,
            Trust, UNNAMED, add_editor_mcp, choose_model, commands_digest, commands_trusted,
            config_for_session, load_config, mcp_logged_in, mcp_login, mcp_logout, mcp_statuses,
            remember_workspace_agents, remember_workspace_commands, remember_workspace_hooks,
            remember_workspace_mcp, remember_workspace_skills, spawn_agent,
        };
    }

    pub mod policy {
        pub use crate::policy::HeadlessApprover;
        pub use crate::policy::editor::{Editor, EditorFiles};
    }

    /// Files the person or the repository names for Lathe to read (an
    /// image, a command): one safe open.
    pub mod fs {
        pub use crate::tools::fs::named::{
            Named, NamedError, read_head_within, read_within, root_for,
        };
    }

    /// The log file, redacted as the session record is.
    pub mod log {
        pub use crate::policy::redactor::log::Scrubbed;
    }

    pub mod sandbox {
        pub use crate::sandbox::{Mode, helper_main};
    }

    pub mod session {
        pub mod store {
            pub use crate::session::store::{SessionInfo, check, list, newest};
        }
        pub mod history {
            pub use crate::session::history::{Rebuilt, Shown, epoch_ms};
        }
        pub mod prompts {
            pub use crate::session::prompts::PromptLog;
        }
        pub mod journal {
            pub use crate::session::journal::{Seen, private_dir};
        }
        pub mod checkpoints {
            pub use crate::session::checkpoints::LARGE_FILE;
        }
    }

    pub mod provider {
        pub use crate::provider::{Effort, ProviderKind, WireApi};

        pub mod image {
            pub use crate::provider::image::{MAX_FILE, sniff};
        }
    }
}
