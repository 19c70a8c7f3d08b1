//! `--overhead`: Simpler's eight scheduler-overhead counter tracks
//! (`docs/dfx/sched-overhead-model.md`), under the AICPU Scheduler process.
//!
//! Over the window `[first kernel start, last kernel end]`, per engine
//! (AIC, AIV; an engine with no rows is left out) and at every instant:
//!
//! | Series | tid | Value |
//! |---|---|---|
//! | `oh_<e>_idle` | 9101 / 9111 | cores of that type (those with rows) not executing a kernel |
//! | `oh_<e>_ready` | 9102 / 9112 | tasks of that type whose producers have all ended but that are not dispatched yet (a MIX task counts for both) |
//! | `oh_<e>_overhead` | 9103 / 9113 | 1 when idle > 0 and ready > 0 |
//! | `oh_all_overhead` | 9121 | 1 when every present engine is overhead |
//! | `oh_has_overhead` | 9122 | 1 when every engine with ready work has an idle core |
//!
//! A task is ready at the latest end of its `deps.json` predecessors that
//! have rows, or at its own first dispatch when none has (no early readiness
//! that cannot be checked). A sample is written only when a series' value
//! changes; the window's end carries none. Times are the integer
//! nanoseconds of [`perf`](crate::perf), so Simpler's rounding of
//! `ts` to three decimals of a µs is exact here.

use crate::perf::{Ns, Timeline};
use pto_base::idmap::{self, IdMap};
use pto_dfx::core_type::CoreType;
use pto_dfx::task_id::TaskId;

/// One counter sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// When the value starts to hold.
    pub ts: Ns,
    /// Index into [`SERIES`].
    pub series: usize,
    /// The value from `ts` on.
    pub value: i64,
}

/// `(name, tid)` of every series, in Simpler's order.
pub const SERIES: [(&str, u64); 8] = [
    ("oh_aic_idle", 9101),
    ("oh_aic_ready", 9102),
    ("oh_aic_overhead", 9103),
    ("oh_aiv_idle", 9111),
    ("oh_aiv_ready", 9112),
    ("oh_aiv_overhead", 9113),
    ("oh_all_overhead", 9121),
    ("oh_has_overhead", 9122),
];

fn engine(t: CoreType) -> usize {
    match t {
        CoreType::Aic => 0,
        CoreType::Aiv => 1,
    }
}

