//! Per-thread host performance counters through `perf_event_open`, for the PMU diagnostic.
//!
//! A worker opens one counter group for itself (pid 0, any CPU) and reads it before and
//! after each kernel: one `read` per sample thanks to `PERF_FORMAT_GROUP`. Hardware
//! counters (cycles, instructions) are used where the machine exposes a CPU PMU; software
//! counters (task clock, context switches, page faults) always. The counter names say which
//! ones were available, so `pmu.csv` states what it measured.

use std::os::fd::RawFd;

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
const PERF_COUNT_SW_PAGE_FAULTS: u64 = 2;
const PERF_COUNT_SW_CONTEXT_SWITCHES: u64 = 3;
const PERF_FORMAT_GROUP: u64 = 1 << 3;
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;

/// `struct perf_event_attr` up to `PERF_ATTR_SIZE_VER7` (128 bytes); unused fields zero.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved2: u16,
    aux_sample_size: u32,
    reserved3: u32,
    sig_data: u64,
}

const _: () = assert!(std::mem::size_of::<PerfEventAttr>() == 128);

/// Most counters in a group.
pub const MAX_COUNTERS: usize = 5;

/// An open counter group of the calling thread.
pub struct PerfGroup {
    fds: Vec<RawFd>,
    names: Vec<&'static str>,
}

fn open_counter(type_: u32, config: u64, group: RawFd) -> Option<RawFd> {
    for exclude in [0, FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV] {
        let attr = PerfEventAttr {
            type_,
            size: std::mem::size_of::<PerfEventAttr>() as u32,
            config,
            read_format: PERF_FORMAT_GROUP,
            flags: exclude,
            ..Default::default()
        };
        // SAFETY: `attr` is a valid perf_event_attr of the declared size; pid 0 / cpu -1
        // measures the calling thread; the returned descriptor is owned by the group.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const PerfEventAttr,
                0,
                -1,
                group,
                0u64,
            )
        };
        if fd >= 0 {
            return Some(fd as RawFd);
        }
    }
    None
}

impl PerfGroup {
    /// Opens every counter this machine allows for the calling thread; `None` when even
    /// the software task clock is refused (perf_event_paranoid, seccomp).
    pub fn open() -> Option<PerfGroup> {
        let leader = open_counter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, -1)?;
        let mut g = PerfGroup {
            fds: vec![leader],
            names: vec!["task_clock_ns"],
        };
        let others: [(u32, u64, &'static str); 4] = [
            (
                PERF_TYPE_SOFTWARE,
                PERF_COUNT_SW_CONTEXT_SWITCHES,
                "context_switches",
            ),
            (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page_faults"),
            (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cpu_cycles"),
            (
                PERF_TYPE_HARDWARE,
                PERF_COUNT_HW_INSTRUCTIONS,
                "instructions",
            ),
        ];
        for (t, c, name) in others {
            if let Some(fd) = open_counter(t, c, leader) {
                g.fds.push(fd);
                g.names.push(name);
            }
        }
        Some(g)
    }

    /// The counter names, in value order.
    pub fn names(&self) -> &[&'static str] {
        &self.names
    }

    /// Reads every counter into `out` (in [`PerfGroup::names`] order).
    pub fn read(&self, out: &mut [u64; MAX_COUNTERS]) -> bool {
        let mut buf = [0u64; MAX_COUNTERS + 1];
        // SAFETY: reading at most `size_of_val(&buf)` bytes into `buf` from our own fd.
        let n = unsafe {
            libc::read(
                self.fds[0],
                buf.as_mut_ptr().cast(),
                std::mem::size_of_val(&buf),
            )
        };
        if n < 8 {
            return false;
        }
        let nr = (buf[0] as usize).min(MAX_COUNTERS);
        out[..nr].copy_from_slice(&buf[1..1 + nr]);
        true
    }
}

impl Drop for PerfGroup {
    fn drop(&mut self) {
        for &fd in self.fds.iter().rev() {
            // SAFETY: each fd was opened by this group and is closed once.
            unsafe { libc::close(fd) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_clock_advances_when_available() {
        // Containers may forbid perf_event_open; then there is nothing to measure.
        let Some(g) = PerfGroup::open() else { return };
        assert_eq!(g.names()[0], "task_clock_ns");
        let mut a = [0u64; MAX_COUNTERS];
        let mut b = [0u64; MAX_COUNTERS];
        assert!(g.read(&mut a));
        let mut x = 0u64;
        for i in 0..1_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
        assert!(g.read(&mut b));
        assert!(b[0] > a[0], "task clock must advance: {a:?} -> {b:?}");
    }
}
