//! Loop guardrails: a pure detector of a stuck agent over the newest turns of a trace.
//!
//! A *turn* is an assistant message with tool calls and the results of those calls. The
//! detector reads the turns since the last instruction (the task, or another user message that
//! is not a loop warning) and looks for three patterns, each with its own threshold:
//!
//! - **repeated call** ([`LoopPattern::RepeatedCall`]): the same calls with the same arguments
//!   got the same results in `repeated_call` turns in a row;
//! - **repeated error** ([`LoopPattern::RepeatedError`]): every call failed, with the same
//!   errors of the same tools, in `repeated_error` turns in a row, whatever the arguments;
//! - **alternating calls** ([`LoopPattern::AlternatingCalls`]): two different turns took turns,
//!   each with the same results as before, `alternation` times each (`A B A B A B` is 3).
//!
//! A text-only answer ends the run, so repeated answers without tool calls cannot happen inside
//! one run and are not a pattern. Arguments are compared as JSON values (key order does not
//! matter) and results as text, so a call whose result changes (a log that grows, a test that
//! starts passing) is progress, not a loop.
//!
//! What to do is decided from the same messages: the first time a loop is seen the model gets
//! a warning (a user message marked with [`meta::LOOP_GUARD`](crate::meta::LOOP_GUARD)); if the
//! loop goes on for `stop_after` more turns after a warning, or a loop is found again after
//! `max_warnings` warnings in the trace, the run stops. The runner records each decision as a `loop_detected`
//! event and ends a stopped run `failed` with a `stuck: …` error, which a resume can continue.
//!
//! The detector lives with the records it reads and the vocabulary it speaks (the event's
//! [`LoopPattern`] and [`LoopAction`](crate::LoopAction), the warning's metadata key): it is a
//! pure function of a trace's messages and runs nothing; acting on its verdict is the runner's.

use std::borrow::Borrow;
use std::cell::OnceCell;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::LoopPattern;
use crate::message::{Message, Role};

/// The longest argument or result text quoted in a detail, in characters.
const MAX_QUOTED_CHARS: usize = 120;

/// The thresholds of the loop guard; a threshold of 0 turns its pattern off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoopGuard {
    /// Turns in a row with the same calls, arguments and results.
    pub repeated_call: usize,
    /// Turns in a row in which every call failed, with the same tools and errors.
    pub repeated_error: usize,
    /// Times each of two alternating turns repeated with the same results.
    pub alternation: usize,
    /// Turns the loop may go on after a warning before the run stops (at least 1).
    pub stop_after: usize,
    /// Warnings in one trace; a loop found after this many stops the run without another
    /// warning (0: stop at the first loop).
    pub max_warnings: usize,
}

impl Default for LoopGuard {
    fn default() -> Self {
        Self {
            repeated_call: 3,
            repeated_error: 3,
            alternation: 3,
            stop_after: 1,
            max_warnings: 3,
        }
    }
}

impl LoopGuard {
    /// No detection at all.
    pub fn off() -> Self {
        Self {
            repeated_call: 0,
            repeated_error: 0,
            alternation: 0,
            stop_after: 1,
            max_warnings: 0,
        }
    }

    /// True when no pattern is looked for.
    pub fn is_off(&self) -> bool {
        self.repeated_call == 0 && self.repeated_error == 0 && self.alternation == 0
    }

    /// How many of the newest turns the detector needs to see.
    fn window(&self) -> usize {
        let longest = self
            .repeated_call
            .max(self.repeated_error)
            .max(2 * self.alternation);
        2 * longest + self.stop_after.max(1) + 2
    }
}

/// A loop found in the newest turns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopDetection {
    /// Which kind.
    pub pattern: LoopPattern,
    /// What repeats, in words, e.g. `read_file {"path":"a"} returned the same result 3 times
    /// in a row`.
    pub detail: String,
    /// How many of the newest turns belong to the loop.
    pub turns: usize,
}

