//! The terminal questions: what is asked, and what each typed answer becomes.

use serde_json::json;

use super::*;

/// Asks a form with `schema`, typing `typed`; returns the answer and what was shown.
fn check(kind: ElicitationKind, typed: &str) -> (ElicitationAnswer, String) {
    let request = ElicitationRequest {
        server: "files".into(),
        trace_id: None,
        message: "Who are you?".into(),
        kind,
    };
    let mut input = typed.as_bytes();
    let mut out = Vec::new();
    let answer = ask(&request, &mut input, &mut out);
    (answer, String::from_utf8(out).unwrap())
}

fn form(schema: Value) -> ElicitationKind {
    ElicitationKind::Form {
        form: agent_runner::interaction::Form::from_schema(&schema),
    }
}

fn accepted(value: Value) -> ElicitationAnswer {
    ElicitationAnswer::Accept(value.as_object().unwrap().clone())
}

#[test]
fn enter_keeps_every_default() {
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "verified": {"type": "boolean", "default": true},
    }});
    let (answer, shown) = check(form(schema), "\n\n\n\n\n\n");
    assert_eq!(
        answer,
        accepted(
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true})
        )
    );
    assert!(
        shown.contains("The MCP server files asks: Who are you?"),
        "{shown}"
    );
    assert!(shown.contains("name (optional) [John Doe]: "), "{shown}");
    assert!(shown.contains("1) active  2) inactive"), "{shown}");
}

#[test]
fn typed_answers_are_parsed_and_wrong_ones_asked_again() {
    let schema = json!({"type": "object", "required": ["name", "age"], "properties": {
        "age": {"type": "integer", "title": "Age"},
        "colors": {"type": "array", "items": {"anyOf": [
            {"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]}},
        "name": {"type": "string", "description": "your full name"},
        "nick": {"type": "string"},
        "tea": {"type": "boolean"},
    }});
    let (answer, shown) = check(form(schema), "\nold\n42\n1, Green\n\nAda\n\nmaybe\ny\n");
    assert_eq!(
        answer,
        accepted(json!({"age": 42, "colors": ["r", "g"], "name": "Ada", "tea": true}))
    );
    assert!(shown.contains("a whole number is needed"), "{shown}");
    assert!(shown.contains("an answer is needed"), "{shown}");
    assert!(shown.contains("name (your full name): "), "{shown}");
    assert!(shown.contains("answer y or n"), "{shown}");
}

#[test]
fn decline_cancel_and_end_of_input() {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    assert_eq!(
        check(form(schema.clone()), "d\n").0,
        ElicitationAnswer::Decline
    );
    assert_eq!(
        check(form(schema.clone()), "c\n").0,
        ElicitationAnswer::Cancel
    );
    // Enter answers, Enter leaves the optional field out; the end of input declines.
    assert_eq!(
        check(form(schema.clone()), "\n\n").0,
        ElicitationAnswer::Accept(Map::new())
    );
    assert_eq!(check(form(schema), "\n").0, ElicitationAnswer::Decline);
    let required =
        json!({"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}});
    assert_eq!(check(form(required), "\n").0, ElicitationAnswer::Decline);
}

#[test]
fn url_questions_show_the_page() {
    let url = ElicitationKind::Url {
        url: "https://example.com/pay".into(),
        elicitation_id: "1".into(),
    };
    let (answer, shown) = check(url.clone(), "\n");
    assert_eq!(answer, ElicitationAnswer::Accept(Map::new()));
    assert!(shown.contains("https://example.com/pay"), "{shown}");
    assert_eq!(check(url, "d\n").0, ElicitationAnswer::Decline);
}
