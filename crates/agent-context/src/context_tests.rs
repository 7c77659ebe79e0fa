//! Tests of the context builder: goal compaction, prune, full-compaction summaries and the
//! integrity of tool-call units, with rendered snapshots of what the model sees.

use agent_goal::{GoalCommand, GoalTree};
use serde_json::{Value, json};

use super::*;
use crate::compaction::{COMPACTION_KEY, PRUNED_MARKER};
use agent_execution::message::{Message, Role};

/// Builds a stored history message by message.
#[derive(Default)]
pub(crate) struct History {
    pub(crate) messages: Vec<Message>,
}

impl History {
    fn push(&mut self, role: Role, goal: Option<&str>, content: Value) -> &mut Message {
        let sequence = self.messages.len() as u64 + 1;
        self.messages.push(Message {
            message_id: format!("t-{sequence:04}"),
            trace_id: "t".into(),
            branch_id: None,
            role,
            sequence,
            goal_id: goal.map(str::to_owned),
            tool_call_id: None,
            tool_name: None,
            content: agent_execution::Content::from_stored(role, content, false),
            description: String::new(),
            tokens: None,
            cost: None,
            duration_ms: None,
            created_at: "2026-01-01T00:00:00Z".into(),
            metadata: Default::default(),
        });
        self.messages.last_mut().unwrap()
    }

    pub(crate) fn user(&mut self, text: &str) -> &mut Self {
        self.push(Role::User, None, json!(text));
        self
    }

    /// An assistant turn with calls given as `(id, name, arguments)`.
    pub(crate) fn assistant(
        &mut self,
        goal: Option<&str>,
        text: &str,
        calls: &[(&str, &str, &str)],
    ) -> &mut Self {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, args)| json!({"id": id, "name": name, "arguments": args}))
            .collect();
        let text = if text.is_empty() {
            Value::Null
        } else {
            json!(text)
        };
        self.push(
            Role::Assistant,
            goal,
            json!({"text": text, "tool_calls": calls}),
        );
        self
    }

    pub(crate) fn tool(
        &mut self,
        goal: Option<&str>,
        call_id: &str,
        name: &str,
        output: &str,
    ) -> &mut Self {
        let message = self.push(Role::Tool, goal, json!(output));
        message.tool_call_id = Some(call_id.into());
        message.tool_name = Some(name.into());
        self
    }

    pub(crate) fn compaction(&mut self, text: &str) -> &mut Self {
        let message = self.push(Role::User, None, json!(text));
        message.metadata.insert(COMPACTION_KEY.into(), json!(true));
        self
    }
}

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

fn view(
    tree: &GoalTree,
    history: &History,
    budget: &ContextBudget,
    strategy: CompactionStrategy,
) -> ContextView {
    build_context(&ContextInput {
        system_prompt: "You are a careful agent.",
        tree,
        messages: &history.messages,
        budget,
        strategy,
        estimate: &words,
    })
}

/// Checks the rendered view without its system prompt against the expected transcript.
fn check(tree: &GoalTree, history: &History, expect: &str) {
    let view = view(
        tree,
        history,
        &ContextBudget::for_window(1_000_000),
        CompactionStrategy::default(),
    );
    let rendered = render_transcript(conversation(&view.messages));
    assert_eq!(
        rendered.trim_end(),
        expect.trim(),
        "\n--- got ---\n{rendered}"
    );
}

fn apply(tree: &mut GoalTree, json: Value) {
    let command: GoalCommand = serde_json::from_value(json).unwrap();
    tree.apply_at(&command, "2026-01-01T00:00:00Z").unwrap();
}

