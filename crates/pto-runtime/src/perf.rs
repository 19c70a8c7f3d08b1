//! Per-thread host performance counters through `perf_event_open`, for the PMU diagnostic.
//!
//! A worker opens one counter group for itself (pid 0, any CPU) and samples it before and
//! after each kernel. Hardware counters (cycles, instructions) are used where the machine
//! exposes a CPU PMU; software counters (task clock, context switches, page faults) always.
//! The counter names say which ones were available, so `pmu.csv` states what it measured.
//!
//! # Sampling without a system call per task
//!
//! A `read` of the group costs one to three microseconds on a virtual machine, several
//! times an empty task. With software counters only, [`PerfGroup::sample`] gets exact
//! values from user space almost always:
//!
//! - every counter changes only while the thread runs, and the kernel rewrites the group
//!   leader's mmap page (its sequence word `lock`) whenever the thread is scheduled in or
//!   out. So while `lock` is unchanged since an exact read (the *anchor*), the thread has
//!   been on the CPU all along: the task clock advanced by exactly the elapsed monotonic
//!   time and the context-switch count did not move;
//! - page faults do not touch that page, so a second, standalone page-fault event samples
//!   every fault (`sample_period = 1`) into a small ring buffer: its `data_head` moves on
//!   any fault (and on throttling, which is tracked until the kernel unthrottles it).
//!
//! When either shows activity, `sample` does one exact grouped `read` and takes a new anchor
//! — after a context switch, which itself costs more than that read, or after page faults.
//! The values are the same a `read` at that moment returns; only the cost moves. With a
//! hardware counter in the group, or when the page or the fault ring cannot be mapped,
//! every sample is a `read`, as before.

use std::os::fd::RawFd;
use std::sync::atomic::{fence, Ordering};

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
const FLAG_DISABLED: u64 = 1;
const FLAG_WATERMARK: u64 = 1 << 14;
/// `PERF_EVENT_IOC_ENABLE` (`_IO('$', 0)`) and `PERF_IOC_FLAG_GROUP`.
const PERF_EVENT_IOC_ENABLE: u64 = 0x2400;
const PERF_IOC_FLAG_GROUP: u64 = 1;
const PERF_RECORD_THROTTLE: u32 = 5;
const PERF_RECORD_UNTHROTTLE: u32 = 6;
/// `struct perf_event_mmap_page`: the sequence word, and the ring-buffer control words.
const PAGE_LOCK: usize = 8;
const PAGE_DATA_HEAD: usize = 1024;
const PAGE_DATA_TAIL: usize = 1032;
const PAGE_DATA_OFFSET: usize = 1040;
const PAGE_DATA_SIZE: usize = 1048;
/// Data pages of the fault ring (a power of two): 2048 eight-byte sample records.
const FAULT_RING_PAGES: usize = 4;
/// Attempts at an exact read that no scheduling event interrupts.
const EXACT_TRIES: usize = 4;

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

/// An mmap of a perf event (its control page, and a ring buffer after it if any).
struct Mapping {
    base: *mut u8,
    len: usize,
}

impl Mapping {
    fn new(fd: RawFd, len: usize, writable: bool) -> Option<Mapping> {
        let prot = libc::PROT_READ | if writable { libc::PROT_WRITE } else { 0 };
        // SAFETY: mapping a perf event descriptor we own; the kernel checks `len`.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
        (p != libc::MAP_FAILED).then_some(Mapping {
            base: p.cast(),
            len,
        })
    }

