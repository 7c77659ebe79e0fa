//! A server's questions to the person (MCP elicitation) asked on the terminal: the message,
//! then one prompt per field of the form (Enter keeps the default shown in brackets), or the page
//! to open for a URL question. Answers are read and the filled-in form checked as every front
//! end does (`agent_runner::interaction::Form`); what was typed ahead is thrown away before the
//! question shows. Without a terminal nobody can answer and the question is declined; `--yes`
//! approves tools, it does not answer questions.

use std::io::{BufRead, IsTerminal, Write};

use agent_mcp::{ElicitationAnswer, ElicitationKind, ElicitationRequest, Elicitor};
use agent_runner::interaction::form::{Field, FieldKind, plain};
use async_trait::async_trait;
use serde_json::{Map, Value};

/// Asks on the terminal (standard input and error); declines when standard input is not one.
#[derive(Debug, Default)]
pub(crate) struct TerminalElicitor;

#[async_trait]
impl Elicitor for TerminalElicitor {
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer {
        if !std::io::stdin().is_terminal() {
            crate::output::note(&format!(
                "the MCP server {} asked a question and nobody can answer without a terminal; \
                 declined: {}",
                request.server,
                crate::output::one_line(&request.message)
            ));
            return ElicitationAnswer::Decline;
        }
        tokio::task::spawn_blocking(move || {
            crate::output::suspended(|| {
                crate::approve::flush_typed_ahead();
                let stdin = std::io::stdin();
                let mut lines = stdin.lock();
                ask(&request, &mut lines, &mut std::io::stderr())
            })
        })
        .await
        .unwrap_or(ElicitationAnswer::Decline)
    }
}

/// Asks `request`, reading answers from `input` and writing prompts to `out`; end of input
/// declines.
pub(crate) fn ask(
    request: &ElicitationRequest,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> ElicitationAnswer {
    let mut prompt = Prompt { input, out };
    match &request.kind {
        ElicitationKind::Url { url, .. } => {
            prompt.say(&format!(
                "\n? The MCP server {} asks you to open a page: {}\n  {url}",
                request.server, request.message
            ));
            match prompt.choice("[Enter] done · [d] decline · [c] cancel: ") {
                Some(Choice::Answer) => ElicitationAnswer::Accept(Map::new()),
                Some(Choice::Cancel) => ElicitationAnswer::Cancel,
                Some(Choice::Decline) | None => ElicitationAnswer::Decline,
            }
        }
        ElicitationKind::Form { form } => {
            prompt.say(&format!(
                "\n? The MCP server {} asks: {}",
                request.server, request.message
            ));
            match prompt.choice("[Enter] answer · [d] decline · [c] cancel: ") {
                Some(Choice::Answer) => {}
                Some(Choice::Cancel) => return ElicitationAnswer::Cancel,
                Some(Choice::Decline) | None => return ElicitationAnswer::Decline,
            }
            loop {
                let mut answers = Map::new();
                for field in &form.fields {
                    match prompt.field(field) {
                        Some(Some(value)) => {
                            answers.insert(field.name.clone(), value);
                        }
                        Some(None) => {}
                        None => return ElicitationAnswer::Decline,
                    }
                }
                // The whole form, as every front end checks it; a misfit is asked again.
                match form.check(&answers) {
                    Ok(()) => return ElicitationAnswer::Accept(answers),
                    Err(why) => prompt.say(&format!("  {why}; the form again:")),
                }
            }
        }
    }
}

enum Choice {
    Answer,
    Decline,
    Cancel,
}

struct Prompt<'a> {
    input: &'a mut dyn BufRead,
    out: &'a mut dyn Write,
}

impl Prompt<'_> {
    fn say(&mut self, text: &str) {
        let _ = writeln!(self.out, "{text}");
    }

    /// One line of input, trimmed; `None` at the end of input.
    fn line(&mut self, prompt: &str) -> Option<String> {
        let _ = write!(self.out, "{prompt}");
        let _ = self.out.flush();
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim().to_owned()),
        }
    }

    fn choice(&mut self, prompt: &str) -> Option<Choice> {
        loop {
            match self.line(&format!("  {prompt}"))?.to_lowercase().as_str() {
                "" | "a" | "y" | "yes" => return Some(Choice::Answer),
                "d" | "n" | "no" | "decline" => return Some(Choice::Decline),
                "c" | "cancel" => return Some(Choice::Cancel),
                _ => {}
            }
        }
    }

    /// Asks one field until the answer fits it: `Some(None)` leaves an optional field out,
    /// `None` is the end of input.
    fn field(&mut self, field: &Field) -> Option<Option<Value>> {
        let mut head = format!("  {}", field.title);
        if let Some(description) = &field.description {
            head.push_str(&format!(" ({description})"));
        }
        let options = field.options();
        if !options.is_empty() {
            let listed: Vec<String> = options
                .iter()
                .enumerate()
                .map(|(index, choice)| format!("{}) {}", index + 1, choice.label))
                .collect();
            head.push_str(&format!(": {}", listed.join("  ")));
        }
        if matches!(field.kind, FieldKind::Choices { .. }) {
            head.push_str(" — several, separated by commas");
        }
        if !field.required {
            head.push_str(" (optional)");
        }
        let shown = field
            .default
            .as_ref()
            .map_or(String::new(), |value| format!(" [{}]", plain(value)));
        loop {
            let answer = self.line(&format!("{head}{shown}: "))?;
            if answer.is_empty() {
                match &field.default {
                    Some(value) => return Some(Some(value.clone())),
                    None if !field.required => return Some(None),
                    None => {
                        self.say("  an answer is needed");
                        continue;
                    }
                }
            }
            match field.parse(&answer) {
                Ok(value) => return Some(Some(value)),
                Err(why) => self.say(&format!("  {why}")),
            }
        }
    }
}

#[cfg(test)]
#[path = "elicit_tests.rs"]
mod tests;
