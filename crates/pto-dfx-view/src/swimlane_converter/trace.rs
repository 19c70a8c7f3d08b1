//! The converter's writer: every event of the trace formatted from the model, in the
//! order the module docs give, into chunks that a second thread writes to the file.

use pto_base::json::{push_str, push_u64};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use super::model::{flow_points, Model, Placed};
use super::{overhead, pipes};
use super::{PID_ORCH, PID_PIPES, PID_SCHED, PID_SCHED_VIEW, PID_WORKER, TID_QUEUE};
use crate::error::ToolError;
use crate::names::KernelNames;
use crate::perf::{self, Ns, PhaseSpan, Timeline};
use pto_base::idmap::{self, IdMap};
use pto_dfx::behind::Behind;
use pto_dfx::swimlane::SchedPhaseKind;
use pto_dfx::task_id::TaskId;

/// The file's writing thread stopped (the commit's error explains why).
struct WriterGone;

/// Bytes per chunk handed to the file.
const CHUNK: usize = 1 << 20;

/// Event output: one event per line, formatted here into 1 MiB chunks that the file
/// ([`Behind`]) writes on a thread of its own, so formatting and the `write` system calls
/// (a quarter of the time on a large trace) run on two cores.
struct TraceOut {
    buf: String,
    file: Behind,
    n_events: u64,
    n_flows: u64,
}

impl TraceOut {
    fn begin(&mut self) {
        self.buf
            .push_str(if self.n_events == 0 { "\n" } else { ",\n" });
        self.n_events += 1;
    }

    fn flush_if_full(&mut self) -> Result<(), WriterGone> {
        if self.buf.len() >= CHUNK && !self.file.send_text(&mut self.buf) {
            return Err(WriterGone);
        }
        Ok(())
    }

    /// One metadata (`M`) event: `{"args":{<key>:<value>},"cat":"__metadata","name":<event>,
    /// "ph":"M","pid":<pid>,"tid":<tid>}`, in Simpler's key order.
    fn metadata(
        &mut self,
        pid: u32,
        tid: u64,
        event: &str,
        key: &str,
        value: impl FnOnce(&mut String),
    ) {
        self.begin();
        self.buf.push_str("{\"args\":{\"");
        self.buf.push_str(key);
        self.buf.push_str("\":");
        value(&mut self.buf);
        self.buf.push_str("},\"cat\":\"__metadata\",\"name\":\"");
        self.buf.push_str(event);
        self.buf.push_str("\",\"ph\":\"M\",\"pid\":");
        push_u64(&mut self.buf, u64::from(pid));
        self.buf.push_str(",\"tid\":");
        push_u64(&mut self.buf, tid);
        self.buf.push('}');
    }

    fn process(&mut self, pid: u32, name: &str, sort: u32) {
        self.metadata(pid, 0, "process_name", "name", |b| push_str(b, name));
        self.metadata(pid, 0, "process_sort_index", "sort_index", |b| {
            push_u64(b, u64::from(sort))
        });
    }

    fn thread(&mut self, pid: u32, tid: u64, name: &str) {
        self.metadata(pid, tid, "thread_name", "name", |b| push_str(b, name));
        let sort = if tid == TID_QUEUE { 100 } else { tid };
        self.metadata(pid, tid, "thread_sort_index", "sort_index", |b| {
            push_u64(b, sort)
        });
    }

    /// The tail of an `X` event after its `args`, in Simpler's key order:
    /// `cat`, `cname`, `id`, `name`, `ph`, `pid`, `tid`, `ts`, `dur`. `name`
    /// writes the quoted name.
    fn slice_tail(
        &mut self,
        cat: &str,
        cname: Option<&str>,
        id: Option<u64>,
        name: impl FnOnce(&mut String),
        pid: u32,
        p: &Placed,
    ) {
        self.buf.push_str(",\"cat\":\"");
        self.buf.push_str(cat);
        self.buf.push('"');
        if let Some(c) = cname {
            self.buf.push_str(",\"cname\":\"");
            self.buf.push_str(c);
            self.buf.push('"');
        }
        if let Some(id) = id {
            self.buf.push_str(",\"id\":");
            push_u64(&mut self.buf, id);
        }
        self.buf.push_str(",\"name\":");
        name(&mut self.buf);
        self.buf.push_str(",\"ph\":\"X\",\"pid\":");
        push_u64(&mut self.buf, u64::from(pid));
        self.buf.push_str(",\"tid\":");
        push_u64(&mut self.buf, p.tid);
        self.buf.push_str(",\"ts\":");
        push_us(&mut self.buf, p.ts);
        self.buf.push_str(",\"dur\":");
        push_us(&mut self.buf, p.end - p.ts);
        self.buf.push('}');
    }

