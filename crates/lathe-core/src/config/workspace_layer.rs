//! What a workspace's `.lathe/config.toml` may set: a list of what it is
//! allowed, not of what it is refused. A cloned repository is a stranger;
//! it may make Lathe stricter (a stricter approval mode or sandbox, ask
//! and deny rules, more hidden paths, lower limits, undo kept on) and set
//! plain preferences (the theme, notifications). Everything else is
//! ignored, with one warning that names the keys. A field added to the
//! config file is refused here until it is listed: the destructuring
//! below names every field, so it does not compile until one decides.

use std::path::Path;

use super::defaults;
use super::file::{ApprovalsSection, ConfigFile, LimitsSection, ProviderSection, ShellSection};
use crate::protocol::ApprovalMode;
use crate::provider::StreamLimits;

/// The keys left out, as the warning names them.
#[derive(Default)]
struct Ignored(Vec<String>);

impl Ignored {
    fn key(&mut self, key: &str, set: bool) {
        if set {
            self.0.push(key.to_string());
        }
    }

    /// `asked`, if it is at most `limit` (the person's, or the default);
    /// else nothing, named.
    fn lower<T: PartialOrd + std::fmt::Display + Copy>(
        &mut self,
        key: &str,
        asked: Option<T>,
        limit: T,
    ) -> Option<T> {
        asked.filter(|n| {
            let ok = *n <= limit;
            self.key(&format!("{key} = {n} (more than {limit})"), !ok);
            ok
        })
    }
}

/// The part of workspace layer `ws` a workspace may set, given the
/// person's own layer `user`; what is left out is named in `warnings`.
pub(super) fn allowed(
    ws: ConfigFile,
    user: &ConfigFile,
    path: &Path,
    warnings: &mut Vec<String>,
) -> ConfigFile {
    let ConfigFile {
        provider,
        model,
        approval,
        max_tool_iterations,
        context_window,
        compact_at,
        checkpoints,
        theme,
        notify,
        sandbox,
        openai,
        anthropic,
        shell,
        network,
        limits,
        approvals,
        judge,
        permissions,
        hooks,
        tools,
        models,
        mcp_servers,
    } = ws;
    let mut ignored = Ignored::default();
    // Where the key goes, what is sent and how the model is asked.
    for (name, section) in [("openai", openai), ("anthropic", anthropic)] {
        provider_keys(name, section, &mut ignored);
    }
    if let Some(n) = network {
        for (key, set) in [
            ("max_retries", n.max_retries.is_some()),
            ("retry_base_ms", n.retry_base_ms.is_some()),
            ("connect_timeout_secs", n.connect_timeout_secs.is_some()),
            ("idle_timeout_secs", n.idle_timeout_secs.is_some()),
            ("request_timeout_secs", n.request_timeout_secs.is_some()),
        ] {
            ignored.key(&format!("[network].{key}"), set);
        }
    }
    for (key, set) in [
        ("provider", provider.is_some()),
        ("model", model.is_some()),
        ("[models]", models.is_some()),
        ("[judge]", judge.is_some()),
        ("[tools]", tools.is_some()),
        ("context_window", context_window.is_some()),
        ("compact_at", compact_at.is_some()),
        // Taken out before, under rules of their own (trust; ask and
        // deny only).
        ("[permissions]", permissions.is_some()),
        ("[hooks]", hooks.is_some()),
        ("[mcp_servers]", mcp_servers.is_some()),
    ] {
        ignored.key(key, set);
    }
    let user_approval = user.approval.unwrap_or(ApprovalMode::Ask);
    let approval = approval.filter(|m| {
        let ok = m.rank() <= user_approval.rank();
        ignored.key(
            &format!("approval = \"{m}\" (looser than \"{user_approval}\")"),
            !ok,
        );
        ok
    });
    let user_sandbox = user.sandbox.unwrap_or_default();
    let sandbox = sandbox.filter(|m| {
        let ok = m.strictness() >= user_sandbox.strictness();
        ignored.key(
            &format!("sandbox = \"{m}\" (looser than \"{user_sandbox}\")"),
            !ok,
        );
        ok
    });
    let checkpoints = checkpoints.filter(|on| {
        ignored.key("checkpoints = false (undo stays on)", !on);
        *on
    });
    let allowed = ConfigFile {
        approval,
        sandbox,
        checkpoints,
        max_tool_iterations: ignored.lower(
            "max_tool_iterations",
            max_tool_iterations,
            user.max_tool_iterations
                .unwrap_or(defaults::MAX_TOOL_ITERATIONS),
        ),
        theme,
        notify,
        shell: shell.map(|s| shell_allowed(s, user, &mut ignored)),
        approvals: approvals.map(|a| approvals_allowed(a, user, &mut ignored)),
        limits: limits.map(|l| limits_allowed(l, user, &mut ignored)),
        ..ConfigFile::default()
    };
    if !ignored.0.is_empty() {
        warnings.push(format!(
            "{}: ignored {}; a workspace config may only make Lathe stricter (approval, \
             sandbox, ask and deny rules, hidden paths, lower limits) or set preferences \
             (theme, notify)",
            path.display(),
            ignored.0.join(", ")
        ));
    }
    allowed
}

