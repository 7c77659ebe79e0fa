//! Fuzz target: An events.jsonl as found on disk, opened, read and appended to by the filesystem store.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_fuzz::targets::events_log(data));
