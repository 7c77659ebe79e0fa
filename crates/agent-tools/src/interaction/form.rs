//! The typed form of a server's question to a person (MCP elicitation's requested schema): the
//! flat object the specification allows — string, number, integer and boolean properties,
//! single-choice enumerations as `enum` (with `enumNames`) or `oneOf`/`anyOf` of `const`s,
//! multiple-choice ones as arrays of them — with `required`, string lengths, number bounds and
//! array sizes. Read once ([`Form::from_schema`]); every front end asks its fields, reads typed
//! answers with [`Field::parse`] and checks the filled-in form with [`Form::check`] before it
//! reaches the server, so a line typed on a terminal, a modal form and an HTTP client's JSON
//! meet the same rules.

use serde_json::{Map, Value};

/// A form: its fields in the schema's order, and the schema as the server sent it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Form {
    /// The fields.
    pub fields: Vec<Field>,
    schema: Value,
}

/// One field of a [`Form`].
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The property's name: the key of its value in the answer.
    pub name: String,
    /// What to call it (its `title`, else its name).
    pub title: String,
    /// What it is for, when the schema says.
    pub description: Option<String>,
    /// What it takes.
    pub kind: FieldKind,
    /// Whether it must be answered.
    pub required: bool,
    /// The value given when the person gives none.
    pub default: Option<Value>,
}

/// What a field takes.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// Text, `min_length` to `max_length` characters.
    Text {
        /// The fewest characters.
        min_length: Option<u64>,
        /// The most characters.
        max_length: Option<u64>,
    },
    /// A number (a whole one when `integer`) between `minimum` and `maximum`.
    Number {
        /// Whether it must be whole.
        integer: bool,
        /// The least value.
        minimum: Option<f64>,
        /// The greatest value.
        maximum: Option<f64>,
    },
    /// Yes or no.
    Boolean,
    /// One of these.
    Choice(Vec<Choice>),
    /// Several of these, `min_items` to `max_items` of them.
    Choices {
        /// What may be chosen.
        options: Vec<Choice>,
        /// The fewest choices.
        min_items: Option<u64>,
        /// The most choices.
        max_items: Option<u64>,
    },
}

/// A value a choice field allows, with the label shown for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The value sent.
    pub value: Value,
    /// What the person sees.
    pub label: String,
}

impl Form {
    /// The form of a requested schema (a flat JSON schema object). Properties of other shapes
    /// are text fields.
    pub fn from_schema(schema: &Value) -> Self {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let fields = schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(name, property)| Field {
                name: name.clone(),
                title: property
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or(name)
                    .to_owned(),
                description: property
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                kind: kind(property),
                required: required.contains(&name.as_str()),
                default: property.get("default").filter(|v| !v.is_null()).cloned(),
            })
            .collect();
        Self {
            fields,
            schema: schema.clone(),
        }
    }

    /// The schema as the server sent it.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// `Ok` when `content` fills the form: every required field answered, every value of its
    /// field's type, among its choices and within its bounds, and no field the form lacks.
    /// Otherwise what does not fit, for the person who answered.
    pub fn check(&self, content: &Map<String, Value>) -> Result<(), String> {
        for field in self.fields.iter().filter(|field| field.required) {
            if content.get(&field.name).is_none_or(Value::is_null) {
                return Err(format!("the field `{}` is required", field.name));
            }
        }
        for (name, value) in content {
            let Some(field) = self.fields.iter().find(|field| &field.name == name) else {
                let mut known: Vec<String> = self
                    .fields
                    .iter()
                    .map(|f| format!("`{}`", f.name))
                    .collect();
                known.sort();
                return Err(format!(
                    "the form has no field `{name}`; its fields are: {}",
                    known.join(", ")
                ));
            };
            field.check(value)?;
        }
        Ok(())
    }
}

