//! agent.toml's `max_agent_depth` reaches the runs of the `agent` command: with it at 1, a
//! delegate may not delegate again, and is told why.

use agent_test_support::cli::{code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Turn};
use serde_json::json;

use crate::agent_env;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_agent_depth_in_agent_toml_bounds_nested_delegates() {
    let env = agent_env();
    env.write("agent.toml", "max_agent_depth = 1\n");
    // Sub-traces run while their call waits, so the replies are taken in this order.
    let server = MockModelServer::with_replies([
        Turn::tool_call("d1", "delegate", json!({"task": "level one"})),
        Turn::tool_call("d2", "delegate", json!({"task": "level two"})),
        Turn::text("one done"),
        Turn::text("Done."),
    ])
    .await;
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_server(&env, &server));
    args.extend(["--yes".to_owned(), "Hand it down".to_owned()]);
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "Done.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    // The delegate's second request carries the refusal of its own delegate call.
    let refused = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        refused.contains(
            "delegate is refused here: sub-agents may nest at most 1 deep (max_agent_depth), \
             and this trace is already 1 deep"
        ),
        "{refused}"
    );
    // The main trace got the delegate's answer.
    let last = requests[3].body.to_string();
    assert!(last.contains("one done"), "{last}");
}
