//! The session's rules: what "always" covers, and the call a deny rule cannot check.

use super::*;

fn request(
    call: &str,
    tool: &str,
    arguments: serde_json::Value,
    note: Option<&str>,
) -> ApprovalRequest {
    ApprovalRequest {
        trace_id: "t".into(),
        tool_call_id: call.into(),
        tool_name: tool.into(),
        arguments: arguments.to_string(),
        note: note.map(str::to_owned),
    }
}

fn bash(call: &str, command: &str, note: Option<&str>) -> ApprovalRequest {
    request(
        call,
        "bash",
        serde_json::json!({ "command": command }),
        note,
    )
}

fn rerun(call: Option<&str>, command: &str) -> RerunRequest {
    RerunRequest {
        trace_id: "t".into(),
        tool_call_id: call.map(str::to_owned),
        command: command.into(),
        output: "Permission denied".into(),
    }
}

#[test]
fn always_covers_later_calls_of_the_tool_and_the_prefix() {
    let session = SessionApprovals::new("/w");
    let first = bash("c1", "cargo test --all", None);
    let Check::Ask(question) = session.check(&first) else {
        panic!("asked the first time");
    };
    assert_eq!(question.prefix.as_deref(), Some("cargo test"));
    assert!(question.offers_always());
    let decision = session.answer(&first, Answer::AlwaysPrefix("cargo test".into()));
    assert_eq!(decision, ApprovalDecision::Approve);
    assert_eq!(
        session.check(&bash("c2", "cargo test -p x", None)),
        Check::Approved
    );
    assert!(matches!(
        session.check(&bash("c3", "ls", None)),
        Check::Ask(_)
    ));
    session.answer(&bash("c3", "ls", None), Answer::AlwaysTool);
    assert_eq!(session.check(&bash("c4", "make", None)), Check::Approved);
}

#[test]
fn a_call_a_deny_rule_cannot_check_is_always_asked_and_never_remembered() {
    let session = SessionApprovals::new("/w");
    session.answer(&bash("c1", "ls", None), Answer::AlwaysTool);
    let warning = "the rule `bash(rm -rf)` cannot check this command: a program is named by $x";
    let unverifiable = bash("c2", "x=rm; $x -rf target", Some(warning));
    let Check::Ask(question) = session.check(&unverifiable) else {
        panic!("an earlier always must not cover it");
    };
    assert_eq!(question.warning.as_deref(), Some(warning));
    assert!(!question.offers_always());
    assert_eq!(question.prefix, None, "no prefix is offered for it");
    // An "always" given to it anyway runs it once and is not remembered.
    let fresh = SessionApprovals::new("/w");
    assert_eq!(
        fresh.answer(&unverifiable, Answer::AlwaysTool),
        ApprovalDecision::Approve
    );
    assert!(matches!(
        fresh.check(&bash("c3", "ls", None)),
        Check::Ask(_)
    ));
    assert!(matches!(fresh.check(&unverifiable), Check::Ask(_)));
}

#[test]
fn nobody_to_ask_refuses_with_the_warning() {
    let warned = bash("c1", "x=rm; $x -rf target", Some("cannot check it"));
    let ApprovalDecision::Reject { reason } = SessionApprovals::unattended(&warned, "no terminal")
    else {
        panic!("refused");
    };
    assert_eq!(reason, "no terminal (cannot check it)");
}

#[test]
fn a_rerun_is_offered_only_for_a_call_a_person_approved_in_its_question() {
    let session = SessionApprovals::new("/w");
    let asked = bash("c1", "touch /etc/x", None);
    session.answer(&asked, Answer::AlwaysTool);
    assert!(session.may_offer_rerun(&rerun(Some("c1"), "touch /etc/x")));
    // The next bash call runs on the "always": nobody saw it, so no rerun is offered.
    assert_eq!(
        session.check(&bash("c2", "touch /etc/y", None)),
        Check::Approved
    );
    assert!(!session.may_offer_rerun(&rerun(Some("c2"), "touch /etc/y")));
    // Neither for a call without an id, nor one refused.
    assert!(!session.may_offer_rerun(&rerun(None, "touch /etc/x")));
    session.answer(&bash("c3", "rm x", None), Answer::No(String::new()));
    assert!(!session.may_offer_rerun(&rerun(Some("c3"), "rm x")));
}
