//! The `agent` binary against a real model: llama-cpp-python's OpenAI-compatible server running
//! SmolLM2-135M-Instruct on the CPU (installed by `scripts/setup-llamacpp.sh`; see
//! `agent_test_support::llamacpp`), through a proxy that pins sampling (temperature 0, a seed,
//! a cap on each answer's tokens) and records every request.
//!
//! The model is small and sampled: the tests steer it with tasks that make the wanted answer
//! likely, try a few times where it matters, and check the protocol (what goes over the wire,
//! what the trace records, how runs end), not the model's wisdom. Outside CI a missing
//! installation skips them with a loud message; under `CI` it fails them.

use std::process::{Child, Output, Stdio};
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use agent_test_support::cli::{CliEnv, build_agent, code, stderr, stdout};
use agent_test_support::llamacpp::{self, Exchange, Proxy, Server, ServerOptions};
use serde_json::{Value, json};

/// A server, the proxy in front of it and an environment for `agent`; one at a time.
struct Model {
    env: CliEnv,
    proxy: Proxy,
    server: Server,
    options: ServerOptions,
    install: llamacpp::Install,
    _serial: MutexGuard<'static, ()>,
}

impl Model {
    /// The model for `test`, or `None` when it is not installed (outside CI only).
    fn start(test: &str, options: ServerOptions, max_tokens: u32) -> Option<Self> {
        let install = llamacpp::install_or_skip(test)?;
        // Built first: the build must not take the cores from a running model.
        let env = CliEnv::new(build_agent());
        let serial = llamacpp::serial();
        let server = Server::start(&install, &options);
        let proxy = Proxy::start(server.address(), sampling(0.0, 1, max_tokens));
        Some(Self {
            env,
            proxy,
            server,
            options,
            install,
            _serial: serial,
        })
    }

    /// `agent <command> <args>` against the proxy, with a model window of `window` tokens.
    fn command(&self, command: &str, window: usize, args: &[&str]) -> std::process::Command {
        let base_url = self.proxy.base_url();
        let window = window.to_string();
        let work = self.env.work();
        let mut all = vec![
            command,
            "--provider",
            "openai",
            "--base-url",
            &base_url,
            "--api-key",
            "none",
            "--model",
            "smollm2",
            "--context-window",
            &window,
            "--workspace",
            &work,
            "--no-instructions",
            "--yes",
            "--json",
        ];
        all.extend_from_slice(args);
        self.env.command(&all)
    }

    /// Runs `agent <command> <args>` to the end and returns its output and its JSON result.
    fn agent(&self, command: &str, window: usize, args: &[&str]) -> (Output, Value) {
        let output = self.command(command, window, args).output().unwrap();
        let result = serde_json::from_str(stdout(&output).trim()).unwrap_or(Value::Null);
        (output, result)
    }

    /// `agent show <id> --json`.
    fn show(&self, trace_id: &str) -> Value {
        let output = self
            .env
            .command(&["show", trace_id, "--json"])
            .output()
            .unwrap();
        assert_eq!(code(&output), 0, "agent show failed: {}", stderr(&output));
        serde_json::from_str(&stdout(&output)).unwrap()
    }

    /// What went wrong, for a failed assertion: the agent's stderr, the requests and the log.
    fn explain(&self, output: &Output) -> String {
        let exchanges: Vec<String> = self
            .proxy
            .exchanges()
            .iter()
            .map(|e| {
                let answer: String = e.text().chars().take(300).collect();
                format!(
                    "{} -> {} in {:.1}s: {answer}",
                    e.target, e.status, e.seconds
                )
            })
            .collect();
        let log = self.server.log();
        let tail: String = log
            .chars()
            .skip(log.chars().count().saturating_sub(2000))
            .collect();
        format!(
            "exit {}\nstdout: {}\nstderr: {}\nexchanges:\n{}\nserver log tail:\n{tail}",
            code(output),
            stdout(output),
            stderr(output),
            exchanges.join("\n")
        )
    }
}

