//! Plugins as a Claude Code user brings them: a folder in Claude Code's layout
//! (`.claude-plugin/plugin.json`, `commands/`, `skills/`, `agents/`, `hooks/hooks.json`,
//! `.mcp.json`) installed with `agent plugin add` adds its command, its skill, its agent
//! profile, its hooks (a real script, found through `${CLAUDE_PLUGIN_ROOT}`) and its MCP server
//! (a real stdio server) to every run; disabled, they go; removed, the folder goes. A git
//! repository installs the same way.

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Turn};
use serde_json::Value;

use crate::agent_env;

/// Writes the plugin `review-kit` under `dir` (relative to the environment's root).
fn write_plugin(env: &CliEnv, dir: &str) {
    env.write(
        &format!("{dir}/.claude-plugin/plugin.json"),
        r#"{"name": "review-kit", "description": "Code review helpers", "version": "1.2.0",
            "author": {"name": "Someone"}}"#,
    );
    env.write(
        &format!("{dir}/commands/review.md"),
        "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $1 with the review-checklist skill.\n",
    );
    env.write(
        &format!("{dir}/skills/review-checklist/SKILL.md"),
        "---\nname: review-checklist\ndescription: The team's checklist for reviewing a change.\n---\nCheck names, tests and errors.\n",
    );
}

/// `agent <args>` in the environment, to the end.
async fn agent(env: &CliEnv, args: &[&str]) -> std::process::Output {
    env.run(args).await
}

/// The names and sources of a `--json` listing's `key` entries.
fn listed(output: &std::process::Output, key: &str) -> Vec<(String, String)> {
    let value: Value = serde_json::from_str(&stdout(output)).unwrap();
    value[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["source"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_plugin_from_a_folder_adds_its_command_and_its_skill() {
    let env = agent_env();
    write_plugin(&env, "review-kit");
    // A link in the plugin to the user's files is not copied.
    std::os::unix::fs::symlink(env.path("home"), env.path("review-kit/home-link")).unwrap();
    let added = agent(&env, &["plugin", "add", &env.arg("review-kit")]).await;
    assert_eq!(code(&added), 0, "{}", stderr(&added));
    let installed = env.path("home/agent/plugins/review-kit");
    assert!(installed.join("commands/review.md").is_file());
    assert!(!installed.join("home-link").exists());
    // The same name twice is refused.
    let again = agent(&env, &["plugin", "add", &env.arg("review-kit")]).await;
    assert_eq!(code(&again), 2, "{}", stderr(&again));

    let work = env.work();
    let commands = agent(&env, &["commands", "--workspace", &work, "--json"]).await;
    assert_eq!(
        listed(&commands, "commands"),
        [("review".to_owned(), "plugin review-kit".to_owned())]
    );
    let skills = agent(&env, &["skills", "--workspace", &work, "--json"]).await;
    assert_eq!(
        listed(&skills, "skills"),
        [(
            "review-checklist".to_owned(),
            "plugin review-kit".to_owned()
        )]
    );

    // A run: the command expands, the skill is offered.
    let server = MockModelServer::with_replies([Turn::text("Reviewed.")]).await;
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_server(&env, &server));
    args.push("/review src/app.py".into());
    let ran = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    let body = server.requests()[0].body.to_string();
    assert!(
        body.contains("Review src/app.py with the review-checklist skill."),
        "{body}"
    );
    assert!(
        body.contains("- review-checklist: The team's checklist for reviewing a change."),
        "{body}"
    );

    let disabled = agent(&env, &["plugin", "disable", "review-kit"]).await;
    assert_eq!(code(&disabled), 0, "{}", stderr(&disabled));
    let commands = agent(&env, &["commands", "--workspace", &work, "--json"]).await;
    assert!(listed(&commands, "commands").is_empty());
    let list = agent(&env, &["plugin", "list"]).await;
    assert!(
        stdout(&list).contains("review-kit  1.2.0    disabled"),
        "{}",
        stdout(&list)
    );
    let enabled = agent(&env, &["plugin", "enable", "review-kit"]).await;
    assert_eq!(code(&enabled), 0, "{}", stderr(&enabled));
    let skills = agent(&env, &["skills", "--workspace", &work, "--json"]).await;
    assert_eq!(listed(&skills, "skills").len(), 1);

    let removed = agent(&env, &["plugin", "remove", "review-kit"]).await;
    assert_eq!(code(&removed), 0, "{}", stderr(&removed));
    assert!(!installed.exists());
    let unknown = agent(&env, &["plugin", "remove", "review-kit"]).await;
    assert_eq!(code(&unknown), 2, "{}", stderr(&unknown));
}

#[tokio::test]
async fn a_plugin_installs_from_a_git_repository() {
    let env = agent_env();
    write_plugin(&env, "repo");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(env.path("repo"))
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
    };
    git(&["init", "--quiet"]);
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "plugin"]);
    let url = format!("file://{}", env.arg("repo"));
    let added = agent(&env, &["plugin", "add", &url]).await;
    assert_eq!(code(&added), 0, "{}", stderr(&added));
    let installed = env.path("home/agent/plugins/review-kit");
    assert!(installed.join("skills/review-checklist/SKILL.md").is_file());
    assert!(!installed.join(".git").exists());
    let list = agent(&env, &["plugin", "list", "--json"]).await;
    let value: Value = serde_json::from_str(&stdout(&list)).unwrap();
    assert_eq!(value["plugins"][0]["name"], "review-kit");
    assert_eq!(value["plugins"][0]["enabled"], true);
}

