//! Sending a streamed reply: its pieces, each after the reply's pause, then its end (a clean
//! one, a hang, a reset, or a piece repeated forever), counting a client that drops the body
//! before it ends.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::Bytes;
use futures::Stream;

use super::Shared;
use super::reply::{End, StreamShape};

/// Counts a disconnect when dropped before [`Watch::finish`].
struct Watch {
    shared: Arc<Shared>,
    finished: bool,
}

impl Watch {
    /// The body was sent to its end.
    fn finish(&mut self) {
        self.finished = true;
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if !self.finished {
            self.shared.disconnects.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// The state of a streamed body being sent.
struct Sending {
    pieces: std::vec::IntoIter<Bytes>,
    shape: StreamShape,
    watch: Watch,
}

/// The body stream of a streamed reply: its pieces, each after a pause, then (after one more)
/// its end.
pub(super) fn stream(
    pieces: Vec<Bytes>,
    shape: StreamShape,
    shared: Arc<Shared>,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let sending = Sending {
        pieces: pieces.into_iter(),
        shape,
        watch: Watch {
            shared,
            finished: false,
        },
    };
    futures::stream::unfold(sending, |mut sending| async move {
        if let Some(piece) = sending.pieces.next() {
            wait(sending.shape.pause).await;
            return Some((Ok(piece), sending));
        }
        // The end comes a pause after the last piece too, so that piece reaches the client.
        if !sending.watch.finished {
            wait(sending.shape.pause).await;
        }
        match &sending.shape.end {
            End::Finish => {
                sending.watch.finish();
                None
            }
            End::Hang => futures::future::pending().await,
            End::Reset => {
                sending.watch.finish();
                sending.shape.end = End::Finish;
                let error = std::io::Error::other("the mock model server broke the connection");
                Some((Err(error), sending))
            }
            End::Repeat(piece) => {
                let piece = piece.clone();
                Some((Ok(piece), sending))
            }
        }
    })
}

async fn wait(pause: Duration) {
    if !pause.is_zero() {
        tokio::time::sleep(pause).await;
    }
}
