//! The factory: one runner for every door, with the same settings.
