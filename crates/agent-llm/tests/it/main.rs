//! The integration tests of `agent-llm`, in one test binary: the scripted client, the HTTP
//! providers against the workspace's mock model server (each module behind the feature of its
//! provider), and both providers against the third-party `fakellm` server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(feature = "anthropic")]
mod anthropic;
#[cfg(all(feature = "openai", feature = "anthropic"))]
mod fakellm;
#[cfg(feature = "openai")]
mod llamacpp;
#[cfg(feature = "openai")]
mod openai;
#[cfg(all(feature = "openai", feature = "anthropic"))]
mod reasoning;
#[cfg(feature = "openai-responses")]
mod responses;
mod scripted;
#[cfg(all(feature = "anthropic", feature = "openai-responses"))]
mod web_search;
#[cfg(feature = "openai")]
mod windows;

/// A retry policy with tiny delays for tests.
#[cfg(feature = "http")]
fn fast_retry(max_attempts: u32) -> agent_llm::RetryPolicy {
    agent_llm::RetryPolicy::default()
        .with_max_attempts(max_attempts)
        .with_delays(
            std::time::Duration::from_millis(1),
            std::time::Duration::from_millis(5),
        )
}
