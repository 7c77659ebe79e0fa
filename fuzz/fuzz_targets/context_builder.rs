//! Fuzz target: A recorded trace made from the bytes, turned into the model's view by build_context.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_fuzz::targets::context_builder(data));
