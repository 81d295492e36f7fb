//! How many colours the terminal shows, and bringing every colour of a
//! frame down to that.
//!
//! Themes and syntax highlighting speak 24-bit colour. `COLORTERM`
//! (`truecolor`, `24bit`) says the terminal shows it; a `TERM` with
//! `256color` gets the nearest of the xterm 256-colour palette; any other
//! terminal (`xterm`, `vt100`, `linux`, `screen`) the nearest of the 16
//! ANSI colours, which every colour terminal has. `TERM=dumb` cannot draw
//! the UI at all (see [`is_dumb`]).
//!
//! The one place besides the theme and the highlighter that reads 24-bit
//! colours, to bring them down.

#![allow(clippy::disallowed_methods)]

use ratatui::buffer::Buffer;
use ratatui::style::Color;

/// The colours a terminal shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorDepth {
    TrueColor,
    Ansi256,
    Ansi16,
}

impl ColorDepth {
    /// From the values of `COLORTERM` and `TERM`.
    pub fn detect(colorterm: Option<&str>, term: Option<&str>) -> Self {
        let colorterm = colorterm.unwrap_or("").to_ascii_lowercase();
        if colorterm == "truecolor" || colorterm == "24bit" {
            return Self::TrueColor;
        }
        let term = term.unwrap_or("").to_ascii_lowercase();
        if term.contains("256color") || term.contains("direct") {
            Self::Ansi256
        } else {
            Self::Ansi16
        }
    }

    /// From this process's environment.
    pub fn from_env() -> Self {
        Self::detect(
            std::env::var("COLORTERM").ok().as_deref(),
            std::env::var("TERM").ok().as_deref(),
        )
    }

    /// `color` as this terminal can show it.
    pub fn reduce(self, color: Color) -> Color {
        let Color::Rgb(r, g, b) = color else {
            return color;
        };
        match self {
            Self::TrueColor => color,
            Self::Ansi256 => Color::Indexed(nearest_256(r, g, b)),
            Self::Ansi16 => nearest_16(r, g, b),
        }
    }

    /// Every colour of a frame, as this terminal can show it.
    pub fn reduce_buffer(self, buf: &mut Buffer) {
        if self == Self::TrueColor {
            return;
        }
        for cell in &mut buf.content {
            cell.fg = self.reduce(cell.fg);
            cell.bg = self.reduce(cell.bg);
            cell.underline_color = self.reduce(cell.underline_color);
        }
    }
}

/// Whether `TERM` names a terminal that cannot draw a full-screen UI.
pub fn is_dumb(term: Option<&str>) -> bool {
    matches!(term, Some("dumb" | "unknown"))
}

fn distance(a: (u8, u8, u8), b: (u8, u8, u8)) -> u32 {
    let d = |x: u8, y: u8| {
        let d = i32::from(x) - i32::from(y);
        d.unsigned_abs().pow(2)
    };
    // Green weighs most to the eye, blue least.
    2 * d(a.0, b.0) + 4 * d(a.1, b.1) + 3 * d(a.2, b.2)
}

/// The nearest colour of the xterm palette: its 6×6×6 cube or its 24
/// greys (the first 16 depend on the terminal's theme, so they are left
/// out).
fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let level = |v: u8| {
        LEVELS
            .iter()
            .enumerate()
            .min_by_key(|(_, l)| (i32::from(**l) - i32::from(v)).unsigned_abs())
            .map_or(0, |(i, _)| i)
    };
    let (ri, gi, bi) = (level(r), level(g), level(b));
    let cube = (LEVELS[ri], LEVELS[gi], LEVELS[bi]);
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    let avg = (u32::from(r) + u32::from(g) + u32::from(b)) / 3;
    let grey_i = (avg.saturating_sub(3) / 10).min(23);
    let grey_v = u8::try_from(8 + 10 * grey_i).unwrap_or(238);
    let grey = (grey_v, grey_v, grey_v);
    let index = if distance((r, g, b), grey) < distance((r, g, b), cube) {
        232 + grey_i as usize
    } else {
        cube_index
    };
    u8::try_from(index).unwrap_or(15)
}

/// The nearest of the 16 ANSI colours (as xterm draws them by default).
fn nearest_16(r: u8, g: u8, b: u8) -> Color {
    const ANSI: [(Color, (u8, u8, u8)); 16] = [
        (Color::Black, (0, 0, 0)),
        (Color::Red, (205, 0, 0)),
        (Color::Green, (0, 205, 0)),
        (Color::Yellow, (205, 205, 0)),
        (Color::Blue, (0, 0, 238)),
        (Color::Magenta, (205, 0, 205)),
        (Color::Cyan, (0, 205, 205)),
        (Color::Gray, (229, 229, 229)),
        (Color::DarkGray, (127, 127, 127)),
        (Color::LightRed, (255, 0, 0)),
        (Color::LightGreen, (0, 255, 0)),
        (Color::LightYellow, (255, 255, 0)),
        (Color::LightBlue, (92, 92, 255)),
        (Color::LightMagenta, (255, 0, 255)),
        (Color::LightCyan, (0, 255, 255)),
        (Color::White, (255, 255, 255)),
    ];
    ANSI.iter()
        .min_by_key(|(_, rgb)| distance((r, g, b), *rgb))
        .map_or(Color::Reset, |(c, _)| *c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_follows_colorterm_then_term() {
        use ColorDepth::*;
        assert_eq!(
            ColorDepth::detect(Some("truecolor"), Some("xterm")),
            TrueColor
        );
        assert_eq!(ColorDepth::detect(Some("24bit"), None), TrueColor);
        assert_eq!(ColorDepth::detect(None, Some("xterm-256color")), Ansi256);
        assert_eq!(ColorDepth::detect(None, Some("tmux-256color")), Ansi256);
        assert_eq!(ColorDepth::detect(None, Some("xterm")), Ansi16);
        assert_eq!(ColorDepth::detect(None, Some("vt100")), Ansi16);
        assert_eq!(ColorDepth::detect(None, None), Ansi16);
        assert!(is_dumb(Some("dumb")));
        assert!(!is_dumb(Some("xterm")));
    }

    #[test]
    fn colours_come_down_to_their_nearest() {
        let d = ColorDepth::Ansi256;
        assert_eq!(d.reduce(Color::Rgb(255, 0, 0)), Color::Indexed(196));
        assert_eq!(d.reduce(Color::Rgb(0, 0, 0)), Color::Indexed(16));
        assert_eq!(d.reduce(Color::Rgb(128, 128, 128)), Color::Indexed(244));
        assert_eq!(d.reduce(Color::Reset), Color::Reset);
        let d = ColorDepth::Ansi16;
        assert_eq!(d.reduce(Color::Rgb(250, 10, 10)), Color::LightRed);
        assert_eq!(d.reduce(Color::Rgb(20, 180, 30)), Color::Green);
        assert_eq!(d.reduce(Color::Rgb(120, 120, 130)), Color::DarkGray);
        assert_eq!(d.reduce(Color::Cyan), Color::Cyan);
        assert_eq!(
            ColorDepth::TrueColor.reduce(Color::Rgb(1, 2, 3)),
            Color::Rgb(1, 2, 3)
        );
        let mut buf = Buffer::empty(ratatui::layout::Rect::new(0, 0, 2, 1));
        buf.content[0].fg = Color::Rgb(255, 0, 0);
        ColorDepth::Ansi16.reduce_buffer(&mut buf);
        assert_eq!(buf.content[0].fg, Color::LightRed);
    }
}
