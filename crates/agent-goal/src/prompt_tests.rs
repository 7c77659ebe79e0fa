//! Tests of the prompt module.
