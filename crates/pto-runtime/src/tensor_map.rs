//! The TensorMap: which task last wrote which region of which buffer.
//!
//! Owned by the orchestrator thread alone (like Simpler's AICPU-private map), so it needs no
//! lock. Entries are keyed by buffer base address only, so every view of one buffer lands in
//! one chain; the overlap test then decides, per entry, whether a new access depends on it:
//!
//! 1. element (byte) ranges `[start, start + extent)` that do not intersect: no overlap;
//! 2. same dtype, rank and strides in a canonical row-major layout: an exact per-dimension
//!    hyper-rectangle test, giving no overlap, *covered* (the entry's region lies inside the
//!    access) or other;
//! 3. anything else (different strides, transposes, dtypes): conservatively *other*.
//!
//! A newer `version` on the access forces *other*. Entries whose producer has retired are
//! stale: lookups unlink them lazily, and a full pool is swept before it reports overflow.
//! The pool is a fixed array with a free list: inserting allocates nothing. A run that
//! records dependencies (dep_gen) uses a *keeping* map instead ([`TensorMap::keeping`]),
//! which keeps retired writers for the log, reports them flagged so wiring skips them, and
//! grows, refusing an insert only where the fixed pool would.

use crate::ffi::{ChipTensor, MAX_TENSOR_DIMS};
use crate::task::TaskId;

/// Result of comparing an access with a TensorMap entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    /// Disjoint regions.
    None,
    /// The entry's region lies entirely inside the access.
    Covered,
    /// Any other (possible) intersection.
    Other,
}

impl Overlap {
    /// The spelling in `deps.json` (`no_overlap`, `covered`, `other`).
    pub fn name(self) -> &'static str {
        match self {
            Overlap::None => "no_overlap",
            Overlap::Covered => "covered",
            Overlap::Other => "other",
        }
    }
}

/// The geometry of a view, as stored in entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewGeometry {
    /// Buffer base address (the key).
    pub addr: u64,
    /// Element offset of the origin.
    pub start_offset: u64,
    /// Extents.
    pub shapes: [u32; MAX_TENSOR_DIMS],
    /// Element strides.
    pub strides: [u32; MAX_TENSOR_DIMS],
    /// Rank.
    pub ndims: u8,
    /// Element type code.
    pub dtype: u8,
    /// Element size in bytes.
    pub elem_size: u8,
    /// Version tag.
    pub version: i32,
}

impl ViewGeometry {
    /// The geometry of a descriptor.
    pub fn of(t: &ChipTensor) -> ViewGeometry {
        ViewGeometry {
            addr: t.buffer.addr,
            start_offset: t.start_offset,
            shapes: t.shapes,
            strides: t.strides,
            ndims: t.dims() as u8,
            dtype: t.dtype,
            elem_size: crate::dtype::elem_size(t.dtype) as u8,
            version: t.version,
        }
    }

    fn dims(&self) -> usize {
        self.ndims as usize
    }

    /// Byte range `[begin, end)` spanned by the view, relative to the buffer base.
    fn byte_range(&self) -> (u64, u64) {
        let dims = self.dims();
        if self.shapes[..dims].contains(&0) {
            return (0, 0);
        }
        let extent: u64 = 1
            + (0..dims)
                .map(|d| (self.shapes[d] as u64 - 1) * self.strides[d] as u64)
                .sum::<u64>();
        let es = self.elem_size.max(1) as u64;
        (self.start_offset * es, (self.start_offset + extent) * es)
    }

