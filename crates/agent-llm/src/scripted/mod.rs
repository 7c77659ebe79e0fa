//! A deterministic client that answers from a script: for tests and offline demos.
//!
//! This module owns the client: the position in each queue, the recorded requests, and turning
//! a scripted turn into the events of a streamed answer. What a script is (its types, its JSON
//! and which route claims a request) lives in the `script` module. Requests are answered from
//! one queue of turns, in order, unless a route claims them: a route has its own queue and
//! answers the requests whose task (first user message) contains its text, so concurrent
//! conversations (the branches of an exploration) each get their own turns whatever order they
//! arrive in.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::client::{ChatStream, LlmClient, stream_of};
use crate::error::LlmError;
use crate::models::ModelInfo;
use crate::tokens::estimate_tokens;
use crate::types::{ChatEvent, ChatRequest, Usage};

mod prompt;
mod script;

pub use script::{
    Script, ScriptRoute, ScriptedError, ScriptedErrorKind, ScriptedToolCall, ScriptedTurn,
};

/// The client's progress: where each queue stands and what it was asked.
#[derive(Debug, Default)]
struct State {
    next: usize,
    /// The next turn of each route, by route index.
    route_next: Vec<usize>,
    requests: Vec<ChatRequest>,
    /// The route that answered each recorded request (`None`: the main queue).
    answered_by: Vec<Option<usize>>,
    /// What the previous request of each conversation counted, for turns without `usage`.
    prompt: prompt::PromptCounts,
}

/// What the clones of one client share: the script and the progress through it.
#[derive(Debug)]
struct Inner {
    script: Script,
    /// How many of the newest requests are kept; all when `None`.
    keep: Option<usize>,
    state: Mutex<State>,
}

/// A client that answers from a [`Script`], in order, and records every request it got (or
/// only the newest few, [`keeping_requests`](Self::keeping_requests), for long runs where
/// nobody reads them).
///
/// Clones share the script position and the recorded requests, so a test can keep one clone
/// and hand another (as `Arc<dyn LlmClient>`) to the code under test.
#[derive(Debug, Clone)]
pub struct ScriptedClient {
    inner: Arc<Inner>,
}

impl ScriptedClient {
    /// A client answering these turns in order.
    pub fn new(turns: Vec<ScriptedTurn>) -> Self {
        ScriptedClient::from_script(Script {
            turns,
            ..Script::default()
        })
    }

    /// A client answering from `script`.
    pub fn from_script(script: Script) -> Self {
        ScriptedClient::build(script, None)
    }

    fn build(script: Script, keep: Option<usize>) -> Self {
        ScriptedClient {
            inner: Arc::new(Inner {
                script,
                keep,
                state: Mutex::new(State::default()),
            }),
        }
    }

    /// The same client keeping only the newest `limit` requests it gets (0: none), so a long
    /// run's memory does not grow with every request's copy of the conversation. Like
    /// [`with_fallback`](Self::with_fallback), this makes a new client: call it before cloning.
    #[must_use]
    pub fn keeping_requests(self, limit: usize) -> Self {
        ScriptedClient::build(self.inner.script.clone(), Some(limit))
    }

    /// A client from a JSON script value (see the crate docs for the format).
    pub fn from_json(value: serde_json::Value) -> Result<Self, LlmError> {
        Ok(ScriptedClient::from_script(Script::from_json_value(value)?))
    }

    /// A client from JSON script text.
    pub fn from_json_str(json: &str) -> Result<Self, LlmError> {
        Ok(ScriptedClient::from_script(Script::from_json_text(json)?))
    }

