//! The spellings of `rm -rf target` that hide it from a plain reading of the script
//! (`agent_test_support::shell::RM_RF_HIDDEN_SPELLINGS`): each one really deletes the folder
//! when bash runs it (so the check below can fail), and a `bash(rm -rf)` deny rule refuses it or
//! asks about it, never lets it run unasked.

use agent_test_support::shell::{RM_RF_HIDDEN_SPELLINGS, RM_RF_SCRIPT};
use agent_tools::{ApprovalRules, RuleVerdict};

/// Runs `command` with `bash -c` in a fresh folder holding `target/` and the script; returns
/// whether `target` is gone.
fn deletes(command: &str) -> bool {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("target")).unwrap();
    std::fs::write(dir.path().join("target/keep.txt"), "precious").unwrap();
    std::fs::write(dir.path().join(RM_RF_SCRIPT.0), RM_RF_SCRIPT.1).unwrap();
    let _ = std::process::Command::new("bash")
        .args(["-c", command])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    !dir.path().join("target").exists()
}

#[test]
fn every_hidden_spelling_deletes_and_is_refused_or_asked_about() {
    assert_eq!(RM_RF_HIDDEN_SPELLINGS.len(), 34);
    let rules = ApprovalRules::parse(&["bash"], &["bash(rm -rf)"]).unwrap();
    let (mut denied, mut asked) = (0, 0);
    for command in RM_RF_HIDDEN_SPELLINGS {
        assert!(
            deletes(command),
            "`{command}` does not delete target by itself"
        );
        let arguments = serde_json::json!({ "command": command }).to_string();
        match rules.verdict("bash", &arguments, std::path::Path::new("/w")) {
            Some(RuleVerdict::Deny(_)) => denied += 1,
            Some(RuleVerdict::Ask { why, .. }) => {
                assert!(!why.is_empty(), "{command}");
                asked += 1;
            }
            other => panic!("`{command}` is not refused: {other:?}"),
        }
    }
    println!("DENY-SPELLINGS {{\"denied\":{denied},\"asked\":{asked}}}");
    // Without the rule, the same spellings are allowed: the rule is what stands in the way.
    let open = ApprovalRules::parse(&["bash"], &[] as &[&str]).unwrap();
    for command in RM_RF_HIDDEN_SPELLINGS {
        let arguments = serde_json::json!({ "command": command }).to_string();
        assert!(
            matches!(
                open.verdict("bash", &arguments, std::path::Path::new("/w")),
                Some(RuleVerdict::Allow(_))
            ),
            "{command}"
        );
    }
}
