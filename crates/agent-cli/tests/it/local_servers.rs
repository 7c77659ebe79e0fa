//! The `agent` binary against loopback servers that behave as local model servers do
//! (`MockModelServer::serve_as`: llama.cpp's `llama-server`, vLLM, Ollama, and
//! llama-cpp-python, which says nothing of its window): the window learned from each and told,
//! a 40 KB read under a 4,096-token window with at most one refusal, a window the tools nearly
//! fill without a summary before every step, no silent success on an empty answer, and a
//! server whose template drops the tools or their results told so.

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use agent_test_support::mock_model::{
    LocalServer, MockModelServer, RecordedRequest, Reply, Template, Turn,
};
use serde_json::{Value, json};

use crate::agent_env;

/// The model options of a command that talks to `server` as the local model `smollm2`.
fn local(env: &CliEnv, server: &MockModelServer) -> Vec<String> {
    [
        "--provider",
        "openai",
        "--base-url",
        &server.openai_base(),
        "--api-key",
        "none",
        "--model",
        "smollm2",
        "--workspace",
        &env.work(),
        "--no-instructions",
        "--yes",
        "--json",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Runs `agent run <model options> <extra> <task>`: the output and its JSON result.
async fn run(
    env: &CliEnv,
    server: &MockModelServer,
    extra: &[&str],
    task: &str,
) -> (std::process::Output, Value) {
    let mut args = vec!["run".to_owned()];
    args.extend(local(env, server));
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    args.push(task.to_owned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = env.run(&args).await;
    let result = serde_json::from_str(stdout(&output).trim()).unwrap_or(Value::Null);
    (output, result)
}

/// The `notice` events of a trace.
fn notices(env: &CliEnv, trace_id: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(env.traces().join(trace_id).join("events.jsonl")).unwrap();
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["event"] == "notice")
        .collect()
}

/// Whether a request is a full compaction's summarising call (it offers no tools).
fn summarises(request: &RecordedRequest) -> bool {
    request.body["tools"]
        .as_array()
        .is_none_or(|tools| tools.is_empty())
}

#[tokio::test]
async fn the_window_is_learned_from_each_server_and_told() {
    let cases = [
        (
            LocalServer::LlamaServer { n_ctx: 4096 },
            "4,096 tokens (from the server's /props)",
        ),
        (
            LocalServer::Vllm {
                max_model_len: 32768,
            },
            "32,768 tokens (from the server's model list)",
        ),
        (
            LocalServer::Ollama {
                num_ctx: Some(8192),
                trained: 131072,
            },
            "8,192 tokens (from Ollama's num_ctx)",
        ),
        (
            LocalServer::Ollama {
                num_ctx: None,
                trained: 131072,
            },
            "Ollama does not say the num_ctx of smollm2",
        ),
        (
            LocalServer::Silent { window: 4096 },
            "the server does not say the context window of smollm2",
        ),
    ];
    for (local, told) in cases {
        let env = agent_env();
        let server = MockModelServer::with_replies([Turn::text("Hello.")]).await;
        server.serve_models(&["smollm2"]);
        server.serve_as(local);
        let (output, result) = run(&env, &server, &[], "Say hello.").await;
        assert_eq!(code(&output), 0, "{local:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains(told),
            "{local:?}: {}",
            stderr(&output)
        );
        let trace_id = result["trace_id"].as_str().unwrap();
        let recorded = notices(&env, trace_id);
        assert!(
            recorded
                .iter()
                .any(|n| n["kind"] == "context_window"
                    && n["tokens"].as_u64() == Some(window_of(local))),
            "{local:?}: {recorded:?}"
        );
    }
}

/// The window a run assumes on `local` before any refusal.
fn window_of(local: LocalServer) -> u64 {
    match local {
        LocalServer::Silent { .. } => agent_llm::DEFAULT_CONTEXT_WINDOW as u64,
        other => other.window() as u64,
    }
}

#[tokio::test]
async fn a_configured_window_is_not_asked_for() {
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text("Hello.")]).await;
    server.serve_as(LocalServer::LlamaServer { n_ctx: 4096 });
    let (output, result) = run(&env, &server, &["--context-window", "8192"], "Say hello.").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        server.info_requests().is_empty(),
        "{:?}",
        server.info_requests()
    );
    assert!(notices(&env, result["trace_id"].as_str().unwrap()).is_empty());
}