/// The samples for `t` and the graph's unique edges (`pred`, `succ`), in
/// time order (within a time, in [`SERIES`] order). Empty without edges or
/// tasks, as in Simpler.
pub fn samples(t: &Timeline, edges: &[(TaskId, TaskId)]) -> Vec<Sample> {
    if edges.is_empty() || t.tasks.is_empty() {
        return Vec::new();
    }
    // Cores per engine, and per task: engines, first dispatch, last end.
    let mut cores: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    let mut index: IdMap<u64, usize> = idmap::map_with_capacity(t.tasks.len());
    let mut engines: Vec<[bool; 2]> = Vec::new();
    let mut dispatch: Vec<Ns> = Vec::new();
    let mut end: Vec<Ns> = Vec::new();
    for task in &t.tasks {
        cores[engine(task.core_type)].push(task.core_id);
        let k = *index.entry(task.task_id.raw()).or_insert_with(|| {
            engines.push([false; 2]);
            dispatch.push(task.dispatch.unwrap_or(0));
            end.push(task.end);
            engines.len() - 1
        });
        engines[k][engine(task.core_type)] = true;
        dispatch[k] = dispatch[k].min(task.dispatch.unwrap_or(0));
        end[k] = end[k].max(task.end);
    }
    let mut k_cores = [0i64; 2];
    for (e, list) in cores.iter_mut().enumerate() {
        list.sort_unstable();
        list.dedup();
        k_cores[e] = list.len() as i64;
    }
    let present: Vec<usize> = (0..2).filter(|&e| k_cores[e] > 0).collect();

    // Readiness: the latest end of the predecessors that have rows.
    let mut ready: Vec<Option<Ns>> = vec![None; engines.len()];
    for &(p, s) in edges {
        if p == s {
            continue;
        }
        if let (Some(&pi), Some(&si)) = (index.get(&p.raw()), index.get(&s.raw())) {
            ready[si] = Some(ready[si].map_or(end[pi], |r| r.max(end[pi])));
        }
    }

    let w0 = t.tasks.iter().map(|x| x.start).min().unwrap_or(0);
    let w1 = t.tasks.iter().map(|x| x.end).max().unwrap_or(0);
    let clamp = |v: Ns| v.clamp(w0, w1);
    // Deltas: (time, channel, ±1); channel 2·engine is "running", 2·engine+1 "ready".
    let mut deltas: Vec<(Ns, usize, i64)> = Vec::with_capacity(2 * t.tasks.len() + 4);
    for task in &t.tasks {
        let (s, e) = (clamp(task.start), clamp(task.end));
        if e > s {
            let c = 2 * engine(task.core_type);
            deltas.push((s, c, 1));
            deltas.push((e, c, -1));
        }
    }
    for k in 0..engines.len() {
        let r = clamp(ready[k].unwrap_or(dispatch[k]));
        let d = clamp(dispatch[k]);
        if d > r {
            for (e, &on) in engines[k].iter().enumerate() {
                if on {
                    deltas.push((r, 2 * e + 1, 1));
                    deltas.push((d, 2 * e + 1, -1));
                }
            }
        }
    }
    deltas.sort_unstable_by_key(|d| d.0);

    let mut level = [0i64; 4];
    let mut last: [Option<i64>; 8] = [None; 8];
    let mut out = Vec::new();
    let mut i = 0;
    let mut now = w0;
    loop {
        while i < deltas.len() && deltas[i].0 == now {
            level[deltas[i].1] += deltas[i].2;
            i += 1;
        }
        if now >= w1 {
            break;
        }
        let mut values = [0i64; 8];
        let mut overhead = [false; 2];
        for &e in &present {
            let idle = k_cores[e] - level[2 * e];
            let waiting = level[2 * e + 1];
            overhead[e] = idle > 0 && waiting > 0;
            values[3 * e] = idle;
            values[3 * e + 1] = waiting;
            values[3 * e + 2] = i64::from(overhead[e]);
        }
        values[6] = i64::from(present.iter().all(|&e| overhead[e]));
        let with_work: Vec<usize> = present
            .iter()
            .copied()
            .filter(|&e| level[2 * e + 1] > 0)
            .collect();
        values[7] = i64::from(
            !with_work.is_empty() && with_work.iter().all(|&e| k_cores[e] - level[2 * e] > 0),
        );
        let shown = present.iter().flat_map(|&e| 3 * e..3 * e + 3).chain([6, 7]);
        for series in shown {
            if last[series] != Some(values[series]) {
                last[series] = Some(values[series]);
                out.push(Sample {
                    ts: now,
                    series,
                    value: values[series],
                });
            }
        }
        match deltas.get(i) {
            Some(d) if d.0 < w1 => now = d.0,
            _ => now = w1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::PerfTask;
    use pto_dfx::swimlane::SwimlaneLevel;

    fn task(id: u64, core: u32, ty: CoreType, d: Ns, s: Ns, e: Ns) -> PerfTask {
        PerfTask {
            task_id: TaskId(id),
            core_id: core,
            core_type: ty,
            reg_task_id: 0,
            start: s,
            end: e,
            receive: s,
            dispatch: Some(d),
            finish: Some(e + 5),
        }
    }

    fn timeline(tasks: Vec<PerfTask>) -> Timeline {
        Timeline {
            level: SwimlaneLevel::AicpuTiming,
            host_mode: false,
            core_types: vec![CoreType::Aic, CoreType::Aiv],
            core_to_thread: Vec::new(),
            tasks,
            sched: Vec::new(),
            orch: Vec::new(),
            uploads: Vec::new(),
            problems: Vec::new(),
        }
    }

    fn at(samples: &[Sample], series: &str) -> Vec<(Ns, i64)> {
        let k = SERIES.iter().position(|s| s.0 == series).unwrap();
        samples
            .iter()
            .filter(|s| s.series == k)
            .map(|s| (s.ts, s.value))
            .collect()
    }

    #[test]
    fn a_task_dispatched_late_onto_a_free_core_is_overhead() {
        // t0 on AIC 0 runs 0..100; t1 (AIV 1) depends on it, is dispatched at
        // 150 and runs 160..200: from 100 to 150 it is ready, the AIV idle.
        let t = timeline(vec![
            task(0, 0, CoreType::Aic, 0, 0, 100),
            task(1, 1, CoreType::Aiv, 150, 160, 200),
        ]);
        let s = samples(&t, &[(TaskId(0), TaskId(1))]);
        assert_eq!(at(&s, "oh_aic_idle"), vec![(0, 0), (100, 1)]);
        assert_eq!(at(&s, "oh_aiv_idle"), vec![(0, 1), (160, 0)]);
        assert_eq!(at(&s, "oh_aiv_ready"), vec![(0, 0), (100, 1), (150, 0)]);
        assert_eq!(at(&s, "oh_aiv_overhead"), vec![(0, 0), (100, 1), (150, 0)]);
        assert_eq!(at(&s, "oh_aic_overhead"), vec![(0, 0)]);
        // AIC has no ready work: "all" stays 0, "has" follows the AIV.
        assert_eq!(at(&s, "oh_all_overhead"), vec![(0, 0)]);
        assert_eq!(at(&s, "oh_has_overhead"), vec![(0, 0), (100, 1), (150, 0)]);
        // Nothing at the window's end, and time order throughout.
        assert!(s.iter().all(|x| x.ts < 200));
        assert!(s.windows(2).all(|w| w[0].ts <= w[1].ts));
    }

    #[test]
    fn without_edges_there_are_no_counters_and_absent_engines_are_left_out() {
        let t = timeline(vec![task(0, 0, CoreType::Aic, 0, 0, 10)]);
        assert!(samples(&t, &[]).is_empty());
        let s = samples(&t, &[(TaskId(5), TaskId(0))]);
        assert!(at(&s, "oh_aiv_idle").is_empty());
        assert_eq!(at(&s, "oh_aic_idle"), vec![(0, 0)]);
        // A predecessor without rows: readiness falls back to the dispatch.
        assert_eq!(at(&s, "oh_aic_ready"), vec![(0, 0)]);
    }

    #[test]
    fn a_mix_task_counts_for_both_engines() {
        let t = timeline(vec![
            task(0, 0, CoreType::Aic, 0, 0, 50),
            task(1, 0, CoreType::Aic, 80, 90, 120),
            task(1, 1, CoreType::Aiv, 80, 90, 120),
        ]);
        let s = samples(&t, &[(TaskId(0), TaskId(1))]);
        assert_eq!(at(&s, "oh_aic_ready"), vec![(0, 0), (50, 1), (80, 0)]);
        assert_eq!(at(&s, "oh_aiv_ready"), vec![(0, 0), (50, 1), (80, 0)]);
        assert_eq!(at(&s, "oh_all_overhead"), vec![(0, 0), (50, 1), (80, 0)]);
    }
}
