//! Dependency records: what the orchestrator submitted and which edges it wired.
//!
//! Collected on the orchestration thread only when [`crate::ChipConfig::record_deps`] is on
//! (dep_gen): one [`TaskRecord`] per submit and one [`EdgeRecord`] per producer found, in
//! emission order (explicit deps, then creator / TensorMap edges in argument order). The
//! runner turns them into `deps.json` after the run; tests use them to check inference.
//!
//! The log holds what Simpler's dep_gen replay records, independent of timing: that replay
//! never retires a producer, so every edge is logged whether or not its producer has
//! retired by the time of the submit. Creator and explicit edges need nothing for that; for
//! the TensorMap edges the orchestrator's map keeps retired writers while recording is on
//! ([`keeping`](crate::tensor_map::TensorMap::keeping)) and reports them flagged, so wiring skips what the log keeps.

use std::ops::Range;

use crate::ffi::{ChipTensor, TensorArgType, MAX_TENSOR_DIMS};
use crate::last_len::LastLen;
use crate::task::TaskId;
use crate::tensor_map::{Hit, Overlap, ViewGeometry};

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
    /// Its tensor arguments: this range of [`DepLog::args`] ([`DepLog::args_of`]).
    pub args: Range<u32>,
}

/// One tensor argument of a task: its type and, except for runtime-allocated outputs, its
/// view (an index into [`DepLog::views`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgRecord {
    /// The argument type.
    pub ty: TensorArgType,
    /// Index of its view in [`DepLog::views`]; `None` for a runtime-allocated output.
    pub view: Option<u32>,
}

/// The producer's registered region of a TensorMap edge (the part of a
/// [`ViewGeometry`] `deps.json` writes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// Element offset of the origin.
    pub start_offset: u64,
    /// Rank.
    pub ndims: u8,
    /// Extents.
    pub shapes: [u32; MAX_TENSOR_DIMS],
    /// Element strides.
    pub strides: [u32; MAX_TENSOR_DIMS],
}

impl Region {
    /// The region of a registered geometry.
    pub fn of(g: &ViewGeometry) -> Region {
        Region {
            start_offset: g.start_offset,
            ndims: g.ndims,
            shapes: g.shapes,
            strides: g.strides,
        }
    }
}

/// One edge `pred → succ`.
#[derive(Clone, Copy, Debug)]
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
    /// The consumer's view, an index into [`DepLog::views`] (creator and TensorMap edges).
    pub consumer: Option<u32>,
    /// The producer's registered region, an index into [`DepLog::regions`] (TensorMap
    /// edges).
    pub producer: Option<u32>,
}

/// Everything recorded during one run.
///
/// Flat, so that a submit allocates nothing of its own: the tasks' arguments are one array
/// (each task owns a range of it), and views and producer regions are kept in tables the
/// arguments and edges index, a value that recurs soon stored once (the same view recurs
/// as an argument, the edges' consumer view and later tasks' arguments; an edge's consumer
/// view is its argument's index). Which repeats share an entry is a matter of size only:
/// every index names the value recorded.
#[derive(Clone, Debug, Default)]
pub struct DepLog {
    /// Tasks in submission order (allocation tasks included, flagged).
    pub tasks: Vec<TaskRecord>,
    /// The tasks' arguments, in task order.
    pub args: Vec<ArgRecord>,
    /// Edges in emission order.
    pub edges: Vec<EdgeRecord>,
    /// The views, in first-recorded order (a repeat the interner still remembered is not
    /// stored again).
    pub views: Vec<TensorView>,
    /// The producer regions, likewise.
    pub regions: Vec<Region>,
    view_ids: Interner<TensorView>,
    region_ids: Interner<Region>,
    /// Where the arguments of the task being submitted start in `args`.
    open: u32,
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

    /// The arguments of `task`.
    pub fn args_of(&self, task: &TaskRecord) -> &[ArgRecord] {
        self.args
            .get(task.args.start as usize..task.args.end as usize)
            .unwrap_or_default()
    }

