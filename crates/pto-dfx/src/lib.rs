//! DFX formats: typed writers and readers for every diagnostic artifact.
//!
//! A run with diagnostics on leaves files under its output prefix; this
//! crate owns their formats, one module per artifact:
//!
//! | Module | File | Records |
//! |---|---|---|
//! | [`swimlane`] | `chip_swimlane_records.json` | [`swimlane::SwimlaneFile`] |
//! | [`deps`] | `deps.json` | [`deps::DepsFile`], [`deps::tensor_id`] |
//! | [`args_dump`] | `args_dump/args_dump.json` | [`args_dump::ArgsDumpManifest`] |
//! | [`args_bin`] | `args_dump/args.bin` | [`args_bin::ArgsBin`], [`args_bin::gather_logical`] |
//! | [`pmu`] | `pmu.csv` | [`pmu::PmuRow`] |
//! | [`scope_stats`] | `scope_stats/scope_stats.jsonl` | [`scope_stats::ScopeStatsFile`] |
//! | [`name_map`] | `name_map_<label>.json` | [`name_map::NameMap`] |
//! | [`compact::swimlane`] | `chip_swimlane_records.bin` | [`compact::swimlane::SwimlaneRecords`] |
//! | [`compact::deps`] | `deps.bin` | [`compact::deps::DepsRecords`] |
//!
//! The two `.bin` forms are this runtime's own (`--dfx-format compact`): the
//! runtime's records as they are, from which [`compact::swimlane::model`] and
//! [`compact::deps::model`] produce Simpler's JSON on demand, byte-identical
//! to what the JSON mode writes.
//!
//! [`deps_scan`] is the fast reader of the dependency graph (either form) that the
//! viewers use; the careful readers above are what it falls back to on damage. The
//! offline viewers themselves (swimlane converter, deps viewer, scope-stats plot, dump
//! viewer, critical path) live in the crate `pto-dfx-view`, built on this one.
//!
//! Each module has `render` (the exact bytes), `write` (atomic, through
//! [`atomic`]) and `read` / `parse`, which return a [`Loaded`]: the records
//! plus a list of [`Problem`]s for damage the reader stepped over (a bad
//! row, a truncated last line). Damage it cannot step over, such as
//! truncated JSON, a missing top-level key or a swimlane level outside
//! 1..=4, is a [`ReadError`] naming the file and the key. The shared
//! vocabulary is [`TaskId`], [`DataType`] and [`CoreType`].
//!
//! ```
//! use pto_dfx::deps::{self, DepsFile};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("run").join(deps::FILE_NAME);
//! deps::write(&path, &DepsFile::default())?;
//! assert_eq!(std::fs::read_to_string(&path)?, "{\"tasks\":[],\"tensors\":[],\"edges\":[]}\n");
//! let loaded = deps::read(&path)?;
//! assert!(loaded.problems.is_empty());
//! assert_eq!(loaded.value, DepsFile::default());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Key decision: byte-exact Simpler formats
//!
//! A key design decision made in this crate is that every writer produces
//! *exactly* the bytes Simpler's writers produce (key order, separators,
//! spacing, line breaks, number formatting, 64-bit values as strings in
//! `deps.json`, `0x%016x` task ids, the C++ float formatting of scalar
//! values), and every reader accepts Simpler's files, older variants
//! included (5-column AICore rows, the legacy `tensors` key, missing
//! `early_dispatch`). The reasons:
//!
//! - Simpler's offline tools (swimlane converter, deps viewer, critical path,
//!   dump viewer, scope-stats plot), Perfetto pipelines and users' scripts
//!   then work on our runs unchanged, and our viewers on theirs.
//! - Byte equality is testable: a golden file either matches or not, so a
//!   drift in our writers cannot hide behind "equivalent JSON".
//! - Several formats are not plain JSON-serializer output (a hand-built
//!   layout with per-row lines, `[a,b,c]` without spaces next to `", "`
//!   elsewhere, C `%g` floats), so a generic serializer could not match them.
//!
//! Where we record more than Simpler (host PMU counters, for instance), we
//! add columns or keys and never change the meaning of existing ones.
//!
//! This crate depends on no runtime crate of the workspace and on neither
//! `pto-build-output` nor ptoas: it is the format contract alone, which the
//! runtime writes through and the viewers read through. The record types are this
//! crate's own; runtime structs are converted at the boundary.
#![deny(missing_docs)]

pub mod args_bin;
pub mod args_dump;
pub mod atomic;
pub mod behind;
pub mod compact;
pub mod core_type;
pub mod deps;
pub mod deps_scan;
pub mod dtype;
pub mod error;
mod json;
pub mod name_map;
pub mod pmu;
pub mod printable;
pub mod provenance;
pub mod schema;
pub mod scope_stats;
pub mod set_lock;
pub mod swimlane;
pub mod task_id;

