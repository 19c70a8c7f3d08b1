//! Predicted device time for PTO programs on the simulator.
//!
//! The simulator's host clock measures how long the CPU takes to *simulate* a kernel, which
//! says little about the chip. This crate predicts the chip's time instead:
//!
//! 1. [`latency`]: each PTO-ISA instruction's pipe and cycles from its shape, element type
//!    and buffers, with PTO-ISA's published parameters ([`params`]);
//! 2. [`core`]: a subtask's instruction trace scheduled on its core's pipes (MTE2, MTE1,
//!    CUBE, VEC, FIXP, MTE3, scalar) with `set_flag` / `wait_flag` / `pipe_barrier` and data
//!    dependencies → total and per-pipe busy cycles;
//! 3. [`graph`]: the task graph scheduled on the platform's cores → makespan and a per-core
//!    timeline.
//!
//! Pure computation over plain data: the runtime feeds it traces, the runner the graph.
//! What is modelled and what is not: `docs/TIMING.md`.

pub mod core;
pub mod error;
pub mod event;
pub mod graph;
pub mod latency;
pub mod op;
pub mod params;
pub mod sink;
pub mod validation;

pub use crate::core::{CoreScheduler, CoreTiming, PipeSpan, SubtaskTiming};
pub use crate::error::ParamError;
pub use crate::event::{Event, Instr, Operand, RawEvent, RawTrace};
pub use crate::latency::{Model, Unmodelled};
pub use crate::op::{DType, Op, Pipe, N_PIPES};
pub use crate::params::{Arch, FormulaTable};
pub use crate::sink::TraceSink;
