//! A chat whose model calls fail says what to fix in the words `agent run` uses — the key for a
//! 401, the server's models for an unknown model, the base URL when nothing answers — in the
//! full-screen UI and in line mode, on a pseudo-terminal against the mock model server; how to
//! go on is offered only where going on can help.

use agent_test_support::cli::CliEnv;
use agent_test_support::mock_model::{MockModelServer, Reply};
use agent_test_support::pty::Terminal;
use serde_json::json;

use crate::{agent_env, on_server};

/// The two ways a chat shows itself on a terminal.
#[derive(Debug, Clone, Copy)]
enum Mode {
    Screen,
    Line,
}

/// `agent chat` on a pty in `mode`, with the model options `model`, ready for a message.
fn chat(env: &CliEnv, mode: Mode, model: Vec<String>) -> Terminal {
    let mut args = vec!["chat".to_owned()];
    args.extend(model);
    if matches!(mode, Mode::Line) {
        args.push("--no-tui".to_owned());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let terminal = Terminal::spawn(env.command(&args));
    match mode {
        Mode::Screen => {
            terminal.wait_for("Type a message and Enter");
        }
        Mode::Line => ready(&terminal),
    }
    terminal
}

/// Waits for the line editor's prompt.
fn ready(terminal: &Terminal) {
    terminal.wait_until("the prompt", |_| terminal.cursor_row().trim_end() == "›");
}

/// The screen with its lines joined, so that a wrapped sentence reads whole.
fn joined(screen: &str) -> String {
    screen.lines().map(str::trim).collect::<Vec<_>>().join(" ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_key_and_an_unknown_model_say_what_to_fix_in_both_chat_modes() {
    for mode in [Mode::Screen, Mode::Line] {
        let env = agent_env();
        let server = MockModelServer::start().await;
        server.serve_models(&["qwen-small", "qwen-large"]);
        server.push(Reply::error(
            401,
            json!({"error": {"message": "Incorrect API key provided"}}),
        ));
        let mut terminal = chat(&env, mode, on_server(&env, &server));
        terminal.send("Hi\r");
        let screen = joined(&terminal.wait_for("refused the API key"));
        assert!(screen.contains("Set OPENAI_API_KEY"), "{mode:?}: {screen}");
        assert!(screen.contains("401"), "{mode:?}: {screen}");
        assert!(!screen.contains("agent resume"), "{mode:?}: {screen}");
        assert!(!screen.contains("try again"), "{mode:?}: {screen}");
        assert!(!screen.contains("WARN"), "{mode:?}: {screen}");

        server.push(Reply::error(
            404,
            json!({"error": {"code": "model_not_found", "message": "The model `gpt-4o-mini` does not exist"}}),
        ));
        if matches!(mode, Mode::Line) {
            ready(&terminal);
        }
        terminal.send("Again\r");
        let screen = joined(&terminal.wait_for("does not serve the model"));
        assert!(
            screen.contains("\"gpt-4o-mini\"; it serves: qwen-small, qwen-large"),
            "{mode:?}: {screen}"
        );
        assert!(!screen.contains("agent resume"), "{mode:?}: {screen}");
        if matches!(mode, Mode::Line) {
            ready(&terminal);
        }
        terminal.send("\u{4}");
        assert_eq!(terminal.wait_exit(), Some(0), "{mode:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_answering_names_the_base_url_and_offers_to_type_again() {
    for mode in [Mode::Screen, Mode::Line] {
        let env = agent_env();
        // A port nothing listens on: bound, then let go.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let base = format!("http://127.0.0.1:{port}/v1");
        let server = MockModelServer::start().await;
        let mut model = on_server(&env, &server);
        let at = model.iter().position(|a| a == "--base-url").unwrap();
        model[at + 1] = base.clone();
        let mut terminal = chat(&env, mode, model);
        terminal.send("Hi\r");
        let screen = joined(&terminal.wait_for("connection refused"));
        assert!(
            screen.contains(&format!("nothing answers at {base}")),
            "{mode:?}: {screen}"
        );
        assert!(
            screen.contains("the trace is kept: type a message to try again"),
            "{mode:?}: {screen}"
        );
        assert!(!screen.contains("agent resume"), "{mode:?}: {screen}");
        if matches!(mode, Mode::Line) {
            ready(&terminal);
        }
        terminal.send("\u{4}");
        assert_eq!(terminal.wait_exit(), Some(0), "{mode:?}");
    }
}