    /// Per-dimension `[begin, end)` element coordinates of the view inside the row-major
    /// parent that its strides describe, or `None` if the strides are not canonical
    /// row-major or the view wraps a parent dimension.
    #[allow(clippy::needless_range_loop)] // indexes shapes, strides and rect together
    fn rectangle(&self) -> Option<[(u64, u64); MAX_TENSOR_DIMS]> {
        let dims = self.dims();
        let mut rect = [(0u64, 0u64); MAX_TENSOR_DIMS];
        if dims == 0 {
            return Some(rect);
        }
        if self.strides[dims - 1] != 1 {
            return None;
        }
        let origin = self.start_offset;
        for d in 0..dims {
            let stride = self.strides[d] as u64;
            if stride == 0 {
                return None;
            }
            // The parent's extent in dimension d, unbounded for the outermost one.
            let parent = if d == 0 {
                u64::MAX
            } else {
                let outer = self.strides[d - 1] as u64;
                if !outer.is_multiple_of(stride) {
                    return None;
                }
                outer / stride
            };
            let coord = if d == 0 {
                origin / stride
            } else {
                (origin / stride) % parent
            };
            let end = coord + self.shapes[d] as u64;
            if end > parent {
                return None;
            }
            rect[d] = (coord, end);
        }
        Some(rect)
    }
}

/// Compares an access (`input`) with an entry's region.
pub fn check_overlap(input: &ViewGeometry, entry: &ViewGeometry) -> Overlap {
    let (a0, a1) = input.byte_range();
    let (b0, b1) = entry.byte_range();
    if a0 >= a1 || b0 >= b1 || a1 <= b0 || b1 <= a0 {
        return Overlap::None;
    }
    if input.version > entry.version {
        return Overlap::Other;
    }
    let same_layout = input.dtype == entry.dtype
        && input.ndims == entry.ndims
        && input.strides[..input.dims()] == entry.strides[..entry.dims()];
    if !same_layout {
        return Overlap::Other;
    }
    let (Some(ra), Some(rb)) = (input.rectangle(), entry.rectangle()) else {
        return Overlap::Other;
    };
    let mut covered = true;
    for d in 0..input.dims() {
        let (a0, a1) = ra[d];
        let (b0, b1) = rb[d];
        if a1 <= b0 || b1 <= a0 {
            return Overlap::None;
        }
        if b0 < a0 || b1 > a1 {
            covered = false;
        }
    }
    if covered {
        Overlap::Covered
    } else {
        Overlap::Other
    }
}

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Entry {
    geometry: ViewGeometry,
    producer: TaskId,
    next: u32,
}

impl Entry {
    const EMPTY: Entry = Entry {
        geometry: ViewGeometry {
            addr: 0,
            start_offset: 0,
            shapes: [0; MAX_TENSOR_DIMS],
            strides: [0; MAX_TENSOR_DIMS],
            ndims: 0,
            dtype: 0,
            elem_size: 0,
            version: 0,
        },
        producer: TaskId::INVALID,
        next: NIL,
    };
}

/// One producer found by [`TensorMap::lookup`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The producing task.
    pub producer: TaskId,
    /// How the access overlaps the producer's region.
    pub overlap: Overlap,
    /// The producer's region.
    pub geometry: ViewGeometry,
}

/// The map. See the module docs.
pub struct TensorMap {
    buckets: Box<[u32]>,
    entries: Box<[Entry]>,
    free_head: u32,
    bump: u32,
    live: usize,
    /// The last view whose [`check_overlap`] with itself was computed, with the result:
    /// an access that meets an entry of exactly its own view (a chain's `inout` tensor,
    /// the same view every submit) compares the geometries and reads the result here
    /// instead of testing the overlap (two byte ranges, two rectangles and their
    /// divisions). A pure function's cache, keyed by the whole geometry: the
    /// dependencies found are the general test's.
    same_view: Option<(ViewGeometry, Overlap)>,
    /// Set by [`TensorMap::keeping`]: the map keeps retired writers.
    keep: Option<Keep>,
}

/// The bound a keeping map ([`TensorMap::keeping`]) holds its writers that have not retired
/// to: the capacity the live map would have, and how many inserts may still come before
/// those writers could fill it (counted again when this reaches 0).
#[derive(Clone, Copy, Debug)]
struct Keep {
    capacity: usize,
    budget: usize,
}

