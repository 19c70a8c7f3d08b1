//! Hash maps keyed by task ids and small integer tuples, for the viewers'
//! million-entry joins and the writers' and runtime's tables of ids.
//!
//! The standard library's SipHash resists hash flooding, which matters for
//! maps keyed by untrusted strings; here the keys are integers from files
//! the user asked to view, and the maps are hot (one lookup per task row,
//! per edge end). [`IdHasher`] is the multiply-rotate hash of the Firefox /
//! rustc "FxHash" family: a few instructions per word, good enough spread
//! for ids that differ in their low bits.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A fast, non-cryptographic hasher for integer keys.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// The hash of `h` followed by word `w`: [`IdHasher`]'s one step, for a caller that hashes
/// a value's fields itself.
#[inline]
pub fn mix(h: u64, w: u64) -> u64 {
    (h.rotate_left(5) ^ w).wrapping_mul(SEED)
}

impl IdHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = mix(self.0, word);
    }
}

impl Hasher for IdHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.add(i as u32 as u64);
    }
}

/// A `HashMap` with [`IdHasher`].
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;
/// A `HashSet` with [`IdHasher`].
pub type IdSet<K> = HashSet<K, BuildHasherDefault<IdHasher>>;

/// An empty [`IdMap`] with room for `n` entries.
pub fn map_with_capacity<K, V>(n: usize) -> IdMap<K, V> {
    IdMap::with_capacity_and_hasher(n, BuildHasherDefault::default())
}

/// An empty [`IdSet`] with room for `n` entries.
pub fn set_with_capacity<K>(n: usize) -> IdSet<K> {
    IdSet::with_capacity_and_hasher(n, BuildHasherDefault::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_work_and_spread_close_ids() {
        let mut m: IdMap<(u32, u32), usize> = map_with_capacity(4);
        for core in 0..100u32 {
            for reg in 0..100u32 {
                m.insert((core, reg), (core * 100 + reg) as usize);
            }
        }
        assert_eq!(m.len(), 10_000);
        assert_eq!(m[&(42, 7)], 4207);
        let hash = |v: u64| {
            let mut h = IdHasher::default();
            h.write_u64(v);
            h.finish()
        };
        assert_ne!(
            hash(1) >> 57,
            hash(2) >> 57,
            "top bits (hashbrown's tag) differ"
        );
    }
}
