//! The person's own commands (`commands/` beside the config, and the
//! workspace's once trusted): read by the core, offered in the `/` popup.

pub use lathe_core::front::commands::{Custom, expand};

/// The commands in `dir`, those named like the terminal's own left out.
pub fn load(dir: &std::path::Path) -> (Vec<Custom>, Vec<String>) {
    let reserved: Vec<&str> = super::composer::COMMANDS.iter().map(|(c, _)| *c).collect();
    let (mut commands, warnings) = lathe_core::front::commands::load(dir, &reserved);
    // The popup's column: 80 cells, whatever the characters' width.
    for c in &mut commands {
        c.about = crate::width::truncate(&c.about, 80).into_owned();
    }
    (commands, warnings)
}
