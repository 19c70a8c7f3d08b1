//! The per-core pipe schedule: a subtask's trace → per-pipe busy cycles and total cycles.
//!
//! The scalar unit issues instructions in program order, [`Arch::issue_cycles`] each, into
//! per-pipe in-order queues. An instruction starts when it has been issued, its pipe is free,
//! every `wait_flag` on its pipe has seen its `set_flag`, and its on-chip operands are ready:
//! a read waits for the last write of an overlapping byte range, a write for the last read
//! and write of it (so a kernel without flags is still ordered by its data; double
//! buffering — the next tile in another buffer — overlaps). `set_flag(src, dst, e)` fires
//! when everything issued to `src` so far has finished; `wait_flag(src, dst, e)` holds `dst`
//! until then. `pipe_barrier(PIPE_ALL)` stops issue until every pipe drains;
//! `pipe_barrier(p)` orders `p` after its own earlier work (already true of an in-order
//! pipe). Cross-core waits (TPOP of a tile another core pushes) are not modelled.
//!
//! [`Arch::issue_cycles`]: crate::params::Arch::issue_cycles

use std::collections::HashMap;

use crate::event::{Event, Instr, Operand};
use crate::latency::{Model, Unmodelled};
use crate::op::{Pipe, N_PIPES, PIPE_ALL};

/// At most this many busy intervals are kept per subtask; past it, each pipe's later work
/// extends that pipe's last interval (coarser, still inside the subtask, bounded memory).
pub const MAX_SPANS: usize = 2048;

/// One busy interval of a pipe, in cycles from the subtask's first issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipeSpan {
    /// The pipe.
    pub pipe: Pipe,
    /// First busy cycle.
    pub start: u64,
    /// First idle cycle after the interval.
    pub end: u64,
}

/// The predicted time of one subtask on its core.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreTiming {
    /// Cycles from the first issue to the last pipe going idle.
    pub total: u64,
    /// Busy cycles of each pipe, in [`Pipe::ALL`] order.
    pub busy: [u64; N_PIPES],
    /// Instructions scheduled.
    pub instructions: u64,
    /// When each pipe was busy: back-to-back instructions of a pipe form one interval, in
    /// order of their start per pipe (at most [`MAX_SPANS`] plus one per pipe; the Perfetto
    /// pipe tracks).
    pub spans: Vec<PipeSpan>,
}

/// The outcome for one subtask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubtaskTiming {
    /// Every instruction had parameters.
    Modelled(CoreTiming),
    /// Why there is no prediction (first unmodelled instruction, no instructions, overflow).
    Unmodelled(String),
}

/// One past access of an on-chip byte range.
#[derive(Clone, Copy, Debug)]
struct Access {
    end: u32,
    last_write: u64,
    last_read: u64,
}

/// The schedule state of one core while a trace is replayed.
#[derive(Debug, Default)]
pub struct CoreScheduler {
    issue: u64,
    pipe_free: [u64; N_PIPES],
    gate: [u64; N_PIPES],
    flags: HashMap<(u8, u8, u32), u64>,
    /// Accesses keyed by (buffer, first byte).
    accesses: HashMap<(u8, u32), Access>,
    /// Per pipe, the index in `timing.spans` of its last interval.
    last_span: [Option<u32>; N_PIPES],
    timing: CoreTiming,
}

impl CoreScheduler {
    /// A core at cycle 0.
    pub fn new() -> CoreScheduler {
        CoreScheduler::default()
    }

    /// Replays `events` with `model`; the first unmodelled instruction ends the replay.
    pub fn run(model: &Model, events: impl IntoIterator<Item = Event>) -> SubtaskTiming {
        let mut s = CoreScheduler::new();
        for e in events {
            if let Err(u) = s.step(model, &e) {
                return SubtaskTiming::Unmodelled(u.to_string());
            }
        }
        s.into_timing()
    }