/// What the guard asks the runner to do after a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuardVerdict {
    /// Nothing: no loop, or a warned loop that still has turns left.
    Continue,
    /// Tell the model about the loop.
    Warn(LoopDetection),
    /// Stop the run.
    Stop(LoopDetection),
}

/// The message that tells the model about a loop.
pub fn warning_text(detection: &LoopDetection) -> String {
    format!(
        "Loop detected ({}): {}. Doing the same again will give the same result. Change your \
         approach: look at the plan, try something different, or if you are blocked, stop and \
         say what blocks you in a final answer without tool calls. If the loop goes on, the run \
         will be stopped.",
        detection.pattern.name(),
        detection.detail
    )
}

/// The error of a run stopped by the guard.
pub fn stop_error(detection: &LoopDetection) -> String {
    format!("stuck: {}: {}", detection.pattern.name(), detection.detail)
}

/// Decides what to do after the newest turn of `messages` (a trace's messages in order).
/// Pure: reads only the messages, and only the newest turns and the warning marks. The messages
/// are owned or shared (`Arc<Message>`), as the caller holds them.
pub fn check<M: Borrow<Message>>(messages: &[M], guard: &LoopGuard) -> GuardVerdict {
    if guard.is_off() {
        return GuardVerdict::Continue;
    }
    let recent = recent_turns(messages, guard.window());
    let Some(detection) = detect(&recent.turns, guard) else {
        return GuardVerdict::Continue;
    };
    // A warning inside the loop: the model was told and went on.
    let newest_warning = recent
        .warnings
        .iter()
        .copied()
        .filter(|after| *after < detection.turns)
        .min();
    match newest_warning {
        Some(after) if after >= guard.stop_after.max(1) => GuardVerdict::Stop(detection),
        Some(_) => GuardVerdict::Continue,
        None if warnings_in(messages) >= guard.max_warnings => GuardVerdict::Stop(detection),
        None => GuardVerdict::Warn(detection),
    }
}

/// One tool call of a turn with its result, borrowed from the messages.
#[derive(Debug)]
struct Call<'a> {
    name: &'a str,
    /// The arguments as the model wrote them.
    raw: &'a str,
    /// The arguments as canonical JSON text (the raw text when they are not JSON), made only
    /// when two calls' raw texts differ: most turns are told apart by their names, or their
    /// raw texts are the same.
    canonical: OnceCell<String>,
    result: &'a str,
    is_error: bool,
}

impl Call<'_> {
    fn arguments(&self) -> &str {
        self.canonical.get_or_init(|| canonical(self.raw))
    }
}

impl PartialEq for Call<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.is_error == other.is_error
            && self.result == other.result
            && (self.raw == other.raw || self.arguments() == other.arguments())
    }
}

/// The newest turns, newest first, and where the loop warnings are among them.
struct Recent<'a> {
    turns: Vec<Vec<Call<'a>>>,
    /// For each warning, how many turns came after it.
    warnings: Vec<usize>,
}

/// Reads turns back from the newest message until `window` turns, an instruction or a
/// text-only answer.
fn recent_turns<M: Borrow<Message>>(messages: &[M], window: usize) -> Recent<'_> {
    let mut turns: Vec<Vec<Call<'_>>> = Vec::new();
    let mut warnings = Vec::new();
    let mut results: HashMap<&str, &Message> = HashMap::new();
    for message in messages.iter().rev().map(Borrow::borrow) {
        if turns.len() >= window {
            break;
        }
        match message.role {
            Role::Tool => {
                if let Some(id) = message.tool_call_id.as_deref() {
                    results.insert(id, message);
                }
            }
            Role::Assistant => {
                let calls = message.content.tool_calls();
                if calls.is_empty() {
                    break;
                }
                let turn = calls
                    .iter()
                    .map(|call| {
                        let answer = results.get(call.id.as_str());
                        Call {
                            is_error: answer.is_some_and(|m| m.content.is_error()),
                            raw: &call.arguments,
                            canonical: OnceCell::new(),
                            name: &call.name,
                            result: answer.map_or("", |m| m.content.text()),
                        }
                    })
                    .collect();
                turns.push(turn);
                results.clear();
            }
            Role::User if message.metadata.contains_key(crate::meta::LOOP_GUARD) => {
                warnings.push(turns.len());
            }
            Role::User => break,
            Role::System => {}
        }
    }
    Recent { turns, warnings }
}

