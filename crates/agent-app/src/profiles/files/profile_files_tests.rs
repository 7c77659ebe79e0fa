//! Tests of profile loading: the built-ins, files and configuration tables layered on them,
//! Claude Code's files, the front-matter subset, errors that name the file and the field, and
//! the prompt template.

use std::collections::BTreeSet;

use serde_json::json;

use super::*;
use agent_runner::profiles::{PLAN_PROMPT, PromptVars, builtin_profiles, render_prompt};
use agent_runner::{ApprovalPolicy, COMPACTION_PROMPT, RunLimits, RunnerOptions, ToolFilter};
use agent_tools::Risk;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn spec(value: serde_json::Value) -> ProfileSpec {
    serde_json::from_value(value).unwrap()
}

fn names(items: &[&str]) -> Option<BTreeSet<String>> {
    Some(items.iter().map(|s| (*s).to_owned()).collect())
}

#[test]
fn the_built_in_profiles() {
    let profiles = builtin_profiles();
    let list: Vec<&str> = profiles.keys().map(String::as_str).collect();
    assert_eq!(
        list,
        ["compaction", "default", "delegate", "explore", "plan"]
    );
    assert!(profiles["explore"].tools.is_read_only());
    assert_eq!(profiles["explore"].limits.max_iterations, 30);
    assert_eq!(profiles["delegate"].max_depth, 2);
    assert!(profiles["plan"].tools.admits("read_file", Risk::ReadOnly));
    assert!(!profiles["plan"].tools.admits("write_file", Risk::Risky));
    assert!(!profiles["plan"].tools.admits("explore", Risk::ReadOnly));
    assert_eq!(profiles["plan"].system_prompt.as_deref(), Some(PLAN_PROMPT));
    assert_eq!(
        profiles["compaction"].system_prompt.as_deref(),
        Some(COMPACTION_PROMPT)
    );
    assert!(
        profiles
            .values()
            .all(|p| p.origin == ProfileOrigin::BuiltIn)
    );
    assert!(profiles.values().all(|p| !p.description.is_empty()));
}

#[test]
fn a_claude_code_agent_file_loads_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "code-reviewer.md",
        "---\nname: code-reviewer\ndescription: Expert code review specialist. Use after \
         writing code.\ntools: Read, Grep, Glob, Bash, WebFetch\nmodel: sonnet\ncolor: blue\n\
         ---\n\nYou are a senior code reviewer.\n\nWhen invoked:\n1. Run git diff\n",
    );
    let mut profiles = builtin_profiles();
    let loaded = load_dir(&mut profiles, dir.path()).unwrap();
    assert_eq!(loaded, ["code-reviewer"]);
    let reviewer = &profiles["code-reviewer"];
    assert_eq!(
        reviewer.description,
        "Expert code review specialist. Use after writing code."
    );
    assert_eq!(
        reviewer.tools.allow,
        names(&["bash", "glob_files", "grep", "read_file", "web_fetch"])
    );
    assert_eq!(reviewer.model, None, "sonnet means the runner's model");
    assert_eq!(
        reviewer.system_prompt.as_deref(),
        Some("You are a senior code reviewer.\n\nWhen invoked:\n1. Run git diff")
    );
    assert_eq!(
        reviewer.origin,
        ProfileOrigin::File(dir.path().join("code-reviewer.md"))
    );
    // The rest comes from `default`.
    assert_eq!(reviewer.limits, RunLimits::default());
    assert_eq!(reviewer.max_depth, 1);
}

#[test]
fn a_file_overrides_a_built_in_field_by_field() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "explore.md",
        "---\nmax_iterations: 12\nloop_guard.repeated_call: 5\nmcp_servers: [docs]\n\
         goal_reminders: 1\n---\nExplore {workspace} carefully.\n",
    );
    let mut profiles = builtin_profiles();
    load_dir(&mut profiles, dir.path()).unwrap();
    let explore = &profiles["explore"];
    assert_eq!(explore.limits.max_iterations, 12);
    assert_eq!(explore.limits.loop_guard.repeated_call, 5);
    assert_eq!(explore.limits.loop_guard.repeated_error, 3);
    assert_eq!(explore.limits.goal_reminders, 1);
    assert!(explore.tools.is_read_only(), "kept from the built-in");
    assert_eq!(explore.tools.mcp_servers, names(&["docs"]));
    assert_eq!(
        explore.system_prompt.as_deref(),
        Some("Explore {workspace} carefully.")
    );
    assert_eq!(explore.description, AgentTypeConfig::explore().description);
}

