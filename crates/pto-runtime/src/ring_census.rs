//! What a ring would have needed, counted after it ran out of room.
//!
//! When a scope's tasks (or their outputs) do not fit a ring, the run stops with a
//! flow-control or heap deadlock, but the orchestration still runs to its end: every later
//! submit is ignored. At the moment of failure only the tasks submitted so far are known, so
//! a size derived from them ("at least 8") may fail again one task later. The census keeps
//! counting through the ignored submits — what each open scope holds on the failing ring,
//! released when the scope ends — and reports the peak, so the advice names a size that
//! holds every scope of this run.
//!
//! The counts are exact for orchestrations whose submits do not depend on data the kernels
//! produce (after a fatal error the blocking reads return without waiting); the message says
//! "this run" for that reason.

use crate::config::N_RINGS;

/// The ring resource that ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// Task slots (`ring_task_window`): one per live task.
    TaskWindow,
    /// Output bytes (`ring_heap`): a task's outputs, 64-byte aligned.
    Heap,
}

/// The census of one ring after it ran out of room (see the module docs).
#[derive(Debug, Clone)]
pub struct RingCensus {
    ring: usize,
    resource: Resource,
    /// What each open scope holds on the ring, by depth (outermost first).
    held: Vec<u64>,
    live: u64,
    peak: u64,
    /// The largest single amount (heap: one task's outputs, which a wrap may skip past).
    largest: u64,
}

impl RingCensus {
    /// Starts counting on `ring`: `held[d]` is what the open scope at depth `d` holds now,
    /// the failing task's amount included; `largest` is the largest single amount among them.
    pub fn start(ring: usize, resource: Resource, held: Vec<u64>, largest: u64) -> RingCensus {
        let live = held.iter().sum();
        RingCensus {
            ring,
            resource,
            held,
            live,
            peak: live,
            largest,
        }
    }

    /// The resource being counted.
    pub fn resource(&self) -> Resource {
        self.resource
    }

    /// A scope opened.
    pub fn scope_begin(&mut self) {
        self.held.push(0);
    }

    /// The innermost scope closed: what it held is released.
    pub fn scope_end(&mut self) {
        if let Some(h) = self.held.pop() {
            self.live -= h;
        }
    }

    /// An ignored submit on `ring` that would have taken `amount`.
    pub fn submit(&mut self, ring: usize, amount: u64) {
        if ring != self.ring {
            return;
        }
        if let Some(innermost) = self.held.last_mut() {
            *innermost += amount;
            self.live += amount;
            self.peak = self.peak.max(self.live);
            self.largest = self.largest.max(amount);
        }
    }

    /// The smallest power-of-two size that holds the peak (PyPTO's `RunConfig` asks for
    /// powers of two; Simpler's runtime takes any size above its minimum).
    pub fn fitting_size(&self) -> u64 {
        match self.resource {
            // A ring holds at most window - 1 live tasks.
            Resource::TaskWindow => (self.peak + 1).next_power_of_two().max(4),
            // An allocation never straddles the end: up to one allocation's worth is skipped.
            Resource::Heap => (self.peak.saturating_add(self.largest))
                .checked_next_power_of_two()
                .unwrap_or(u64::MAX)
                .max(1024),
        }
    }

    /// The sentence appended to the deadlock error.
    pub fn advice(&self) -> String {
        let (what, field, env) = match self.resource {
            Resource::TaskWindow => ("tasks", "ring_task_window", "PTO2_RING_TASK_WINDOW"),
            Resource::Heap => ("bytes of outputs", "ring_heap", "PTO2_RING_HEAP"),
        };
        let ring_note = if self.ring == N_RINGS - 1 {
            format!("ring {} (scope depth {} and deeper)", self.ring, self.ring)
        } else {
            format!("ring {}", self.ring)
        };
        format!(
            "; counted to the end of the orchestration (its later submits ignored), this run's scopes hold up to {} {what} at once on {ring_note}: {field} (or {env}) = {} fits",
            self.peak,
            self.fitting_size()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_follows_scopes_and_fits() {
        // Depth 0 holds 3 tasks (the failing one included); a nested scope adds 5 and ends;
        // the outer one adds 2 more.
        let mut c = RingCensus::start(0, Resource::TaskWindow, vec![3], 1);
        c.scope_begin();
        for _ in 0..5 {
            c.submit(0, 1);
        }
        c.submit(1, 1); // another ring: not counted
        c.scope_end();
        c.submit(0, 1);
        c.submit(0, 1);
        assert_eq!(c.peak, 8);
        assert_eq!(c.live, 5);
        // 8 live tasks need a window of at least 9.
        assert_eq!(c.fitting_size(), 16);
        assert!(c.advice().contains("up to 8 tasks") && c.advice().contains("= 16 fits"));
    }

    #[test]
    fn heap_sizes_allow_for_the_wrap_and_the_minimum() {
        let mut c = RingCensus::start(2, Resource::Heap, vec![0, 0, 4096], 4096);
        c.submit(2, 512);
        // 4608 live bytes plus one 4096-byte allocation skipped at a wrap.
        assert_eq!(c.fitting_size(), 16384);
        let small = RingCensus::start(0, Resource::Heap, vec![64], 64);
        assert_eq!(small.fitting_size(), 1024);
        let huge = RingCensus::start(0, Resource::Heap, vec![u64::MAX / 2], u64::MAX / 2);
        assert_eq!(huge.fitting_size(), u64::MAX);
    }

    #[test]
    fn an_exact_window_leaves_room_for_one_more() {
        // 7 live tasks fit a window of 8 (window - 1 = 7).
        let c = RingCensus::start(0, Resource::TaskWindow, vec![7], 1);
        assert_eq!(c.fitting_size(), 8);
        let c = RingCensus::start(0, Resource::TaskWindow, vec![8], 1);
        assert_eq!(c.fitting_size(), 16);
    }
}
