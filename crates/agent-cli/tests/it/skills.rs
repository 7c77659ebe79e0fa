//! Agent Skills as a user brings them: a skill folder written for Claude Code, copied into
//! `.claude/skills/`, is listed by `agent skills`, its description is in the first model request
//! while its body is not, and the body comes in with the `skill` call.

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Turn};
use serde_json::{Value, json};

use crate::agent_env;

/// A SKILL.md in the style of the public skills repositories: front matter with a long
/// description, a license and `allowed-tools`, then sections, a code block and references to
/// files beside it.
const SKILL_MD: &str = r#"---
name: changelog-generator
description: Automatically creates user-facing changelogs from git commits by analyzing commit history, categorizing changes, and transforming technical commits into clear, customer-friendly release notes. Use when preparing release notes or a CHANGELOG entry.
license: Complete terms in LICENSE.txt
allowed-tools: Bash(git log:*), Read, Write
---

# Changelog Generator

This skill transforms technical git commits into polished, user-friendly changelogs.

## When to Use This Skill

- Preparing release notes for a new version
- Creating weekly or monthly product update summaries

## How to Use

1. Run `git log --oneline <last-tag>..HEAD` to collect the commits.
2. Group them with the categories in `references/categories.md`.
3. Write the entry at the top of `CHANGELOG.md`, newest first:

```markdown
## [1.4.0] - 2024-03-15
### ✨ New Features
- **Team workspaces**: Create separate workspaces for different projects
```

## Tips

- Translate technical terms: "Refactor auth middleware" becomes "Faster, more reliable sign-in".
- Leave out internal changes (CI, refactors without user impact).
"#;

/// A sentence of the body only, to look for.
const BODY_MARK: &str = "Translate technical terms";

/// Copies the skill folder into the workspace's `.claude/skills/`.
fn install_skill(env: &CliEnv) {
    env.write("work/.claude/skills/changelog-generator/SKILL.md", SKILL_MD);
    env.write(
        "work/.claude/skills/changelog-generator/references/categories.md",
        "- New Features\n- Improvements\n- Fixes\n",
    );
    env.write(
        "work/.claude/skills/changelog-generator/LICENSE.txt",
        "Apache License 2.0\n",
    );
}

/// The system prompt of a request.
fn system(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Every message's text of a request, joined.
fn all_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_claude_skill_is_listed_in_the_prompt_and_its_body_comes_with_the_skill_call() {
    let env = agent_env();
    install_skill(&env);
    let server = MockModelServer::with_replies([
        Turn::tool_call("call_1", "skill", json!({"name": "changelog-generator"})),
        Turn::text("Wrote the changelog."),
    ])
    .await;
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_server(&env, &server));
    args.push("Write release notes for the last commits".into());
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output).trim(), "Wrote the changelog.");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0].body;
    let prompt = system(first);
    assert!(
        prompt.contains(
            "- changelog-generator: Automatically creates user-facing changelogs from git \
             commits"
        ),
        "{prompt}"
    );
    assert!(!all_text(first).contains(BODY_MARK), "{prompt}");
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(tools.contains(&"skill"), "{tools:?}");

    // The second request carries the body, the folder and the files beside it.
    let second = &requests[1].body;
    let result = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_owned();
    assert!(result.contains(BODY_MARK), "{result}");
    let folder =
        std::fs::canonicalize(env.path("work/.claude/skills/changelog-generator")).unwrap();
    assert!(
        result.contains(&format!(
            "Base directory for this skill: {}",
            folder.display()
        )),
        "{result}"
    );
    assert!(result.contains("- references/categories.md"), "{result}");
    assert!(
        result.contains("Tools the skill uses: Bash(git log:*), Read, Write"),
        "{result}"
    );
}