    /// A flow from slice `from` (on its pid, near its wanted time) to slice
    /// `to`, placed by [`flow_points`]; nothing when no placement exists.
    /// `counts` are `(input_task_count, output_task_count)`, `binds` the
    /// event ids (Simpler's `bind_id`) of the slices each end binds to, where
    /// Simpler writes one.
    fn flow(
        &mut self,
        name: &str,
        from: (u32, &Placed, Ns),
        to: (u32, &Placed, Ns),
        counts: Option<(u32, u32)>,
        binds: (Option<u64>, Option<u64>),
    ) {
        let Some((a, b)) = flow_points(from.1, from.2, to.1, to.2) else {
            return;
        };
        let id = self.n_flows;
        self.n_flows += 1;
        let ends = [
            ("s", from.0, from.1.tid, a, binds.0),
            ("f", to.0, to.1.tid, b, binds.1),
        ];
        for (ph, pid, tid, ts, bind) in ends {
            self.begin();
            self.buf.push_str("{\"cat\":\"flow\",\"id\":");
            push_u64(&mut self.buf, id);
            self.buf.push_str(",\"name\":\"");
            self.buf.push_str(name);
            self.buf.push_str("\",\"ph\":\"");
            self.buf.push_str(ph);
            self.buf.push_str("\",\"pid\":");
            push_u64(&mut self.buf, u64::from(pid));
            self.buf.push_str(",\"tid\":");
            push_u64(&mut self.buf, tid);
            self.buf.push_str(",\"ts\":");
            push_us(&mut self.buf, ts);
            if ph == "f" {
                self.buf.push_str(",\"bp\":\"e\"");
            }
            if let Some((i, o)) = counts {
                self.buf.push_str(",\"input_task_count\":");
                push_u64(&mut self.buf, u64::from(i));
                self.buf.push_str(",\"output_task_count\":");
                push_u64(&mut self.buf, u64::from(o));
            }
            if let Some(bind) = bind {
                self.buf.push_str(",\"bind_id\":");
                push_u64(&mut self.buf, bind);
            }
            self.buf.push('}');
        }
    }
}

/// A task's display form: `t<local>` or `r<ring>t<local>`.
fn push_task(buf: &mut String, id: TaskId) {
    if id.ring() != 0 {
        buf.push('r');
        push_u64(buf, u64::from(id.ring()));
    }
    buf.push('t');
    push_u64(buf, u64::from(id.local()));
}

/// A quoted `<base>(<task>)` label.
fn push_label(buf: &mut String, base: &str, id: TaskId) {
    push_str(buf, base);
    buf.pop();
    buf.push('(');
    push_task(buf, id);
    buf.push_str(")\"");
}

/// `ns` as µs with at most three decimals and at least one (`1.84`, `3.0`).
pub(super) fn push_us(buf: &mut String, ns: Ns) {
    push_u64(buf, ns / 1000);
    let frac = (ns % 1000) as u32;
    buf.push('.');
    if frac == 0 {
        buf.push('0');
        return;
    }
    let digits = [frac / 100, frac / 10 % 10, frac % 10];
    let keep = if frac.is_multiple_of(100) {
        1
    } else if frac.is_multiple_of(10) {
        2
    } else {
        3
    };
    for &d in &digits[..keep] {
        buf.push(char::from(b'0' + d as u8));
    }
}

/// `{"event-hint":"Task:<disp>, FuncId:<id>, CoreId:<core>"` (the args object opened).
fn event_hint(buf: &mut String, task: &perf::PerfTask, func: Option<i32>) {
    buf.push_str("{\"event-hint\":\"Task:");
    push_task(buf, task.task_id);
    buf.push_str(", FuncId:");
    match func {
        Some(f) => push_u64(buf, f as u64),
        None => buf.push_str("-1"),
    }
    buf.push_str(", CoreId:");
    push_u64(buf, u64::from(task.core_id));
    buf.push('"');
}

/// `,"<key>":"<n>: [t1, r1t2, ...]"` over graph nodes `list` (at most 16 shown).
fn hint_list(buf: &mut String, key: &str, list: &[usize], ids: &[TaskId]) {
    buf.push_str(",\"");
    buf.push_str(key);
    buf.push_str("\":\"");
    push_u64(buf, list.len() as u64);
    buf.push_str(": [");
    for (k, &node) in list.iter().take(16).enumerate() {
        if k > 0 {
            buf.push_str(", ");
        }
        push_task(buf, ids[node]);
    }
    if list.len() > 16 {
        buf.push_str(", ...");
    }
    buf.push_str("]\"");
}

