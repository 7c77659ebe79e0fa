//! Limits are checked alike on the command line, in agent.toml and in the API of `agent serve`:
//! `max_iterations` a whole number of at least 1, `max_cost` a positive, finite amount. A bad
//! one is a usage error (exit code 2) naming the field, before any trace is written, or a 400
//! naming the field.

use agent_test_support::cli::{CliEnv, code, stderr};
use serde_json::json;

use crate::agent_env;

fn script(env: &CliEnv) -> String {
    env.write("script.json", r#"{"turns": [], "fallback": "All done."}"#)
}

fn no_trace_written(env: &CliEnv) {
    let traces = std::fs::read_dir(env.traces()).unwrap().count();
    assert_eq!(traces, 0, "a refused run wrote a trace");
}

#[tokio::test]
async fn bad_limit_flags_are_usage_errors_naming_the_flag() {
    let env = agent_env();
    let script = script(&env);
    let work = env.work();
    for (flag, value) in [
        ("--max-cost", "NaN"),
        ("--max-cost", "nan"),
        ("--max-cost", "inf"),
        ("--max-cost", "0"),
        ("--max-cost", "-1"),
        ("--max-cost", "1e999"),
        ("--max-cost", "two"),
        ("--max-iterations", "0"),
        ("--max-iterations", "-3"),
        ("--max-iterations", "1.5"),
    ] {
        let given = format!("{flag}={value}");
        let args = [
            "run",
            "--script",
            &script,
            "--workspace",
            &work,
            &given,
            "Do it",
        ];
        let output = env.run(&args).await;
        assert_eq!(code(&output), 2, "{flag} {value}: {}", stderr(&output));
        let err = stderr(&output);
        assert!(
            err.contains(flag) && err.contains(&flag[2..].replace('-', "_")),
            "{flag} {value}: {err}"
        );
    }
    no_trace_written(&env);
    let resume = env.run(&["resume", "abc", "--max-iterations", "0"]).await;
    assert_eq!(code(&resume), 2, "{}", stderr(&resume));
    let ok = env
        .run(&[
            "run",
            "--script",
            &script,
            "--workspace",
            &work,
            "--max-cost",
            "0.5",
            "--max-iterations",
            "2",
            "Do it",
        ])
        .await;
    assert_eq!(code(&ok), 0, "{}", stderr(&ok));
}

#[tokio::test]
async fn bad_limits_in_agent_toml_are_usage_errors_naming_the_file_and_field() {
    let env = agent_env();
    let script = script(&env);
    let work = env.work();
    for (text, field) in [
        ("max_cost = nan\n", "max_cost"),
        ("max_cost = inf\n", "max_cost"),
        ("max_cost = 0.0\n", "max_cost"),
        ("max_cost = -2.5\n", "max_cost"),
        ("max_iterations = 0\n", "max_iterations"),
        ("[agents.default]\nmax_cost = 0.0\n", "max_cost"),
        ("[agents.default]\nmax_iterations = 0\n", "max_iterations"),
    ] {
        env.write("agent.toml", text);
        let run = env
            .run(&["run", "--script", &script, "--workspace", &work, "Do it"])
            .await;
        let serve = env
            .run(&[
                "serve",
                "--port",
                "0",
                "--script",
                &script,
                "--workspace",
                &work,
            ])
            .await;
        for (what, output) in [("run", run), ("serve", serve)] {
            assert_eq!(
                code(&output),
                2,
                "{what} with {text:?}: {}",
                stderr(&output)
            );
            let err = stderr(&output);
            assert!(
                err.contains("agent.toml") && err.contains(field),
                "{what} with {text:?}: {err}"
            );
        }
    }
    no_trace_written(&env);
}

#[tokio::test]
async fn the_api_of_agent_serve_refuses_bad_limits_naming_the_field() {
    let env = agent_env();
    let script = script(&env);
    let server = env.serve(&["--script", &script, "--workspace", &env.work()]);
    for (field, value) in [
        ("max_cost", json!(0)),
        ("max_cost", json!(-1)),
        ("max_iterations", json!(0)),
        ("max_iterations", json!(-1)),
    ] {
        let body = json!({"task": "Do it", field: value});
        let (status, answer) = server.request("POST", "/api/traces", Some(&body));
        assert_eq!(status, 400, "{field}={value}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(field), "{message}");
    }
    no_trace_written(&env);
}