    /// A word of the control page, read as the kernel may be writing it.
    fn word<T: Copy>(&self, offset: usize) -> T {
        // SAFETY: `offset` is a field of `perf_event_mmap_page` (inside the first page),
        // aligned for `T`.
        unsafe { std::ptr::read_volatile(self.base.add(offset).cast::<T>()) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping once.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// The page-fault ring: one 8-byte record per fault (see the module docs).
struct FaultRing {
    map: Mapping,
    data_offset: usize,
    data_size: usize,
    /// Whether the kernel throttled the sampler and has not said it stopped.
    throttled: bool,
}

impl FaultRing {
    /// Whether records arrived since the last [`FaultRing::drain`].
    fn pending(&self) -> bool {
        self.map.word::<u64>(PAGE_DATA_HEAD) != self.map.word::<u64>(PAGE_DATA_TAIL)
    }

    /// Consumes every record, tracking throttling.
    fn drain(&mut self) {
        let head: u64 = self.map.word(PAGE_DATA_HEAD);
        fence(Ordering::Acquire);
        let mut pos: u64 = self.map.word(PAGE_DATA_TAIL);
        while pos < head {
            let at = self.data_offset + (pos as usize & (self.data_size - 1));
            // SAFETY: records are 8-byte aligned and at least a header long, so a header
            // never straddles the end of the data area; `at` lies inside the mapping.
            let (kind, size) = unsafe {
                let h = self.map.base.add(at);
                (
                    std::ptr::read_volatile(h.cast::<u32>()),
                    std::ptr::read_volatile(h.add(6).cast::<u16>()),
                )
            };
            match kind {
                PERF_RECORD_THROTTLE => self.throttled = true,
                PERF_RECORD_UNTHROTTLE => self.throttled = false,
                _ => {}
            }
            if size < 8 {
                break;
            }
            pos += size as u64;
        }
        fence(Ordering::SeqCst);
        // SAFETY: the tail word of our writable control page; only this thread writes it.
        unsafe { std::ptr::write_volatile(self.map.base.add(PAGE_DATA_TAIL).cast::<u64>(), head) };
    }
}

/// The user-space state of [`PerfGroup::sample`]: the leader's page, the fault ring and
/// the last exact read.
struct Fast {
    leader: Mapping,
    faults: FaultRing,
    anchor_valid: bool,
    anchor_lock: u32,
    /// The [`crate::clock::stamp`] of the last exact read.
    anchor_stamp: u64,
    anchor: [u64; MAX_COUNTERS],
}

/// An open counter group of the calling thread.
pub struct PerfGroup {
    fds: Vec<RawFd>,
    names: Vec<&'static str>,
    fast: Option<Fast>,
    fault_fd: Option<RawFd>,
    exact_reads: u64,
}

/// Opens one counter; returns the descriptor and the exclusion flags it took. The leader
/// (`group == -1`) starts disabled, so that the whole group is enabled at once.
fn open_counter(type_: u32, config: u64, group: RawFd) -> Option<(RawFd, u64)> {
    for exclude in [0, FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV] {
        let attr = PerfEventAttr {
            type_,
            size: std::mem::size_of::<PerfEventAttr>() as u32,
            config,
            read_format: PERF_FORMAT_GROUP,
            flags: exclude | if group == -1 { FLAG_DISABLED } else { 0 },
            ..Default::default()
        };
        if let Some(fd) = perf_event_open(&attr, group) {
            return Some((fd, exclude));
        }
    }
    None
}

fn perf_event_open(attr: &PerfEventAttr, group: RawFd) -> Option<RawFd> {
    // SAFETY: `attr` is a valid perf_event_attr of the declared size; pid 0 / cpu -1
    // measures the calling thread; the returned descriptor is owned by the caller.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const PerfEventAttr,
            0,
            -1,
            group,
            0u64,
        )
    };
    (fd >= 0).then_some(fd as RawFd)
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// The page-fault sampler and its ring, checked to see a fault; `None` when unavailable.
fn open_fault_ring(exclude: u64) -> Option<(RawFd, FaultRing)> {
    let page = page_size();
    let data_size = FAULT_RING_PAGES * page;
    let attr = PerfEventAttr {
        type_: PERF_TYPE_SOFTWARE,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: PERF_COUNT_SW_PAGE_FAULTS,
        sample_period: 1,
        flags: exclude | FLAG_WATERMARK,
        // Nobody polls the ring: wake no one until it is nearly full.
        wakeup_events: (data_size - page) as u32,
        ..Default::default()
    };
    let fd = perf_event_open(&attr, -1)?;
    let Some(map) = Mapping::new(fd, page + data_size, true) else {
        // SAFETY: closing the descriptor opened above.
        unsafe { libc::close(fd) };
        return None;
    };
    let offset: u64 = map.word(PAGE_DATA_OFFSET);
    let size: u64 = map.word(PAGE_DATA_SIZE);
    let mut ring = FaultRing {
        map,
        data_offset: if offset == 0 { page } else { offset as usize },
        data_size: if size == 0 { data_size } else { size as usize },
        throttled: false,
    };
    let usable = ring.data_size.is_power_of_two()
        && ring.data_offset + ring.data_size <= ring.map.len
        && sees_a_fault(&mut ring);
    if !usable {
        drop(ring);
        // SAFETY: as above.
        unsafe { libc::close(fd) };
        return None;
    }
    Some((fd, ring))
}

/// Touches a fresh anonymous page and checks that the ring recorded the fault.
fn sees_a_fault(ring: &mut FaultRing) -> bool {
    ring.drain();
    let len = page_size();
    // SAFETY: a private anonymous mapping of one page, written once and unmapped.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return false;
        }
        std::ptr::write_volatile(p.cast::<u8>(), 1);
        libc::munmap(p, len);
    }
    let seen = ring.pending();
    ring.drain();
    seen
}

