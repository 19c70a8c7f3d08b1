//! L3 (several chips): the host engine that runs a distributed build's chip dispatches.
//!
//! - [`engine`]: chip processes (one per device id), shared-memory regions, the READY-order
//!   FIFO per chip, failures and shutdown; [`engine::ChipTransport`] is the seam another
//!   transport (MPI across hosts) would implement.
//! - [`tensor_map`]: the host TensorMap (footprint overlap, tags, access rules).
//! - [`comm`]: comm domains in shared memory and the per-rank `CommContext`.
//! - [`python_host`]: `pto replay` on an L3 build, handed to the installed `pypto`.
//!
//! The host orchestration itself (PyPTO's generated `host_orch.py`) is Python; the
//! `pypto` package drives this engine through its native module.

pub mod comm;
pub mod engine;
pub mod python_host;
pub mod tensor_map;

pub use engine::{ChipProgram, ChipTransport, DispatchFailure, Engine, LocalChip, TensorArg};
pub use tensor_map::{Access, Footprint, Tag, TensorMap};