#[test]
fn configuration_tables_then_files_each_change_what_they_name() {
    let dir = tempfile::tempdir().unwrap();
    let config = write(dir.path(), "agent.toml", "");
    write(dir.path(), "review.txt", "Review carefully.");
    let specs: BTreeMap<String, ProfileSpec> = [
        (
            "reviewer".to_owned(),
            spec(json!({
                "description": "Reviews changes.",
                "base": "explore",
                "prompt_file": "review.txt",
                "model": "gpt-4.1-mini",
                "provider": "openai",
                "approval": "deny",
                "max_cost": 0.5,
                "deny_tools": ["bash"],
            })),
        ),
        (
            "default".to_owned(),
            spec(json!({
                "prompt": "You are {agent} on {model}.",
                "max_iterations": 50,
                "closing_report": false,
            })),
        ),
    ]
    .into_iter()
    .collect();
    let mut profiles = builtin_profiles();
    apply_config(&mut profiles, &specs, &config).unwrap();
    let reviewer = &profiles["reviewer"];
    assert_eq!(reviewer.system_prompt.as_deref(), Some("Review carefully."));
    assert!(reviewer.tools.is_read_only(), "from its base");
    assert_eq!(reviewer.limits.max_iterations, 30, "from its base");
    assert_eq!(reviewer.limits.max_cost, Some(0.5));
    assert_eq!(reviewer.model.as_deref(), Some("gpt-4.1-mini"));
    assert_eq!(reviewer.provider, Some(agent_llm::ProviderKind::Openai));
    assert_eq!(reviewer.approval, ApprovalPolicy::Deny);
    assert!(!reviewer.tools.admits("bash", Risk::ReadOnly));
    assert_eq!(reviewer.origin, ProfileOrigin::Config(config.clone()));
    assert_eq!(profiles["default"].limits.max_iterations, 50);
    assert!(!profiles["default"].closing_report);

    // A file in the project changes the reviewer's model only.
    let agents = dir.path().join("agents");
    std::fs::create_dir(&agents).unwrap();
    write(
        &agents,
        "reviewer.md",
        "---\nmodel: gpt-4.1\nclosing_report: true\n---\n",
    );
    load_dir(&mut profiles, &agents).unwrap();
    let reviewer = &profiles["reviewer"];
    assert_eq!(reviewer.model.as_deref(), Some("gpt-4.1"));
    assert!(reviewer.closing_report);
    assert_eq!(reviewer.system_prompt.as_deref(), Some("Review carefully."));
    assert_eq!(reviewer.approval, ApprovalPolicy::Deny);
}

/// Loads one file and returns the error's text.
fn file_error(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "broken.md", text);
    let error = load_dir(&mut builtin_profiles(), dir.path()).unwrap_err();
    assert_eq!(error.location, path.display().to_string());
    error.to_string()
}

#[test]
fn errors_name_the_file_and_the_field() {
    let cases = [
        (
            "---\ntoolz: read_file\n---\n",
            "`toolz`: unknown field `toolz`",
        ),
        (
            "---\nmax_iterations: many\n---\n",
            "`max_iterations`: invalid type: string \"many\"",
        ),
        (
            "---\nmax_iterations: 0\n---\n",
            "`max_iterations`: must be a whole number of model calls, at least 1",
        ),
        (
            "---\nmax_cost: 0\n---\n",
            "`max_cost`: must be a positive, finite amount of US dollars",
        ),
        (
            "---\nmax_cost: -2\n---\n",
            "`max_cost`: must be a positive, finite amount of US dollars",
        ),
        ("---\nname: no/slash\n---\n", "`name`: invalid profile name"),
        (
            "---\nbase: nobody\n---\n",
            "`base`: there is no profile \"nobody\"",
        ),
        (
            "---\napproval: maybe\n---\n",
            "`approval`: unknown variant `maybe`",
        ),
        (
            "---\ntools: read file\n---\n",
            "`tools`: \"read file\" is not a tool name",
        ),
        ("---\nprompt_file: missing.txt\n---\n", "`prompt_file`: "),
        (
            "---\nprompt: inline\n---\nand a body\n",
            "`prompt`: the file has a body",
        ),
        ("---\ndescription: x\n", "has no closing `---` line"),
        (
            "---\nmodel: a\nmodel: b\n---\n",
            "`model`: line 3: `model` is given twice",
        ),
        ("---\njust words\n---\n", "line 2: expected `key: value`"),
        (
            "---\nloop_guard.repeatd_call: 2\n---\n",
            "`loop_guard`: unknown field `repeatd_call`",
        ),
    ];
    for (text, expected) in cases {
        let error = file_error(text);
        assert!(error.contains(expected), "{text:?}: {error}");
        assert!(error.contains("broken.md"), "{error}");
    }
    let mut profiles = builtin_profiles();
    let specs = [("x".to_owned(), spec(json!({"name": "y"})))]
        .into_iter()
        .collect();
    let error = apply_config(&mut profiles, &specs, Path::new("agent.toml")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent.toml [agents.x]: `name`: the table is [agents.x]; leave `name` out or make it \"x\""
    );
}

