//! End to end against `fakellm`, a third-party mock LLM server from PyPI that speaks the OpenAI
//! and Anthropic HTTP APIs (SSE included) and answers by YAML rules.
//!
//! The test installs a pinned `fakellm` into a virtualenv under the target directory
//! (`target/fakellm-venv`, reused when already there), starts it on a free loopback port, runs a
//! tool call then a final answer through both clients, streamed and not, and stops the server.
//! A missing `python3` or a failed install fails the test loudly; it never skips.
//! `FAKELLM_PYTHON` names another interpreter.
#![allow(clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use agent_llm::{
    AnthropicClient, AnthropicConfig, ChatMessage, ChatRequest, LlmClient, OpenAiClient,
    OpenAiConfig, RetryPolicy, ToolSpec,
};
use serde_json::json;

/// The fakellm release the test was written against: its rules engine, conversation tracking
/// and stream shapes are what the assertions below rely on.
const FAKELLM_VERSION: &str = "0.3.5";

/// Two rules: in a conversation's first turn a question about the weather gets a tool call; in
/// its second turn, once a tool result mentioning "sunny" came back, the final answer.
const RULES: &str = r#"
version: 1
rules:
  - name: weather_tool
    when:
      turn: 1
      messages_contain: "weather"
    respond:
      tool_calls:
        - name: get_weather
          arguments: {city: "Paris", unit: "celsius"}
  - name: weather_answer
    when:
      turn: 2
      tool_result_contains: "sunny"
    respond:
      content: "It is sunny in Paris, 21 degrees."
"#;

fn run(command: &mut Command) -> std::process::Output {
    let output = command
        .output()
        .unwrap_or_else(|err| panic!("cannot run {command:?}: {err} (is python3 installed?)"));
    assert!(
        output.status.success(),
        "{command:?} failed with {}:\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    output
}

fn installed_version(python: &Path) -> Option<String> {
    let output = Command::new(python)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('fakellm'))",
        ])
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// Holds an exclusive lock on the venv while installing, so that concurrent test runs sharing
/// the target directory do not install over each other.
struct InstallLock(PathBuf);

impl InstallLock {
    fn acquire(path: PathBuf) -> InstallLock {
        let deadline = Instant::now() + Duration::from_secs(600);
        loop {
            match std::fs::create_dir(&path) {
                Ok(()) => return InstallLock(path),
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                    let stale = std::fs::metadata(&path)
                        .and_then(|meta| meta.modified())
                        .ok()
                        .and_then(|modified| SystemTime::now().duration_since(modified).ok())
                        .is_some_and(|age| age > Duration::from_secs(900));
                    if stale {
                        let _ = std::fs::remove_dir(&path);
                        continue;
                    }
                    assert!(
                        Instant::now() < deadline,
                        "timed out waiting for the install lock {path:?}"
                    );
                    std::thread::sleep(Duration::from_millis(250));
                }
                Err(err) => panic!("cannot create the install lock {path:?}: {err}"),
            }
        }
    }
}

impl Drop for InstallLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// The venv's python with the pinned fakellm installed; installs it when missing.
fn fakellm_python() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory");
    let venv = target.join("fakellm-venv");
    let python = venv.join("bin").join("python");
    if installed_version(&python).as_deref() == Some(FAKELLM_VERSION) {
        return python;
    }
    let _lock = InstallLock::acquire(target.join("fakellm-venv.lock"));
    if installed_version(&python).as_deref() == Some(FAKELLM_VERSION) {
        return python;
    }
    let base = std::env::var("FAKELLM_PYTHON").unwrap_or_else(|_| "python3".to_string());
    if !python.exists() {
        let _ = std::fs::remove_dir_all(&venv);
        run(Command::new(&base).arg("-m").arg("venv").arg(&venv));
    }
    run(Command::new(&python).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        &format!("fakellm=={FAKELLM_VERSION}"),
    ]));
    assert_eq!(
        installed_version(&python).as_deref(),
        Some(FAKELLM_VERSION),
        "fakellm did not install"
    );
    python
}

