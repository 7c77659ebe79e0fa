//! The `agent` binary against real models: llama.cpp's own OpenAI-compatible server
//! (`llama-server --jinja`) running SmolLM2-135M-Instruct with a ChatML template that renders
//! tools and their results, and Gemma 3 270M with the template of its GGUF file, on the CPU
//! (installed by `scripts/setup-llamacpp.sh`; see `agent_test_support::llamacpp`), through a
//! proxy that pins sampling (temperature 0, a seed, a cap on each answer's tokens) and records
//! every request.
//!
//! The models are small and sampled: the tests steer them with tasks that make the wanted answer
//! likely, try a few times where it matters, and check the protocol (what goes over the wire,
//! what the server counts of it, what the trace records, how runs end), not the model's wisdom.
//! Outside CI a missing installation skips them with a loud message; under `CI` it fails them.

use std::process::{Child, Output, Stdio};
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use agent_test_support::cli::{CliEnv, build_agent, code, stderr, stdout};
use agent_test_support::llamacpp::{self, Exchange, Model as Served, Proxy, Server, ServerOptions};
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

    /// `agent <command> <args>` against the proxy, with a model window of `window` tokens
    /// (`None`: the agent asks the server).
    fn command(
        &self,
        command: &str,
        window: Option<usize>,
        args: &[&str],
    ) -> std::process::Command {
        let base_url = self.proxy.base_url();
        let window = window.map(|w| w.to_string());
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
            self.options.model.alias(),
        ];
        if let Some(window) = &window {
            all.extend(["--context-window", window.as_str()]);
        }
        all.extend(["--workspace", &work, "--no-instructions", "--yes", "--json"]);
        all.extend_from_slice(args);
        self.env.command(&all)
    }

    /// Gives the default profile one tool, `read_file`: what every request carries is then
    /// small against a 4,096-token window, which the tests fill with turns of notes.
    fn offer_only_read_file(&self) {
        self.env
            .write("agent.toml", "[agents.default]\ntools = [\"read_file\"]\n");
    }

    /// Runs `agent <command> <args>` to the end and returns its output and its JSON result.
    fn agent(&self, command: &str, window: Option<usize>, args: &[&str]) -> (Output, Value) {
        let output = self.command(command, window, args).output().unwrap();
        let result = serde_json::from_str(stdout(&output).trim()).unwrap_or(Value::Null);
        (output, result)
    }

    /// The `notice` events of a trace, from its `events.jsonl`.
    fn notices(&self, trace_id: &str) -> Vec<Value> {
        let path = self.env.traces().join(trace_id).join("events.jsonl");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        text.lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|event| event["event"] == "notice")
            .collect()
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

/// The prompt tokens the server reported for an exchange (streamed or not).
fn reported_prompt(exchange: &Exchange) -> Option<u64> {
    let text = exchange.text();
    let bodies: Vec<Value> = if exchange.streamed() {
        text.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|data| serde_json::from_str(data).ok())
            .collect()
    } else {
        serde_json::from_str(&text).into_iter().collect()
    };
    bodies
        .iter()
        .find_map(|body| body["usage"]["prompt_tokens"].as_u64())
}

/// `words` words of filler, with the secret word in the middle.
fn long_notes(words: usize) -> String {
    let mut text = String::new();
    for i in 0..words {
        if i == words / 2 {
            text.push_str("The secret word is lighthouse. ");
        }
        text.push_str(["harbour ", "tide ", "rope ", "gull "][i % 4]);
    }
    text.push('\n');
    text
}

/// The server's prompt count of `request` (a chat-completions body the agent sent), asked
/// directly without streaming and with a one-token answer.
fn server_count(server: &Server, request: &Value) -> u64 {
    let mut same = request.clone();
    same["stream"] = json!(false);
    same.as_object_mut().unwrap().remove("stream_options");
    same["max_tokens"] = json!(1);
    let (status, answer) = server.post("/v1/chat/completions", &same);
    assert_eq!(status, 200, "{answer}");
    answer["usage"]["prompt_tokens"].as_u64().unwrap()
}

