//! The fuzz targets of the workspace, for `cargo fuzz` (see `fuzz/README.md`). Their logic is
//! in `targets.rs`, which the stable-Rust driver of `tests/it/fuzz_smoke.rs` shares.

pub mod targets;
