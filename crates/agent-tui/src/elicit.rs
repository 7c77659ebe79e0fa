//! Questions a tool's server asks the person (MCP elicitation) in a modal form: the server's
//! message, then one field at a time — text and numbers typed (Enter keeps the default shown),
//! yes/no and choices picked with ←/→ or Tab — and the answer sent when the last field is
//! filled. A page to open (URL mode) is shown with its address: Enter says the person went
//! there. Esc declines, Ctrl-C cancels; a field that does not fit (a required one left empty, a
//! number that is not one) says so and stays. The embedder turns the server's question into a
//! [`FormQuestion`] and its [`FormAnswer`] back; this crate knows nothing of MCP.

use std::collections::VecDeque;

use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};

/// The person's answer to a [`FormQuestion`].
#[derive(Debug, Clone, PartialEq)]
pub enum FormAnswer {
    /// Filled in: the values by field name (empty for a page).
    Accept(Map<String, Value>),
    /// Refused (Esc), or the screen closed before an answer.
    Decline,
    /// Dismissed (Ctrl-C).
    Cancel,
}

/// A question waiting on the screen.
#[derive(Debug)]
pub struct FormQuestion {
    /// Who asks (the server's name).
    pub server: String,
    /// What it says it needs.
    pub message: String,
    /// The page to open, for a URL question.
    pub url: Option<String>,
    fields: Vec<Field>,
    reply: oneshot::Sender<FormAnswer>,
}

impl FormQuestion {
    /// A question with the fields of `schema` (a flat JSON schema object; `None` for a page at
    /// `url`), and the receiver of its answer.
    pub fn new(
        server: impl Into<String>,
        message: impl Into<String>,
        schema: Option<&Value>,
        url: Option<String>,
    ) -> (Self, oneshot::Receiver<FormAnswer>) {
        let (reply, answer) = oneshot::channel();
        let question = Self {
            server: server.into(),
            message: message.into(),
            url,
            fields: schema.map(fields).unwrap_or_default(),
            reply,
        };
        (question, answer)
    }
}

/// The questions the UI is to show, as a [`FormAsker`] sends them.
pub type FormQuestions = mpsc::UnboundedReceiver<FormQuestion>;

/// Sends questions to the session's screen; cheap to clone.
#[derive(Debug, Clone)]
pub struct FormAsker {
    questions: mpsc::UnboundedSender<FormQuestion>,
}

impl FormAsker {
    /// An asker whose questions arrive on the returned receiver (give it to
    /// [`Options::forms`](crate::Options::forms)).
    pub fn new() -> (Self, FormQuestions) {
        let (questions, receiver) = mpsc::unbounded_channel();
        (Self { questions }, receiver)
    }

    /// Shows `question` and waits for the answer; declined when the screen is gone.
    pub async fn ask(
        &self,
        question: FormQuestion,
        answer: oneshot::Receiver<FormAnswer>,
    ) -> FormAnswer {
        if self.questions.send(question).is_err() {
            return FormAnswer::Decline;
        }
        answer.await.unwrap_or(FormAnswer::Decline)
    }
}

#[derive(Debug, Clone)]
struct Field {
    name: String,
    title: String,
    description: Option<String>,
    kind: Kind,
    required: bool,
    default: Option<Value>,
}

#[derive(Debug, Clone)]
enum Kind {
    Text,
    Number { integer: bool },
    Boolean,
    Choice(Vec<(Value, String)>),
}

fn fields(schema: &Value) -> Vec<Field> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema["properties"].as_object() else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let labels = property["enumNames"].as_array();
            let choices: Vec<(Value, String)> = match property["enum"].as_array() {
                Some(values) => values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let label = labels
                            .and_then(|l| l.get(i))
                            .and_then(Value::as_str)
                            .map_or_else(|| plain(v), str::to_owned);
                        (v.clone(), label)
                    })
                    .collect(),
                None => property["oneOf"]
                    .as_array()
                    .or_else(|| property["anyOf"].as_array())
                    .into_iter()
                    .flatten()
                    .filter_map(|entry| {
                        let value = entry.get("const")?.clone();
                        let label = entry["title"]
                            .as_str()
                            .map_or_else(|| plain(&value), str::to_owned);
                        Some((value, label))
                    })
                    .collect(),
            };
            let kind = match property["type"].as_str() {
                _ if !choices.is_empty() => Kind::Choice(choices),
                Some("boolean") => Kind::Boolean,
                Some("integer") => Kind::Number { integer: true },
                Some("number") => Kind::Number { integer: false },
                _ => Kind::Text,
            };
            Field {
                name: name.clone(),
                title: property["title"].as_str().unwrap_or(name).to_owned(),
                description: property["description"].as_str().map(str::to_owned),
                kind,
                required: required.contains(&name.as_str()),
                default: property.get("default").cloned(),
            }
        })
        .collect()
}

