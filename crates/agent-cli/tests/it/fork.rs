//! `agent fork`: a finished run forked at a goal prints the new trace's id, the fork names its
//! original and resumes; unknown goals, messages and traces are usage errors (exit code 2).

use agent_test_support::cli::{code, stderr, stdout};
use serde_json::{Value, json};

use crate::agent_env;

#[tokio::test]
async fn a_trace_forked_at_a_goal_is_printed_named_and_resumable() {
    let env = agent_env();
    let work = env.work();
    let script = env.write(
        "run.json",
        &json!([
            {"tool_calls": [{"name": "goal", "arguments": {"add": "Draft, Polish", "focus": "1"}}]},
            {"tool_calls": [{"name": "goal", "arguments": {"done": "drafted", "focus": "2"}}]},
            {"tool_calls": [{"name": "goal", "arguments": {"done": "polished"}}]},
            {"text": "Finished."}
        ])
        .to_string(),
    );
    let output = env
        .run(&[
            "run",
            "--script",
            &script,
            "--workspace",
            &work,
            "--json",
            "Write it",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let original = result["trace_id"].as_str().unwrap().to_owned();

    // A unique prefix names the trace, as in `show` and `resume`.
    let output = env.run(&["fork", &original[..8], "--goal", "2"]).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let forked = stdout(&output).trim().to_owned();
    assert_ne!(forked, original);
    assert!(
        stderr(&output).contains(&format!("agent resume {forked}")),
        "{}",
        stderr(&output)
    );

    let shown: Value =
        serde_json::from_slice(&env.run(&["show", &forked, "--json"]).await.stdout).unwrap();
    assert_eq!(shown["trace"]["forked_from"]["trace_id"], original.as_str());
    assert_eq!(shown["trace"]["status"], "cancelled");
    let statuses: Vec<&str> = shown["goal_tree"]["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["in_progress", "pending"]);

    let again = env.write(
        "again.json",
        &json!([{"text": "Done another way."}]).to_string(),
    );
    let output = env
        .run(&["resume", &forked, "--script", &again, "--workspace", &work])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "Done another way.\n");

    for args in [
        vec!["fork", original.as_str(), "--goal", "7"],
        vec!["fork", original.as_str(), "--message", "999"],
        vec!["fork", forked.as_str(), "--goal", "2"],
        vec!["fork", original.as_str()],
        vec![
            "fork",
            "00000000-0000-4000-8000-000000000000",
            "--goal",
            "1",
        ],
    ] {
        let output = env.run(&args).await;
        assert_eq!(code(&output), 2, "{args:?}: {}", stderr(&output));
        assert_eq!(stdout(&output), "", "{args:?}");
    }
}
