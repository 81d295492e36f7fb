//! The person's own commands (`commands/` beside the config, and the
//! workspace's once trusted): read by the core, offered in the `/` popup.

pub use lathe_core::front::commands::{Custom, expand};

/// The commands in `dir`, those named like the terminal's own left out.
pub fn load(dir: &std::path::Path) -> (Vec<Custom>, Vec<String>) {
    let reserved: Vec<&str> = super::composer::COMMANDS.iter().map(|(c, _)| *c).collect();
    lathe_core::front::commands::load(dir, &reserved)
}
