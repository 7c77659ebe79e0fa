//! The API load check of `cargo xtask bench`: `GET /api/traces/{id}` throughput under a few
//! hundred concurrent requests, and live-watch fan-out (many WebSocket watchers of one trace
//! while it is written) with delivery lag from commit to receipt. Server and clients share
//! this machine, over a real loopback listener.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_api::{ApiConfig, AppState, Server};
use agent_execution::{InMemoryTraceStore, NewMessage, NewTrace, TraceStore};
use agent_goal::GoalCommand;
use agent_store_fs::{Durability, FileSystemTraceStore};
use anyhow::{Context, Result, bail};
use futures::StreamExt;
use serde::Deserialize;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;

/// The Markdown section of the API load check.
pub(crate) async fn section(quick: bool) -> Result<String> {
    let (requests, concurrency) = if quick { (2_000, 64) } else { (20_000, 256) };
    let (watchers, events) = if quick { (20, 1_000) } else { (100, 10_000) };
    let mut out = String::new();
    writeln!(out, "\n## API load\n")?;
    writeln!(
        out,
        "`GET /api/traces/{{id}}` of a trace with 20 goals, 200 messages and a sub-trace: {requests} requests from {concurrency} concurrent connections (HTTP/1.1 keep-alive) over loopback.\n"
    )?;
    writeln!(out, "| store | requests/s | p50 | p99 |")?;
    writeln!(out, "|---|---:|---:|---:|")?;
    let memory: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    out.push_str(&get_row("in-memory", memory, requests, concurrency).await?);
    let dir = tempfile::tempdir()?;
    let fs = FileSystemTraceStore::open(dir.path())?.with_durability(Durability::Buffered);
    out.push_str(&get_row("filesystem", Arc::new(fs), requests, concurrency).await?);

    writeln!(
        out,
        "\nLive watch fan-out: {watchers} WebSocket watchers of one trace (in-memory store) while {events} messages are recorded, one `message_added` event each. Lag is from just before the commit to the watcher parsing the event. Burst: the writer goes as fast as it can; paced: 1,000 events/s. The writer, the server and the watchers share one process and this machine's cores, so in a burst the writer gets only its share of the CPU: writes/s there is the whole machine's fan-out capacity divided by the watchers, not a limit the watchers impose (committing never waits for a watcher).\n"
    )?;
    writeln!(
        out,
        "| writer | watchers × events | writes/s | deliveries/s | lag p50 | lag p99 | lag max | gaps or duplicates |"
    )?;
    writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|")?;
    out.push_str(&fan_out_row(watchers, events, None).await?);
    let paced = (events / 10).max(100);
    out.push_str(&fan_out_row(watchers, paced, Some(Duration::from_millis(1))).await?);
    Ok(out)
}

/// A server over `store` on a free loopback port, stopped when the sender is dropped.
async fn start(store: Arc<dyn TraceStore>) -> Result<(String, oneshot::Sender<()>)> {
    let config = ApiConfig {
        port: 0,
        ..ApiConfig::default()
    };
    let state = AppState::builder(store).config(config).build()?;
    let server = Server::bind(state).await?;
    let base = server.url();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));
    Ok((base, stop))
}

async fn sample_trace(store: &Arc<dyn TraceStore>) -> Result<String> {
    let trace = store.create_trace(NewTrace::agent("Load")).await?;
    let id = trace.trace_id;
    let names: Vec<String> = (1..=20).map(|i| format!("Goal {i}")).collect();
    let plan = GoalCommand {
        add: Some(names.join(", ")),
        focus: Some("1".into()),
        ..GoalCommand::default()
    };
    store.apply_goal_command(&id, plan).await?;
    for i in 0..200 {
        let text = format!("Message {i}: {}", "lorem ipsum ".repeat(10));
        store
            .add_message(&id, NewMessage::user(text).goal("1").usage(100, 0.001))
            .await?;
    }
    store
        .create_trace(NewTrace::sub_trace(
            &id,
            Some("1".into()),
            "explore",
            "Side",
        ))
        .await?;
    Ok(id)
}

