//! Benchmarks of the filesystem trace store (written below).
fn main() {}