/// The running server; killed when dropped.
struct Server {
    child: Child,
    log: PathBuf,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

async fn start_server(python: &Path, dir: &Path) -> Server {
    let config = dir.join("fakellm.yaml");
    std::fs::write(&config, RULES).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = dir.join("fakellm.log");
    let log_file = std::fs::File::create(&log).unwrap();
    let child = Command::new(python)
        .args([
            "-m",
            "fakellm.cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--config",
        ])
        .arg(&config)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file)
        .spawn()
        .expect("cannot start fakellm");
    let mut server = Server { child, log, port };
    // reqwest is built without a default TLS provider; plain-HTTP polling still needs one.
    agent_llm::ensure_crypto_provider();
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            panic!("fakellm exited with {status}:\n{}", server.log());
        }
        let stats = format!("http://127.0.0.1:{port}/_fakellm/stats");
        if let Ok(response) = http.get(&stats).send().await
            && response.status().is_success()
        {
            return server;
        }
        assert!(
            Instant::now() < deadline,
            "fakellm did not come up:\n{}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn weather_tool() -> ToolSpec {
    ToolSpec::new(
        "get_weather",
        "Current weather of a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}, "required": ["city"]}),
    )
}

/// A tool call then a final answer through `client`.
async fn tool_call_then_answer(client: &dyn LlmClient, model: &str, label: &str) {
    let mut messages = vec![
        ChatMessage::system("You report the weather."),
        ChatMessage::user(format!("What is the weather in Paris? ({label})")),
    ];
    let request = |messages: &Vec<ChatMessage>| {
        let mut request =
            ChatRequest::new(model, messages.clone()).with_tools(vec![weather_tool()]);
        request.max_tokens = Some(200);
        request
    };
    let first = client
        .complete(request(&messages))
        .await
        .unwrap_or_else(|err| panic!("{label}: {err}"));
    assert_eq!(first.tool_calls.len(), 1, "{label}: {first:?}");
    let call = &first.tool_calls[0];
    assert_eq!(call.name, "get_weather", "{label}");
    assert!(!call.id.is_empty(), "{label}");
    assert_eq!(
        call.parse_arguments().unwrap(),
        json!({"city": "Paris", "unit": "celsius"}),
        "{label}"
    );
    assert!(
        matches!(
            first.finish_reason.as_deref(),
            Some("tool_calls" | "tool_use")
        ),
        "{label}: {first:?}"
    );

    messages.push(first.to_message());
    messages.push(ChatMessage::tool_result(
        call.id.clone(),
        "sunny, 21 degrees",
    ));
    let second = client
        .complete(request(&messages))
        .await
        .unwrap_or_else(|err| panic!("{label}: {err}"));
    assert_eq!(
        second.text.as_deref(),
        Some("It is sunny in Paris, 21 degrees."),
        "{label}: {second:?}"
    );
    assert!(second.tool_calls.is_empty(), "{label}");
    assert!(
        matches!(second.finish_reason.as_deref(), Some("stop" | "end_turn")),
        "{label}: {second:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_and_anthropic_against_fakellm() {
    let python = tokio::task::spawn_blocking(fakellm_python).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let server = start_server(&python, dir.path()).await;
    let retry = RetryPolicy::none();

    for streaming in [true, false] {
        let label = format!("openai streaming={streaming}");
        let config = OpenAiConfig::new(
            format!("http://127.0.0.1:{}/v1", server.port),
            Some("not-used".into()),
        )
        .with_streaming(streaming)
        .with_retry(retry.clone())
        .with_header("X-Fakellm-Conversation-Id", label.clone());
        tool_call_then_answer(&OpenAiClient::new(config).unwrap(), "gpt-4o-mini", &label).await;

        let label = format!("anthropic streaming={streaming}");
        let config = AnthropicConfig::new(
            format!("http://127.0.0.1:{}", server.port),
            Some("not-used".into()),
        )
        .with_streaming(streaming)
        .with_retry(retry.clone())
        .with_header("X-Fakellm-Conversation-Id", label.clone());
        tool_call_then_answer(
            &AnthropicClient::new(config).unwrap(),
            "claude-sonnet-4-5",
            &label,
        )
        .await;
    }

    let stats: serde_json::Value =
        reqwest::get(format!("http://127.0.0.1:{}/_fakellm/stats", server.port))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
    assert_eq!(stats["by_rule"]["weather_tool"], 4, "{stats}");
    assert_eq!(stats["by_rule"]["weather_answer"], 4, "{stats}");
    if std::env::var_os("FAKELLM_SHOW_LOG").is_some() {
        eprintln!("{}", server.log());
    }
}