#[test]
fn the_front_matter_subset() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "writer.md",
        "---\n# A comment.\nname: \"tech-writer\"  # quoted\ndescription: >\n  Writes docs:\n  \
         READMEs and guides.\ntools:\n  - Read\n  - write_file\n  - mcp__docs__*\nloop_guard:\n  \
         repeated_call: 4\n  stop_after: 2\nread_only: false   # the default\nmax_cost: 1.25\n\
         model: gpt-4.1 # a comment\ncolor: C#\n---\nBody.\n",
    );
    let mut profiles = builtin_profiles();
    load_dir(&mut profiles, dir.path()).unwrap();
    let writer = &profiles["tech-writer"];
    assert_eq!(writer.description, "Writes docs: READMEs and guides.");
    assert_eq!(
        writer.tools.allow,
        names(&["mcp__docs__*", "read_file", "write_file"])
    );
    assert!(writer.tools.admits("mcp__docs__search", Risk::Risky));
    assert!(!writer.tools.admits("mcp__other__search", Risk::Risky));
    assert_eq!(writer.limits.loop_guard.repeated_call, 4);
    assert_eq!(writer.limits.loop_guard.stop_after, 2);
    assert_eq!(writer.limits.max_cost, Some(1.25));
    assert_eq!(writer.model.as_deref(), Some("gpt-4.1"));

    // A file without front matter is refused, named; so is a tool that does not exist.
    let plain = tempfile::tempdir().unwrap();
    write(plain.path(), "terse.md", "Answer in one line.\n");
    let error = load_dir(&mut builtin_profiles(), plain.path())
        .unwrap_err()
        .to_string();
    assert!(error.contains("terse.md"), "{error}");
    assert!(error.contains("has no front matter"), "{error}");
    let unknown = tempfile::tempdir().unwrap();
    write(
        unknown.path(),
        "bad.md",
        "---\ndescription: x\ntools: read_file, frobnicate\n---\nHi.\n",
    );
    let error = load_dir(&mut builtin_profiles(), unknown.path())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("bad.md") && error.contains("tools"),
        "{error}"
    );
    assert!(error.contains("unknown tool \"frobnicate\""), "{error}");
    // MCP tools, patterns, the web tools and Claude Code's tools without a counterpart stay
    // accepted.
    write(
        unknown.path(),
        "bad.md",
        "---\ndescription: x\ntools: mcp__gh__issues, mcp__fs__*, WebFetch, web_search, \
         TodoWrite, grep\n---\nHi.\n",
    );
    load_dir(&mut builtin_profiles(), unknown.path()).unwrap();
}

#[test]
fn mcp_servers_and_wildcards_filter_tools() {
    let filter = ToolFilter {
        mcp_servers: names(&["github"]),
        ..ToolFilter::all()
    };
    assert!(filter.admits("read_file", Risk::ReadOnly));
    assert!(filter.admits("mcp__github__list_issues", Risk::Risky));
    assert!(!filter.admits("mcp__slack__post", Risk::Risky));
    let denying = ToolFilter::all().denying(["mcp__*"]);
    assert!(!denying.admits("mcp__github__list_issues", Risk::ReadOnly));
    assert!(denying.admits("grep", Risk::ReadOnly));
    assert_eq!(denying.summary(), "all; not mcp__*");
    assert_eq!(ToolFilter::read_only().summary(), "read-only");
}

#[test]
fn prompts_are_templates() {
    let vars = PromptVars {
        workspace: "/work".into(),
        date: "2026-02-04".into(),
        tools: "goal, read_file".into(),
        agent: "reviewer".into(),
        model: "gpt-4.1".into(),
    };
    assert_eq!(
        render_prompt(
            "{agent} in {workspace} on {date} with {tools} ({model}); keep {braces}.",
            &vars
        ),
        "reviewer in /work on 2026-02-04 with goal, read_file (gpt-4.1); keep {braces}."
    );
}

#[test]
fn options_take_the_limits_and_model_of_their_profile() {
    let mut options = RunnerOptions::new("main-model", ".");
    options.sub_agents.agent_types.insert(
        "quick".into(),
        AgentTypeConfig {
            model: Some("small-model".into()),
            limits: RunLimits {
                max_iterations: 7,
                ..RunLimits::default()
            },
            ..AgentTypeConfig::general()
        },
    );
    let options = options.with_agent("quick").unwrap();
    assert_eq!(options.agent.as_deref(), Some("quick"));
    assert_eq!(options.model, "small-model");
    assert_eq!(options.limits.max_iterations, 7);
    let error = RunnerOptions::new("m", ".")
        .with_agent("nobody")
        .err()
        .unwrap();
    assert!(
        error
            .to_string()
            .contains("there is no agent profile \"nobody\""),
        "{error}"
    );
}

#[test]
fn reasoning_settings_of_a_profile_are_read_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "thinker.md",
        "---\nreasoning_effort: high\nthinking_budget: 2048\n---\nThink hard.\n",
    );
    let mut profiles = builtin_profiles();
    load_dir(&mut profiles, dir.path()).unwrap();
    let thinker = &profiles["thinker"];
    assert_eq!(
        thinker.reasoning_effort,
        Some(agent_llm::ReasoningEffort::High)
    );
    assert_eq!(thinker.thinking_budget, Some(2048));

    let small = file_error("---\nthinking_budget: 512\n---\nThink.\n");
    assert!(
        small.contains("`thinking_budget`: must be at least 1024"),
        "{small}"
    );
    let unknown = file_error("---\nreasoning_effort: extreme\n---\nThink.\n");
    assert!(unknown.contains("`reasoning_effort`"), "{unknown}");
}
