//! The full-screen UI and the terminal around it, on a pseudo-terminal: the mouse wheel
//! scrolls the conversation (the UI asks for mouse reports while it is up, and only then), and
//! while the screen is up no log line is drawn over it — a retried model request, which logs,
//! leaves the screen clean and its line in the log file the greeting names, with `-v` too.

use agent_test_support::cli::CliEnv;
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use agent_test_support::pty::Terminal;
use serde_json::json;

use crate::{agent_env, on_server};

/// What the UI shows once it is ready for a message.
const READY: &str = "Type a message and Enter";

/// `agent <before> chat` on a pty, on `server`, ready for a message.
fn tui(env: &CliEnv, server: &MockModelServer, before: &[&str]) -> Terminal {
    let mut args: Vec<String> = before.iter().map(|s| (*s).to_owned()).collect();
    args.push("chat".to_owned());
    args.extend(on_server(env, server));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let terminal = Terminal::spawn(env.command(&args));
    terminal.wait_for(READY);
    terminal
}

/// The smallest `row N` on the screen, if any.
fn first_row(screen: &str) -> Option<usize> {
    screen
        .lines()
        .filter_map(|line| line.split("row ").nth(1))
        .filter_map(|rest| rest.trim().parse().ok())
        .min()
}

/// The smallest `row N` on the screen.
fn top_row(screen: &str) -> usize {
    first_row(screen).unwrap_or_else(|| panic!("no row on the screen:\n{screen}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mouse_wheel_scrolls_the_conversation() {
    let env = agent_env();
    // Longer than the screen is tall.
    let answer: String = (1..=300).map(|n| format!("- row {n}\n")).collect();
    let server = MockModelServer::with_replies([Turn::text(answer)]).await;
    let mut terminal = tui(&env, &server, &[]);
    assert!(terminal.reports_mouse(), "mouse reports are asked for");
    terminal.send("Count to three hundred\r");
    let screen = terminal.wait_for("row 300");
    let bottom = top_row(&screen);
    assert!(bottom > 50, "the end is shown: {bottom}");
    // Ten notches up (SGR reports of button 64, the wheel up), three rows each.
    // A frame is drawn from the top down, so the screen is read once the whole frame is there:
    // thirty rows up, and the last row gone.
    terminal.send(&"\u{1b}[<64;20;20M".repeat(10));
    terminal.wait_until("the conversation to scroll up thirty rows", |screen| {
        first_row(screen) == Some(bottom - 30) && !screen.contains("row 300")
    });
    // And back down (button 65).
    terminal.send(&"\u{1b}[<65;20;20M".repeat(10));
    terminal.wait_until("the conversation to scroll back", |screen| {
        first_row(screen) == Some(bottom) && screen.contains("row 300")
    });
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
    terminal.wait_until("mouse reports to be off again", |_| {
        !terminal.reports_mouse()
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_request_draws_nothing_over_the_screen_and_is_in_the_log_file() {
    for verbose in [&[][..], &["-v"][..]] {
        let env = agent_env();
        let log = env.path("state/agent/agent.log");
        let server = MockModelServer::with_replies([
            Reply::error(500, json!({"error": {"message": "the server hiccuped"}})),
            Reply::from(Turn::text("Fine after a retry.")),
        ])
        .await;
        let mut terminal = tui(&env, &server, verbose);
        let screen = terminal.screen();
        assert!(
            screen.contains(&format!("Log lines go to {}", log.display())),
            "{verbose:?}: {screen}"
        );
        terminal.send("Try it\r");
        let screen = terminal.wait_for("Fine after a retry.");
        assert_eq!(server.request_count(), 2, "the request was sent again");
        for text in ["retrying", "hiccuped", "WARN"] {
            assert!(!screen.contains(text), "{verbose:?} {text:?}:\n{screen}");
        }
        let logged = std::fs::read_to_string(&log).unwrap();
        assert!(logged.contains("--- agent chat"), "{verbose:?}: {logged}");
        assert!(logged.contains("retrying in"), "{verbose:?}: {logged}");
        assert!(
            !logged.contains('\u{1b}'),
            "no colours in the file: {logged}"
        );
        // Without -v a notice of one line; with it, the log record.
        if verbose.is_empty() {
            assert!(
                logged.contains("\nagent: the model request failed"),
                "{logged}"
            );
            assert!(!logged.contains("WARN"), "{logged}");
        } else {
            assert!(logged.contains("WARN agent_llm::notice"), "{logged}");
        }
        terminal.send("\u{4}");
        assert_eq!(terminal.wait_exit(), Some(0));
        // Once the screen is left, the way to the log lines is said where people see it.
        terminal.wait_for("log lines of the session are in");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_a_turn_notifies_only_an_unfocused_terminal() {
    let env = agent_env();
    env.write("agent.toml", "[tui]\nnotify = \"osc9\"\n");
    let server =
        MockModelServer::with_replies([Turn::text("First answer."), Turn::text("Second answer.")])
            .await;
    let mut terminal = tui(&env, &server, &[]);
    assert_eq!(
        terminal.count_written(b"\x1b[?1004h"),
        1,
        "focus changes are reported while the screen is up"
    );
    let notified = b"\x1b]9;agent: the turn is done\x07";
    // The terminal says it has the focus: a turn's end notifies nobody.
    terminal.send("\x1b[I");
    terminal.send("one\r");
    terminal.wait_for("First answer.");
    terminal.wait_until("the turn to end", |screen| {
        !screen.contains("Esc or Ctrl-C stops")
    });
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(terminal.count_written(notified), 0);
    // It lost the focus: the next turn's end notifies.
    terminal.send("\x1b[O");
    terminal.send("two\r");
    terminal.wait_for("Second answer.");
    terminal.wait_until("the notification", |_| {
        terminal.count_written(notified) == 1
    });
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
    assert_eq!(
        terminal.count_written(b"\x1b[?1004l"),
        1,
        "focus reports are off again"
    );
}
