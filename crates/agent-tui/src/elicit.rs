//! Questions a tool's server asks the person (MCP elicitation) in a modal form: the server's
//! message, then one field at a time — text and numbers typed (Enter keeps the default shown),
//! yes/no and choices picked with ←/→ or Tab — and the answer sent when the last field is
//! filled. A page to open (URL mode) is shown with its address: Enter says the person went
//! there. Esc declines, Ctrl-C cancels; a field that does not fit (a required one left empty, a
//! number that is not one) says so and stays; the filled-in form is checked as every front end
//! checks it ([`Form::check`]) before it goes. The embedder turns the server's question into a
//! [`FormQuestion`] and its [`FormAnswer`] back; this crate knows nothing of MCP.

use std::collections::VecDeque;

use agent_runner::interaction::form::{Field, FieldKind, Form, plain};
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
    form: Form,
    reply: oneshot::Sender<FormAnswer>,
}

impl FormQuestion {
    /// A question with the fields of `form` (`None` for a page at `url`), and the receiver of
    /// its answer.
    pub fn new(
        server: impl Into<String>,
        message: impl Into<String>,
        form: Option<Form>,
        url: Option<String>,
    ) -> (Self, oneshot::Receiver<FormAnswer>) {
        let (reply, answer) = oneshot::channel();
        let question = Self {
            server: server.into(),
            message: message.into(),
            url,
            form: form.unwrap_or_default(),
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
        self.queue
            .front()
            .and_then(|q| q.form.fields.get(self.field))
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
            (FieldKind::Choice(choices), Some(default)) => {
                self.choice = choices
                    .iter()
                    .position(|c| &c.value == default)
                    .unwrap_or(0);
            }
            (FieldKind::Boolean, default) => {
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
                    FieldKind::Choice(choices) => choices.len(),
                    FieldKind::Boolean => 2,
                    _ => 0,
                };
                match code {
                    KeyCode::Right | KeyCode::Down | KeyCode::Tab if count > 0 => {
                        self.choice = (self.choice + 1) % count;
                    }
                    KeyCode::Left | KeyCode::Up | KeyCode::BackTab if count > 0 => {
                        self.choice = (self.choice + count - 1) % count;
                    }
                    KeyCode::Char('y')
                        if count == 2 && matches!(field.kind, FieldKind::Boolean) =>
                    {
                        self.choice = 0;
                    }
                    KeyCode::Char('n') if matches!(field.kind, FieldKind::Boolean) => {
                        self.choice = 1
                    }
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
        // The whole form, checked as every front end checks it; a misfit goes back to the
        // first field.
        if let Some(question) = self.queue.front()
            && let Err(error) = question.form.check(&self.values)
        {
            self.field = 0;
            self.values.clear();
            self.start();
            self.error = Some(error);
            return;
        }
        let values = std::mem::take(&mut self.values);
        self.finish(FormAnswer::Accept(values));
    }

    /// The value the current field holds: what was typed, else its default; `None` for an
    /// optional field left empty.
    fn value(&self, field: &Field) -> Result<Option<Value>, String> {
        let typed = self.text.trim();
        let value = match &field.kind {
            FieldKind::Choice(choices) => choices
                .get(self.choice.min(choices.len().saturating_sub(1)))
                .map(|choice| choice.value.clone()),
            FieldKind::Boolean => Some(Value::Bool(self.choice == 0)),
            _ if typed.is_empty() => field.default.clone(),
            _ => Some(
                field
                    .parse(typed)
                    .map_err(|why| format!("{}: {why}", field.title))?,
            ),
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
        for (index, field) in question.form.fields.iter().enumerate() {
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
        FieldKind::Choice(choices) => choices
            .iter()
            .enumerate()
            .map(|(i, choice)| {
                let label = &choice.label;
                if i == forms.choice {
                    format!("[{label}]")
                } else {
                    format!(" {label} ")
                }
            })
            .collect::<Vec<_>>()
            .join(""),
        FieldKind::Boolean => {
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
