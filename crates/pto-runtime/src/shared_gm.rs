//! Global memory that every PTO-ISA subtask of this process may touch besides its own
//! tensors: the comm windows of an L3 chip process.
//!
//! A kernel reaches a peer's window through an address it computes itself (the peer's
//! `windowsIn[]` base from its `CommContext`), not through a tensor argument, so the GM
//! bounds check of the PTO-ISA header (`PtoSimContext::gm_ranges`) must know those windows.
//! Whoever maps them registers the range ([`register`]) for as long as the mapping lives; the
//! executor appends the registered ranges to every subtask's tensor ranges. The registry is
//! read through a generation counter, so a subtask pays one atomic load when nothing changed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Most ranges registered at a time (a chip joins few comm domains).
pub const MAX_SHARED_GM_RANGES: usize = 16;

/// Why a range could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum SharedGmError {
    /// `begin >= end`.
    #[error("shared GM range [{begin:#x}, {end:#x}) is empty")]
    Empty {
        /// First byte.
        begin: u64,
        /// One past the last byte.
        end: u64,
    },
    /// [`MAX_SHARED_GM_RANGES`] are registered already.
    #[error(
        "more than {MAX_SHARED_GM_RANGES} shared GM ranges (comm windows) in one chip process: each comm domain a chip joins takes two, so give a chip at most {} comm domains",
        MAX_SHARED_GM_RANGES / 2
    )]
    Full,
}

struct Registry {
    next_id: u64,
    ranges: Vec<(u64, [u64; 2])>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    next_id: 0,
    ranges: Vec::new(),
});
/// Bumped on every change (starts at 1 after the first one; 0 = never registered).
static GENERATION: AtomicU64 = AtomicU64::new(0);

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    // A panic while holding the lock leaves the vector consistent (pushes and retains only).
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// A registered range; unregistered when dropped.
#[derive(Debug)]
pub struct SharedGmRange {
    id: u64,
}

/// Lets every later subtask of this process touch bytes `[begin, end)`.
pub fn register(begin: u64, end: u64) -> Result<SharedGmRange, SharedGmError> {
    if begin >= end {
        return Err(SharedGmError::Empty { begin, end });
    }
    let mut r = registry();
    if r.ranges.len() >= MAX_SHARED_GM_RANGES {
        return Err(SharedGmError::Full);
    }
    let id = r.next_id;
    r.next_id += 1;
    r.ranges.push((id, [begin, end]));
    GENERATION.fetch_add(1, Ordering::Release);
    Ok(SharedGmRange { id })
}

impl Drop for SharedGmRange {
    fn drop(&mut self) {
        let mut r = registry();
        r.ranges.retain(|(id, _)| *id != self.id);
        GENERATION.fetch_add(1, Ordering::Release);
    }
}

/// One executor's copy of the registry.
#[derive(Debug, Default)]
pub(crate) struct SharedGmCache {
    generation: u64,
    ranges: Vec<[u64; 2]>,
}

impl SharedGmCache {
    /// The registered ranges, refreshed when the registry changed since the last call.
    pub(crate) fn ranges(&mut self) -> &[[u64; 2]] {
        let g = GENERATION.load(Ordering::Acquire);
        if g != self.generation {
            let r = registry();
            self.ranges.clear();
            self.ranges.extend(r.ranges.iter().map(|(_, range)| *range));
            self.generation = GENERATION.load(Ordering::Acquire);
        }
        &self.ranges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_sees_registrations_and_their_drop() {
        let mut cache = SharedGmCache::default();
        let before = cache.ranges().len();
        let a = register(0x1000, 0x2000).unwrap();
        assert!(cache.ranges().contains(&[0x1000, 0x2000]));
        drop(a);
        assert!(!cache.ranges().contains(&[0x1000, 0x2000]));
        assert_eq!(cache.ranges().len(), before);
        assert!(matches!(register(5, 5), Err(SharedGmError::Empty { .. })));

        // One test, so no other test of this module registers meanwhile: past the limit
        // a registration is refused, and a drop makes room again.
        let held: Vec<SharedGmRange> = (before..MAX_SHARED_GM_RANGES)
            .map(|i| register(0x10_0000 * (i as u64 + 1), 0x10_0000 * (i as u64 + 1) + 64).unwrap())
            .collect();
        let full = register(0x9000, 0xa000).unwrap_err();
        assert!(matches!(full, SharedGmError::Full), "{full}");
        assert!(full.to_string().contains("shared GM ranges"), "{full}");
        drop(held);
        assert!(register(0x9000, 0xa000).is_ok());
    }
}
