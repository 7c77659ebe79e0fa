//! The API load check of `cargo xtask bench`: `GET /api/traces/{id}` throughput under a few
//! hundred concurrent requests, and live-watch fan-out (many WebSocket watchers of one trace
//! while it is written) with delivery lag from commit to receipt and loss, which must be zero.
//! Server and clients share this machine, over a real loopback listener.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_api::{ApiConfig, AppState, Server};
use agent_execution::{InMemoryTraceStore, NewMessage, NewTrace, TraceStore};
use agent_goal::GoalCommand;
use agent_store_fs::{Durability, FileSystemTraceStore};
use anyhow::{Context, Result};
use futures::StreamExt;
use serde::Deserialize;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;

use crate::stats::{Sample, count, percentile, seconds};

/// Sizes of the API load check.
pub(crate) struct ApiSizes {
    /// GET requests per run.
    pub(crate) requests: usize,
    /// Concurrent connections sending them.
    pub(crate) concurrency: usize,
    /// WebSocket watchers of the fan-out.
    pub(crate) watchers: usize,
    /// Events written in the burst run of the fan-out.
    pub(crate) events: usize,
}

impl ApiSizes {
    /// The sizes of a full or a quick run.
    pub(crate) fn new(quick: bool) -> Self {
        if quick {
            Self {
                requests: 2_000,
                concurrency: 64,
                watchers: 20,
                events: 1_000,
            }
        } else {
            Self {
                requests: 20_000,
                concurrency: 256,
                watchers: 100,
                events: 10_000,
            }
        }
    }
}

/// GET throughput of one store over several runs.
pub(crate) struct GetRow {
    /// The store.
    pub(crate) name: &'static str,
    /// Requests per second, per run.
    pub(crate) per_second: Sample,
    /// Median latency per run, in seconds.
    pub(crate) p50: Sample,
    /// 99th percentile latency per run, in seconds.
    pub(crate) p99: Sample,
}

/// Fan-out of one writer pace over several runs.
pub(crate) struct FanOutRow {
    /// `burst` or `paced`.
    pub(crate) writer: &'static str,
    /// Watchers.
    pub(crate) watchers: usize,
    /// Events written per run.
    pub(crate) events: usize,
    /// Events written per second, per run.
    pub(crate) writes: Sample,
    /// Events received per second by all watchers together, per run.
    pub(crate) deliveries: Sample,
    /// Median lag per run, in seconds.
    pub(crate) p50: Sample,
    /// 99th percentile lag per run, in seconds.
    pub(crate) p99: Sample,
    /// Largest lag per run, in seconds.
    pub(crate) max: Sample,
    /// Events never received, over all runs and watchers.
    pub(crate) lost: usize,
    /// Events received out of order or twice, over all runs and watchers.
    pub(crate) disorder: usize,
}

/// Everything the API load check measured.
pub(crate) struct ApiResults {
    /// Its sizes.
    pub(crate) sizes: ApiSizes,
    /// GET throughput per store.
    pub(crate) get: Vec<GetRow>,
    /// Fan-out per writer pace.
    pub(crate) fan_out: Vec<FanOutRow>,
}

/// Runs the API load check `runs` times.
pub(crate) async fn measure(quick: bool, runs: usize) -> Result<ApiResults> {
    let sizes = ApiSizes::new(quick);
    let mut get = Vec::new();
    for name in ["in-memory", "filesystem"] {
        let mut row = GetRow {
            name,
            per_second: Sample::default(),
            p50: Sample::default(),
            p99: Sample::default(),
        };
        for run in 0..runs {
            eprintln!(
                "agent-bench: API GET, {name} store (run {} of {runs})",
                run + 1
            );
            let dir = tempfile::tempdir()?;
            let store: Arc<dyn TraceStore> = if name == "in-memory" {
                Arc::new(InMemoryTraceStore::new())
            } else {
                Arc::new(
                    FileSystemTraceStore::open(dir.path())?.with_durability(Durability::Buffered),
                )
            };
            let (per_second, p50, p99) = get_run(store, sizes.requests, sizes.concurrency).await?;
            row.per_second.push(per_second);
            row.p50.push(p50.as_secs_f64());
            row.p99.push(p99.as_secs_f64());
        }
        get.push(row);
    }
    let paced = (sizes.events / 10).max(100);
    let mut fan_out = Vec::new();
    for (writer, events, pace) in [
        ("burst", sizes.events, None),
        ("paced", paced, Some(Duration::from_millis(1))),
    ] {
        let mut row = FanOutRow {
            writer,
            watchers: sizes.watchers,
            events,
            writes: Sample::default(),
            deliveries: Sample::default(),
            p50: Sample::default(),
            p99: Sample::default(),
            max: Sample::default(),
            lost: 0,
            disorder: 0,
        };
        for run in 0..runs {
            eprintln!(
                "agent-bench: API fan-out, {writer}, {} watchers × {events} events (run {} of {runs})",
                sizes.watchers,
                run + 1
            );
            fan_out_run(&mut row, pace).await?;
        }
        fan_out.push(row);
    }
    Ok(ApiResults {
        sizes,
        get,
        fan_out,
    })
}