impl PerfGroup {
    /// Opens every counter this machine allows for the calling thread; `None` when even
    /// the software task clock is refused (perf_event_paranoid, seccomp).
    pub fn open() -> Option<PerfGroup> {
        // The user-space task clock scales stamps: measure the scale now, not in a sample.
        crate::clock::calibrate();
        let (leader, _) = open_counter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, -1)?;
        let mut g = PerfGroup {
            fds: vec![leader],
            names: vec!["task_clock_ns"],
            fast: None,
            fault_fd: None,
            exact_reads: 0,
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
        let mut fault_exclude = None;
        for (t, c, name) in others {
            if let Some((fd, exclude)) = open_counter(t, c, leader) {
                g.fds.push(fd);
                g.names.push(name);
                if c == PERF_COUNT_SW_PAGE_FAULTS && t == PERF_TYPE_SOFTWARE {
                    fault_exclude = Some(exclude);
                }
            }
        }
        // Members added to a running leader would only start counting at the thread's next
        // scheduling; enabling the group as a whole starts them all now.
        // SAFETY: an ioctl on our own leader descriptor with an integer argument.
        if unsafe { libc::ioctl(leader, PERF_EVENT_IOC_ENABLE as _, PERF_IOC_FLAG_GROUP) } != 0 {
            return None;
        }
        // User-space sampling needs every counter to be a software one whose changes the
        // leader's page or the fault ring reveal.
        let software_only = g
            .names
            .iter()
            .all(|n| matches!(*n, "task_clock_ns" | "context_switches" | "page_faults"));
        if software_only {
            let leader_map = Mapping::new(leader, page_size(), false);
            let ring = match fault_exclude {
                Some(exclude) => open_fault_ring(exclude),
                None => None,
            };
            if let (Some(leader_map), Some((fd, faults))) = (leader_map, ring) {
                g.fault_fd = Some(fd);
                g.fast = Some(Fast {
                    leader: leader_map,
                    faults,
                    anchor_valid: false,
                    anchor_lock: 0,
                    anchor_stamp: 0,
                    anchor: [0; MAX_COUNTERS],
                });
            }
        }
        Some(g)
    }

    /// The counter names, in value order.
    pub fn names(&self) -> &[&'static str] {
        &self.names
    }

    /// Whether [`PerfGroup::sample`] works from user space (see the module docs).
    pub fn user_space(&self) -> bool {
        self.fast.is_some()
    }

    /// Exact grouped `read`s done so far (one per sample without the user-space path).
    pub fn exact_reads(&self) -> u64 {
        self.exact_reads
    }

