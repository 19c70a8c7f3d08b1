//! A tiny deterministic PRNG (SplitMix64) for example data.
//!
//! The generated `.npy` files must be byte-identical on every run and every machine, so the
//! examples use this fixed, portable generator instead of an external crate whose streams
//! could change between versions.

/// SplitMix64 (Steele, Lea and Flood): a 64-bit state advanced by a Weyl constant and mixed.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform float in `[-1, 1)` on a grid of `2^-23`: every value is exact in `f32`.
    pub fn uniform_f32(&mut self) -> f32 {
        let k = (self.next_u64() >> 40) as u32; // 24 bits
        k as f32 / (1u32 << 23) as f32 - 1.0
    }

    /// `n` uniform floats in `[-1, 1)`.
    pub fn uniform_vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.uniform_f32()).collect()
    }

    /// A uniform integer in `[0, n)` (`n > 0`), by multiply-shift.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_stream() {
        // First outputs of the reference implementation seeded with 1234567.
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
        assert_eq!(r.next_u64(), 9817491932198370423);
    }

    #[test]
    fn uniform_floats_stay_in_range_and_are_exact() {
        let mut r = SplitMix64::new(7);
        for _ in 0..10_000 {
            let v = r.uniform_f32();
            assert!((-1.0..1.0).contains(&v));
            let scaled = f64::from(v) * f64::from(1u32 << 23);
            assert_eq!(scaled, scaled.trunc());
        }
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut v: Vec<u32> = (0..40).collect();
        SplitMix64::new(3).shuffle(&mut v);
        let mut sorted = v.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..40).collect::<Vec<_>>());
        assert_ne!(v, sorted);
    }
}