    /// The outcome of the events stepped so far, leaving the scheduler at cycle 0 for the
    /// next subtask with its maps' capacity kept (no allocation per subtask once warm).
    pub fn take_timing(&mut self) -> SubtaskTiming {
        let last = self.pipe_free.iter().copied().max().unwrap_or(0);
        let mut timing = std::mem::take(&mut self.timing);
        timing.total = last.max(self.issue);
        self.issue = 0;
        self.pipe_free = [0; N_PIPES];
        self.gate = [0; N_PIPES];
        self.flags.clear();
        self.accesses.clear();
        self.last_span = [None; N_PIPES];
        if timing.instructions == 0 {
            return SubtaskTiming::Unmodelled("the kernel ran no PTO-ISA instruction".to_string());
        }
        SubtaskTiming::Modelled(timing)
    }

    /// Forgets the events stepped so far (as [`CoreScheduler::take_timing`] does).
    pub fn reset(&mut self) {
        let _ = self.take_timing();
    }

    /// The outcome of the events stepped so far: unmodelled when there were none.
    pub fn into_timing(self) -> SubtaskTiming {
        if self.timing.instructions == 0 {
            return SubtaskTiming::Unmodelled("the kernel ran no PTO-ISA instruction".to_string());
        }
        SubtaskTiming::Modelled(self.finish())
    }

    /// Schedules one event.
    pub fn step(&mut self, model: &Model, e: &Event) -> Result<(), Unmodelled> {
        match *e {
            Event::Instr(ref i) => {
                let (pipe, cycles) = model.latency(i)?;
                self.instr(pipe, cycles, i, model.arch.issue_cycles);
            }
            Event::Other(name) => {
                return Err(Unmodelled {
                    instr: name.to_string(),
                    reason: "no parameters for this instruction".to_string(),
                })
            }
            Event::SetFlag { src, dst, event } => {
                let t = Pipe::from_pipe_t(src).map_or(self.issue, |p| self.pipe_free[p.index()]);
                self.flags.insert((src, dst, event), t.max(self.issue));
            }
            Event::WaitFlag { src, dst, event } => {
                if let (Some(t), Some(p)) = (
                    self.flags.remove(&(src, dst, event)),
                    Pipe::from_pipe_t(dst),
                ) {
                    let g = &mut self.gate[p.index()];
                    *g = (*g).max(t);
                }
            }
            Event::Barrier { pipe } if pipe == PIPE_ALL => {
                let drained = self.pipe_free.iter().copied().max().unwrap_or(0);
                self.issue = self.issue.max(drained);
            }
            Event::Barrier { pipe } => {
                if let Some(p) = Pipe::from_pipe_t(pipe) {
                    let g = &mut self.gate[p.index()];
                    *g = (*g).max(self.pipe_free[p.index()]);
                }
            }
        }
        Ok(())
    }

    fn instr(&mut self, pipe: Pipe, cycles: u64, i: &Instr, issue_cycles: u64) {
        self.issue += issue_cycles;
        let p = pipe.index();
        let mut start = self.issue.max(self.pipe_free[p]).max(self.gate[p]);
        for o in i.src.iter().flatten() {
            start = start.max(self.ready_to_read(o));
        }
        if let Some(o) = &i.dst {
            start = start.max(self.ready_to_write(o));
        }
        let end = start + cycles;
        self.pipe_free[p] = end;
        self.span(pipe, start, end);
        self.timing.busy[p] += cycles;
        self.timing.instructions += 1;
        for o in i.src.iter().flatten() {
            self.touch(o, |a| a.last_read = a.last_read.max(end));
        }
        if let Some(o) = &i.dst {
            self.touch(o, |a| a.last_write = a.last_write.max(end));
        }
    }

    /// Records `pipe` busy over `start..end`: extends the pipe's last interval when it
    /// touches it (or when the span budget is spent), else starts a new one.
    fn span(&mut self, pipe: Pipe, start: u64, end: u64) {
        if end == start {
            return;
        }
        let p = pipe.index();
        let spans = &mut self.timing.spans;
        let full = spans.len() >= MAX_SPANS;
        if let Some(last) = self.last_span[p].and_then(|i| spans.get_mut(i as usize)) {
            if last.end >= start || full {
                last.end = last.end.max(end);
                return;
            }
        }
        // (A pipe first used after the budget is spent still gets its one interval.)
        self.last_span[p] = Some(spans.len() as u32);
        spans.push(PipeSpan { pipe, start, end });
    }

