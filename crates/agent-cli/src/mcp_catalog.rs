//! What MCP servers offer besides tools, on the command line: `agent mcp prompts` and `agent mcp
//! resources` list them, `agent mcp read SERVER URI` prints one resource, and in `agent chat` a
//! prompt is a command, `/mcp__SERVER__PROMPT key=value ...`, whose text is sent as the message.

use std::collections::BTreeMap;
use std::time::Duration;

use agent_mcp::model::{Prompt, Resource};
use agent_mcp::{McpServer, McpServers, TOOL_PREFIX, prompt_text, resource_text};
use serde_json::{Value, json};

use crate::exit::ExitCode;
use crate::output::{note, one_line, print, truncate};

/// How long a server may take to fill in a prompt or read a resource when its configuration
/// sets no timeout.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

fn timeout(server: &McpServer) -> Duration {
    server.config().call_timeout().unwrap_or(REQUEST_TIMEOUT)
}

/// The chat command of a prompt: `/mcp__<server>__<prompt>`.
pub(crate) fn command_name(server: &str, prompt: &str) -> String {
    format!("/{TOOL_PREFIX}{server}__{prompt}")
}

/// A server of `session` by name, or why there is none (the error it failed to start with).
fn started<'a>(session: &'a McpServers, name: &str) -> Result<&'a McpServer, String> {
    if let Some(server) = session.server(name) {
        return Ok(server.as_ref());
    }
    Err(session
        .failures()
        .iter()
        .find(|failure| failure.server() == Some(name))
        .map_or_else(
            || format!("MCP server {name} is not started"),
            ToString::to_string,
        ))
}

/// `agent mcp prompts`: the prompts of each server in `wanted`, as the chat commands they are.
/// Exit code 1 when a server failed.
pub(crate) async fn prompts(session: &McpServers, wanted: &[String], as_json: bool) -> ExitCode {
    let mut reports = Vec::new();
    for name in wanted {
        let listed = match started(session, name) {
            Ok(server) => server.prompts().await.map_err(|error| error.to_string()),
            Err(error) => Err(error),
        };
        reports.push(match listed {
            Ok(prompts) => json!({
                "name": name,
                "prompts": prompts.iter().map(|p| prompt_json(name, p)).collect::<Vec<_>>(),
                "error": null,
            }),
            Err(error) => json!({"name": name, "prompts": [], "error": error}),
        });
    }
    report(reports, as_json, "prompts", |prompt| {
        let arguments: Vec<String> = prompt["arguments"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|argument| {
                let word = format!("{}=…", argument["name"].as_str().unwrap_or_default());
                if argument["required"] == true {
                    word
                } else {
                    format!("[{word}]")
                }
            })
            .collect();
        let mut head = prompt["command"].as_str().unwrap_or_default().to_owned();
        for argument in arguments {
            head.push(' ');
            head.push_str(&argument);
        }
        let about = [&prompt["title"], &prompt["description"]]
            .iter()
            .filter_map(|text| text.as_str())
            .collect::<Vec<_>>()
            .join(": ");
        format!("  {head}  {}", truncate(&one_line(&about), 70))
    })
}

fn prompt_json(server: &str, prompt: &Prompt) -> Value {
    json!({
        "name": prompt.name,
        "command": command_name(server, &prompt.name),
        "title": prompt.title,
        "description": prompt.description,
        "arguments": prompt.arguments.iter().flatten().map(|argument| json!({
            "name": argument.name,
            "description": argument.description,
            "required": argument.required == Some(true),
        })).collect::<Vec<_>>(),
    })
}

/// `agent mcp resources`: the resources of each server in `wanted`. Exit code 1 when a server
/// failed.
pub(crate) fn resources(session: &McpServers, wanted: &[String], as_json: bool) -> ExitCode {
    let reports = wanted
        .iter()
        .map(|name| match started(session, name) {
            Ok(server) => json!({
                "name": name,
                "resources": server.listed_resources().iter().map(resource_json).collect::<Vec<_>>(),
                "error": null,
            }),
            Err(error) => json!({"name": name, "resources": [], "error": error}),
        })
        .collect();
    report(reports, as_json, "resources", |resource| {
        let mut line = format!(
            "  {}  {}",
            resource["uri"].as_str().unwrap_or_default(),
            resource["name"].as_str().unwrap_or_default()
        );
        for field in ["mime_type", "description"] {
            if let Some(text) = resource[field].as_str() {
                line.push_str("  ");
                line.push_str(&truncate(&one_line(text), 60));
            }
        }
        line
    })
}

