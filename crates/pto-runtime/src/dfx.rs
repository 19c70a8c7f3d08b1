//! Diagnostic collectors: swimlane timing, PMU counters, args dump and scope statistics.
//!
//! Each switch is independent. Collection happens where the event happens and never takes a
//! global lock on the task path:
//!
//! - swimlane and PMU records go to the recording worker's own buffers ([`WorkerRecords`]),
//!   handed back when the worker exits; orchestrator submit records and scope statistics
//!   to the orchestrator's (single-threaded) buffers;
//! - the args dump captures a task's inputs when it becomes ready (before dispatch) and its
//!   outputs when it completes (before any consumer is released) ([`DumpCollector`]):
//!   small payloads are copied into the capturing thread's staging chunk, which goes to
//!   `args.bin` in one `pwrite` when full; large ones are written straight into the file.
//!   Memory stays bounded (one chunk per shard), the capturing thread waits for the file
//!   system (back-pressure) rather than dropping, and a record that could not be stored is
//!   counted in the manifest, never lost silently.
//!
//! Timestamps are [`crate::clock::stamp`]s while the run lasts and host monotonic
//! nanoseconds once [`crate::run()`] returns them (it converts every record through the
//! run's two clock anchors); the runner converts those to the platform's counter ticks when
//! it writes the files.

use std::cell::Cell;
use std::fs::File;
use std::os::unix::fs::FileExt as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::ffi::{ChipTensor, TensorArgType, MAX_TENSOR_DIMS};
use crate::task::TaskPayload;

/// Which diagnostics to collect.
#[derive(Clone, Debug, Default)]
pub struct DfxConfig {
    /// Swimlane level 0–4.
    pub swimlane: u8,
    /// Args dump level 0–3.
    pub dump_args: u8,
    /// Where `args.bin` goes (required when `dump_args > 0`).
    pub dump_dir: Option<PathBuf>,
    /// PMU event type (0 off).
    pub pmu: u32,
    /// Scope statistics.
    pub scope_stats: bool,
    /// Record each PTO-ISA subtask's instruction trace and schedule it on its core's pipes
    /// (`--timing predicted`; [`PredictedRecord`]s).
    pub predicted_timing: bool,
}

/// The timing model's prediction for one subtask (`--timing predicted`).
#[derive(Clone, Debug)]
pub struct PredictedRecord {
    /// Logical core the subtask ran on (in the simulation).
    pub core: u32,
    /// Raw task id.
    pub task: u64,
    /// Kernel id.
    pub func_id: i32,
    /// Predicted cycles and per-pipe busy cycles, or why there is none.
    pub timing: pto_timing::SubtaskTiming,
}

/// Monotonic host time in nanoseconds (`CLOCK_MONOTONIC`; the collectors take the cheaper
/// [`crate::clock::stamp`] and the run converts those).
pub fn now_ns() -> u64 {
    crate::clock::monotonic_ns()
}

/// Monotonic host time in nanoseconds at the kernel's tick resolution (a few ms), for
/// figures that need no more, such as how long a stuck subtask has run. Several times
/// cheaper than [`now_ns`] on a virtual machine.
pub fn coarse_now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: CLOCK_MONOTONIC_COARSE with a valid out pointer cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One kernel execution on a logical core (swimlane `aicore_tasks` + `aicpu_tasks`).
#[derive(Clone, Copy, Debug)]
pub struct SubtaskRecord {
    /// Logical core.
    pub core: u32,
    /// Raw task id.
    pub task: u64,
    /// Per-core dispatch token (starts at 1).
    pub reg_task_id: u32,
    /// Worker popped the task (dispatch).
    pub dispatch_ns: u64,
    /// Arguments ready, about to call (receive).
    pub receive_ns: u64,
    /// Kernel call start.
    pub start_ns: u64,
    /// Kernel call end.
    pub end_ns: u64,
    /// Completion processing done (finish).
    pub finish_ns: u64,
}

/// Scheduler phase kinds this runtime emits (Simpler's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedPhaseKind {
    /// Pop, claim and argument preparation.
    Dispatch,
    /// Completion processing: consumers, releases, reclaim.
    Complete,
}

