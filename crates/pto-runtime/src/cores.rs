//! Which logical cores are running a subtask right now.
//!
//! Every executing thread takes the cores of the unit it runs before running it and gives
//! them back afterwards, so no two threads ever simulate one core at the same time, whatever
//! the number of threads (the pool grows while kernels hold their cores for long, see
//! [`crate::chip`]). A core's word is `2 × dispatches + busy`: taking it is one
//! compare-and-swap on a cache line of its own (in the normal case only the worker that owns
//! the core touches it, so the line stays in that worker's cache), giving it back one store.
//! The dispatch count is the core's `reg_task_id` in the swimlane (Simpler's per-core
//! register), the same whichever thread ran the subtask.

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicU32, Ordering};

/// The busy flags and dispatch counts of every logical core of a chip.
pub struct CoreTable {
    words: Box<[CachePadded<AtomicU32>]>,
}

impl CoreTable {
    /// `n_cores` free cores that have run nothing.
    pub fn new(n_cores: usize) -> CoreTable {
        CoreTable {
            words: (0..n_cores)
                .map(|_| CachePadded::new(AtomicU32::new(0)))
                .collect(),
        }
    }

    /// Takes `core` if it is free; returns its `reg_task_id` for this dispatch (1, 2, ...;
    /// never 0), or `None` when another thread runs on it (or it does not exist).
    pub fn try_take(&self, core: usize) -> Option<u32> {
        let word = self.words.get(core)?;
        let cur = word.load(Ordering::Relaxed);
        if cur & 1 != 0 {
            return None;
        }
        word.compare_exchange(cur, cur | 1, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| ((cur >> 1).wrapping_add(1) & 0x7FFF_FFFF).max(1))
    }

    /// Gives `core` back. Only the thread that took it may call this.
    pub fn give_back(&self, core: usize) {
        if let Some(word) = self.words.get(core) {
            let cur = word.load(Ordering::Relaxed);
            debug_assert!(cur & 1 == 1, "core {core} given back but not taken");
            word.store((cur | 1).wrapping_add(1), Ordering::Release);
        }
    }

    /// Whether `core` is free at this instant (a hint: it may be taken right after).
    pub fn is_free(&self, core: usize) -> bool {
        self.words
            .get(core)
            .is_some_and(|w| w.load(Ordering::Relaxed) & 1 == 0)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_core_is_taken_once_and_counts_its_dispatches() {
        let t = CoreTable::new(3);
        assert_eq!(t.try_take(1), Some(1));
        assert_eq!(t.try_take(1), None);
        assert!(!t.is_free(1));
        assert!(t.is_free(0));
        t.give_back(1);
        assert!(t.is_free(1));
        assert_eq!(t.try_take(1), Some(2));
        t.give_back(1);
        assert_eq!(t.try_take(0), Some(1));
        assert_eq!(t.try_take(7), None);
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    //! Run with `RUSTFLAGS="--cfg loom" cargo test -p pto-runtime --lib --release loom`.
    use loom::sync::Arc;

    use super::*;

    #[test]
    fn loom_two_threads_never_hold_one_core() {
        loom::model(|| {
            let table = Arc::new(CoreTable::new(1));
            let inside = Arc::new(AtomicU32::new(0));
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let (table, inside) = (Arc::clone(&table), Arc::clone(&inside));
                    loom::thread::spawn(move || {
                        if table.try_take(0).is_some() {
                            assert_eq!(inside.fetch_add(1, Ordering::Relaxed), 0);
                            inside.fetch_sub(1, Ordering::Relaxed);
                            table.give_back(0);
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            assert!(table.is_free(0));
        });
    }
}
