//! The plan holds the run to its word, with the scripted model: a premature answer is sent back
//! to the open goals, a model that keeps answering ends `incomplete` (and a resume takes it up),
//! an abandoned goal counts as resolved, a goal's check gates `done` (a real `python3 -m
//! unittest` in a temporary workspace), a judge decides where a command cannot, and a goal over
//! its budget is abandoned while the run goes on.

use std::sync::Arc;

use agent_execution::meta::{BudgetAction, MessageMeta};
use agent_execution::{EventKind, InMemoryTraceStore, Message, Role, TraceStatus, TraceStore};
use agent_goal::{CheckAuthor, GoalStatus, PlanEdit};
use agent_llm::{ChatRequest, ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, Approval, JUDGE_PROMPT, RunOutcome, RunnerOptions, StopReason};
use agent_tools::ToolRegistry;
use serde_json::{Value, json};

struct Fixture {
    store: Arc<InMemoryTraceStore>,
    llm: Arc<ScriptedClient>,
    runner: AgentRunner,
    workspace: tempfile::TempDir,
}

fn fixture(turns: Vec<ScriptedTurn>, approval: Approval) -> Fixture {
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let llm = Arc::new(ScriptedClient::new(turns));
    let options = RunnerOptions::new("scripted", workspace.path()).with_approval(approval);
    let runner = AgentRunner::new(
        store.clone(),
        llm.clone(),
        ToolRegistry::with_builtins(),
        options,
    );
    Fixture {
        store,
        llm,
        runner,
        workspace,
    }
}

fn goal(args: Value) -> ScriptedTurn {
    ScriptedTurn::tool_call("goal", args)
}

/// The text of the newest message of a request.
fn last_text(request: &ChatRequest) -> String {
    request
        .messages
        .last()
        .map(|m| m.text().to_owned())
        .unwrap_or_default()
}

async fn messages(f: &Fixture, trace_id: &str) -> Vec<Message> {
    f.store.get_trace_messages(trace_id).await.unwrap()
}

async fn tool_texts(f: &Fixture, trace_id: &str) -> Vec<String> {
    messages(f, trace_id)
        .await
        .into_iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.text().to_owned())
        .collect()
}

fn reminders(messages: &[Message]) -> Vec<u32> {
    messages
        .iter()
        .filter_map(|m| MessageMeta::of(m).goals_pending)
        .collect()
}

#[tokio::test]
async fn a_premature_answer_is_sent_back_to_work_and_the_plan_finished() {
    let f = fixture(
        vec![
            goal(json!({"add": "Read the notes, Write the summary, Check it", "focus": "1"})),
            goal(json!({"done": "read them"})),
            ScriptedTurn::text("I am finished."),
            goal(json!({"focus": "2"})),
            goal(json!({"done": "written", "focus": "3"})),
            goal(json!({"done": "checked"})),
            ScriptedTurn::text("All three goals are done."),
        ],
        Approval::Allow,
    );
    let outcome = f.runner.run("Summarise the notes").await.unwrap();
    assert_eq!(outcome.stop, StopReason::Completed);
    assert_eq!(outcome.status, TraceStatus::Completed);
    assert_eq!(
        outcome.response.as_deref(),
        Some("All three goals are done.")
    );
    assert!(outcome.pending_goals.is_empty());
    let tree = f
        .store
        .get_goal_tree(&outcome.trace_id)
        .await
        .unwrap()
        .unwrap();
    assert!(
        tree.goals()
            .iter()
            .all(|g| g.status == GoalStatus::Completed)
    );
    assert_eq!(tree.goals().len(), 3);
    // The request after the premature answer names the open goals and what to do.
    let requests = f.llm.requests();
    let sent_back = last_text(&requests[3]);
    assert!(
        sent_back.starts_with(
            "Your plan still has open goals:\n- 2. Write the summary (pending)\n- 3. Check it \
             (pending)\n"
        ),
        "{sent_back}"
    );
    assert!(sent_back.contains("abandon"), "{sent_back}");
    assert_eq!(reminders(&messages(&f, &outcome.trace_id).await), [1]);
}