/// The fields the proxy pins on every request.
fn sampling(temperature: f64, seed: u64, max_tokens: u32) -> Value {
    json!({"temperature": temperature, "seed": seed, "max_tokens": max_tokens})
}

/// `n` lines of numbered notes (about 12 tokens a line).
fn notes(n: usize, topic: &str) -> String {
    (1..=n)
        .map(|i| {
            format!(
                "Note {i} about {topic}: the value of item {i} is {}.\n",
                i * 7
            )
        })
        .collect()
}

/// The tool calls of an answer's body (streamed or not).
fn tool_calls(exchange: &Exchange) -> Vec<Value> {
    let text = exchange.text();
    let mut calls = Vec::new();
    let bodies: Vec<Value> = if exchange.streamed() {
        text.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|data| serde_json::from_str(data).ok())
            .collect()
    } else {
        serde_json::from_str(&text).into_iter().collect()
    };
    for body in bodies {
        let choice = &body["choices"][0];
        for part in [
            &choice["message"]["tool_calls"],
            &choice["delta"]["tool_calls"],
        ] {
            calls.extend(part.as_array().into_iter().flatten().cloned());
        }
    }
    calls
}

/// The prompt tokens recorded for the trace's first model call: the provider's count when it
/// reported one, else the runner's estimate (the message's tokens, the short answer's included).
fn first_prompt_tokens(shown: &Value) -> Option<u64> {
    let first = shown["messages"]
        .as_array()?
        .iter()
        .find(|m| m["role"] == "assistant")?;
    first["metadata"]["usage"]["prompt_tokens"]
        .as_u64()
        .or_else(|| first["tokens"].as_u64())
}

