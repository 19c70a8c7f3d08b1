//! Atomics for the lock-free protocols that are model-checked with loom.
//!
//! Under `--cfg loom` these are loom's instrumented types, so the `loom` tests in
//! [`crate::task`] explore every interleaving of the protocol functions; otherwise they are
//! the standard ones at no cost.

#[cfg(loom)]
pub use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
#[cfg(not(loom))]
pub use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