/// A provider's section: none of it (where the key goes, what is sent,
/// how much the model thinks); each key set is named.
fn provider_keys(name: &str, section: Option<ProviderSection>, ignored: &mut Ignored) {
    let Some(ProviderSection {
        base_url,
        api_key,
        model,
        max_tokens,
        wire_api,
        reasoning_effort,
        reasoning_summary,
        thinking_budget,
        extra_body,
    }) = section
    else {
        return;
    };
    for (key, set) in [
        ("base_url", base_url.is_some()),
        ("api_key", api_key.is_some()),
        ("model", model.is_some()),
        ("max_tokens", max_tokens.is_some()),
        ("wire_api", wire_api.is_some()),
        ("reasoning_effort", reasoning_effort.is_some()),
        ("reasoning_summary", reasoning_summary.is_some()),
        ("thinking_budget", thinking_budget.is_some()),
        ("extra_body", extra_body.is_some()),
    ] {
        ignored.key(&format!("[{name}].{key}"), set);
    }
}

/// `[shell]`: lower limits and more hidden paths.
fn shell_allowed(s: ShellSection, user: &ConfigFile, ignored: &mut Ignored) -> ShellSection {
    let ShellSection {
        timeout_secs,
        max_background,
        network,
        writable_roots,
        env_allow,
        hidden_paths,
        visible_paths,
        namespaces,
        allow_sockets,
    } = s;
    for (key, set) in [
        ("[shell].network", network.is_some()),
        ("[shell].writable_roots", writable_roots.is_some()),
        ("[shell].env_allow", env_allow.is_some()),
        ("[shell].visible_paths", visible_paths.is_some()),
        ("[shell].namespaces", namespaces.is_some()),
        ("[shell].allow_sockets", allow_sockets.is_some()),
    ] {
        ignored.key(key, set);
    }
    let mine = user.shell.clone().unwrap_or_default();
    ShellSection {
        timeout_secs: ignored.lower(
            "[shell].timeout_secs",
            timeout_secs,
            mine.timeout_secs.unwrap_or(defaults::SHELL_TIMEOUT_SECS),
        ),
        max_background: ignored.lower(
            "[shell].max_background",
            max_background,
            mine.max_background
                .unwrap_or(defaults::MAX_BACKGROUND as u64),
        ),
        // Hiding more is stricter.
        hidden_paths,
        ..ShellSection::default()
    }
}

/// `[approvals]`: grants that lapse sooner.
fn approvals_allowed(
    a: ApprovalsSection,
    user: &ConfigFile,
    ignored: &mut Ignored,
) -> ApprovalsSection {
    let mine = user.approvals.clone().unwrap_or_default();
    ApprovalsSection {
        grant_ttl_secs: ignored.lower(
            "[approvals].grant_ttl_secs",
            a.grant_ttl_secs,
            mine.grant_ttl_secs.unwrap_or(defaults::GRANT_TTL_SECS),
        ),
        grant_max_secs: ignored.lower(
            "[approvals].grant_max_secs",
            a.grant_max_secs,
            mine.grant_max_secs.unwrap_or(defaults::MAX_GRANT_TTL_SECS),
        ),
    }
}

/// `[limits]`: lower ones.
fn limits_allowed(l: LimitsSection, user: &ConfigFile, ignored: &mut Ignored) -> LimitsSection {
    let mine = user.limits.clone().unwrap_or_default();
    let default = StreamLimits::default();
    let mib = |n: usize| u64::try_from(n / StreamLimits::MIB).unwrap_or(u64::MAX);
    LimitsSection {
        response_text_mib: ignored.lower(
            "[limits].response_text_mib",
            l.response_text_mib,
            mine.response_text_mib.unwrap_or(mib(default.text)),
        ),
        response_reasoning_mib: ignored.lower(
            "[limits].response_reasoning_mib",
            l.response_reasoning_mib,
            mine.response_reasoning_mib
                .unwrap_or(mib(default.reasoning)),
        ),
        response_arguments_mib: ignored.lower(
            "[limits].response_arguments_mib",
            l.response_arguments_mib,
            mine.response_arguments_mib
                .unwrap_or(mib(default.arguments)),
        ),
        // A cap the person has not set is no cap: any the workspace sets
        // is lower.
        session_usd: ignored.lower(
            "[limits].session_usd",
            l.session_usd,
            mine.session_usd.unwrap_or(f64::INFINITY),
        ),
        turn_usd: ignored.lower(
            "[limits].turn_usd",
            l.turn_usd,
            mine.turn_usd.unwrap_or(f64::INFINITY),
        ),
        turn_tokens: ignored.lower(
            "[limits].turn_tokens",
            l.turn_tokens,
            mine.turn_tokens.unwrap_or(u64::MAX),
        ),
        task_usd: ignored.lower(
            "[limits].task_usd",
            l.task_usd,
            mine.task_usd.unwrap_or(f64::INFINITY),
        ),
        task_tokens: ignored.lower(
            "[limits].task_tokens",
            l.task_tokens,
            mine.task_tokens.unwrap_or(u64::MAX),
        ),
        repeat_calls: ignored.lower(
            "[limits].repeat_calls",
            l.repeat_calls,
            mine.repeat_calls
                .unwrap_or(crate::config::defaults::REPEAT_CALLS),
        ),
    }
}