fn phase_cname(kind: &SchedPhaseKind) -> &'static str {
    match kind {
        SchedPhaseKind::Complete => "good",
        SchedPhaseKind::Dispatch => "terrible",
        SchedPhaseKind::AsyncPoll => "yellow",
        SchedPhaseKind::Release => "olive",
        SchedPhaseKind::Dummy | SchedPhaseKind::DummyTask => "grey",
        SchedPhaseKind::EarlyDispatch | SchedPhaseKind::GraphPrepare => "rail_animation",
        SchedPhaseKind::Drain => "cq_build_running",
        SchedPhaseKind::DrainPrepare => "cq_build_attempt_runnable",
        SchedPhaseKind::DrainPublish => "cq_build_attempt_passed",
        SchedPhaseKind::Resolve => "vsync_highlight_color",
        _ => "generic_work",
    }
}

/// Phases of one kind on one thread, sorted by start, for containment lookups.
struct PhaseIndex {
    /// Per thread: (start, end, phase index) of `complete` phases.
    complete: Vec<Vec<(Ns, Ns, usize)>>,
    /// Per thread: the same for `dispatch` phases.
    dispatch: Vec<Vec<(Ns, Ns, usize)>>,
}

impl PhaseIndex {
    fn build(sched: &[Vec<PhaseSpan>]) -> Self {
        let pick = |kind: SchedPhaseKind| -> Vec<Vec<(Ns, Ns, usize)>> {
            sched
                .iter()
                .map(|lane| {
                    let mut v: Vec<(Ns, Ns, usize)> = lane
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| p.kind == kind)
                        .map(|(i, p)| (p.start, p.end.max(p.start), i))
                        .collect();
                    v.sort_unstable();
                    v
                })
                .collect()
        };
        Self {
            complete: pick(SchedPhaseKind::Complete),
            dispatch: pick(SchedPhaseKind::Dispatch),
        }
    }

    /// The phase of `list` containing `at` (or, with `next`, the first one
    /// starting after it).
    fn find(list: &[(Ns, Ns, usize)], at: Ns, next: bool) -> Option<usize> {
        let idx = list.partition_point(|p| p.0 <= at);
        if idx > 0 && list[idx - 1].1 >= at {
            return Some(list[idx - 1].2);
        }
        if next {
            list.get(idx).map(|p| p.2)
        } else {
            None
        }
    }

    /// Thread candidates for a core: its `core_to_thread` entry, else all.
    fn threads(t: &Timeline, core: u32, n: usize) -> std::ops::Range<usize> {
        match t.core_to_thread.get(core as usize) {
            Some(&th) if th >= 0 && (th as usize) < n => th as usize..th as usize + 1,
            _ => 0..n,
        }
    }

    fn lookup(
        &self,
        which: &[Vec<(Ns, Ns, usize)>],
        t: &Timeline,
        core: u32,
        at: Ns,
        next: bool,
    ) -> Option<(usize, usize)> {
        let range = Self::threads(t, core, which.len());
        for th in range.clone() {
            if let Some(i) = Self::find(&which[th], at, false) {
                return Some((th, i));
            }
        }
        if next {
            for th in range {
                if let Some(i) = Self::find(&which[th], at, true) {
                    return Some((th, i));
                }
            }
        }
        None
    }
}

/// Writes the trace to `output` atomically: events are formatted on this thread and
/// written by the file's own (see [`TraceOut`]). Returns `(events, flows)`.
pub(super) fn write_trace(
    output: &Path,
    t: &Timeline,
    model: &Model,
    names: &KernelNames,
    overhead: &[overhead::Sample],
    tracks: &pipes::PipeTracks,
) -> Result<(u64, u64), ToolError> {
    let mut out = TraceOut {
        buf: String::with_capacity(CHUNK + CHUNK / 2),
        file: Behind::create(output)?,
        n_events: 0,
        n_flows: 0,
    };
    let produced = produce_trace(&mut out, t, model, names, overhead, tracks);
    out.buf.push_str("\n]}\n");
    let TraceOut {
        buf,
        file,
        n_events,
        n_flows,
    } = out;
    // The commit's error explains why the formatter stopped.
    file.commit(buf.as_bytes())?;
    produced.map_err(|WriterGone| {
        ToolError::Write(pto_dfx::error::WriteError::io(
            output,
            "writing",
            std::io::Error::other("the writing thread stopped early"),
        ))
    })?;
    Ok((n_events, n_flows))
}

