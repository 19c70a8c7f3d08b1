//! Dependency records: what the orchestrator submitted and which edges it wired.
//!
//! Collected on the orchestration thread only when [`crate::ChipConfig::record_deps`] is on
//! (dep_gen): one [`TaskRecord`] per submit and one [`EdgeRecord`] per producer found, in
//! emission order (explicit deps, then creator / TensorMap edges in argument order). The
//! runner turns them into `deps.json` after the run; tests use them to check inference.
//!
//! The log holds what Simpler's dep_gen replay records, independent of timing: that replay
//! never retires a producer, so every edge is logged whether or not its producer has
//! retired by the time of the submit. Creator and explicit edges need nothing for that; the
//! TensorMap edges come from [`DepRecorder`]'s own replay map, which sees every region
//! written in the run (the live map forgets retired writers, which is what wiring needs).

use crate::ffi::{ChipTensor, TensorArgType, MAX_TENSOR_DIMS};
use crate::task::TaskId;
use crate::tensor_map::{Overlap, TensorMap, ViewGeometry};

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

/// dep_gen's recorder: the [`DepLog`] and the replay TensorMap its TensorMap edges come from.
pub struct DepRecorder {
    /// What has been recorded so far.
    pub log: DepLog,
    /// Every region written in the run, never retired (grows as needed).
    replay: TensorMap,
}

impl DepRecorder {
    /// An empty recorder whose replay map is hashed for `capacity` entries and grows its
    /// entry pool from 256 as regions are written.
    pub fn new(capacity: usize) -> DepRecorder {
        DepRecorder {
            log: DepLog::default(),
            replay: TensorMap::growing(capacity.max(64), 256),
        }
    }

    /// Logs a TensorMap edge to `succ`'s argument `arg` (view `consumer`) from every writer
    /// of an overlapping region in the run, newest first; with `supersede` (INOUT) the
    /// covered regions are forgotten, as in the live map.
    pub fn lookup(&mut self, consumer: &ChipTensor, supersede: bool, succ: TaskId, arg: i32) {
        let view = TensorView::of(consumer);
        let edges = &mut self.log.edges;
        self.replay.lookup(
            &ViewGeometry::of(consumer),
            supersede,
            &|_| false,
            &mut |hit| {
                edges.push(EdgeRecord {
                    pred: hit.producer,
                    succ,
                    arg,
                    source: EdgeSource::TensorMap,
                    wait: true,
                    retain: false,
                    overlap: Some(hit.overlap),
                    consumer: Some(view),
                    producer: Some(hit.geometry),
                })
            },
        );
    }

    /// Records `producer` as the latest writer of `geometry` (step 4 of a submit).
    pub fn register_output(&mut self, geometry: ViewGeometry, producer: TaskId) {
        self.replay.insert_growing(geometry, producer);
    }
}
