//! A model backend of your own: an [`LlmClient`] for a made-up, rule-based "model" that does
//! arithmetic. It asks for a `calculate` tool call when the user asks a sum, then answers with the
//! tool's result.
//!
//! A client implements one primitive, [`LlmClient::stream`], which returns the answer as a stream
//! of [`ChatEvent`]s: text pieces, tool calls whose JSON arguments may come in fragments, usage,
//! and why the turn finished. [`LlmClient::complete`] collects that stream into a
//! [`ChatResponse`], so the runner and every other caller can use the new client at once. The
//! `main` below plays the runner's part for two turns: it offers a tool, runs the call the model
//! asks for, and sends the result back.
//!
//! It needs none of the crate's provider features. Run it with
//! `cargo run -p goaltree-llm --example custom_client --no-default-features`.

use std::error::Error;

use agent_llm::{
    ChatEvent, ChatMessage, ChatRequest, ChatResponse, ChatStream, LlmClient, LlmError, ModelInfo,
    ToolSpec, Usage, estimate_request_tokens,
};
use futures::StreamExt;
use serde_json::json;

/// A "model" that follows two rules instead of sampling tokens.
struct ArithmeticModel;

impl ArithmeticModel {
    /// What the model says to `request`, as the events a streaming provider would send.
    fn answer(&self, request: &ChatRequest) -> Result<Vec<ChatEvent>, LlmError> {
        let mut events = vec![ChatEvent::Started {
            response_id: Some(format!("arith-{}", request.messages.len())),
            model: Some(request.model.clone()),
        }];
        let completion = match request.messages.last() {
            // Rule 1: a tool result came back; report it.
            Some(ChatMessage::Tool { content, .. }) => {
                let text = format!("The answer is {content}.");
                // Text arrives in pieces, as it would over the wire.
                for word in text.split_inclusive(' ') {
                    events.push(ChatEvent::Text(word.to_owned()));
                }
                events.push(ChatEvent::Finish {
                    reason: "stop".to_owned(),
                });
                text.len()
            }
            // Rule 2: the user asked a sum and a calculator is offered; call it.
            Some(ChatMessage::User(question))
                if request.tools.iter().any(|tool| tool.name == "calculate") =>
            {
                let Some((a, op, b)) = parse_sum(question) else {
                    return Ok(text_answer(events, "I only do sums like `6 * 7`."));
                };
                let arguments = json!({ "a": a, "op": op, "b": b }).to_string();
                events.push(ChatEvent::ToolCallStart {
                    index: 0,
                    id: format!("call_{}", request.messages.len()),
                    name: "calculate".to_owned(),
                });
                // Arguments may be streamed in any number of fragments; the collector joins them.
                let (head, tail) = arguments.split_at(arguments.len() / 2);
                for fragment in [head, tail] {
                    events.push(ChatEvent::ToolCallArgs {
                        index: 0,
                        fragment: fragment.to_owned(),
                    });
                }
                events.push(ChatEvent::Finish {
                    reason: "tool_calls".to_owned(),
                });
                arguments.len()
            }
            Some(_) => return Ok(text_answer(events, "I need a calculator for that.")),
            // A provider refuses a request it cannot answer with an error the caller acts on.
            None => {
                return Err(LlmError::BadRequest {
                    status: 400,
                    message: "the request has no messages".to_owned(),
                });
            }
        };
        // Usage goes before the finish in real streams too; the collector keeps the last one.
        let usage = Usage::new(
            estimate_request_tokens(request) as u64,
            completion.div_ceil(4) as u64,
        );
        events.insert(events.len() - 1, ChatEvent::Usage(usage));
        Ok(events)
    }
}

/// `events` followed by a whole text answer.
fn text_answer(mut events: Vec<ChatEvent>, text: &str) -> Vec<ChatEvent> {
    events.push(ChatEvent::Text(text.to_owned()));
    events.push(ChatEvent::Finish {
        reason: "stop".to_owned(),
    });
    events
}