pub use atomic::atomic_write;
pub use core_type::CoreType;
pub use dtype::DataType;
pub use error::{
    InvalidRecord, Loaded, Problem, ReadError, ReadErrorKind, WriteError, WriteErrorKind,
    MAX_FILE_BYTES,
};
pub use json::read_file as read_artifact;
pub use schema::DfxSchema;
pub use task_id::{format_task_display, format_task_hex, TaskId};

/// Nanoseconds per second: what [`ticks`] and [`cycles_ns`] convert by.
const NS_PER_S: u64 = 1_000_000_000;

/// `ns` nanoseconds in ticks of a `freq` Hz counter, rounded down: how every writer turns
/// the runtime's host times into Simpler's cycle fields. A frequency that divides 1 GHz
/// (50 MHz, 1 GHz) is one 64-bit division of `ns`, exactly the same value; otherwise the
/// 128-bit product (a library division) only when the 64-bit one overflows (monotonic
/// times past about six minutes of uptime at 50 MHz).
pub fn ticks(ns: u64, freq: u64) -> u64 {
    if NS_PER_S.is_multiple_of(freq) {
        return ns / (NS_PER_S / freq);
    }
    match ns.checked_mul(freq) {
        Some(p) => p / NS_PER_S,
        None => ((u128::from(ns) * u128::from(freq)) / u128::from(NS_PER_S)) as u64,
    }
}

/// `cycles` ticks of a `freq` Hz counter in nanoseconds, rounded down and saturating at
/// `u64::MAX` (`u64::MAX` too for a frequency of 0): the inverse of [`ticks`], how the
/// viewers put Simpler's cycle fields on a nanosecond timeline. A frequency that divides
/// 1 GHz is one 64-bit multiplication unless it overflows, a multiple of 1 GHz one 64-bit
/// division, both exact; any other the 128-bit quotient.
pub fn cycles_ns(cycles: u64, freq: u64) -> u64 {
    if freq == 0 {
        return u64::MAX;
    }
    if NS_PER_S.is_multiple_of(freq) {
        if let Some(ns) = cycles.checked_mul(NS_PER_S / freq) {
            return ns;
        }
    } else if freq.is_multiple_of(NS_PER_S) {
        return cycles / (freq / NS_PER_S);
    }
    u64::try_from(u128::from(cycles) * u128::from(NS_PER_S) / u128::from(freq)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ticks_round_down_and_survive_a_64_bit_overflow() {
        assert_eq!(super::ticks(1_000, 50_000_000), 50);
        assert_eq!(super::ticks(19, 50_000_000), 0);
        assert_eq!(super::ticks(21, 50_000_000), 1);
        // u64::MAX ns at 2 GHz: the product needs 128 bits, the result fits.
        let want = (u128::from(u64::MAX) * 2_000_000_000 / 1_000_000_000) as u64;
        assert_eq!(super::ticks(u64::MAX, 2_000_000_000), want);
        assert_eq!(
            super::ticks(u64::MAX / 4, 3_000_000_000),
            (u64::MAX / 4) * 3
        );
    }

    /// The counter frequencies the conversions are checked at: divisors and multiples of
    /// 1 GHz, and neither.
    const FREQS: [u64; 8] = [
        1,
        3,
        50_000_000,
        100_000_000,
        999_999_999,
        1_000_000_000,
        1_500_000_000,
        2_000_000_000,
    ];

    /// 1000 values per frequency over the whole range of `u64` (xorshift, shifted by a
    /// varying amount so that small values come too).
    fn values() -> impl Iterator<Item = u64> {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        std::iter::repeat_with(move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x >> (x % 64)
        })
        .take(1000)
    }

    /// Every frequency gives floor(cycles × 1e9 / freq), saturated.
    #[test]
    fn cycles_in_ns_are_the_exact_quotient_at_any_frequency() {
        for freq in FREQS {
            for cycles in values() {
                let want = u128::from(cycles) * 1_000_000_000 / u128::from(freq);
                let want = u64::try_from(want).unwrap_or(u64::MAX);
                assert_eq!(
                    super::cycles_ns(cycles, freq),
                    want,
                    "{cycles} at {freq} Hz"
                );
            }
        }
        assert_eq!(super::cycles_ns(5, 0), u64::MAX);
    }

    /// Every frequency, the divisors of 1 GHz included, gives floor(ns × freq / 1e9).
    #[test]
    fn ticks_are_the_exact_quotient_at_any_frequency() {
        for freq in FREQS {
            for ns in values() {
                let want = u128::from(ns) * u128::from(freq) / 1_000_000_000;
                if let Ok(want) = u64::try_from(want) {
                    assert_eq!(super::ticks(ns, freq), want, "{ns} ns at {freq} Hz");
                }
            }
        }
        assert_eq!(super::ticks(u64::MAX, 0), 0);
    }
}