async fn get_row(
    name: &str,
    store: Arc<dyn TraceStore>,
    requests: usize,
    concurrency: usize,
) -> Result<String> {
    let id = sample_trace(&store).await?;
    let (base, _stop) = start(store).await?;
    agent_llm::ensure_crypto_provider();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(concurrency)
        .build()?;
    let url = format!("{base}/api/traces/{id}");
    // One warm-up request per connection-to-be.
    client.get(&url).send().await?.error_for_status()?;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for worker in 0..concurrency {
        let client = client.clone();
        let url = url.clone();
        let count = requests / concurrency + usize::from(worker < requests % concurrency);
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(count);
            for _ in 0..count {
                let sent = Instant::now();
                let response = client.get(&url).send().await?.error_for_status()?;
                response.bytes().await?;
                latencies.push(sent.elapsed());
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut latencies = Vec::with_capacity(requests);
    for task in tasks {
        latencies.extend(task.await??);
    }
    let elapsed = started.elapsed();
    latencies.sort();
    Ok(format!(
        "| {name} | {:.0} | {} | {} |\n",
        latencies.len() as f64 / elapsed.as_secs_f64(),
        fmt_duration(percentile(&latencies, 0.50)),
        fmt_duration(percentile(&latencies, 0.99)),
    ))
}

#[derive(Deserialize)]
struct Probe {
    event_id: u64,
    event: String,
    #[serde(default)]
    message: Option<ProbeMessage>,
}

#[derive(Deserialize)]
struct ProbeMessage {
    content: serde_json::Value,
}

struct Watched {
    lags: Vec<Duration>,
    disorder: usize,
    last_received: Instant,
}

async fn fan_out_row(watchers: usize, events: usize, pace: Option<Duration>) -> Result<String> {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let id = store
        .create_trace(NewTrace::agent("Fan-out"))
        .await?
        .trace_id;
    let (base, _stop) = start(store.clone()).await?;
    let url = format!(
        "{}/api/traces/{id}/watch?since_event_id=0",
        base.replacen("http", "ws", 1)
    );
    let origin = Instant::now();
    let mut tasks = Vec::new();
    let mut ready = Vec::new();
    for _ in 0..watchers {
        let (client, _) = tokio_tungstenite::connect_async(url.clone())
            .await
            .context("connecting a watcher")?;
        let (connected, is_ready) = oneshot::channel::<()>();
        ready.push(is_ready);
        tasks.push(tokio::spawn(watch_one(client, events, origin, connected)));
    }
    for is_ready in ready {
        is_ready.await.context("a watcher never got `connected`")?;
    }

    let started = Instant::now();
    let mut next = started;
    for _ in 0..events {
        if let Some(pace) = pace {
            next += pace;
            tokio::time::sleep_until(next.into()).await;
        }
        let stamp = origin.elapsed().as_nanos().to_string();
        store.add_message(&id, NewMessage::user(stamp)).await?;
    }
    let written = started.elapsed();
    let mut lags = Vec::with_capacity(watchers * events);
    let mut disorder = 0;
    let mut last = started;
    for task in tasks {
        let watched = tokio::time::timeout(Duration::from_secs(300), task)
            .await
            .context("a watcher did not receive every event within 300 s")???;
        lags.extend(watched.lags);
        disorder += watched.disorder;
        last = last.max(watched.last_received);
    }
    lags.sort();
    let delivered = lags.len();
    if delivered != watchers * events {
        bail!("{delivered} deliveries instead of {}", watchers * events);
    }
    Ok(format!(
        "| {} | {watchers} × {events} | {:.0} | {:.0} | {} | {} | {} | {disorder} |\n",
        if pace.is_some() { "paced" } else { "burst" },
        events as f64 / written.as_secs_f64(),
        delivered as f64 / (last - started).as_secs_f64(),
        fmt_duration(percentile(&lags, 0.50)),
        fmt_duration(percentile(&lags, 0.99)),
        fmt_duration(lags.last().copied().unwrap_or_default()),
    ))
}

/// Reads one watcher's events until it has `events` messages, timing each one.
async fn watch_one<S>(
    mut client: tokio_tungstenite::WebSocketStream<S>,
    events: usize,
    origin: Instant,
    connected: oneshot::Sender<()>,
) -> Result<Watched>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut connected = Some(connected);
    let mut watched = Watched {
        lags: Vec::with_capacity(events),
        disorder: 0,
        last_received: Instant::now(),
    };
    let mut last_id = 0;
    while watched.lags.len() < events {
        let Some(message) = client.next().await else {
            bail!("the watch closed after {} messages", watched.lags.len());
        };
        let Message::Text(text) = message? else {
            continue;
        };
        let probe: Probe = serde_json::from_str(&text)?;
        if probe.event == "connected" {
            if let Some(connected) = connected.take() {
                let _ = connected.send(());
            }
            continue;
        }
        if probe.event_id != last_id + 1 {
            watched.disorder += 1;
        }
        last_id = probe.event_id;
        if probe.event == "message_added"
            && let Some(stamp) = probe
                .message
                .and_then(|m| m.content.as_str().and_then(|s| s.parse::<u64>().ok()))
        {
            let now = origin.elapsed();
            watched
                .lags
                .push(now.saturating_sub(Duration::from_nanos(stamp)));
            watched.last_received = Instant::now();
        }
    }
    let _ = client.close(None).await;
    Ok(watched)
}

fn percentile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn fmt_duration(duration: Duration) -> String {
    let micros = duration.as_micros();
    if micros < 1_000 {
        format!("{micros} µs")
    } else if micros < 10_000_000 {
        format!("{:.1} ms", micros as f64 / 1_000.0)
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}
