//! What the `agent` binary writes for a terminal: the model's own control sequences (colours,
//! screen clearing) never reach the output of `agent run`, `agent show` or `agent plan`; the
//! runtime's colours come with `--color always`, even on a pipe, and never with `NO_COLOR` or
//! `--color never`; a goal the model gives up is shown with its reason. A warning logged while
//! the spinner turns is a line of its own, with nothing of the spinner on it or beside it.

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use agent_test_support::pty::Terminal;
use serde_json::json;

use crate::agent_env;

/// Red text, a reset, and the sequence that clears the screen.
const RED: &str = "\u{1b}[31mred\u{1b}[0m";
const CLEAR: &str = "\u{1b}[2J";

/// `agent <command> <model options on server> <extra>`, as a tokio command.
fn command_on(
    env: &CliEnv,
    server: &MockModelServer,
    command: &str,
    extra: &[&str],
) -> tokio::process::Command {
    let mut args = vec![command.to_owned()];
    args.extend(crate::on_server(env, server));
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    env.agent(&args)
}

/// A server with `turns`, then a plain answer to whatever else is asked (a closing report).
async fn server_with(turns: Vec<Turn>) -> MockModelServer {
    let server = MockModelServer::with_replies(turns).await;
    server.when_empty(|_| Reply::from(Turn::text("Report.")));
    server
}

#[tokio::test]
async fn the_models_control_sequences_are_dropped_from_run_show_and_plan() {
    let env = agent_env();
    let server = server_with(vec![
        Turn::tool_call(
            "c1",
            "goal",
            json!({"add": format!("Paint it {RED}{CLEAR}"), "focus": "1"}),
        ),
        Turn::tool_call("c2", "goal", json!({"done": format!("painted {RED}")})),
        Turn::text(format!("The wall is {RED}.{CLEAR}")),
    ])
    .await;
    // Even when colours are asked for, the model's own never pass.
    let output = command_on(&env, &server, "run", &["--color", "always", "Paint"])
        .output()
        .await
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "The wall is red.\n");
    let log = stderr(&output);
    assert!(log.contains("Paint it red"), "{log}");
    assert!(log.contains("painted red"), "{log}");
    assert!(!log.contains(RED) && !log.contains(CLEAR), "{log:?}");
    assert!(!log.contains("[31mred"), "{log:?}");

    let trace_id = std::fs::read_dir(env.traces())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .to_string_lossy()
        .into_owned();
    for extra in [&[][..], &["--color", "always"][..]] {
        let mut args = vec!["show", trace_id.as_str()];
        args.extend_from_slice(extra);
        let shown = env.run(&args).await;
        assert_eq!(code(&shown), 0, "{}", stderr(&shown));
        let text = stdout(&shown);
        assert!(text.contains("Paint it red"), "{text}");
        assert!(text.contains("The wall is red."), "{text}");
        assert!(!text.contains('\u{1b}'), "{extra:?}: {text:?}");
    }

    let server = server_with(vec![
        Turn::tool_call(
            "p1",
            "goal",
            json!({"add": format!("Paint it {RED}, Clear{CLEAR} up")}),
        ),
        Turn::text(format!("Two goals.{CLEAR}")),
    ])
    .await;
    let output = command_on(&env, &server, "plan", &["Paint"])
        .output()
        .await
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let plan = stdout(&output);
    assert!(plan.contains("Paint it red"), "{plan}");
    assert!(plan.contains("Clear up"), "{plan}");
    assert!(!plan.contains('\u{1b}'), "{plan:?}");
    assert!(!stderr(&output).contains('\u{1b}'), "{:?}", stderr(&output));
}

/// A plan of two goals, the second given up.
fn with_an_abandoned_goal() -> Vec<Turn> {
    vec![
        Turn::tool_call(
            "c1",
            "goal",
            json!({"add": "Look around, Try a shortcut", "focus": "1"}),
        ),
        Turn::tool_call("c2", "goal", json!({"done": "looked", "focus": "2"})),
        Turn::tool_call("c3", "goal", json!({"abandon": "no shortcut exists"})),
        Turn::text("Stopped."),
    ]
}

