//! Fuzz target: A streamed model response, in chunks, through the OpenAI and Anthropic decoders.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_fuzz::targets::sse_stream(data));