impl SchedPhaseKind {
    /// `dispatch` / `complete`.
    pub fn name(self) -> &'static str {
        match self {
            SchedPhaseKind::Dispatch => "dispatch",
            SchedPhaseKind::Complete => "complete",
        }
    }
}

/// One scheduler phase of a worker.
#[derive(Clone, Copy, Debug)]
pub struct SchedPhaseRecord {
    /// Kind.
    pub kind: SchedPhaseKind,
    /// Start.
    pub start_ns: u64,
    /// End.
    pub end_ns: u64,
    /// The worker loop iteration.
    pub loop_iter: u32,
    /// Tasks handled in the phase.
    pub tasks_processed: u32,
    /// Successful pops since the previous dispatch record.
    pub pop_hit: u32,
    /// Empty pops since the previous dispatch record.
    pub pop_miss: u32,
    /// Ready-queue depth at start, by shape `[aic, aiv, mix]`.
    pub shared_at_start: [i16; 3],
    /// Ready-queue depth at end.
    pub shared_at_end: [i16; 3],
}

/// One orchestrator submit (`submit_task` / `alloc_tensors`).
#[derive(Clone, Copy, Debug)]
pub struct OrchRecord {
    /// Submit ordinal.
    pub submit_idx: u32,
    /// Raw task id.
    pub task: u64,
    /// Start.
    pub start_ns: u64,
    /// End.
    pub end_ns: u64,
}

/// One PMU sample: counters around one kernel execution.
#[derive(Clone, Copy, Debug)]
pub struct PmuRecord {
    /// Worker thread.
    pub worker: u32,
    /// Logical core.
    pub core: u32,
    /// Raw task id.
    pub task: u64,
    /// Kernel id.
    pub func_id: i32,
    /// 0 AIC, 1 AIV.
    pub core_type: u8,
    /// Kernel duration in ns.
    pub duration_ns: u64,
    /// Counter deltas in [`WorkerRecords::pmu_names`] order.
    pub counters: [u64; crate::perf::MAX_COUNTERS],
}

/// What one worker recorded.
#[derive(Debug, Default)]
pub struct WorkerRecords {
    /// Kernel executions.
    pub subtasks: Vec<SubtaskRecord>,
    /// Scheduler phases (level ≥ 3).
    pub phases: Vec<SchedPhaseRecord>,
    /// PMU samples.
    pub pmu: Vec<PmuRecord>,
    /// Counter names of `pmu` samples (empty when counters were unavailable).
    pub pmu_names: Vec<&'static str>,
}

/// One scope-statistics sample.
#[derive(Clone, Debug)]
pub struct ScopeSample {
    /// `file:line` of the scope.
    pub site: String,
    /// `begin` or `end`.
    pub is_end: bool,
    /// Scope depth.
    pub depth: u32,
    /// Ring.
    pub ring: u32,
    /// Task window tail (`last_alive`) and head.
    pub task_window: (u64, u64),
    /// Heap reclaimed and allocated cumulative bytes.
    pub heap: (u64, u64),
    /// Dep pool tail and top.
    pub dep_pool: (u64, u64),
    /// Live TensorMap entries (not yet reclaimed; with dep_gen on, this includes the
    /// retired writers its map keeps for the dependency log).
    pub tensormap: u64,
}

/// The role of a dumped argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DumpRole {
    /// Read.
    Input,
    /// Written.
    Output,
    /// Read and written.
    InOut,
}

/// When an argument was captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DumpStage {
    /// Before the task ran.
    BeforeDispatch,
    /// After it completed.
    AfterCompletion,
}

/// One args-dump manifest entry (fixed size: capturing one allocates nothing).
#[derive(Clone, Copy, Debug)]
pub struct DumpEntry {
    /// Raw task id.
    pub task: u64,
    /// Active kernel ids in slot order, the first [`DumpEntry::n_func_ids`] of them.
    pub func_ids: [i32; 3],
    /// How many of `func_ids` are set.
    pub n_func_ids: u8,
    /// Tensor slot, or `n_tensors + scalar index`.
    pub arg_index: u32,
    /// Role.
    pub role: DumpRole,
    /// Stage.
    pub stage: DumpStage,
    /// Scalar value bits (None for tensors).
    pub scalar: Option<u64>,
    /// Element type code.
    pub dtype: u8,
    /// Dimensions of the view (0 for scalars); `shape` and `strides` hold that many.
    pub dims: u8,
    /// View geometry (tensors).
    pub shape: [u32; MAX_TENSOR_DIMS],
    /// Element strides.
    pub strides: [u32; MAX_TENSOR_DIMS],
    /// Element offset of the view.
    pub start_offset: u64,
    /// Contiguous view.
    pub is_contiguous: bool,
    /// Offset in `args.bin`.
    pub bin_offset: u64,
    /// Bytes stored.
    pub bin_size: u64,
    /// Larger than the per-record limit: only the first part is stored.
    pub truncated: bool,
    /// Payload lost (write failure).
    pub overwritten: bool,
}