/// The first `<number> <operator> <number>` in `question`.
fn parse_sum(question: &str) -> Option<(f64, String, f64)> {
    let words: Vec<&str> = question
        .split_whitespace()
        .map(|word| word.trim_end_matches(['?', '.', '!']))
        .collect();
    words.windows(3).find_map(|window| {
        let a = window[0].parse().ok()?;
        let op = ["+", "-", "*", "/"]
            .into_iter()
            .find(|op| *op == window[1])?;
        let b = window[2].parse().ok()?;
        Some((a, op.to_owned(), b))
    })
}

#[async_trait::async_trait]
impl LlmClient for ArithmeticModel {
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        // A network client would send the request here and map the provider's stream; errors
        // before the first event (refused, rate limited) are returned, not streamed.
        let events = self.answer(&request)?;
        Ok(Box::pin(futures::stream::iter(events.into_iter().map(Ok))))
    }

    fn model_info(&self, model: &str) -> ModelInfo {
        // The runner sizes its context from this; a made-up model is not in the built-in table.
        ModelInfo::lookup(model).with_context_window(8_192)
    }
}

/// Runs the `calculate` tool the example offers the model.
fn calculate(arguments: &str) -> Result<String, Box<dyn Error>> {
    let args: serde_json::Value = serde_json::from_str(arguments)?;
    let number = |key: &str| args[key].as_f64().ok_or(format!("`{key}` is not a number"));
    let (a, b) = (number("a")?, number("b")?);
    let result = match args["op"].as_str() {
        Some("+") => a + b,
        Some("-") => a - b,
        Some("*") => a * b,
        Some("/") => a / b,
        other => return Err(format!("unknown operator {other:?}").into()),
    };
    Ok(result.to_string())
}

fn show(response: &ChatResponse) {
    println!(
        "  text: {:?}\n  tool calls: {:?}\n  finish: {:?}, usage: {:?}",
        response.text, response.tool_calls, response.finish_reason, response.usage
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    // Callers hold any client as `Arc<dyn LlmClient>`, the way `AgentRunner::new` takes it.
    let client: std::sync::Arc<dyn LlmClient> = std::sync::Arc::new(ArithmeticModel);
    let calculator = ToolSpec::new(
        "calculate",
        "Apply an arithmetic operator to two numbers.",
        json!({
            "type": "object",
            "properties": {
                "a": { "type": "number" },
                "op": { "type": "string", "enum": ["+", "-", "*", "/"] },
                "b": { "type": "number" }
            },
            "required": ["a", "op", "b"]
        }),
    );
    let mut messages = vec![
        ChatMessage::system("You are a careful calculator."),
        ChatMessage::user("What is 6 * 7?"),
    ];
    println!(
        "context window of arith-1: {}",
        client.model_info("arith-1").context_window
    );

    // Turn 1, through `complete()`: the model asks for the calculator.
    let request =
        ChatRequest::new("arith-1", messages.clone()).with_tools(vec![calculator.clone()]);
    let first = client.complete(request).await?;
    println!("turn 1 (complete):");
    show(&first);
    messages.push(first.to_message());
    for call in &first.tool_calls {
        let result = calculate(&call.arguments)?;
        println!("  ran {}({}) = {result}", call.name, call.arguments);
        messages.push(ChatMessage::tool_result(&call.id, result));
    }

    // Turn 2, through `stream()`: show the text as it comes, the way a chat front end would.
    let request = ChatRequest::new("arith-1", messages).with_tools(vec![calculator]);
    let mut stream = client.stream(request).await?;
    print!("turn 2 (stream): ");
    while let Some(event) = stream.next().await {
        match event? {
            ChatEvent::Text(piece) => print!("{piece}"),
            ChatEvent::Finish { reason } => println!("  [finish: {reason}]"),
            _ => {}
        }
    }

    // A request the backend refuses comes back as an `LlmError` the caller acts on.
    let empty = ChatRequest::new("arith-1", Vec::new());
    match client.complete(empty).await {
        Ok(response) => println!("unexpected answer: {response:?}"),
        Err(error) => println!(
            "empty request: {error} (retryable: {})",
            error.is_retryable()
        ),
    }
    Ok(())
}
