//! Crash test: a child process appends messages and goal updates and prints an acknowledgement
//! line after every write the store returned; the parent kills it with SIGKILL at random moments,
//! then checks that the trace opens, every acknowledged write is there, event ids have no holes,
//! every mirror file is rebuilt, and appending continues.
//!
//! The child is this test binary run again with `CRASH_CHILD` set, executing `crash_child`.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use agent_execution::{
    AssistantContent, NewMessage, NewTrace, ToolCall, TraceStore, WriteOp, WriteOutput,
};
use agent_goal::GoalCommand;
use agent_store_fs::{Durability, FileSystemTraceStore};
use agent_test_support::conformance::assert_consistent;

const ENV: &str = "CRASH_CHILD";
const KILLS: u64 = 24;

fn store(base: &Path, durability: Durability) -> FileSystemTraceStore {
    FileSystemTraceStore::open(base)
        .unwrap()
        .with_durability(durability)
}

fn durability(name: &str) -> Durability {
    if name == "fsync" {
        Durability::Fsync
    } else {
        Durability::Buffered
    }
}

/// The child: writes until it is killed. Run only when `CRASH_CHILD=<base>|<trace>|<round>|<mode>`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_child() {
    let Ok(spec) = std::env::var(ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.split('|').collect();
    let (base, trace, round, mode) = (parts[0], parts[1], parts[2], parts[3]);
    let store = store(Path::new(base), durability(mode));
    for step in 0.. {
        let text = format!("r{round}-{step}");
        if step % 3 == 2 {
            // A step: an assistant message, a goal update and a tool result in one commit.
            let add = GoalCommand {
                add: Some(format!("goal {text}")),
                ..GoalCommand::default()
            };
            let ops = vec![
                WriteOp::AddMessage(NewMessage::assistant(AssistantContent::new(
                    Some(text.clone()),
                    vec![ToolCall::new("c", "goal", "{}")],
                ))),
                WriteOp::Goal(add),
                WriteOp::AddMessage(NewMessage::tool("c", "goal", text.clone())),
            ];
            let outputs = store.batch(trace, ops).await.unwrap();
            for output in outputs {
                match output {
                    WriteOutput::Message(message) => {
                        println!("ACK message {} {text}", message.message_id)
                    }
                    WriteOutput::GoalOutcome(_) => println!("ACK goal goal {text}"),
                    _ => {}
                }
            }
        } else {
            let message = store
                .add_message(trace, NewMessage::user(text.clone()))
                .await
                .unwrap();
            println!("ACK message {} {text}", message.message_id);
        }
    }
}

/// A tiny deterministic generator for the kill delays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_sigkill_at_random_moments() {
    let base = tempfile::tempdir().unwrap();
    let trace = store(base.path(), Durability::Buffered)
        .create_trace(NewTrace::agent("crash test"))
        .await
        .unwrap()
        .trace_id;
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rng = Rng(seed);
    let exe = std::env::current_exe().unwrap();
    let mut acked_messages: Vec<(String, String)> = Vec::new();
    let mut acked_goals: Vec<String> = Vec::new();
    let mut killed_with_acks = 0;
    // At least KILLS rounds, and more (up to three times as many) until enough kills landed
    // after writes: on a loaded machine a child may be killed before its first write.
    for round in 0..KILLS * 3 {
        if round >= KILLS && killed_with_acks >= 20 {
            break;
        }
        let mode = if round % 2 == 0 { "buffered" } else { "fsync" };
        let spec = format!("{}|{trace}|{round}|{mode}", base.path().display());
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "crash::crash_child",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(ENV, spec)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (lines_tx, lines) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if line.starts_with("ACK ") && lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Kill at a random moment: sometimes before the child has written anything, mostly after
        // a random number of acknowledged writes plus a random delay.
        let wanted = rng.below(40);
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = 0;
        while seen < wanted && Instant::now() < deadline {
            if lines.recv_timeout(Duration::from_millis(50)).is_ok() {
                seen += 1;
            }
        }
        std::thread::sleep(Duration::from_micros(rng.below(3000)));
        child.kill().unwrap();
        child.wait().unwrap();
        reader.join().unwrap();
        // Everything acknowledged before the kill, including lines still in the pipe.
        let mut this_round = 0;
        while let Ok(line) = lines.try_recv() {
            this_round += 1;
            let mut parts = line.splitn(4, ' ');
            let (_, kind, first, rest) = (parts.next(), parts.next(), parts.next(), parts.next());
            match kind {
                Some("message") => {
                    acked_messages.push((first.unwrap().into(), rest.unwrap().into()))
                }
                Some("goal") => acked_goals.push(format!("{} {}", first.unwrap(), rest.unwrap())),
                _ => panic!("unexpected line {line}"),
            }
        }
        if seen + this_round > 0 {
            killed_with_acks += 1;
        }
        verify(base.path(), &trace, &acked_messages, &acked_goals, seed).await;
    }
    assert!(
        killed_with_acks >= 20,
        "only {killed_with_acks} kills happened after writes"
    );
    // Appending continues after the last crash.
    let store = store(base.path(), Durability::Fsync);
    let message = store
        .add_message(&trace, NewMessage::user("after all crashes"))
        .await
        .unwrap();
    assert_eq!(message.sequence, acked_max_sequence(&store, &trace).await);
}

async fn acked_max_sequence(store: &FileSystemTraceStore, trace: &str) -> u64 {
    store
        .get_trace(trace)
        .await
        .unwrap()
        .unwrap()
        .total_messages
}

async fn verify(
    base: &Path,
    trace: &str,
    messages: &[(String, String)],
    goals: &[String],
    seed: u64,
) {
    let store = Arc::new(store(base, Durability::Buffered));
    assert_consistent(&*store, trace).await;
    let stored = store.get_trace_messages(trace).await.unwrap();
    for (id, text) in messages {
        let message = stored
            .iter()
            .find(|m| &m.message_id == id)
            .unwrap_or_else(|| panic!("acknowledged message {id} is missing (seed {seed})"));
        assert_eq!(message.content.text(), text, "seed {seed}");
    }
    let tree = store.get_goal_tree(trace).await.unwrap().unwrap();
    let descriptions: HashSet<_> = tree
        .goals()
        .iter()
        .map(|g| g.description.as_str())
        .collect();
    for goal in goals {
        assert!(
            descriptions.contains(goal.as_str()),
            "acknowledged goal {goal:?} is missing (seed {seed})"
        );
    }
    // A write through this store proves the trace can be appended to; it also cuts off any
    // unfinished tail the kill left.
    store
        .add_message(trace, NewMessage::system("checked"))
        .await
        .unwrap();
    // The kill may land between a commit's log append and the writing of its message files:
    // the new writer rebuilds them, and after a flush every file holds its message.
    store.flush().await.unwrap();
    let dir = base.join(trace);
    for message in store.get_trace_messages(trace).await.unwrap() {
        let file = dir
            .join("messages")
            .join(format!("{}.json", message.message_id));
        let bytes = std::fs::read(&file)
            .unwrap_or_else(|e| panic!("{} not rebuilt: {e} (seed {seed})", file.display()));
        let stored: agent_execution::Message = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(stored, message, "seed {seed}");
    }
    let meta: agent_execution::Trace =
        serde_json::from_slice(&std::fs::read(dir.join("meta.json")).unwrap()).unwrap();
    assert_eq!(
        meta,
        store.get_trace(trace).await.unwrap().unwrap(),
        "seed {seed}"
    );
}
