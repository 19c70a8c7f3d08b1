//! The runner: what both front ends (the `pto` command line and the `pypto` Python package)
//! call. It turns a [`RunConfig`] into a runtime configuration, reads a build directory,
//! compiles and runs it, and validates its outputs.
//!
//! - [`config`]: `RunConfig` and the diagnostics switches, validated once.
//! - [`replay`](mod@replay): run an existing `build_output/<dir>/` ([`replay()`]).
//! - [`build`]: compile and load a build directory's program.
//! - [`inputs`]: bind `data/in/*.npy` to the orchestration signature.
//! - [`l3`]: the host engine of L3 (several chips) runs.
//! - [`demo`]: the bundled examples.
//! - [`log_level`]: PyPTO's log level names as `tracing` filters.
//!
//! **API boundary:** this crate's public API is the contract of the front ends; they add
//! argument parsing and presentation only.

#![deny(missing_docs)]

pub mod bench;
pub mod bench_stats;
pub mod build;
pub mod chip_process;
pub mod config;
pub mod demo;
pub mod dfx_output;
pub mod dfx_publish;
pub mod dfx_switches;
pub mod error;
pub mod execute;
pub mod inputs;
pub mod l3;
pub mod lifecycle;
pub mod log_level;
pub mod predicted;
pub mod replay;
pub mod two_pass;

pub use bench::{benchmark, benchmark_predicted, PredictedBenchmark};
pub use bench_stats::BenchmarkStats;
pub use build::{load, load_for, CompiledBuild};
pub use config::{DfxOptions, RingValue, RunConfig};
pub use error::{ErrorKind, RunnerError};
pub use execute::ExecuteOutcome;
pub use inputs::BoundParam;
pub use pto_runtime::{Interrupt, Platform};
pub use pto_toolchain::binary_cache::runtime_revision;
pub use replay::{replay, replay_with, OutputCheck, ReplayOptions, ReplayOutcome};