/// The loop warnings recorded in a trace.
fn warnings_in<M: Borrow<Message>>(messages: &[M]) -> usize {
    messages
        .iter()
        .map(Borrow::borrow)
        .filter(|m: &&Message| {
            m.role == Role::User && m.metadata.contains_key(crate::meta::LOOP_GUARD)
        })
        .count()
}

/// Arguments as compact JSON with sorted keys, so that key order does not matter.
fn canonical(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(mut value) => {
            // Maps keep insertion order when serde_json's `preserve_order` is on (a dependency
            // may turn it on for the whole build): sort them here, whatever the features.
            value.sort_all_objects();
            value.to_string()
        }
        Err(_) => arguments.trim().to_owned(),
    }
}

/// The first loop found in the newest turns (newest first), if any.
fn detect(turns: &[Vec<Call<'_>>], guard: &LoopGuard) -> Option<LoopDetection> {
    let newest = turns.first()?;
    if guard.repeated_call > 0 {
        let run = turns.iter().take_while(|turn| *turn == newest).count();
        if run >= guard.repeated_call {
            return Some(LoopDetection {
                pattern: LoopPattern::RepeatedCall,
                detail: format!(
                    "{} returned the same result {run} times in a row",
                    describe_turn(newest)
                ),
                turns: run,
            });
        }
    }
    if guard.alternation > 0
        && let Some(other) = turns.get(1)
        && other != newest
    {
        let run = turns
            .iter()
            .enumerate()
            .take_while(|(index, turn)| *turn == &turns[*index % 2])
            .count();
        if run >= 2 * guard.alternation {
            return Some(LoopDetection {
                pattern: LoopPattern::AlternatingCalls,
                detail: format!(
                    "{} and {} alternated {} times each without a new result",
                    describe_turn(other),
                    describe_turn(newest),
                    run / 2
                ),
                turns: run,
            });
        }
    }
    if guard.repeated_error > 0
        && let Some(errors) = failures(newest)
    {
        let run = turns
            .iter()
            .take_while(|turn| failures(turn).as_ref() == Some(&errors))
            .count();
        if run >= guard.repeated_error {
            let names: Vec<&str> = errors.iter().map(|(name, _)| *name).collect();
            return Some(LoopDetection {
                pattern: LoopPattern::RepeatedError,
                detail: format!(
                    "{} failed {run} times in a row with the same error: {}",
                    names.join(" + "),
                    quote(errors[0].1)
                ),
                turns: run,
            });
        }
    }
    None
}

/// The failures of a turn in which every call failed, as sorted `(tool, error)` pairs; `None`
/// when a call succeeded (that is progress) or the turn is empty.
fn failures<'a>(turn: &[Call<'a>]) -> Option<Vec<(&'a str, &'a str)>> {
    if turn.is_empty() || !turn.iter().all(|call| call.is_error) {
        return None;
    }
    let mut errors: Vec<(&str, &str)> = turn.iter().map(|call| (call.name, call.result)).collect();
    errors.sort_unstable();
    Some(errors)
}

/// `name args` of each call of a turn, joined with ` + `.
fn describe_turn(turn: &[Call<'_>]) -> String {
    turn.iter()
        .map(|call| format!("{} {}", call.name, quote(call.arguments())))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// A text cut to [`MAX_QUOTED_CHARS`] on one line.
fn quote(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= MAX_QUOTED_CHARS {
        return line;
    }
    let cut: String = line.chars().take(MAX_QUOTED_CHARS - 1).collect();
    format!("{cut}…")
}

#[cfg(test)]
#[path = "loop_guard_tests.rs"]
mod tests;
