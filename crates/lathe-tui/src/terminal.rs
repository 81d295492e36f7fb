//! Taking over the terminal and always giving it back.
//!
//! `TerminalGuard::enter` switches to raw mode and the alternate screen,
//! turns on bracketed paste and mouse reporting (wheel scrolling; hold
//! Shift to select text), and asks for disambiguated keys where the
//! terminal supports them (so Shift+Enter can be told from Enter). The
//! guard restores everything when dropped, and a panic hook does the same
//! before the panic message prints, so the shell is never left broken.

use std::io::{self, Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
    supports_keyboard_enhancement,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

static ENHANCED_KEYS: AtomicBool = AtomicBool::new(false);
static ACTIVE: AtomicBool = AtomicBool::new(false);

pub type Tui = Terminal<CrosstermBackend<Stdout>>;

pub struct TerminalGuard {
    pub terminal: Tui,
}

/// Raw mode, the alternate screen, bracketed paste, mouse reporting and
/// disambiguated keys (where supported); undone by [`restore`].
pub fn setup() -> io::Result<()> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut out = io::stdout();
    // Focus events: Lathe calls the person back when they are away.
    if let Err(e) = execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableFocusChange
    ) {
        restore();
        return Err(e);
    }
    if !MOUSE_OFF.load(Ordering::SeqCst)
        && let Err(e) = execute!(out, EnableMouseCapture)
    {
        restore();
        return Err(e);
    }
    if supports_keyboard_enhancement().unwrap_or(false)
        && execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )
        .is_ok()
    {
        ENHANCED_KEYS.store(true, Ordering::SeqCst);
    }
    Ok(())
}

impl TerminalGuard {
    pub fn enter() -> io::Result<Self> {
        install_panic_hook();
        setup()?;
        let out = io::stdout();
        let mut terminal = match Terminal::new(CrosstermBackend::new(out)) {
            Ok(t) => t,
            Err(e) => {
                restore();
                return Err(e);
            }
        };
        terminal.hide_cursor()?;
        terminal.clear()?;
        Ok(Self { terminal })
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// The person turned mouse reporting off (Ctrl-S), so the terminal's own
/// selection works; it stays off across suspends and editors.
static MOUSE_OFF: AtomicBool = AtomicBool::new(false);

/// Turns mouse reporting on or off; returns whether it is now on.
pub fn toggle_mouse() -> io::Result<bool> {
    let on = MOUSE_OFF.load(Ordering::SeqCst);
    MOUSE_OFF.store(!on, Ordering::SeqCst);
    let mut out = io::stdout();
    if on {
        execute!(out, EnableMouseCapture)?;
    } else {
        execute!(out, DisableMouseCapture)?;
    }
    Ok(on)
}

/// Puts the terminal back the way the shell expects it. Safe to call twice.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    if ENHANCED_KEYS.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        out,
        DisableMouseCapture,
        DisableBracketedPaste,
        DisableFocusChange,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}