#[test]
fn a_tool_result_reaches_the_model() {
    let Some(model) = Model::start(
        "a_tool_result_reaches_the_model",
        ServerOptions::default(),
        16,
    ) else {
        return;
    };
    // A trace whose model read a file (a script plays it, the tool really runs), continued
    // with the real server: the request carries the call and its result.
    let notes = long_notes(400);
    model.env.write("work/notes.txt", &notes);
    let script = model.env.write(
        "script.json",
        &json!([
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {"text": "I read the notes."}
        ])
        .to_string(),
    );
    let work = model.env.work();
    let output = model
        .env
        .command(&[
            "run",
            "--provider",
            "scripted",
            "--script",
            &script,
            "--workspace",
            &work,
            "--no-instructions",
            "--yes",
            "--json",
            "Read notes.txt.",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let first: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let trace_id = first["trace_id"].as_str().unwrap().to_owned();
    let (output, _) = model.agent(
        "run",
        None,
        &[
            "--continue",
            &trace_id,
            "--max-iterations",
            "1",
            "What is the secret word? One word.",
        ],
    );
    assert!(matches!(code(&output), 0 | 3), "{}", model.explain(&output));
    let completions = model.proxy.completions();
    let sent = &completions[0];
    assert_eq!(sent.status, 200, "{}", model.explain(&output));
    let messages = sent.request["messages"].as_array().unwrap();
    let result = messages
        .iter()
        .position(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("no tool result sent\n{}", model.explain(&output)));
    assert!(
        messages[result]["content"]
            .as_str()
            .unwrap()
            .contains("lighthouse")
    );
    // The server's count of the request as sent, against the same request whose result is
    // empty: the difference is what the model reads of the result.
    let reported =
        reported_prompt(sent).unwrap_or_else(|| server_count(&model.server, &sent.request));
    let mut emptied = sent.request.clone();
    emptied["messages"][result]["content"] = json!("");
    let without = server_count(&model.server, &emptied);
    let grew = reported.saturating_sub(without);
    let result_tokens = agent_llm_estimate(&notes);
    assert!(
        grew as usize * 2 >= result_tokens,
        "the prompt grew by {grew} tokens for a result of about {result_tokens}: the server's \
         template does not show the model the result\n{}",
        model.explain(&output)
    );
    // The agent saw nothing wrong with the server's template.
    let notices = model.notices(&trace_id);
    assert!(
        !notices
            .iter()
            .any(|n| n["kind"] == "results_not_shown" || n["kind"] == "tools_not_shown"),
        "{notices:?}"
    );
}

/// The agent's own estimate of a text's tokens (about four bytes a token).
fn agent_llm_estimate(text: &str) -> usize {
    text.len().div_ceil(4)
}

#[test]
#[ignore = "SmolLM2-135M answers this task in words (it echoes its system prompt) even when \
            offered read_file alone, and llama-server neither enforces tool_choice for this \
            template nor takes a grammar beside tools; a_tool_result_reaches_the_model checks \
            the round trip's protocol in CI. Run with --ignored"]
fn a_tool_call_makes_a_full_round_trip() {
    let Some(mut model) = Model::start(
        "a_tool_call_makes_a_full_round_trip",
        ServerOptions::default(),
        96,
    ) else {
        return;
    };
    let notes = long_notes(300);
    model.env.write("work/notes.txt", &notes);
    // A 135M model picks a tool surely only from very few: as a user of a small local model
    // would, the profile offers the one tool the task needs.
    model.offer_only_read_file();
    let task = "Call the read_file tool with path notes.txt. Then say the secret word.";
    // Temperature 0 first; if the model answers in words, sampled attempts.
    let attempts = [(0.0, 1), (0.7, 4), (0.7, 2), (0.7, 3), (0.7, 5), (0.7, 6)];
    for (attempt, (temperature, seed)) in attempts.into_iter().enumerate() {
        model.proxy = Proxy::start(model.server.address(), sampling(temperature, seed, 96));
        let (output, result) = model.agent("run", None, &["--max-iterations", "3", task]);
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
        // The result reaches the model: the server's prompt grew by about the result's size.
        let content = answer["content"].as_str().unwrap_or_default();
        let before = reported_prompt(&completions[called]).expect("the server reports usage");
        let after = reported_prompt(next).expect("the server reports usage");
        let grew = after.saturating_sub(before) as usize;
        let expected = agent_llm_estimate(content);
        assert!(
            content.len() < 200 || grew * 2 >= expected,
            "the prompt grew by {grew} tokens after a result of about {expected}\n{}",
            model.explain(&output)
        );
        // The run ends on its own or at its iteration budget, never on an error.
        assert!(
            matches!(
                result["stop"].as_str(),
                Some("completed" | "max_iterations" | "empty_answer")
            ),
            "{}",
            model.explain(&output)
        );
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
    panic!("the model made no tool call in {} attempts", attempts.len());
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
        Some(4096),
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
    // tokenizer, which counts more than the agent's estimate; the six turns together do not.
    // As a user of a 4,096-token local model would, the profile offers only the tool the task
    // might use: the specs of the default tools would take half the window.
    model.offer_only_read_file();
    const TURN_NOTES: usize = 45;
    let topics = ["boats", "trains", "planes", "bicycles", "ships", "rockets"];
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
        let (output, result) = model.agent("run", Some(4096), &args);
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
fn an_overflow_teaches_the_window_and_the_run_recovers() {
    let Some(model) = Model::start(
        "an_overflow_teaches_the_window_and_the_run_recovers",
        ServerOptions::default(),
        32,
    ) else {
        return;
    };
    // The agent is told a window eight times the server's: it sends each turn whole until the
    // server, whose window is 4,096 tokens, refuses one, saying so. The profile offers one
    // tool, so that what every request carries leaves room for the first turn and the newest,
    // which the context always keeps.
    model.offer_only_read_file();
    let mut trace_id = String::new();
    let mut refused_in = None;
    let topics = [
        "boats", "trains", "planes", "bicycles", "ships", "rockets", "horses",
    ];
    for (turn, topic) in topics.iter().enumerate() {
        let task = format!("{}\nReply with one word: ok.", notes(40, topic));
        let mut args = Vec::new();
        if turn > 0 {
            args.extend(["--continue", trace_id.as_str()]);
        }
        args.extend(["--max-iterations", "3", task.as_str()]);
        let before = model.proxy.completions().len();
        let (output, result) = model.agent("run", Some(32768), &args);
        // Every turn ends with an answer (whole, or cut at the pinned cap), or at its limit of
        // model calls, never on a refusal.
        assert!(
            matches!(
                result["stop"].as_str(),
                Some("completed" | "max_iterations" | "empty_answer" | "truncated")
            ),
            "turn {turn}: {}",
            model.explain(&output)
        );
        trace_id = result["trace_id"].as_str().unwrap().to_owned();
        let completions = model.proxy.completions();
        let Some(refused) = completions[before..].iter().position(|e| {
            e.status == 400 && e.text().contains("exceeds the available context size")
        }) else {
            continue;
        };
        // The run went on after the refusal, and said why.
        assert!(
            completions[before + refused + 1..]
                .iter()
                .any(|e| e.status == 200 && !e.body.is_empty()),
            "nothing was answered after the refusal\n{}",
            model.explain(&output)
        );
        assert!(
            stderr(&output).contains("refused a request"),
            "{}",
            model.explain(&output)
        );
        refused_in = Some(turn);
        break;
    }
    assert!(
        refused_in.is_some(),
        "no request was refused in {} turns",
        topics.len()
    );
    // The refusal's window is the run's from then on, and the run says so.
    let notices = model.notices(&trace_id);
    assert!(
        notices
            .iter()
            .any(|n| n["kind"] == "context_window" && n["tokens"] == 4096),
        "{notices:?}"
    );
    // The context was made smaller: by a summary, or, where the small model wrote none, by
    // leaving the oldest turns out of the request.
    let shown = model.show(&trace_id);
    let summaries = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["metadata"]["compaction"] == true)
        .count();
    assert!(
        summaries >= 1 || notices.iter().any(|n| n["kind"] == "context_left_out"),
        "the refusal did not make the context smaller: {notices:?}"
    );
}

#[test]
fn the_window_is_learned_from_the_server() {
    let options = ServerOptions {
        n_ctx: 3072,
        ..ServerOptions::default()
    };
    let Some(model) = Model::start("the_window_is_learned_from_the_server", options, 16) else {
        return;
    };
    // No --context-window: the agent asks the server, whose /props says 3,072 tokens. A task
    // that does not fit is refused before any call, naming the task and the real window.
    let (output, result) = model.agent(
        "run",
        None,
        &["--max-iterations", "1", "Say hello in one word."],
    );
    let trace_id = result["trace_id"].as_str().unwrap().to_owned();
    assert!(
        stderr(&output).contains("3,072 tokens (from the server's /props)"),
        "{}",
        model.explain(&output)
    );
    let notices = model.notices(&trace_id);
    assert!(
        notices
            .iter()
            .any(|n| n["kind"] == "context_window" && n["tokens"] == 3072),
        "{notices:?}"
    );
    let long = format!("{}\nSummarise.", notes(300, "ships"));
    let before = model.proxy.completions().len();
    let (output, result) = model.agent("run", None, &["--max-iterations", "1", &long]);
    assert_eq!(
        result["stop"],
        "window_too_small",
        "{}",
        model.explain(&output)
    );
    let error = result["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("the task alone is") && error.contains("3,072 tokens"),
        "{error}"
    );
    assert_eq!(
        model.proxy.completions().len(),
        before,
        "no request was sent for a task that cannot fit"
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
        .command("run", Some(4096), &["--max-iterations", "3", task])
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
    let (output, result) = model.agent("resume", Some(4096), &[&trace_id]);
    // The resume ends on its own: completed, at a limit, or with an answer cut at the length
    // limit (a small model may loop until it is cut), never as a failure.
    assert!(
        matches!(code(&output), 0 | 3 | 4),
        "{}",
        model.explain(&output)
    );
    assert_eq!(result["trace_id"], trace_id.as_str());
}

#[test]
fn gemma_with_its_own_template_is_told_it_cannot_see_the_tools() {
    // Gemma 3 270M with the template of its GGUF file, which renders no tools: the server
    // takes the request, counts a prompt far smaller than the tool specs alone, and the agent
    // says so, with the fix. Whatever the model answers, the run does not end in a silent
    // success: a final answer has text, or the run says it has none.
    let options = ServerOptions {
        model: Served::Gemma3,
        chat_template: None,
        ..ServerOptions::default()
    };
    let Some(model) = Model::start(
        "gemma_with_its_own_template_is_told_it_cannot_see_the_tools",
        options,
        32,
    ) else {
        return;
    };
    let (output, result) = model.agent(
        "run",
        None,
        &["--max-iterations", "2", "Say hello in one word."],
    );
    let trace_id = result["trace_id"].as_str().unwrap().to_owned();
    let notices = model.notices(&trace_id);
    assert!(
        notices.iter().any(|n| n["kind"] == "tools_not_shown"),
        "{notices:?}\n{}",
        model.explain(&output)
    );
    assert!(
        stderr(&output).contains("not showing the model its tools")
            && stderr(&output).contains("--jinja"),
        "{}",
        model.explain(&output)
    );
    let response = result["response"].as_str().unwrap_or("");
    match result["stop"].as_str() {
        Some("completed") => {
            assert_eq!(code(&output), 0);
            assert!(!response.trim().is_empty(), "{}", model.explain(&output));
        }
        Some("empty_answer" | "max_iterations") => assert_ne!(code(&output), 0),
        other => panic!("unexpected end {other:?}\n{}", model.explain(&output)),
    }
}