fn plain(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

/// The questions waiting, the first one shown, and the state of its field being filled.
#[derive(Debug, Default)]
pub(crate) struct Forms {
    queue: VecDeque<FormQuestion>,
    field: usize,
    text: String,
    choice: usize,
    values: Map<String, Value>,
    error: Option<String>,
}

impl Forms {
    /// Whether a question is on the screen.
    pub(crate) fn is_open(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Adds a question.
    pub(crate) fn push(&mut self, question: FormQuestion) {
        self.queue.push_back(question);
        if self.queue.len() == 1 {
            self.start();
        }
    }

    fn current(&self) -> Option<&Field> {
        self.queue.front().and_then(|q| q.fields.get(self.field))
    }

    /// Prepares the current field: its default shown, or its default choice picked.
    fn start(&mut self) {
        self.text.clear();
        self.choice = 0;
        self.error = None;
        let Some(field) = self.current().cloned() else {
            return;
        };
        match (&field.kind, &field.default) {
            (Kind::Choice(choices), Some(default)) => {
                self.choice = choices.iter().position(|(v, _)| v == default).unwrap_or(0);
            }
            (Kind::Boolean, default) => {
                self.choice = usize::from(default != &Some(Value::Bool(true)));
            }
            _ => {}
        }
    }

    /// Takes a key; the form keeps every key while it is open.
    pub(crate) fn key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c') if ctrl => self.finish(FormAnswer::Cancel),
            KeyCode::Esc => self.finish(FormAnswer::Decline),
            KeyCode::Enter => self.enter(),
            code => {
                let Some(field) = self.current() else {
                    return;
                };
                let count = match &field.kind {
                    Kind::Choice(choices) => choices.len(),
                    Kind::Boolean => 2,
                    Kind::Text | Kind::Number { .. } => 0,
                };
                match code {
                    KeyCode::Right | KeyCode::Down | KeyCode::Tab if count > 0 => {
                        self.choice = (self.choice + 1) % count;
                    }
                    KeyCode::Left | KeyCode::Up | KeyCode::BackTab if count > 0 => {
                        self.choice = (self.choice + count - 1) % count;
                    }
                    KeyCode::Char('y') if count == 2 && matches!(field.kind, Kind::Boolean) => {
                        self.choice = 0;
                    }
                    KeyCode::Char('n') if matches!(field.kind, Kind::Boolean) => self.choice = 1,
                    KeyCode::Backspace if count == 0 => {
                        self.text.pop();
                    }
                    KeyCode::Char(c) if count == 0 => self.text.push(c),
                    _ => {}
                }
            }
        }
    }

    /// Keeps the current field's value and goes to the next field, or sends the answer.
    fn enter(&mut self) {
        if let Some(field) = self.current().cloned() {
            match self.value(&field) {
                Ok(Some(value)) => {
                    self.values.insert(field.name.clone(), value);
                }
                Ok(None) => {}
                Err(error) => {
                    self.error = Some(error);
                    return;
                }
            }
            self.field += 1;
            if self.current().is_some() {
                self.start();
                return;
            }
        }
        let values = std::mem::take(&mut self.values);
        self.finish(FormAnswer::Accept(values));
    }

    /// The value the current field holds: what was typed, else its default; `None` for an
    /// optional field left empty.
    fn value(&self, field: &Field) -> Result<Option<Value>, String> {
        let typed = self.text.trim();
        let value = match &field.kind {
            Kind::Choice(choices) => Some(choices[self.choice.min(choices.len() - 1)].0.clone()),
            Kind::Boolean => Some(Value::Bool(self.choice == 0)),
            _ if typed.is_empty() => field.default.clone(),
            Kind::Number { integer: true } => {
                Some(Value::from(typed.parse::<i64>().map_err(|_| {
                    format!("{} takes a whole number", field.title)
                })?))
            }
            Kind::Number { integer: false } => {
                let number = typed
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .ok_or_else(|| format!("{} takes a number", field.title))?;
                Some(Value::Number(number))
            }
            Kind::Text => Some(Value::String(typed.to_owned())),
        };
        if value.is_none() && field.required {
            return Err(format!("{} is required", field.title));
        }
        Ok(value)
    }

    /// Answers the question shown and shows the next one.
    fn finish(&mut self, answer: FormAnswer) {
        if let Some(question) = self.queue.pop_front() {
            let _ = question.reply.send(answer);
        }
        self.field = 0;
        self.values.clear();
        self.start();
    }
}