/// A stdio MCP server in Python: `initialize`, `tools/list` with one tool, `lookup`, and
/// `tools/call`, over newline-delimited JSON-RPC.
const NOTES_SERVER: &str = r#"import json, sys
for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        result = {"protocolVersion": message["params"].get("protocolVersion", "2025-06-18"),
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "notes", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "lookup", "description": "Looks a note up",
                             "inputSchema": {"type": "object",
                                             "properties": {"key": {"type": "string"}}}}]}
    elif method == "tools/call":
        key = message["params"].get("arguments", {}).get("key", "")
        result = {"content": [{"type": "text", "text": "the plugin's server knows " + key}]}
    else:
        reply = {"jsonrpc": "2.0", "id": message["id"],
                 "error": {"code": -32601, "message": "unknown method"}}
        print(json.dumps(reply), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

/// Writes the plugin `guard-kit` under `dir`: a PreToolUse hook on Bash that refuses every
/// command and logs what it read to `log`, an MCP server, and an agent profile, as Claude Code
/// plugins keep them.
fn write_bundle(env: &CliEnv, dir: &str, log: &str) {
    env.write(
        &format!("{dir}/.claude-plugin/plugin.json"),
        r#"{"name": "guard-kit", "version": "0.1.0", "description": "Guards and notes"}"#,
    );
    env.write(
        &format!("{dir}/hooks/hooks.json"),
        r#"{"description": "Refuses shell commands",
            "hooks": {
              "PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/scripts/guard.sh\"", "timeout": 10}
              ]}],
              "SessionEnd": [{"hooks": [{"type": "command", "command": "true"}]}]
            }}"#,
    );
    env.write(
        &format!("{dir}/scripts/guard.sh"),
        &format!(
            "#!/bin/sh\ncat >> '{log}'\necho >> '{log}'\n\
             echo \"no shell here (from $CLAUDE_PLUGIN_ROOT)\" >&2\nexit 2\n"
        ),
    );
    env.write(
        &format!("{dir}/.mcp.json"),
        r#"{"mcpServers": {"notes": {"type": "stdio", "command": "python3",
            "args": ["${CLAUDE_PLUGIN_ROOT}/servers/notes.py"]}}}"#,
    );
    env.write(&format!("{dir}/servers/notes.py"), NOTES_SERVER);
    env.write(
        &format!("{dir}/agents/plugin-reviewer.md"),
        "---\nname: plugin-reviewer\ndescription: Reviews with the plugin's notes.\n\
         tools: Read, Grep, Bash, mcp__notes__lookup\ncolor: blue\n---\nYou are the plugin's reviewer.\n",
    );
}

#[tokio::test]
async fn a_plugin_adds_its_hooks_its_mcp_server_and_its_agent_profile() {
    let env = agent_env();
    let log = env.arg("guard.jsonl");
    write_bundle(&env, "guard-kit", &log);
    let added = agent(&env, &["plugin", "add", &env.arg("guard-kit")]).await;
    assert_eq!(code(&added), 0, "{}", stderr(&added));
    let installed = env.path("home/agent/plugins/guard-kit");
    let work = env.work();
    let agents = agent(&env, &["agents", "--workspace", &work, "--json"]).await;
    assert_eq!(code(&agents), 0, "{}", stderr(&agents));
    assert!(
        stdout(&agents).contains("\"plugin-reviewer\""),
        "{}",
        stdout(&agents)
    );

    let run = |server: &MockModelServer| {
        let mut args = vec!["run".to_owned()];
        args.extend(crate::on_server(&env, server));
        args.extend(["--yes", "--agent", "plugin-reviewer", "Check it"].map(str::to_owned));
        args
    };
    let turns = || {
        [
            Turn::tool_call(
                "c1",
                "bash",
                serde_json::json!({"command": "touch ran.txt"}),
            ),
            Turn::tool_call("c2", "mcp__notes__lookup", serde_json::json!({"key": "k1"})),
            Turn::text("Checked."),
        ]
    };
    let server = MockModelServer::with_replies(turns()).await;
    let args = run(&server);
    let ran = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{}", stderr(&ran));
    // The profile's prompt, the server's tool, the hook's refusal and the server's answer.
    let first = requests[0].body.to_string();
    assert!(first.contains("You are the plugin's reviewer."), "{first}");
    assert!(first.contains("mcp__notes__lookup"), "{first}");
    assert!(!env.path("work/ran.txt").exists(), "the hook let bash run");
    let second = requests[1].body.to_string();
    let root = installed.display().to_string();
    assert!(
        second.contains(&format!("no shell here (from {root})")),
        "{second}"
    );
    let seen: Value = serde_json::from_str(
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(seen["tool_input"]["command"], "touch ran.txt");
    let third = requests[2].body.to_string();
    assert!(third.contains("the plugin's server knows k1"), "{third}");

    // The control: disabled, the plugin's hook, server and profile are gone.
    let disabled = agent(&env, &["plugin", "disable", "guard-kit"]).await;
    assert_eq!(code(&disabled), 0, "{}", stderr(&disabled));
    let server = MockModelServer::with_replies(turns()).await;
    let args = run(&server);
    let refused = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(
        code(&refused),
        2,
        "the profile is still there: {}",
        stderr(&refused)
    );
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_server(&env, &server));
    args.extend(["--yes", "Check it"].map(str::to_owned));
    let ran = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert!(env.path("work/ran.txt").exists(), "bash did not run");
    let first = server.requests()[0].body.to_string();
    assert!(!first.contains("mcp__notes__lookup"), "{first}");
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
}
