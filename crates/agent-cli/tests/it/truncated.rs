//! An answer cut at the model's length limit, as a llama.cpp server sends it
//! (`finish_reason: "length"`, no `usage` chunk): the run asks the model to go on, and when the
//! answer stays cut it ends with its own exit code (4), the partial answer on stdout, and token
//! counts marked as estimates.

use agent_test_support::cli::{code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use serde_json::{Value, json};

use crate::{agent_env, on_server};

/// The OpenAI stream of a text answer cut at the length limit, without usage.
fn cut(text: &str) -> Reply {
    let mut chunks = Turn::text(text).openai_chunks();
    for chunk in &mut chunks {
        if let Some(choice) = chunk["choices"].get_mut(0)
            && !choice["finish_reason"].is_null()
        {
            choice["finish_reason"] = json!("length");
        }
    }
    Reply::openai_stream(&chunks)
}

#[tokio::test]
async fn an_answer_that_stays_cut_ends_the_run_truncated_with_exit_code_4() {
    let env = agent_env();
    let server = MockModelServer::with_replies([cut("One, "), cut("two, "), cut("three")]).await;
    let mut args = vec!["run".to_owned(), "--json".to_owned()];
    args.extend(on_server(&env, &server));
    args.push("Count".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = env.run(&args).await;
    assert_eq!(code(&output), 4, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(result["stop"], "truncated", "{result}");
    assert_eq!(result["status"], "failed");
    assert_eq!(result["response"], "One, two, three");
    assert!(result["error"].as_str().unwrap().starts_with("truncated:"));
    // The server counted nothing: the totals are the agent's estimate, and say so.
    assert_eq!(result["tokens_estimated"], true);
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn a_cut_answer_continued_to_its_end_completes_and_shows_estimated_tokens() {
    let env = agent_env();
    let server =
        MockModelServer::with_replies([cut("Half an"), Reply::from(Turn::text(" answer."))]).await;
    let mut args = vec!["run".to_owned()];
    args.extend(on_server(&env, &server));
    args.push("Answer".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = env.run(&args).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output).trim(), "Half an answer.");
    let err = stderr(&output);
    assert!(err.contains("tokens (estimated)"), "{err}");
}