impl DumpEntry {
    /// The active kernel ids.
    pub fn func_ids(&self) -> &[i32] {
        &self.func_ids[..self.n_func_ids as usize]
    }

    /// The view's shape (empty for scalars).
    pub fn shape(&self) -> &[u32] {
        &self.shape[..self.dims as usize]
    }

    /// The view's element strides (empty for scalars).
    pub fn strides(&self) -> &[u32] {
        &self.strides[..self.dims as usize]
    }
}

/// What the args dump produced.
#[derive(Debug, Default)]
pub struct DumpResult {
    /// Manifest entries, in no particular order (the manifest sorts them).
    pub entries: Vec<DumpEntry>,
    /// Whether `args.bin` exists.
    pub bin_written: bool,
    /// Records whose payload could not be written.
    pub dropped_records: u64,
    /// Bytes written to `args.bin`.
    pub bytes: u64,
    /// The first write error, if any.
    pub error: Option<String>,
}

/// Largest payload stored for one argument (Simpler keeps half its 128 MiB arena).
pub const MAX_RECORD_BYTES: usize = 64 << 20;

/// Payloads up to this size are staged; larger ones are written straight into the file.
const STAGE_MAX_PAYLOAD: usize = 64 << 10;
/// Bytes a staging chunk holds before it goes to `args.bin` in one write.
const STAGE_CHUNK: usize = 4 << 20;
/// Staging shards; a thread always uses the same one, so they are rarely contended.
const STAGE_SHARDS: usize = 8;

/// Hands each capturing thread its shard index.
static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SHARD: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn my_shard() -> usize {
    SHARD.with(|c| {
        if c.get() == usize::MAX {
            c.set(NEXT_SHARD.fetch_add(1, Ordering::Relaxed) % STAGE_SHARDS);
        }
        c.get()
    })
}

/// One staging shard: payload bytes not yet in the file and the entries that point into
/// them (their `bin_offset` relative to the chunk until it is written), and the entries
/// already complete.
#[derive(Default)]
struct Shard {
    chunk: Vec<u8>,
    staged: Vec<DumpEntry>,
    done: Vec<DumpEntry>,
}

/// The args-dump collector (see the module docs).
///
/// A payload of at most 64 KiB is copied into the capturing thread's staging chunk (one of
/// eight shards, each behind its own lock, so threads rarely meet); a full chunk is written
/// to `args.bin` in one `pwrite` at an offset reserved atomically, and the entries pointing
/// into it get their final offsets. Larger payloads are written straight into the file at
/// their own reserved offset. Memory stays bounded by one 4 MiB chunk per shard and one
/// gather buffer per non-contiguous view; a capture that fills a chunk returns once the
/// chunk is in the file (that wait is the back-pressure). The file is written under a
/// temporary name, and [`DumpCollector::finish`] writes the partial chunks and renames it
/// into place.
pub struct DumpCollector {
    level: u8,
    dir: PathBuf,
    tmp_path: PathBuf,
    file: OnceLock<Result<File, String>>,
    next_offset: AtomicU64,
    shards: [Mutex<Shard>; STAGE_SHARDS],
    dropped: AtomicU64,
    error: Mutex<Option<String>>,
}

impl DumpCollector {
    /// A collector for `dir/args.bin` at `level` (1 partial, 2 full, 3 hybrid).
    pub fn start(level: u8, dir: PathBuf) -> std::io::Result<std::sync::Arc<DumpCollector>> {
        let tmp_path = pto_base::fs::temporary_beside(&dir.join("args.bin"));
        Ok(std::sync::Arc::new(DumpCollector {
            level,
            dir,
            tmp_path,
            file: OnceLock::new(),
            next_offset: AtomicU64::new(0),
            shards: std::array::from_fn(|_| Mutex::new(Shard::default())),
            dropped: AtomicU64::new(0),
            error: Mutex::new(None),
        }))
    }