fn resource_json(resource: &Resource) -> Value {
    json!({
        "uri": resource.uri,
        "name": resource.name,
        "title": resource.title,
        "description": resource.description,
        "mime_type": resource.mime_type,
        "size": resource.size,
    })
}

/// Prints per-server `reports` (each with `name`, the list under `key` and `error`): as JSON, or
/// a line per server and `line` per item. Exit code 1 when a server failed.
fn report(
    reports: Vec<Value>,
    as_json: bool,
    key: &str,
    line: impl Fn(&Value) -> String,
) -> ExitCode {
    let failed = reports.iter().any(|report| !report["error"].is_null());
    if as_json {
        print(&json!({ "servers": reports }).to_string());
    } else {
        let mut out = Vec::new();
        for report in &reports {
            out.push(report["name"].as_str().unwrap_or_default().to_owned());
            if let Some(error) = report["error"].as_str() {
                out.push(format!("  error: {}", one_line(error)));
                continue;
            }
            let items = report[key].as_array().cloned().unwrap_or_default();
            if items.is_empty() {
                out.push(format!("  (no {key})"));
            }
            out.extend(items.iter().map(&line));
        }
        print(&out.join("\n"));
    }
    if failed {
        ExitCode::Failed
    } else {
        ExitCode::Completed
    }
}

/// `agent mcp read SERVER URI`: the resource's text on stdout (binary contents as a note of
/// their type and size), or with `--json` the server's answer as it is. Exit code 1 when the
/// server failed or refused.
pub(crate) async fn read(session: &McpServers, name: &str, uri: &str, as_json: bool) -> ExitCode {
    let server = match started(session, name) {
        Ok(server) => server,
        Err(error) => {
            note(&error);
            return ExitCode::Failed;
        }
    };
    match server.read_resource(uri, timeout(server)).await {
        Ok(result) if as_json => {
            print(&serde_json::to_string(&result).unwrap_or_default());
            ExitCode::Completed
        }
        Ok(result) => {
            print(resource_text(&result).trim_end_matches('\n'));
            ExitCode::Completed
        }
        Err(error) => {
            note(&error.to_string());
            ExitCode::Failed
        }
    }
}

/// The message a chat command `/mcp__SERVER__PROMPT args` sends: the prompt filled in with
/// `args` (`key=value` words; a word without `key=` continues the value before it, and a prompt
/// with one argument takes the whole text). `Err` says what is wrong, for the person.
pub(crate) async fn prompt_message(
    session: &McpServers,
    command: &str,
    args: &str,
) -> Result<String, String> {
    let Some((server_name, prompt_name)) = command
        .strip_prefix(TOOL_PREFIX)
        .and_then(|rest| rest.split_once("__"))
    else {
        return Err(format!(
            "/{command} is not a prompt command (/mcp__SERVER__PROMPT)"
        ));
    };
    let server = session.server(server_name).ok_or_else(|| {
        let names: Vec<&str> = session.servers().iter().map(|s| s.name()).collect();
        format!(
            "no MCP server named {server_name} in this chat (started: {})",
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )
    })?;
    let prompts = server.prompts().await.map_err(|error| error.to_string())?;
    let Some(prompt) = prompts.iter().find(|prompt| prompt.name == prompt_name) else {
        let commands: Vec<String> = prompts
            .iter()
            .map(|prompt| command_name(server_name, &prompt.name))
            .collect();
        return Err(format!(
            "{server_name} has no prompt {prompt_name:?} (its prompts: {})",
            if commands.is_empty() {
                "none".to_owned()
            } else {
                commands.join(", ")
            }
        ));
    };
    let arguments = prompt_arguments(prompt, args)?;
    let filled = server
        .get_prompt(prompt_name, arguments, timeout(server))
        .await
        .map_err(|error| error.to_string())?;
    let text = prompt_text(&filled);
    if text.trim().is_empty() {
        return Err(format!(
            "the prompt {prompt_name} of {server_name} gave no text"
        ));
    }
    Ok(text)
}

