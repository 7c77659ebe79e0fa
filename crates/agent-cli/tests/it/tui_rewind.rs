//! `/rewind` and `/diff` in the full-screen UI on a real terminal: a scripted conversation
//! writes a file in goal 1 and changes it (and adds another) in goal 2; `/diff 2` shows goal
//! 2's changes in a view that Esc closes, `/rewind` lists the goals, and `/rewind 2` puts the
//! files back as they were when goal 2 started, the session going on in a fork.

use std::path::Path;

use agent_test_support::pty::Terminal;
use serde_json::{Value, json};

use crate::agent_env;

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

fn write(path: &str, content: &str) -> Value {
    call("write_file", json!({"path": path, "content": content}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_and_diff_in_the_full_screen_ui() {
    let env = agent_env();
    let script = json!([
        {"tool_calls": [call("goal", json!({"add": "Draft, Revise", "focus": "1"}))]},
        {"tool_calls": [write("notes.md", "draft\n")]},
        {"tool_calls": [call("goal", json!({"done": "drafted", "focus": "2"}))]},
        {"tool_calls": [write("notes.md", "revised\n"), write("extra.md", "extra\n")]},
        {"tool_calls": [call("goal", json!({"done": "revised"}))]},
        {"text": "Both done."},
        {"text": "The notes are revised."},
        {"text": "Going on from the fork."}
    ]);
    let script = env.write("script.json", &script.to_string());
    let work = env.work();
    std::fs::create_dir_all(&work).unwrap();
    let work = Path::new(&work).to_path_buf();
    let mut terminal = Terminal::spawn(env.command(&[
        "chat",
        "--script",
        &script,
        "--workspace",
        work.to_str().unwrap(),
        "--sandbox",
        "off",
        "--yes",
    ]));
    terminal.wait_for("Type a message and Enter");
    terminal.send("Write the notes\r");
    terminal.wait_for("The notes are revised.");
    assert_eq!(
        std::fs::read_to_string(work.join("notes.md")).unwrap(),
        "revised\n"
    );

    // Goal 2's changes, in a view over the conversation.
    terminal.send("/diff 2\r");
    // The frame may be read half drawn: wait for the whole diff.
    terminal.wait_until("goal 2's whole diff", |screen| {
        screen.contains("Diff · goal 2")
            && screen.contains("-draft")
            && screen.contains("+revised")
            && screen.contains("+++ b/extra.md")
    });
    terminal.send("\u{1b}");
    terminal.wait_until("the diff closed", |screen| {
        !screen.contains("Diff · goal 2")
    });

    terminal.send("/rewind\r");
    let screen = terminal.wait_for("goal  Revise");
    assert!(screen.contains("goal  Draft"), "{screen}");

    terminal.send("/rewind 2\r");
    let screen = terminal.wait_for("0 added, 1 modified, 1 deleted");
    assert!(
        screen.contains("files put back as at the start of goal 2"),
        "{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("notes.md")).unwrap(),
        "draft\n"
    );
    assert!(!work.join("extra.md").exists());

    terminal.send("Go on\r");
    terminal.wait_for("Going on from the fork.");
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    let traces = std::fs::read_dir(env.traces())
        .unwrap()
        .filter(|entry| {
            !entry
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.')
        })
        .count();
    assert_eq!(traces, 2);
}