#[tokio::test]
async fn a_model_that_keeps_answering_ends_incomplete_and_a_resume_takes_it_up() {
    let mut turns = vec![
        goal(json!({"add": "Parse the input, Compute the total, Print it", "focus": "1"})),
        goal(json!({"done": "parsed"})),
    ];
    turns.extend((0..4).map(|_| ScriptedTurn::text("I am finished.")));
    // What the resumed run answers.
    turns.extend([
        goal(json!({"focus": "2"})),
        goal(json!({"done": "computed", "focus": "3"})),
        goal(json!({"abandon": "printing is the caller's job"})),
        ScriptedTurn::text("Computed; printing left to the caller."),
    ]);
    let f = fixture(turns, Approval::Allow);
    let outcome = f.runner.run("Total the numbers").await.unwrap();
    // The first premature answer and at most three more requests.
    assert_eq!(f.llm.served(), 2 + 4);
    assert_eq!(outcome.stop, StopReason::Incomplete);
    assert_eq!(outcome.status, TraceStatus::Incomplete);
    assert_eq!(outcome.response.as_deref(), Some("I am finished."));
    assert_eq!(
        outcome.error.as_deref(),
        Some("incomplete: goals left open: 2. Compute the total; 3. Print it")
    );
    let named: Vec<(&str, &str)> = outcome
        .pending_goals
        .iter()
        .map(|g| (g.number.as_str(), g.description.as_str()))
        .collect();
    assert_eq!(named, [("2", "Compute the total"), ("3", "Print it")]);
    let trace_id = outcome.trace_id.clone();
    assert_eq!(reminders(&messages(&f, &trace_id).await), [1, 2, 3]);
    let events = f.store.get_events(&trace_id, 0).await.unwrap();
    assert!(matches!(
        events.last().map(|e| &e.kind),
        Some(EventKind::TraceCompleted {
            status: TraceStatus::Incomplete,
            ..
        })
    ));
    assert!(
        last_text(&f.llm.requests()[5]).contains("Reminder 3 of 3"),
        "the last reminder says what comes next"
    );

    // Resumed, the model is sent back to the goals it left and the run can finish.
    let resumed: RunOutcome = f.runner.resume(&trace_id).await.unwrap();
    assert_eq!(resumed.stop, StopReason::Completed, "{:?}", resumed.error);
    let first = &f.llm.requests()[6];
    assert!(
        last_text(first).starts_with("Your plan still has open goals:"),
        "{}",
        last_text(first)
    );
    assert_eq!(reminders(&messages(&f, &trace_id).await), [1, 2, 3, 0]);
}

#[tokio::test]
async fn an_abandoned_last_goal_still_ends_completed() {
    let f = fixture(
        vec![
            goal(json!({"add": "Fix the bug, Port it to Windows", "focus": "1"})),
            goal(json!({"done": "fixed", "focus": "2"})),
            goal(json!({"abandon": "no Windows machine here"})),
            ScriptedTurn::text("Fixed; the port was abandoned."),
        ],
        Approval::Allow,
    );
    let outcome = f.runner.run("Fix and port").await.unwrap();
    assert_eq!(outcome.stop, StopReason::Completed);
    assert_eq!(outcome.status, TraceStatus::Completed);
    assert_eq!(f.llm.served(), 4, "no reminder");
    assert!(reminders(&messages(&f, &outcome.trace_id).await).is_empty());
}