/// A model that reads `big.txt`, then answers; a request without tools (the summarising call)
/// gets a summary.
fn reader(server: &MockModelServer) {
    server.push(Turn::tool_call(
        "c1",
        "read_file",
        json!({"path": "big.txt"}),
    ));
    server.when_empty(|request| {
        if summarises(request) {
            Turn::text("Summary: the model read big.txt, a list of numbered notes.").into()
        } else {
            Turn::text("big.txt is a list of numbered notes.").into()
        }
    });
}

/// 40 KB of numbered notes.
fn forty_kb() -> String {
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 40 * 1024 {
        i += 1;
        text.push_str(&format!("Note {i}: the value of item {i} is {}.\n", i * 7));
    }
    text
}

#[tokio::test]
async fn a_40_kb_read_under_a_4096_token_window_completes_with_at_most_one_refusal() {
    // llama-server says its window: no refusal at all. llama-cpp-python says nothing: the
    // first request over the window is refused, the refusal's window is kept, and the run goes
    // on. Both summarise the read once, announce it, and answer.
    for (local, python, refusals) in [
        (LocalServer::LlamaServer { n_ctx: 4096 }, false, 0),
        (LocalServer::Silent { window: 4096 }, true, 1),
    ] {
        let env = agent_env();
        env.write("work/big.txt", &forty_kb());
        let server = if python {
            MockModelServer::llama_cpp().await
        } else {
            MockModelServer::start().await
        };
        server.serve_models(&["smollm2"]);
        server.serve_as(local);
        reader(&server);
        let (output, result) = run(&env, &server, &[], "What is in big.txt?").await;
        let err = stderr(&output);
        assert_eq!(code(&output), 0, "{local:?}: {err}");
        assert_eq!(result["response"], "big.txt is a list of numbered notes.");
        assert_eq!(server.window_refusals(), refusals, "{local:?}: {err}");
        assert!(
            err.contains("⟲ compacted the conversation"),
            "{local:?}: {err}"
        );
        // The summary is capped: an eighth of the window.
        let summary = server
            .requests()
            .into_iter()
            .find(summarises)
            .expect("a summarising call");
        assert_eq!(summary.body["max_tokens"], 512, "{local:?}");
        if python {
            assert!(err.contains("refused a request"), "{err}");
        }
    }
}

#[tokio::test]
async fn three_tool_steps_in_a_window_the_tools_nearly_fill_make_no_summarising_call() {
    let env = agent_env();
    // Fewer tools than the default, so that what every request carries fits 2,048 tokens with
    // room for an answer, but leaves a summary no room under the compaction threshold.
    env.write(
        "agent.toml",
        "[agents.small]\nbase = \"default\"\ndeny_tools = [\"explore\", \"delegate\", \"bash\", \
         \"web_fetch\", \"shell_output\", \"shell_kill\"]\n",
    );
    for name in ["a", "b", "c"] {
        env.write(
            &format!("work/{name}.txt"),
            &format!("The letter {name}.\n"),
        );
    }
    let server = MockModelServer::start().await;
    server.serve_models(&["smollm2"]);
    server.serve_as(LocalServer::LlamaServer { n_ctx: 2048 });
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        let path = format!("{name}.txt");
        server.push(Turn::tool_call(
            format!("c{i}"),
            "read_file",
            json!({ "path": path }),
        ));
    }
    server.push(Turn::text("The letters a, b and c."));
    let (output, result) = run(
        &env,
        &server,
        &["--context-window", "2048", "--agent", "small"],
        "Read a.txt, b.txt and c.txt.",
    )
    .await;
    let err = stderr(&output);
    assert_eq!(code(&output), 0, "{err}");
    assert_eq!(result["response"], "The letters a, b and c.");
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "three steps and the answer: {err}");
    assert!(
        !requests.iter().any(summarises),
        "no summarising call: {err}"
    );
    // Each tool result reached the next request.
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        assert!(
            requests[i + 1]
                .body
                .to_string()
                .contains(&format!("The letter {name}.")),
            "{name}"
        );
    }
    // The run said once why it will not summarise ahead of time.
    assert!(err.contains("past the compaction threshold"), "{err}");
    let told = notices(&env, result["trace_id"].as_str().unwrap());
    assert_eq!(
        told.iter().filter(|n| n["kind"] == "window_floor").count(),
        1,
        "{told:?}"
    );
}