    /// View `index` of [`Self::views`] (`None` when out of range).
    pub fn view(&self, index: Option<u32>) -> Option<&TensorView> {
        index.and_then(|i| self.views.get(i as usize))
    }

    /// Region `index` of [`Self::regions`] (`None` when out of range).
    pub fn region(&self, index: Option<u32>) -> Option<&Region> {
        index.and_then(|i| self.regions.get(i as usize))
    }

    /// Starts the arguments of the next task: what an unfinished task (a submit that
    /// failed after [`Self::push_arg`]) left behind is dropped.
    pub fn open_task(&mut self) {
        let end = self.tasks.last().map_or(0, |t| t.args.end);
        self.args.truncate(end as usize);
        self.open = end;
    }

    /// Records the next argument of the open task; `t` is `None` for a runtime-allocated
    /// output.
    pub fn push_arg(&mut self, ty: TensorArgType, t: Option<&ChipTensor>) {
        let view = t.map(|t| self.view_ids.intern(&mut self.views, TensorView::of(t)));
        self.args.push(ArgRecord { ty, view });
    }

    /// The view of argument `arg` of the open task.
    pub fn open_arg_view(&self, arg: usize) -> Option<u32> {
        self.args.get(self.open as usize + arg).and_then(|a| a.view)
    }

    /// Closes the open task: `task` owns the arguments pushed since [`Self::open_task`].
    pub fn close_task(&mut self, mut task: TaskRecord) {
        task.args = self.open..self.args.len() as u32;
        self.tasks.push(task);
    }

    fn intern_region(&mut self, g: &ViewGeometry) -> u32 {
        self.region_ids.intern(&mut self.regions, Region::of(g))
    }
}

/// Each value's index in a table, the same index for a value that recurs while it is
/// still remembered: a direct-mapped cache of [`RECENT`] buckets holds the last index
/// seen per bucket of [`Interned::key`]. A view mostly recurs soon after it was first
/// recorded (a producer's output as its consumers' input and their edges' consumer
/// view), so this finds nearly every repeat (paged attention at 100k tasks: 199 bytes per
/// task in `deps.bin` against 198 with an exact table of every view) while touching
/// 32 KiB; the exact table's random loads, in tables that outgrow the CPU cache, were
/// most of the argument recording there. A value that recurs after its bucket was taken
/// by another is appended again: readers resolve indices to values, so that changes the
/// file's size only, never what it says.
#[derive(Clone, Debug)]
struct Interner<T> {
    /// Per bucket, the last index placed there and the tag of its value ([`home`]).
    recent: Vec<(u32, u32)>,
    _of: std::marker::PhantomData<T>,
}

/// Buckets of [`Interner`]'s cache (a power of two).
const RECENT: usize = 4096;

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            recent: Vec::new(),
            _of: std::marker::PhantomData,
        }
    }
}

const EMPTY: u32 = u32::MAX;

/// A value the [`Interner`] can hold: equality, and a hash of the fields that tell
/// values apart in practice (the rest is settled by the equality).
trait Interned: Copy + Eq {
    fn key(&self) -> u64;
}

/// FxHash's mixing step (the input is the run's own records, not an adversary's).
use pto_base::idmap::mix;

impl Interned for TensorView {
    #[inline]
    fn key(&self) -> u64 {
        let h = mix(mix(0, self.addr), self.start_offset);
        let h = mix(
            h,
            u64::from(self.version as u32) | u64::from(self.ndims) << 32,
        );
        let h = mix(
            h,
            u64::from(self.shapes[0]) | u64::from(self.shapes[1]) << 32,
        );
        mix(
            h,
            u64::from(self.strides[0]) | u64::from(self.strides[1]) << 32,
        )
    }
}

impl Interned for Region {
    #[inline]
    fn key(&self) -> u64 {
        let h = mix(mix(0, self.start_offset), u64::from(self.ndims));
        let h = mix(
            h,
            u64::from(self.shapes[0]) | u64::from(self.shapes[1]) << 32,
        );
        mix(
            h,
            u64::from(self.strides[0]) | u64::from(self.strides[1]) << 32,
        )
    }
}

