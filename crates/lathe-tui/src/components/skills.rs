//! The skills Lathe found: `/NAME` invokes one (the core brings its
//! instructions), `/skills` lists them with where each came from, which
//! wait for the person's trust, and which another of the same name
//! shadows.

use lathe_core::front::skills::{Shadowed, Skill};

/// What `/skills` shows and `/NAME` may invoke.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    person: Vec<Skill>,
    workspace: Vec<Skill>,
    shadowed: Vec<Shadowed>,
    /// Whether the workspace's are offered.
    trusted: bool,
    /// `/name` and its description, for the popup.
    commands: Vec<(String, String)>,
    /// The subagent types (`/agents` lists them).
    agents: lathe_core::front::launch::AgentsFound,
}

impl Listing {
    pub fn new(found: &lathe_core::front::launch::SkillsFound) -> Self {
        let mut listing = Self {
            person: found.found.person.clone(),
            workspace: found.found.workspace.clone(),
            shadowed: found.found.shadowed.clone(),
            trusted: found.untrusted.is_empty(),
            commands: Vec::new(),
            agents: Default::default(),
        };
        listing.offer();
        listing
    }

    /// The workspace's are offered now (the person trusts them).
    pub fn trusted(&mut self) {
        self.trusted = true;
        self.offer();
    }

    fn offer(&mut self) {
        let workspace = self.trusted.then_some(&self.workspace);
        self.commands = self
            .person
            .iter()
            .chain(workspace.into_iter().flatten())
            .filter(|s| {
                let name = format!("/{}", s.name);
                !super::composer::COMMANDS.iter().any(|(c, _)| *c == name)
            })
            .map(|s| (format!("/{}", s.name), one_line(&s.description)))
            .collect();
        self.commands.sort();
    }

    /// The subagent types found.
    pub fn set_agents(&mut self, agents: lathe_core::front::launch::AgentsFound) {
        self.agents = agents;
    }

    /// The workspace's subagent types are offered now.
    pub fn agents_trusted(&mut self) {
        self.agents.untrusted.clear();
    }

    /// What `/agents` says of the subagent types (`None`: there are none).
    pub fn agents_report(&self) -> Option<String> {
        let found = &self.agents.found;
        if found.person.is_empty() && found.workspace.is_empty() {
            return None;
        }
        let waiting = !self.agents.untrusted.is_empty();
        let mut out = String::from("Subagent types (the model runs one with task agent: NAME):");
        for a in found.person.iter().chain(&found.workspace) {
            let held = waiting && found.workspace.iter().any(|w| w.name == a.name);
            out.push_str(&format!(
                "\n  {}{} · {}\n    {}{}",
                a.name,
                if held { " (waiting for /trust)" } else { "" },
                one_line(&a.description),
                crate::protocol::visible::name(&a.file.display().to_string()),
                a.tools
                    .as_ref()
                    .map(|t| format!(" · tools: {}", t.join(", ")))
                    .unwrap_or_default()
            ));
        }
        Some(out)
    }

    /// `/name` and what it does, for each skill `/NAME` invokes.
    pub fn commands(&self) -> &[(String, String)] {
        &self.commands
    }

    /// Whether `line` invokes a skill (`/name` or `/name arguments`).
    pub fn invokes(&self, line: &str) -> bool {
        let name = line.trim().split(char::is_whitespace).next().unwrap_or("");
        self.commands.iter().any(|(c, _)| c == name)
    }

    /// What `/skills` says.
    pub fn report(&self) -> String {
        if self.person.is_empty() && self.workspace.is_empty() {
            return "no skills: put one (a directory with SKILL.md) in ~/.config/lathe/skills/, \
                    ~/.agents/skills/ or ~/.claude/skills/, or the workspace's .agents/skills/"
                .into();
        }
        let mut out = String::new();
        let list = |title: String, skills: &[Skill], out: &mut String| {
            if skills.is_empty() {
                return;
            }
            out.push_str(&title);
            for s in skills {
                out.push_str(&format!(
                    "\n  /{} · {}\n    {}",
                    s.name,
                    one_line(&s.description),
                    crate::protocol::visible::name(&s.dir.display().to_string())
                ));
                if !s.allowed_tools.is_empty() {
                    out.push_str(&format!(
                        "\n    allowed-tools: {} (listed; never more than the approval mode \
                         allows)",
                        s.allowed_tools.join(" ")
                    ));
                }
            }
            out.push('\n');
        };
        list("Your skills:".into(), &self.person, &mut out);
        list(
            if self.trusted {
                "The workspace's skills:".into()
            } else {
                "The workspace's skills, not offered until you trust them (/trust):".into()
            },
            &self.workspace,
            &mut out,
        );
        if !self.shadowed.is_empty() {
            out.push_str("Shadowed by another of the same name:");
            for s in &self.shadowed {
                out.push_str(&format!(
                    "\n  {} · {} (by {})",
                    s.name,
                    crate::protocol::visible::name(&s.dir.display().to_string()),
                    crate::protocol::visible::name(&s.by.display().to_string())
                ));
            }
            out.push('\n');
        }
        out.push_str("The model loads a skill when its description fits; /NAME loads it now.");
        out
    }
}

fn one_line(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::protocol::visible::name(&line).into_owned()
}
