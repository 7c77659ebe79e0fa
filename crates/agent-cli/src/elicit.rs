//! A server's questions to the person (MCP elicitation) asked on the terminal: the message,
//! then one prompt per field of the form (Enter keeps the default shown in brackets), or the page
//! to open for a URL question. Without a terminal nobody can answer and the question is declined;
//! `--yes` approves tools, it does not answer questions.

use std::io::{BufRead, IsTerminal, Write};

use agent_mcp::{ElicitationAnswer, ElicitationKind, ElicitationRequest, Elicitor};
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
        ElicitationKind::Form { schema } => {
            prompt.say(&format!(
                "\n? The MCP server {} asks: {}",
                request.server, request.message
            ));
            match prompt.choice("[Enter] answer · [d] decline · [c] cancel: ") {
                Some(Choice::Answer) => {}
                Some(Choice::Cancel) => return ElicitationAnswer::Cancel,
                Some(Choice::Decline) | None => return ElicitationAnswer::Decline,
            }
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut answers = Map::new();
            let empty = Map::new();
            for (name, field) in schema["properties"].as_object().unwrap_or(&empty) {
                match prompt.field(name, field, required.contains(&name.as_str())) {
                    Some(Some(value)) => {
                        answers.insert(name.clone(), value);
                    }
                    Some(None) => {}
                    None => return ElicitationAnswer::Decline,
                }
            }
            ElicitationAnswer::Accept(answers)
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
    fn field(&mut self, name: &str, field: &Value, required: bool) -> Option<Option<Value>> {
        let title = field["title"].as_str().unwrap_or(name);
        let mut head = format!("  {title}");
        if let Some(description) = field["description"].as_str() {
            head.push_str(&format!(" ({description})"));
        }
        let options = options(field);
        if !options.is_empty() {
            let listed: Vec<String> = options
                .iter()
                .enumerate()
                .map(|(index, (_, label))| format!("{}) {label}", index + 1))
                .collect();
            head.push_str(&format!(": {}", listed.join("  ")));
        }
        if field["type"] == "array" {
            head.push_str(" — several, separated by commas");
        }
        if !required {
            head.push_str(" (optional)");
        }
        let default = field.get("default").filter(|value| !value.is_null());
        let shown = default.map_or(String::new(), |value| match value {
            Value::String(text) => format!(" [{text}]"),
            other => format!(" [{other}]"),
        });
        loop {
            let answer = self.line(&format!("{head}{shown}: "))?;
            if answer.is_empty() {
                match default {
                    Some(value) => return Some(Some(value.clone())),
                    None if !required => return Some(None),
                    None => {
                        self.say("  an answer is needed");
                        continue;
                    }
                }
            }
            match parse(field, &options, &answer) {
                Ok(value) => return Some(Some(value)),
                Err(why) => self.say(&format!("  {why}")),
            }
        }
    }
}

/// The choices of an enumeration field (or of the items of a multiple-choice one): each value
/// with the label shown for it.
fn options(field: &Value) -> Vec<(Value, String)> {
    let field = if field["type"] == "array" {
        &field["items"]
    } else {
        field
    };
    if let Some(values) = field["enum"].as_array() {
        let names = field["enumNames"].as_array();
        return values
            .iter()
            .enumerate()
            .map(|(index, value)| {
                let label = names
                    .and_then(|names| names.get(index))
                    .and_then(Value::as_str)
                    .map_or_else(|| plain(value), str::to_owned);
                (value.clone(), label)
            })
            .collect();
    }
    let titled = field["oneOf"].as_array().or(field["anyOf"].as_array());
    titled
        .map(|entries| {
            entries
                .iter()
                .filter_map(|entry| {
                    let value = entry.get("const")?.clone();
                    let label = entry["title"]
                        .as_str()
                        .map_or_else(|| plain(&value), str::to_owned);
                    Some((value, label))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn plain(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

/// The value typed for `field`, or why it does not fit.
fn parse(field: &Value, options: &[(Value, String)], answer: &str) -> Result<Value, String> {
    let pick = |text: &str| -> Result<Value, String> {
        let text = text.trim();
        if let Ok(index) = text.parse::<usize>()
            && let Some((value, _)) = index.checked_sub(1).and_then(|index| options.get(index))
        {
            return Ok(value.clone());
        }
        options
            .iter()
            .find(|(value, label)| plain(value) == text || label == text)
            .map(|(value, _)| value.clone())
            .ok_or_else(|| "choose one of the numbers, or type one of the values".to_owned())
    };
    match field["type"].as_str() {
        Some("array") => answer
            .split(',')
            .filter(|part| !part.trim().is_empty())
            .map(pick)
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        _ if !options.is_empty() => pick(answer),
        Some("boolean") => match answer.to_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("answer y or n".into()),
        },
        Some("integer") => answer
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "a whole number is needed".into()),
        Some("number") => answer
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| "a number is needed".into()),
        _ => Ok(Value::String(answer.to_owned())),
    }
}

#[cfg(test)]
#[path = "elicit_tests.rs"]
mod tests;
