//! Dependency records: what the orchestrator submitted and which edges it wired.
//!
//! Collected on the orchestration thread only when [`crate::ChipConfig::record_deps`] is on
//! (dep_gen): one [`TaskRecord`] per submit and one [`EdgeRecord`] per producer found, in
//! emission order (explicit deps, then creator / TensorMap edges in argument order). The
//! runner turns them into `deps.json` after the run; tests use them to check inference.

use crate::ffi::{ChipTensor, TensorArgType, MAX_TENSOR_DIMS};
use crate::task::TaskId;
use crate::tensor_map::{Overlap, ViewGeometry};

/// Where an edge came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeSource {
    /// `set_dependencies`.
    Explicit,
    /// The tensor's owner (creator) task.
    Creator,
    /// A TensorMap lookup.
    TensorMap,
}

impl EdgeSource {
    /// `explicit` / `creator` / `tensormap`.
    pub fn name(self) -> &'static str {
        match self {
            EdgeSource::Explicit => "explicit",
            EdgeSource::Creator => "creator",
            EdgeSource::TensorMap => "tensormap",
        }
    }
}

/// The part of a tensor view `deps.json` needs (a compact copy of a [`ChipTensor`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorView {
    /// Buffer base address.
    pub addr: u64,
    /// Buffer size in bytes.
    pub buffer_bytes: u64,
    /// Element offset of the view origin.
    pub start_offset: u64,
    /// Version tag.
    pub version: i32,
    /// Element type code.
    pub dtype: u8,
    /// Rank.
    pub ndims: u8,
    /// Extents.
    pub shapes: [u32; MAX_TENSOR_DIMS],
    /// Element strides.
    pub strides: [u32; MAX_TENSOR_DIMS],
}

impl TensorView {
    /// The view of a descriptor.
    pub fn of(t: &ChipTensor) -> TensorView {
        TensorView {
            addr: t.buffer.addr,
            buffer_bytes: t.buffer.size,
            start_offset: t.start_offset,
            version: t.version,
            dtype: t.dtype,
            ndims: t.dims() as u8,
            shapes: t.shapes,
            strides: t.strides,
        }
    }

    /// The dimensions in use.
    pub fn dims(&self) -> usize {
        self.ndims as usize
    }
}

/// One submitted task.
#[derive(Clone, Debug)]
pub struct TaskRecord {
    /// The task.
    pub id: TaskId,
    /// Submitted inside a manual scope.
    pub manual_scope: bool,
    /// `set_allow_early_resolve(true)`.
    pub early_dispatch: bool,
    /// Kernel ids of the AIC, AIV0, AIV1 slots.
    pub kernel_ids: [i32; 3],
    /// SPMD blocks.
    pub block_num: u32,
    /// An `alloc_tensors` pseudo-task.
    pub is_alloc: bool,
    /// Each tensor argument: its type and, except for runtime-allocated outputs, its view.
    pub args: Vec<(TensorArgType, Option<TensorView>)>,
}

/// One edge `pred → succ`.
#[derive(Clone, Debug)]
pub struct EdgeRecord {
    /// Producer.
    pub pred: TaskId,
    /// Consumer.
    pub succ: TaskId,
    /// Consumer argument index, −1 for explicit edges.
    pub arg: i32,
    /// Where it came from.
    pub source: EdgeSource,
    /// Whether the consumer waits for the producer (every edge but an explicit one whose
    /// kind lacks `DEP_WAIT`).
    pub wait: bool,
    /// Whether the consumer retains the producer (creator edges, and explicit ones whose
    /// kind has `DEP_RETAIN`).
    pub retain: bool,
    /// TensorMap overlap class.
    pub overlap: Option<Overlap>,
    /// The consumer's view (creator and TensorMap edges).
    pub consumer: Option<TensorView>,
    /// The producer's registered region (TensorMap edges).
    pub producer: Option<ViewGeometry>,
}

/// Everything recorded during one run.
#[derive(Clone, Debug, Default)]
pub struct DepLog {
    /// Tasks in submission order (allocation tasks included, flagged).
    pub tasks: Vec<TaskRecord>,
    /// Edges in emission order.
    pub edges: Vec<EdgeRecord>,
}

impl DepLog {
    /// `(pred, succ)` pairs without duplicates, in first-emission order.
    pub fn pairs(&self) -> Vec<(TaskId, TaskId)> {
        let mut out: Vec<(TaskId, TaskId)> = Vec::new();
        for e in &self.edges {
            if !out.contains(&(e.pred, e.succ)) {
                out.push((e.pred, e.succ));
            }
        }
        out
    }
}