#[test]
fn a_completed_goal_leaves_only_its_summary() {
    let mut tree = GoalTree::new("Fix the parser");
    let mut h = History::default();
    h.user("Fix the parser");
    h.assistant(
        None,
        "Planning.",
        &[("c1", "goal", r#"{"add":"Find the bug, Fix it"}"#)],
    );
    apply(
        &mut tree,
        json!({"add": "Find the bug, Fix it", "focus": "1"}),
    );
    h.tool(None, "c1", "goal", "Added 2 goals.");
    h.assistant(
        Some("1"),
        "",
        &[("c2", "read_file", r#"{"path":"src/parser.rs"}"#)],
    );
    h.tool(Some("1"), "c2", "read_file", "1\tfn parse() { panic!() }");
    h.assistant(
        Some("1"),
        "",
        &[("c3", "goal", r#"{"done":"the bug is a panic in parse()"}"#)],
    );
    apply(
        &mut tree,
        json!({"done": "the bug is a panic in parse()", "focus": "2"}),
    );
    h.tool(Some("1"), "c3", "goal", "Goal 1 completed.");
    h.assistant(
        Some("2"),
        "Fixing now.",
        &[("c4", "edit_file", r#"{"path":"src/parser.rs"}"#)],
    );
    h.tool(Some("2"), "c4", "edit_file", "replaced 1 occurrence");

    check(
        &tree,
        &h,
        r#"
user: Fix the parser
assistant: Planning.
assistant call: goal({"add":"Find the bug, Fix it"}) [c1]
tool [c1]: Added 2 goals.
user: Goal 1 'Find the bug' completed: the bug is a panic in parse()
assistant: Fixing now.
assistant call: edit_file({"path":"src/parser.rs"}) [c4]
tool [c4]: replaced 1 occurrence
"#,
    );
    let v = view(
        &tree,
        &h,
        &ContextBudget::for_window(1_000_000),
        CompactionStrategy::default(),
    );
    assert_eq!(v.compacted_goals, vec!["1".to_owned()]);
    // The prompt, then the plan in a system message of its own.
    assert_eq!(
        v.messages[0],
        ChatMessage::system("You are a careful agent.")
    );
    let system = render_transcript(&v.messages[1..2]);
    assert!(system.starts_with("system: ## Current Plan"), "{system}");
    assert!(system.contains("## Current Plan"), "{system}");
    assert!(
        system.contains("→ the bug is a panic in parse()"),
        "{system}"
    );
}

#[test]
fn an_abandoned_goal_is_replaced_by_its_reason_before_the_next_goal() {
    let mut tree = GoalTree::new("Add caching");
    let mut h = History::default();
    h.user("Add caching");
    apply(&mut tree, json!({"add": "Use redis, Test", "focus": "1"}));
    h.assistant(
        Some("1"),
        "",
        &[("c1", "bash", r#"{"command":"redis-cli ping"}"#)],
    );
    h.tool(Some("1"), "c1", "bash", "exit 127: redis-cli: not found");
    h.assistant(
        Some("1"),
        "",
        &[("c2", "goal", r#"{"abandon":"no redis here"}"#)],
    );
    apply(&mut tree, json!({"abandon": "no redis here"}));
    apply(&mut tree, json!({"add": "Use an in-memory map"}));
    let number = tree
        .goals()
        .iter()
        .find(|g| g.description == "Use an in-memory map")
        .unwrap()
        .id
        .clone();
    let display = tree.display_number(&number).unwrap();
    apply(&mut tree, json!({"focus": display}));
    h.tool(Some("1"), "c2", "goal", "Goal abandoned.");
    h.assistant(Some(&number), "Switching approach.", &[]);

    check(
        &tree,
        &h,
        r#"
user: Add caching
user: Goal 'Use redis' abandoned: no redis here. Its work was removed from the context; the plan above shows what replaces it.
assistant: Switching approach.
"#,
    );
}

#[test]
fn finished_children_of_the_current_goal_are_compacted_but_the_branch_is_kept() {
    let mut tree = GoalTree::new("m");
    let mut h = History::default();
    h.user("m");
    apply(&mut tree, json!({"add": "Build", "focus": "1"}));
    h.assistant(Some("1"), "Splitting the work.", &[]);
    apply(&mut tree, json!({"add": "Part A, Part B", "focus": "1.1"}));
    h.assistant(Some("2"), "", &[("a", "write_file", "{}")]);
    h.tool(Some("2"), "a", "write_file", "wrote 10 bytes");
    apply(&mut tree, json!({"done": "A written", "focus": "1.2"}));
    h.assistant(Some("3"), "Now B.", &[]);

    check(
        &tree,
        &h,
        r#"
user: m
assistant: Splitting the work.
user: Goal 1.1 'Part A' completed: A written
assistant: Now B.
"#,
    );
}

#[test]
fn a_full_compaction_summary_hides_everything_before_it_but_the_task() {
    let tree = GoalTree::new("m");
    let mut h = History::default();
    h.user("the task");
    h.assistant(None, "", &[("a", "read_file", "{}")]);
    h.tool(None, "a", "read_file", "lots of text");
    h.compaction("We read the file; next, edit it.");
    h.assistant(None, "Editing.", &[]);
    check(
        &tree,
        &h,
        r#"
user: the task
user: We read the file; next, edit it.
assistant: Editing.
"#,
    );
    let v = view(
        &tree,
        &h,
        &ContextBudget::for_window(1_000_000),
        CompactionStrategy::default(),
    );
    assert_eq!(v.summarised_messages, 2);
}

#[test]
fn a_call_without_a_recorded_result_gets_an_interrupted_result() {
    let tree = GoalTree::new("m");
    let mut h = History::default();
    h.user("task");
    h.assistant(None, "", &[("a", "bash", "{}"), ("b", "read_file", "{}")]);
    h.tool(None, "a", "bash", "ok");
    h.tool(None, "zzz", "bash", "an orphan result");
    h.assistant(None, "Done.", &[]);
    check(
        &tree,
        &h,
        &format!(
            r#"
user: task
assistant call: bash({{}}) [a]
assistant call: read_file({{}}) [b]
tool [a]: ok
tool [b]: {INTERRUPTED_RESULT}
assistant: Done.
"#
        ),
    );
}

fn big(n: usize) -> String {
    vec!["w"; n].join(" ")
}

#[test]
fn prune_replaces_old_outputs_but_keeps_recent_turns_and_goal_outputs() {
    let tree = GoalTree::new("m");
    let mut h = History::default();
    h.user("task");
    for i in 0..8 {
        let id = format!("c{i}");
        h.assistant(None, "", &[(&id, "read_file", "{}")]);
        h.tool(None, &id, "read_file", &big(10_000));
    }
    h.assistant(None, "", &[("g", "goal", "{}")]);
    h.tool(None, "g", "goal", &big(10_000));
    h.assistant(None, "", &[("n1", "read_file", "{}")]);
    h.tool(None, "n1", "read_file", &big(30_000));
    h.assistant(None, "", &[("n2", "read_file", "{}")]);
    h.tool(None, "n2", "read_file", &big(30_000));

    let budget = ContextBudget::for_window(1_000_000);
    let v = view(&tree, &h, &budget, CompactionStrategy::default());
    let outputs: Vec<(String, bool)> = v
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool {
                tool_call_id,
                content,
                ..
            } => Some((tool_call_id.clone(), content.starts_with(PRUNED_MARKER))),
            _ => None,
        })
        .collect();
    // The last two turns (60k tokens) are protected without counting; the goal output is
    // never pruned; then 40k tokens of the newest older outputs (c7..c4) are protected.
    let pruned: Vec<&str> = outputs
        .iter()
        .filter(|(_, p)| *p)
        .map(|(id, _)| id.as_str())
        .collect();
    assert_eq!(pruned, vec!["c0", "c1", "c2", "c3"]);
    assert_eq!(v.pruned_outputs, 4);

    // Prune only runs when it frees at least PRUNE_MINIMUM tokens.
    let small = ContextBudget {
        prune_minimum: 50_000,
        ..budget.clone()
    };
    assert_eq!(
        view(&tree, &h, &small, CompactionStrategy::default()).pruned_outputs,
        0
    );
    assert_eq!(
        view(&tree, &h, &budget, CompactionStrategy::Nothing).pruned_outputs,
        0
    );
}

#[test]
fn the_estimate_decides_when_a_full_compaction_is_needed() {
    let tree = GoalTree::new("m");
    let mut h = History::default();
    h.user(&big(800));
    let v = view(
        &tree,
        &h,
        &ContextBudget::for_window(1_000),
        CompactionStrategy::default(),
    );
    assert!(v.needs_full_compaction, "{} tokens", v.estimated_tokens);
    let v = view(
        &tree,
        &h,
        &ContextBudget::for_window(10_000),
        CompactionStrategy::default(),
    );
    assert!(!v.needs_full_compaction);
}

#[test]
fn strategies_without_goal_compaction_keep_finished_goals() {
    let mut tree = GoalTree::new("m");
    let mut h = History::default();
    h.user("m");
    apply(&mut tree, json!({"add": "A", "focus": "1"}));
    h.assistant(Some("1"), "working on A", &[]);
    apply(&mut tree, json!({"done": "A done"}));
    let budget = ContextBudget::for_window(1_000_000);
    let v = view(&tree, &h, &budget, CompactionStrategy::PruneOnly);
    assert!(render_transcript(&v.messages).contains("working on A"));
    let v = view(&tree, &h, &budget, CompactionStrategy::GoalsAndPrune);
    assert!(!render_transcript(&v.messages).contains("working on A"));
}

#[test]
fn a_long_mission_is_cut_in_the_plan_and_points_to_the_task() {
    let short = GoalTree::new("Fix the bug");
    assert_eq!(plan_prompt(&short), short.to_prompt());
    let task = format!(
        "Refactor the parser. {}",
        "Details of the task. ".repeat(100)
    );
    let tree = GoalTree::new(task.clone());
    let plan = plan_prompt(&tree);
    let mission = plan.lines().nth(1).unwrap();
    assert!(
        mission.starts_with("**Mission**: Refactor the parser."),
        "{mission}"
    );
    assert!(mission.ends_with(MISSION_CUT_NOTE), "{mission}");
    assert!(
        mission.chars().count() < MISSION_PROMPT_CHARS + 100,
        "{mission}"
    );
    // The rest of the plan is as the goal tree writes it.
    let full = tree.to_prompt();
    assert_eq!(
        plan.lines().skip(2).collect::<Vec<_>>(),
        full.lines().skip(2).collect::<Vec<_>>()
    );
    // The task itself is kept whole as the first user message.
    let view = system_messages("Prompt", &tree);
    assert_eq!(view[1], ChatMessage::System(plan));
}

#[test]
fn a_picture_counts_by_the_rule_of_the_models_provider() {
    let tree = GoalTree::new("m");
    let mut h = History::default();
    h.user("look at this");
    let mut picture = agent_llm::ChatImage::new("id", "image/png", (1024, 1024), "AAAA".into());
    picture.name = Some("shot.png".into());
    let first = h.messages.last_mut().unwrap();
    agent_execution::meta::set_images(&mut first.metadata, &[picture]);
    let estimate = |budget: &ContextBudget| {
        let whole = view(&tree, &h, budget, CompactionStrategy::default()).estimated_tokens;
        let input = ContextInput {
            system_prompt: "You are a careful agent.",
            tree: &tree,
            messages: &h.messages,
            budget,
            strategy: CompactionStrategy::default(),
            estimate: &words,
        };
        let step = crate::IncrementalContext::new()
            .build(&input)
            .estimated_tokens;
        assert_eq!(whole, step, "both builders count alike");
        whole
    };
    let openai = estimate(&ContextBudget::for_model(128_000, "gpt-4o"));
    let anthropic = estimate(&ContextBudget::for_model(128_000, "claude-sonnet-4-5"));
    // 1024×1024: 85 + 170 × 4 tiles at OpenAI, 1,048,576 / 750 rounded up at Anthropic.
    assert_eq!(openai + 1399, anthropic + 765, "{openai} {anthropic}");
}
