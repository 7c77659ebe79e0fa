//! Checks a form's content against the schema an MCP server requested: the flat object the
//! specification allows (string, number, integer and boolean properties, single-choice
//! enumerations as `enum` or `oneOf` of `const`s, multiple-choice ones as arrays of them), with
//! `required`, string lengths, number bounds and array sizes. Properties the schema does not
//! name are refused, so a typo does not go unnoticed.

use serde_json::{Map, Value};

/// `Ok` when `content` fits `schema`; otherwise what does not, for the person who answered.
pub(crate) fn check(schema: &Value, content: &Map<String, Value>) -> Result<(), String> {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if content.get(name).is_none_or(Value::is_null) {
            return Err(format!("the field `{name}` is required"));
        }
    }
    for (name, value) in content {
        let Some(property) = properties.get(name) else {
            let mut known: Vec<String> = properties.keys().map(|k| format!("`{k}`")).collect();
            known.sort();
            return Err(format!(
                "the form has no field `{name}`; its fields are: {}",
                known.join(", ")
            ));
        };
        check_field(name, property, value)?;
    }
    Ok(())
}

fn check_field(name: &str, property: &Value, value: &Value) -> Result<(), String> {
    if value.is_null() {
        return Ok(());
    }
    let kind = property.get("type").and_then(Value::as_str);
    let fits = match kind {
        Some("string") => value.is_string(),
        Some("integer") => value.is_i64() || value.is_u64(),
        Some("number") => value.is_number(),
        Some("boolean") => value.is_boolean(),
        Some("array") => value.is_array(),
        _ => true,
    };
    if !fits {
        return Err(format!(
            "the field `{name}` must be {}, got {value}",
            match kind {
                Some("integer") => "an integer",
                Some("array") => "an array",
                Some("boolean") => "a boolean (true or false)",
                Some("number") => "a number",
                _ => "a string",
            }
        ));
    }
    if let Some(choices) = choices(property)
        && !choices.contains(value)
    {
        return Err(format!(
            "the field `{name}` must be one of {}, got {value}",
            list(&choices)
        ));
    }
    if let Some(text) = value.as_str() {
        let length = text.chars().count() as u64;
        if let Some(min) = property.get("minLength").and_then(Value::as_u64)
            && length < min
        {
            return Err(format!(
                "the field `{name}` must be at least {min} characters long"
            ));
        }
        if let Some(max) = property.get("maxLength").and_then(Value::as_u64)
            && length > max
        {
            return Err(format!(
                "the field `{name}` must be at most {max} characters long"
            ));
        }
    }
    if let Some(number) = value.as_f64() {
        if let Some(min) = property.get("minimum").and_then(Value::as_f64)
            && number < min
        {
            return Err(format!("the field `{name}` must be at least {min}"));
        }
        if let Some(max) = property.get("maximum").and_then(Value::as_f64)
            && number > max
        {
            return Err(format!("the field `{name}` must be at most {max}"));
        }
    }
    if let Some(items) = value.as_array() {
        let count = items.len() as u64;
        if let Some(min) = property.get("minItems").and_then(Value::as_u64)
            && count < min
        {
            return Err(format!("the field `{name}` needs at least {min} choices"));
        }
        if let Some(max) = property.get("maxItems").and_then(Value::as_u64)
            && count > max
        {
            return Err(format!("the field `{name}` takes at most {max} choices"));
        }
        if let Some(item) = property.get("items") {
            for element in items {
                check_field(name, item, element)?;
            }
        }
    }
    Ok(())
}

/// The values an enumeration allows: `enum`, or the `const` of each `oneOf` / `anyOf` entry.
fn choices(property: &Value) -> Option<Vec<Value>> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return Some(values.clone());
    }
    let entries = property
        .get("oneOf")
        .or_else(|| property.get("anyOf"))
        .and_then(Value::as_array)?;
    Some(
        entries
            .iter()
            .filter_map(|entry| entry.get("const").cloned())
            .collect(),
    )
}

fn list(values: &[Value]) -> String {
    values
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::check;

    fn schema() -> serde_json::Value {
        json!({"type": "object", "properties": {
            "name": {"type": "string", "minLength": 2},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "agree": {"type": "boolean"},
            "colour": {"type": "string", "enum": ["red", "green"]},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l"}]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 2}
        }, "required": ["name"]})
    }

    fn checked(content: serde_json::Value) -> Result<(), String> {
        check(&schema(), content.as_object().unwrap())
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
}