impl TensorMap {
    /// A map with room for `capacity` entries.
    pub fn new(capacity: usize) -> TensorMap {
        let n_buckets = (capacity / 4).next_power_of_two().max(64);
        TensorMap {
            buckets: vec![NIL; n_buckets].into_boxed_slice(),
            entries: vec![Entry::EMPTY; capacity].into_boxed_slice(),
            free_head: NIL,
            bump: 0,
            live: 0,
            same_view: None,
            keep: None,
        }
    }

    /// A map hashed for about `capacity` entries whose entry pool starts at `initial` and
    /// grows by [`TensorMap::insert_growing`]: the base of dep_gen's keeping map
    /// ([`TensorMap::keeping`]), which would otherwise zero a pool the size of the live one
    /// on every run however few tensors it sees (most of the cost of recording dependencies
    /// on a small run).
    pub fn growing(capacity: usize, initial: usize) -> TensorMap {
        TensorMap {
            buckets: vec![NIL; (capacity / 4).next_power_of_two().max(64)].into_boxed_slice(),
            entries: vec![Entry::EMPTY; initial.max(1)].into_boxed_slice(),
            free_head: NIL,
            bump: 0,
            live: 0,
            same_view: None,
            keep: None,
        }
    }

    /// The map of a run that records dependencies (dep_gen): it keeps the writers that
    /// have retired, which `deps.json` records as Simpler's replay does, and which
    /// [`TensorMap::lookup_keeping`] reports flagged so that wiring skips them. Its pool
    /// grows (from 256 entries) instead of refusing, but [`TensorMap::insert_keeping`]
    /// refuses exactly when a live map of `capacity` entries would: when `capacity`
    /// writers that have not retired are present.
    pub fn keeping(capacity: usize) -> TensorMap {
        let mut map = TensorMap::growing(capacity.max(64), 256);
        map.keep = Some(Keep {
            capacity,
            budget: capacity,
        });
        map
    }

    /// Live (not yet reclaimed) entries.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Capacity of the entry pool (of a keeping map, the capacity it emulates).
    pub fn capacity(&self) -> usize {
        self.keep.map_or(self.entries.len(), |k| k.capacity)
    }

