//! A tool of your own next to the built-in ones: `word_count`, a [`TypedTool`] whose arguments
//! are a serde type, registered in a [`ToolRegistry`] with the built-in file and shell tools and
//! called through [`ToolRegistry::execute`], the one entry point the runner uses.
//!
//! The calls below are what a model might send: good arguments, malformed JSON, an argument of
//! the wrong type, a missing argument, a path outside the workspace and an unknown tool. None of
//! them fails or panics; each becomes a [`ToolResult`] the model reads.
//!
//! Run it with `cargo run -p goaltree-tools --example custom_tool`.

use std::collections::HashMap;
use std::error::Error;

use agent_tools::{
    Risk, ToolContext, ToolDefinition, ToolError, ToolOutput, ToolRegistry, ToolResult, TypedTool,
    resolve_in_workspace,
};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

/// `word_count(path, top?)`: the most frequent words of a text file in the workspace.
struct WordCountTool;

/// The arguments of `word_count`, parsed by serde after the registry checked them against the
/// schema in [`WordCountTool::definition`].
#[derive(Debug, Deserialize)]
struct WordCountArgs {
    /// The file, relative to the workspace root.
    path: String,
    /// How many words to list; 5 when absent.
    top: Option<usize>,
}

#[async_trait]
impl TypedTool for WordCountTool {
    type Args = WordCountArgs;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "word_count".to_owned(),
            description: "Count the words of a text file in the workspace and list the most \
                          frequent ones."
                .to_owned(),
            // The schema is the contract with the model: the registry checks the arguments
            // against it before serde sees them, so an error names the argument at fault.
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "File path, relative to the workspace root." },
                    "top": { "type": "integer", "minimum": 1, "description": "How many words to list (default 5)." }
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        }
    }

    fn risk(&self) -> Risk {
        // The tool only reads, so it runs without approval even in approval mode.
        Risk::ReadOnly
    }

    async fn run(&self, args: WordCountArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // Every path from the model goes through `resolve_in_workspace`, which refuses paths
        // that leave the workspace (through `..` or a symlink).
        let file = resolve_in_workspace(&ctx.workspace, &args.path)?;
        let text = tokio::fs::read_to_string(&file)
            .await
            .map_err(|e| ToolError::io("read", &args.path, e))?;
        let mut counts: HashMap<String, usize> = HashMap::new();
        let words = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|word| !word.is_empty());
        let mut total = 0;
        for word in words {
            total += 1;
            *counts.entry(word.to_lowercase()).or_default() += 1;
        }
        let mut ranked: Vec<(String, usize)> = counts.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let top: Vec<String> = ranked
            .iter()
            .take(args.top.unwrap_or(5))
            .map(|(word, count)| format!("{word} ({count})"))
            .collect();
        Ok(ToolOutput::text(format!(
            "{} has {total} words; most frequent: {}",
            args.path,
            top.join(", ")
        )))
    }
}

/// Runs one call the way the runner does and prints what the model would read.
async fn call(registry: &ToolRegistry, ctx: &ToolContext, what: &str, name: &str, arguments: &str) {
    let ToolResult {
        content, is_error, ..
    } = registry.execute(name, arguments, ctx).await;
    let status = if is_error { "error" } else { "ok" };
    println!("\n{what}: {name}({arguments})\n  [{status}] {content}");
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let workspace = tempfile::tempdir()?;
    std::fs::write(
        workspace.path().join("notes.txt"),
        "The plan is a tree. The tree has goals, and each goal has a summary.\n\
         When a goal is done, the summary stays and the messages go.\n",
    )?;

    let mut registry = ToolRegistry::with_builtins();
    registry.register(WordCountTool.into_tool())?;
    println!("tools: {}", registry.names().join(", "));

    let ctx = ToolContext::new(workspace.path(), "example-trace")?;
    // What a model might send to `word_count`: one good call, then every kind of mistake.
    let calls = [
        ("good arguments", r#"{"path": "notes.txt", "top": 3}"#),
        ("no optional argument", r#"{"path": "notes.txt"}"#),
        ("malformed JSON", r#"{"path": "notes.txt""#),
        ("wrong type", r#"{"path": "notes.txt", "top": "3"}"#),
        ("below the minimum", r#"{"path": "notes.txt", "top": 0}"#),
        ("missing argument", "{}"),
        ("unknown argument", r#"{"path": "notes.txt", "all": 1}"#),
        ("outside the workspace", r#"{"path": "../../etc/passwd"}"#),
        ("missing file", r#"{"path": "nope.txt"}"#),
    ];
    for (what, arguments) in calls {
        call(&registry, &ctx, what, "word_count", arguments).await;
    }
    // A built-in tool and a name nobody registered go through the same entry point.
    let first_line = r#"{"path": "notes.txt", "limit": 1}"#;
    call(&registry, &ctx, "a built-in tool", "read_file", first_line).await;
    call(&registry, &ctx, "an unknown tool", "count_words", "{}").await;
    Ok(())
}
