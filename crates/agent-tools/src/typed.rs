//! Typed tools: arguments parsed into a serde type, checked first against the tool's own JSON
//! schema so that a malformed argument gets a message naming the argument and what was expected.
//!
//! [`TypedTool::into_tool`] wraps a typed tool in a private adapter that implements [`Tool`].

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{
    CommandRunner, Risk, SandboxMode, Tool, ToolContext, ToolDefinition, ToolError, ToolLimits,
    ToolOutput,
};

/// A tool whose arguments are parsed into [`TypedTool::Args`] before it runs.
///
/// The hand-written schema in [`TypedTool::definition`] is the contract with the model: before
/// serde sees the arguments they are checked against it (object shape, required arguments,
/// argument types, `minimum`, `additionalProperties: false`), so errors name the argument.
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    /// The parsed arguments.
    type Args: DeserializeOwned + Send;

    /// The tool's name, description and parameter schema.
    fn definition(&self) -> ToolDefinition;

    /// Whether [`definition`](TypedTool::definition) is the same at every call; see
    /// [`Tool::definition_is_fixed`]. A fixed definition is also built only once for checking
    /// the arguments of the tool's calls.
    fn definition_is_fixed(&self) -> bool {
        false
    }

    /// Whether calls need approval in approval mode.
    fn risk(&self) -> Risk;

    /// How long the registry lets a call with `args` run; see [`Tool::timeout`].
    fn timeout(&self, args: &Self::Args, limits: &ToolLimits) -> Duration {
        let _ = args;
        limits.default_timeout
    }

    /// Runs the tool with parsed arguments.
    async fn run(&self, args: Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;

    /// The same tool confined at most as `mode` allows; see [`Tool::confined_to`].
    fn confined_to(&self, mode: SandboxMode) -> Option<Arc<dyn Tool>> {
        let _ = mode;
        None
    }

    /// How to run a command as this tool does; see [`Tool::command_runner`].
    fn command_runner(&self) -> Option<Arc<dyn CommandRunner>> {
        None
    }

    /// Erases the argument type so the tool can live in a [`super::ToolRegistry`].
    fn into_tool(self) -> Arc<dyn Tool>
    where
        Self: Sized,
    {
        Arc::new(Typed {
            tool: self,
            fixed: OnceLock::new(),
        })
    }
}

/// The type-erased adapter behind [`TypedTool::into_tool`].
struct Typed<T> {
    tool: T,
    /// The definition, once built, of a tool whose definition is fixed.
    fixed: OnceLock<ToolDefinition>,
}

impl<T: TypedTool> Typed<T> {
    /// The definition, built once when it is fixed and at every call otherwise.
    fn current(&self) -> Cow<'_, ToolDefinition> {
        if self.tool.definition_is_fixed() {
            Cow::Borrowed(self.fixed.get_or_init(|| self.tool.definition()))
        } else {
            Cow::Owned(self.tool.definition())
        }
    }
}

#[async_trait]
impl<T: TypedTool> Tool for Typed<T> {
    fn definition(&self) -> ToolDefinition {
        self.current().into_owned()
    }

    fn definition_is_fixed(&self) -> bool {
        self.tool.definition_is_fixed()
    }

    fn risk(&self) -> Risk {
        self.tool.risk()
    }

    fn timeout(&self, args: &Value, limits: &ToolLimits) -> Duration {
        match serde_json::from_value::<T::Args>(args.clone()) {
            Ok(parsed) => self.tool.timeout(&parsed, limits),
            Err(_) => limits.default_timeout,
        }
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let parsed = parse_args::<T::Args>(&self.current(), args)?;
        self.tool.run(parsed, ctx).await
    }

    fn confined_to(&self, mode: SandboxMode) -> Option<Arc<dyn Tool>> {
        self.tool.confined_to(mode)
    }

    fn command_runner(&self) -> Option<Arc<dyn CommandRunner>> {
        self.tool.command_runner()
    }
}

/// Parses `args` for the tool described by `definition`: `null` counts as `{}`, the schema is
/// checked first, then serde parses.
fn parse_args<A: DeserializeOwned>(
    definition: &ToolDefinition,
    args: Value,
) -> Result<A, ToolError> {
    let invalid = |message: String| ToolError::InvalidArguments {
        tool: definition.name.clone(),
        message,
    };
    let args = if args.is_null() {
        Value::Object(Map::new())
    } else {
        args
    };
    check_arguments(&definition.parameters, &args).map_err(invalid)?;
    serde_json::from_value(args).map_err(|e| invalid(e.to_string()))
}

