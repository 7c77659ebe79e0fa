//! The command line on a PostgreSQL store: `--store postgres://…` wherever a trace folder is
//! taken, `agent import` from a folder into the database (events included), and `agent worker`
//! refusing what it cannot work on.

use agent_test_support::cli::{code, stderr, stdout};
use agent_test_support::postgres::Cluster;
use serde_json::{Value, json};

use crate::agent_env;

fn json_of(output: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(output)).unwrap_or_else(|e| panic!("{e}: {}", stdout(output)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traces_of_a_folder_are_imported_into_postgres_and_read_and_run_there() {
    let cluster = Cluster::start();
    let url = cluster.url("postgres");
    let env = agent_env();
    let script = json!({"turns": [
        {"tool_calls": [{"name": "goal", "arguments": {"add": "Look, Answer", "focus": "1"}}]},
        {"tool_calls": [{"name": "goal", "arguments": {"done": "looked", "focus": "2"}}]},
        {"tool_calls": [{"name": "goal", "arguments": {"done": "answered"}}]},
        {"text": "All done."},
        {"text": "Second answer."}
    ]});
    let script = env.write("script.json", &script.to_string());
    let scripted = ["--provider", "scripted", "--script", &script];
    let ran = env
        .run(&[&["run"], &scripted[..], &["First task"]].concat())
        .await;
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));

    let traces = env.traces();
    let traces = traces.to_str().unwrap();
    let imported = env.run(&["import", "--from", traces, "--to", &url]).await;
    assert_eq!(code(&imported), 0, "{}", stderr(&imported));
    let id = stdout(&imported).trim().to_owned();
    assert!(
        stderr(&imported).contains("copied 1 traces"),
        "{}",
        stderr(&imported)
    );
    assert!(!id.is_empty());

    // The same trace, read from either store, says the same.
    let in_folder = env.run(&["show", &id, "--json"]).await;
    let in_database = env
        .run(&["show", &id[..8], "--json", "--store", &url])
        .await;
    assert_eq!(code(&in_database), 0, "{}", stderr(&in_database));
    assert_eq!(json_of(&in_folder), json_of(&in_database));

    // A second import leaves what is there as it is.
    let again = env.run(&["import", "--from", traces, "--to", &url]).await;
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert!(
        stderr(&again).contains("1 were there already"),
        "{}",
        stderr(&again)
    );

    // Runs record into the database, and a trace there continues.
    let continued = env
        .run(
            &[
                &["run", "--store", &url, "--continue", &id],
                &scripted[..],
                &["And then?"],
            ]
            .concat(),
        )
        .await;
    assert_eq!(code(&continued), 0, "{}", stderr(&continued));
    let listed = env
        .agent(&["traces", "--json"])
        .env("AGENT_STORE", &url)
        .output()
        .await
        .unwrap();
    let listed = json_of(&listed);
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    let shown = env.run(&["show", &id, "--json", "--store", &url]).await;
    let messages = json_of(&shown)["messages"].as_array().unwrap().len();
    let before = json_of(&in_folder)["messages"].as_array().unwrap().len();
    assert!(
        messages > before,
        "{messages} messages after the continue, {before} before"
    );
    // The folder's copy was not touched.
    assert_eq!(
        json_of(&env.run(&["show", &id, "--json"]).await),
        json_of(&in_folder)
    );
}

#[tokio::test]
async fn a_worker_needs_a_database_and_a_bad_url_is_a_usage_error() {
    let env = agent_env();
    let worker = env
        .run(&["worker", "--provider", "scripted", "--script", "x.json"])
        .await;
    assert_eq!(code(&worker), 2, "{}", stderr(&worker));
    assert!(
        stderr(&worker).contains("postgres://"),
        "{}",
        stderr(&worker)
    );
    let bad = env
        .run(&["traces", "--store", "postgres://a:secret@h:notaport/db"])
        .await;
    assert_eq!(code(&bad), 2, "{}", stderr(&bad));
    assert!(!stderr(&bad).contains("secret"), "{}", stderr(&bad));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_started_with_worker_executes_the_runs_it_queues() {
    let cluster = Cluster::start();
    let url = cluster.url("postgres");
    let env = agent_env();
    let script = json!({"turns": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo ran > ran.txt"}}]},
        {"text": "Ran it."}
    ]});
    // Made beforehand: without user namespaces the sandbox lets commands write files that
    // exist at the top of the workspace, not add new entries there.
    env.write("work/ran.txt", "");
    let script = env.write("script.json", &script.to_string());
    let work = env.work();
    let refused = env
        .run(&["serve", "--worker", "--port", "0", "--script", &script])
        .await;
    assert_eq!(
        code(&refused),
        2,
        "--worker needs a database: {}",
        stderr(&refused)
    );
    let server = env.serve(&[
        "--store",
        &url,
        "--worker",
        "--script",
        &script,
        "--workspace",
        &work,
        "--approval",
        "auto",
    ]);
    let (status, answer) = server.request("POST", "/api/traces", Some(&json!({"task": "Run it"})));
    assert_eq!(status, 201, "{answer}\n{}", server.log());
    let trace_id = answer["trace_id"].as_str().unwrap().to_owned();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (_, detail) = server.request("GET", &format!("/api/traces/{trace_id}"), None);
        if detail["trace"]["status"] == "completed" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{detail}\n{}",
            server.log()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        std::fs::read_to_string(env.path("work").join("ran.txt")).unwrap(),
        "ran\n"
    );
    // A workspace outside the workers' folder is refused before anything is queued.
    let (status, answer) = server.request(
        "POST",
        "/api/traces",
        Some(&json!({"task": "Escape", "workspace": "../../etc"})),
    );
    assert_eq!(status, 403, "{answer}");
    assert_eq!(answer["error"]["code"], "workspace_not_allowed");
}
