//! Another model for a session's next turns (`/model NAME` in the full-screen UI): the runner's
//! agents ask it from now on — main traces, and the profiles that name no model of their own —
//! and the trace records it as the model its later runs reach (`model_settings.model`), so that
//! resuming it elsewhere asks the same model. A run going on keeps the model it started with.

use agent_execution::trace::TraceUpdate;

use crate::error::RunError;
use crate::runner::AgentRunner;

impl AgentRunner {
    /// Has the next runs ask `model`, and records it on `trace_id` (the session's trace, if it
    /// has one yet) for its later runs. An empty name changes nothing.
    ///
    /// # Errors
    ///
    /// The store could not read or update the trace.
    pub async fn switch_model(&self, model: &str, trace_id: Option<&str>) -> Result<(), RunError> {
        let model = model.trim();
        if model.is_empty() {
            return Ok(());
        }
        self.engine.set_model(model);
        self.rebuild_agent();
        let Some(trace_id) = trace_id else {
            return Ok(());
        };
        let store = self.store();
        let Some(trace) = store.get_trace(trace_id).await? else {
            return Ok(());
        };
        let root = self.options();
        let mut settings = trace.model_settings.unwrap_or_default();
        settings.model = Some(model.to_owned());
        settings.provider = settings.provider.or_else(|| root.provider.clone());
        settings.base_url = settings.base_url.or_else(|| root.base_url.clone());
        let update = TraceUpdate {
            model_settings: Some(settings),
            ..TraceUpdate::default()
        };
        store.update_trace(trace_id, update).await?;
        Ok(())
    }
}
