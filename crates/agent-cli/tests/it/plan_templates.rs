//! Plan templates as a user meets them: plan a task, save the plan under a name, give it
//! parameters, list it, start runs from it with `--var`, and get clear errors (exit 2) for
//! names and values that do not fit.

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use serde_json::{Value, json};

use crate::agent_env;

/// Plans "Add a cache to src/store.rs" in `env` and returns the trace id.
async fn planned(env: &CliEnv) -> String {
    let script = env.write(
        "plan.json",
        &json!([
            {"tool_calls": [{"name": "goal", "arguments": {
                "add": "Read src/store.rs, Write the cache, Review it @reviewer"
            }}]},
            {"text": "Three goals."}
        ])
        .to_string(),
    );
    let output = env
        .run(&[
            "plan",
            "--script",
            &script,
            "--json",
            "Add a cache to src/store.rs",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    result["trace_id"].as_str().unwrap().to_owned()
}

/// The goals of a trace as (description, agent), the planning goal left out.
async fn goals(env: &CliEnv, trace_id: &str) -> (String, Vec<(String, Value)>) {
    let shown: Value =
        serde_json::from_slice(&env.run(&["show", trace_id, "--json"]).await.stdout).unwrap();
    let goals = shown["goal_tree"]["goals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["agent"] != "plan")
        .map(|g| {
            (
                g["description"].as_str().unwrap().to_owned(),
                g["agent"].clone(),
            )
        })
        .collect();
    (shown["trace"]["task"].as_str().unwrap().to_owned(), goals)
}

#[tokio::test]
async fn a_plan_is_saved_as_a_template_listed_and_run_with_values() {
    let env = agent_env();
    let work = env.work();
    let trace_id = planned(&env).await;
    let output = env
        .run(&[
            "plan",
            "save",
            &trace_id,
            "cache",
            "--description",
            "Add a cache to a module",
            "--workspace",
            &work,
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let file = env.path("work/.agent/plans/cache.md");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("---\ndescription: \"Add a cache to a module\"\n"),
        "{text}"
    );
    assert!(
        text.contains("mission: \"Add a cache to src/store.rs\"\n"),
        "{text}"
    );
    assert!(
        text.ends_with("\nRead src/store.rs\nWrite the cache\nReview it @reviewer\n"),
        "{text}"
    );
    assert!(!text.contains("Plan the task"), "{text}");

    // Saving again under the same name needs --force.
    let again = env
        .run(&["plan", "save", &trace_id, "cache", "--workspace", &work])
        .await;
    assert_eq!(code(&again), 2, "{}", stderr(&again));
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));

    // The user turns the module into a parameter and adds one without a default.
    let edited = text
        .replace("src/store.rs", "{{module}}")
        .replace("params:\n", "params:\n  module: src/store.rs\n  owner:\n")
        + "Tell {{ owner }}\n";
    std::fs::write(&file, edited).unwrap();

    let output = env.run(&["plan", "list", "--workspace", &work]).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let listed = stdout(&output);
    assert!(listed.starts_with("NAME"), "{listed}");
    assert!(
        listed.contains("cache") && listed.contains("module=src/store.rs, owner"),
        "{listed}"
    );
    assert!(listed.contains("Add a cache to a module"), "{listed}");
    let output = env
        .run(&["plan", "list", "--json", "--workspace", &work])
        .await;
    let listed: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let template = &listed["templates"][0];
    assert_eq!(template["name"], "cache");
    assert_eq!(template["description"], "Add a cache to a module");
    assert_eq!(template["mission"], "Add a cache to {{module}}");
    assert_eq!(
        template["params"],
        json!([{"name": "module", "default": "src/store.rs"}, {"name": "owner", "default": null}])
    );

    // The run holds the model to the template's goals: one that only answers ends incomplete.
    let script = env.write(
        "run.json",
        &json!({"turns": [], "fallback": "Started."}).to_string(),
    );
    let output = env
        .run(&[
            "run",
            "--plan",
            "cache",
            "--var",
            "owner=Ana",
            "--var",
            "module=src/db.rs",
            "--script",
            &script,
            "--workspace",
            &work,
            "--no-report",
            "--json",
        ])
        .await;
    assert_eq!(code(&output), 5, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let (task, run_goals) = goals(&env, result["trace_id"].as_str().unwrap()).await;
    assert_eq!(task, "Add a cache to src/db.rs");
    let expected = [
        ("Read src/db.rs", Value::Null),
        ("Write the cache", Value::Null),
        ("Review it", json!("reviewer")),
        ("Tell Ana", Value::Null),
    ]
    .map(|(d, a)| (d.to_owned(), a));
    assert_eq!(run_goals, expected);

    // A task given on the command line replaces the mission; defaults fill what is not given.
    let output = env
        .run(&[
            "run",
            "--plan",
            "cache",
            "--var",
            "owner=Bo",
            "--script",
            &script,
            "--workspace",
            &work,
            "--no-report",
            "--json",
            "Cache it",
        ])
        .await;
    assert_eq!(code(&output), 5, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let (task, run_goals) = goals(&env, result["trace_id"].as_str().unwrap()).await;
    assert_eq!(task, "Cache it");
    assert_eq!(run_goals[0].0, "Read src/store.rs");
    assert_eq!(run_goals[3].0, "Tell Bo");
}

#[tokio::test]
async fn values_and_names_that_do_not_fit_are_usage_errors_naming_them() {
    let env = agent_env();
    let work = env.work();
    let trace_id = planned(&env).await;
    let plans = env.path("work/.agent/plans");
    std::fs::create_dir_all(&plans).unwrap();
    std::fs::write(
        plans.join("cache.md"),
        "---\nmission: Cache {{module}}\nparams:\n  module:\n---\nRead {{module}}\n",
    )
    .unwrap();
    // The run holds the model to the template's goals: one that only answers ends incomplete.
    let script = env.write(
        "run.json",
        &json!({"turns": [], "fallback": "Started."}).to_string(),
    );
    let cases: [(&[&str], &str); 6] = [
        (&["run", "--plan", "cache"], "needs a value for \"module\""),
        (
            &[
                "run",
                "--plan",
                "cache",
                "--var",
                "module=a",
                "--var",
                "colour=red",
            ],
            "has no parameter \"colour\"",
        ),
        (
            &["run", "--plan", "cache", "--var", "module"],
            "expected KEY=VALUE",
        ),
        (
            &["run", "--plan", "nope"],
            "there is no plan template \"nope\"",
        ),
        (&["run", "--plan", ".."], "invalid template name \"..\""),
        (
            &["plan", "save", &trace_id, "my plan"],
            "invalid template name \"my plan\"",
        ),
    ];
    for (args, expected) in cases {
        let mut args = args.to_vec();
        args.extend(["--workspace", &work]);
        if args[0] == "run" {
            args.extend(["--script", &script]);
        }
        let output = env.run(&args).await;
        assert_eq!(code(&output), 2, "{args:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains(expected),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    // Nothing was started by the refused runs: only the planning trace exists.
    let listed: Value =
        serde_json::from_slice(&env.run(&["traces", "--json"]).await.stdout).unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
}
