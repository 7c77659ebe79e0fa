//! Plugins as a Claude Code user brings them: a folder in Claude Code's layout
//! (`.claude-plugin/plugin.json`, `commands/`, `skills/`) installed with `agent plugin add`
//! adds its command and its skill to every run; disabled, they go; removed, the folder goes.
//! A git repository installs the same way.

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Turn};
use serde_json::Value;

use crate::agent_env;

/// Writes the plugin `review-kit` under `dir` (relative to the environment's root).
fn write_plugin(env: &CliEnv, dir: &str) {
    env.write(
        &format!("{dir}/.claude-plugin/plugin.json"),
        r#"{"name": "review-kit", "description": "Code review helpers", "version": "1.2.0",
            "author": {"name": "Someone"}}"#,
    );
    env.write(
        &format!("{dir}/commands/review.md"),
        "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $1 with the review-checklist skill.\n",
    );
    env.write(
        &format!("{dir}/skills/review-checklist/SKILL.md"),
        "---\nname: review-checklist\ndescription: The team's checklist for reviewing a change.\n---\nCheck names, tests and errors.\n",
    );
}

/// `agent <args>` in the environment, to the end.
async fn agent(env: &CliEnv, args: &[&str]) -> std::process::Output {
    env.run(args).await
}

/// The names and sources of a `--json` listing's `key` entries.
fn listed(output: &std::process::Output, key: &str) -> Vec<(String, String)> {
    let value: Value = serde_json::from_str(&stdout(output)).unwrap();
    value[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["source"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_plugin_from_a_folder_adds_its_command_and_its_skill() {
    let env = agent_env();
    write_plugin(&env, "review-kit");
    // A link in the plugin to the user's files is not copied.
    std::os::unix::fs::symlink(env.path("home"), env.path("review-kit/home-link")).unwrap();
    let added = agent(&env, &["plugin", "add", &env.arg("review-kit")]).await;
    assert_eq!(code(&added), 0, "{}", stderr(&added));
    let installed = env.path("home/agent/plugins/review-kit");
    assert!(installed.join("commands/review.md").is_file());
    assert!(!installed.join("home-link").exists());
    // The same name twice is refused.
    let again = agent(&env, &["plugin", "add", &env.arg("review-kit")]).await;
    assert_eq!(code(&again), 2, "{}", stderr(&again));

    let work = env.work();
    let commands = agent(&env, &["commands", "--workspace", &work, "--json"]).await;
    assert_eq!(
        listed(&commands, "commands"),
        [("review".to_owned(), "plugin review-kit".to_owned())]
    );
    let skills = agent(&env, &["skills", "--workspace", &work, "--json"]).await;
    assert_eq!(
        listed(&skills, "skills"),
        [(
            "review-checklist".to_owned(),
            "plugin review-kit".to_owned()
        )]
    );

    // A run: the command expands, the skill is offered.
    let server = MockModelServer::with_replies([Turn::text("Reviewed.")]).await;
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_server(&env, &server));
    args.push("/review src/app.py".into());
    let ran = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    let body = server.requests()[0].body.to_string();
    assert!(
        body.contains("Review src/app.py with the review-checklist skill."),
        "{body}"
    );
    assert!(
        body.contains("- review-checklist: The team's checklist for reviewing a change."),
        "{body}"
    );

    let disabled = agent(&env, &["plugin", "disable", "review-kit"]).await;
    assert_eq!(code(&disabled), 0, "{}", stderr(&disabled));
    let commands = agent(&env, &["commands", "--workspace", &work, "--json"]).await;
    assert!(listed(&commands, "commands").is_empty());
    let list = agent(&env, &["plugin", "list"]).await;
    assert!(
        stdout(&list).contains("review-kit  1.2.0    disabled"),
        "{}",
        stdout(&list)
    );
    let enabled = agent(&env, &["plugin", "enable", "review-kit"]).await;
    assert_eq!(code(&enabled), 0, "{}", stderr(&enabled));
    let skills = agent(&env, &["skills", "--workspace", &work, "--json"]).await;
    assert_eq!(listed(&skills, "skills").len(), 1);

    let removed = agent(&env, &["plugin", "remove", "review-kit"]).await;
    assert_eq!(code(&removed), 0, "{}", stderr(&removed));
    assert!(!installed.exists());
    let unknown = agent(&env, &["plugin", "remove", "review-kit"]).await;
    assert_eq!(code(&unknown), 2, "{}", stderr(&unknown));
}

#[tokio::test]
async fn a_plugin_installs_from_a_git_repository() {
    let env = agent_env();
    write_plugin(&env, "repo");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(env.path("repo"))
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
    };
    git(&["init", "--quiet"]);
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "plugin"]);
    let url = format!("file://{}", env.arg("repo"));
    let added = agent(&env, &["plugin", "add", &url]).await;
    assert_eq!(code(&added), 0, "{}", stderr(&added));
    let installed = env.path("home/agent/plugins/review-kit");
    assert!(installed.join("skills/review-checklist/SKILL.md").is_file());
    assert!(!installed.join(".git").exists());
    let list = agent(&env, &["plugin", "list", "--json"]).await;
    let value: Value = serde_json::from_str(&stdout(&list)).unwrap();
    assert_eq!(value["plugins"][0]["name"], "review-kit");
    assert_eq!(value["plugins"][0]["enabled"], true);
}
