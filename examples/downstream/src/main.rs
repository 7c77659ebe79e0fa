//! A weather agent built from the published API only: a tool of its own next to the built-in
//! ones, a model (the scripted one, so it runs offline) that calls it, traces on disk, and
//! checks on what the run did.

use std::sync::Arc;

use goaltree::execution::Content;
use goaltree::prelude::*;
use goaltree::tools::{Risk, ToolContext, ToolDefinition, ToolError, ToolOutput};
use serde::Deserialize;
use serde_json::json;

/// `weather(city)`: today's weather, from a table (a real tool would call a service).
struct Weather;

#[derive(Deserialize)]
struct WeatherArgs {
    city: String,
}

#[goaltree::tools::async_trait]
impl TypedTool for Weather {
    type Args = WeatherArgs;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "weather".to_owned(),
            description: "Today's weather in a city.".to_owned(),
            parameters: json!({
                "type": "object",
                "properties": { "city": { "type": "string" } },
                "required": ["city"],
                "additionalProperties": false
            }),
        }
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn run(&self, args: WeatherArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let forecast = match args.city.as_str() {
            "Lisbon" => "sunny, 24 °C",
            "Oslo" => "snow, -3 °C",
            _ => "unknown",
        };
        Ok(ToolOutput::text(format!("{}: {forecast}", args.city)))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (traces, workspace) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let store = Arc::new(FileSystemTraceStore::open(traces.path())?);
    let llm = Arc::new(ScriptedClient::new(vec![
        ScriptedTurn::tool_call("weather", json!({"city": "Lisbon"})),
        ScriptedTurn::tool_call("weather", json!({"city": "Oslo"})),
        ScriptedTurn::text("Lisbon is sunny (24 °C); Oslo has snow (-3 °C)."),
    ]));
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Weather.into_tool())?;
    let options = RunnerOptions::new("scripted", workspace.path()).with_max_iterations(10);
    let runner = AgentRunner::new(store.clone(), llm, tools, options);

    let outcome = runner.run("Compare the weather in Lisbon and Oslo").await?;
    assert_eq!(outcome.status, TraceStatus::Completed);
    let messages = store.get_trace_messages(&outcome.trace_id).await?;
    let results: Vec<String> = messages
        .iter()
        .filter_map(|m| match &m.content {
            Content::ToolResult(result) => Some(result.output.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["Lisbon: sunny, 24 °C", "Oslo: snow, -3 °C"]);
    println!(
        "{} ({} model calls, trace {})",
        outcome.response.unwrap_or_default(),
        outcome.iterations,
        outcome.trace_id
    );
    Ok(())
}
