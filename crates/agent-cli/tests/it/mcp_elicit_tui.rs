//! A server's question in the full-screen UI: `agent chat` on a pseudo-terminal, the official
//! SDK's stdio server `tests/mcp/asking.mjs` asks during a tool call, the person fills in the
//! form (a name typed, a colour picked with →), and the tool result carries the answer.

use agent_test_support::pty::Terminal;
use serde_json::json;

use crate::agent_env;
use crate::mcp_oauth::{all_text, test_server};

#[test]
fn a_server_question_is_a_form_in_the_full_screen_ui() {
    let env = agent_env();
    env.write(
        "agent.toml",
        &format!(
            "[mcp.servers.asking]\ncommand = \"node\"\nargs = [{:?}]\n",
            test_server("asking.mjs")
        ),
    );
    let script = json!([
        {"tool_calls": [{"name": "mcp__asking__greet", "arguments": {}}]},
        {"text": "Greeted."}
    ]);
    let script = env.write("script.json", &script.to_string());
    let args = ["chat", "--script", &script, "--workspace", &env.work()];
    let mut terminal = Terminal::spawn(env.command(&args));
    terminal.wait_for("Type a message and Enter");
    terminal.send("Greet me\r");
    let screen = terminal.wait_for("asking asks");
    assert!(screen.contains("Who is there?"), "{screen}");
    terminal.send("Ada\r");
    terminal.wait_for("[green]");
    terminal.send("\u{1b}[C");
    terminal.wait_for("[blue]");
    terminal.send("\r");
    terminal.wait_for("Greeted.");
    assert!(
        all_text(&env.traces()).contains("Hello Ada, who likes blue."),
        "{}",
        terminal.screen()
    );
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
}
