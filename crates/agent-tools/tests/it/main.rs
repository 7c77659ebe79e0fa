//! The integration tests of `agent-tools`, in one test binary: the built-in tools as the model
//! calls them through the registry, on real files and processes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bash;
mod deny_spellings;
mod files;
mod hostile;
mod registry;
mod sandbox;
mod search;
mod shells;
#[cfg(feature = "web")]
mod web;