    /// A client from a JSON script file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, LlmError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|err| LlmError::config(format!("cannot read {}: {err}", path.display())))?;
        ScriptedClient::from_json_str(&text)
    }

    /// The same client answering `text` once the turns run out. Like
    /// [`with_context_window`](Self::with_context_window), this makes a new client: call it
    /// before cloning.
    #[must_use]
    pub fn with_fallback(self, text: impl Into<String>) -> Self {
        let mut script = self.inner.script.clone();
        script.fallback = Some(text.into());
        ScriptedClient::build(script, self.inner.keep)
    }

    /// The same client with one more route: requests whose task contains `text` are answered
    /// from `turns` (see [`ScriptRoute`]). Like [`with_fallback`](Self::with_fallback), this
    /// makes a new client: call it before cloning.
    #[must_use]
    pub fn with_route(self, text: impl Into<String>, turns: Vec<ScriptedTurn>) -> Self {
        let mut script = self.inner.script.clone();
        script.routes.push(ScriptRoute::new(text, turns));
        ScriptedClient::build(script, self.inner.keep)
    }

    /// The same client reporting this context window for every model.
    #[must_use]
    pub fn with_context_window(self, context_window: usize) -> Self {
        let mut script = self.inner.script.clone();
        script.context_window = Some(context_window);
        ScriptedClient::build(script, self.inner.keep)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Every request received so far (the newest ones only, with
    /// [`keeping_requests`](Self::keeping_requests)), in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.state().requests.clone()
    }

    /// The most recent request, if any.
    pub fn last_request(&self) -> Option<ChatRequest> {
        self.state().requests.last().cloned()
    }

    /// The requests answered by route `index` (in the order of [`Script::routes`]), in order.
    pub fn route_requests(&self, index: usize) -> Vec<ChatRequest> {
        let state = self.state();
        state
            .requests
            .iter()
            .zip(&state.answered_by)
            .filter(|(_, route)| **route == Some(index))
            .map(|(request, _)| request.clone())
            .collect()
    }

    /// How many turns of the main queue have been served (routes not counted).
    pub fn served(&self) -> usize {
        self.state().next.min(self.inner.script.turns.len())
    }

    /// How many turns of the main queue are left (routes not counted).
    pub fn remaining(&self) -> usize {
        self.inner.script.turns.len() - self.served()
    }

    /// How many turns of route `index` are left.
    pub fn route_remaining(&self, index: usize) -> usize {
        let total = self
            .inner
            .script
            .routes
            .get(index)
            .map_or(0, |route| route.turns.len());
        let next = self.state().route_next.get(index).copied().unwrap_or(0);
        total.saturating_sub(next)
    }

    /// Records `request` and picks the turn that answers it.
    /// Also returns the request's estimated prompt tokens when the turn reports no usage of its
    /// own (0 otherwise).
    fn take_turn(&self, request: &ChatRequest) -> Result<(usize, ScriptedTurn, usize), LlmError> {
        let route = self.inner.script.route_for(request);
        let mut state = self.state();
        if self.inner.keep != Some(0) {
            state.requests.push(request.clone());
            state.answered_by.push(route);
        }
        if let Some(limit) = self.inner.keep
            && state.requests.len() > limit
        {
            let excess = state.requests.len() - limit;
            state.requests.drain(..excess);
            state.answered_by.drain(..excess);
        }
        let script = &self.inner.script;
        let (position, turns, fallback) =
            match route.and_then(|i| script.routes.get(i).map(|r| (i, r))) {
                Some((index, route)) => {
                    if state.route_next.len() <= index {
                        state.route_next.resize(index + 1, 0);
                    }
                    let position = state.route_next[index];
                    state.route_next[index] += 1;
                    let fallback = route.fallback.as_ref().or(script.fallback.as_ref());
                    (position, &route.turns, fallback)
                }
                None => {
                    let position = state.next;
                    state.next += 1;
                    (position, &script.turns, script.fallback.as_ref())
                }
            };
        let turn = match turns.get(position) {
            Some(turn) => turn.clone(),
            None => match fallback {
                Some(text) => ScriptedTurn::text(text.clone()),
                None => {
                    return Err(LlmError::ScriptExhausted {
                        served: turns.len(),
                    });
                }
            },
        };
        let prompt_tokens = match (&turn.usage, &turn.error) {
            (None, None) => state.prompt.estimate(route, request),
            _ => 0,
        };
        Ok((position + 1, turn, prompt_tokens))
    }
}