#[test]
fn a_tool_call_makes_a_full_round_trip() {
    let Some(mut model) = Model::start(
        "a_tool_call_makes_a_full_round_trip",
        ServerOptions::default(),
        96,
    ) else {
        return;
    };
    model
        .env
        .write("work/notes.txt", "The secret word is lighthouse.\n");
    let task = "Call the read_file tool with path notes.txt. Then say the secret word.";
    // Temperature 0 first; if the model answers in words, two sampled attempts.
    for (attempt, (temperature, seed)) in [(0.0, 1), (0.7, 2), (0.7, 3)].into_iter().enumerate() {
        model.proxy = Proxy::start(model.server.address(), sampling(temperature, seed, 96));
        let (output, result) = model.agent("run", 4096, &["--max-iterations", "4", task]);
        let completions = model.proxy.completions();
        let Some(called) = completions.iter().position(|e| !tool_calls(e).is_empty()) else {
            eprintln!(
                "attempt {attempt}: no tool call\n{}",
                model.explain(&output)
            );
            continue;
        };
        let call = &tool_calls(&completions[called])[0];
        let call_id = call["id"]
            .as_str()
            .expect("a tool call has an id")
            .to_owned();
        // The next request carries the call and its result, and the server takes it.
        let next = completions.get(called + 1).unwrap_or_else(|| {
            panic!("no request after the tool call\n{}", model.explain(&output))
        });
        let messages = next.request["messages"].as_array().unwrap();
        let assistant = messages
            .iter()
            .find(|m| m["role"] == "assistant" && !m["tool_calls"].is_null())
            .unwrap_or_else(|| panic!("the call is not sent back\n{}", model.explain(&output)));
        assert_eq!(assistant["tool_calls"][0]["id"], call_id.as_str());
        let answer = messages
            .iter()
            .find(|m| m["role"] == "tool")
            .unwrap_or_else(|| panic!("no tool result sent\n{}", model.explain(&output)));
        assert_eq!(answer["tool_call_id"], call_id.as_str());
        assert_eq!(next.status, 200, "{}", model.explain(&output));
        // The run ends on its own or at its iteration budget, never on an error.
        assert!(matches!(code(&output), 0 | 3), "{}", model.explain(&output));
        let shown = model.show(result["trace_id"].as_str().unwrap());
        let results = shown["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .count();
        assert!(results >= 1, "no tool result in the trace: {shown:#}");
        return;
    }
    panic!("the model made no tool call in three attempts");
}

#[test]
fn the_first_request_counts_the_tool_schemas() {
    let Some(model) = Model::start(
        "the_first_request_counts_the_tool_schemas",
        ServerOptions::default(),
        32,
    ) else {
        return;
    };
    let (output, result) = model.agent(
        "run",
        4096,
        &["--max-iterations", "1", "Say hello in one word."],
    );
    assert!(matches!(code(&output), 0 | 3), "{}", model.explain(&output));
    let shown = model.show(result["trace_id"].as_str().unwrap());
    let recorded = first_prompt_tokens(&shown)
        .unwrap_or_else(|| panic!("no recorded prompt tokens: {shown:#}"));
    // The server's own count of the same request, asked directly without streaming.
    let first = &model.proxy.completions()[0];
    assert!(
        !first.request["tools"].as_array().unwrap().is_empty(),
        "the first request has no tools"
    );
    let mut same = first.request.clone();
    same["stream"] = json!(false);
    same.as_object_mut().unwrap().remove("stream_options");
    same["max_tokens"] = json!(1);
    let (status, answer) = model.server.post("/v1/chat/completions", &same);
    assert_eq!(status, 200, "{answer}");
    let counted = answer["usage"]["prompt_tokens"].as_u64().unwrap();
    let off = (recorded as f64 - counted as f64).abs() / counted as f64;
    assert!(
        off <= 0.15,
        "recorded {recorded} prompt tokens, the server counts {counted} ({:.0}% off)",
        off * 100.0
    );
}

#[test]
fn a_conversation_outgrowing_the_window_completes_every_turn() {
    let Some(model) = Model::start(
        "a_conversation_outgrowing_the_window_completes_every_turn",
        ServerOptions::default(),
        48,
    ) else {
        return;
    };
    // Each turn fits the window with room to spare once the tool specs, the system prompt, the
    // plan and the first task (which the context always keeps) are counted by the server's own
    // tokenizer, which counts more than the agent's estimate; the five turns together do not.
    const TURN_NOTES: usize = 70;
    let topics = ["boats", "trains", "planes", "bicycles", "ships"];
    let mut trace_id = String::new();
    for (turn, topic) in topics.iter().enumerate() {
        let task = format!(
            "{}\nAnswer in one short sentence: what is the value of item 3?",
            notes(TURN_NOTES, topic)
        );
        let mut args = Vec::new();
        if turn > 0 {
            args.extend(["--continue", trace_id.as_str()]);
        }
        args.extend(["--max-iterations", "3", task.as_str()]);
        let (output, result) = model.agent("run", 4096, &args);
        assert!(
            matches!(code(&output), 0 | 3),
            "turn {turn}: {}",
            model.explain(&output)
        );
        trace_id = result["trace_id"].as_str().unwrap().to_owned();
    }
    // The turns together are more than the window (about four characters a token): the agent
    // kept the requests inside it, up to the last, which the server answered.
    let completions = model.proxy.completions();
    let first = completions[0].request.to_string().len();
    let task = notes(TURN_NOTES, "boats").len();
    assert!(
        (first + (topics.len() - 1) * task) / 4 > 4096,
        "the turns are too short to test anything"
    );
    let last = completions.last().unwrap();
    assert_eq!(last.status, 200, "{}", last.text());
    assert!(!last.body.is_empty(), "the last request was refused");
}

#[test]
fn a_streamed_overflow_is_classified_and_recovered() {
    let Some(model) = Model::start(
        "a_streamed_overflow_is_classified_and_recovered",
        ServerOptions::default(),
        32,
    ) else {
        return;
    };
    // The agent believes in a large window: it sends the second turn whole, and the server,
    // whose window is 4,096 tokens, refuses it.
    let first = format!("{}\nReply with one word: ok.", notes(90, "boats"));
    let (output, result) = model.agent("run", 32768, &["--max-iterations", "2", &first]);
    assert!(matches!(code(&output), 0 | 3), "{}", model.explain(&output));
    let trace_id = result["trace_id"].as_str().unwrap().to_owned();
    let second = format!("{}\nReply with one word: ok.", notes(90, "trains"));
    let (output, result) = model.agent(
        "run",
        32768,
        &["--continue", &trace_id, "--max-iterations", "3", &second],
    );
    assert!(matches!(code(&output), 0 | 3), "{}", model.explain(&output));
    // The run goes on after the refusal: it ends with an answer, or at its limit of model calls
    // when the model keeps calling tools (this server holds answers offered tools to a grammar
    // of tool calls), never on the refusal itself.
    assert!(
        matches!(
            result["stop"].as_str(),
            Some("completed" | "max_iterations")
        ),
        "{}",
        model.explain(&output)
    );
    let completions = model.proxy.completions();
    let refused = completions
        .iter()
        .position(|e| e.streamed() && e.status == 200 && e.body.is_empty())
        .unwrap_or_else(|| {
            panic!(
                "no streamed request was refused\n{}",
                model.explain(&output)
            )
        });
    assert!(
        completions[refused + 1..]
            .iter()
            .any(|e| e.status == 200 && !e.body.is_empty()),
        "nothing was answered after the refusal\n{}",
        model.explain(&output)
    );
    let shown = model.show(&trace_id);
    let summaries = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["metadata"]["compaction"] == true)
        .count();
    assert!(
        summaries >= 1,
        "the refusal did not compact the context: {shown:#}"
    );
}

