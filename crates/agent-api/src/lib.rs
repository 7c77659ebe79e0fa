//! The HTTP and WebSocket service over a trace store: REST endpoints, live watch of a run, the
//! web viewer's static files and the OpenAPI document.
//!
//! It will take an `Arc<dyn TraceStore>` and never name a concrete store. Nothing is served yet:
//! the endpoints arrive with the API work.