/// Formats every event into `out` (see the module docs for the order).
fn produce_trace(
    out: &mut TraceOut,
    t: &Timeline,
    model: &Model,
    names: &KernelNames,
    overhead: &[overhead::Sample],
    tracks: &pipes::PipeTracks,
) -> Result<(), WriterGone> {
    out.buf.push_str("{\"traceEvents\":[");
    write_metadata(out, t, model, names, overhead, tracks);
    write_pipe_slices(out, t, tracks)?;
    write_worker_bars(out, t, model)?;
    write_scheduler_view_bars(out, t, model)?;
    let index = PhaseIndex::build(&t.sched);
    write_phases(out, t, model, &index)?;
    write_markers(out, t, model);
    write_uploads(out, t, model);
    write_orchestrator(out, t, model)?;
    dependency_flows(out, model)?;
    if !t.sched.is_empty() {
        complete_flows(out, t, model, &index)?;
        dispatch_flows(out, t, model, &index)?;
        if !t.host_mode && !t.orch.is_empty() {
            submit_dispatch_flows(out, t, model, &index)?;
        }
    }
    write_overhead(out, overhead)
}

/// The metadata: every process and thread that carries an event (the overhead counters
/// live under the AICPU Scheduler process).
fn write_metadata(
    out: &mut TraceOut,
    t: &Timeline,
    model: &Model,
    names: &KernelNames,
    overhead: &[overhead::Sample],
    tracks: &pipes::PipeTracks,
) {
    let mut pids: Vec<u32> = model.threads.iter().map(|x| x.0).collect();
    if !overhead.is_empty() {
        pids.push(PID_SCHED);
    }
    if !tracks.threads.is_empty() {
        pids.push(PID_PIPES);
    }
    pids.sort_unstable();
    pids.dedup();
    for &pid in pids.iter().rev() {
        let name = match pid {
            PID_ORCH if t.host_mode => String::from("Host Orchestrator"),
            PID_ORCH => match &names.orchestrator_name {
                Some(n) => format!("AICPU {n}"),
                None => String::from("AICPU Orchestrator"),
            },
            PID_SCHED => String::from("AICPU Scheduler"),
            PID_SCHED_VIEW => String::from("Scheduler View"),
            PID_PIPES => String::from("Pipe View (predicted)"),
            _ => String::from("Worker View"),
        };
        out.process(pid, &name, pid);
    }
    let pipe_threads: Vec<(u32, u64, String)> = tracks
        .threads
        .iter()
        .map(|(tid, name)| (PID_PIPES, *tid, name.clone()))
        .collect();
    let mut threads: Vec<&(u32, u64, String)> = model.threads.iter().chain(&pipe_threads).collect();
    threads.sort_by_key(|x| (std::cmp::Reverse(x.0), x.1));
    for (pid, tid, name) in threads {
        out.thread(*pid, *tid, name);
    }
}

/// Pipe View slices (predicted time).
fn write_pipe_slices(
    out: &mut TraceOut,
    t: &Timeline,
    tracks: &pipes::PipeTracks,
) -> Result<(), WriterGone> {
    for s in &tracks.slices {
        let task = &t.tasks[s.row];
        out.begin();
        out.buf.push_str("{\"args\":{\"taskId\":");
        push_u64(&mut out.buf, task.task_id.raw());
        out.buf.push_str(",\"task\":");
        push_str(&mut out.buf, &task.task_id.to_string());
        out.buf.push_str(",\"start-cycle\":");
        push_u64(&mut out.buf, s.cycles.0);
        out.buf.push_str(",\"cycles\":");
        push_u64(&mut out.buf, s.cycles.1 - s.cycles.0);
        out.buf.push('}');
        let place = Placed {
            tid: s.tid,
            ts: s.ts,
            end: s.end,
        };
        out.slice_tail(
            "pipe",
            None,
            None,
            |b| push_str(b, pipes::pipe_name(s.pipe)),
            PID_PIPES,
            &place,
        );
        out.flush_if_full()?;
    }
    Ok(())
}

/// Worker View bars, with each task's fan-out and fan-in hints.
fn write_worker_bars(out: &mut TraceOut, t: &Timeline, model: &Model) -> Result<(), WriterGone> {
    let g = &model.graph;
    for &(a, b) in &model.groups {
        let node = g.node(t.tasks[a].task_id);
        let fanout = node.map_or(&[][..], |k| g.succs(k));
        let fanin = node.map_or(&[][..], |k| g.preds(k));
        for r in a..b {
            let task = &t.tasks[r];
            let p = &model.worker[r];
            out.begin();
            out.buf.push_str("{\"args\":");
            event_hint(&mut out.buf, task, model.func[r]);
            hint_list(&mut out.buf, "fanout-hint", fanout, &g.ids);
            hint_list(&mut out.buf, "fanin-hint", fanin, &g.ids);
            out.buf.push_str(",\"duration-us\":");
            push_us(&mut out.buf, p.end - p.ts);
            out.buf.push_str(",\"kernel-duration-us\":");
            push_us(&mut out.buf, task.exec());
            out.buf.push_str(",\"local_setup_us\":");
            push_us(&mut out.buf, task.start.saturating_sub(task.receive));
            out.buf.push_str(",\"taskId\":");
            push_u64(&mut out.buf, task.task_id.raw());
            out.buf.push('}');
            let base = &model.bases[model.label_base[r] as usize];
            out.slice_tail(
                "event",
                None,
                Some(r as u64),
                |b| push_label(b, base, task.task_id),
                PID_WORKER,
                p,
            );
            out.flush_if_full()?;
        }
    }
    Ok(())
}