/// A workspace whose test fails until `calc.py` adds instead of subtracting.
fn python_project(dir: &std::path::Path) {
    std::fs::write(dir.join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    std::fs::write(
        dir.join("test_calc.py"),
        "import unittest\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n    \
         def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n\nif __name__ == \
         \"__main__\":\n    unittest.main()\n",
    )
    .unwrap();
}

#[tokio::test]
async fn a_failing_check_refuses_done_and_a_fix_lets_it_pass() {
    let fixed = "def add(a, b):\n    return a + b\n";
    let f = fixture(
        vec![
            goal(json!({
                "add": "Make the tests pass",
                "check": "python3 -m unittest -q",
                "focus": "1"
            })),
            goal(json!({"done": "the tests pass"})),
            ScriptedTurn::tool_call("write_file", json!({"path": "calc.py", "content": fixed})),
            goal(json!({"done": "add adds now"})),
            ScriptedTurn::text("The tests pass."),
        ],
        Approval::Allow,
    );
    python_project(f.workspace.path());
    let outcome = f.runner.run("Fix calc.add").await.unwrap();
    assert_eq!(outcome.stop, StopReason::Completed, "{:?}", outcome.error);
    // The refused done: the exit code and the end of the output, in the next request.
    let refused = last_text(&f.llm.requests()[2]);
    assert!(
        refused.starts_with("error: the check of goal 1 \"Make the tests pass\" failed"),
        "{refused}"
    );
    assert!(refused.contains("exited with code 1"), "{refused}");
    assert!(
        refused.contains("AssertionError: -1 != 5") && refused.contains("FAILED (failures=1)"),
        "{refused}"
    );
    // The goal's messages left the view once it was done: the stored result says it passed.
    let accepted = tool_texts(&f, &outcome.trace_id).await.pop().unwrap();
    assert!(
        accepted.contains("Completed 1 \"Make the tests pass\".")
            && accepted.contains("Its check `python3 -m unittest -q` passed"),
        "{accepted}"
    );
    let tree = f
        .store
        .get_goal_tree(&outcome.trace_id)
        .await
        .unwrap()
        .unwrap();
    let goal = tree.get("1").unwrap();
    assert_eq!(goal.status, GoalStatus::Completed);
    let result = goal.check_result.as_ref().unwrap();
    assert!(result.passed);
    assert_eq!(result.exit_code, Some(0));
    let checks: Vec<(bool, Option<i32>)> = f
        .store
        .get_events(&outcome.trace_id, 0)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::GoalChecked { result, .. } => Some((result.passed, result.exit_code)),
            _ => None,
        })
        .collect();
    assert_eq!(checks, [(false, Some(1)), (true, Some(0))]);
}

#[tokio::test]
async fn the_model_s_check_runs_only_as_its_bash_would_and_a_person_s_always() {
    let f = fixture(
        vec![
            goal(json!({"add": "Ship", "check": "touch shipped", "focus": "2"})),
            goal(json!({"done": "shipped"})),
            goal(json!({"abandon": "the check may not run here"})),
            goal(json!({"focus": "1"})),
            goal(json!({"done": "verified"})),
            ScriptedTurn::text("Done."),
        ],
        Approval::default(),
    );
    std::fs::write(f.workspace.path().join("shipped"), "").unwrap();
    let trace_id = f.runner.create("Ship it").await.unwrap();
    // A person's goal, added before the run: its check runs without asking.
    let theirs = PlanEdit::Add {
        description: "Verify".into(),
        parent_id: None,
        index: None,
        agent: None,
        check: Some("test -f shipped".into()),
        judge: None,
        budget: None,
    };
    let mut tree = f.store.get_goal_tree(&trace_id).await.unwrap().unwrap();
    tree.apply_plan_edit(&theirs).unwrap();
    f.store.update_goal_tree(&trace_id, tree).await.unwrap();
    let outcome = f
        .runner
        .drive(&trace_id, agent_runner::CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::Completed, "{:?}", outcome.error);
    let refused = last_text(&f.llm.requests()[2]);
    assert!(
        refused.starts_with("error: bash was not run: risky tools are refused")
            && refused.ends_with("(the check of goal 2 \"Ship\": the goal stays in progress)"),
        "{refused}"
    );
    let tree = f.store.get_goal_tree(&trace_id).await.unwrap().unwrap();
    assert_eq!(tree.get("2").unwrap().status, GoalStatus::Abandoned);
    let verify = tree.get("1").unwrap();
    assert_eq!(verify.check.as_ref().unwrap().set_by, CheckAuthor::Person);
    assert_eq!(verify.status, GoalStatus::Completed);
}