    fn file(&self) -> Result<&File, String> {
        let opened = self.file.get_or_init(|| {
            std::fs::create_dir_all(&self.dir)
                .and_then(|_| File::create(&self.tmp_path))
                .map_err(|e| format!("creating {}: {e}", self.tmp_path.display()))
        });
        opened.as_ref().map_err(Clone::clone)
    }

    fn note_error(&self, e: String) {
        self.error.lock().get_or_insert(e);
    }

    /// Writes `bytes` at a freshly reserved offset of `args.bin`.
    fn write_at_reserved(&self, bytes: &[u8]) -> Result<u64, String> {
        self.file().and_then(|f| {
            let offset = self
                .next_offset
                .fetch_add(bytes.len() as u64, Ordering::Relaxed);
            f.write_all_at(bytes, offset)
                .map(|()| offset)
                .map_err(|e| format!("writing args.bin: {e}"))
        })
    }

    /// Writes the shard's chunk and completes its staged entries (their offsets made
    /// absolute, or marked lost when the write failed).
    fn flush(&self, shard: &mut Shard) {
        if shard.staged.is_empty() {
            shard.chunk.clear();
            return;
        }
        let written = if shard.chunk.is_empty() {
            Ok(0)
        } else {
            self.write_at_reserved(&shard.chunk)
        };
        let Shard {
            chunk,
            staged,
            done,
        } = shard;
        match written {
            Ok(base) => done.extend(staged.drain(..).map(|mut e| {
                e.bin_offset += base;
                e
            })),
            Err(e) => {
                self.note_error(e);
                for mut entry in staged.drain(..) {
                    if entry.bin_size > 0 {
                        entry.bin_offset = 0;
                        entry.bin_size = 0;
                        entry.overwritten = true;
                        self.dropped.fetch_add(1, Ordering::Relaxed);
                    }
                    done.push(entry);
                }
            }
        }
        chunk.clear();
    }