/// Scheduler View bars (dispatch → finish).
fn write_scheduler_view_bars(
    out: &mut TraceOut,
    t: &Timeline,
    model: &Model,
) -> Result<(), WriterGone> {
    for (r, placed) in model.sched_view.iter().enumerate() {
        let Some(p) = placed else { continue };
        let task = &t.tasks[r];
        out.begin();
        out.buf.push_str("{\"args\":");
        event_hint(&mut out.buf, task, model.func[r]);
        out.buf.push_str(",\"dispatch-time-us\":");
        push_us(&mut out.buf, p.ts);
        out.buf.push_str(",\"finish-time-us\":");
        push_us(&mut out.buf, p.end);
        out.buf.push_str(",\"aicpu-duration-us\":");
        push_us(&mut out.buf, p.end - p.ts);
        out.buf.push_str(",\"taskId\":");
        push_u64(&mut out.buf, task.task_id.raw());
        out.buf.push('}');
        let base = &model.bases[model.label_base[r] as usize];
        out.slice_tail(
            "event",
            None,
            Some(model.sched_event[r]),
            |b| push_label(b, base, task.task_id),
            PID_SCHED_VIEW,
            p,
        );
        out.flush_if_full()?;
    }
    Ok(())
}

/// Scheduler phases (markers aside), then the ready-queue counter: one sample per
/// complete / dispatch phase at its end, in time order, repeats included (Simpler's
/// converter writes every one).
fn write_phases(
    out: &mut TraceOut,
    t: &Timeline,
    model: &Model,
    index: &PhaseIndex,
) -> Result<(), WriterGone> {
    let attributed = finish_rows_attributed(t, index);
    let mut queue: Vec<(Ns, [i16; 3])> = Vec::new();
    for (th, lane) in t.sched.iter().enumerate() {
        for (i, ph) in lane.iter().enumerate() {
            if matches!(
                ph.kind,
                SchedPhaseKind::DummyTask | SchedPhaseKind::PredicatedSkip
            ) {
                continue;
            }
            let p = &model.phases[th][i];
            out.begin();
            out.buf.push_str("{\"args\":{\"phase\":");
            push_str(&mut out.buf, ph.kind.as_str());
            let _ = write!(
                out.buf,
                ",\"loop_iter\":{},\"tasks_processed\":{}",
                ph.loop_iter, ph.tasks_processed
            );
            // Simpler 6ebaf77 shows no pop_hit / pop_miss on a phase slice.
            if let (Some(s), Some(e)) = (ph.shared_at_start, ph.shared_at_end) {
                let _ = write!(
                    out.buf,
                    ",\"shared_at_start (aic,aiv,mix)\":[{},{},{}],\"shared_at_end (aic,aiv,mix)\":[{},{},{}]",
                    s[0], s[1], s[2], e[0], e[1], e[2]
                );
            }
            if ph.kind == SchedPhaseKind::Complete {
                let _ = write!(
                    out.buf,
                    ",\"finishes_processed\":{},\"finish_rows_attributed\":{}",
                    ph.tasks_processed,
                    attributed.get(&(th, i)).copied().unwrap_or(0)
                );
            }
            out.buf.push('}');
            let name = format!("{}({})", ph.kind.as_str(), ph.tasks_processed);
            out.slice_tail(
                "scheduler",
                Some(phase_cname(&ph.kind)),
                None,
                |b| push_str(b, &name),
                PID_SCHED,
                p,
            );
            if matches!(ph.kind, SchedPhaseKind::Complete | SchedPhaseKind::Dispatch) {
                if let Some(e) = ph.shared_at_end {
                    queue.push((p.end, e));
                }
            }
            out.flush_if_full()?;
        }
    }
    queue.sort_by_key(|q| q.0);
    for &(ts, v) in &queue {
        out.begin();
        let _ = write!(
            out.buf,
            "{{\"args\":{{\"AIC\":{},\"AIV\":{},\"MIX\":{}}},\"cat\":\"queue\",\"name\":\"shared_ready_queue\",\"ph\":\"C\",\"pid\":{PID_SCHED},\"tid\":{TID_QUEUE},\"ts\":",
            v[0], v[1], v[2]
        );
        push_us(&mut out.buf, ts);
        out.buf.push('}');
    }
    Ok(())
}

