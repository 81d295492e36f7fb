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
}

impl Listing {
    pub fn new(found: &lathe_core::front::launch::SkillsFound) -> Self {
        let mut listing = Self {
            person: found.found.person.clone(),
            workspace: found.found.workspace.clone(),
            shadowed: found.found.shadowed.clone(),
            trusted: found.untrusted.is_empty(),
            commands: Vec::new(),
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
