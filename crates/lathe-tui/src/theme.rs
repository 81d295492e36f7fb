//! Colours: the only place the UI gets them from.
//!
//! A theme is a TOML file (themes/dark.toml and themes/light.toml are built
//! in; `$LATHE_HOME/themes/NAME.toml` may add or override one) naming a
//! colour for each role and a syntect theme for code. With `NO_COLOR` set,
//! every role is the terminal's default colour and code is not highlighted;
//! emphasis (bold, reverse) still marks what matters.
#![allow(clippy::disallowed_methods)]

use std::collections::HashMap;
use std::path::Path;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

const DARK: &str = include_str!("../themes/dark.toml");
const LIGHT: &str = include_str!("../themes/light.toml");

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThemeError {
    #[error("unknown theme `{0}` (built in: dark, light)")]
    Unknown(String),
    #[error("theme {name}: {message}")]
    Invalid { name: String, message: String },
}

#[derive(Deserialize)]
struct ThemeFile {
    name: String,
    syntax_theme: String,
    colors: HashMap<String, String>,
}

macro_rules! roles {
    ($($role:ident),+ $(,)?) => {
        /// The colour of each role.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct Palette {
            $(pub $role: Color,)+
        }

        impl Palette {
            fn from_map(name: &str, map: &HashMap<String, String>) -> Result<Self, ThemeError> {
                Ok(Self {
                    $($role: {
                        let text = map.get(stringify!($role)).ok_or_else(|| ThemeError::Invalid {
                            name: name.to_string(),
                            message: format!("missing colour `{}`", stringify!($role)),
                        })?;
                        parse_color(text).ok_or_else(|| ThemeError::Invalid {
                            name: name.to_string(),
                            message: format!("`{}` = \"{text}\" is not a colour", stringify!($role)),
                        })?
                    },)+
                })
            }

            fn plain() -> Self {
                Self { $($role: Color::Reset,)+ }
            }
        }
    };
}

roles!(
    text,
    muted,
    accent,
    user,
    assistant,
    border,
    selection,
    ok,
    error,
    warning,
    denied,
    heading,
    link,
    inline_code,
    code_bg,
    diff_add,
    diff_add_bg,
    diff_add_word_bg,
    diff_del,
    diff_del_bg,
    diff_del_word_bg,
    status_fg,
    status_bg,
);

/// A loaded theme.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    pub name: String,
    /// The syntect theme for code, or `None` when colour is off.
    pub syntax_theme: Option<String>,
    pub colors: Palette,
}

impl Theme {
    /// Loads theme `name`: from `user_dir` when it has `NAME.toml`, else a
    /// built-in one. `no_color` turns every colour off.
    pub fn load(name: &str, user_dir: Option<&Path>, no_color: bool) -> Result<Self, ThemeError> {
        if no_color {
            return Ok(Self::plain());
        }
        let user = user_dir
            .map(|d| d.join(format!("{name}.toml")))
            .and_then(|p| std::fs::read_to_string(p).ok());
        let text = match (user.as_deref(), name) {
            (Some(t), _) => t,
            (None, "dark") => DARK,
            (None, "light") => LIGHT,
            (None, other) => return Err(ThemeError::Unknown(other.to_string())),
        };
        Self::parse(name, text)
    }

    /// The built-in dark theme.
    pub fn dark() -> Self {
        Self::parse("dark", DARK).unwrap_or_else(|_| Self::plain())
    }

    /// No colours at all (`NO_COLOR`).
    pub fn plain() -> Self {
        Self {
            name: "no-color".into(),
            syntax_theme: None,
            colors: Palette::plain(),
        }
    }

    fn parse(name: &str, text: &str) -> Result<Self, ThemeError> {
        let file: ThemeFile = toml::from_str(text).map_err(|e| ThemeError::Invalid {
            name: name.to_string(),
            message: e.message().to_string(),
        })?;
        Ok(Self {
            colors: Palette::from_map(&file.name, &file.colors)?,
            name: file.name,
            syntax_theme: Some(file.syntax_theme),
        })
    }

    pub fn has_color(&self) -> bool {
        self.syntax_theme.is_some()
    }

    pub fn fg(&self, color: Color) -> Style {
        Style::default().fg(color)
    }

    pub fn text(&self) -> Style {
        self.fg(self.colors.text)
    }

    pub fn muted(&self) -> Style {
        self.fg(self.colors.muted)
    }

    pub fn accent(&self) -> Style {
        self.fg(self.colors.accent)
    }

    pub fn bold(&self, color: Color) -> Style {
        self.fg(color).add_modifier(Modifier::BOLD)
    }

    pub fn border(&self) -> Style {
        self.fg(self.colors.border)
    }

    /// The selected row of a list: reversed when there is no colour.
    pub fn selected(&self) -> Style {
        if self.has_color() {
            Style::default().bg(self.colors.selection)
        } else {
            Style::default().add_modifier(Modifier::REVERSED)
        }
    }

    pub fn status_bar(&self) -> Style {
        if self.has_color() {
            Style::default()
                .fg(self.colors.status_fg)
                .bg(self.colors.status_bg)
        } else {
            Style::default().add_modifier(Modifier::REVERSED)
        }
    }

    /// Converts an sRGB colour (syntect's) to a terminal colour.
    pub fn rgb(r: u8, g: u8, b: u8) -> Color {
        Color::Rgb(r, g, b)
    }
}

/// `#rrggbb`, or a terminal colour name.
fn parse_color(text: &str) -> Option<Color> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix('#') {
        if hex.len() != 6 {
            return None;
        }
        let v = u32::from_str_radix(hex, 16).ok()?;
        let [_, r, g, b] = v.to_be_bytes();
        return Some(Color::Rgb(r, g, b));
    }
    t.parse::<Color>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_themes_load_completely() {
        for name in ["dark", "light"] {
            let t = Theme::load(name, None, false).unwrap();
            assert_eq!(t.name, name);
            assert!(t.syntax_theme.is_some());
            assert_ne!(t.colors.text, Color::Reset);
        }
        assert_eq!(
            Theme::load("solarized", None, false),
            Err(ThemeError::Unknown("solarized".into()))
        );
    }

    #[test]
    fn no_color_turns_every_colour_off() {
        let t = Theme::load("dark", None, true).unwrap();
        assert_eq!(t.colors, Palette::plain());
        assert!(!t.has_color());
        assert_eq!(t.selected().add_modifier, Modifier::REVERSED);
    }

    #[test]
    fn user_themes_override_and_bad_ones_are_reported() {
        let d = tempfile::tempdir().unwrap();
        let custom = DARK
            .replace("name = \"dark\"", "name = \"mine\"")
            .replace("#d8dee9", "white");
        std::fs::write(d.path().join("mine.toml"), custom).unwrap();
        let t = Theme::load("mine", Some(d.path()), false).unwrap();
        assert_eq!(t.colors.text, Color::White);
        std::fs::write(d.path().join("bad.toml"), DARK.replace("#88c0d0", "#12")).unwrap();
        let err = Theme::load("bad", Some(d.path()), false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not a colour"), "{err}");
    }

    #[test]
    fn colours_parse_from_hex_and_names() {
        assert_eq!(parse_color("#ff8000"), Some(Color::Rgb(255, 128, 0)));
        assert_eq!(parse_color("lightred"), Some(Color::LightRed));
        assert_eq!(parse_color("#ff80"), None);
    }
}