/// Dummy / predicated-skip markers on `AICPU_<thread>`.
fn write_markers(out: &mut TraceOut, t: &Timeline, model: &Model) {
    for (m, &(th, i, ref p)) in model.markers.iter().enumerate() {
        let ph = &t.sched[th][i];
        let disp = ph.task_id.map(|x| x.to_string());
        let name = if ph.kind == SchedPhaseKind::DummyTask {
            format!("dummy({})", disp.as_deref().unwrap_or("unknown"))
        } else {
            ph.task_id
                .and_then(|id| model.group_of.get(&id.raw()))
                .map(|&g| {
                    let r = model.groups[g].0;
                    format!(
                        "{}({})",
                        model.bases[model.label_base[r] as usize], t.tasks[r].task_id
                    )
                })
                .unwrap_or_else(|| format!("task({})", disp.as_deref().unwrap_or("unknown")))
        };
        out.begin();
        let _ = write!(
            out.buf,
            "{{\"args\":{{\"loop_iter\":{},\"task_id\":",
            ph.loop_iter
        );
        match ph.task_id {
            Some(id) => push_u64(&mut out.buf, id.raw()),
            None => out.buf.push_str("null"),
        }
        out.buf.push_str(",\"event-hint\":");
        push_str(&mut out.buf, &name);
        if ph.kind == SchedPhaseKind::DummyTask {
            out.buf.push_str(",\"phase\":\"dummy_task\"}");
        } else {
            out.buf.push_str(",\"predicated_pass\":false}");
        }
        out.slice_tail(
            "event",
            None,
            Some(model.marker_event(m)),
            |b| push_str(b, &name),
            PID_WORKER,
            p,
        );
    }
}

/// Host uploads.
fn write_uploads(out: &mut TraceOut, t: &Timeline, model: &Model) {
    for (u, p) in t.uploads.iter().zip(&model.uploads) {
        out.begin();
        let _ = write!(out.buf, "{{\"args\":{{\"bytes\":{}}}", u.bytes);
        out.slice_tail(
            "host_h2d",
            Some("thread_state_iowait"),
            None,
            |b| push_str(b, &u.phase),
            PID_ORCH,
            p,
        );
    }
}

/// Orchestrator submits, then the alloc bars.
fn write_orchestrator(out: &mut TraceOut, t: &Timeline, model: &Model) -> Result<(), WriterGone> {
    for (lane_idx, lane) in t.orch.iter().enumerate() {
        for (i, o) in lane.iter().enumerate() {
            out.begin();
            let _ = write!(
                out.buf,
                "{{\"args\":{{\"phase\":\"orch_submit\",\"submit_idx\":{},\"task_id\":{}}}",
                o.submit_idx,
                o.task_id.raw()
            );
            let name = format!("submit({})", o.task_id);
            out.slice_tail(
                "orchestrator",
                Some("rail_animation"),
                None,
                |b| push_str(b, &name),
                PID_ORCH,
                &model.orch[lane_idx][i],
            );
            out.flush_if_full()?;
        }
    }
    for (k, &(lane_idx, i, ref p)) in model.allocs.iter().enumerate() {
        let o = &t.orch[lane_idx][i];
        let name = format!("alloc({})", o.task_id);
        out.begin();
        let _ = write!(
            out.buf,
            "{{\"args\":{{\"phase\":\"alloc\",\"task_id\":{},\"event-hint\":",
            o.task_id.raw()
        );
        push_str(&mut out.buf, &name);
        out.buf.push('}');
        out.slice_tail(
            "event",
            Some("olive"),
            Some(model.alloc_event(k)),
            |b| push_str(b, &name),
            PID_WORKER,
            p,
        );
    }
    Ok(())
}

/// Dependency flows: Worker View (bar start to bar start), then Scheduler View
/// (dispatch to dispatch).
fn dependency_flows(out: &mut TraceOut, model: &Model) -> Result<(), WriterGone> {
    for &(pn, sn) in &model.edges {
        let counts = Some((model.fan[sn], model.fan[pn]));
        for pa in model.wanchors(pn) {
            for sa in model.wanchors(sn) {
                let name = if pa.end > sa.place.ts {
                    "hb_violation"
                } else {
                    "dependency"
                };
                out.flow(
                    name,
                    (PID_WORKER, &pa.place, pa.place.ts),
                    (PID_WORKER, &sa.place, sa.place.ts),
                    counts,
                    (Some(pa.event), Some(sa.event)),
                );
            }
        }
        out.flush_if_full()?;
    }
    if model.has_sched_view {
        for &(pg, sg) in &model.edges {
            if pg >= model.groups.len() || sg >= model.groups.len() {
                continue;
            }
            let counts = Some((model.fan[sg], model.fan[pg]));
            for &pa in model.sanchors(pg) {
                for &sa in model.sanchors(sg) {
                    let (Some(pp), Some(sp)) = (&model.sched_view[pa], &model.sched_view[sa])
                    else {
                        continue;
                    };
                    let name = if pp.end > sp.ts {
                        "hb_violation"
                    } else {
                        "dependency"
                    };
                    out.flow(
                        name,
                        (PID_SCHED_VIEW, pp, pp.ts),
                        (PID_SCHED_VIEW, sp, sp.ts),
                        counts,
                        (Some(model.sched_event[pa]), Some(model.sched_event[sa])),
                    );
                }
            }
            out.flush_if_full()?;
        }
    }
    Ok(())
}

