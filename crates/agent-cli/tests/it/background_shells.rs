//! Background shells as the `agent` command gives them: `bash {"background": true}` answers at
//! once, `shell_output` later returns what the command printed, and a shell still running when
//! its run ends is killed with everything it started, even when the process goes on (a chat
//! waiting for its next message).

use std::process::Stdio;
use std::time::{Duration, Instant};

use agent_test_support::cli::{code, stderr};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::{agent_env, on_server};

/// The tool results of the last request `server` received.
fn tool_results(server: &MockModelServer) -> Vec<String> {
    let last: Value = server.requests().last().unwrap().body.clone();
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The ids of the processes of this machine whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(marker))
        })
        .collect()
}

/// Waits up to `within` for `done`; whether it came.
async fn eventually(within: Duration, done: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    done()
}

/// A `sleep` for a long time, of a length no other test uses: its command line is the marker.
fn long_sleep() -> String {
    format!("{}.{}", 300 + std::process::id() % 100, std::process::id())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_shell_answers_at_once_and_its_output_is_read_later() {
    let env = agent_env();
    let marker = long_sleep();
    let server = MockModelServer::with_replies([
        Turn::tool_call(
            "b1",
            "bash",
            json!({"command": "sleep 1; echo done", "background": true}),
        ),
        // It prints after the model's last read: only the trace keeps that.
        Turn::tool_call(
            "b2",
            "bash",
            json!({"command": format!("sleep 3; echo late-words; sleep {marker}"), "background": true}),
        ),
        Turn::tool_call("b3", "bash", json!({"command": "sleep 2"})),
        Turn::tool_call("o1", "shell_output", json!({})),
        Turn::tool_call("b4", "bash", json!({"command": "sleep 2"})),
        Turn::text("Done."),
    ])
    .await;
    let mut args = vec!["run".to_owned()];
    args.extend(on_server(&env, &server));
    args.extend(["--yes".to_owned(), "Start the watcher".to_owned()]);
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let results = tool_results(&server);
    assert_eq!(results.len(), 5, "{results:?}");
    // The first call answered before the command printed anything.
    assert!(
        results[0].contains("Started background shell sh-"),
        "{results:?}"
    );
    assert!(
        !results[0].lines().any(|line| line == "done"),
        "{results:?}"
    );
    // After the wait, its output and its end; the long one still runs.
    let read = &results[3];
    assert!(read.lines().any(|line| line == "done"), "{read}");
    assert!(
        read.contains("(`sleep 1; echo done`): exited with code 0"),
        "{read}"
    );
    assert!(
        read.contains(&format!(
            "(`sleep 3; echo late-words; sleep {marker}`): running"
        )),
        "{read}"
    );
    assert!(
        !results.iter().any(|r| r.contains("late-words\n")),
        "never read: {results:?}"
    );
    // The trace keeps, on the message that started each shell, how it ended and all it printed.
    let kept: Vec<serde_json::Value> = crate::logged_events(&env)
        .into_iter()
        .filter(|event| event["event"] == "message_updated")
        .map(|event| event["message"]["metadata"].clone())
        .filter(|metadata| metadata.get("shell_logs").is_some())
        .collect();
    assert_eq!(kept.len(), 2, "{kept:?}");
    let logs = |metadata: &serde_json::Value| metadata["shell_logs"].as_object().unwrap().clone();
    assert_eq!(logs(&kept[0]).values().next().unwrap(), "done\n");
    assert_eq!(kept[0]["shells"][0]["state"], "exited");
    assert_eq!(logs(&kept[1]).values().next().unwrap(), "late-words\n");
    assert_eq!(kept[1]["shells"][0]["state"], "killed", "{kept:?}");
    // Nothing the run started is left.
    assert!(
        eventually(Duration::from_secs(5), || processes_with(&marker)
            .is_empty())
        .await,
        "left running: {:?}",
        processes_with(&marker)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_still_running_dies_when_its_run_ends_though_the_chat_goes_on() {
    let env = agent_env();
    let marker = long_sleep();
    let server = MockModelServer::with_replies([
        Reply::from(Turn::tool_call(
            "b1",
            "bash",
            json!({"command": format!("sleep {marker}"), "background": true}),
        )),
        // The answer comes late (a pause before each piece of it): the test sees the shell
        // running meanwhile.
        Reply::from(Turn::text("Started.")).with_pause(Duration::from_millis(500)),
    ])
    .await;
    let mut args = vec!["chat".to_owned()];
    args.extend(on_server(&env, &server));
    args.push("--yes".to_owned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = env
        .agent(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"Start the watcher\n").await.unwrap();

    // While the turn runs, the shell does (the control: this test sees such a process).
    assert!(
        eventually(Duration::from_secs(20), || !processes_with(&marker)
            .is_empty())
        .await,
        "the background shell never ran"
    );
    // The turn ends (its answer is printed); the chat waits for the next message, and the
    // shell is gone.
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let answered = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = stdout.next_line().await {
            if line.contains("Started.") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(answered, Ok(true), "the turn did not end");
    assert!(
        eventually(Duration::from_secs(10), || processes_with(&marker)
            .is_empty())
        .await,
        "still running after the run ended: {:?}",
        processes_with(&marker)
    );
    assert!(child.try_wait().unwrap().is_none(), "the chat went on");
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shells_in_the_full_screen_ui_lists_the_runs_shell_and_a_key_stops_it() {
    use agent_test_support::pty::Terminal;
    let env = agent_env();
    let marker = long_sleep();
    let server = MockModelServer::with_replies([
        Reply::from(Turn::tool_call(
            "b1",
            "bash",
            json!({"command": format!("sleep {marker}"), "background": true}),
        )),
        // The turn goes on while the person looks at its shells.
        Reply::from(Turn::text("Started.")).with_delay(Duration::from_secs(60)),
    ])
    .await;
    let mut args = vec!["chat".to_owned()];
    args.extend(on_server(&env, &server));
    args.push("--yes".to_owned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut terminal = Terminal::spawn(env.command(&args));
    terminal.wait_for("Type a message and Enter");
    terminal.send("Start the watcher\r");
    assert!(
        eventually(Duration::from_secs(20), || !processes_with(&marker)
            .is_empty())
        .await,
        "the background shell never ran"
    );
    terminal.send("/shells\r");
    let screen = terminal.wait_for("Background shells · 1 running");
    assert!(screen.contains(&format!("sleep {marker}")), "{screen}");
    assert!(screen.contains(" running "), "{screen}");
    // `x` stops the chosen shell, and everything it started.
    terminal.send("x");
    terminal.wait_for("stopping shell sh-");
    assert!(
        eventually(Duration::from_secs(10), || processes_with(&marker)
            .is_empty())
        .await,
        "still running after x: {:?}",
        processes_with(&marker)
    );
    // The open view follows the shell's end.
    terminal.wait_for("Background shells · 0 running");
    terminal.send("\u{1b}");
    terminal.wait_until("the view to close", |screen| {
        !screen.contains("Background shells")
    });
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
}

#[tokio::test]
async fn shells_in_the_line_mode_says_what_runs_and_refuses_an_unknown_id() {
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text("Hello.")]).await;
    let mut args = vec!["chat".to_owned()];
    args.extend(on_server(&env, &server));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = env
        .agent(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"Hi\n/shells\n/shells kill sh-0000\n/shells stop\n")
        .await
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let said = stderr(&output);
    // Between turns no shell runs: each ended with the turn that started it.
    assert!(said.contains("no background shells"), "{said}");
    assert!(
        said.contains("there is no background shell \"sh-0000\": none is running"),
        "{said}"
    );
    assert!(
        said.contains("/shells lists the background shells; /shells kill ID stops one"),
        "{said}"
    );
}