/// The bucket of `key` among `n` (a power of two) and a 32-bit tag of it: the top bits
/// and the low half of the key after MurmurHash3's finalizer (a multiplication's low bits
/// depend on the input's low bits only, which aligned addresses and small extents leave
/// alike; the finalizer spreads every input bit over both).
#[inline]
fn home(key: u64, n: usize) -> (usize, u32) {
    let mut k = key ^ (key >> 33);
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    ((k >> (64 - n.trailing_zeros())) as usize, k as u32)
}

impl<T: Interned> Interner<T> {
    /// The index of `v` in `table`: its bucket's if that entry equals it, else a new one.
    /// The bucket's tag is compared first, so that a value seen for the first time (most
    /// of them: a new view per block of paged attention) does not load the bucket's table
    /// entry, written long ago and out of the CPU's near caches.
    #[inline]
    fn intern(&mut self, table: &mut Vec<T>, v: T) -> u32 {
        if self.recent.is_empty() {
            self.recent = vec![(0, EMPTY); RECENT];
        }
        let (r, tag) = home(v.key(), RECENT);
        let (seen, i) = self.recent[r];
        if seen == tag && table.get(i as usize) == Some(&v) {
            return i;
        }
        let new = table.len() as u32;
        table.push(v);
        self.recent[r] = (tag, new);
        new
    }
}

/// dep_gen's recorder: the [`DepLog`] a run fills. Its TensorMap edges come from the
/// orchestrator's own map, which keeps retired writers while dep_gen is on
/// ([`keeping`](crate::tensor_map::TensorMap::keeping)): one walk finds the producers to wire (those not retired) and
/// the edges to log (all of them, newest first).
pub struct DepRecorder {
    /// What has been recorded so far.
    pub log: DepLog,
}

/// The lengths of a dependency log's arrays at the end of the process's last run that
/// recorded one ([`crate::last_len`]).
static LAST_TASKS: LastLen = LastLen::new();
static LAST_ARGS: LastLen = LastLen::new();
static LAST_EDGES: LastLen = LastLen::new();
static LAST_VIEWS: LastLen = LastLen::new();
static LAST_REGIONS: LastLen = LastLen::new();

impl DepRecorder {
    /// An empty recorder whose log has room for what the process's last run recorded, and
    /// for at least `capacity` tasks (four arguments and two edges each), before its arrays
    /// grow, since growing one copies it when glibc serves it from the heap rather than a
    /// mapping of its own.
    pub fn new(capacity: usize) -> DepRecorder {
        let n = capacity.max(64);
        let log = DepLog {
            tasks: LAST_TASKS.vec(n),
            args: LAST_ARGS.vec(4 * n),
            edges: LAST_EDGES.vec(2 * n),
            views: LAST_VIEWS.vec(n),
            regions: LAST_REGIONS.vec(0),
            ..DepLog::default()
        };
        DepRecorder { log }
    }

    /// The log, its lengths remembered for the process's next run.
    pub fn finish(self) -> DepLog {
        let log = self.log;
        LAST_TASKS.keep(&log.tasks);
        LAST_ARGS.keep(&log.args);
        LAST_EDGES.keep(&log.edges);
        LAST_VIEWS.keep(&log.views);
        LAST_REGIONS.keep(&log.regions);
        log
    }

