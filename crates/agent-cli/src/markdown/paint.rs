//! The ANSI back end of the Markdown layout: the styled lines `agent_tui::markdown` lays out,
//! painted as terminal text for the scrollback (plain when colours are off).

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

/// `line` as text, its styles drawn when `color`.
pub(super) fn line(line: &Line<'_>, color: bool) -> String {
    line.spans
        .iter()
        .map(|span| paint(&span.content, line.style.patch(span.style), color))
        .collect()
}

/// `text` in `style`, with the escape sequences of `console` when `color`.
fn paint(text: &str, style: Style, color: bool) -> String {
    if !color || text.is_empty() || style == Style::default() {
        return text.to_owned();
    }
    let mut painted = console::Style::new().force_styling(true);
    painted = match style.fg {
        Some(Color::Cyan) => painted.cyan(),
        Some(Color::Magenta) => painted.magenta(),
        Some(Color::Yellow) => painted.yellow(),
        Some(Color::Blue) => painted.blue(),
        Some(Color::Green) => painted.green(),
        Some(Color::Red) => painted.red(),
        Some(Color::DarkGray | Color::Gray) => painted.dim(),
        _ => painted,
    };
    let modifiers = style.add_modifier.difference(style.sub_modifier);
    for (modifier, apply) in [
        (
            Modifier::BOLD,
            console::Style::bold as fn(console::Style) -> console::Style,
        ),
        (Modifier::ITALIC, console::Style::italic),
        (Modifier::UNDERLINED, console::Style::underlined),
        (Modifier::CROSSED_OUT, console::Style::strikethrough),
        (Modifier::DIM, console::Style::dim),
    ] {
        if modifiers.contains(modifier) {
            painted = apply(painted);
        }
    }
    painted.apply_to(text).to_string()
}
