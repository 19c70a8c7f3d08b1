//! Timestamps for the diagnostics' per-task records.
//!
//! A record takes up to seven timestamps per task, and `clock_gettime` costs about 30 ns
//! on the virtual machines this runs on, against about 12 ns for reading the CPU's
//! time-stamp counter. So the collectors take a [`stamp`]: the raw time-stamp counter
//! where the kernel itself keeps `CLOCK_MONOTONIC` with it (x86-64 with the `tsc`
//! clocksource, which the kernel selects only once it has found the counter invariant and
//! synchronised across CPUs), else `CLOCK_MONOTONIC` nanoseconds. A run takes an
//! [`Anchor`] (a stamp and `CLOCK_MONOTONIC` read together) before it starts and another
//! after its last thread stopped; [`StampScale`] maps every stamp between the two onto
//! nanoseconds by linear interpolation, so the records leave the runtime in
//! `CLOCK_MONOTONIC` nanoseconds, as before (the error is that of reading the two clocks
//! together, a few tens of nanoseconds, not a drift).
//!
//! Ordering: reading the counter does not wait for earlier instructions. A stamp that must
//! not precede what the thread has just observed from another thread (a dispatch stamp
//! after popping a task that another thread's completion released) is taken with
//! [`stamp_ordered`], which waits for them (`lfence`) first; a stamp taken before a
//! release operation needs nothing, since the release becomes visible only after the
//! stamp's instruction retired.

use std::sync::OnceLock;