    /// Logs the TensorMap edge of `hit` to `succ`'s argument `arg`, whose view is already
    /// recorded as that argument of the open task (one call per hit of a
    /// [`lookup_keeping`](crate::tensor_map::TensorMap::lookup_keeping), retired producers
    /// included).
    #[inline]
    pub fn tensormap_edge(&mut self, hit: &Hit, succ: TaskId, arg: i32) {
        let log = &mut self.log;
        let consumer = log.open_arg_view(arg as usize);
        let producer = Some(log.intern_region(&hit.geometry));
        log.edges.push(EdgeRecord {
            pred: hit.producer,
            succ,
            arg,
            source: EdgeSource::TensorMap,
            wait: true,
            retain: false,
            overlap: Some(hit.overlap),
            consumer,
            producer,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor_map::TensorMap;
    use crate::test_rng::Rng;

    fn tensor(addr: u64, start_offset: u64, version: i32) -> ChipTensor {
        let mut t = ChipTensor::zeroed();
        t.buffer.addr = addr;
        t.buffer.size = 4096;
        t.start_offset = start_offset;
        t.version = version;
        t.ndims = 2;
        t.shapes[..2].copy_from_slice(&[4, 8]);
        t.strides[..2].copy_from_slice(&[8, 1]);
        t
    }

    fn task(id: u64) -> TaskRecord {
        TaskRecord {
            id: TaskId(id),
            manual_scope: false,
            early_dispatch: false,
            kernel_ids: [0, -1, -1],
            block_num: 1,
            is_alloc: false,
            args: 0..0,
        }
    }

    #[test]
    fn equal_views_are_stored_once_and_unequal_ones_apart() {
        let mut log = DepLog::default();
        let (a, b) = (tensor(0x1000, 0, 0), tensor(0x1000, 32, 0));
        // Differing in one field each: offset, version, a stride, the buffer.
        let mut c = a;
        c.strides[1] = 2;
        let newer = tensor(0x1000, 0, 1);
        let other = tensor(0x2000, 0, 0);
        log.open_task();
        for t in [&a, &b, &a, &c, &newer, &other, &b] {
            log.push_arg(TensorArgType::Input, Some(t));
        }
        log.push_arg(TensorArgType::Output, None);
        log.close_task(task(1));
        let views: Vec<Option<u32>> = log.args.iter().map(|x| x.view).collect();
        assert_eq!(
            views,
            [
                Some(0),
                Some(1),
                Some(0),
                Some(2),
                Some(3),
                Some(4),
                Some(1),
                None
            ]
        );
        assert_eq!(log.views.len(), 5);
        for (x, t) in log.args.iter().zip([&a, &b, &a, &c, &newer, &other, &b]) {
            assert_eq!(log.view(x.view), Some(&TensorView::of(t)));
        }
    }

    #[test]
    fn every_index_names_its_value_and_recent_repeats_share_one() {
        let mut log = DepLog::default();
        let t = |k: u64| tensor(0x1000 + 64 * k, k % 7, 0);
        log.open_task();
        for k in 0..5000u64 {
            log.push_arg(TensorArgType::Input, Some(&t(k)));
            // Each view again right after: always the same index.
            log.push_arg(TensorArgType::InOut, Some(&t(k)));
        }
        log.close_task(task(1));
        log.open_task();
        for k in (0..5000u64).rev() {
            log.push_arg(TensorArgType::Input, Some(&t(k)));
        }
        log.close_task(task(2));
        let first = log.args_of(&log.tasks[0]);
        for (k, pair) in first.chunks(2).enumerate() {
            assert_eq!(pair[0].view, pair[1].view);
            assert_eq!(log.view(pair[0].view), Some(&TensorView::of(&t(k as u64))));
        }
        // Long after: each index still names the right view, whether or not the cache
        // still held it (most of the last ones it does).
        let second = log.args_of(&log.tasks[1]);
        for (j, a) in second.iter().enumerate() {
            assert_eq!(log.view(a.view), Some(&TensorView::of(&t(4999 - j as u64))));
        }
        let reused = second
            .iter()
            .filter(|a| a.view.is_some_and(|v| v < 5000))
            .count();
        assert!(reused > 1000, "{reused} of 5000 repeats found");
        assert!(log.views.len() < 10_000);
    }

    #[test]
    fn tasks_own_ranges_of_the_flat_arguments_and_an_unclosed_task_leaves_none() {
        let mut log = DepLog::default();
        let t = tensor(0x1000, 0, 0);
        log.open_task();
        log.push_arg(TensorArgType::Input, Some(&t));
        log.push_arg(TensorArgType::Output, None);
        assert_eq!(log.open_arg_view(0), Some(0));
        assert_eq!(log.open_arg_view(1), None);
        log.close_task(task(1));
        // A submit that failed after recording its arguments.
        log.open_task();
        log.push_arg(TensorArgType::InOut, Some(&t));
        log.open_task();
        log.push_arg(TensorArgType::NoDep, Some(&t));
        log.close_task(task(3));
        log.open_task();
        log.close_task(task(4));
        assert_eq!(log.args.len(), 3);
        let types = |i: usize| -> Vec<TensorArgType> {
            log.args_of(&log.tasks[i]).iter().map(|a| a.ty).collect()
        };
        assert_eq!(types(0), [TensorArgType::Input, TensorArgType::Output]);
        assert_eq!(types(1), [TensorArgType::NoDep]);
        assert!(types(2).is_empty());
        assert_eq!(log.tasks[1].args, 2..3);
    }

    #[test]
    fn tensormap_edges_name_the_consumer_argument_view_and_intern_regions() {
        let mut rec = DepRecorder::new(64);
        let mut map = TensorMap::keeping(64);
        let never = |_: TaskId| false;
        let w = tensor(0x1000, 0, 0);
        assert!(map.insert_keeping(ViewGeometry::of(&w), TaskId(1), &never));
        assert!(map.insert_keeping(ViewGeometry::of(&w), TaskId(2), &never));
        rec.log.open_task();
        rec.log
            .push_arg(TensorArgType::Input, Some(&tensor(0x5000, 0, 0)));
        rec.log.push_arg(TensorArgType::Input, Some(&w));
        // Task 1 has retired: logged all the same.
        let retired = |p: TaskId| p == TaskId(1);
        map.lookup_keeping(&ViewGeometry::of(&w), false, &retired, &mut |hit, _| {
            rec.tensormap_edge(&hit, TaskId(3), 1)
        });
        rec.log.close_task(task(3));
        let log = &rec.log;
        assert_eq!(log.edges.len(), 2);
        for e in &log.edges {
            assert_eq!(e.consumer, Some(1));
            assert_eq!(e.producer, Some(0));
            assert_eq!(log.view(e.consumer), Some(&TensorView::of(&w)));
        }
        assert_eq!(log.regions, [Region::of(&ViewGeometry::of(&w))]);
        let preds: Vec<TaskId> = log.edges.iter().map(|e| e.pred).collect();
        assert_eq!(preds, [TaskId(2), TaskId(1)]);
    }

    /// The recorder before the maps were one: its own replay map that never retires,
    /// beside the live map that wires (what the test below compares with).
    struct TwoMaps {
        log: DepLog,
        replay: TensorMap,
        live: TensorMap,
    }

    /// A random view of one of three 16×16 buffers: a row block, a column block, a tile,
    /// the whole buffer, sometimes transposed or of a newer version.
    fn random_view(rng: &mut Rng) -> ChipTensor {
        let mut t = tensor(0x1000 * (1 + rng.below(3)), 0, 0);
        t.buffer.size = 16 * 16 * 4;
        let (h, w) = match rng.below(4) {
            0 => (4, 16),
            1 => (16, 4),
            2 => (4, 4),
            _ => (16, 16),
        };
        let (r, c) = (rng.below(17 - h), rng.below(17 - w));
        t.shapes[..2].copy_from_slice(&[h as u32, w as u32]);
        t.strides[..2].copy_from_slice(&[16, 1]);
        t.start_offset = r * 16 + c;
        if rng.below(8) == 0 {
            t.strides.swap(0, 1);
        }
        if rng.below(16) == 0 {
            t.version = 1;
        }
        t
    }

    /// What an edge says, its indices resolved.
    type Said = (TaskId, TaskId, i32, Option<Overlap>, TensorView, Region);

    fn said(log: &DepLog) -> Vec<Said> {
        log.edges
            .iter()
            .map(|e| {
                (
                    e.pred,
                    e.succ,
                    e.arg,
                    e.overlap,
                    *log.view(e.consumer).unwrap(),
                    *log.region(e.producer).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn one_keeping_map_logs_and_wires_what_the_replay_and_live_maps_did() {
        let (mut refusals, mut retired_edges) = (0, 0);
        for seed in 1..=40u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            // A small pool, so that it fills with live writers and refuses, and producers
            // retire (the ring wraps) behind a watermark that advances at random.
            let capacity = 4 + rng.below(12) as usize;
            let mut old = TwoMaps {
                log: DepLog::default(),
                replay: TensorMap::growing(capacity.max(64), 256),
                live: TensorMap::new(capacity),
            };
            let mut new = DepRecorder::new(capacity);
            let mut map = TensorMap::keeping(capacity);
            let mut last_alive = 0u64;
            for me in 0..400u64 {
                if rng.below(3) == 0 {
                    last_alive += rng.below(me - last_alive + 1);
                }
                let retired = |p: TaskId| p.0 < last_alive;
                let me = TaskId(me);
                let args: Vec<(TensorArgType, ChipTensor)> = (0..1 + rng.below(3))
                    .map(|_| {
                        let ty = match rng.below(3) {
                            0 => TensorArgType::Input,
                            1 => TensorArgType::InOut,
                            _ => TensorArgType::OutputExisting,
                        };
                        (ty, random_view(&mut rng))
                    })
                    .collect();
                old.log.open_task();
                new.log.open_task();
                for (ty, t) in &args {
                    old.log.push_arg(*ty, Some(t));
                    new.log.push_arg(*ty, Some(t));
                }
                for (i, (ty, t)) in args.iter().enumerate() {
                    if *ty == TensorArgType::OutputExisting {
                        continue;
                    }
                    let g = ViewGeometry::of(t);
                    let supersede = *ty == TensorArgType::InOut;
                    let view = old.log.open_arg_view(i);
                    let log = &mut old.log;
                    old.replay.lookup(&g, supersede, &|_| false, &mut |hit| {
                        let producer = Some(log.intern_region(&hit.geometry));
                        log.edges.push(EdgeRecord {
                            pred: hit.producer,
                            succ: me,
                            arg: i as i32,
                            source: EdgeSource::TensorMap,
                            wait: true,
                            retain: false,
                            overlap: Some(hit.overlap),
                            consumer: view,
                            producer,
                        })
                    });
                    let mut wired_old = Vec::new();
                    old.live.lookup(&g, supersede, &retired, &mut |hit| {
                        wired_old.push(hit.producer)
                    });
                    let mut wired_new = Vec::new();
                    map.lookup_keeping(&g, supersede, &retired, &mut |hit, gone| {
                        new.tensormap_edge(&hit, me, i as i32);
                        if gone {
                            retired_edges += 1;
                        } else {
                            wired_new.push(hit.producer);
                        }
                    });
                    assert_eq!(wired_new, wired_old, "seed {seed}, task {me}, arg {i}");
                }
                for (ty, t) in &args {
                    if *ty == TensorArgType::Input {
                        continue;
                    }
                    let g = ViewGeometry::of(t);
                    // Refused alike; the orchestrator waits for retirement and retries.
                    loop {
                        let retired = |p: TaskId| p.0 < last_alive;
                        let live = old.live.insert(g, me, &retired);
                        let kept = map.insert_keeping(g, me, &retired);
                        assert_eq!(kept, live, "seed {seed}, task {me}: refusal");
                        if live {
                            break;
                        }
                        refusals += 1;
                        last_alive += 1 + rng.below(me.0 - last_alive);
                    }
                    old.replay.insert_growing(g, me);
                }
                old.log.close_task(task(me.0));
                new.log.close_task(task(me.0));
            }
            assert!(last_alive > 100, "seed {seed}: producers retired");
            assert!(!old.log.edges.is_empty());
            assert_eq!(said(&new.log), said(&old.log), "seed {seed}");
        }
        // Both cases the merge is about happened: full pools, and edges to retired writers.
        assert!(
            refusals > 40 && retired_edges > 1000,
            "{refusals} {retired_edges}"
        );
    }
}