#[tokio::test]
async fn colours_come_with_color_always_and_never_with_no_color_or_color_never() {
    let env = agent_env();
    let run = |server: &MockModelServer, extra: &[&str]| {
        let mut args = extra.to_vec();
        args.push("Find a shortcut");
        command_on(&env, server, "run", &args)
    };

    // The environment of the tests sets NO_COLOR.
    let server = server_with(with_an_abandoned_goal()).await;
    let output = run(&server, &[]).output().await.unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let log = stderr(&output);
    assert!(!log.contains('\u{1b}'), "{log:?}");
    assert!(
        log.lines().any(|l| l == "✓ 1 Look around — looked"),
        "{log}"
    );
    let abandoned = log
        .lines()
        .find(|l| l.starts_with("✗ "))
        .unwrap_or_else(|| panic!("no abandoned goal: {log}"));
    assert!(
        abandoned.ends_with("Try a shortcut — abandoned: no shortcut exists"),
        "{abandoned}"
    );

    let server = server_with(with_an_abandoned_goal()).await;
    let output = run(&server, &["--color", "always"]).output().await.unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let log = stderr(&output);
    assert!(
        log.contains("\u{1b}[32m✓\u{1b}[0m 1 Look around — looked"),
        "{log:?}"
    );
    assert!(log.contains("\u{1b}[31m✗\u{1b}[0m "), "{log:?}");
    // The answer on stdout is text for a program: never coloured.
    assert!(!stdout(&output).contains('\u{1b}'), "{:?}", stdout(&output));

    // Without NO_COLOR: never means never, and auto colours no pipe.
    for extra in [&["--color", "never"][..], &[][..]] {
        let server = server_with(with_an_abandoned_goal()).await;
        let output = run(&server, extra)
            .env_remove("NO_COLOR")
            .output()
            .await
            .unwrap();
        assert_eq!(code(&output), 0, "{}", stderr(&output));
        let log = stderr(&output);
        assert!(!log.contains('\u{1b}'), "{extra:?}: {log:?}");
        assert!(log.contains("abandoned: no shortcut exists"), "{log}");
    }
}

/// Whether `line` holds a character of the spinner (its frames are braille patterns).
fn has_spinner(line: &str) -> bool {
    line.chars().any(|c| ('\u{2800}'..='\u{28ff}').contains(&c))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warning_logged_under_the_spinner_is_a_clean_line_of_its_own() {
    let env = agent_env();
    // The second model call fails once and is retried: the retry is a plain notice line while
    // the spinner shows the goal being worked on.
    let server = server_with(vec![]).await;
    server.push(Turn::tool_call(
        "c1",
        "goal",
        json!({"add": "Wait for the model", "focus": "1"}),
    ));
    server.push(Reply::error(
        500,
        json!({"error": {"message": "overloaded"}}),
    ));
    server.push(Turn::tool_call("c2", "goal", json!({"done": "waited"})));
    server.push(Turn::text("Finished."));
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_server(&env, &server));
    args.push("Wait for it".to_owned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut terminal = Terminal::spawn(env.command(&args));

    let warned = "the model request failed (server error (500): overloaded); retrying in";
    let check = |screen: &str| {
        let rows: Vec<&str> = screen.lines().collect();
        let at = rows
            .iter()
            .position(|row| row.contains(warned))
            .unwrap_or_else(|| panic!("no warning on the screen:\n{screen}"));
        let row = rows[at];
        assert!(row.contains("agent: "), "{screen}");
        assert!(row.contains("(attempt 2 of "), "{screen}");
        assert!(
            !has_spinner(row),
            "spinner on the warning's line:\n{screen}"
        );
        assert!(
            !row.contains("tokens · $"),
            "spinner text on the warning's line:\n{screen}"
        );
        // The warning starts its row: nothing was left before it.
        assert!(
            row.trim_start().starts_with("agent: "),
            "{row:?} in\n{screen}"
        );
        // The row above is what came before the spinner, not a frame of it.
        assert!(at == 0 || !has_spinner(rows[at - 1]), "{screen}");
    };
    let screen = terminal.wait_for(warned);
    check(&screen);
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    let screen = terminal.screen();
    check(&screen);
    // The spinner is gone: no frame of it anywhere, and the answer after the warning.
    assert!(!screen.lines().any(has_spinner), "{screen}");
    assert!(screen.find(warned) < screen.rfind("Finished."), "{screen}");
}
