//! Tests of the command module.
