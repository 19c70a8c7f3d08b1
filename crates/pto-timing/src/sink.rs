//! The runtime's end of the trace: a fixed buffer the header fills, consumed into a
//! [`CoreScheduler`] whenever it is full and when the subtask ends.

use std::sync::Arc;

use crate::core::{CoreScheduler, SubtaskTiming};
use crate::event::{Event, RawEvent, RawTrace};
use crate::latency::Model;

/// Events the buffer holds between flushes (64 KiB; a flush costs the same per event
/// whatever the size, and a small buffer stays in cache and costs few page faults).
pub const DEFAULT_CAPACITY: usize = 1024;

struct SinkState {
    model: Arc<Model>,
    sched: CoreScheduler,
    error: Option<String>,
}

impl SinkState {
    fn consume(&mut self, events: &[RawEvent]) {
        for raw in events {
            if self.error.is_some() {
                return;
            }
            // SAFETY: the header stores null or string literals of the kernel library, which
            // the runtime keeps loaded while the subtask runs; names are copied on error.
            let Some(e) = (unsafe { Event::decode(raw) }) else {
                continue;
            };
            if let Err(u) = self.sched.step(&self.model, &e) {
                self.error = Some(u.to_string());
            }
        }
    }
}

/// One thread's trace buffer and the schedule of the subtask being traced. The buffer is
/// allocated when the thread traces its first subtask (threads that run no PTO-ISA kernel
/// never pay for it) and reused for every later one; nothing is allocated per event.
pub struct TraceSink {
    raw: Box<RawTrace>,
    events: Vec<RawEvent>,
    capacity: usize,
    state: Box<SinkState>,
}

/// An unused event slot.
const EMPTY: RawEvent = RawEvent {
    op: 0,
    kind: 0,
    dtype: 0,
    loc: [0; 3],
    src_dtype: 0,
    rows: 0,
    cols: 0,
    k: 0,
    off: [0; 3],
    len: [0; 3],
    reserved: 0,
    gm_bytes: 0,
    name: std::ptr::null(),
};

// SAFETY: the raw pointers point into the sink's own boxes; the sink is used by one thread
// at a time (the executor that owns it).
unsafe impl Send for TraceSink {}

unsafe extern "C" fn flush(trace: *mut RawTrace) {
    // SAFETY: `trace` is the `raw` box of a live TraceSink (the header passes back the
    // pointer the runtime gave it) whose `owner` is that sink's state box.
    let t = unsafe { &mut *trace };
    // SAFETY: as above.
    let state = unsafe { &mut *t.owner.cast::<SinkState>() };
    let n = (t.len.min(t.capacity)) as usize;
    // SAFETY: `events` has `capacity` initialised slots, the first `n` written by the header.
    let events = unsafe { std::slice::from_raw_parts(t.events, n) };
    state.consume(events);
    t.len = 0;
}

impl TraceSink {
    /// A sink with room for `capacity` events between flushes.
    pub fn new(model: Arc<Model>, capacity: usize) -> TraceSink {
        let mut state = Box::new(SinkState {
            model,
            sched: CoreScheduler::new(),
            error: None,
        });
        let raw = Box::new(RawTrace {
            events: std::ptr::null_mut(),
            capacity: 0,
            len: 0,
            flush: Some(flush),
            owner: (&mut *state as *mut SinkState).cast(),
        });
        TraceSink {
            raw,
            events: Vec::new(),
            capacity: capacity.max(1),
            state,
        }
    }

    /// Starts a subtask: an empty trace and a core at cycle 0. The pointer goes into
    /// `PtoSimContext::trace`.
    pub fn begin(&mut self) -> *mut RawTrace {
        if self.events.is_empty() {
            self.events = vec![EMPTY; self.capacity];
        }
        self.raw.len = 0;
        self.raw.events = self.events.as_mut_ptr();
        self.raw.capacity = self.events.len() as u32;
        self.state.sched.reset();
        self.state.error = None;
        &mut *self.raw
    }

    /// Ends the subtask: consumes what is left and returns its timing.
    pub fn finish(&mut self) -> SubtaskTiming {
        let lost = self.raw.len.saturating_sub(self.raw.capacity);
        let n = self.raw.len.min(self.raw.capacity) as usize;
        self.state.consume(&self.events[..n]);
        self.raw.len = 0;
        let timing = self.state.sched.take_timing();
        if let Some(why) = self.state.error.take() {
            return SubtaskTiming::Unmodelled(why);
        }
        if lost > 0 {
            return SubtaskTiming::Unmodelled(format!("{lost} trace events were lost"));
        }
        timing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: u8, op: u16) -> RawEvent {
        RawEvent {
            op,
            kind,
            dtype: 1,
            loc: [0, 0xFF, 0xFF],
            src_dtype: 1,
            rows: 16,
            cols: 64,
            k: 0,
            off: [0; 3],
            len: [4096, 0, 0],
            reserved: 0,
            gm_bytes: 4096,
            name: std::ptr::null(),
        }
    }

    /// What the header does: append, flushing when full.
    fn push(t: *mut RawTrace, e: RawEvent) {
        // SAFETY: `t` is a live sink's trace, used as the header uses it.
        unsafe {
            if (*t).len >= (*t).capacity {
                ((*t).flush.unwrap())(t);
            }
            *(*t).events.add((*t).len as usize) = e;
            (*t).len += 1;
        }
    }

    #[test]
    fn a_long_trace_streams_through_a_small_buffer() {
        let model = Arc::new(Model::a2a3());
        let mut small = TraceSink::new(model.clone(), 3);
        let mut big = TraceSink::new(model, 100);
        let mut results = Vec::new();
        for sink in [&mut small, &mut big] {
            let t = sink.begin();
            for _ in 0..10 {
                push(t, event(0, crate::op::Op::TLOAD as u16));
                push(t, event(0, crate::op::Op::TEXP as u16));
            }
            results.push(sink.finish());
        }
        assert_eq!(results[0], results[1]);
        assert!(matches!(&results[0], SubtaskTiming::Modelled(c) if c.instructions == 20));
        // A second subtask starts from zero.
        let t = big.begin();
        push(t, event(0, 0));
        assert!(matches!(big.finish(), SubtaskTiming::Unmodelled(w) if w.contains('?')));
    }
}
