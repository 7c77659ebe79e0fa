//! Unique tool-call ids within a trace.

use std::collections::HashSet;
use std::sync::Arc;

use crate::message::{Message, Role};
use agent_llm::ToolCall;

/// The tool call ids a trace has used, kept up to date with its growing message list, so that
/// each turn's ids are checked against a set rather than against every earlier call.
///
/// Keeps each tool call's id exactly as the provider sent it, and replaces only an id that is
/// empty or that another call of the trace already has, before the turn is recorded.
///
/// Results are paired with their calls by id, in the context and on resume, and the id names
/// the call in the API's approval path. Providers do not always deliver unique ids: servers that
/// send none get `call_0` on every turn, and a model's output can repeat one. Any other id goes
/// back to the provider as it came (Kimi K2's `functions.read_file:0` included); a provider that
/// restricts the characters of ids maps them in its own request builder. A replaced id is
/// `call_t<turn>_<position>`.
#[derive(Debug, Default)]
pub struct CallIds {
    /// How many messages of the list have been read, and the sequence of the last one.
    read: usize,
    last: Option<u64>,
    /// The ids of every call read.
    used: HashSet<String>,
    /// How many assistant messages were read.
    turns: usize,
}

impl CallIds {
    /// Makes the ids of `calls` unique among those of `messages` and among themselves.
    pub fn assign(&mut self, calls: &mut [ToolCall], messages: &[Arc<Message>]) {
        let follows = self.read <= messages.len()
            && self.read.checked_sub(1).map(|i| messages[i].sequence) == self.last;
        if !follows {
            *self = Self::default();
        }
        for message in &messages[self.read..] {
            if message.role == Role::Assistant {
                self.turns += 1;
                let ids = message.content.tool_calls().iter().map(|c| c.id.clone());
                self.used.extend(ids);
            }
        }
        self.read = messages.len();
        self.last = messages.last().map(|m| m.sequence);
        let turn = self.turns + 1;
        // Ids given to this turn are not the trace's until the turn is recorded.
        let mut fresh: Vec<String> = Vec::new();
        for (position, call) in calls.iter_mut().enumerate() {
            let taken = |id: &str, fresh: &[String]| {
                self.used.contains(id) || fresh.iter().any(|f| f == id)
            };
            if !call.id.is_empty() && !taken(&call.id, &fresh) {
                fresh.push(call.id.clone());
                continue;
            }
            let base = format!("call_t{turn}_{}", position + 1);
            let mut id = base.clone();
            let mut again = 1;
            while taken(&id, &fresh) {
                again += 1;
                id = format!("{base}_{again}");
            }
            fresh.push(id.clone());
            call.id = id;
        }
    }
}
