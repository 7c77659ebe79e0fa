//! What the MCP servers of the command line's runs are offered: who answers their questions
//! (the terminal, the full-screen UI's forms, the HTTP server's board, or nobody) and how a
//! sign-in page is shown. Which servers start, and in which sandbox, is the application's
//! (`agent_app::mcp`).

use std::path::Path;
use std::sync::Arc;

use agent_app::App;
use agent_mcp::{ClientOptions, Elicitor, NoElicitor};

use crate::elicit::TerminalElicitor;
use crate::output::note;

/// The options of servers working in `workspace` whose questions `elicitor` answers.
fn options(app: &App, workspace: &Path, elicitor: Arc<dyn Elicitor>) -> ClientOptions {
    agent_app::mcp::client_options(workspace, elicitor, app.config().user_dir().as_deref())
}

/// For a run shown on a terminal: the servers' questions asked on the terminal (declined
/// without one), and a server that asks for a wider scope signed in to again through the
/// browser.
pub(crate) fn on_terminal(app: &App, workspace: &Path) -> ClientOptions {
    options(app, workspace, Arc::new(TerminalElicitor)).with_browser(Arc::new(TerminalBrowser))
}

/// For a server or an editor's agent, where the terminal is not the person's: every question
/// declined.
pub(crate) fn unattended(app: &App, workspace: &Path) -> ClientOptions {
    options(app, workspace, Arc::new(NoElicitor))
}

/// For `agent run --serve`: the servers' questions wait for an answer over HTTP (the viewer
/// shows them beside the run); otherwise they are asked on the terminal.
pub(crate) fn for_run(app: &App, workspace: &Path, serve: bool) -> ClientOptions {
    match serve {
        true => served(app, workspace, crate::elicit_http::run_board()),
        false => on_terminal(app, workspace),
    }
}

/// For a chat in the full-screen UI: the servers' questions are forms on its screen, asked
/// through `asker`.
pub(crate) fn in_tui(app: &App, workspace: &Path, asker: agent_tui::FormAsker) -> ClientOptions {
    let elicitor = Arc::new(crate::elicit_tui::TuiElicitor::new(asker));
    options(app, workspace, elicitor).with_browser(Arc::new(TerminalBrowser))
}

/// For runs served over HTTP (`agent serve`): the servers' questions wait on `board` for an
/// answer over HTTP (declined after its timeout).
pub(crate) fn served(
    app: &App,
    workspace: &Path,
    board: Arc<agent_api::HttpElicitations>,
) -> ClientOptions {
    let elicitor = Arc::new(crate::elicit_http::HttpElicitor::new(board));
    options(app, workspace, elicitor)
}

/// Shows a sign-in page: its address on stderr, and the browser when there is one.
#[derive(Debug)]
struct TerminalBrowser;

impl agent_mcp::Browser for TerminalBrowser {
    fn open(&self, url: &str) {
        note(&format!(
            "Open this page to sign in again, with a wider scope:\n  {url}"
        ));
        open_browser(url);
    }
}

/// Opens `url` in the browser `$BROWSER` names, else the desktop's; does nothing without one.
pub(crate) fn open_browser(url: &str) {
    let browser = std::env::var("BROWSER")
        .ok()
        .filter(|value| !value.trim().is_empty());
    let command = match browser {
        Some(browser) => browser,
        None if cfg!(target_os = "macos") => "open".to_owned(),
        None if std::env::var_os("DISPLAY").is_some()
            || std::env::var_os("WAYLAND_DISPLAY").is_some() =>
        {
            "xdg-open".to_owned()
        }
        None => return,
    };
    let mut words = command.split_whitespace();
    let Some(program) = words.next() else { return };
    let _ = std::process::Command::new(program)
        .args(words)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}
