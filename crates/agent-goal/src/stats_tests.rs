//! Tests of the stats module.
