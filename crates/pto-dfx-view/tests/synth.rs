//! Synthetic diagnostic inputs of any size for the viewer tests and the
//! viewer benchmark (`benches/viewers.rs` includes this file).
//!
//! A deterministic generator (an LCG, no randomness between runs) lays
//! tasks on 24 AIC and 48 AIV cores the way a scheduler would: each core
//! runs its tasks one after the other (dispatch, receive, start, end,
//! finish), a few tasks are SPMD (several rows with one task id), each task
//! depends on one or two recent tasks, and every 64th task has an
//! `alloc_tensors` pseudo-task as creator. Level 3 and 4 add scheduler
//! phases around each dispatch and finish, and orchestrator submits.

#![allow(dead_code)]

use pto_dfx::deps::{DepFlags, DepsEdge, DepsFile, DepsTask, EdgeSource, ScopeMode};
use pto_dfx::swimlane::{
    AicoreTaskRow, AicpuTaskRow, OrchPhaseRecord, PopCounts, SchedPhaseKind, SchedPhaseRecord,
    SwimlaneFile, SwimlaneLevel, SwimlaneMetadata,
};
use pto_dfx::{CoreType, TaskId};

/// A deterministic pseudo-random stream.
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Self {
        Self(
            seed.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        )
    }

    pub fn next(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % bound.max(1)
    }
}

pub const N_AIC: u32 = 24;
pub const N_AIV: u32 = 48;
pub const N_THREADS: usize = 3;

/// `n_tasks` tasks at `level` (1..=4): the swimlane file and its deps.json.
pub fn generate(n_tasks: usize, level: u8, seed: u64) -> (SwimlaneFile, DepsFile) {
    let mut rng = Lcg::new(seed);
    let n_cores = N_AIC + N_AIV;
    let mut core_free = vec![1_000u64; n_cores as usize];
    let mut next_reg = vec![1u32; n_cores as usize];
    let mut aicore = Vec::with_capacity(n_tasks + n_tasks / 16);
    let mut aicpu = Vec::with_capacity(n_tasks + n_tasks / 16);
    let mut deps = DepsFile::default();
    deps.tasks.reserve(n_tasks);
    deps.edges.reserve(2 * n_tasks);
    let mut sched: Vec<Vec<SchedPhaseRecord>> = vec![Vec::new(); N_THREADS];
    let mut sched_free = [0u64; N_THREADS];
    let mut orch = Vec::with_capacity(n_tasks + n_tasks / 64);
    let mut orch_time = 500u64;
    let mut submit_idx = 0u32;
    for i in 0..n_tasks {
        let ring = if i.is_multiple_of(5) { 0 } else { 1 };
        let id = TaskId::new(ring, i as u32);
        let aic = rng.next(3) == 0;
        let func = if aic {
            (i % 2) as i32
        } else {
            2 + (i % 3) as i32
        };
        let spmd = rng.next(50) == 0;
        let block_num = if spmd { 2 + rng.next(3) as u32 } else { 1 };
        if i.is_multiple_of(64) {
            let alloc = TaskId::new(2, i as u32);
            deps.edges.push(DepsEdge {
                pred: alloc,
                succ: id,
                arg: 0,
                source: EdgeSource::Creator,
                flags: DepFlags::WAIT_RETAIN,
                overlap: None,
                consumer: None,
                producer: None,
            });
            orch.push(OrchPhaseRecord {
                run_epoch: None,
                submit_idx,
                task_id: alloc,
                start_cycles: orch_time,
                end_cycles: orch_time + 3,
            });
            submit_idx += 1;
            orch_time += 4;
        }
        orch.push(OrchPhaseRecord {
            run_epoch: None,
            submit_idx,
            task_id: id,
            start_cycles: orch_time,
            end_cycles: orch_time + 5,
        });
        submit_idx += 1;
        orch_time += 6;
        deps.tasks.push(DepsTask {
            task_id: id,
            scope: if ring == 0 {
                ScopeMode::Auto
            } else {
                ScopeMode::Manual
            },
            early_dispatch: rng.next(40) == 0,
            kernel_ids: if aic {
                vec![func, -1, -1]
            } else {
                vec![-1, func, -1]
            },
            block_num,
            args: Vec::new(),
        });
        for back in [1u64, 2 + rng.next(30)] {
            if (i as u64) >= back && (back == 1 || rng.next(2) == 0) {
                let j = i - back as usize;
                let pred = TaskId::new(if j.is_multiple_of(5) { 0 } else { 1 }, j as u32);
                deps.edges.push(DepsEdge {
                    pred,
                    succ: id,
                    arg: 1,
                    source: EdgeSource::Tensormap,
                    flags: DepFlags::WAIT,
                    overlap: None,
                    consumer: None,
                    producer: None,
                });
            }
        }
        for _ in 0..block_num {
            let core = if aic {
                rng.next(u64::from(N_AIC)) as u32
            } else {
                N_AIC + rng.next(u64::from(N_AIV)) as u32
            };
            let c = core as usize;
            // Now and then a dispatch before the previous finish (an overlap).
            let dispatch = if rng.next(100) == 0 {
                core_free[c].saturating_sub(3)
            } else {
                core_free[c] + rng.next(20)
            };
            let receive = dispatch + 2 + rng.next(4);
            let start = receive + 1 + rng.next(3);
            let end = start + 10 + rng.next(200);
            let finish = end + 2 + rng.next(6);
            core_free[c] = finish;
            let reg = next_reg[c];
            next_reg[c] += 1;
            aicore.push(AicoreTaskRow {
                run_epoch: None,
                core_id: core,
                task_token: id,
                reg_task_id: reg,
                start_cycles: start,
                end_cycles: end,
                receive_to_start_cycles: (start - receive) as u32,
            });
            aicpu.push(AicpuTaskRow {
                run_epoch: None,
                core_id: core,
                reg_task_id: reg,
                dispatch_cycles: dispatch,
                finish_cycles: finish,
            });
            if level >= 3 {
                let t = c % N_THREADS;
                for (kind, at) in [
                    (SchedPhaseKind::Dispatch, dispatch),
                    (SchedPhaseKind::Complete, finish),
                ] {
                    let s = sched_free[t].max(at.saturating_sub(1));
                    let e = s + 2;
                    sched_free[t] = e;
                    let n = sched[t].len() as u32;
                    sched[t].push(SchedPhaseRecord {
                        run_epoch: None,
                        pop: (kind == SchedPhaseKind::Dispatch)
                            .then_some(PopCounts { hit: 1, miss: 0 }),
                        kind,
                        start_cycles: s,
                        end_cycles: e,
                        loop_iter: n,
                        tasks_processed: 1,
                        task_id: None,
                        shared_at_start: Some([(n % 3) as i16, 0, 0]),
                        shared_at_end: Some([((n + 1) % 3) as i16, 0, 0]),
                    });
                }
            }
        }
    }
    // Grouped by core ascending, collection order within a core.
    aicore.sort_by_key(|r| r.core_id);
    aicpu.sort_by_key(|r| r.core_id);
    let level_enum =
        SwimlaneLevel::from_number(u64::from(level)).unwrap_or(SwimlaneLevel::AicpuTiming);
    let file = SwimlaneFile {
        level: level_enum,
        metadata: SwimlaneMetadata {
            host_clock_domain_id: None,
            runtime: None,
            clock_freq_hz: 50_000_000,
            num_cores: n_cores,
            core_types: (0..n_cores)
                .map(|c| {
                    if c < N_AIC {
                        CoreType::Aic
                    } else {
                        CoreType::Aiv
                    }
                })
                .collect(),
            host: None,
            clock_anchors: None,
            core_to_thread: if level >= 3 {
                (0..n_cores)
                    .map(|c| (c as usize % N_THREADS) as i32)
                    .collect()
            } else {
                Vec::new()
            },
            timing: None,
        },
        aicore_tasks: aicore,
        aicpu_tasks: if level >= 2 { aicpu } else { Vec::new() },
        scheduler_phases: (level >= 3).then_some(sched),
        orchestrator_phases: (level >= 4).then(|| vec![orch]),
        host_orchestrator_phases: None,
        host_device_uploads: None,
    };
    (file, deps)
}