    /// Reads every counter into `out` (in [`PerfGroup::names`] order) with one system call.
    pub fn read(&mut self, out: &mut [u64; MAX_COUNTERS]) -> bool {
        self.exact_reads += 1;
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

    /// The counters now, into `out`; returns the [`crate::clock::stamp`] they hold for
    /// (0 when they could not be read). From user space when nothing but time passed since
    /// the last exact read, else through [`PerfGroup::read`] (see the module docs).
    pub fn sample(&mut self, out: &mut [u64; MAX_COUNTERS]) -> u64 {
        let Some(fast) = &mut self.fast else {
            let ok = self.read(out);
            return if ok { crate::clock::stamp() } else { 0 };
        };
        let lock: u32 = fast.leader.word(PAGE_LOCK);
        if fast.anchor_valid
            && lock == fast.anchor_lock
            && !fast.faults.throttled
            && !fast.faults.pending()
        {
            let now = crate::clock::stamp();
            // A preemption between the first check and the clock reading would put
            // off-CPU time into the task clock: the sequence word must still be the same.
            if fast.leader.word::<u32>(PAGE_LOCK) != fast.anchor_lock {
                return self.sample_exact(out);
            }
            *out = fast.anchor;
            // Index 0 is the task clock (the group leader).
            out[0] = fast.anchor[0].wrapping_add(crate::clock::elapsed_ns(
                now.saturating_sub(fast.anchor_stamp),
            ));
            return now;
        }
        self.sample_exact(out)
    }

    /// An exact read no scheduling event interrupts, taken as the new anchor. Faults are
    /// drained first, so one that happens after the read is seen by the next sample.
    fn sample_exact(&mut self, out: &mut [u64; MAX_COUNTERS]) -> u64 {
        for _ in 0..EXACT_TRIES {
            let fast = self.fast.as_mut().map(|f| {
                f.faults.drain();
                f.leader.word::<u32>(PAGE_LOCK)
            });
            let mut v = [0u64; MAX_COUNTERS];
            if !self.read(&mut v) {
                return 0;
            }
            let now = crate::clock::stamp();
            let Some(f) = self.fast.as_mut() else {
                return 0;
            };
            let after: u32 = f.leader.word(PAGE_LOCK);
            *out = v;
            if fast == Some(after) {
                f.anchor_valid = true;
                f.anchor_lock = after;
                f.anchor_stamp = now;
                f.anchor = v;
                return now;
            }
            f.anchor_valid = false;
        }
        crate::clock::stamp()
    }
}

impl Drop for PerfGroup {
    fn drop(&mut self) {
        self.fast = None;
        for &fd in self.fds.iter().rev().chain(self.fault_fd.iter()) {
            // SAFETY: each fd was opened by this group and is closed once.
            unsafe { libc::close(fd) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(n: u64) {
        let mut x = 0u64;
        for i in 0..n {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
    }

    #[test]
    fn task_clock_advances_when_available() {
        // Containers may forbid perf_event_open; then there is nothing to measure.
        let Some(mut g) = PerfGroup::open() else {
            return;
        };
        assert_eq!(g.names()[0], "task_clock_ns");
        let mut a = [0u64; MAX_COUNTERS];
        let mut b = [0u64; MAX_COUNTERS];
        assert!(g.read(&mut a));
        spin(1_000_000);
        assert!(g.read(&mut b));
        assert!(b[0] > a[0], "task clock must advance: {a:?} -> {b:?}");
    }

    #[test]
    fn user_space_samples_agree_with_reads() {
        let Some(mut g) = PerfGroup::open() else {
            return;
        };
        let mut a = [0u64; MAX_COUNTERS];
        let mut b = [0u64; MAX_COUNTERS];
        let mut exact = [0u64; MAX_COUNTERS];
        let ta = g.sample(&mut a);
        spin(2_000_000);
        let tb = g.sample(&mut b);
        assert!(g.read(&mut exact));
        assert!(ta > 0 && tb > ta);
        // The task clock never runs ahead of an exact read taken afterwards, and it covers
        // at least the on-CPU part of the interval.
        assert!(b[0] >= a[0] && b[0] <= exact[0], "{a:?} {b:?} {exact:?}");
        for k in 1..g.names().len() {
            assert!(
                b[k] >= a[k] && b[k] <= exact[k],
                "{}: {a:?} {b:?} {exact:?}",
                g.names()[k]
            );
        }
        if !g.user_space() {
            return;
        }
        // Back-to-back samples with nothing in between stay in user space (a few exact
        // reads for preemption on a busy machine at most).
        let before = g.exact_reads();
        let mut v = [0u64; MAX_COUNTERS];
        for _ in 0..1000 {
            g.sample(&mut v);
        }
        assert!(
            g.exact_reads() - before < 100,
            "{} exact reads",
            g.exact_reads() - before
        );
    }

    #[test]
    fn context_switches_and_faults_are_seen_exactly() {
        let Some(mut g) = PerfGroup::open() else {
            return;
        };
        let cs = g.names().iter().position(|n| *n == "context_switches");
        let pf = g.names().iter().position(|n| *n == "page_faults");
        let mut a = [0u64; MAX_COUNTERS];
        let mut b = [0u64; MAX_COUNTERS];
        g.sample(&mut a);
        g.sample(&mut a);
        std::thread::sleep(std::time::Duration::from_millis(2));
        g.sample(&mut b);
        if let Some(cs) = cs {
            assert!(b[cs] > a[cs], "a sleep is a context switch: {a:?} -> {b:?}");
        }
        // The sleep is off the CPU: the task clock must not count it.
        assert!(b[0] - a[0] < 1_500_000, "{a:?} -> {b:?}");
        let Some(pf) = pf else { return };
        let page = page_size();
        let pages = 64;
        g.sample(&mut a);
        // SAFETY: a private anonymous mapping, each page written once, then unmapped.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                pages * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            for i in 0..pages {
                std::ptr::write_volatile(p.cast::<u8>().add(i * page), 1);
            }
            libc::munmap(p, pages * page);
        }
        g.sample(&mut b);
        assert!(b[pf] - a[pf] >= pages as u64, "{a:?} -> {b:?}");
    }
}
