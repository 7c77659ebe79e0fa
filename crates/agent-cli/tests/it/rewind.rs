//! `agent rewind` and `agent diff` over a scripted run that writes, edits and deletes files over
//! three goals in a git repository of the user's: the rewind makes the workspace byte-identical
//! to its state when goal 2 started (ignored and over-cap files untouched), the fork goes on,
//! the original keeps its history, a file the user edited since is kept unless `--force`, and
//! the user's `.git` never changes. `abandon_rollback = "always"` undoes an abandoned goal.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use serde_json::{Value, json};

use crate::agent_env;

fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().unwrap() == ".git" {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.insert(path.strip_prefix(root).unwrap().into(), bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=u",
            "-c",
            "user.email=u@x",
            "-c",
            "commit.gpgSign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// HEAD, refs, stash, the index's bytes.
fn repo_state(dir: &Path) -> (String, String, String, Vec<u8>) {
    (
        git(dir, &["rev-parse", "HEAD"]),
        git(dir, &["for-each-ref"]),
        git(dir, &["stash", "list"]),
        std::fs::read(dir.join(".git/index")).unwrap(),
    )
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

fn write(path: &str, content: &str) -> Value {
    call("write_file", json!({"path": path, "content": content}))
}

fn bash(command: &str) -> Value {
    call("bash", json!({"command": command}))
}

fn goal(arguments: Value) -> Value {
    call("goal", arguments)
}

/// Runs `agent run` (or `--continue`) with `turns` as the script; returns the trace id.
async fn run(env: &CliEnv, continuing: Option<&str>, turns: Value, task: &str) -> String {
    run_with(env, continuing, turns, task, &[]).await
}

/// [`run`] with `extra` arguments.
async fn run_with(
    env: &CliEnv,
    continuing: Option<&str>,
    turns: Value,
    task: &str,
    extra: &[&str],
) -> String {
    run_to(env, continuing, turns, task, extra, 0).await
}

/// [`run_with`], checking the run ended with exit code `expect` (5: it left goals open).
async fn run_to(
    env: &CliEnv,
    continuing: Option<&str>,
    turns: Value,
    task: &str,
    extra: &[&str],
    expect: i32,
) -> String {
    let script = env.write(
        &format!("script-{}.json", rand_name(task)),
        &turns.to_string(),
    );
    let work = env.work();
    let mut args = vec!["run"];
    if let Some(id) = continuing {
        args.extend(["--continue", id]);
    }
    // The script's commands add new top-level entries (a binary file, ignored and over-cap
    // files), which the sandbox refuses without user namespaces: what is tested here is the
    // files' history.
    args.extend([
        "--sandbox",
        "off",
        "--script",
        &script,
        "--workspace",
        &work,
        "--yes",
        "--no-report",
        "--json",
    ]);
    args.extend(extra);
    args.push(task);
    let output = env.run(&args).await;
    assert_eq!(code(&output), expect, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    result["trace_id"].as_str().unwrap().to_owned()
}

fn rand_name(task: &str) -> String {
    task.chars().filter(char::is_ascii_alphanumeric).collect()
}

fn setup_repo(env: &CliEnv) -> PathBuf {
    let work = PathBuf::from(env.work());
    std::fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q"]);
    std::fs::write(work.join(".gitignore"), "target/\n*.log\n").unwrap();
    std::fs::write(work.join("README.md"), "readme\n").unwrap();
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "start"]);
    std::fs::write(work.join("README.md"), "stashed\n").unwrap();
    git(&work, &["stash", "-q"]);
    std::fs::write(work.join("staged.txt"), "staged\n").unwrap();
    git(&work, &["add", "staged.txt"]);
    env.write("agent.toml", "[checkpoints]\nmax_file_bytes = 1000\n");
    work
}

#[tokio::test]
async fn a_rewind_puts_the_files_of_goal_2s_start_back_and_forks_there() {
    let env = agent_env();
    let work = setup_repo(&env);
    let repo = repo_state(&work);

    // Goal 1: scaffold, with a binary file; then goal 2 starts and the run pauses, its goals
    // left open (incomplete).
    let first = json!({"turns": [
        {"tool_calls": [goal(json!({"add": "Scaffold, Write code, Clean up", "focus": "1"}))]},
        {"tool_calls": [
            write("src/main.rs", "fn main() {}\n"),
            write("notes.md", "notes v1\n"),
            write("old.txt", "to be deleted\n"),
            bash("printf '\\000\\001\\002\\377' > logo.bin"),
        ]},
        {"tool_calls": [goal(json!({"done": "scaffolded", "focus": "2"}))]},
    ], "fallback": "Paused."});
    let trace = run_to(&env, None, first, "Build it", &[], 5).await;
    let at_goal_2 = files(&work);

    // Goal 2 and 3: edits, a binary change, ignored and over-cap files, a deletion.
    let rest = json!([
        {"tool_calls": [
            call("edit_file", json!({"path": "src/main.rs", "old": "{}", "new": "{ println!(\"hi\"); }"})),
            write("src/lib.rs", "pub fn f() {}\n"),
            write("notes.md", "notes v2\n"),
            bash("printf '\\000\\003' > logo.bin && mkdir -p target && echo obj > target/out.o && \
                  echo log > run.log && head -c 5000 /dev/zero > big.dat"),
        ]},
        {"tool_calls": [goal(json!({"done": "written", "focus": "3"}))]},
        {"tool_calls": [bash("rm old.txt")]},
        {"tool_calls": [goal(json!({"done": "cleaned"}))]},
        {"text": "Done."}
    ]);
    run(&env, Some(&trace), rest, "Go on").await;
    assert_ne!(files(&work), at_goal_2);

    let diff = env.run(&["diff", &trace, "--goal", "2"]).await;
    assert_eq!(code(&diff), 0, "{}", stderr(&diff));
    let diff = stdout(&diff);
    assert!(diff.contains("-notes v1\n+notes v2\n"), "{diff}");
    assert!(
        diff.contains("Binary files a/logo.bin and b/logo.bin differ"),
        "{diff}"
    );
    assert!(
        !diff.contains("old.txt") && !diff.contains("big.dat"),
        "{diff}"
    );

    let dry = env
        .run(&["rewind", &trace, "--goal", "2", "--dry-run"])
        .await;
    assert_eq!(code(&dry), 0, "{}", stderr(&dry));
    assert_eq!(
        stdout(&dry),
        "A old.txt\nM logo.bin\nM notes.md\nM src/main.rs\nD src/lib.rs\n"
    );

    // The user edits a file the rewind would change: refused, nothing changes.
    std::fs::write(work.join("notes.md"), "the user's notes\n").unwrap();
    let before = files(&work);
    let refused = env.run(&["rewind", &trace, "--goal", "2"]).await;
    assert_eq!(code(&refused), 2, "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("notes.md"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(files(&work), before);

    let output = env.run(&["rewind", &trace, "--goal", "2", "--force"]).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let forked = stdout(&output).trim().to_owned();
    assert_ne!(forked, trace);

    let mut expected = at_goal_2.clone();
    for (path, bytes) in [
        ("target/out.o", b"obj\n".to_vec()),
        ("run.log", b"log\n".to_vec()),
        ("big.dat", vec![0; 5000]),
    ] {
        expected.insert(path.into(), bytes);
    }
    assert_eq!(
        files(&work),
        expected,
        "ignored and over-cap files are untouched"
    );

    // The fork goes on from goal 2; the original keeps its own history.
    let again = json!({"turns": [
        {"tool_calls": [write("src/main.rs", "fn main() { run(); }\n")]},
        {"tool_calls": [goal(json!({"done": "written another way"}))]},
    ], "fallback": "Done another way."});
    // The fork's later goals are open again and stay so: the run ends incomplete.
    run_to(&env, Some(&forked), again, "Another way", &[], 5).await;
    let shown = |id: String| {
        let env = &env;
        async move {
            let output = env.run(&["show", &id, "--json"]).await;
            serde_json::from_slice::<Value>(&output.stdout).unwrap()
        }
    };
    let original = shown(trace.clone()).await;
    let statuses: Vec<_> = original["goal_tree"]["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["status"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(statuses, ["completed", "completed", "completed"]);
    let fork = shown(forked.clone()).await;
    assert_eq!(fork["trace"]["forked_from"]["trace_id"], trace.as_str());
    assert_eq!(fork["trace"]["status"], "incomplete");
    assert_eq!(
        std::fs::read_to_string(work.join("src/main.rs")).unwrap(),
        "fn main() { run(); }\n"
    );
    assert_eq!(
        repo_state(&work),
        repo,
        "the user's repository never changes"
    );
}

#[tokio::test]
async fn an_abandoned_goal_is_rolled_back_with_always_and_earlier_goals_stay() {
    let env = agent_env();
    let work = setup_repo(&env);
    env.write(
        "agent.toml",
        "abandon_rollback = \"always\"\n[checkpoints]\nmax_file_bytes = 1000\n",
    );
    let repo = repo_state(&work);
    let turns = json!([
        {"tool_calls": [goal(json!({"add": "Keep, Try", "focus": "1"}))]},
        {"tool_calls": [write("kept.txt", "kept\n")]},
        {"tool_calls": [goal(json!({"done": "kept", "focus": "2"}))]},
        {"tool_calls": [write("kept.txt", "spoiled\n"), write("tried.txt", "tried\n")]},
        {"tool_calls": [goal(json!({"abandon": "a dead end"}))]},
        {"text": "Gave up on the second."}
    ]);
    let trace = run(&env, None, turns, "Try things").await;
    assert_eq!(
        std::fs::read_to_string(work.join("kept.txt")).unwrap(),
        "kept\n"
    );
    assert!(!work.join("tried.txt").exists());
    let shown = env.run(&["show", &trace, "--json"]).await;
    assert!(
        String::from_utf8_lossy(&shown.stdout).contains("were put back as they were"),
        "the model is told"
    );
    assert_eq!(repo_state(&work), repo);
}

/// The script of a run that keeps goal 1's file and abandons goal 2 after changing it.
fn abandoning() -> Value {
    json!([
        {"tool_calls": [goal(json!({"add": "Keep, Try", "focus": "1"}))]},
        {"tool_calls": [write("kept.txt", "kept\n")]},
        {"tool_calls": [goal(json!({"done": "kept", "focus": "2"}))]},
        {"tool_calls": [write("kept.txt", "spoiled\n"), write("tried.txt", "tried\n")]},
        {"tool_calls": [goal(json!({"abandon": "a dead end"}))]},
        {"text": "Gave up on the second."}
    ])
}

#[tokio::test]
async fn a_profiles_abandon_rollback_wins_over_agent_toml() {
    let env = agent_env();
    let work = setup_repo(&env);
    // agent.toml keeps abandoned changes; the `tidy` table and the workspace's `careful` file
    // say otherwise, each for its own runs.
    env.write(
        "agent.toml",
        "abandon_rollback = \"never\"\n[checkpoints]\nmax_file_bytes = 1000\n\n\
         [agents.tidy]\ndescription = \"Rolls back\"\nabandon_rollback = \"always\"\n",
    );
    run_with(&env, None, abandoning(), "Try things", &["--agent", "tidy"]).await;
    assert_eq!(
        std::fs::read_to_string(work.join("kept.txt")).unwrap(),
        "kept\n"
    );
    assert!(
        !work.join("tried.txt").exists(),
        "the profile's always rolled back"
    );

    // Without the profile, agent.toml's `never` keeps them.
    std::fs::remove_file(work.join("kept.txt")).unwrap();
    run(&env, None, abandoning(), "Try again").await;
    assert_eq!(
        std::fs::read_to_string(work.join("kept.txt")).unwrap(),
        "spoiled\n"
    );
    assert!(work.join("tried.txt").exists());

    // A profile file's front matter, over agent.toml's `always`.
    std::fs::remove_file(work.join("kept.txt")).unwrap();
    std::fs::remove_file(work.join("tried.txt")).unwrap();
    env.write(
        "agent.toml",
        "abandon_rollback = \"always\"\n[checkpoints]\nmax_file_bytes = 1000\n",
    );
    std::fs::create_dir_all(work.join(".agent/agents")).unwrap();
    std::fs::write(
        work.join(".agent/agents/careful.md"),
        "---\ndescription: Keeps what it tried\nabandon_rollback: never\n---\nBe careful.\n",
    )
    .unwrap();
    run_with(
        &env,
        None,
        abandoning(),
        "Try once more",
        &["--agent", "careful"],
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(work.join("kept.txt")).unwrap(),
        "spoiled\n"
    );
    assert!(
        work.join("tried.txt").exists(),
        "the file's never kept them"
    );

    // A value that is not one of the three is a usage error naming the field.
    std::fs::write(
        work.join(".agent/agents/careful.md"),
        "---\ndescription: Keeps\nabandon_rollback: sometimes\n---\nBe careful.\n",
    )
    .unwrap();
    let refused = env
        .run(&[
            "run",
            "--script",
            "/dev/null",
            "--workspace",
            &env.work(),
            "--agent",
            "careful",
            "Hi",
        ])
        .await;
    assert_eq!(code(&refused), 2, "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("abandon_rollback"),
        "{}",
        stderr(&refused)
    );
}