#[tokio::test]
async fn without_skills_there_is_no_skill_tool_and_no_skills_block() {
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text("Done.")]).await;
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_server(&env, &server));
    args.push("Do it".into());
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let first = &server.requests()[0].body;
    assert!(!system(first).contains("## Skills"));
    let tools = first["tools"].to_string();
    assert!(!tools.contains("\"skill\""), "{tools}");
}

#[tokio::test]
async fn agent_skills_lists_each_skill_with_where_it_came_from() {
    let env = agent_env();
    install_skill(&env);
    env.write(
        "home/agent/skills/standup/SKILL.md",
        "---\nname: standup\ndescription: Writes the daily standup note.\n---\nList yesterday.\n",
    );
    env.write("work/.agent/skills/broken/SKILL.md", "no front matter\n");
    let output = env
        .run(&["skills", "--workspace", &env.work(), "--json"])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let listed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let skills = listed["skills"].as_array().unwrap();
    let names: Vec<(&str, &str)> = skills
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["source"].as_str().unwrap()))
        .collect();
    let user = env.path("home/agent/skills");
    assert_eq!(
        names,
        [
            ("changelog-generator", ".claude/skills"),
            ("standup", user.to_str().unwrap()),
        ]
    );
    assert!(
        stderr(&output).contains("broken/SKILL.md is not used"),
        "{}",
        stderr(&output)
    );

    let output = env.run(&["skills", "--workspace", &env.work()]).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let table = stdout(&output);
    assert!(table.contains("NAME"), "{table}");
    assert!(
        table.contains("changelog-generator  .claude/skills"),
        "{table}"
    );
}

/// Writes two skills, `alpha-notes` and `beta-notes`, and the profile `writer`, which offers
/// only `beta-notes` (Claude Code's `skills` key in an agent's front matter).
fn two_skills_and_a_writer(env: &CliEnv) {
    for name in ["alpha-notes", "beta-notes"] {
        env.write(
            &format!("work/.agent/skills/{name}/SKILL.md"),
            &format!(
                "---\nname: {name}\ndescription: The {name} of the team.\n---\nBody of {name}.\n"
            ),
        );
    }
    env.write(
        "work/.agent/agents/writer.md",
        "---\nname: writer\ndescription: Writes notes.\nskills: beta-notes\n---\nYou write notes.\n",
    );
}

/// `agent run --yes [--agent PROFILE] TASK` on `server`, asking for the skill `alpha-notes`.
async fn run_asking_for_alpha(env: &CliEnv, profile: Option<&str>) -> MockModelServer {
    let server = MockModelServer::with_replies([
        Turn::tool_call("c1", "skill", json!({"name": "alpha-notes"})),
        Turn::text("Done."),
    ])
    .await;
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_server(env, &server));
    args.push("--yes".into());
    if let Some(profile) = profile {
        args.extend(["--agent".to_owned(), profile.to_owned()]);
    }
    args.push("Write the notes".into());
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    server
}

/// The text of the tool message of a request.
fn skill_result(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_profile_offers_only_the_skills_it_names() {
    let env = agent_env();
    two_skills_and_a_writer(&env);
    let server = run_asking_for_alpha(&env, Some("writer")).await;
    let requests = server.requests();
    let first = requests[0].body.to_string();
    assert!(first.contains("The beta-notes of the team."), "{first}");
    assert!(!first.contains("alpha-notes"), "{first}");
    let told = skill_result(&requests[1].body);
    assert!(
        told.contains("there is no skill \"alpha-notes\"; the skills are: beta-notes"),
        "{told}"
    );
    assert!(!told.contains("Body of alpha-notes."), "{told}");

    // The control: the default profile names no skills, so it offers both.
    let server = run_asking_for_alpha(&env, None).await;
    let requests = server.requests();
    let first = requests[0].body.to_string();
    assert!(first.contains("The alpha-notes of the team."), "{first}");
    assert!(first.contains("The beta-notes of the team."), "{first}");
    let told = skill_result(&requests[1].body);
    assert!(told.contains("Body of alpha-notes."), "{told}");
}
