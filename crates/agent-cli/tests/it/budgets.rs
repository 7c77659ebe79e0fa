//! Budgets from the command line: `--max-cost` is stored with the trace and holds on `agent
//! resume` without the flag, `[models."NAME"]` prices in agent.toml count, a budget on a model
//! without a price is warned about, and `--context-window` is checked.

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use serde_json::{Value, json};

use crate::agent_env;

/// A turn that looks for files (each time others, so the loop guard lets it be) and reports
/// 1,000 prompt tokens.
fn paid_turn(i: usize) -> Value {
    json!({
        "tool_calls": [{"name": "glob_files", "arguments": {"pattern": format!("step{i}*")}}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 0, "cached_tokens": 0}
    })
}

fn script(env: &CliEnv, name: &str, turns: Vec<Value>) -> String {
    env.write(name, &Value::Array(turns).to_string())
}

fn json_of(output: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(output)).unwrap_or_else(|e| {
        panic!("{e}: {} / {}", stdout(output), stderr(output));
    })
}

#[tokio::test]
async fn a_budget_set_on_run_holds_on_resume_until_a_flag_raises_it() {
    let env = agent_env();
    let work = env.work();
    // $1 per million input tokens: each turn costs $0.001.
    env.write(
        "agent.toml",
        "[models.\"scripted\"]\ninput = 1.0\noutput = 2.0\ncached_input = 0.5\n",
    );
    let first = script(&env, "first.json", (0..5).map(paid_turn).collect());
    let output = env
        .run(&[
            "run",
            "--script",
            &first,
            "--workspace",
            &work,
            "--max-cost",
            "0.002",
            "--json",
            "Spend",
        ])
        .await;
    assert_eq!(code(&output), 3, "{}", stderr(&output));
    let run = json_of(&output);
    let trace_id = run["trace_id"].as_str().unwrap().to_owned();
    assert!(
        (run["totals"]["cost"].as_f64().unwrap() - 0.002).abs() < 1e-9,
        "{run}"
    );
    assert_eq!(run["totals_with_sub_traces"], run["totals"]);
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(env.traces().join(&trace_id).join("meta.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        meta["limits"],
        json!({"max_iterations": 100, "max_cost": 0.002})
    );

    // Without the flag the stored budget holds: no model call, the cost stays where it was.
    let second = script(&env, "second.json", (10..15).map(paid_turn).collect());
    let output = env
        .run(&[
            "resume",
            &trace_id,
            "--script",
            &second,
            "--workspace",
            &work,
            "--json",
        ])
        .await;
    assert_eq!(code(&output), 3, "{}", stderr(&output));
    let resumed = json_of(&output);
    assert_eq!(resumed["iterations"], 0, "{resumed}");
    assert!(
        resumed["error"].as_str().unwrap().starts_with("max_cost:"),
        "{resumed}"
    );
    assert!((resumed["totals"]["cost"].as_f64().unwrap() - 0.002).abs() < 1e-9);

    // A higher --max-cost lets it go on.
    let third = script(
        &env,
        "third.json",
        vec![paid_turn(20), json!({"text": "Done."})],
    );
    let output = env
        .run(&[
            "resume",
            &trace_id,
            "--script",
            &third,
            "--workspace",
            &work,
            "--max-cost",
            "1",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "Done.\n");

    let output = env.run(&["show", &trace_id]).await;
    assert!(
        stdout(&output).contains("limits: max_iterations 100, max_cost $1.0000"),
        "{}",
        stdout(&output)
    );
}

#[tokio::test]
async fn a_budget_on_a_model_without_a_price_is_warned_about() {
    let env = agent_env();
    let work = env.work();
    let turns = script(&env, "s.json", vec![json!({"text": "Done."})]);
    let output = env
        .run(&[
            "run",
            "--script",
            &turns,
            "--workspace",
            &work,
            "--max-cost",
            "0.5",
            "Do it",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let warning = stderr(&output);
    assert!(
        warning.contains("the cost of model scripted is unknown")
            && warning.contains("[models.\"scripted\"]")
            && warning.contains("--max-cost cannot be enforced"),
        "{warning}"
    );
    // Without a budget there is nothing to warn about.
    let output = env
        .run(&["run", "--script", &turns, "--workspace", &work, "Do it"])
        .await;
    assert!(!stderr(&output).contains("unknown"), "{}", stderr(&output));
}

#[tokio::test]
async fn the_context_window_flag_and_model_tables_are_checked() {
    let env = agent_env();
    let work = env.work();
    let turns = script(&env, "s.json", vec![json!({"text": "Done."})]);
    for bad in ["0", "many", "-5"] {
        let flag = format!("--context-window={bad}");
        let output = env.run(&["run", "--script", &turns, &flag, "Do it"]).await;
        assert_eq!(code(&output), 2, "{bad}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("--context-window"),
            "{}",
            stderr(&output)
        );
    }
    let output = env
        .run(&[
            "run",
            "--script",
            &turns,
            "--workspace",
            &work,
            "--context-window",
            "64000",
            "Do it",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));

    env.write("agent.toml", "[models.\"scripted\"]\ninput = 1.0\n");
    let output = env
        .run(&["run", "--script", &turns, "--workspace", &work, "Do it"])
        .await;
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("needs both `input` and `output`"),
        "{}",
        stderr(&output)
    );
    env.write(
        "agent.toml",
        "[models.\"scripted\"]\ninput = 1.0\noutput = 1.0\nwindow = 5\n",
    );
    let output = env
        .run(&["run", "--script", &turns, "--workspace", &work, "Do it"])
        .await;
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(stderr(&output).contains("window"), "{}", stderr(&output));
}
