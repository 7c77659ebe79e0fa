//! The doorbell: one `LISTEN` connection per store, turning the notifications that commits
//! send (`pg_notify` with the trace id, delivered when the transaction commits) into rings for
//! the watchers of that trace.
//!
//! A notification is only a hint: a watcher that hears it reads the events after its cursor,
//! so a lost notification (the connection dropped and came back) loses nothing as long as a
//! ring follows — and every time the connection starts listening, every watcher is rung.
//!
//! The connection is opened when the first doorbell is asked for, not before: a store nobody
//! watches through keeps no `LISTEN` session, so the server delivers none of its commits'
//! notifications back to it (each would wake a backend and this process on every commit). The
//! ring that follows the `LISTEN` covers the commits made while the connection was opening.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use agent_execution::Doorbell;
use futures::StreamExt;
use tokio::sync::broadcast;
use tokio_postgres::{AsyncMessage, Config, NoTls};

/// The channel commits notify on; the payload is the trace id.
pub(crate) const CHANNEL: &str = "agent_trace_events";

/// The channel the run queue notifies on (see `crate::queue`).
pub(crate) const RUNS_CHANNEL: &str = "agent_runs";

/// What every watcher hears after a reconnection (no trace id can be `*`).
const EVERYONE: &str = "*";

/// The receiving end of the notifications; dropping the store stops the connection.
pub(crate) struct Listener {
    rings: broadcast::Sender<String>,
    config: Config,
    channel: &'static str,
    /// The runtime the connection runs on (the one the store was opened on).
    runtime: tokio::runtime::Handle,
    /// The connection's task, once a doorbell was asked for.
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Listener {
    /// A listener on `channel`, which connects when the first doorbell is asked for (in the
    /// background, again after every disconnection). Must be called on a Tokio runtime.
    pub(crate) fn start(config: Config, channel: &'static str) -> Self {
        let (rings, _) = broadcast::channel(1024);
        Self {
            rings,
            config,
            channel,
            runtime: tokio::runtime::Handle::current(),
            task: Mutex::new(None),
        }
    }

    /// Starts the connection unless it runs already.
    fn ensure_started(&self) {
        let mut task = self.task.lock().unwrap_or_else(PoisonError::into_inner);
        if task.is_some() {
            return;
        }
        let (config, channel, sender) = (self.config.clone(), self.channel, self.rings.clone());
        *task = Some(self.runtime.spawn(async move {
            loop {
                if let Err(error) = listen(&config, channel, &sender).await {
                    tracing::warn!(%error, "listening for trace changes failed; retrying");
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }));
    }

    /// Rings whenever a notification with this payload arrives (for the trace channel: the
    /// trace may have changed), and each time the connection starts listening (the first time
    /// included).
    pub(crate) fn doorbell(&self, payload: &str) -> Doorbell {
        // Subscribed before the connection starts, so the ring after its `LISTEN` is heard.
        let receiver = self.rings.subscribe();
        self.ensure_started();
        let trace_id = payload.to_owned();
        futures::stream::unfold(
            (receiver, trace_id),
            |(mut receiver, trace_id)| async move {
                loop {
                    match receiver.recv().await {
                        Ok(payload) if payload == trace_id || payload == EVERYONE => break,
                        Ok(_) => {}
                        // Missed notifications may have been this trace's: ring.
                        Err(broadcast::error::RecvError::Lagged(_)) => break,
                        Err(broadcast::error::RecvError::Closed) => return None,
                    }
                }
                Some(((), (receiver, trace_id)))
            },
        )
        .boxed()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let task = self.task.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some(task) = task.take() {
            task.abort();
        }
    }
}

/// One connection's life: `LISTEN`, a ring for every watcher (commits made before it were not
/// heard), then forward notifications until it ends.
async fn listen(
    config: &Config,
    channel: &str,
    rings: &broadcast::Sender<String>,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(NoTls).await?;
    let (messages, mut received) = tokio::sync::mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        let mut stream = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = stream.next().await {
            if messages.send(message).is_err() {
                break;
            }
        }
    });
    let listened = client.batch_execute(&format!("LISTEN {channel}")).await;
    if let Err(error) = listened {
        driver.abort();
        return Err(error);
    }
    // Commits made before the connection listened (or while it was down) were not heard.
    let _ = rings.send(EVERYONE.to_owned());
    while let Some(message) = received.recv().await {
        match message {
            Ok(AsyncMessage::Notification(notification)) => {
                let _ = rings.send(notification.payload().to_owned());
            }
            Ok(_) => {}
            Err(error) => {
                driver.abort();
                return Err(error);
            }
        }
    }
    drop(client);
    Ok(())
}
