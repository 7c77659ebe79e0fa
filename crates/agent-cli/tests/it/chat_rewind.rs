//! `/rewind` in a line-mode chat on a real terminal: a scripted conversation writes a file in
//! goal 1 and changes it (and adds another) in goal 2; `/rewind` lists the goals, `/rewind 2`
//! puts the files back as they were when goal 2 started and the session goes on in a fork; a
//! file the user changed since is kept unless `--force`; the fork lists the turn it went on with.

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

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The ids of the environment's traces, sorted.
fn traces(env: &agent_test_support::cli::CliEnv) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(env.traces())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with('.'))
        .collect();
    ids.sort();
    ids
}

/// Waits for the line editor to read again, after `/command` output or a turn.
fn at_prompt(terminal: &Terminal) {
    terminal.wait_until("the prompt", |_| terminal.cursor_row().trim_end() == "›");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_in_a_line_mode_chat_puts_goal_2s_files_back_and_goes_on_in_a_fork() {
    let env = agent_env();
    let script = json!([
        {"tool_calls": [call("goal", json!({"add": "Draft, Revise", "focus": "1"}))]},
        {"tool_calls": [write("notes.md", "draft\n")]},
        {"tool_calls": [call("goal", json!({"done": "drafted", "focus": "2"}))]},
        {"tool_calls": [write("notes.md", "revised\n"), write("extra.md", "extra\n")]},
        {"tool_calls": [call("goal", json!({"done": "revised"}))]},
        {"text": "Both done."},
        // The closing report of the planned turn.
        {"text": "The notes are revised."},
        // The fork's turn: its goals are open again, and it sees them through.
        {"tool_calls": [call("goal", json!({"done": "drafted", "focus": "2"}))]},
        {"tool_calls": [call("goal", json!({"done": "kept the draft"}))]},
        {"text": "Going on from the fork."},
        {"text": "The draft stays."}
    ]);
    let script = env.write("script.json", &script.to_string());
    let work = env.work();
    std::fs::create_dir_all(&work).unwrap();
    let work = Path::new(&work).to_path_buf();
    let command = env.command(&[
        "chat",
        "--no-tui",
        "--script",
        &script,
        "--workspace",
        work.to_str().unwrap(),
        "--sandbox",
        "off",
        "--yes",
    ]);
    let mut terminal = Terminal::spawn(command);
    terminal.wait_for("Ctrl-D quits");
    at_prompt(&terminal);
    terminal.send("Write the notes\r");
    terminal.wait_for("The notes are revised.");
    at_prompt(&terminal);
    assert_eq!(read(&work.join("notes.md")).as_deref(), Some("revised\n"));
    assert_eq!(read(&work.join("extra.md")).as_deref(), Some("extra\n"));

    let original = traces(&env);
    assert_eq!(original.len(), 1, "{original:?}");
    let original = original[0].clone();

    // Without a point: the goals to go back to, with their descriptions.
    terminal.send("/rewind\r");
    terminal.wait_for("goes back to the start of one of these");
    at_prompt(&terminal);
    let listing = terminal.screen();
    assert!(listing.contains("1      goal  Draft"), "{listing}");
    assert!(listing.contains("2      goal  Revise"), "{listing}");

    // A file the user changed since the run: refused, nothing changes.
    std::fs::write(work.join("notes.md"), "the user's words\n").unwrap();
    terminal.send("/rewind 2\r");
    terminal.wait_for("would be overwritten: notes.md");
    at_prompt(&terminal);
    assert_eq!(
        read(&work.join("notes.md")).as_deref(),
        Some("the user's words\n")
    );
    assert!(work.join("extra.md").exists());

    // Forced: the files of goal 2's start, and the session goes on in a fork.
    terminal.send("/rewind 2 --force\r");
    let screen = terminal.wait_for("this conversation goes on in");
    at_prompt(&terminal);
    assert!(
        screen.contains("files put back as at the start of goal 2: 0 added, 1 modified, 1 deleted"),
        "{screen}"
    );
    assert_eq!(read(&work.join("notes.md")).as_deref(), Some("draft\n"));
    assert!(!work.join("extra.md").exists());

    terminal.send("Go on\r");
    terminal.wait_for("Going on from the fork.");
    at_prompt(&terminal);

    // The fork's own checkpoints: the turn it went on with, numbered in the conversation.
    terminal.send("/rewind\r");
    terminal.wait_for("t2     turn  Go on");
    at_prompt(&terminal);
    terminal.send("/rewind t2 --dry-run\r");
    terminal
        .wait_for("rewinding to the start of turn 2 would change: 0 added, 0 modified, 0 deleted");
    at_prompt(&terminal);
    terminal.send("/trace\r");
    // The id and a fresh prompt after it: the old prompt is still on the cursor's row until the
    // typed line is echoed, and a Ctrl-D typed while the editor is between two lines is lost.
    terminal.wait_until("the trace id and the next prompt", |screen| {
        let after = screen.rsplit_once("› /trace").map_or("", |(_, rest)| rest);
        after.lines().filter(|line| !line.trim().is_empty()).count() >= 2
            && terminal.cursor_row().trim_end() == "›"
    });
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());

    // Two traces: the original, untouched, and the fork the last turn went to.
    let screen = terminal.screen();
    let traces = traces(&env);
    assert_eq!(traces.len(), 2, "{traces:?}");
    let fork = traces.iter().find(|id| **id != original).unwrap();
    let last_trace_line = screen
        .lines()
        .rev()
        .find(|line| traces.iter().any(|id| line.trim() == id))
        .unwrap_or_else(|| panic!("{screen}"));
    assert_eq!(last_trace_line.trim(), fork);
}
