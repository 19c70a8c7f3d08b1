//! The simulated Ascend chip: it runs a compiled orchestration and its kernels with
//! Simpler's dependency semantics.
//!
//! - [`Program`] loads the orchestration shared object and the kernels ([`program`]).
//! - [`run()`](fn@run) executes it once on a fresh chip described by a [`ChipConfig`] ([`run`](mod@run)).
//! - The orchestration calls back through the C function table in [`ops`], which drives the
//!   [`orchestrator`]: submit, scopes, TensorMap ([`tensor_map`]) and rings.
//! - [`chip`] holds the shared state and the worker pool that executes tasks on logical cores;
//!   [`exec`] runs one subtask (with the PTO-ISA simulation context of [`sim_abi`]) and
//!   [`gang`] runs the cores of a MIX block or a sync-start task at the same time.
//!
//! A key design decision is that logical cores are scheduling slots, not threads (see
//! [`platform`]); another is that the whole submit / dispatch / completion path is
//! lock-free except for per-task fanout locks and allocation-free in steady state: task
//! slots, TensorMap entries and queue cells are preallocated and reused.
//!
//! This crate knows nothing of build directories, command lines or Python: it takes a
//! typed configuration and host tensors.

#![deny(missing_docs)]

pub mod chip;
pub mod clock;
pub mod config;
pub mod cores;
pub mod deps;
pub mod dfx;
pub mod dtype;
pub mod error;
pub mod exec;
mod fanin;
pub mod ffi;
pub mod gang;
mod last_len;
pub mod memory;
pub mod monitor;
pub mod ops;
pub mod orchestrator;
pub mod perf;
pub mod platform;
pub mod program;
pub mod ring_census;
pub mod run;
pub mod shared_gm;
pub mod sim_abi;
pub mod sync;
pub mod task;
pub mod tensor_map;
#[cfg(test)]
mod test_rng;

pub use config::{ChipConfig, Interrupt, RingOverride, RingOverrides, RingSizes};
pub use deps::{DepLog, EdgeRecord, EdgeSource, TaskRecord};
pub use dfx::DfxConfig;
pub use error::{ErrorCode, RuntimeError};
pub use monitor::{ExecMonitor, Monitor, ThreadRole};
pub use platform::{CoreType, Platform};
pub use program::{KernelSpec, Program, ProgramSpec};
pub use run::{run, ArgDirection, DfxData, HostTensor, OrchArg, RunReport};
pub use task::TaskId;