/// `dispatch` flows: the dispatch phase → the Worker View and Scheduler View bars.
fn dispatch_flows(
    out: &mut TraceOut,
    t: &Timeline,
    model: &Model,
    index: &PhaseIndex,
) -> Result<(), WriterGone> {
    for (r, task) in t.tasks.iter().enumerate() {
        let Some(d) = task.dispatch else { continue };
        let Some((th, i)) = index.lookup(&index.dispatch, t, task.core_id, d, false) else {
            continue;
        };
        let dp = &model.phases[th][i];
        out.flow(
            "dispatch",
            (PID_SCHED, dp, d),
            (PID_WORKER, &model.worker[r], task.start),
            None,
            (None, None),
        );
        if let Some(sp) = &model.sched_view[r] {
            out.flow(
                "dispatch",
                (PID_SCHED, dp, d),
                (PID_SCHED_VIEW, sp, d),
                None,
                (None, Some(model.sched_event[r])),
            );
        }
        out.flush_if_full()?;
    }
    Ok(())
}

/// `submit→dispatch` flows: each row's first orchestrator submit (its end) → the dispatch
/// phase that dispatched the row.
fn submit_dispatch_flows(
    out: &mut TraceOut,
    t: &Timeline,
    model: &Model,
    index: &PhaseIndex,
) -> Result<(), WriterGone> {
    let mut submit_of: IdMap<u64, (usize, usize)> = idmap::map_with_capacity(model.groups.len());
    for (lane_idx, lane) in t.orch.iter().enumerate() {
        for (i, o) in lane.iter().enumerate() {
            submit_of.entry(o.task_id.raw()).or_insert((lane_idx, i));
        }
    }
    for task in &t.tasks {
        let Some(d) = task.dispatch else { continue };
        let Some(&(lane_idx, i)) = submit_of.get(&task.task_id.raw()) else {
            continue;
        };
        let Some((th, di)) = index.lookup(&index.dispatch, t, task.core_id, d, false) else {
            continue;
        };
        let op = &model.orch[lane_idx][i];
        out.flow(
            "submit\u{2192}dispatch",
            (PID_ORCH, op, op.end),
            (PID_SCHED, &model.phases[th][di], d),
            None,
            (None, None),
        );
        out.flush_if_full()?;
    }
    Ok(())
}

/// Overhead counters (`--overhead`), in Simpler's key order.
fn write_overhead(out: &mut TraceOut, overhead: &[overhead::Sample]) -> Result<(), WriterGone> {
    for s in overhead {
        let (name, tid) = overhead::SERIES[s.series];
        out.begin();
        let _ = write!(
            out.buf,
            "{{\"ph\":\"C\",\"cat\":\"overhead\",\"name\":\"{name}\",\"pid\":{PID_SCHED},\"tid\":{tid},\"ts\":"
        );
        push_us(&mut out.buf, s.ts);
        let _ = write!(out.buf, ",\"args\":{{\"{name}\":{}}}}}", s.value);
        out.flush_if_full()?;
    }
    Ok(())
}

/// Per complete phase `(thread, index)`: the task rows whose finish it
/// contains (or, for a finish between phases, the next one on the row's
/// `core_to_thread` thread) — Simpler's `finish_rows_attributed`.
fn finish_rows_attributed(t: &Timeline, index: &PhaseIndex) -> HashMap<(usize, usize), u32> {
    let mut out: HashMap<(usize, usize), u32> = HashMap::new();
    for task in &t.tasks {
        let Some(f) = task.finish else { continue };
        let Some(&th) = t.core_to_thread.get(task.core_id as usize) else {
            continue;
        };
        if th < 0 || th as usize >= index.complete.len() {
            continue;
        }
        let th = th as usize;
        if let Some(i) = PhaseIndex::find(&index.complete[th], f, true) {
            *out.entry((th, i)).or_default() += 1;
        }
    }
    out
}

