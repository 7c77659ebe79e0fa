//! Fuzz target: Goal tool commands (JSON lines, or generated from the bytes) applied to a plan.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_fuzz::targets::goal_command(data));