/// Draws the question shown over `area`.
pub(crate) fn draw(frame: &mut Frame<'_>, forms: &Forms, area: Rect) {
    let Some(question) = forms.queue.front() else {
        return;
    };
    let width = area.width.saturating_sub(4).clamp(20, 90);
    let inner = width.saturating_sub(4) as usize;
    let key = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
    let bold = Style::new().add_modifier(Modifier::BOLD);
    let mut lines: Vec<Line<'static>> =
        crate::wrap::rows(&crate::wrap::clean(&question.message), inner)
            .into_iter()
            .map(Line::from)
            .collect();
    lines.push(Line::default());
    if let Some(url) = &question.url {
        lines.push(Line::styled(
            crate::wrap::clean(url),
            Style::new().fg(Color::Blue),
        ));
        lines.push(Line::default());
        lines.push(Line::from(vec![
            Span::styled("Enter", key),
            Span::raw(" I went there  "),
            Span::styled("Esc", key),
            Span::raw(" decline"),
        ]));
    } else {
        for (index, field) in question.fields.iter().enumerate() {
            let mark = if field.required { " *" } else { "" };
            let label = Span::styled(format!("{}{mark}: ", field.title), bold);
            let shown = match forms.values.get(&field.name) {
                _ if index > forms.field => Span::styled("…", Style::new().fg(Color::DarkGray)),
                Some(value) if index < forms.field => Span::raw(plain(value)),
                None if index < forms.field => {
                    Span::styled("(empty)", Style::new().fg(Color::DarkGray))
                }
                _ => Span::raw(editing(forms, field)),
            };
            lines.push(Line::from(vec![label, shown]));
            if index == forms.field
                && let Some(description) = &field.description
            {
                lines.push(Line::styled(
                    format!("  {description}"),
                    Style::new().fg(Color::DarkGray),
                ));
            }
        }
        if let Some(error) = &forms.error {
            lines.push(Line::styled(error.clone(), Style::new().fg(Color::Red)));
        }
        lines.push(Line::default());
        lines.push(Line::from(vec![
            Span::styled("Enter", key),
            Span::raw(" next  "),
            Span::styled("←/→", key),
            Span::raw(" choose  "),
            Span::styled("Esc", key),
            Span::raw(" decline  "),
            Span::styled("Ctrl-C", key),
            Span::raw(" cancel"),
        ]));
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    let x = area.x + (area.width.saturating_sub(width)) / 2;
    let y = area.y + (area.height.saturating_sub(height)) / 2;
    let modal = Rect::new(x, y, width.min(area.width), height);
    let waiting = match forms.queue.len() {
        1 => String::new(),
        n => format!("(1 of {n}) "),
    };
    let block = Block::bordered()
        .border_style(Style::new().fg(Color::Yellow))
        .title(Span::styled(
            format!(" {} asks {waiting}", question.server),
            bold,
        ));
    frame.render_widget(Clear, modal);
    frame.render_widget(
        Paragraph::new(lines).block(block.padding(ratatui::widgets::Padding::horizontal(1))),
        modal,
    );
}

/// The field being filled: the text typed (or the default, dimmed in brackets), or the
/// choices with the picked one marked.
fn editing(forms: &Forms, field: &Field) -> String {
    match &field.kind {
        Kind::Choice(choices) => choices
            .iter()
            .enumerate()
            .map(|(i, (_, label))| {
                if i == forms.choice {
                    format!("[{label}]")
                } else {
                    format!(" {label} ")
                }
            })
            .collect::<Vec<_>>()
            .join(""),
        Kind::Boolean => {
            if forms.choice == 0 {
                "[yes]  no ".to_owned()
            } else {
                " yes [no]".to_owned()
            }
        }
        _ => match (&field.default, forms.text.is_empty()) {
            (Some(default), true) => format!("▍ [{}]", plain(default)),
            _ => format!("{}▍", forms.text),
        },
    }
}
