//! The model clients' notices (`agent_llm::NOTICE_TARGET`: a retry, streaming turned off) as
//! plain lines on stderr, `agent: <sentence>`, unless `-v` or `RUST_LOG` asks for the logs.

/// A `tracing` layer that writes the model clients' notices ([`agent_llm::NOTICE_TARGET`])
/// as plain lines, `agent: <sentence>`, through `write`.
pub(crate) struct Notices<W> {
    write: W,
}

impl<W: Fn(Vec<u8>) + Send + Sync + 'static> Notices<W> {
    /// The layer, taking only the notices' events.
    pub(crate) fn layer<S>(write: W) -> impl tracing_subscriber::Layer<S>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        use tracing_subscriber::Layer;
        Notices { write }.with_filter(tracing_subscriber::filter::filter_fn(|meta| {
            meta.target() == agent_llm::NOTICE_TARGET
        }))
    }
}

impl<S: tracing::Subscriber, W: Fn(Vec<u8>) + Send + Sync + 'static> tracing_subscriber::Layer<S>
    for Notices<W>
{
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Message(String);
        impl tracing::field::Visit for Message {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    self.0 = format!("{value:?}");
                }
            }
        }
        let mut message = Message(String::new());
        event.record(&mut message);
        (self.write)(format!("agent: {}\n", message.0).into_bytes());
    }
}