#[tokio::test]
async fn a_window_the_default_tools_fill_stops_before_the_first_call() {
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text("Never sent.")]).await;
    server.serve_as(LocalServer::LlamaServer { n_ctx: 2048 });
    let (output, result) = run(&env, &server, &["--context-window", "2048"], "Say hi.").await;
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    assert_eq!(result["stop"], "window_too_small");
    let error = result["error"].as_str().unwrap();
    assert!(
        error.contains(" tool specs") && error.contains("offer fewer tools"),
        "{error}"
    );
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn an_empty_answer_is_asked_again_then_ends_the_run_without_success() {
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text(""), Turn::text("")]).await;
    server.serve_models(&["smollm2"]);
    let (output, result) = run(&env, &server, &[], "Say hello.").await;
    let err = stderr(&output);
    assert_eq!(code(&output), 1, "{err}");
    assert_eq!(result["stop"], "empty_answer", "{result}");
    assert_eq!(result["status"], "failed");
    assert!(err.contains("answer was empty"), "{err}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("Your last answer was empty")
    );

    // Asked again, the model answers: the run completes with that answer.
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text(" "), Turn::text("Hello.")]).await;
    server.serve_models(&["smollm2"]);
    let (output, result) = run(&env, &server, &[], "Say hello.").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(result["response"], "Hello.");
}

#[tokio::test]
async fn a_template_that_drops_the_tools_or_their_results_is_told() {
    // The tools never reach the prompt: the server's count is far below the tool specs alone.
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text("Hello.")]).await;
    server.serve_models(&["smollm2"]);
    server.count_prompts(Template {
        tools: false,
        results: true,
    });
    let (output, result) = run(&env, &server, &[], "Say hello.").await;
    let err = stderr(&output);
    assert_eq!(code(&output), 0, "{err}");
    assert!(err.contains("not showing the model its tools"), "{err}");
    assert!(err.contains("--jinja"), "{err}");
    let told = notices(&env, result["trace_id"].as_str().unwrap());
    assert!(
        told.iter().any(|n| n["kind"] == "tools_not_shown"),
        "{told:?}"
    );

    // The results never reach the prompt: it does not grow after a long one.
    let env = agent_env();
    env.write("work/big.txt", &forty_kb()[..8_000]);
    let server = MockModelServer::with_replies([
        Reply::from(Turn::tool_call(
            "c1",
            "read_file",
            json!({"path": "big.txt"}),
        )),
        Reply::from(Turn::text("It lists notes.")),
    ])
    .await;
    server.serve_models(&["smollm2"]);
    server.count_prompts(Template {
        tools: true,
        results: false,
    });
    let (output, result) = run(&env, &server, &[], "What is in big.txt?").await;
    let err = stderr(&output);
    assert_eq!(code(&output), 0, "{err}");
    assert!(
        err.contains("not showing the model the results of its tools"),
        "{err}"
    );
    let told = notices(&env, result["trace_id"].as_str().unwrap());
    assert!(
        told.iter().any(|n| n["kind"] == "results_not_shown"),
        "{told:?}"
    );
    assert!(
        !told.iter().any(|n| n["kind"] == "tools_not_shown"),
        "{told:?}"
    );

    // A template that shows everything is not told anything.
    let env = agent_env();
    env.write("work/big.txt", &forty_kb()[..8_000]);
    let server = MockModelServer::with_replies([
        Reply::from(Turn::tool_call(
            "c1",
            "read_file",
            json!({"path": "big.txt"}),
        )),
        Reply::from(Turn::text("It lists notes.")),
    ])
    .await;
    server.serve_models(&["smollm2"]);
    server.count_prompts(Template::FULL);
    let (output, result) = run(&env, &server, &[], "What is in big.txt?").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let told = notices(&env, result["trace_id"].as_str().unwrap());
    assert!(
        !told
            .iter()
            .any(|n| n["kind"] == "results_not_shown" || n["kind"] == "tools_not_shown"),
        "{told:?}"
    );
}

#[tokio::test]
async fn a_model_s_max_tokens_and_temperature_come_from_agent_toml() {
    let env = agent_env();
    env.write(
        "agent.toml",
        "[models.\"smollm2\"]\nmax_tokens = 300\ntemperature = 0.2\ncontext_window = 8192\n",
    );
    let server = MockModelServer::with_replies([Turn::text("Hello.")]).await;
    let (output, _) = run(&env, &server, &[], "Say hello.").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let body = &server.requests()[0].body;
    assert_eq!(body["max_tokens"], 300);
    assert!(
        (body["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6,
        "{body}"
    );

    // Out of range: a usage error naming the field.
    env.write("agent.toml", "[models.\"smollm2\"]\ntemperature = 7\n");
    let (output, _) = run(&env, &server, &[], "Say hello.").await;
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("temperature"),
        "{}",
        stderr(&output)
    );
}
