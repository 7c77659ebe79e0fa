//! The doorbell: one `LISTEN` connection per store, turning the notifications that commits
//! send (`pg_notify` with the trace id, delivered when the transaction commits) into rings for
//! the watchers of that trace.
//!
//! A notification is only a hint: a watcher that hears it reads the events after its cursor,
//! so a lost notification (the connection dropped and came back) loses nothing as long as a
//! ring follows — and each time the connection starts listening every watcher is rung. The
//! connection is opened by the first doorbell asked for.

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

/// What every watcher hears once the connection listens (no trace id can be `*`).
const EVERYONE: &str = "*";

/// The receiving end of the notifications; dropping the store stops the connection.
///
/// The connection is opened when the first doorbell is asked for, not before: a process that
/// never watches (a CLI run, a worker's store) keeps no listening backend, so its commits'
/// notifications wake no one on the server or here.
pub(crate) struct Listener {
    rings: broadcast::Sender<String>,
    config: Config,
    channel: &'static str,
    runtime: tokio::runtime::Handle,
    /// The listening task, once a doorbell started it.
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Listener {
    /// Prepares to listen on `channel`; the connection is made (in the background, again after
    /// every disconnection) when the first doorbell is asked for.
    pub(crate) fn new(config: Config, channel: &'static str) -> Self {
        let (rings, _) = broadcast::channel(1024);
        Self {
            rings,
            config,
            channel,
            runtime: tokio::runtime::Handle::current(),
            task: Mutex::new(None),
        }
    }

    /// Starts the listening task unless it runs already.
    fn ensure_listening(&self) {
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
    /// trace may have changed), and after every reconnection.
    ///
    /// A doorbell asked for before the connection listens rings once it does: what was
    /// committed before that was not heard.
    pub(crate) fn doorbell(&self, payload: &str) -> Doorbell {
        let receiver = self.rings.subscribe();
        self.ensure_listening();
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
        if let Some(task) = self.task.get_mut().unwrap_or_else(PoisonError::into_inner) {
            task.abort();
        }
    }
}

/// One connection's life: `LISTEN`, ring everyone, then forward notifications until it ends.
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
    // Commits made before the connection listened (first, or again after a disconnection)
    // were not heard.
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
