//! The integration tests of `agent-tools`, in one test binary: the built-in tools as the model
//! calls them through the registry, on real files and processes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Commands run in the workspace-write sandbox by default: a build without it refuses them.
#[cfg(feature = "sandbox")]
mod bash;
// Bash itself runs each spelling; the rules must refuse or ask whatever the build reads.
mod deny_spellings;
mod files;
#[cfg(feature = "sandbox")]
mod hostile;
mod registry;
#[cfg(feature = "sandbox")]
mod sandbox;
mod search;
#[cfg(feature = "sandbox")]
mod shells;
#[cfg(feature = "web")]
mod web;