#[tokio::test]
async fn a_judge_decides_a_goal_a_command_cannot() {
    let f = fixture(
        vec![
            goal(json!({
                "add": "Write the README",
                "judge": "it says how to install the tool",
                "focus": "1"
            })),
            goal(json!({"done": "wrote README.md"})),
            ScriptedTurn::text("NOT MET\nNo evidence shows an install section."),
            goal(json!({
                "done": "wrote README.md",
                "evidence": "README.md has '## Install: pip install tool'"
            })),
            ScriptedTurn::text("MET\nThe cited section explains installation."),
            ScriptedTurn::text("The README is written."),
        ],
        Approval::Allow,
    );
    let outcome = f.runner.run("Document the tool").await.unwrap();
    assert_eq!(outcome.stop, StopReason::Completed, "{:?}", outcome.error);
    let requests = f.llm.requests();
    let judged = &requests[2];
    assert_eq!(judged.messages[0].text(), JUDGE_PROMPT);
    assert!(judged.tools.is_empty(), "the judge has no tools");
    assert!(last_text(judged).contains("it says how to install the tool"));
    let refused = last_text(&requests[3]);
    assert!(
        refused.contains("The judge found it not met: No evidence shows an install section."),
        "{refused}"
    );
    assert!(last_text(&requests[4]).contains("'## Install: pip install tool'"));
    let accepted = tool_texts(&f, &outcome.trace_id).await.pop().unwrap();
    assert!(accepted.contains("The judge found it met"), "{accepted}");
    // The judge's calls count in the trace, on the goal call they answered.
    let tool_tokens: u64 = messages(&f, &outcome.trace_id)
        .await
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tokens)
        .sum();
    assert!(tool_tokens > 100, "{tool_tokens}");
}

#[tokio::test]
async fn a_goal_over_its_budget_is_abandoned_and_the_next_goal_runs() {
    // Three different reads, so the loop guard sees no repetition.
    let read = |pattern: &str| ScriptedTurn::tool_call("glob_files", json!({"pattern": pattern}));
    let f = fixture(
        vec![
            goal(json!({"add": "Survey everything", "budget": {"iterations": 2}})),
            goal(json!({"add": "Write the summary", "focus": "1"})),
            read("*"),
            read("*.txt"),
            read("*.md"),
            goal(json!({"focus": "1"})),
            goal(json!({"done": "summary written"})),
            ScriptedTurn::text("Summary written; the survey ran out of budget."),
        ],
        Approval::Allow,
    );
    let outcome = f.runner.run("Survey and summarise").await.unwrap();
    assert_eq!(outcome.stop, StopReason::Completed, "{:?}", outcome.error);
    let requests = f.llm.requests();
    let warned = last_text(&requests[4]);
    assert!(
        warned
            .starts_with("Goal 1 \"Survey everything\" has spent its budget (2 model calls of 2)."),
        "{warned}"
    );
    let abandoned = last_text(&requests[5]);
    assert!(
        abandoned.starts_with(
            "Goal 1 \"Survey everything\" was abandoned with the reason \"budget spent\""
        ) && abandoned.ends_with("Go on with the next goal: focus 1 \"Write the summary\"."),
        "{abandoned}"
    );
    let tree = f
        .store
        .get_goal_tree(&outcome.trace_id)
        .await
        .unwrap()
        .unwrap();
    let survey = tree.get("1").unwrap();
    assert_eq!(survey.status, GoalStatus::Abandoned);
    assert_eq!(survey.summary.as_deref(), Some("budget spent"));
    assert_eq!(tree.get("2").unwrap().status, GoalStatus::Completed);
    let notes: Vec<BudgetAction> = messages(&f, &outcome.trace_id)
        .await
        .iter()
        .filter_map(|m| MessageMeta::of(m).goal_budget.map(|n| n.action))
        .collect();
    assert_eq!(notes, [BudgetAction::Warned, BudgetAction::Abandoned]);
}
