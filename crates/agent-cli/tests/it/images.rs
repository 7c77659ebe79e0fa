//! Pictures in: `agent run --image FILE` and `@shot.png` reach each wire format as image parts
//! (recorded by the mock model server), `read_file` of a PNG returns the picture to a model that
//! takes images (after the tool messages on OpenAI chat, which takes none in a tool message),
//! and a model without vision is refused clearly before any request — or, for a tool's
//! picture, is sent a note in its place.

use agent_test_support::TINY_PNG;
use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Turn};
use serde_json::{Value, json};

use crate::agent_env;

/// The base64 of [`TINY_PNG`] (standard alphabet, padded), as every provider is sent it.
fn tiny_png_base64() -> String {
    "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGP4z8AAQQxwFgBB0gX7h/C5SAAAAABJRU5ErkJggg=="
        .to_owned()
}

/// `agent run` of `task` on `server` in `provider`'s format with `model`, and `extra` options.
async fn run_on(
    env: &CliEnv,
    server: &MockModelServer,
    provider: &str,
    model: &str,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_provider(env, server, provider, model));
    args.push("--yes".to_owned());
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    env.run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await
}

fn write_picture(env: &CliEnv, name: &str) -> String {
    let path = env.path(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, TINY_PNG).unwrap();
    path.to_string_lossy().into_owned()
}

#[tokio::test]
async fn image_reaches_each_wire_format() {
    let data = tiny_png_base64();
    let url = format!("data:image/png;base64,{data}");
    for (provider, model) in [
        ("openai", "gpt-4o-mini"),
        ("openai-responses", "gpt-5-codex"),
        ("anthropic", "claude-sonnet-4-5"),
    ] {
        let env = agent_env();
        let server = MockModelServer::with_replies([Turn::text("A red square.")]).await;
        let file = write_picture(&env, "pictures/shot.png");
        let output = run_on(
            &env,
            &server,
            provider,
            model,
            &["--image", &file, "What is this?"],
        )
        .await;
        assert_eq!(code(&output), 0, "{provider}: {}", stderr(&output));
        assert_eq!(stdout(&output).trim_end(), "A red square.");
        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{provider}");
        let body = &requests[0].body;
        match provider {
            "openai" => {
                let user = body["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|m| m["role"] == "user")
                    .unwrap();
                let parts = user["content"].as_array().unwrap();
                assert!(parts.iter().any(|p| p["text"] == "What is this?"), "{user}");
                let image = parts.iter().find(|p| p["type"] == "image_url").unwrap();
                assert_eq!(image["image_url"]["url"], url.as_str());
            }
            "openai-responses" => {
                let user = body["input"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|m| m["role"] == "user")
                    .unwrap();
                let image = user["content"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p["type"] == "input_image")
                    .unwrap();
                assert_eq!(image["image_url"], url.as_str());
            }
            _ => {
                let user = &body["messages"][0];
                assert_eq!(user["role"], "user");
                let image = user["content"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|b| b["type"] == "image")
                    .unwrap();
                assert_eq!(
                    image["source"],
                    json!({"type": "base64", "media_type": "image/png", "data": data})
                );
            }
        }
    }
}

#[tokio::test]
async fn a_mention_attaches_a_workspace_picture_and_a_missing_one_is_named() {
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text("Red.")]).await;
    write_picture(&env, "work/ui/shot.png");
    let output = run_on(
        &env,
        &server,
        "openai",
        "gpt-4o",
        &["What colour is @ui/shot.png?"],
    )
    .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let body = server.requests()[0].body.to_string();
    assert!(body.contains("data:image/png;base64,"), "{body}");
    assert!(body.contains("What colour is @ui/shot.png?"), "{body}");

    let output = run_on(&env, &server, "openai", "gpt-4o", &["Look at @ui/gone.png"]).await;
    assert_ne!(code(&output), 0);
    let error = stderr(&output);
    assert!(
        error.contains("@ui/gone.png: \"ui/gone.png\" does not exist"),
        "{error}"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "nothing was sent for the missing picture"
    );
}

#[tokio::test]
async fn a_model_without_vision_is_refused_before_any_request() {
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text("Seen.")]).await;
    let file = write_picture(&env, "shot.png");
    let output = run_on(
        &env,
        &server,
        "openai",
        "qwen2.5-coder-7b",
        &["--image", &file, "What is this?"],
    )
    .await;
    assert_ne!(code(&output), 0);
    let error = stderr(&output);
    assert!(
        error.contains("the model qwen2.5-coder-7b does not take images")
            && error.contains("vision = true"),
        "{error}"
    );
    assert!(
        server.requests().is_empty(),
        "no request reached the provider"
    );
    assert!(
        std::fs::read_dir(env.traces())
            .map(|dir| dir.count())
            .unwrap_or(0)
            == 0,
        "no trace was created"
    );
    // The control: the same model, said to take images in agent.toml, is sent the picture.
    env.write(
        "agent.toml",
        "[models.\"qwen2.5-coder-7b\"]\nvision = true\n",
    );
    let output = run_on(
        &env,
        &server,
        "openai",
        "qwen2.5-coder-7b",
        &["--image", &file, "What is this?"],
    )
    .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(server.requests()[0].body.to_string().contains("image_url"));
}

/// The requests of a run whose model reads `shot.png` with `read_file`, then answers.
async fn read_picture_run(provider: &str, model: &str, toml: &str) -> (Vec<Value>, String) {
    let env = agent_env();
    if !toml.is_empty() {
        env.write("agent.toml", toml);
    }
    write_picture(&env, "work/shot.png");
    let server = MockModelServer::with_replies([
        Turn::tool_call("call_1", "read_file", json!({"path": "shot.png"})),
        Turn::text("It is red."),
    ])
    .await;
    let output = run_on(&env, &server, provider, model, &["What is in shot.png?"]).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output).trim_end(), "It is red.");
    let requests = server.requests().into_iter().map(|r| r.body).collect();
    (requests, stderr(&output).to_owned())
}