/// The events of one scripted answer: text in word-sized pieces, each tool call's arguments in
/// two fragments, then usage and the finish reason.
fn turn_events(
    number: usize,
    turn: ScriptedTurn,
    request: &ChatRequest,
    prompt_tokens: usize,
) -> Vec<ChatEvent> {
    let mut events = vec![ChatEvent::Started {
        response_id: Some(format!("scripted-{number}")),
        model: Some(request.model.clone()),
    }];
    let mut completion = 0;
    if let Some(text) = &turn.text {
        completion += estimate_tokens(text);
        events.extend(
            text.split_inclusive(' ')
                .map(|piece| ChatEvent::Text(piece.to_string())),
        );
    }
    let has_calls = !turn.tool_calls.is_empty();
    for (index, call) in turn.tool_calls.into_iter().enumerate() {
        let arguments = match call.arguments {
            serde_json::Value::String(raw) => raw,
            serde_json::Value::Null => "{}".to_string(),
            value => value.to_string(),
        };
        completion += estimate_tokens(&call.name) + estimate_tokens(&arguments);
        let id = call
            .id
            .unwrap_or_else(|| format!("call_{number}_{}", index + 1));
        events.push(ChatEvent::ToolCallStart {
            index,
            id,
            name: call.name,
        });
        let mut middle = arguments.len() / 2;
        while !arguments.is_char_boundary(middle) {
            middle += 1;
        }
        let (head, tail) = arguments.split_at(middle);
        for fragment in [head, tail] {
            events.push(ChatEvent::ToolCallArgs {
                index,
                fragment: fragment.to_string(),
            });
        }
    }
    let usage = turn.usage.unwrap_or(Usage {
        prompt_tokens: prompt_tokens as u64,
        completion_tokens: completion as u64,
        cached_tokens: 0,
        estimated: true,
    });
    events.push(ChatEvent::Usage(usage));
    let reason = turn
        .finish_reason
        .unwrap_or_else(|| if has_calls { "tool_calls" } else { "stop" }.to_string());
    events.push(ChatEvent::Finish { reason });
    events
}

#[async_trait::async_trait]
impl LlmClient for ScriptedClient {
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        let (number, turn, prompt_tokens) = self.take_turn(&request)?;
        if let Some(delay) = turn.delay_ms {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        if let Some(error) = &turn.error {
            return Err(error.to_error());
        }
        Ok(stream_of(turn_events(
            number,
            turn,
            &request,
            prompt_tokens,
        )))
    }