    /// Stores one record: its payload (if any) goes to the staging chunk or the file.
    fn send(&self, mut entry: DumpEntry, payload: &[u8]) {
        let eager = self.level != 3;
        if payload.is_empty() {
            if eager && self.file.get().is_none() {
                // Levels 1 and 2 create args.bin with the first record, even if empty.
                if let Err(e) = self.file() {
                    self.note_error(e);
                }
            }
            self.shards[my_shard()].lock().done.push(entry);
            return;
        }
        if payload.len() > STAGE_MAX_PAYLOAD {
            match self.write_at_reserved(payload) {
                Ok(offset) => {
                    entry.bin_offset = offset;
                    entry.bin_size = payload.len() as u64;
                }
                Err(e) => {
                    self.note_error(e);
                    entry.overwritten = true;
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
            self.shards[my_shard()].lock().done.push(entry);
            return;
        }
        let mut shard = self.shards[my_shard()].lock();
        if shard.chunk.len() + payload.len() > STAGE_CHUNK {
            self.flush(&mut shard);
        }
        if shard.chunk.capacity() == 0 {
            shard.chunk.reserve_exact(STAGE_CHUNK);
        }
        entry.bin_offset = shard.chunk.len() as u64;
        entry.bin_size = payload.len() as u64;
        shard.chunk.extend_from_slice(payload);
        shard.staged.push(entry);
    }

    /// Captures the arguments of `payload` for `stage` (inputs before dispatch, outputs
    /// after completion), following the dump level and the task's `dump(...)` marks.
    pub fn capture(&self, payload: &TaskPayload, stage: DumpStage) {
        let mut func_ids = [0i32; 3];
        let mut n_func_ids = 0u8;
        for &k in payload.kernel_ids.iter().filter(|&&k| k >= 0) {
            func_ids[n_func_ids as usize] = k;
            n_func_ids += 1;
        }
        let n_tensors = payload.tensors.len() as u32;
        for (i, (t, info)) in payload.tensors.iter().zip(&payload.args).enumerate() {
            let role = match info.arg_type {
                TensorArgType::Input | TensorArgType::NoDep => DumpRole::Input,
                TensorArgType::Output | TensorArgType::OutputExisting => DumpRole::Output,
                TensorArgType::InOut => DumpRole::InOut,
            };
            let at_stage = match stage {
                DumpStage::BeforeDispatch => role != DumpRole::Output,
                DumpStage::AfterCompletion => role != DumpRole::Input,
            };
            if !at_stage {
                continue;
            }
            let (meta, bytes) = match self.level {
                1 => (info.dump, info.dump),
                2 => (true, true),
                _ => (true, info.dump),
            };
            if !meta {
                continue;
            }
            let mut scratch = Vec::new();
            let (payload_bytes, truncated): (&[u8], bool) = if !bytes {
                (&[], false)
            } else if let Some((view, truncated)) = contiguous_bytes(t) {
                (view, truncated)
            } else {
                let (buf, truncated) = gather_into(t, std::mem::take(&mut scratch));
                scratch = buf;
                (&scratch, truncated)
            };
            let dims = t.dims().min(MAX_TENSOR_DIMS);
            self.send(
                DumpEntry {
                    task: payload.id.0,
                    func_ids,
                    n_func_ids,
                    arg_index: i as u32,
                    role,
                    stage,
                    scalar: None,
                    dtype: t.dtype,
                    dims: dims as u8,
                    shape: t.shapes,
                    strides: t.strides,
                    start_offset: t.start_offset,
                    is_contiguous: t.is_contiguous,
                    bin_offset: 0,
                    bin_size: 0,
                    truncated,
                    overwritten: false,
                },
                payload_bytes,
            );
        }
        if stage == DumpStage::BeforeDispatch {
            for (j, (&bits, &(dtype, marked))) in
                payload.scalars.iter().zip(&payload.scalar_info).enumerate()
            {
                if self.level == 1 && !marked {
                    continue;
                }
                self.send(
                    DumpEntry {
                        task: payload.id.0,
                        func_ids,
                        n_func_ids,
                        arg_index: n_tensors + j as u32,
                        role: DumpRole::Input,
                        stage,
                        scalar: Some(bits),
                        dtype,
                        dims: 0,
                        shape: [0; MAX_TENSOR_DIMS],
                        strides: [0; MAX_TENSOR_DIMS],
                        start_offset: 0,
                        is_contiguous: true,
                        bin_offset: 0,
                        bin_size: 0,
                        truncated: false,
                        overwritten: false,
                    },
                    &[],
                );
            }
        }
    }

    /// Closes `args.bin` (renaming it into place) and returns what was recorded.
    pub fn finish(&self) -> DumpResult {
        let mut entries = Vec::new();
        for shard in &self.shards {
            let mut shard = shard.lock();
            self.flush(&mut shard);
            entries.append(&mut shard.done);
            shard.chunk = Vec::new();
        }
        let mut res = DumpResult {
            entries,
            dropped_records: self.dropped.load(Ordering::Relaxed),
            bytes: self.next_offset.load(Ordering::Relaxed),
            error: self.error.lock().clone(),
            bin_written: false,
        };
        if let Some(Ok(_)) = self.file.get() {
            match std::fs::rename(&self.tmp_path, self.dir.join("args.bin")) {
                Ok(()) => res.bin_written = true,
                Err(e) => {
                    res.error.get_or_insert(format!("writing args.bin: {e}"));
                    let _ = std::fs::remove_file(&self.tmp_path);
                }
            }
        }
        res
    }
}

/// The bytes of a contiguous view in place (truncated to [`MAX_RECORD_BYTES`]), or `None`
/// for a view that needs gathering.
pub fn contiguous_bytes(t: &ChipTensor) -> Option<(&[u8], bool)> {
    let es = crate::dtype::elem_size(t.dtype);
    let total = t.numel() as usize * es;
    let keep = total.min(MAX_RECORD_BYTES);
    let base = t.buffer.addr as *const u8;
    if !t.is_contiguous || base.is_null() || total == 0 {
        return None;
    }
    // SAFETY: the runtime validated the view against its buffer at submit; `keep` bytes
    // from the view origin lie inside it, the buffer outlives the capture, and no task
    // writes it while it is captured (inputs before dispatch, outputs after completion).
    let bytes = unsafe { std::slice::from_raw_parts(base.add(t.start_offset as usize * es), keep) };
    Some((bytes, total > keep))
}

/// The logical (row-major) bytes of a view, truncated to [`MAX_RECORD_BYTES`], written
/// into `out` (cleared first) and returned with whether it was truncated.
pub fn gather_into(t: &ChipTensor, mut out: Vec<u8>) -> (Vec<u8>, bool) {
    let es = crate::dtype::elem_size(t.dtype);
    let numel = t.numel() as usize;
    let total = numel * es;
    let keep = total.min(MAX_RECORD_BYTES);
    out.clear();
    out.reserve(keep);
    let base = t.buffer.addr as *const u8;
    if base.is_null() || numel == 0 {
        return (out, false);
    }
    if t.is_contiguous {
        // SAFETY: the runtime validated the view against its buffer at submit; `keep` bytes
        // from the view origin lie inside it, and the task that writes it is not running.
        unsafe {
            out.extend_from_slice(std::slice::from_raw_parts(
                base.add(t.start_offset as usize * es),
                keep,
            ));
        }
        return (out, total > keep);
    }
    let dims = t.dims();
    let mut idx = [0u32; crate::ffi::MAX_TENSOR_DIMS];
    'outer: while out.len() < keep {
        let off: u64 = t.start_offset
            + (0..dims)
                .map(|d| idx[d] as u64 * t.strides[d] as u64)
                .sum::<u64>();
        // SAFETY: every multi-index below the shape addresses an element inside the
        // validated view.
        unsafe {
            out.extend_from_slice(std::slice::from_raw_parts(base.add(off as usize * es), es))
        };
        let mut d = dims;
        loop {
            if d == 0 {
                break 'outer;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < t.shapes[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out.truncate(keep);
    (out, total > keep)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(task: u64, arg_index: u32) -> DumpEntry {
        DumpEntry {
            task,
            func_ids: [0; 3],
            n_func_ids: 1,
            arg_index,
            role: DumpRole::Input,
            stage: DumpStage::BeforeDispatch,
            scalar: None,
            dtype: 0,
            dims: 1,
            shape: [0; MAX_TENSOR_DIMS],
            strides: [1, 0, 0, 0, 0],
            start_offset: 0,
            is_contiguous: true,
            bin_offset: 0,
            bin_size: 0,
            truncated: false,
            overwritten: false,
        }
    }

    /// The payload of record `(task, arg)`: sizes cross the staging limit and the chunks.
    fn payload(task: u64, arg: u32) -> Vec<u8> {
        let len = match task % 97 {
            0 => STAGE_MAX_PAYLOAD + 1 + task as usize,
            1 => 0,
            k => 8 * k as usize + arg as usize,
        };
        (0..len)
            .map(|i| (task as usize * 31 + arg as usize * 7 + i) as u8)
            .collect()
    }

    #[test]
    fn staged_and_direct_payloads_land_where_their_entries_say() {
        let dir = tempfile::tempdir().unwrap();
        let c = DumpCollector::start(2, dir.path().to_path_buf()).unwrap();
        let threads = 3u64;
        let per = 4_000u64;
        std::thread::scope(|s| {
            for t in 0..threads {
                let c = &c;
                s.spawn(move || {
                    for i in 0..per {
                        let task = t * per + i;
                        for arg in 0..2 {
                            c.send(entry(task, arg), &payload(task, arg));
                        }
                    }
                });
            }
        });
        let res = c.finish();
        assert!(res.bin_written && res.error.is_none() && res.dropped_records == 0);
        assert_eq!(res.entries.len() as u64, threads * per * 2);
        let bin = std::fs::read(dir.path().join("args.bin")).unwrap();
        assert_eq!(bin.len() as u64, res.bytes);
        let mut covered = 0u64;
        for e in &res.entries {
            let want = payload(e.task, e.arg_index);
            assert_eq!(e.bin_size, want.len() as u64, "{e:?}");
            let at = e.bin_offset as usize;
            assert_eq!(&bin[at..at + want.len()], &want[..], "{e:?}");
            covered += e.bin_size;
        }
        // Every byte of the file belongs to exactly one record: no holes, no overlaps.
        assert_eq!(covered, res.bytes);
    }
}