#[tokio::test]
async fn read_file_of_a_png_returns_the_picture_to_a_model_that_takes_images() {
    let url = format!("data:image/png;base64,{}", tiny_png_base64());
    // OpenAI chat: the tool message is text, the picture follows in a user message.
    let (requests, progress) = read_picture_run("openai", "gpt-4o-mini", "").await;
    // The progress lines show where the picture is, not its bytes.
    assert!(progress.contains("[image: image/png 3×2]"), "{progress}");
    assert!(!progress.contains("iVBOR"), "{progress}");
    let messages = requests[1]["messages"].as_array().unwrap();
    let tool = messages.iter().position(|m| m["role"] == "tool").unwrap();
    assert!(
        messages[tool]["content"]
            .as_str()
            .unwrap()
            .contains("shot.png is a picture")
    );
    let after = &messages[tool + 1];
    assert_eq!(after["role"], "user");
    assert!(
        after["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("call_1")
    );
    assert_eq!(after["content"][1]["image_url"]["url"], url.as_str());
    // Anthropic: the picture is in the tool result.
    let (requests, _) = read_picture_run("anthropic", "claude-sonnet-4-5", "").await;
    let result = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|block| block["type"] == "tool_result")
        .unwrap();
    assert_eq!(result["content"][1]["type"], "image", "{result}");
    assert_eq!(result["content"][1]["source"]["media_type"], "image/png");
    // A model said to take none gets a note in the picture's place, and no image part.
    let (requests, _) = read_picture_run(
        "openai",
        "gpt-4o-mini",
        "[models.\"gpt-4o-mini\"]\nvision = false\n",
    )
    .await;
    let body = requests[1].to_string();
    assert!(!body.contains("image_url"), "{body}");
    assert!(
        !body.contains("iVBOR"),
        "no picture bytes in any other form: {body}"
    );
    assert!(
        body.contains(
            "[image: image/png 3×2] (not shown: the model gpt-4o-mini does not take images)"
        ),
        "{body}"
    );
}

#[tokio::test]
async fn a_chat_message_mentioning_a_picture_attaches_it_and_later_turns_keep_it() {
    let env = agent_env();
    write_picture(&env, "work/diagram.png");
    let server = MockModelServer::with_replies([
        Turn::text("Hello."),
        Turn::text("A red diagram."),
        Turn::text("Still red."),
    ])
    .await;
    let mut args = vec!["chat".to_owned()];
    args.extend(crate::on_server(&env, &server));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = env
        .agent(&args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, b"hi\nWhat is @diagram.png?\nAnd now?\n")
        .await
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{}", stderr(&output));
    let images = |at: usize| {
        requests[at]
            .body
            .to_string()
            .matches("\"type\":\"image_url\"")
            .count()
    };
    assert_eq!(images(0), 0, "the first message names no picture");
    assert_eq!(images(1), 1, "the second attaches it");
    assert_eq!(
        images(2),
        1,
        "the third turn still shows it, from the stored trace"
    );
    let second = &requests[1].body["messages"];
    let user = second
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(user["content"][0]["text"], "What is @diagram.png?");
}

/// Sends one JSON-RPC request to `agent acp` and reads lines until its answer (notifications
/// and requests of the agent in between are skipped).
async fn acp_call(
    stdin: &mut tokio::process::ChildStdin,
    lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    id: u64,
    method: &str,
    params: Value,
) -> Value {
    use tokio::io::AsyncWriteExt as _;
    let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    stdin
        .write_all(format!("{request}\n").as_bytes())
        .await
        .unwrap();
    loop {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .expect("the agent answered in time")
            .unwrap()
            .expect("the agent kept its output open");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == id && message.get("method").is_none() {
            return message;
        }
    }
}

#[tokio::test]
async fn an_acp_image_block_reaches_the_model_and_the_agent_says_it_takes_images() {
    use tokio::io::AsyncBufReadExt as _;
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text("A red square.")]).await;
    let mut args = vec!["acp".to_owned()];
    args.extend(crate::on_server(&env, &server));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = env
        .agent(&args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let init = json!({"protocolVersion": 1, "clientCapabilities": {}});
    let init = acp_call(&mut stdin, &mut lines, 1, "initialize", init).await;
    assert_eq!(
        init["result"]["agentCapabilities"]["promptCapabilities"]["image"], true,
        "{init}"
    );
    let new = json!({"cwd": env.work(), "mcpServers": []});
    let session = acp_call(&mut stdin, &mut lines, 2, "session/new", new).await;
    let session_id = session["result"]["sessionId"].as_str().unwrap().to_owned();
    // Not a picture: the prompt is refused with the reason, and nothing is sent.
    let bad = json!({"sessionId": session_id, "prompt": [
        {"type": "text", "text": "What is this?"},
        {"type": "image", "mimeType": "image/png", "data": "aGVsbG8="},
    ]});
    let refused = acp_call(&mut stdin, &mut lines, 3, "session/prompt", bad).await;
    let error = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(error.contains("image block 1: not a PNG"), "{refused}");
    assert!(server.requests().is_empty());
    let prompt = json!({"sessionId": session_id, "prompt": [
        {"type": "text", "text": "What is this?"},
        {"type": "image", "mimeType": "image/png", "data": tiny_png_base64(), "uri": "file:///tmp/shot.png"},
    ]});
    let answer = acp_call(&mut stdin, &mut lines, 4, "session/prompt", prompt).await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let url = format!("data:image/png;base64,{}", tiny_png_base64());
    assert!(requests[0].body.to_string().contains(&url));
}