/// Whether `key` (before an `=`) is written like an argument's name, not like a value.
fn looks_like_a_name(key: &str) -> bool {
    key.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// The arguments of `prompt` read from `text` (see [`prompt_message`]), checked against the
/// prompt's own: no unknown name, every required one given.
fn prompt_arguments(prompt: &Prompt, text: &str) -> Result<BTreeMap<String, String>, String> {
    let declared = prompt.arguments.clone().unwrap_or_default();
    let known = |key: &str| declared.iter().any(|argument| argument.name == key);
    let usage = || {
        let words: Vec<String> = declared
            .iter()
            .map(|argument| match &argument.description {
                Some(about) => format!("{}=… ({about})", argument.name),
                None => format!("{}=…", argument.name),
            })
            .collect();
        if words.is_empty() {
            format!("{} takes no arguments", prompt.name)
        } else {
            format!("its arguments: {}", words.join(", "))
        }
    };
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<String> = None;
    let text = text.trim();
    if !text.is_empty() && declared.len() == 1 && !text.contains('=') {
        values.insert(declared[0].name.clone(), text.to_owned());
    } else {
        for word in text.split_whitespace() {
            let named = word
                .split_once('=')
                .filter(|(key, _)| looks_like_a_name(key));
            match (named, current.clone()) {
                (Some((key, value)), _) if known(key) => {
                    values.insert(key.to_owned(), value.to_owned());
                    current = Some(key.to_owned());
                }
                (Some((key, _)), _) => {
                    return Err(format!(
                        "{} has no argument {key:?}; {}",
                        prompt.name,
                        usage()
                    ));
                }
                (None, Some(key)) => {
                    let value = values.entry(key).or_default();
                    value.push(' ');
                    value.push_str(word);
                }
                (None, None) => return Err(format!("give arguments as key=value; {}", usage())),
            }
        }
    }
    let missing: Vec<&str> = declared
        .iter()
        .filter(|argument| argument.required == Some(true) && !values.contains_key(&argument.name))
        .map(|argument| argument.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{} needs {}; {}",
            prompt.name,
            missing.join(", "),
            usage()
        ));
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use agent_mcp::model::PromptArgument;

    use super::*;

    fn greet() -> Prompt {
        let mut name = PromptArgument::new("name");
        name.required = Some(true);
        let language = PromptArgument::new("language");
        Prompt::new("greet", Some("Greets"), Some(vec![name, language]))
    }

    fn check(prompt: &Prompt, text: &str, expected: Result<&[(&str, &str)], &str>) {
        let got = prompt_arguments(prompt, text);
        match expected {
            Ok(pairs) => {
                let pairs: BTreeMap<String, String> = pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect();
                assert_eq!(got, Ok(pairs), "{text}");
            }
            Err(part) => {
                let error = got.expect_err(text);
                assert!(error.contains(part), "{text}: {error}");
            }
        }
    }

    #[test]
    fn prompt_arguments_are_read_as_key_value_words() {
        let greet = greet();
        check(&greet, "name=Ada", Ok(&[("name", "Ada")]));
        check(
            &greet,
            "name=Ada Lovelace language=English",
            Ok(&[("name", "Ada Lovelace"), ("language", "English")]),
        );
        check(&greet, "name=a=b", Ok(&[("name", "a=b")]));
        check(
            &greet,
            "",
            Err("greet needs name; its arguments: name=…, language=…"),
        );
        check(&greet, "language=German", Err("greet needs name"));
        check(
            &greet,
            "colour=red",
            Err("greet has no argument \"colour\""),
        );
        check(&greet, "Ada", Err("give arguments as key=value"));
        // One argument: the whole text is its value.
        let mut topic = PromptArgument::new("topic");
        topic.required = Some(true);
        let one = Prompt::new("explain", None::<String>, Some(vec![topic]));
        check(
            &one,
            "the borrow checker",
            Ok(&[("topic", "the borrow checker")]),
        );
        let none = Prompt::new("review", None::<String>, None);
        check(&none, "", Ok(&[]));
        check(&none, "x=1", Err("takes no arguments"));
    }
}
