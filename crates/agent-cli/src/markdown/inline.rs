//! One line of Markdown as styled pieces of text: `pulldown-cmark` parses it, and its events
//! become spans (emphasis, strong, strikethrough, inline code, links) and a prefix (a heading's
//! weight, a list item's bullet or number, a quote's bar) with the indent its next lines hang
//! from.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// The colours the renderer uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Colour {
    /// Inline code and code blocks.
    Cyan,
    /// Links.
    Blue,
    /// Headings.
    Magenta,
}

/// How a span is drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Style {
    pub(super) bold: bool,
    pub(super) italic: bool,
    pub(super) underline: bool,
    pub(super) strike: bool,
    pub(super) dim: bool,
    pub(super) colour: Option<Colour>,
}

impl Style {
    pub(super) fn bold(self) -> Self {
        Self { bold: true, ..self }
    }

    pub(super) fn dim(self) -> Self {
        Self { dim: true, ..self }
    }

    pub(super) fn colour(self, colour: Colour) -> Self {
        Self {
            colour: Some(colour),
            ..self
        }
    }

    /// `text` drawn in this style when `color`, else as it is.
    pub(super) fn paint(self, text: &str, color: bool) -> String {
        if !color || self == Self::default() || text.is_empty() {
            return text.to_owned();
        }
        let mut style = console::Style::new().force_styling(true);
        if self.bold {
            style = style.bold();
        }
        if self.italic {
            style = style.italic();
        }
        if self.underline {
            style = style.underlined();
        }
        if self.strike {
            style = style.strikethrough();
        }
        if self.dim {
            style = style.dim();
        }
        style = match self.colour {
            Some(Colour::Cyan) => style.cyan(),
            Some(Colour::Blue) => style.blue(),
            Some(Colour::Magenta) => style.magenta(),
            None => style,
        };
        style.apply_to(text).to_string()
    }
}

/// A piece of text in one style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) text: String,
    pub(super) style: Style,
}

impl Span {
    pub(super) fn new(text: impl Into<String>, style: Style) -> Self {
        Self {
            text: text.into(),
            style,
        }
    }
}

/// One line, parsed.
#[derive(Debug, Default)]
pub(super) struct Line {
    /// What comes before the text on the first row: a bullet, a number, a quote's bar.
    pub(super) prefix: Vec<Span>,
    /// The text.
    pub(super) spans: Vec<Span>,
    /// The line is a thematic break (`---`).
    pub(super) rule: bool,
}

/// The extensions of CommonMark the model's answers use.
pub(super) fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Parses `text`, one line without its indent, into its prefix and spans.
pub(super) fn line(text: &str) -> Line {
    let mut line = Line::default();
    let mut styles = vec![Style::default()];
    // The number of the next item of each open list (`None`: bulleted).
    let mut lists: Vec<Option<u64>> = Vec::new();
    let mut links: Vec<String> = Vec::new();
    for event in Parser::new_ext(text, options()) {
        let top = styles.last().copied().unwrap_or_default();
        match event {
            Event::Start(tag) => {
                let style = match tag {
                    Tag::Heading { level, .. } => heading(level, top),
                    Tag::Emphasis => Style {
                        italic: true,
                        ..top
                    },
                    Tag::Strong => top.bold(),
                    Tag::Strikethrough => Style {
                        strike: true,
                        ..top
                    },
                    Tag::Link { dest_url, .. } => {
                        links.push(dest_url.to_string());
                        Style {
                            underline: true,
                            ..top.colour(Colour::Blue)
                        }
                    }
                    Tag::Image { dest_url, .. } => {
                        links.push(dest_url.to_string());
                        line.spans.push(Span::new("[image: ", top.dim()));
                        top.dim()
                    }
                    Tag::BlockQuote(_) => {
                        line.prefix.push(Span::new("│ ", Style::default().dim()));
                        Style {
                            italic: true,
                            ..top
                        }
                    }
                    Tag::List(start) => {
                        lists.push(start);
                        top
                    }
                    Tag::Item => {
                        let marker = match lists.last_mut() {
                            Some(Some(number)) => {
                                let marker = format!("{number}. ");
                                *number += 1;
                                marker
                            }
                            _ => "• ".to_owned(),
                        };
                        line.prefix.push(Span::new(marker, Style::default().bold()));
                        top
                    }
                    _ => top,
                };
                styles.push(style);
            }
            Event::End(end) => {
                styles.pop();
                match end {
                    TagEnd::Link => {
                        if let Some(url) = links.pop() {
                            link_target(&mut line.spans, &url);
                        }
                    }
                    TagEnd::Image => {
                        links.pop();
                        line.spans.push(Span::new("]", top.dim()));
                    }
                    TagEnd::List(_) => {
                        lists.pop();
                    }
                    _ => {}
                }
            }
            Event::Text(text)
            | Event::Html(text)
            | Event::InlineHtml(text)
            | Event::InlineMath(text)
            | Event::DisplayMath(text) => line.spans.push(Span::new(text.to_string(), top)),
            Event::Code(code) => line
                .spans
                .push(Span::new(code.to_string(), top.colour(Colour::Cyan))),
            Event::SoftBreak | Event::HardBreak => line.spans.push(Span::new(" ", top)),
            Event::Rule => line.rule = true,
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                line.prefix.push(Span::new(mark, Style::default().bold()));
            }
            Event::FootnoteReference(name) => {
                line.spans.push(Span::new(format!("[^{name}]"), top.dim()));
            }
        }
    }
    line
}

/// The style of a heading: bold, coloured, the first level underlined too.
fn heading(level: HeadingLevel, top: Style) -> Style {
    let style = top.bold().colour(Colour::Magenta);
    match level {
        HeadingLevel::H1 => Style {
            underline: true,
            ..style
        },
        _ => style,
    }
}

/// After a link's text, its address in dim parentheses, unless the text is the address.
fn link_target(spans: &mut Vec<Span>, url: &str) {
    let shown = spans.last().map(|span| span.text.as_str());
    if url.is_empty() || shown == Some(url) || url.starts_with('#') {
        return;
    }
    spans.push(Span::new(format!(" ({url})"), Style::default().dim()));
}