/// The `complete` and `complete→ready` flows, as Simpler draws them (both
/// need `core_to_thread`).
///
/// `complete`: a task is complete when its last subtask's finish is seen;
/// the phase is the `complete` phase on that core's thread containing the
/// finish (else the next one to start). An arrow leaves each of the task's
/// anchors in each view (10 ns before the bar's end in the Worker View,
/// before the finish in the Scheduler View) and lands at the finish inside
/// that phase (at its start when it does not contain the finish).
///
/// `complete→ready`: walking the complete phases by end time, each
/// completed task satisfies one fanin of each successor; the phase that
/// satisfies the last one (every `deps.json` predecessor counted, timed or
/// not) released the successor: an arrow leaves it 10 ns before its end and
/// lands at the successor's first dispatch, unless that dispatch came first.
fn complete_flows(
    out: &mut TraceOut,
    t: &Timeline,
    model: &Model,
    index: &PhaseIndex,
) -> Result<(), WriterGone> {
    if t.core_to_thread.is_empty() {
        return Ok(());
    }
    let thread_of = |core: u32| -> Option<usize> {
        let th = *t.core_to_thread.get(core as usize)?;
        (th >= 0).then_some(th as usize)
    };
    let mut completed_by: Vec<Option<(usize, usize)>> = vec![None; model.groups.len()];
    for (g, done) in completed_by.iter_mut().enumerate() {
        let (a, b) = model.groups[g];
        // The first row with the latest finish.
        let mut last: Option<(Ns, usize)> = None;
        for r in a..b {
            if let Some(f) = t.tasks[r].finish {
                if last.is_none_or(|(lf, _)| f > lf) {
                    last = Some((f, r));
                }
            }
        }
        let Some((finish, r)) = last else { continue };
        let Some(th) = thread_of(t.tasks[r].core_id).filter(|&th| th < index.complete.len()) else {
            continue;
        };
        let Some(pi) = PhaseIndex::find(&index.complete[th], finish, true) else {
            continue;
        };
        *done = Some((th, pi));
        let phase = &t.sched[th][pi];
        let land = if phase.start <= finish && finish <= phase.end.max(phase.start) {
            finish
        } else {
            phase.start
        };
        let dst = &model.phases[th][pi];
        for a in model.wanchors(g) {
            out.flow(
                "complete",
                (PID_WORKER, &a.place, a.end.saturating_sub(10)),
                (PID_SCHED, dst, land),
                None,
                (Some(a.event), None),
            );
        }
        for &r in model.sanchors(g) {
            if let Some(sp) = &model.sched_view[r] {
                out.flow(
                    "complete",
                    (PID_SCHED_VIEW, sp, sp.end.saturating_sub(10)),
                    (PID_SCHED, dst, land),
                    None,
                    (Some(model.sched_event[r]), None),
                );
            }
        }
        out.flush_if_full()?;
    }

    // complete→ready.
    let gr = &model.graph;
    let mut by_phase: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
    for (g, done) in completed_by.iter().enumerate() {
        if let Some(k) = done {
            by_phase.entry(*k).or_default().push(g);
        }
    }
    let mut order: Vec<(Ns, usize, usize, usize)> = Vec::new();
    for (th, list) in index.complete.iter().enumerate() {
        for (pos, &(_, end, i)) in list.iter().enumerate() {
            order.push((end, th, pos, i));
        }
    }
    order.sort_unstable();
    let mut satisfied = vec![0u32; gr.ids.len()];
    for &(end, th, _, i) in &order {
        let Some(done) = by_phase.get(&(th, i)) else {
            continue;
        };
        let src = &model.phases[th][i];
        for &g in done {
            let Some(k) = gr.node(t.tasks[model.groups[g].0].task_id) else {
                continue;
            };
            for &c in gr.succs(k) {
                satisfied[c] += 1;
                if satisfied[c] as usize != gr.preds(c).len() {
                    continue;
                }
                let Some(&cg) = model.group_of.get(&gr.ids[c].raw()) else {
                    continue;
                };
                let (a, b) = model.groups[cg];
                let mut first: Option<(Ns, usize)> = None;
                for r in a..b {
                    if let Some(d) = t.tasks[r].dispatch {
                        if first.is_none_or(|(fd, _)| d < fd) {
                            first = Some((d, r));
                        }
                    }
                }
                let Some((d, r)) = first else { continue };
                if d < end {
                    continue;
                }
                let Some(dth) = thread_of(t.tasks[r].core_id) else {
                    continue;
                };
                let Some(di) = index
                    .dispatch
                    .get(dth)
                    .and_then(|list| PhaseIndex::find(list, d, false))
                else {
                    continue;
                };
                out.flow(
                    "complete\u{2192}ready",
                    (PID_SCHED, src, end.saturating_sub(10)),
                    (PID_SCHED, &model.phases[dth][di], d),
                    None,
                    (None, None),
                );
            }
        }
        out.flush_if_full()?;
    }
    Ok(())
}
