//! The doorbell: one `LISTEN` connection per store, turning the notifications that commits
//! send (`pg_notify` with the trace id, delivered when the transaction commits) into rings for
//! the watchers of that trace.
//!
//! A notification is only a hint: a watcher that hears it reads the events after its cursor,
//! so a lost notification (the connection dropped and came back) loses nothing as long as a
//! ring follows — and after a reconnection every watcher is rung.

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
    task: tokio::task::JoinHandle<()>,
}

impl Listener {
    /// Starts listening on `channel` (connecting in the background, again after every
    /// disconnection).
    pub(crate) fn start(config: Config, channel: &'static str) -> Self {
        let (rings, _) = broadcast::channel(1024);
        let sender = rings.clone();
        let task = tokio::spawn(async move {
            let mut first = true;
            loop {
                if let Err(error) = listen(&config, channel, &sender, first).await {
                    tracing::warn!(%error, "listening for trace changes failed; retrying");
                }
                first = false;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
        Self { rings, task }
    }

    /// Rings whenever a notification with this payload arrives (for the trace channel: the
    /// trace may have changed), and after every reconnection.
    pub(crate) fn doorbell(&self, payload: &str) -> Doorbell {
        let receiver = self.rings.subscribe();
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
        self.task.abort();
    }
}

/// One connection's life: `LISTEN`, then forward notifications until it ends.
async fn listen(
    config: &Config,
    channel: &str,
    rings: &broadcast::Sender<String>,
    first: bool,
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
    if !first {
        // Commits made while the connection was down were not heard.
        let _ = rings.send(EVERYONE.to_owned());
    }
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
