//! The tool registry: registration rules, definitions, and that `execute` turns every failure
//! (unknown tool, malformed JSON, wrong types, tool errors, panics, timeouts, cancellation) into an
//! error result the model sees.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_tools::{
    RESERVED_TOOL_NAMES, RegisterError, Risk, Tool, ToolContext, ToolDefinition, ToolError,
    ToolOutput, ToolRegistry, ToolResult, TypedTool,
};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tempfile::TempDir;

/// A test tool whose behaviour is chosen by its name.
struct Scripted(&'static str);

#[async_trait]
impl Tool for Scripted {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.0.to_owned(),
            description: format!("The {} test tool.", self.0),
            parameters: json!({ "type": "object", "properties": {} }),
        }
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        match self.0 {
            "echo" => Ok(ToolOutput::text(args.to_string())),
            "fails" => Err(ToolError::failed("it did not work")),
            "panics" => panic!("boom"),
            "panics_later" => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                panic!("late boom")
            }
            "sleeps" => {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok(ToolOutput::text("woke up"))
            }
            "loud" => Ok(ToolOutput::text("x".repeat(10_000))),
            other => Ok(ToolOutput::text(other)),
        }
    }
}

/// A typed test tool, to check that arguments reach it parsed.
struct Add;

#[derive(Deserialize)]
struct AddArgs {
    a: i64,
    b: Option<i64>,
}

#[async_trait]
impl TypedTool for Add {
    type Args = AddArgs;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "add".to_owned(),
            description: "Adds two numbers.".to_owned(),
            parameters: json!({
                "type": "object",
                "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
                "required": ["a"]
            }),
        }
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn run(&self, args: AddArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text((args.a + args.b.unwrap_or(0)).to_string()))
    }
}

fn setup() -> (TempDir, ToolContext, ToolRegistry) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path(), "trace-1").unwrap();
    let mut registry = ToolRegistry::new();
    for name in ["echo", "fails", "panics", "panics_later", "sleeps", "loud"] {
        registry.register(Arc::new(Scripted(name))).unwrap();
    }
    registry.register(Add.into_tool()).unwrap();
    (dir, ctx, registry)
}

fn check(result: ToolResult, is_error: bool, content: &str) {
    assert_eq!(
        (result.is_error, result.content.as_str()),
        (is_error, content)
    );
}

