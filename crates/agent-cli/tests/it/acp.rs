//! `agent acp` driven by the official ACP TypeScript SDK (`@agentclientprotocol/sdk`, installed
//! by `scripts/setup-acp.sh`) as an editor drives it, against the mock model server: a prompt
//! with tool calls and permission requests, streamed chunks, plan updates that follow the goal
//! tree, a cancelled turn, the session list, and the session loaded again by a new process.

use std::path::Path;
use std::time::Duration;

use agent_test_support::mock_model::{MockModelServer, Reply, Turn, sse_data};
use serde_json::{Value, json};

/// The test client; fails loudly when the SDK is not installed.
fn client_script() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/acp");
    assert!(
        root.join("node_modules/@agentclientprotocol/sdk/package.json")
            .is_file(),
        "the ACP client SDK is not installed in {}: run `cargo xtask setup` (or \
         scripts/setup-acp.sh), which runs `npm ci` there.",
        root.display()
    );
    root.join("client.mjs").to_string_lossy().into_owned()
}

/// Every update of `kind` in a step's updates.
fn of_kind<'a>(step: &'a Value, kind: &str) -> Vec<&'a Value> {
    step["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| &u["update"])
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

/// The entries of a plan update as "content [status]".
fn entries(plan: &Value) -> Vec<String> {
    plan["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} [{}]",
                e["content"].as_str().unwrap(),
                e["status"].as_str().unwrap()
            )
        })
        .collect()
}

