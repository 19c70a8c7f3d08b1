//! A deterministic generator for the crate's randomised tests (xorshift, fixed seeds), so
//! that a failure reproduces.

/// Xorshift64 state; seed it with any non-zero value.
pub(crate) struct Rng(pub u64);

impl Rng {
    /// A value in `0..n` (`n` > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}