/// The Markdown section of the API load check.
pub(crate) fn section(results: &ApiResults) -> Result<String> {
    let ApiSizes {
        requests,
        concurrency,
        watchers,
        events,
    } = results.sizes;
    let mut out = String::new();
    writeln!(out, "\n## 4. Live API\n")?;
    writeln!(
        out,
        "`GET /api/traces/{{id}}` of a trace with 20 goals, 200 messages and a sub-trace: {} requests from {concurrency} concurrent connections (HTTP/1.1 keep-alive) over loopback, client and server in one process on this machine.\n",
        count(requests as f64)
    )?;
    writeln!(out, "| store | requests/s | latency p50 | latency p99 |")?;
    writeln!(out, "|---|---:|---:|---:|")?;
    for row in &results.get {
        writeln!(
            out,
            "| {} | {} | {} | {} |",
            row.name,
            row.per_second.show(count),
            row.p50.show(seconds),
            row.p99.show(seconds)
        )?;
    }
    writeln!(
        out,
        "\nLive watch fan-out: {watchers} WebSocket watchers of one trace (in-memory store) while {} messages are recorded, one `message_added` event each. Lag is from just before the commit to the watcher parsing the event. Burst: the writer goes as fast as it can; paced: 1,000 events/s. The writer, the server and the watchers share one process and this machine's cores; the writer is a task on the server's runtime, as a run is (a run started by the API, a worker or the CLI is a task the runner spawns), and a write after which a watcher has {make_way} or more events left to receive yields once to the runtime, so in a burst the writer stays a few events ahead of the watchers and gets only its share of the CPU: writes/s there is the whole machine's fan-out capacity divided by the watchers, not a limit the watchers impose (committing never waits for a watcher). The watchers are tokio-tungstenite clients with a 16 KiB read buffer (the library's default 128 KiB buffer is zeroed before every read, a cost of the test client that a browser does not have). Lost counts events a watcher never received (it gives up after {} s without one); out of order counts gaps and duplicates of event ids. Both must be zero, or the benchmark fails.\n",
        count(events as f64),
        IDLE.as_secs(),
        make_way = agent_execution::feed::MAKE_WAY_AFTER,
    )?;
    writeln!(
        out,
        "| writer | watchers × events | writes/s | deliveries/s | lag p50 | lag p99 | lag max | lost | out of order |"
    )?;
    writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")?;
    for row in &results.fan_out {
        writeln!(
            out,
            "| {} | {} × {} | {} | {} | {} | {} | {} | {} | {} |",
            row.writer,
            row.watchers,
            count(row.events as f64),
            row.writes.show(count),
            row.deliveries.show(count),
            row.p50.show(seconds),
            row.p99.show(seconds),
            row.max.show(seconds),
            row.lost,
            row.disorder
        )?;
    }
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

/// One GET run: requests per second, p50 and p99 latency.
async fn get_run(
    store: Arc<dyn TraceStore>,
    requests: usize,
    concurrency: usize,
) -> Result<(f64, Duration, Duration)> {
    let id = sample_trace(&store).await?;
    let (base, _stop) = start(store).await?;
    agent_llm::ensure_crypto_provider();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(concurrency)
        .build()?;
    let url = format!("{base}/api/traces/{id}");
    // One warm-up request.
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
    Ok((
        latencies.len() as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
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

/// One fan-out run, added to `row`.
async fn fan_out_run(row: &mut FanOutRow, pace: Option<Duration>) -> Result<()> {
    let (watchers, events) = (row.watchers, row.events);
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
        let (client, _) =
            tokio_tungstenite::connect_async_with_config(url.clone(), Some(client_config()), false)
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
    // A task on the runtime, as every run is (the runner spawns its runs), not this function's
    // own thread, which would give the writer a thread of its own beside the runtime's workers.
    let writer = tokio::spawn(async move {
        let mut next = started;
        for _ in 0..events {
            if let Some(pace) = pace {
                next += pace;
                tokio::time::sleep_until(next.into()).await;
            }
            let stamp = origin.elapsed().as_nanos().to_string();
            store.add_message(&id, NewMessage::user(stamp)).await?;
        }
        anyhow::Ok(started.elapsed())
    });
    let written = writer.await??;
    let mut lags = Vec::with_capacity(watchers * events);
    let mut last = started;
    for task in tasks {
        let watched = task.await??;
        lags.extend(watched.lags);
        row.disorder += watched.disorder;
        last = last.max(watched.last_received);
    }
    lags.sort();
    let delivered = lags.len();
    row.lost += (watchers * events).saturating_sub(delivered);
    row.writes.push(events as f64 / written.as_secs_f64());
    row.deliveries
        .push(delivered as f64 / (last - started).as_secs_f64().max(1e-9));
    row.p50.push(percentile(&lags, 0.50).as_secs_f64());
    row.p99.push(percentile(&lags, 0.99).as_secs_f64());
    row.max
        .push(lags.last().copied().unwrap_or_default().as_secs_f64());
    Ok(())
}

/// The watchers' WebSocket settings: a 16 KiB read buffer. The client library zeroes its whole
/// read buffer (128 KiB by default) before every read, which in a burst to a hundred watchers in
/// this process took a fifth of the machine's time: a cost of this test client, which a browser
/// does not have, taken from the server's share of the cores.
fn client_config() -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default().read_buffer_size(16 * 1024)
}

/// How long a watcher waits for its next event before it counts the rest as lost.
const IDLE: Duration = Duration::from_secs(30);

/// Reads one watcher's events until it has `events` messages, timing each one, or until the
/// watch closes or stays quiet for [`IDLE`].
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
        // A watch that closes or goes quiet leaves the rest of the events counted as lost.
        let Ok(Some(message)) = tokio::time::timeout(IDLE, client.next()).await else {
            break;
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