#[tokio::test]
async fn calls_reach_the_tool_and_errors_become_results() {
    let (_dir, ctx, registry) = setup();
    check(
        registry.execute("echo", r#"{"x": 1}"#, &ctx).await,
        false,
        r#"{"x":1}"#,
    );
    check(registry.execute("echo", "", &ctx).await, false, "{}");
    check(registry.execute("echo", "  ", &ctx).await, false, "{}");
    check(
        registry.execute("add", r#"{"a": 2, "b": 3}"#, &ctx).await,
        false,
        "5",
    );
    check(
        registry.execute("fails", "{}", &ctx).await,
        true,
        "error: it did not work",
    );
    check(
        registry.execute("nope", "{}", &ctx).await,
        true,
        "error: unknown tool \"nope\"; available tools: add, echo, fails, loud, panics, panics_later, sleeps",
    );
}

#[tokio::test]
async fn malformed_and_mistyped_arguments_are_explained() {
    let (_dir, ctx, registry) = setup();
    let malformed = registry.execute("add", r#"{"a": 2,"#, &ctx).await;
    assert!(malformed.is_error);
    assert!(
        malformed
            .content
            .starts_with("error: the arguments for add are not valid JSON ("),
        "{}",
        malformed.content
    );
    check(
        registry.execute("add", r#"{"a": "two"}"#, &ctx).await,
        true,
        "error: invalid arguments for add: argument `a` must be an integer, got a string (\"two\")",
    );
    check(
        registry.execute("add", r#"{"b": 1}"#, &ctx).await,
        true,
        "error: invalid arguments for add: missing required argument `a` (an integer)",
    );
    check(
        registry.execute("add", "[1, 2]", &ctx).await,
        true,
        "error: invalid arguments for add: arguments must be a JSON object, got an array ([1,2])",
    );
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_result() {
    let (_dir, ctx, registry) = setup();
    check(
        registry.execute("panics", "{}", &ctx).await,
        true,
        "error: panics crashed: boom",
    );
    // The registry still works afterwards.
    check(
        registry.execute("add", r#"{"a": 1}"#, &ctx).await,
        false,
        "1",
    );
}

#[tokio::test]
async fn a_tool_that_panics_after_waiting_becomes_an_error_result() {
    // The call waits first, so it panics in the task it moved to, not where it was made.
    let (_dir, ctx, registry) = setup();
    check(
        registry.execute("panics_later", "{}", &ctx).await,
        true,
        "error: panics_later crashed: late boom",
    );
}

#[tokio::test]
async fn a_slow_tool_times_out() {
    let (_dir, mut ctx, registry) = setup();
    ctx.limits.default_timeout = Duration::from_millis(100);
    let started = Instant::now();
    check(
        registry.execute("sleeps", "{}", &ctx).await,
        true,
        "error: sleeps timed out after 0.1 s and was stopped",
    );
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[tokio::test]
async fn cancellation_stops_a_call_and_prevents_new_ones() {
    let (_dir, ctx, registry) = setup();
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    check(
        registry.execute("sleeps", "{}", &ctx).await,
        true,
        "error: sleeps was cancelled",
    );
    assert!(started.elapsed() < Duration::from_secs(15));
    check(
        registry.execute("echo", "{}", &ctx).await,
        true,
        "error: echo was not run because the run was cancelled",
    );
}

#[tokio::test]
async fn long_results_are_truncated_with_a_note() {
    let (_dir, mut ctx, registry) = setup();
    ctx.limits.max_output_bytes = 100;
    let result = registry.execute("loud", "{}", &ctx).await;
    assert!(!result.is_error);
    assert!(
        result
            .content
            .contains("[... output truncated: 9900 of 10000 bytes omitted ...]"),
        "{}",
        result.content
    );
}

#[test]
fn registration_rejects_duplicates_and_invalid_names() {
    let mut registry = ToolRegistry::with_builtins();
    assert_eq!(
        registry.register(Arc::new(Scripted("bash"))),
        Err(RegisterError::Duplicate("bash".to_owned()))
    );
    assert_eq!(
        registry.register(Arc::new(Scripted("no spaces"))),
        Err(RegisterError::InvalidName("no spaces".to_owned()))
    );
    for reserved in RESERVED_TOOL_NAMES {
        assert!(
            registry.get(reserved).is_none(),
            "{reserved} is left to the runner"
        );
        registry.register(Arc::new(Scripted(reserved))).unwrap();
    }
    assert!(registry.get("goal").is_some());
}

#[test]
fn builtins_have_the_contract_names_and_parameters() {
    let registry = ToolRegistry::with_builtins();
    assert_eq!(
        registry.names(),
        [
            "bash",
            "edit_file",
            "glob_files",
            "grep",
            "read_file",
            "shell_kill",
            "shell_output",
            "write_file"
        ]
    );
    let parameters = |definition: &ToolDefinition| {
        assert_eq!(definition.parameters["type"], "object");
        let mut names: Vec<String> = definition.parameters["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        names.sort();
        names.join(",")
    };
    let expected = [
        ("bash", "background,command,timeout_secs", Risk::Risky),
        ("edit_file", "new,old,path,replace_all", Risk::Risky),
        ("glob_files", "pattern", Risk::ReadOnly),
        ("grep", "glob,path,pattern", Risk::ReadOnly),
        ("read_file", "limit,offset,path", Risk::ReadOnly),
        ("shell_kill", "id", Risk::ReadOnly),
        ("shell_output", "id,wait_secs", Risk::ReadOnly),
        ("write_file", "content,path", Risk::Risky),
    ];
    let definitions = registry.definitions();
    assert_eq!(definitions.len(), expected.len());
    for (definition, (name, params, risk)) in definitions.iter().zip(expected) {
        assert_eq!(definition.name, name);
        assert_eq!(parameters(definition), params, "{name}");
        assert_eq!(registry.risk(name), Some(risk), "{name}");
        assert!(!definition.description.is_empty());
    }
}

/// A typed tool that counts how often its definition is built.
struct Counting {
    fixed: bool,
    built: Arc<std::sync::atomic::AtomicUsize>,
}

#[async_trait]
impl TypedTool for Counting {
    type Args = AddArgs;

    fn definition(&self) -> ToolDefinition {
        self.built.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Add.definition()
    }

    fn definition_is_fixed(&self) -> bool {
        self.fixed
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn run(&self, args: AddArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Add.run(args, ctx).await
    }
}

#[tokio::test]
async fn a_fixed_typed_definition_is_built_once_for_every_later_use() {
    let (_dir, ctx, _) = setup();
    for fixed in [true, false] {
        let built = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut registry = ToolRegistry::new();
        let tool = Counting {
            fixed,
            built: built.clone(),
        };
        registry.register(tool.into_tool()).unwrap();
        assert_eq!(registry.definitions_are_fixed(), fixed);
        for _ in 0..3 {
            assert_eq!(registry.definitions()[0].name, "add");
            check(
                registry.execute("add", r#"{"a": 1, "b": 2}"#, &ctx).await,
                false,
                "3",
            );
            check(
                registry.execute("add", r#"{"a": "x"}"#, &ctx).await,
                true,
                "error: invalid arguments for add: argument `a` must be an integer, got a string (\"x\")",
            );
        }
        let built = built.load(std::sync::atomic::Ordering::SeqCst);
        // Registration, three listings and six calls: once in all when fixed.
        if fixed {
            assert_eq!(built, 1);
        } else {
            assert!(built >= 10, "built {built} times");
        }
    }
}
