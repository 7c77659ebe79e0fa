//! The model a person chose for a trace's next runs (`/model NAME` in a session), recorded in the
//! trace's `model_settings`: later runs of the trace (a resume, `--continue`) read it there and
//! reach that model unless their caller names another. [`Trace::model`](crate::Trace::model)
//! stays the model that answered last.

use crate::store::{StoreError, TraceStore};
use crate::trace::TraceUpdate;

/// Records `model` as the model of `trace_id`'s next runs, keeping the rest of how the model is
/// reached (provider, base URL, window); a trace that is not there is left alone.
///
/// # Errors
///
/// The store could not read or update the trace.
pub async fn record_model(
    store: &dyn TraceStore,
    trace_id: &str,
    model: &str,
) -> Result<(), StoreError> {
    let Some(trace) = store.get_trace(trace_id).await? else {
        return Ok(());
    };
    let mut settings = trace.model_settings.unwrap_or_default();
    settings.model = Some(model.to_owned());
    let update = TraceUpdate {
        model_settings: Some(settings),
        ..TraceUpdate::default()
    };
    store.update_trace(trace_id, update).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::InMemoryTraceStore;
    use crate::store::TraceStore;
    use crate::trace::{ModelSettings, NewTrace};

    #[tokio::test]
    async fn the_chosen_model_replaces_the_recorded_one_and_keeps_the_rest() {
        let store = InMemoryTraceStore::new();
        let settings = ModelSettings {
            provider: Some("openai".into()),
            model: Some("first".into()),
            base_url: Some("http://127.0.0.1:9/v1".into()),
            ..ModelSettings::default()
        };
        let trace = store
            .create_trace(NewTrace::agent("t").with_model_settings(settings.clone()))
            .await
            .unwrap();
        super::record_model(&store, &trace.trace_id, "second")
            .await
            .unwrap();
        let read = store.get_trace(&trace.trace_id).await.unwrap().unwrap();
        let expected = ModelSettings {
            model: Some("second".into()),
            ..settings
        };
        assert_eq!(read.model_settings, Some(expected));
        super::record_model(&store, "no-such-trace", "x")
            .await
            .unwrap();
    }
}