/// Checks an argument object against the object schema of a tool's parameters (required fields,
/// property types), returning the first problem found.
pub fn check_arguments(schema: &Value, args: &Value) -> Result<(), String> {
    let Some(object) = args.as_object() else {
        return Err(format!(
            "arguments must be a JSON object, got {}",
            describe(args)
        ));
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if object.get(name).is_none_or(Value::is_null) {
                let expected = properties
                    .and_then(|p| p.get(name))
                    .map(expected_type)
                    .unwrap_or_else(|| "a value".to_owned());
                return Err(format!("missing required argument `{name}` ({expected})"));
            }
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (name, value) in object {
        match properties.and_then(|p| p.get(name)) {
            Some(property) => check_value(name, property, value)?,
            None if closed => {
                let mut known: Vec<String> = properties
                    .map(|p| p.keys().map(|k| format!("`{k}`")).collect())
                    .unwrap_or_default();
                known.sort();
                return Err(format!(
                    "unknown argument `{name}`; expected one of: {}",
                    known.join(", ")
                ));
            }
            None => {}
        }
    }
    Ok(())
}

/// Checks one argument (or array element) against its property schema; `null` stands for an
/// omitted optional argument.
fn check_value(name: &str, property: &Value, value: &Value) -> Result<(), String> {
    if value.is_null() {
        return Ok(());
    }
    if let Some(kind) = property.get("type").and_then(Value::as_str)
        && !has_type(value, kind)
    {
        return Err(format!(
            "argument `{name}` must be {}, got {}",
            expected_type(property),
            describe(value)
        ));
    }
    if let (Some(minimum), Some(number)) = (
        property.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) && number < minimum
    {
        return Err(format!(
            "argument `{name}` must be at least {minimum}, got {value}"
        ));
    }
    if let (Some(items), Some(elements)) = (property.get("items"), value.as_array()) {
        for (index, element) in elements.iter().enumerate() {
            check_value(&format!("{name}[{index}]"), items, element)?;
        }
    }
    Ok(())
}

fn has_type(value: &Value, kind: &str) -> bool {
    match kind {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

/// "a string", "an integer", ... for the `type` of a property schema.
fn expected_type(property: &Value) -> String {
    match property.get("type").and_then(Value::as_str) {
        Some("integer") => "an integer".to_owned(),
        Some("array") => "an array".to_owned(),
        Some("object") => "an object".to_owned(),
        Some(kind) => format!("a {kind}"),
        None => "a value".to_owned(),
    }
}

/// A short description of a JSON value for error messages, for example `a string ("abc")`.
fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".to_owned(),
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let mut text = value.to_string();
    if text.len() > 60 {
        let cut = (0..=57)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text.truncate(cut);
        text.push_str("...");
    }
    format!("{kind} ({text})")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::check_arguments;

    fn schema() -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string" },
                "limit": { "type": "integer", "minimum": 1 },
                "flag": { "type": "boolean" },
                "items": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn check(args: serde_json::Value, expect: Result<(), &str>) {
        assert_eq!(
            check_arguments(&schema(), &args),
            expect.map_err(str::to_owned)
        );
    }

    #[test]
    fn reports_the_argument_and_what_was_expected() {
        check(
            json!({ "path": "a", "limit": 3, "flag": true, "items": ["x"] }),
            Ok(()),
        );
        check(json!({ "path": "a", "limit": null }), Ok(()));
        check(
            json!([1]),
            Err("arguments must be a JSON object, got an array ([1])"),
        );
        check(
            json!({}),
            Err("missing required argument `path` (a string)"),
        );
        check(
            json!({ "path": null }),
            Err("missing required argument `path` (a string)"),
        );
        check(
            json!({ "path": 7 }),
            Err("argument `path` must be a string, got an integer (7)"),
        );
        check(
            json!({ "path": "a", "limit": "10" }),
            Err("argument `limit` must be an integer, got a string (\"10\")"),
        );
        check(
            json!({ "path": "a", "limit": 1.5 }),
            Err("argument `limit` must be an integer, got a number (1.5)"),
        );
        check(
            json!({ "path": "a", "limit": 0 }),
            Err("argument `limit` must be at least 1, got 0"),
        );
        check(
            json!({ "path": "a", "items": ["x", 2] }),
            Err("argument `items[1]` must be a string, got an integer (2)"),
        );
        check(
            json!({ "path": "a", "file": "b" }),
            Err("unknown argument `file`; expected one of: `flag`, `items`, `limit`, `path`"),
        );
    }
}
