//! The `pto` viewer subcommands as a user runs them: outputs, messages and
//! exit codes, on small hand-written inputs and on a real run's artifacts.

#[path = "common/mod.rs"]
mod common;

#[path = "cli/viewers.rs"]
mod viewers;
