//! Tests of the hook points: which messages a `UserPromptSubmit` hook lets through, and the
//! fields of the compaction events.

use std::sync::Mutex;

use super::*;

/// Hooks that record what they get and block every prompt that mentions `secret`.
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<Value>>,
}

#[async_trait]
impl Hooks for Recorder {
    async fn fire(&self, input: HookInput) -> Option<String> {
        let json = input.to_json();
        self.seen.lock().unwrap().push(json.clone());
        let prompt = json["prompt"].as_str().unwrap_or_default();
        prompt.contains("secret").then(|| "no secrets".to_owned())
    }
}

#[tokio::test]
async fn queued_messages_a_hook_refuses_are_left_out() {
    let hooks = Recorder::default();
    let site = HookSite::new(Some(&hooks), "t-1", Path::new("/w"));
    let messages = vec!["one".to_owned(), "a secret".to_owned(), "two".to_owned()];
    assert_eq!(site.admitted(messages.clone()).await, ["one", "two"]);
    assert_eq!(hooks.seen.lock().unwrap().len(), 3);
    assert_eq!(
        site.prompt("a secret").await.unwrap_err(),
        "a UserPromptSubmit hook refused the prompt: no secrets"
    );
    // The control: without hooks every message goes through.
    let none = HookSite::new(None, "t-1", Path::new("/w"));
    assert_eq!(none.admitted(messages.clone()).await, messages);
}

#[tokio::test]
async fn compaction_events_carry_the_trigger_and_the_tokens() {
    let hooks = Recorder::default();
    let site = HookSite::new(Some(&hooks), "t-1", Path::new("/w"));
    site.compacting(false, 900).await.after(120).await;
    site.compacting(true, 50).await;
    let seen = hooks.seen.lock().unwrap();
    assert_eq!(seen[0]["hook_event_name"], "PreCompact");
    assert_eq!(seen[0]["trigger"], "auto");
    assert_eq!(seen[0]["tokens_before"], 900);
    assert_eq!(seen[0]["custom_instructions"], "");
    assert_eq!(seen[1]["hook_event_name"], "PostCompact");
    assert_eq!(seen[1]["tokens_after"], 120);
    assert_eq!(seen[1]["session_id"], "t-1");
    assert_eq!(seen[2]["trigger"], "manual");
}