#[tokio::test]
async fn an_editor_prompts_approves_cancels_lists_and_reloads_a_session() {
    let script = client_script();
    let env = crate::agent_env();
    env.write("work/notes.txt", "The answer is 42.\n");
    let thinking = json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": {"content": "Thinking"}, "finish_reason": null}],
    });
    let server = MockModelServer::with_replies([
        Reply::from(Turn::tool_call(
            "call_1",
            "goal",
            json!({"add": "Read the notes, Write the answer", "focus": "1"}),
        )),
        Reply::from(Turn::tool_call(
            "call_2",
            "read_file",
            json!({"path": "notes.txt"}),
        )),
        Reply::from(Turn::tool_call(
            "call_3",
            "goal",
            json!({"done": "The notes say 42.", "focus": "2"}),
        )),
        Reply::from(Turn::tool_call(
            "call_4",
            "write_file",
            json!({"path": "answer.txt", "content": "42\n"}),
        )),
        Reply::from(Turn::tool_call(
            "call_5",
            "bash",
            json!({"command": "rm answer.txt"}),
        )),
        Reply::from(Turn::tool_call(
            "call_6",
            "goal",
            json!({"done": "Wrote answer.txt."}),
        )),
        Reply::from(Turn::text("The answer is 42, written to answer.txt.")),
        // The second prompt: the model starts answering, then never finishes.
        Reply::sse([sse_data(&thinking)]).then_hang(),
        // The fork's own turn: its goals are open again and it only answers, so it is sent
        // back to them three times and ends with them left open.
        Reply::from(Turn::text("Wrote it another way.")),
        Reply::from(Turn::text("Wrote it another way.")),
        Reply::from(Turn::text("Wrote it another way.")),
        Reply::from(Turn::text("Wrote it another way.")),
        // The limited process's one model call: a tool call, and then the limit.
        Reply::from(Turn::tool_call(
            "call_7",
            "mcp__everything__echo",
            json!({"message": "from the editor's server"}),
        )),
        // `/goal Write out.txt --check test -f out.txt`: the goal is 1; its check fails first.
        Reply::from(Turn::tool_call("call_8", "goal", json!({"focus": "1"}))),
        Reply::from(Turn::tool_call(
            "call_9",
            "goal",
            json!({"done": "written"}),
        )),
        Reply::from(Turn::tool_call(
            "call_10",
            "write_file",
            json!({"path": "out.txt", "content": "out\n"}),
        )),
        Reply::from(Turn::tool_call(
            "call_11",
            "goal",
            json!({"done": "out.txt written"}),
        )),
        Reply::from(Turn::text("out.txt is written.")),
    ])
    .await;
    let base = server.openai_base();
    let work = env.work();
    let everything = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        everything.is_file(),
        "run scripts/setup-mcp.sh: {}",
        everything.display()
    );
    let mut command = env.program(
        "node",
        &[
            &script,
            &work,
            env!("CARGO_BIN_EXE_agent"),
            "--provider",
            "openai",
            "--base-url",
            &base,
            "--api-key",
            "sk-test",
            "--model",
            "gpt-4o-mini",
            "--no-report",
        ],
    );
    command.env("EVERYTHING_ENTRY", &everything);
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::from(command).output(),
    )
    .await
    .expect("the ACP client finished within two minutes")
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let steps: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let step = |name: &str| {
        steps
            .iter()
            .find(|s| s["step"] == name)
            .unwrap_or_else(|| panic!("no step {name} in {stdout}\n{stderr}"))
    };

    let init = &step("initialize")["response"];
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    let session = step("new")["response"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();

    // The first prompt: the answer streamed, each tool call announced and finished, the risky
    // ones asked about, the plan following the goal tree.
    let prompt = step("prompt");
    assert_eq!(prompt["response"]["stopReason"], "end_turn", "{prompt:#}");
    let said: String = of_kind(prompt, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(said, "The answer is 42, written to answer.txt.");
    let calls = of_kind(prompt, "tool_call");
    let titles: Vec<&str> = calls.iter().map(|c| c["title"].as_str().unwrap()).collect();
    assert_eq!(
        titles,
        [
            "read_file notes.txt",
            "write_file answer.txt",
            "bash: rm answer.txt"
        ],
        "goal calls show as the plan, not as tool calls"
    );
    assert_eq!(calls[0]["kind"], "read");
    assert_eq!(calls[1]["kind"], "edit");
    assert_eq!(calls[1]["content"][0]["type"], "diff");
    assert_eq!(calls[1]["content"][0]["newText"], "42\n");
    assert_eq!(calls[2]["kind"], "execute");
    let statuses = |id: &str| -> Vec<String> {
        let mut seen: Vec<String> = calls
            .iter()
            .filter(|c| c["toolCallId"] == id)
            // `pending` is the default, left out on the wire.
            .map(|c| c["status"].as_str().unwrap_or("pending").to_owned())
            .collect();
        seen.extend(
            of_kind(prompt, "tool_call_update")
                .iter()
                .filter(|u| u["toolCallId"] == id && u["status"].is_string())
                .map(|u| u["status"].as_str().unwrap().to_owned()),
        );
        seen
    };
    // Every update of a call comes after the call was announced.
    let mut announced = std::collections::HashSet::new();
    for update in prompt["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| &u["update"])
    {
        let id = update["toolCallId"].as_str().unwrap_or_default();
        match update["sessionUpdate"].as_str() {
            Some("tool_call") => assert!(announced.insert(id.to_owned()), "announced twice: {id}"),
            Some("tool_call_update") => assert!(announced.contains(id), "update before call: {id}"),
            _ => {}
        }
    }
    assert_eq!(statuses("call_2"), ["pending", "in_progress", "completed"]);
    assert_eq!(statuses("call_4"), ["pending", "in_progress", "completed"]);
    assert_eq!(
        statuses("call_5"),
        ["pending", "failed"],
        "the rejected call never ran"
    );
    let asked: Vec<&str> = prompt["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["toolCall"]["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(
        asked,
        ["call_4", "call_5"],
        "only risky calls are asked about"
    );
    let kinds: Vec<&str> = prompt["permissions"][0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    assert_eq!(
        std::fs::read_to_string(env.path("work/answer.txt")).unwrap(),
        "42\n",
        "the allowed write happened and the rejected rm did not"
    );
    // The editor's file system: read_file showed the unsaved buffer, write_file went through
    // the editor (which saved it).
    let reads = prompt["reads"].as_array().unwrap();
    assert_eq!(reads.len(), 1, "{reads:?}");
    assert!(
        reads[0]["path"]
            .as_str()
            .unwrap()
            .ends_with("/work/notes.txt")
    );
    let read_result = of_kind(prompt, "tool_call_update")
        .into_iter()
        .find(|u| u["toolCallId"] == "call_2" && u["status"] == "completed")
        .unwrap();
    assert!(
        read_result["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("1\tThe answer is 42 (unsaved edit)."),
        "{read_result:#}"
    );
    assert_eq!(prompt["writes"][0]["content"], "42\n");
    let plans: Vec<Vec<String>> = of_kind(prompt, "plan").into_iter().map(entries).collect();
    assert!(
        plans.windows(2).all(|pair| pair[0] != pair[1]),
        "a plan is sent when it changes, not once per goal event: {plans:#?}"
    );
    assert_eq!(
        plans.first().unwrap(),
        &[
            "1 Read the notes [in_progress]",
            "2 Write the answer [pending]"
        ]
    );
    assert!(plans.contains(&vec![
        "1 Read the notes [completed]".to_owned(),
        "2 Write the answer [in_progress]".to_owned()
    ]));
    assert_eq!(
        plans.last().unwrap(),
        &[
            "1 Read the notes [completed]",
            "2 Write the answer [completed]"
        ]
    );
    assert!(!of_kind(prompt, "usage_update").is_empty());
    // The session's slash commands were advertised when it opened.
    let advertised = of_kind(prompt, "available_commands_update");
    assert_eq!(advertised.len(), 1, "{prompt:#}");
    assert_eq!(advertised[0]["availableCommands"][0]["name"], "goal");

    // The second prompt is cancelled while the model is answering.
    let cancel = step("cancel");
    assert_eq!(cancel["response"]["stopReason"], "cancelled", "{cancel:#}");
    assert!(
        of_kind(cancel, "agent_message_chunk")
            .iter()
            .any(|u| u["content"]["text"] == "Thinking")
    );

    // A fork before goal 2 is a new session cut just before the call that finished goal 1 and
    // started goal 2: goal 1 still in progress, goal 2 pending again.
    let fork = step("fork")["response"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(fork, session);
    assert_eq!(
        step("fork")["answer"]["stopReason"],
        "end_turn",
        "{:#}",
        step("fork")
    );
    let shown = env.run(&["show", &fork, "--json"]).await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let statuses: Vec<&str> = shown["goal_tree"]["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["in_progress", "pending"], "{shown:#}");
    let last_words: String = of_kind(step("fork"), "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert!(
        last_words
            .ends_with("(stopped with goals left open: 1. Read the notes; 2. Write the answer)"),
        "{last_words}"
    );
    assert_eq!(shown["trace"]["status"], "incomplete");

    let listed = step("list")["response"]["sessions"].as_array().unwrap();
    assert!(listed.iter().any(|s| s["sessionId"] == fork.as_str()));
    assert!(
        listed
            .iter()
            .any(|s| s["sessionId"] == session.as_str() && s["title"] == "Answer from the notes")
    );
    assert_eq!(step("load_unknown")["error"]["code"], -32002);

    // A new process loads the session: its history replayed, then its plan.
    let load = step("load");
    let users: Vec<&str> = of_kind(load, "user_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(users[0], "Answer from the notes");
    assert!(users.contains(&"Now think for a long time"), "{users:?}");
    let replayed: Vec<&str> = of_kind(load, "tool_call")
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(replayed, ["completed", "completed", "failed"]);
    assert_eq!(
        entries(of_kind(load, "plan").last().unwrap()),
        [
            "1 Read the notes [completed]",
            "2 Write the answer [completed]"
        ]
    );

    // One model call allowed: the turn stops with max_turn_requests; a closed session is gone.
    let limited = step("limited");
    assert_eq!(
        limited["response"]["stopReason"], "max_turn_requests",
        "{limited:#}"
    );
    assert_eq!(limited["refused"]["code"], -32002, "{limited:#}");
    let echoed = of_kind(limited, "tool_call_update")
        .into_iter()
        .find(|u| u["toolCallId"] == "call_7" && u["status"] == "completed")
        .unwrap_or_else(|| panic!("{limited:#}"));
    assert_eq!(
        echoed["content"][0]["content"]["text"],
        "Echo: from the editor's server"
    );

    // `/goal` in the editor: the status, a goal whose check gates `done`, the status again.
    let goal = step("goal");
    let said = |part: &str| -> String {
        of_kind(&goal[part], "agent_message_chunk")
            .iter()
            .map(|u| u["content"]["text"].as_str().unwrap())
            .collect()
    };
    assert_eq!(goal["before"]["response"]["stopReason"], "end_turn");
    assert_eq!(
        said("before"),
        "No goal yet: /goal TEXT [--check CMD] sets one."
    );
    assert_eq!(
        goal["worked"]["response"]["stopReason"], "end_turn",
        "{goal:#}"
    );
    assert_eq!(said("worked"), "out.txt is written.");
    let plans: Vec<Vec<String>> = of_kind(&goal["worked"], "plan")
        .into_iter()
        .map(entries)
        .collect();
    assert_eq!(plans.last().unwrap(), &["1 Write out.txt [completed]"]);
    // The first done was refused by the check, the second passed it.
    let events = std::fs::read_to_string(
        env.traces()
            .join(goal["sessionId"].as_str().unwrap())
            .join("events.jsonl"),
    )
    .unwrap();
    let checks: Vec<bool> = events
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["event"] == "goal_checked")
        .map(|event| event["result"]["passed"].as_bool().unwrap())
        .collect();
    assert_eq!(checks, [false, true]);
    assert_eq!(said("after"), "every goal is done or abandoned");
    assert_eq!(
        std::fs::read_to_string(env.path("work/out.txt")).unwrap(),
        "out\n"
    );
}