/// Monotonic host time in nanoseconds (`CLOCK_MONOTONIC`).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: CLOCK_MONOTONIC with a valid out pointer cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Whether stamps are time-stamp-counter ticks (else nanoseconds).
fn use_tsc() -> bool {
    static TSC: OnceLock<bool> = OnceLock::new();
    *TSC.get_or_init(|| {
        cfg!(target_arch = "x86_64")
            && std::env::var_os("PTO_DFX_CLOCK").is_none_or(|v| v != "monotonic")
            && std::fs::read_to_string(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .is_ok_and(|s| s.trim() == "tsc")
    })
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tsc() -> u64 {
    // SAFETY: RDTSC exists on every x86-64 CPU and has no memory effects.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tsc_ordered() -> u64 {
    // SAFETY: as above; LFENCE (SSE2, part of x86-64) only orders instruction execution.
    unsafe {
        core::arch::x86_64::_mm_lfence();
        core::arch::x86_64::_rdtsc()
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc() -> u64 {
    monotonic_ns()
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc_ordered() -> u64 {
    monotonic_ns()
}

/// A timestamp for a record (see the module docs for its unit).
#[inline]
pub fn stamp() -> u64 {
    if use_tsc() {
        tsc()
    } else {
        monotonic_ns()
    }
}

/// A [`stamp`] that is not taken before the thread's earlier instructions completed, for a
/// stamp that must not precede what the thread just observed from another thread.
#[inline]
pub fn stamp_ordered() -> u64 {
    if use_tsc() {
        tsc_ordered()
    } else {
        monotonic_ns()
    }
}

/// A [`stamp`] and `CLOCK_MONOTONIC` read at the same moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Anchor {
    /// The stamp.
    pub stamp: u64,
    /// Nanoseconds.
    pub ns: u64,
}

/// Reads an [`Anchor`]: the stamp is the midpoint of two stamps taken around the clock
/// reading, from the tightest of a few tries (a preemption in between is discarded).
pub fn anchor() -> Anchor {
    if !use_tsc() {
        let ns = monotonic_ns();
        return Anchor { stamp: ns, ns };
    }
    let mut best = (u64::MAX, Anchor { stamp: 0, ns: 0 });
    for _ in 0..5 {
        let before = tsc_ordered();
        let ns = monotonic_ns();
        let after = tsc_ordered();
        let width = after.wrapping_sub(before);
        if width < best.0 {
            best = (
                width,
                Anchor {
                    stamp: before + width / 2,
                    ns,
                },
            );
        }
    }
    best.1
}

/// The linear map from stamps to nanoseconds between two anchors.
#[derive(Clone, Copy, Debug)]
pub struct StampScale {
    origin: Anchor,
    /// Nanoseconds per stamp, as a 32.32 fixed-point number.
    mult: u64,
}

impl StampScale {
    /// The map through `start` and `end` (identity when stamps are nanoseconds or the two
    /// anchors cannot define a slope).
    pub fn between(start: Anchor, end: Anchor) -> StampScale {
        let ticks = end.stamp.saturating_sub(start.stamp);
        let ns = end.ns.saturating_sub(start.ns);
        let mult = if !use_tsc() || ticks == 0 || ns == 0 {
            1 << 32
        } else {
            // Fits: ns / ticks is far below 2^32 for any real counter.
            (((ns as u128) << 32) / ticks as u128).min(u64::MAX as u128) as u64
        };
        StampScale {
            origin: if use_tsc() {
                start
            } else {
                Anchor { stamp: 0, ns: 0 }
            },
            mult,
        }
    }

    /// The nanoseconds of stamp `s` (0 stays 0: it marks a reading that was not taken).
    #[inline]
    pub fn ns(&self, s: u64) -> u64 {
        if s == 0 {
            return 0;
        }
        if s >= self.origin.stamp {
            self.origin.ns + self.delta(s - self.origin.stamp)
        } else {
            self.origin
                .ns
                .saturating_sub(self.delta(self.origin.stamp - s))
        }
    }

    /// The nanoseconds of a difference of stamps.
    #[inline]
    pub fn delta(&self, d: u64) -> u64 {
        ((d as u128 * self.mult as u128) >> 32) as u64
    }
}

/// Nanoseconds in a difference of stamps during a run, before its end anchor exists (the
/// PMU's user-space task clock). The scale is measured once per process over a
/// millisecond, so its error is a few parts in 10^5 of the difference.
pub fn elapsed_ns(d: u64) -> u64 {
    static SCALE: OnceLock<StampScale> = OnceLock::new();
    SCALE
        .get_or_init(|| {
            let start = anchor();
            if use_tsc() {
                while monotonic_ns() < start.ns + 1_000_000 {
                    std::hint::spin_loop();
                }
            }
            StampScale::between(start, anchor())
        })
        .delta(d)
}

/// Measures [`elapsed_ns`]'s scale now, outside any hot path.
pub fn calibrate() {
    elapsed_ns(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_map_onto_the_monotonic_clock() {
        let start = anchor();
        let s1 = stamp();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let mid_ns = monotonic_ns();
        let s2 = stamp_ordered();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let end = anchor();
        let scale = StampScale::between(start, end);
        let (n1, n2) = (scale.ns(s1), scale.ns(s2));
        assert!(n1 >= start.ns.saturating_sub(1_000) && n1 <= start.ns + 100_000);
        // s2 was read just after mid_ns: within 50 µs of it on a loaded machine.
        assert!(
            n2 + 1_000 >= mid_ns && n2 <= mid_ns + 50_000,
            "{n2} vs {mid_ns}"
        );
        assert!(scale.ns(end.stamp).abs_diff(end.ns) < 1_000);
        assert_eq!(scale.ns(0), 0);
        // A 5 ms sleep is 5 ms by either scale.
        let slept = scale.delta(s2 - s1);
        assert!((5_000_000..20_000_000).contains(&slept), "{slept}");
        let slept = elapsed_ns(s2 - s1);
        assert!((5_000_000..20_000_000).contains(&slept), "{slept}");
    }

    #[test]
    fn stamps_never_go_back_on_one_thread() {
        let mut last = stamp();
        for _ in 0..100_000 {
            let s = stamp_ordered();
            assert!(s >= last);
            last = s;
        }
    }
}