    fn model_info(&self, model: &str) -> ModelInfo {
        let info = ModelInfo::lookup(model);
        match self.inner.script.context_window {
            Some(window) => info.with_context_window(window),
            None => info,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::types::ChatMessage;

    fn ask(task: &str) -> ChatRequest {
        ChatRequest::new(
            "scripted",
            vec![
                ChatMessage::system("sys"),
                ChatMessage::user(task),
                ChatMessage::user("a later message is not the task"),
            ],
        )
    }

    async fn text(client: &ScriptedClient, task: &str) -> Result<String, LlmError> {
        let response = client.complete(ask(task)).await?;
        Ok(response.text.unwrap_or_default())
    }

    #[tokio::test]
    async fn a_client_can_keep_only_its_newest_requests() {
        let turns = || {
            (1..=3)
                .map(|n| ScriptedTurn::text(format!("main {n}")))
                .collect()
        };
        let client = ScriptedClient::new(turns())
            .with_route("alpha", vec![ScriptedTurn::text("a1")])
            .keeping_requests(2);
        for task in ["one", "alpha", "two"] {
            text(&client, task).await.unwrap();
        }
        let kept: Vec<String> = client
            .requests()
            .iter()
            .map(|r| r.messages[1].text().to_owned())
            .collect();
        assert_eq!(kept, ["alpha", "two"]);
        assert_eq!(client.route_requests(0).len(), 1, "routes stay paired");
        assert_eq!(client.served(), 2, "the script goes on as before");

        let silent = ScriptedClient::new(turns()).keeping_requests(0);
        assert_eq!(text(&silent, "one").await.unwrap(), "main 1");
        assert!(silent.requests().is_empty());
    }

    #[tokio::test]
    async fn routes_keep_their_own_order_and_leave_the_main_queue_alone() {
        let client = ScriptedClient::new(vec![ScriptedTurn::text("main 1")])
            .with_route(
                "alpha",
                vec![ScriptedTurn::text("a1"), ScriptedTurn::text("a2")],
            )
            .with_route("beta", vec![ScriptedTurn::text("b1")]);
        assert_eq!(text(&client, "do beta").await.unwrap(), "b1");
        assert_eq!(text(&client, "do alpha").await.unwrap(), "a1");
        assert_eq!(text(&client, "the main task").await.unwrap(), "main 1");
        assert_eq!(text(&client, "alpha again").await.unwrap(), "a2");
        assert_eq!(
            text(&client, "beta again").await.unwrap_err(),
            LlmError::ScriptExhausted { served: 1 }
        );
        assert_eq!(client.served(), 1);
        assert_eq!(client.route_remaining(0), 0);
        assert_eq!(client.route_requests(0).len(), 2);
        assert_eq!(client.route_requests(1).len(), 2);
        assert_eq!(client.requests().len(), 5);
    }

    #[tokio::test]
    async fn the_text_ending_latest_wins_and_ties_go_to_the_first_route() {
        let client = ScriptedClient::new(Vec::new())
            .with_route("try X", vec![ScriptedTurn::text("short")])
            .with_route("try X and Y", vec![ScriptedTurn::text("long")])
            .with_route("try X", vec![ScriptedTurn::text("never")]);
        // "try X" also occurs inside "try X and Y", but ends earlier.
        assert_eq!(
            text(&client, "background: try X and Y").await.unwrap(),
            "long"
        );
        assert_eq!(
            text(&client, "others: try X and Y. yours: try X")
                .await
                .unwrap(),
            "short"
        );
    }

    #[tokio::test]
    async fn an_exhausted_route_answers_its_fallback_then_the_scripts() {
        let script: Script = serde_json::from_value(serde_json::json!({
            "fallback": "script fallback",
            "routes": [
                {"when_task_contains": "one", "turns": [], "fallback": "route fallback"},
                {"when_task_contains": "two"},
                {"when_task_contains": "", "turns": [{"text": "empty text matches nothing"}]}
            ]
        }))
        .unwrap();
        let client = ScriptedClient::from_script(script);
        assert_eq!(text(&client, "one").await.unwrap(), "route fallback");
        assert_eq!(text(&client, "two").await.unwrap(), "script fallback");
        assert_eq!(text(&client, "three").await.unwrap(), "script fallback");
        assert_eq!(client.route_requests(2).len(), 0);
    }

    #[tokio::test]
    async fn concurrent_conversations_each_get_their_own_turns() {
        let mut client = ScriptedClient::new(Vec::new());
        for name in ["red", "green", "blue"] {
            client = client.with_route(
                format!("colour {name}"),
                (1..=3)
                    .map(|n| {
                        ScriptedTurn::text(format!("{name} {n}"))
                            .with_delay(Duration::from_millis(3 * n))
                    })
                    .collect(),
            );
        }
        let run = |name: &'static str| {
            let client = client.clone();
            tokio::spawn(async move {
                let mut answers = Vec::new();
                for _ in 0..3 {
                    answers.push(text(&client, &format!("colour {name}")).await.unwrap());
                }
                answers
            })
        };
        let handles = [run("red"), run("green"), run("blue")];
        for (handle, name) in handles.into_iter().zip(["red", "green", "blue"]) {
            let answers = handle.await.unwrap();
            assert_eq!(answers, [1, 2, 3].map(|n| format!("{name} {n}")));
        }
    }
}