/// A `deps.json` of `n` tasks shaped like a real program: chains of four
/// kernels, a fan-in every 16 chains, an alloc feeding each block of chains.
pub fn deps_graph(n: usize) -> DepsFile {
    let mut deps = DepsFile::default();
    let edge = |pred: TaskId, succ: TaskId, source: EdgeSource| DepsEdge {
        pred,
        succ,
        arg: 0,
        source,
        flags: if source == EdgeSource::Creator {
            DepFlags::WAIT_RETAIN
        } else {
            DepFlags::WAIT
        },
        overlap: None,
        consumer: None,
        producer: None,
    };
    let mut last_update: Option<TaskId> = None;
    for i in 0..n {
        let id = TaskId::new(1, i as u32);
        let stage = i % 4;
        deps.tasks.push(DepsTask {
            task_id: id,
            scope: ScopeMode::Auto,
            early_dispatch: false,
            kernel_ids: if stage.is_multiple_of(2) {
                vec![stage as i32, -1, -1]
            } else {
                vec![-1, stage as i32, -1]
            },
            block_num: if i.is_multiple_of(97) { 4 } else { 1 },
            args: Vec::new(),
        });
        if stage > 0 {
            deps.edges.push(edge(
                TaskId::new(1, (i - 1) as u32),
                id,
                EdgeSource::Tensormap,
            ));
        }
        if stage == 3 {
            if let Some(prev) = last_update {
                deps.edges.push(edge(prev, id, EdgeSource::Tensormap));
            }
            last_update = Some(id);
            if (i / 4) % 16 == 0 {
                last_update = None;
            }
        }
        if i.is_multiple_of(64) {
            deps.edges
                .push(edge(TaskId::new(2, i as u32), id, EdgeSource::Creator));
        }
    }
    deps
}