impl Field {
    /// The value `answer` (as a person types it) gives this field, or why it does not fit: a
    /// number; `y`/`yes`/`true` or `n`/`no`/`false`; a choice by its number (from 1), value or
    /// label; several choices separated by commas; or text.
    pub fn parse(&self, answer: &str) -> Result<Value, String> {
        let answer = answer.trim();
        let value = match &self.kind {
            FieldKind::Text { .. } => Value::String(answer.to_owned()),
            FieldKind::Boolean => match answer.to_lowercase().as_str() {
                "y" | "yes" | "true" => Value::Bool(true),
                "n" | "no" | "false" => Value::Bool(false),
                _ => return Err("answer y or n".into()),
            },
            FieldKind::Number { integer: true, .. } => answer
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| "a whole number is needed".to_owned())?,
            FieldKind::Number { integer: false, .. } => answer
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| "a number is needed".to_owned())?,
            FieldKind::Choice(options) => pick(options, answer)?,
            FieldKind::Choices { options, .. } => Value::Array(
                answer
                    .split(',')
                    .filter(|part| !part.trim().is_empty())
                    .map(|part| pick(options, part))
                    .collect::<Result<_, _>>()?,
            ),
        };
        self.check(&value)?;
        Ok(value)
    }

    /// The choices of a choice field; none for other fields.
    pub fn options(&self) -> &[Choice] {
        match &self.kind {
            FieldKind::Choice(options) | FieldKind::Choices { options, .. } => options,
            _ => &[],
        }
    }

    /// `Ok` when `value` fits this field (`null` always does: it leaves the field out).
    pub fn check(&self, value: &Value) -> Result<(), String> {
        let name = &self.name;
        if value.is_null() {
            return Ok(());
        }
        match &self.kind {
            FieldKind::Text {
                min_length,
                max_length,
            } => {
                let Some(text) = value.as_str() else {
                    return Err(format!("the field `{name}` must be a string, got {value}"));
                };
                let length = text.chars().count() as u64;
                if let Some(min) = min_length.filter(|min| length < *min) {
                    return Err(format!(
                        "the field `{name}` must be at least {min} characters long"
                    ));
                }
                if let Some(max) = max_length.filter(|max| length > *max) {
                    return Err(format!(
                        "the field `{name}` must be at most {max} characters long"
                    ));
                }
            }
            FieldKind::Number {
                integer,
                minimum,
                maximum,
            } => {
                let whole = value.is_i64() || value.is_u64();
                let Some(number) = value.as_f64().filter(|_| whole || !integer) else {
                    let kind = if *integer { "an integer" } else { "a number" };
                    return Err(format!("the field `{name}` must be {kind}, got {value}"));
                };
                if let Some(min) = minimum.filter(|min| number < *min) {
                    return Err(format!("the field `{name}` must be at least {min}"));
                }
                if let Some(max) = maximum.filter(|max| number > *max) {
                    return Err(format!("the field `{name}` must be at most {max}"));
                }
            }
            FieldKind::Boolean if !value.is_boolean() => {
                return Err(format!(
                    "the field `{name}` must be a boolean (true or false), got {value}"
                ));
            }
            FieldKind::Boolean => {}
            FieldKind::Choice(options) => allowed(name, options, value)?,
            FieldKind::Choices {
                options,
                min_items,
                max_items,
            } => {
                let Some(items) = value.as_array() else {
                    return Err(format!("the field `{name}` must be an array, got {value}"));
                };
                let count = items.len() as u64;
                if let Some(min) = min_items.filter(|min| count < *min) {
                    return Err(format!("the field `{name}` needs at least {min} choices"));
                }
                if let Some(max) = max_items.filter(|max| count > *max) {
                    return Err(format!("the field `{name}` takes at most {max} choices"));
                }
                for item in items {
                    allowed(name, options, item)?;
                }
            }
        }
        Ok(())
    }
}

/// What a property takes.
fn kind(property: &Value) -> FieldKind {
    let bound = |key: &str| property.get(key).and_then(Value::as_u64);
    let number = |key: &str| property.get(key).and_then(Value::as_f64);
    match property.get("type").and_then(Value::as_str) {
        Some("array") => FieldKind::Choices {
            options: property.get("items").map(choices).unwrap_or_default(),
            min_items: bound("minItems"),
            max_items: bound("maxItems"),
        },
        _ if !choices(property).is_empty() => FieldKind::Choice(choices(property)),
        Some("boolean") => FieldKind::Boolean,
        Some(kind @ ("integer" | "number")) => FieldKind::Number {
            integer: kind == "integer",
            minimum: number("minimum"),
            maximum: number("maximum"),
        },
        _ => FieldKind::Text {
            min_length: bound("minLength"),
            max_length: bound("maxLength"),
        },
    }
}

/// The values an enumeration allows, with their labels: `enum` (labelled by `enumNames`), or
/// the `const` of each `oneOf` / `anyOf` entry (labelled by its `title`).
fn choices(property: &Value) -> Vec<Choice> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        let names = property.get("enumNames").and_then(Value::as_array);
        return values
            .iter()
            .enumerate()
            .map(|(index, value)| Choice {
                value: value.clone(),
                label: names
                    .and_then(|names| names.get(index))
                    .and_then(Value::as_str)
                    .map_or_else(|| plain(value), str::to_owned),
            })
            .collect();
    }
    property
        .get("oneOf")
        .or_else(|| property.get("anyOf"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let value = entry.get("const")?.clone();
            let label = entry
                .get("title")
                .and_then(Value::as_str)
                .map_or_else(|| plain(&value), str::to_owned);
            Some(Choice { value, label })
        })
        .collect()
}

/// A value as a person reads it: a string without its quotes.
pub fn plain(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

/// The choice `text` names: its number (from 1), its value or its label.
fn pick(options: &[Choice], text: &str) -> Result<Value, String> {
    let text = text.trim();
    if let Ok(index) = text.parse::<usize>()
        && let Some(choice) = index.checked_sub(1).and_then(|index| options.get(index))
    {
        return Ok(choice.value.clone());
    }
    options
        .iter()
        .find(|choice| plain(&choice.value) == text || choice.label == text)
        .map(|choice| choice.value.clone())
        .ok_or_else(|| "choose one of the numbers, or type one of the values".to_owned())
}

/// `Ok` when `value` is one of `options`.
fn allowed(name: &str, options: &[Choice], value: &Value) -> Result<(), String> {
    if options.iter().any(|choice| &choice.value == value) {
        return Ok(());
    }
    let listed: Vec<String> = options.iter().map(|c| c.value.to_string()).collect();
    Err(format!(
        "the field `{name}` must be one of {}, got {value}",
        listed.join(", ")
    ))
}

#[cfg(test)]
#[path = "form_tests.rs"]
mod tests;
