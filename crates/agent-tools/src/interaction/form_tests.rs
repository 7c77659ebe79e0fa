//! A form read from a schema, typed answers, and the check of a filled-in form.

use serde_json::json;

use super::*;

fn schema() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string", "minLength": 2, "title": "Name"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "agree": {"type": "boolean"},
        "colour": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l"}]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 2}
    }, "required": ["name"]})
}

fn checked(content: Value) -> Result<(), String> {
    Form::from_schema(&schema()).check(content.as_object().unwrap())
}

fn field(name: &str) -> Field {
    Form::from_schema(&schema())
        .fields
        .into_iter()
        .find(|field| field.name == name)
        .unwrap()
}

#[test]
fn fields_are_typed_from_the_schema() {
    let form = Form::from_schema(&schema());
    assert_eq!(form.schema(), &schema());
    let name = field("name");
    assert_eq!((name.title.as_str(), name.required), ("Name", true));
    assert!(matches!(field("agree").kind, FieldKind::Boolean));
    assert_eq!(
        field("colour")
            .options()
            .iter()
            .map(|c| c.label.as_str())
            .collect::<Vec<_>>(),
        ["Red", "Green"]
    );
    assert_eq!(field("size").options()[0].label, "Small");
    assert!(matches!(
        field("tags").kind,
        FieldKind::Choices {
            max_items: Some(2),
            ..
        }
    ));
}

#[test]
fn content_that_fits_passes() {
    checked(
        json!({"name": "Ada", "age": 36, "agree": true, "colour": "red", "size": "l",
        "tags": ["a", "b"]}),
    )
    .unwrap();
}

#[test]
fn each_misfit_is_named() {
    for (content, says) in [
        (json!({}), "`name` is required"),
        (json!({"name": "A"}), "at least 2 characters"),
        (
            json!({"name": "Ada", "age": "old"}),
            "`age` must be an integer",
        ),
        (json!({"name": "Ada", "age": 200}), "at most 150"),
        (json!({"name": "Ada", "agree": "yes"}), "a boolean"),
        (
            json!({"name": "Ada", "colour": "blue"}),
            "one of \"red\", \"green\"",
        ),
        (json!({"name": "Ada", "size": "m"}), "one of \"s\", \"l\""),
        (json!({"name": "Ada", "tags": ["c"]}), "one of \"a\", \"b\""),
        (
            json!({"name": "Ada", "tags": ["a", "b", "a"]}),
            "at most 2 choices",
        ),
        (
            json!({"name": "Ada", "nickname": "x"}),
            "no field `nickname`",
        ),
    ] {
        let error = checked(content.clone()).unwrap_err();
        assert!(error.contains(says), "{content}: {error}");
    }
}

#[test]
fn typed_answers_become_values_or_say_what_is_wrong() {
    assert_eq!(field("age").parse("42"), Ok(json!(42)));
    assert_eq!(
        field("age").parse("old").unwrap_err(),
        "a whole number is needed"
    );
    assert!(
        field("age")
            .parse("151")
            .unwrap_err()
            .contains("at most 150")
    );
    assert_eq!(field("agree").parse("Y"), Ok(json!(true)));
    assert_eq!(field("agree").parse("maybe").unwrap_err(), "answer y or n");
    assert_eq!(field("colour").parse("2"), Ok(json!("green")));
    assert_eq!(field("colour").parse("Red"), Ok(json!("red")));
    assert_eq!(field("size").parse("Small"), Ok(json!("s")));
    assert_eq!(field("tags").parse("1, b"), Ok(json!(["a", "b"])));
    assert!(
        field("tags")
            .parse("a, b, a")
            .unwrap_err()
            .contains("at most 2")
    );
    assert!(field("name").parse("A").unwrap_err().contains("at least 2"));
}
