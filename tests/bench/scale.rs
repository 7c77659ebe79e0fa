//! Store scale: a trace of many messages on the filesystem store, built one message per commit,
//! then opened cold, listed and read by goal — each operation next to reading or writing the
//! same bytes raw, in the same run.

use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_execution::{NewMessage, NewTrace, StoreError, TraceFilter, TraceStore};
use agent_goal::GoalCommand;
use agent_store_fs::{Durability, FileSystemTraceStore};
use anyhow::{Result, ensure};

use crate::overhead::{commits, raw_append};
use crate::stats::Sample;

/// One operation over several runs: our time, the raw time, their ratio per run.
pub(crate) struct ScaleRow {
    /// What was done.
    pub(crate) name: String,
    /// What the raw baseline does.
    pub(crate) raw_name: &'static str,
    /// How many items one run handles (messages appended or read), for a rate.
    pub(crate) items: usize,
    /// Our time per run, in seconds.
    pub(crate) ours: Sample,
    /// The baseline's time per run, in seconds.
    pub(crate) raw: Sample,
    /// Our time over the baseline's, per run.
    pub(crate) ratio: Sample,
}

impl ScaleRow {
    fn new(name: String, raw_name: &'static str, items: usize) -> Self {
        Self {
            name,
            raw_name,
            items,
            ours: Sample::default(),
            raw: Sample::default(),
            ratio: Sample::default(),
        }
    }

    fn push(&mut self, ours: Duration, raw: Duration) {
        self.ours.push(ours.as_secs_f64());
        self.raw.push(raw.as_secs_f64());
        self.ratio
            .push(ours.as_secs_f64() / raw.as_secs_f64().max(1e-9));
    }
}

/// The message text: about 230 bytes, like a short assistant or tool message.
fn text(step: usize) -> String {
    format!("Step {step}: looked at the file and found the function that needs a change. ")
        .repeat(3)
}