#[test]
fn a_server_killed_mid_answer_is_a_clean_resumable_failure() {
    let Some(mut model) = Model::start(
        "a_server_killed_mid_answer_is_a_clean_resumable_failure",
        ServerOptions::default(),
        160,
    ) else {
        return;
    };
    let task = "Write a long story about a lighthouse keeper, then stop.";
    let mut run: Child = model
        .command("run", 4096, &["--max-iterations", "3", task])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        model.proxy.wait_in_flight(Duration::from_secs(30)),
        "the agent sent no request"
    );
    std::thread::sleep(Duration::from_millis(400));
    model.server.kill();
    let deadline = Instant::now() + Duration::from_secs(60);
    while run.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the agent did not end after the server died"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = run.wait_with_output().unwrap();
    assert_ne!(code(&output), 0, "{}", model.explain(&output));
    assert!(
        !stderr(&output).contains("panicked"),
        "{}",
        model.explain(&output)
    );
    let result: Value = serde_json::from_str(stdout(&output).trim())
        .unwrap_or_else(|_| panic!("no JSON result\n{}", model.explain(&output)));
    let trace_id = result["trace_id"].as_str().unwrap().to_owned();
    let shown = model.show(&trace_id);
    assert_ne!(shown["trace"]["status"], "completed");

    model.server = Server::start_on(&model.install, &model.options, model.server.port());
    let (output, result) = model.agent("resume", 4096, &[&trace_id]);
    assert!(matches!(code(&output), 0 | 3), "{}", model.explain(&output));
    assert_eq!(result["trace_id"], trace_id.as_str());
}

#[test]
fn a_text_answer_completes_with_the_gguf_template() {
    let options = ServerOptions {
        chat_format: None,
        ..ServerOptions::default()
    };
    let Some(model) = Model::start(
        "a_text_answer_completes_with_the_gguf_template",
        options,
        32,
    ) else {
        return;
    };
    let (output, result) = model.agent(
        "run",
        4096,
        &["--max-iterations", "2", "Say hello in one word."],
    );
    assert!(matches!(code(&output), 0 | 3), "{}", model.explain(&output));
    assert!(
        !result["response"].as_str().unwrap_or("").trim().is_empty(),
        "{}",
        model.explain(&output)
    );
}
