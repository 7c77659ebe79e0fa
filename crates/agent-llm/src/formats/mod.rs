//! Wire formats: how the chat types map to each provider's JSON, separate from the transport.

pub(crate) mod anthropic;
pub(crate) mod openai;
