//! Tests of the loop detector over hand-built histories: each pattern at its threshold and not
//! below it, warnings then stops, and no alarm on progress.

use serde_json::{Value, json};

use super::*;

/// A trace's messages, built turn by turn.
struct History {
    messages: Vec<Message>,
    calls: usize,
}

impl History {
    fn new() -> Self {
        let mut history = Self {
            messages: Vec::new(),
            calls: 0,
        };
        history.push(Role::User, json!("the task"));
        history
    }

    fn push(&mut self, role: Role, content: Value) -> &mut Message {
        let sequence = self.messages.len() as u64 + 1;
        self.messages.push(Message {
            message_id: format!("t-{sequence:04}"),
            trace_id: "t".into(),
            branch_id: None,
            role,
            sequence,
            goal_id: None,
            tool_call_id: None,
            tool_name: None,
            content: crate::Content::from_stored(role, content, false),
            description: String::new(),
            tokens: None,
            cost: None,
            duration_ms: None,
            created_at: "2026-01-01T00:00:00Z".into(),
            metadata: Default::default(),
        });
        self.messages.last_mut().unwrap()
    }

    /// One turn: calls as `(name, arguments, result)`.
    fn turn(&mut self, calls: &[(&str, &str, &str)]) -> &mut Self {
        let mut ids = Vec::new();
        let wire: Vec<Value> = calls
            .iter()
            .map(|(name, args, _)| {
                self.calls += 1;
                let id = format!("c{}", self.calls);
                ids.push(id.clone());
                json!({"id": id, "name": name, "arguments": args})
            })
            .collect();
        self.push(Role::Assistant, json!({"text": null, "tool_calls": wire}));
        for (id, (name, _, result)) in ids.into_iter().zip(calls) {
            let message = self.push(Role::Tool, json!(result));
            // In these histories a failed call's result reads `error: ...`.
            let failed = result.starts_with("error:");
            message.content = crate::Content::from_stored(Role::Tool, json!(result), failed);
            message.tool_call_id = Some(id);
            message.tool_name = Some((*name).to_owned());
        }
        self
    }

    fn warned(&mut self) -> &mut Self {
        let message = self.push(Role::User, json!("Loop detected"));
        message
            .metadata
            .insert(crate::meta::LOOP_GUARD.into(), json!("repeated_call"));
        self
    }

    fn check(&self) -> GuardVerdict {
        check(&self.messages, &LoopGuard::default())
    }
}

fn pattern(verdict: &GuardVerdict) -> Option<(&'static str, LoopPattern)> {
    match verdict {
        GuardVerdict::Continue => None,
        GuardVerdict::Warn(d) => Some(("warn", d.pattern)),
        GuardVerdict::Stop(d) => Some(("stop", d.pattern)),
    }
}