    fn bucket(&self, addr: u64) -> usize {
        let h = addr.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 32) as usize & (self.buckets.len() - 1)
    }

    fn free(&mut self, idx: u32) {
        self.entries[idx as usize].next = self.free_head;
        self.entries[idx as usize].producer = TaskId::INVALID;
        self.free_head = idx;
        self.live -= 1;
    }

    /// `check_overlap(input, entry)`, by the same-view memo when the two are the same view.
    #[inline]
    fn overlap(&mut self, input: &ViewGeometry, entry: &ViewGeometry) -> Overlap {
        if input != entry {
            return check_overlap(input, entry);
        }
        match self.same_view {
            Some((view, overlap)) if view == *input => overlap,
            _ => {
                let overlap = check_overlap(input, entry);
                self.same_view = Some((*input, overlap));
                overlap
            }
        }
    }

    /// Calls `on_hit` for every live entry that overlaps `input`, newest first. Entries for
    /// which `retired(producer)` holds are unlinked on the way; with `supersede`, entries the
    /// access covers are removed after being reported (INOUT semantics). A map made by
    /// [`TensorMap::keeping`] keeps its retired entries and reports only the others (the
    /// same hits; [`TensorMap::lookup_keeping`] reports all).
    pub fn lookup(
        &mut self,
        input: &ViewGeometry,
        supersede: bool,
        retired: &dyn Fn(TaskId) -> bool,
        on_hit: &mut dyn FnMut(Hit),
    ) {
        if self.keep.is_some() {
            self.walk::<true>(input, supersede, retired, |hit, gone| {
                if !gone {
                    on_hit(hit)
                }
            });
        } else {
            self.walk::<false>(input, supersede, retired, |hit, _| on_hit(hit));
        }
    }

    /// [`TensorMap::lookup`] of a map made by [`TensorMap::keeping`]: every entry that
    /// overlaps `input`, newest first, retired producers included (`on_hit`'s second
    /// argument says whether `retired(producer)` holds; nothing is unlinked for it); with
    /// `supersede`, entries the access covers are removed after being reported, retired
    /// or not. What it reports with `false` is exactly what [`TensorMap::lookup`] reports
    /// on a map that was given the same inserts and lookups (a retired entry there was
    /// unlinked, or is unlinked now; one that is not retired was kept and superseded
    /// alike, as retirement never ends), in the same order (both insert at a chain's
    /// head and unlink without reordering).
    pub fn lookup_keeping(
        &mut self,
        input: &ViewGeometry,
        supersede: bool,
        retired: &dyn Fn(TaskId) -> bool,
        on_hit: &mut dyn FnMut(Hit, bool),
    ) {
        debug_assert!(
            self.keep.is_some(),
            "only a keeping map keeps retired writers"
        );
        self.walk::<true>(input, supersede, retired, on_hit);
    }

    /// The walk of both lookups: `KEEP` keeps retired entries and reports them.
    #[inline(always)]
    fn walk<const KEEP: bool>(
        &mut self,
        input: &ViewGeometry,
        supersede: bool,
        retired: &dyn Fn(TaskId) -> bool,
        mut on_hit: impl FnMut(Hit, bool),
    ) {
        let b = self.bucket(input.addr);
        let mut prev = NIL;
        let mut cur = self.buckets[b];
        while cur != NIL {
            let entry = self.entries[cur as usize];
            let next = entry.next;
            let stale = !KEEP && retired(entry.producer);
            let mut remove = stale;
            if !stale && entry.geometry.addr == input.addr {
                let overlap = self.overlap(input, &entry.geometry);
                if overlap != Overlap::None {
                    let gone = KEEP && retired(entry.producer);
                    on_hit(
                        Hit {
                            producer: entry.producer,
                            overlap,
                            geometry: entry.geometry,
                        },
                        gone,
                    );
                    remove = supersede && overlap == Overlap::Covered;
                }
            }
            if remove {
                if prev == NIL {
                    self.buckets[b] = next;
                } else {
                    self.entries[prev as usize].next = next;
                }
                self.free(cur);
            } else {
                prev = cur;
            }
            cur = next;
        }
    }

    /// Records `producer` as the latest writer of `geometry`. Returns `false` when the pool
    /// is full even after sweeping retired entries (the caller back-pressures and retries);
    /// on a map made by [`TensorMap::keeping`], [`TensorMap::insert_keeping`].
    pub fn insert(
        &mut self,
        geometry: ViewGeometry,
        producer: TaskId,
        retired: &dyn Fn(TaskId) -> bool,
    ) -> bool {
        if self.keep.is_some() {
            return self.insert_keeping(geometry, producer, retired);
        }
        self.insert_fixed(geometry, producer, retired)
    }

    /// [`TensorMap::insert`] into the pool as it is (no growth, no keeping bound).
    fn insert_fixed(
        &mut self,
        geometry: ViewGeometry,
        producer: TaskId,
        retired: &dyn Fn(TaskId) -> bool,
    ) -> bool {
        if self.free_head == NIL && self.bump as usize == self.entries.len() {
            self.sweep(retired);
        }
        let idx = if self.free_head != NIL {
            let idx = self.free_head;
            self.free_head = self.entries[idx as usize].next;
            idx
        } else if (self.bump as usize) < self.entries.len() {
            self.bump += 1;
            self.bump - 1
        } else {
            return false;
        };
        let b = self.bucket(geometry.addr);
        self.entries[idx as usize] = Entry {
            geometry,
            producer,
            next: self.buckets[b],
        };
        self.buckets[b] = idx;
        self.live += 1;
        true
    }

    /// Records `producer` as the latest writer of `geometry` in a map that never retires
    /// anything: a full pool doubles instead of refusing (allocating when it grows). Under
    /// [`TensorMap::insert_keeping`], which bounds the writers that have not retired.
    pub fn insert_growing(&mut self, geometry: ViewGeometry, producer: TaskId) {
        if self.free_head == NIL && self.bump as usize == self.entries.len() {
            let mut entries = std::mem::take(&mut self.entries).into_vec();
            entries.resize(entries.len().max(64) * 2, Entry::EMPTY);
            self.entries = entries.into_boxed_slice();
        }
        let inserted = self.insert_fixed(geometry, producer, &|_| false);
        debug_assert!(inserted, "a grown pool has a free entry");
    }

    /// [`TensorMap::insert`] of a map made by [`TensorMap::keeping`]: `false` exactly when
    /// the live map would refuse (its pool holds `capacity` writers that have not retired,
    /// all that would be left after its sweep). Those writers are counted only when as many
    /// inserts as were free at the last count have been made (retirement only lowers the
    /// count), so a count costs a walk of the map about once per `capacity` inserts while
    /// few writers are live.
    pub fn insert_keeping(
        &mut self,
        geometry: ViewGeometry,
        producer: TaskId,
        retired: &dyn Fn(TaskId) -> bool,
    ) -> bool {
        let Some(mut keep) = self.keep else {
            return self.insert_fixed(geometry, producer, retired);
        };
        if keep.budget == 0 {
            let unretired = self.count(&|p| !retired(p));
            if unretired >= keep.capacity {
                return false;
            }
            keep.budget = keep.capacity - unretired;
        }
        keep.budget -= 1;
        self.keep = Some(keep);
        self.insert_growing(geometry, producer);
        true
    }

    /// Present entries whose producer satisfies `pred`.
    fn count(&self, pred: &dyn Fn(TaskId) -> bool) -> usize {
        let mut n = 0;
        for &head in self.buckets.iter() {
            let mut cur = head;
            while cur != NIL {
                let e = &self.entries[cur as usize];
                n += usize::from(pred(e.producer));
                cur = e.next;
            }
        }
        n
    }

    /// Frees every entry whose producer has retired.
    pub fn sweep(&mut self, retired: &dyn Fn(TaskId) -> bool) {
        for b in 0..self.buckets.len() {
            let mut prev = NIL;
            let mut cur = self.buckets[b];
            while cur != NIL {
                let next = self.entries[cur as usize].next;
                if retired(self.entries[cur as usize].producer) {
                    if prev == NIL {
                        self.buckets[b] = next;
                    } else {
                        self.entries[prev as usize].next = next;
                    }
                    self.free(cur);
                } else {
                    prev = cur;
                }
                cur = next;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view of a row-major buffer of `parent` shape: `shape` at `offsets`.
    fn view(parent: &[u32], shape: &[u32], offsets: &[u32]) -> ViewGeometry {
        let n = parent.len();
        let mut strides = [0u32; MAX_TENSOR_DIMS];
        let mut s = 1;
        for d in (0..n).rev() {
            strides[d] = s;
            s *= parent[d];
        }
        let mut shapes = [0u32; MAX_TENSOR_DIMS];
        shapes[..n].copy_from_slice(shape);
        let start: u64 = (0..n).map(|d| offsets[d] as u64 * strides[d] as u64).sum();
        ViewGeometry {
            addr: 0x1000,
            start_offset: start,
            shapes,
            strides,
            ndims: n as u8,
            dtype: 0,
            elem_size: 4,
            version: 0,
        }
    }

    fn check(input: ViewGeometry, entry: ViewGeometry, expected: Overlap) {
        assert_eq!(
            check_overlap(&input, &entry),
            expected,
            "input {input:?} entry {entry:?}"
        );
    }

    #[test]
    fn overlap_cases() {
        let p = [8, 8];
        // Disjoint row blocks.
        check(
            view(&p, &[4, 8], &[0, 0]),
            view(&p, &[4, 8], &[4, 0]),
            Overlap::None,
        );
        // Disjoint column blocks share element ranges but not rectangles.
        check(
            view(&p, &[8, 4], &[0, 0]),
            view(&p, &[8, 4], &[0, 4]),
            Overlap::None,
        );
        // Identical views: covered.
        check(
            view(&p, &[8, 8], &[0, 0]),
            view(&p, &[8, 8], &[0, 0]),
            Overlap::Covered,
        );
        // The entry (a tile) lies inside the access (the whole buffer): covered.
        check(
            view(&p, &[8, 8], &[0, 0]),
            view(&p, &[2, 2], &[3, 3]),
            Overlap::Covered,
        );
        // The access is a tile inside the entry: other.
        check(
            view(&p, &[2, 2], &[3, 3]),
            view(&p, &[8, 8], &[0, 0]),
            Overlap::Other,
        );
        // Partial overlap.
        check(
            view(&p, &[4, 4], &[0, 0]),
            view(&p, &[4, 4], &[2, 2]),
            Overlap::Other,
        );
    }

    #[test]
    fn different_strides_are_conservative() {
        let p = [8, 8];
        let a = view(&p, &[8, 8], &[0, 0]);
        let mut t = a;
        t.strides.swap(0, 1); // a transposed view of the same buffer
        check(a, t, Overlap::Other);
        // Different dtype over the same bytes.
        let mut h = view(&[8, 16], &[8, 16], &[0, 0]);
        h.dtype = 1;
        h.elem_size = 2;
        check(a, h, Overlap::Other);
    }

    #[test]
    fn newer_version_forces_other() {
        let p = [8, 8];
        let mut a = view(&p, &[8, 8], &[0, 0]);
        a.version = 1;
        check(a, view(&p, &[8, 8], &[0, 0]), Overlap::Other);
    }

    #[test]
    fn lookup_supersedes_covered_entries_and_skips_retired() {
        let p = [8, 8];
        let mut map = TensorMap::new(8);
        let never = |_: TaskId| false;
        assert!(map.insert(view(&p, &[4, 8], &[0, 0]), TaskId::new(0, 1), &never));
        assert!(map.insert(view(&p, &[4, 8], &[4, 0]), TaskId::new(0, 2), &never));
        let mut hits = Vec::new();
        map.lookup(&view(&p, &[8, 8], &[0, 0]), true, &never, &mut |h| {
            hits.push(h.producer.local())
        });
        assert_eq!(hits, [2, 1]);
        assert_eq!(
            map.live(),
            0,
            "an INOUT over the whole buffer supersedes both halves"
        );

        assert!(map.insert(view(&p, &[8, 8], &[0, 0]), TaskId::new(0, 3), &never));
        let retired = |t: TaskId| t.local() <= 3;
        let mut hits = Vec::new();
        map.lookup(&view(&p, &[1, 1], &[0, 0]), false, &retired, &mut |h| {
            hits.push(h.producer)
        });
        assert!(hits.is_empty());
        assert_eq!(map.live(), 0, "retired entries are unlinked lazily");
    }

    #[test]
    fn full_pool_sweeps_retired_entries() {
        let p = [8, 8];
        let mut map = TensorMap::new(2);
        let never = |_: TaskId| false;
        for i in 0..2 {
            assert!(map.insert(view(&p, &[1, 8], &[i, 0]), TaskId::new(0, i as u64), &never));
        }
        assert!(!map.insert(view(&p, &[1, 8], &[5, 0]), TaskId::new(0, 5), &never));
        let retired = |t: TaskId| t.local() == 0;
        assert!(map.insert(view(&p, &[1, 8], &[5, 0]), TaskId::new(0, 5), &retired));
        assert_eq!(map.live(), 2);
    }

    #[test]
    fn growing_insert_never_refuses_and_keeps_every_writer() {
        let p = [8u32, 8];
        let mut map = TensorMap::new(2);
        for k in 0..200 {
            map.insert_growing(view(&p, &[1, 8], &[k % 8, 0]), TaskId::new(0, k as u64));
        }
        assert_eq!(map.live(), 200);
        let mut n = 0;
        map.lookup(&view(&p, &[8, 8], &[0, 0]), false, &|_| false, &mut |_| {
            n += 1
        });
        assert_eq!(n, 200);
    }

    #[test]
    fn a_growing_map_starts_small_and_finds_what_a_full_sized_one_finds() {
        let p = [64u32, 8];
        let mut small = TensorMap::growing(65536, 4);
        let mut full = TensorMap::new(65536);
        assert_eq!(small.capacity(), 4);
        for k in 0..300u32 {
            let v = view(&p, &[1, 8], &[k % 64, 0]);
            small.insert_growing(v, TaskId::new(0, u64::from(k)));
            full.insert_growing(v, TaskId::new(0, u64::from(k)));
        }
        let hits = |m: &mut TensorMap| {
            let mut found = Vec::new();
            m.lookup(&view(&p, &[4, 8], &[8, 0]), false, &|_| false, &mut |h| {
                found.push(h.producer)
            });
            found
        };
        assert_eq!(hits(&mut small), hits(&mut full));
        assert!(small.capacity() >= 300 && small.capacity() < 65536);
    }

    /// Views for the same-view tests: canonical, transposed, wrapping a parent row,
    /// empty, newer version, another dtype over the same bytes.
    fn odd_views() -> Vec<ViewGeometry> {
        let p = [8, 8];
        let mut transposed = view(&p, &[8, 8], &[0, 0]);
        transposed.strides.swap(0, 1);
        let mut wrapping = view(&p, &[2, 6], &[1, 4]);
        wrapping.strides[0] = 8;
        let empty = view(&p, &[0, 8], &[2, 0]);
        let mut newer = view(&p, &[4, 8], &[0, 0]);
        newer.version = 1;
        let mut half = view(&[8, 16], &[8, 16], &[0, 0]);
        half.dtype = 1;
        half.elem_size = 2;
        vec![
            view(&p, &[8, 8], &[0, 0]),
            view(&p, &[4, 8], &[0, 0]),
            view(&p, &[4, 8], &[2, 0]),
            view(&p, &[4, 4], &[0, 4]),
            transposed,
            wrapping,
            empty,
            newer,
            half,
        ]
    }

    #[test]
    fn same_view_memo_agrees_with_the_general_test() {
        let views = odd_views();
        let mut map = TensorMap::new(8);
        // Every ordered pair, twice over (the second pass reads the memo where it applies),
        // so the memo is refilled and hit in every order.
        for _ in 0..2 {
            for a in &views {
                for b in &views {
                    assert_eq!(
                        map.overlap(a, b),
                        check_overlap(a, b),
                        "input {a:?} entry {b:?}"
                    );
                }
            }
        }
        // The cases the memo keys on, spelled out.
        assert_eq!(map.overlap(&views[0], &views[0]), Overlap::Covered);
        assert_eq!(
            map.overlap(&views[4], &views[4]),
            Overlap::Other,
            "transposed"
        );
        assert_eq!(
            map.overlap(&views[5], &views[5]),
            Overlap::Other,
            "wrapping"
        );
        assert_eq!(map.overlap(&views[6], &views[6]), Overlap::None, "empty");
    }

    /// The producers `lookup` reports for `access` (supersede as for an `inout`), newest first.
    fn inout(
        map: &mut TensorMap,
        access: &ViewGeometry,
        retired: &dyn Fn(TaskId) -> bool,
    ) -> Vec<u64> {
        let mut hits = Vec::new();
        map.lookup(access, true, retired, &mut |h| {
            hits.push(h.producer.local())
        });
        hits
    }

    #[test]
    fn a_chain_of_one_view_finds_exactly_its_predecessor() {
        let never = |_: TaskId| false;
        let mut map = TensorMap::new(16);
        let v = view(&[8, 8], &[8, 8], &[0, 0]);
        for k in 0..10u64 {
            let hits = inout(&mut map, &v, &never);
            let expected: Vec<u64> = if k == 0 { vec![] } else { vec![k - 1] };
            assert_eq!(hits, expected, "hop {k}");
            assert!(map.insert(v, TaskId::new(0, k), &never));
            assert_eq!(map.live(), 1, "each hop supersedes the one before");
        }
        // A view without a rectangle is never superseded: every earlier writer stays a hit.
        let mut map = TensorMap::new(16);
        let mut t = v;
        t.strides.swap(0, 1);
        for k in 0..5u64 {
            let hits = inout(&mut map, &t, &never);
            assert_eq!(hits, (0..k).rev().collect::<Vec<_>>(), "hop {k}");
            assert!(map.insert(t, TaskId::new(0, k), &never));
        }
    }

    #[test]
    fn the_same_view_path_leaves_other_views_and_retired_entries_alone() {
        let never = |_: TaskId| false;
        let p = [8, 8];
        let newest = view(&p, &[4, 8], &[0, 0]);
        let mut other_strides = newest;
        other_strides.strides[0] = 16;
        for (access, expected_hits, expected_live) in [
            // Another offset: a partial overlap, not covered, so not superseded.
            (view(&p, &[4, 8], &[2, 0]), vec![1], 1),
            // Another shape inside the entry: other, kept.
            (view(&p, &[2, 8], &[0, 0]), vec![1], 1),
            // Another shape covering the entry: covered, superseded.
            (view(&p, &[8, 8], &[0, 0]), vec![1], 0),
            // Other strides: other, kept.
            (other_strides, vec![1], 1),
            // Disjoint: no hit.
            (view(&p, &[4, 8], &[4, 0]), vec![], 1),
        ] {
            let mut map = TensorMap::new(8);
            assert!(map.insert(newest, TaskId::new(0, 1), &never));
            // Warm the memo with the entry's own view first.
            assert_eq!(inout(&mut map, &newest, &never), vec![1]);
            assert!(map.insert(newest, TaskId::new(0, 1), &never));
            assert_eq!(
                inout(&mut map, &access, &never),
                expected_hits,
                "{access:?}"
            );
            assert_eq!(map.live(), expected_live, "{access:?}");
        }
        // The same view, but its writer retired: no hit, and the entry is unlinked.
        let mut map = TensorMap::new(8);
        assert!(map.insert(newest, TaskId::new(0, 1), &never));
        let retired = |t: TaskId| t.local() <= 1;
        assert!(inout(&mut map, &newest, &retired).is_empty());
        assert_eq!(map.live(), 0);
    }

    /// A keeping map behind the plain calls: `lookup` reports what a live map would (the
    /// retired writer kept, not reported), `lookup_keeping` reports it flagged, and
    /// `insert` refuses where a live map of the same capacity would.
    #[test]
    fn a_keeping_map_answers_the_plain_calls_as_a_live_map() {
        let never = |_: TaskId| false;
        let p = [8, 8];
        let a = view(&p, &[4, 8], &[0, 0]);
        let b = view(&p, &[4, 8], &[4, 0]);
        let mut map = TensorMap::keeping(2);
        assert!(map.insert(a, TaskId::new(0, 1), &never));
        assert!(map.insert(b, TaskId::new(0, 2), &never));
        let whole = view(&p, &[8, 8], &[0, 0]);
        let first_retired = |t: TaskId| t.local() == 1;
        let mut plain = Vec::new();
        map.lookup(&whole, false, &first_retired, &mut |h| {
            plain.push(h.producer.local())
        });
        assert_eq!(plain, vec![2]);
        let mut all = Vec::new();
        map.lookup_keeping(&whole, false, &first_retired, &mut |h, gone| {
            all.push((h.producer.local(), gone))
        });
        assert_eq!(all, vec![(2, false), (1, true)], "kept, flagged");
        // Two writers that have not retired fill a capacity of two; one retired frees room.
        assert!(!map.insert(a, TaskId::new(0, 3), &never));
        assert!(map.insert(a, TaskId::new(0, 3), &first_retired));
    }
}
