//! Tests of the explore module.