    fn overlapping<'a>(&'a self, o: &'a Operand) -> impl Iterator<Item = &'a Access> + 'a {
        let end = o.offset.saturating_add(o.len);
        self.accesses
            .iter()
            .filter(move |((b, off), a)| *b == o.buffer && *off < end && a.end > o.offset)
            .map(|(_, a)| a)
    }

    fn ready_to_read(&self, o: &Operand) -> u64 {
        self.overlapping(o).map(|a| a.last_write).max().unwrap_or(0)
    }

    fn ready_to_write(&self, o: &Operand) -> u64 {
        self.overlapping(o)
            .map(|a| a.last_write.max(a.last_read))
            .max()
            .unwrap_or(0)
    }

    fn touch(&mut self, o: &Operand, f: impl FnOnce(&mut Access)) {
        let end = o.offset.saturating_add(o.len);
        let a = self.accesses.entry((o.buffer, o.offset)).or_insert(Access {
            end,
            last_write: 0,
            last_read: 0,
        });
        a.end = a.end.max(end);
        f(a);
    }

    /// The timing so far (total = the latest pipe end or issue time).
    pub fn finish(mut self) -> CoreTiming {
        let last = self.pipe_free.iter().copied().max().unwrap_or(0);
        self.timing.total = last.max(self.issue);
        self.timing
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{BUF_L0A, BUF_L0B, BUF_L0C, BUF_L1, BUF_UB};
    use crate::op::{DType, Op};

    fn op(op: Op, dst: Option<(u8, u32, u32)>, srcs: &[(u8, u32, u32)], gm: u64) -> Event {
        let o = |(buffer, offset, len): (u8, u32, u32)| Operand {
            buffer,
            offset,
            len,
        };
        Event::Instr(Instr {
            op,
            dtype: Some(DType::F32),
            src_dtype: Some(DType::F32),
            rows: 64,
            cols: 64,
            k: 64,
            dst: dst.map(o),
            src: [srcs.first().copied().map(o), srcs.get(1).copied().map(o)],
            gm_bytes: gm,
        })
    }

    const TILE: u32 = 16384;

    /// load a, compute b = a + a, store b: `n` times, with `bufs` alternating buffers.
    fn pipeline(n: u32, bufs: u32, barrier: bool) -> Vec<Event> {
        let mut v = Vec::new();
        for i in 0..n {
            let a = (i % bufs) * 2 * TILE;
            let b = a + TILE;
            v.push(op(Op::TLOAD, Some((BUF_UB, a, TILE)), &[], TILE as u64));
            v.push(op(
                Op::TADD,
                Some((BUF_UB, b, TILE)),
                &[(BUF_UB, a, TILE), (BUF_UB, a, TILE)],
                0,
            ));
            v.push(op(Op::TSTORE, None, &[(BUF_UB, b, TILE)], TILE as u64));
            if barrier {
                v.push(Event::Barrier { pipe: PIPE_ALL });
            }
        }
        v
    }

    fn total(events: Vec<Event>) -> CoreTiming {
        match CoreScheduler::run(&Model::a2a3(), events) {
            SubtaskTiming::Modelled(t) => t,
            SubtaskTiming::Unmodelled(why) => panic!("{why}"),
        }
    }

    #[test]
    fn data_dependencies_serialise_one_buffer() {
        let m = Model::a2a3();
        let one = total(pipeline(1, 1, false));
        let load = m
            .arch
            .transfer_cycles(crate::params::Route::GmToUb, TILE as u64);
        let store = m
            .arch
            .transfer_cycles(crate::params::Route::UbToGm, TILE as u64);
        let add = 158;
        assert_eq!(one.total, 1 + load + add + store);
        assert_eq!(one.busy[Pipe::Mte2.index()], load);
        assert_eq!(one.busy[Pipe::Vec.index()], add);
        assert_eq!(one.busy[Pipe::Mte3.index()], store);
    }

    #[test]
    fn double_buffering_helps_and_a_barrier_hurts() {
        let single = total(pipeline(8, 1, false)).total;
        let double = total(pipeline(8, 2, false)).total;
        let barrier = total(pipeline(8, 2, true)).total;
        assert!(double < single, "double {double} single {single}");
        assert!(barrier > double, "barrier {barrier} double {double}");
        // Busy cycles do not depend on the order.
        assert_eq!(
            total(pipeline(8, 1, false)).busy,
            total(pipeline(8, 2, true)).busy
        );
    }

    #[test]
    fn flags_order_pipes() {
        // Two independent ops on different pipes overlap; a flag from MTE2 to V orders them.
        let load = op(Op::TLOAD, Some((BUF_UB, 0, TILE)), &[], TILE as u64);
        let add = op(
            Op::TADD,
            Some((BUF_UB, 2 * TILE, TILE)),
            &[(BUF_UB, 4 * TILE, TILE), (BUF_UB, 4 * TILE, TILE)],
            0,
        );
        let free = total(vec![load, add]).total;
        let flagged = total(vec![
            load,
            Event::SetFlag {
                src: 4,
                dst: 1,
                event: 0,
            },
            Event::WaitFlag {
                src: 4,
                dst: 1,
                event: 0,
            },
            add,
        ])
        .total;
        assert!(flagged > free, "{flagged} {free}");
    }

    #[test]
    fn matmul_chain_uses_cube_side_pipes() {
        let t = total(vec![
            op(Op::TLOAD, Some((BUF_L1, 0, TILE)), &[], TILE as u64),
            op(
                Op::TEXTRACT,
                Some((BUF_L0A, 0, TILE)),
                &[(BUF_L1, 0, TILE)],
                0,
            ),
            op(
                Op::TEXTRACT,
                Some((BUF_L0B, 0, TILE)),
                &[(BUF_L1, 0, TILE)],
                0,
            ),
            op(
                Op::TMATMUL,
                Some((BUF_L0C, 0, TILE)),
                &[(BUF_L0A, 0, TILE), (BUF_L0B, 0, TILE)],
                0,
            ),
            op(Op::TSTORE, None, &[(BUF_L0C, 0, TILE)], TILE as u64),
        ]);
        for p in [Pipe::Mte2, Pipe::Mte1, Pipe::Cube, Pipe::Fixp] {
            assert!(t.busy[p.index()] > 0, "{p:?}");
        }
        assert_eq!(t.busy[Pipe::Vec.index()], 0);
    }

    #[test]
    fn spans_cover_each_pipes_busy_time_inside_the_subtask() {
        let t = total(pipeline(8, 2, false));
        for pipe in Pipe::ALL {
            let mine: Vec<&PipeSpan> = t.spans.iter().filter(|s| s.pipe == pipe).collect();
            let sum: u64 = mine.iter().map(|s| s.end - s.start).sum();
            assert_eq!(sum, t.busy[pipe.index()], "{pipe:?}");
            for w in mine.windows(2) {
                assert!(w[0].end < w[1].start, "{pipe:?}: {w:?} touch or overlap");
            }
        }
        assert!(t.spans.iter().all(|s| s.start < s.end && s.end <= t.total));
        // Double buffering: some load runs while an add runs.
        let on = |p: Pipe| t.spans.iter().filter(move |s| s.pipe == p);
        assert!(on(Pipe::Mte2).any(|l| on(Pipe::Vec).any(|v| l.start < v.end && v.start < l.end)));
    }

    #[test]
    fn spans_are_bounded_and_stay_inside_the_subtask() {
        let n = MAX_SPANS as u32; // 3 spans per iteration with a barrier: well past the budget
        let t = total(pipeline(n, 1, true));
        assert!(t.spans.len() <= MAX_SPANS + N_PIPES, "{}", t.spans.len());
        assert!(t.spans.iter().all(|s| s.start < s.end && s.end <= t.total));
        for pipe in [Pipe::Mte2, Pipe::Vec, Pipe::Mte3] {
            let sum: u64 = t
                .spans
                .iter()
                .filter(|s| s.pipe == pipe)
                .map(|s| s.end - s.start)
                .sum();
            assert!(sum >= t.busy[pipe.index()], "{pipe:?}");
        }
    }

    #[test]
    fn unknown_and_empty_traces_are_unmodelled() {
        let why = CoreScheduler::run(&Model::a2a3(), [Event::Other("TSORT32")]);
        assert_eq!(
            why,
            SubtaskTiming::Unmodelled("TSORT32: no parameters for this instruction".into())
        );
        let why = CoreScheduler::run(&Model::a2a3(), []);
        assert!(
            matches!(why, SubtaskTiming::Unmodelled(w) if w.contains("no PTO-ISA instruction"))
        );
    }
}