const READ_A: (&str, &str, &str) = ("read_file", r#"{"path":"a.rs"}"#, "fn a() {}");
const READ_B: (&str, &str, &str) = ("read_file", r#"{"path":"b.rs"}"#, "fn b() {}");

#[test]
fn the_same_call_three_times_is_warned_then_stopped_when_it_goes_on() {
    let mut history = History::new();
    history.turn(&[READ_A]).turn(&[READ_A]);
    assert_eq!(history.check(), GuardVerdict::Continue, "two is not a loop");
    history.turn(&[READ_A]);
    let GuardVerdict::Warn(detection) = history.check() else {
        panic!("expected a warning, got {:?}", history.check());
    };
    assert_eq!(detection.pattern, LoopPattern::RepeatedCall);
    assert_eq!(detection.turns, 3);
    assert_eq!(
        detection.detail,
        r#"read_file {"path":"a.rs"} returned the same result 3 times in a row"#
    );
    assert!(warning_text(&detection).starts_with("Loop detected (repeated_call): read_file"));
    history.warned();
    assert_eq!(history.check(), GuardVerdict::Continue, "nothing new yet");
    history.turn(&[READ_A]);
    let GuardVerdict::Stop(detection) = history.check() else {
        panic!("expected a stop, got {:?}", history.check());
    };
    assert_eq!(
        stop_error(&detection),
        r#"stuck: repeated_call: read_file {"path":"a.rs"} returned the same result 4 times in a row"#
    );
}

#[test]
fn a_warning_that_is_heeded_lets_the_run_go_on() {
    let mut history = History::new();
    history
        .turn(&[READ_A])
        .turn(&[READ_A])
        .turn(&[READ_A])
        .warned();
    history.turn(&[READ_B]);
    assert_eq!(history.check(), GuardVerdict::Continue);
    // The same loop again later is warned again: the earlier warning is outside it.
    history.turn(&[READ_B]).turn(&[READ_B]);
    assert_eq!(
        pattern(&history.check()),
        Some(("warn", LoopPattern::RepeatedCall))
    );
}

#[test]
fn argument_key_order_does_not_matter_but_a_new_result_is_progress() {
    let mut history = History::new();
    history
        .turn(&[("grep", r#"{"pattern":"x","path":"src"}"#, "none")])
        .turn(&[("grep", r#"{"path":"src","pattern":"x"}"#, "none")])
        .turn(&[("grep", r#"{ "path": "src", "pattern": "x" }"#, "none")]);
    assert_eq!(
        pattern(&history.check()),
        Some(("warn", LoopPattern::RepeatedCall))
    );

    let mut polling = History::new();
    for step in 0..6 {
        let output = format!("{step} of 6 tests pass");
        polling.turn(&[("bash", r#"{"command":"cargo test"}"#, &output)]);
        assert_eq!(polling.check(), GuardVerdict::Continue);
    }
}

#[test]
fn the_same_error_with_other_arguments_is_a_loop() {
    let mut history = History::new();
    let error = "error: old text not found in src/lib.rs";
    for old in ["a", "b"] {
        let args = format!(r#"{{"path":"src/lib.rs","old":"{old}","new":"x"}}"#);
        history.turn(&[("edit_file", &args, error)]);
    }
    assert_eq!(history.check(), GuardVerdict::Continue);
    history.turn(&[(
        "edit_file",
        r#"{"path":"src/lib.rs","old":"c","new":"x"}"#,
        error,
    )]);
    let GuardVerdict::Warn(detection) = history.check() else {
        panic!("expected a warning");
    };
    assert_eq!(detection.pattern, LoopPattern::RepeatedError);
    assert_eq!(
        detection.detail,
        "edit_file failed 3 times in a row with the same error: error: old text not found in \
         src/lib.rs"
    );
    history.warned();
    history.turn(&[(
        "edit_file",
        r#"{"path":"src/lib.rs","old":"d","new":"x"}"#,
        error,
    )]);
    assert_eq!(
        pattern(&history.check()),
        Some(("stop", LoopPattern::RepeatedError))
    );
}

#[test]
fn two_calls_alternating_without_progress_are_a_loop() {
    let mut history = History::new();
    for _ in 0..2 {
        history.turn(&[READ_A]).turn(&[READ_B]);
    }
    history.turn(&[READ_A]);
    assert_eq!(history.check(), GuardVerdict::Continue, "five turns");
    history.turn(&[READ_B]);
    let GuardVerdict::Warn(detection) = history.check() else {
        panic!("expected a warning");
    };
    assert_eq!(detection.pattern, LoopPattern::AlternatingCalls);
    assert_eq!(
        detection.detail,
        r#"read_file {"path":"a.rs"} and read_file {"path":"b.rs"} alternated 3 times each without a new result"#
    );
    history.warned().turn(&[READ_A]);
    assert_eq!(
        pattern(&history.check()),
        Some(("stop", LoopPattern::AlternatingCalls))
    );
}

#[test]
fn a_long_run_of_distinct_reads_is_never_a_loop() {
    let mut history = History::new();
    for index in 0..200 {
        let args = format!(r#"{{"path":"src/file_{index}.rs"}}"#);
        let output = format!("contents of file {index}");
        history.turn(&[("read_file", &args, &output), ("goal", "{}", "ok")]);
        assert_eq!(history.check(), GuardVerdict::Continue, "turn {index}");
    }
}

#[test]
fn a_new_instruction_starts_afresh() {
    let mut history = History::new();
    history.turn(&[READ_A]).turn(&[READ_A]);
    history.push(Role::User, json!("Now carry out the plan."));
    history.turn(&[READ_A]);
    assert_eq!(history.check(), GuardVerdict::Continue);
}

#[test]
fn after_max_warnings_the_next_loop_stops_at_once() {
    let mut history = History::new();
    for _ in 0..3 {
        history
            .turn(&[READ_A])
            .turn(&[READ_A])
            .turn(&[READ_A])
            .warned();
        history.turn(&[READ_B]);
    }
    history.turn(&[READ_A]).turn(&[READ_A]).turn(&[READ_A]);
    assert_eq!(
        pattern(&history.check()),
        Some(("stop", LoopPattern::RepeatedCall))
    );
    let strict = LoopGuard {
        max_warnings: 0,
        ..LoopGuard::default()
    };
    let mut fresh = History::new();
    fresh.turn(&[READ_A]).turn(&[READ_A]).turn(&[READ_A]);
    assert!(matches!(
        check(&fresh.messages, &strict),
        GuardVerdict::Stop(_)
    ));
}

#[test]
fn thresholds_are_configurable_and_zero_turns_a_pattern_off() {
    let mut history = History::new();
    for _ in 0..5 {
        history.turn(&[READ_A]);
    }
    assert_eq!(
        check(&history.messages, &LoopGuard::off()),
        GuardVerdict::Continue
    );
    let patient = LoopGuard {
        repeated_call: 6,
        ..LoopGuard::default()
    };
    assert_eq!(check(&history.messages, &patient), GuardVerdict::Continue);
    history.turn(&[READ_A]);
    assert!(matches!(
        check(&history.messages, &patient),
        GuardVerdict::Warn(_)
    ));
    let serialised = serde_json::to_value(LoopGuard::default()).unwrap();
    assert_eq!(
        serialised,
        json!({"repeated_call": 3, "repeated_error": 3, "alternation": 3, "stop_after": 1, "max_warnings": 3})
    );
}