/// Builds, opens and reads a trace of `messages` messages over `goals` goals, `runs` times; with
/// `fsync_appends` more messages appended in fsync mode to the built trace.
pub(crate) async fn measure(
    messages: usize,
    goals: usize,
    fsync_appends: usize,
    runs: usize,
) -> Result<Vec<ScaleRow>> {
    let mut append = ScaleRow::new(
        format!(
            "append {} messages, one commit each, buffered",
            crate::stats::count(messages as f64)
        ),
        "write the same event lines to one file, one write per commit",
        messages,
    );
    let mut append_fsync = ScaleRow::new(
        format!("append {fsync_appends} more, one commit each, fsync"),
        "the same, with one fdatasync per commit",
        fsync_appends,
    );
    let mut open = ScaleRow::new(
        "cold open (new store instance, first read of the trace)".into(),
        "read events.jsonl into memory",
        messages,
    );
    let mut list = ScaleRow::new(
        "list traces (new store instance)".into(),
        "read every meta.json",
        1,
    );
    let mut all = ScaleRow::new(
        "shared: all messages of the trace (as the runner, the API and ACP read them)".into(),
        "read the same messages' JSON from one file",
        messages,
    );
    let per_goal = messages / goals;
    let mut by_goal = ScaleRow::new(
        format!("shared: messages of one goal ({per_goal})"),
        "read the same messages' JSON from one file",
        per_goal,
    );
    let mut all_owned = ScaleRow::new(
        "copies: all messages of the trace (`get_trace_messages`; new store instance)".into(),
        "read the same messages' JSON from one file",
        messages,
    );
    let mut by_goal_owned = ScaleRow::new(
        format!("copies: messages of one goal ({per_goal})"),
        "read the same messages' JSON from one file",
        per_goal,
    );
    for run in 0..runs {
        eprintln!(
            "agent-bench: store scale, {messages} messages (run {} of {runs})",
            run + 1
        );
        let dir = tempfile::tempdir()?;
        let base = dir.path();

        // Append: one message per commit, as the runner records them.
        let store = FileSystemTraceStore::open(base)?.with_durability(Durability::Buffered);
        let id = store.create_trace(NewTrace::agent("big")).await?.trace_id;
        let names: Vec<String> = (1..=goals).map(|g| format!("goal {g}")).collect();
        let add = GoalCommand {
            add: Some(names.join(", ")),
            ..GoalCommand::default()
        };
        store.apply_goal_command(&id, add).await?;
        let log_path = base.join(&id).join("events.jsonl");
        let before = std::fs::metadata(&log_path)?.len() as usize;
        let started = Instant::now();
        for step in 0..messages {
            let goal = (step % goals + 1).to_string();
            store
                .add_message(&id, NewMessage::user(text(step)).goal(goal).usage(10, 0.0))
                .await?;
        }
        let ours = started.elapsed();
        store.flush().await?;
        drop(store);
        let log = std::fs::read(&log_path)?;
        let appended = commits(log.get(before..).unwrap_or_default());
        ensure!(
            appended.len() == messages,
            "{} commits for {messages} appends",
            appended.len()
        );
        let raw = raw_append(
            &appended,
            Durability::Buffered,
            &base.join("raw-append.log"),
        )?;
        append.push(ours, raw);

        // Cold open: a new store instance reads the trace for the first time.
        let store = FileSystemTraceStore::open(base)?.with_durability(Durability::Buffered);
        let started = Instant::now();
        let trace = store.get_trace(&id).await?;
        let ours = started.elapsed();
        ensure!(
            trace.is_some_and(|t| t.total_messages as usize == messages),
            "the opened trace does not count {messages} messages"
        );
        open.push(ours, read_file(&log_path)?);

        // List traces from a new store instance.
        let lister = FileSystemTraceStore::open(base)?;
        let started = Instant::now();
        let listed = lister.list_traces(&TraceFilter::default()).await?;
        let ours = started.elapsed();
        ensure!(
            listed.len() == 1,
            "listed {} traces instead of 1",
            listed.len()
        );
        let started = Instant::now();
        let mut metas = 0;
        for entry in std::fs::read_dir(base)? {
            let meta = entry?.path().join("meta.json");
            if meta.is_file() {
                metas += std::hint::black_box(std::fs::read(&meta)?).len();
            }
        }
        let raw = started.elapsed();
        ensure!(metas > 0, "no meta.json to read");
        list.push(ours, raw);
        drop(lister);

        // All messages, then one goal's, on the opened store: shared, as the runner and the API
        // read them.
        let (found, ours) =
            timed_read(store.get_trace_messages_shared(&id), messages, "messages").await?;
        let plain = base.join("all.jsonl");
        std::fs::write(&plain, jsonl(&found)?)?;
        all.push(ours, read_file(&plain)?);
        drop(found);

        let goal_read = store.get_messages_by_goal_shared(&id, "7");
        let (found, ours) = timed_read(goal_read, per_goal, "messages of goal 7").await?;
        let plain = base.join("goal-7.jsonl");
        std::fs::write(&plain, jsonl(&found)?)?;
        by_goal.push(ours, read_file(&plain)?);
        // Nothing of the first instance stays in memory while the second one reads.
        drop(found);
        drop(store);

        // The same two reads as copies of the caller's own (for a caller that changes or writes
        // them, as `agent import` does), from a new store instance opened the same way.
        let store = FileSystemTraceStore::open(base)?.with_durability(Durability::Buffered);
        store.get_trace(&id).await?;
        let all_read = store.get_trace_messages(&id);
        let (_found, ours) = timed_read(all_read, messages, "copied messages").await?;
        all_owned.push(ours, read_file(&base.join("all.jsonl"))?);
        let goal_read = store.get_messages_by_goal(&id, "7");
        let (_, ours) = timed_read(goal_read, per_goal, "copied messages of goal 7").await?;
        by_goal_owned.push(ours, read_file(&base.join("goal-7.jsonl"))?);
        drop(store);

        // Fsync appends to the big trace; the first append (which opens the trace) is not timed.
        let store = Arc::new(FileSystemTraceStore::open(base)?.with_durability(Durability::Fsync));
        store
            .add_message(&id, NewMessage::user(text(0)).goal("1"))
            .await?;
        let before = std::fs::metadata(&log_path)?.len() as usize;
        let started = Instant::now();
        for step in 0..fsync_appends {
            store
                .add_message(&id, NewMessage::user(text(step)).goal("2").usage(10, 0.0))
                .await?;
        }
        let ours = started.elapsed();
        drop(store);
        let log = std::fs::read(&log_path)?;
        let appended = commits(log.get(before..).unwrap_or_default());
        let raw = raw_append(&appended, Durability::Fsync, &base.join("raw-fsync.log"))?;
        append_fsync.push(ours, raw);
    }
    Ok(vec![
        append,
        append_fsync,
        open,
        list,
        all,
        by_goal,
        all_owned,
        by_goal_owned,
    ])
}

/// Times one read of messages and checks that it found `expected` of them.
async fn timed_read<T>(
    read: impl std::future::Future<Output = Result<Vec<T>, StoreError>>,
    expected: usize,
    what: &str,
) -> Result<(Vec<T>, Duration)> {
    let started = Instant::now();
    let found = read.await?;
    let elapsed = started.elapsed();
    ensure!(
        found.len() == expected,
        "{} {what} instead of {expected}",
        found.len()
    );
    Ok((found, elapsed))
}

fn jsonl<T: serde::Serialize>(items: &[T]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for item in items {
        serde_json::to_writer(&mut out, item)?;
        out.push(b'\n');
    }
    Ok(out)
}

/// Reads a whole file into memory, timed.
fn read_file(path: &Path) -> Result<Duration> {
    let started = Instant::now();
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    std::hint::black_box(&bytes);
    Ok(started.elapsed())
}
