//! Helpers shared by the fuzz targets.

/// The separator between the files of a multi-file input
/// (`deps.json` and a swimlane file; a manifest and its `args.bin`).
pub const SEPARATOR: &[u8] = b"\n--8<--\n";

/// `data` split at the first [`SEPARATOR`]: the first file, and the rest
/// (empty when there is no separator).
pub fn split2(data: &[u8]) -> (&[u8], &[u8]) {
    match data.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
        Some(i) => (&data[..i], &data[i + SEPARATOR.len()..]),
        None => (data, &[]),
    }
}

/// Structured mutations for the swimlane targets (the mutations that found the
/// `core_to_thread[69] = 2^29` allocation): a number of the JSON text, or an aligned
/// little-endian word of a compact file, replaced by an extreme value or by itself with
/// one bit flipped. The targets' custom mutators apply one of these, or libFuzzer's own
/// mutation, so generic mutations (and the dictionaries in `fuzz/dicts/`) still run.
pub mod mutate {
    /// Values that probe every count, index and time: zero, -1, powers of two at the
    /// type boundaries, 2^29 (the bit that was flipped) and past `u64`.
    pub const EXTREMES: &[&str] = &[
        "0",
        "-1",
        "1",
        "2",
        "255",
        "1023",
        "1024",
        "65536",
        "536870912",
        "2147483647",
        "2147483648",
        "4294967295",
        "4294967296",
        "9223372036854775807",
        "-9223372036854775808",
        "18446744073709551615",
        "18446744073709551616",
        "1e400",
    ];

    /// A small deterministic generator from libFuzzer's seed.
    pub struct Rng(u64);

    impl Rng {
        /// Seeded.
        pub fn new(seed: u32) -> Self {
            Rng(u64::from(seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
        }

        /// The next value below `n` (`n > 0`).
        pub fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// The byte ranges of the numbers in JSON text (a `-` or digit run that follows
    /// `:`, `[`, `,` or white space), found without parsing.
    fn numbers(text: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < text.len() {
            let starts = (text[i].is_ascii_digit() || text[i] == b'-')
                && (i == 0 || matches!(text[i - 1], b':' | b'[' | b',' | b' ' | b'\n' | b'\t'));
            if starts {
                let mut j = i + 1;
                while j < text.len()
                    && (text[j].is_ascii_digit() || matches!(text[j], b'.' | b'e' | b'E' | b'+' | b'-'))
                {
                    j += 1;
                }
                out.push((i, j));
                i = j;
            } else {
                i += 1;
            }
        }
        out
    }

    /// Replaces one number of the JSON text in `data[..size]` by an extreme value or by
    /// itself with one bit flipped; the new size, or `None` when there is no number or
    /// the result exceeds `data.len()`.
    pub fn json_number(data: &mut [u8], size: usize, seed: u32) -> Option<usize> {
        let spans = numbers(&data[..size]);
        if spans.is_empty() {
            return None;
        }
        let mut rng = Rng::new(seed);
        let (a, b) = spans[rng.below(spans.len())];
        let old = std::str::from_utf8(&data[a..b]).ok()?;
        let new = match (rng.below(2), old.parse::<i128>()) {
            (0, Ok(v)) => (v ^ (1i128 << rng.below(64))).to_string(),
            _ => EXTREMES[rng.below(EXTREMES.len())].to_string(),
        };
        let new_size = size - (b - a) + new.len();
        if new_size > data.len() {
            return None;
        }
        let tail = data[b..size].to_vec();
        data[a..a + new.len()].copy_from_slice(new.as_bytes());
        data[a + new.len()..new_size].copy_from_slice(&tail);
        Some(new_size)
    }

    /// Overwrites one 4-aligned little-endian word of `data[..size]` (a count, an index, a
    /// core type, a time) by an extreme value or by itself with one bit flipped; `None`
    /// when the input is shorter than a word.
    pub fn binary_word(data: &mut [u8], size: usize, seed: u32) -> Option<usize> {
        if size < 4 {
            return None;
        }
        let mut rng = Rng::new(seed);
        let at = 4 * rng.below(size / 4);
        let word = u32::from_le_bytes(data[at..at + 4].try_into().ok()?);
        let new = match rng.below(3) {
            0 => word ^ (1 << rng.below(32)),
            1 => [0, 1, 1023, 1024, 1 << 29, 0x7fff_ffff, 0x8000_0000, u32::MAX][rng.below(8)],
            _ => {
                // A 64-bit field: both halves.
                if at + 8 <= size {
                    let v = [u64::MAX, 1 << 62, 1 << 63, 1 << 32][rng.below(4)];
                    data[at..at + 8].copy_from_slice(&v.to_le_bytes());
                    return Some(size);
                }
                u32::MAX
            }
        };
        data[at..at + 4].copy_from_slice(&new.to_le_bytes());
        Some(size)
    }
}
