//! What the workspace's tests share, in one place:
//!
//! - [`mock_model`]: one mock model server speaking the OpenAI-compatible chat-completions and
//!   the Anthropic Messages wire formats (JSON and server-sent events), answering from a queue
//!   of scripted replies and recording every request;
//! - [`conformance`]: the `TraceStore` conformance suite, re-exported from `agent-execution`
//!   (where it lives behind the `conformance` feature, so store implementers outside the
//!   workspace can run it too);
//! - [`cli`]: a temporary environment for running the `agent` binary (workspace, trace folder,
//!   isolated home and configuration), and `agent serve` as a child process;
//! - [`pty`]: a pseudo-terminal with a terminal emulator, to test what a user sees and types;
//! - [`tmux`]: a pane of a real terminal multiplexer, for what stays in a terminal's scrollback;
//! - [`postgres`]: a throwaway PostgreSQL cluster on a free loopback port;
//! - [`llamacpp`]: real models (llama.cpp's `llama-server` running SmolLM2-135M or Gemma 3
//!   270M) on a free loopback port, and a recording proxy in front of them.
//! - [`shell`]: spellings of one shell command, for the approval rules' tests.
//! - [`fds`]: the open-file limits of a process, read and set.
//!
//! Only dev-dependencies and test crates may depend on this crate; no library or binary of the
//! workspace may. Its public API names no type of `agent-llm` (requests and replies are
//! `serde_json::Value`s and plain structs), because `agent-llm`'s own tests use it and a
//! dev-dependency cycle that shared types would give them two copies of each type.
// Test support: a broken precondition (a port that cannot be bound, a temporary folder that
// cannot be made) is a failed test, so it panics.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod cli;
pub mod fds;
pub mod llamacpp;
pub mod mock_model;
pub mod postgres;
pub mod pty;
pub mod shell;
pub mod tmux;

pub use agent_execution::conformance;

/// A real 3×2 PNG (red pixels, 73 bytes), for tests that attach or read a picture.
pub const TINY_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0x12, 0x16, 0xf1,
    0x4d, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x41, 0x0c, 0x70, 0x16, 0x00, 0x41, 0xd2, 0x05, 0xfb, 0x87, 0xf0, 0xb9, 0x48, 0x00, 0x00, 0x00,
    0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];
