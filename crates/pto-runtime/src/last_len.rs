//! How long each diagnostics record vector was when the process's last run ended, so that
//! the next run reserves it up front.
//!
//! A recorder's vector that grows while the chip runs pays, at each doubling, for a copy
//! of everything recorded so far and for fresh pages, on the thread that records: a
//! worker on a chain, the orchestrator on independent tasks, the critical path either way.
//! A process that runs again (a benchmark's rounds, a warm `pto` chip process, a Python
//! session) records about as much as last time, and the allocator still holds the pages
//! the last run's records were freed into: reserving the last run's length takes them
//! whole, without a copy or a page fault. The first run of a process grows as before.
//! Each slot keeps the length of the last run that recorded anything of its kind (a run
//! with the switch off records nothing and leaves it), and only the last (not the
//! largest), so a small run after a large one reserves little.

use std::sync::atomic::{AtomicUsize, Ordering};

/// One recorder's length at the end of the last run.
#[derive(Debug)]
pub(crate) struct LastLen(AtomicUsize);

impl LastLen {
    /// No run yet.
    pub(crate) const fn new() -> Self {
        LastLen(AtomicUsize::new(0))
    }

    /// An empty vector with room for the last run's length, and for at least `min`.
    pub(crate) fn vec<T>(&self, min: usize) -> Vec<T> {
        Vec::with_capacity(self.0.load(Ordering::Relaxed).max(min))
    }

    /// Remembers `v`'s length for the next run, unless `v` is empty: a run that recorded
    /// nothing of this kind (its switch off) leaves the length of the last one that did.
    pub(crate) fn keep<T>(&self, v: &[T]) {
        if !v.is_empty() {
            self.0.store(v.len(), Ordering::Relaxed);
        }
    }
}

/// Slots of a per-worker recorder: workers `i` and `i + PER_WORKER` share one (a pool of
/// more workers than this is not what the memo is for).
pub(crate) const PER_WORKER: usize = 16;

/// A per-worker recorder's slots, one per worker index modulo [`PER_WORKER`].
pub(crate) struct PerWorker([LastLen; PER_WORKER]);

impl PerWorker {
    /// No run yet.
    pub(crate) const fn new() -> Self {
        PerWorker([const { LastLen::new() }; PER_WORKER])
    }

    /// Worker `index`'s slot.
    pub(crate) fn of(&self, index: usize) -> &LastLen {
        &self.0[index % PER_WORKER]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_reserves_what_the_last_one_kept() {
        let len = LastLen::new();
        assert_eq!(
            len.vec::<u64>(0).capacity(),
            0,
            "nothing before the first run"
        );
        len.keep(&[0u64; 1000]);
        assert!(len.vec::<u64>(0).capacity() >= 1000);
        len.keep(&[0u64; 3]);
        len.keep::<u64>(&[]);
        let v = len.vec::<u64>(0);
        assert!(
            (3..1000).contains(&v.capacity()),
            "the last length, not the largest"
        );
    }

    #[test]
    fn workers_have_slots_of_their_own() {
        let per = PerWorker::new();
        per.of(0).keep(&[0u8; 10]);
        per.of(1).keep(&[0u8; 20]);
        assert!(per.of(0).vec::<u8>(0).capacity() >= 10);
        assert!(per.of(0).vec::<u8>(0).capacity() < 20);
        assert!(per.of(1).vec::<u8>(0).capacity() >= 20);
        assert!(per.of(PER_WORKER + 1).vec::<u8>(0).capacity() >= 20);
    }
}
