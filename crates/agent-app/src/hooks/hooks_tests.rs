//! Tests of the hooks: their configuration, matchers and what a run decides.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::command::{Ran, Verdict, run, verdict};
use super::*;

/// A run that exited with `code`, printing `stdout` and `stderr`.
fn ran(code: Option<i32>, stdout: &str, stderr: &str) -> Ran {
    Ran {
        exit_code: code,
        stdout: stdout.into(),
        stderr: stderr.into(),
        timed_out: false,
        duration: Duration::ZERO,
    }
}

/// The hooks of a TOML text.
fn parse(text: &str) -> BTreeMap<String, Vec<HookSpec>> {
    #[derive(Deserialize)]
    struct File {
        hooks: BTreeMap<String, Vec<HookSpec>>,
    }
    toml::from_str::<File>(text).unwrap().hooks
}

#[test]
fn exit_codes_and_json_answers_decide_as_in_claude_code() {
    assert_eq!(verdict(&ran(Some(0), "all good\n", "")), Verdict::Continue);
    assert_eq!(
        verdict(&ran(
            Some(0),
            r#"{"decision": "block", "reason": "tests fail"}"#,
            ""
        )),
        Verdict::Block("tests fail".into())
    );
    let deny = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "not on main"}}"#;
    assert_eq!(
        verdict(&ran(Some(0), deny, "")),
        Verdict::Block("not on main".into())
    );
    assert_eq!(
        verdict(&ran(Some(0), r#"{"decision": "approve"}"#, "")),
        Verdict::Continue
    );
    assert_eq!(
        verdict(&ran(Some(2), "ignored", "  no force pushes \n")),
        Verdict::Block("no force pushes".into())
    );
    assert_eq!(
        verdict(&ran(Some(2), "", "")),
        Verdict::Block("blocked by a hook".into())
    );
    assert!(matches!(verdict(&ran(Some(1), "", "oops")), Verdict::Warn(w) if w.contains("oops")));
    assert!(matches!(
        verdict(&ran(None, "", "killed")),
        Verdict::Warn(_)
    ));
}

#[test]
fn matchers_take_our_tool_names_and_claude_codes() {
    let hooks = compile(&parse(
        "[[hooks.PreToolUse]]\nmatcher = \"Bash|Write\"\ncommand = \"true\"\n\
         [[hooks.PostToolUse]]\nmatcher = \"*\"\ncommand = \"true\"\n",
    ))
    .unwrap();
    let bash_or_write = hooks[1].matcher.as_ref();
    assert!(matches(bash_or_write, Some("bash")));
    assert!(matches(bash_or_write, Some("write_file")));
    assert!(!matches(bash_or_write, Some("edit_file")));
    // Anchored: `Bash` is not a part of `bash_helper`.
    assert!(!matches(bash_or_write, Some("bash_helper")));
    assert!(matches(hooks[0].matcher.as_ref(), Some("anything")));
    // Events without a tool match.
    assert!(matches(bash_or_write, None));
}

#[test]
fn claude_codes_table_shape_and_mistakes() {
    let hooks = compile(&parse(
        "[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"a\", timeout = 5 }, \
         { command = \"b\" }]\n",
    ))
    .unwrap();
    let commands: Vec<(&str, u64)> = hooks
        .iter()
        .map(|h| (h.command.as_str(), h.timeout.as_secs()))
        .collect();
    assert_eq!(commands, [("a", 5), ("b", 60)]);
    for (text, said) in [
        ("[[hooks.Bogus]]\ncommand = \"a\"\n", "not a hook event"),
        (
            "[[hooks.PreToolUse]]\nmatcher = \"(\"\ncommand = \"a\"\n",
            "matcher",
        ),
        ("[[hooks.Stop]]\nmatcher = \"x\"\n", "has no `command`"),
        (
            "[[hooks.Stop]]\nhooks = [{ type = \"prompt\", command = \"a\" }]\n",
            "only `command` runs",
        ),
    ] {
        let error = compile(&parse(text)).unwrap_err().to_string();
        assert!(error.contains(said), "{text}: {error}");
    }
}

#[tokio::test]
async fn a_command_reads_the_json_and_its_output_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let input = serde_json::json!({"hook_event_name": "Stop", "session_id": "t-1"});
    let done = run(
        "cat; echo; echo \"$AGENT_PROJECT_DIR\" >&2; exit 3",
        &input,
        (dir.path(), None),
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(done.exit_code, Some(3));
    assert_eq!(
        serde_json::from_str::<Value>(done.stdout.trim()).unwrap(),
        input
    );
    assert_eq!(done.stderr.trim(), dir.path().display().to_string());
    assert!(!done.timed_out);

    let slow = run(
        "sleep 30",
        &input,
        (dir.path(), None),
        Duration::from_millis(300),
    )
    .await;
    assert!(slow.timed_out);
    assert_eq!(slow.exit_code, None);
    assert!(slow.duration < Duration::from_secs(10));
}

#[tokio::test]
async fn a_plugins_hook_finds_its_folder_in_claude_plugin_root() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("plugin");
    std::fs::create_dir_all(plugin.join("scripts")).unwrap();
    std::fs::write(plugin.join("scripts/say.sh"), "echo from the plugin\n").unwrap();
    let input = serde_json::json!({"hook_event_name": "Stop"});
    let command = "sh \"${CLAUDE_PLUGIN_ROOT}/scripts/say.sh\"";
    let at = (dir.path(), Some(plugin.as_path()));
    let done = run(command, &input, at, Duration::from_secs(10)).await;
    assert_eq!(done.stdout.trim(), "from the plugin", "{done:?}");
    // The control: a hook of agent.toml has no plugin folder.
    let done = run(command, &input, (dir.path(), None), Duration::from_secs(10)).await;
    assert_ne!(done.exit_code, Some(0), "{done:?}");
}
