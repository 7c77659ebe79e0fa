//! The end-to-end tests, in one test binary: runs on the filesystem store (killed and resumed),
//! explorations on disk, the runner against a misbehaving model server, and hostile HTTP
//! against a real `agent serve`, the crash matrix (the `agent` process killed at random moments)
//! and the fuzz targets on stable, several nodes and workers sharing a PostgreSQL store, and the
//! `agent` binary against a real model (llama.cpp's server on the CPU, `real_model`). The
//! browser test is a binary of its own: it runs alone (see `.config/nextest.toml`), and so do
//! the real model's tests, one at a time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod crash_matrix;
mod explore_fs;
mod fuzz_smoke;
mod hostile_http;
mod live_across;
mod nodes;
mod old_traces;
mod provider_faults;
mod real_model;
mod runner_fs;
