//! The end-to-end tests, in one test binary: runs on the filesystem store (killed and resumed),
//! explorations on disk, the runner against a misbehaving model server, and hostile HTTP
//! against a real `agent serve`. The crash matrix, the browser test and the fuzz smoke test
//! are test binaries of their own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod explore_fs;
mod hostile_http;
mod provider_faults;
mod runner_fs;
