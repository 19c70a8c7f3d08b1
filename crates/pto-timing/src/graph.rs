//! The whole-program schedule: a discrete-event list schedule of the task graph on the
//! platform's cores.
//!
//! A task becomes ready when its last predecessor ends, plus the per-dispatch overhead; ready
//! tasks are placed in order of readiness (ties: submission order). Each block of a task (the
//! subtasks that must share a cluster: a MIX block's AIC and AIV cores) goes to the cluster
//! whose needed cores are free earliest; a lone subtask goes to the earliest-free core of its
//! type. All blocks of a task start together when `gang` is set (sync-start tasks).
//! Ring back-pressure, scope ends and the orchestrator's own time are not modelled.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A core type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CoreKind {
    /// Cube core.
    Aic,
    /// Vector core.
    Aiv,
}

/// The cores of the platform: `clusters` clusters of 1 AIC + 2 AIV. Core ids follow the
/// runtime's topology: AIC `c` is `c`; cluster `c`'s AIV cores are `clusters + 2c` and
/// `clusters + 2c + 1`.
#[derive(Clone, Copy, Debug)]
pub struct Cores {
    /// Clusters.
    pub clusters: usize,
}

impl Cores {
    /// Core id of `kind`'s `lane` in `cluster`.
    pub fn core(&self, cluster: usize, kind: CoreKind, lane: usize) -> usize {
        match kind {
            CoreKind::Aic => cluster,
            CoreKind::Aiv => self.clusters + 2 * cluster + lane.min(1),
        }
    }
}

/// One subtask to place: its core type and predicted cycles.
#[derive(Clone, Copy, Debug)]
pub struct Subtask {
    /// Core type.
    pub kind: CoreKind,
    /// Predicted cycles on the core.
    pub cycles: u64,
}

/// A task of the graph.
#[derive(Clone, Debug, Default)]
pub struct Task {
    /// Blocks; each block's subtasks run in one cluster.
    pub blocks: Vec<Vec<Subtask>>,
    /// Indices of predecessor tasks (earlier in the list).
    pub preds: Vec<usize>,
    /// All blocks start together.
    pub gang: bool,
}

/// Where and when a subtask runs in the schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    /// Core id.
    pub core: usize,
    /// Dispatch cycle (the task became ready and the scheduler picked it).
    pub dispatch: u64,
    /// Start cycle.
    pub start: u64,
    /// End cycle.
    pub end: u64,
}

/// The schedule.
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    /// Per task, per block, per subtask placement (same shape as the input).
    pub placed: Vec<Vec<Vec<Placed>>>,
    /// The last end.
    pub makespan: u64,
}

/// Schedules `tasks` on `cores` with `dispatch` cycles of overhead before each task.
pub fn schedule(tasks: &[Task], cores: Cores, dispatch: u64) -> Schedule {
    let n = tasks.len();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut missing = vec![0usize; n];
    for (t, task) in tasks.iter().enumerate() {
        for &p in &task.preds {
            if p < n && p != t {
                succs[p].push(t);
                missing[t] += 1;
            }
        }
    }
    let mut ready_at = vec![0u64; n];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = (0..n)
        .filter(|&t| missing[t] == 0)
        .map(|t| Reverse((0, t)))
        .collect();
    let mut free = vec![0u64; cores.clusters * 3];
    let mut out = Schedule {
        placed: vec![Vec::new(); n],
        makespan: 0,
    };
    let mut done = 0;
    while let Some(Reverse((ready, t))) = heap.pop() {
        let dispatch_at = ready + dispatch;
        let placed = place(&tasks[t], cores, &mut free, dispatch_at, ready);
        let end = placed
            .iter()
            .flatten()
            .map(|p| p.end)
            .max()
            .unwrap_or(dispatch_at);
        out.makespan = out.makespan.max(end);
        out.placed[t] = placed;
        done += 1;
        for &s in &succs[t] {
            ready_at[s] = ready_at[s].max(end);
            missing[s] -= 1;
            if missing[s] == 0 {
                heap.push(Reverse((ready_at[s], s)));
            }
        }
    }
    // Tasks on a cycle (not produced by the runtime) are left unplaced.
    debug_assert!(done <= n);
    out
}

/// The cores a block needs in `cluster` (AIV lanes in order) and when they are all free.
fn block_cores(block: &[Subtask], cluster: usize, cores: Cores, free: &[u64]) -> (Vec<usize>, u64) {
    let mut lane = 0;
    let ids: Vec<usize> = block
        .iter()
        .map(|s| {
            let c = cores.core(cluster, s.kind, lane);
            if s.kind == CoreKind::Aiv {
                lane += 1;
            }
            c
        })
        .collect();
    let at = ids.iter().map(|&c| free[c]).max().unwrap_or(0);
    (ids, at)
}

/// The earliest-free choice of cores for `block`: the best cluster for a multi-core block,
/// else the earliest-free core of the subtask's type.
fn choose(block: &[Subtask], cores: Cores, free: &[u64]) -> (Vec<usize>, u64) {
    if let [one] = block {
        let ids: Vec<usize> = (0..cores.clusters)
            .flat_map(|c| match one.kind {
                CoreKind::Aic => vec![cores.core(c, CoreKind::Aic, 0)],
                CoreKind::Aiv => vec![
                    cores.core(c, CoreKind::Aiv, 0),
                    cores.core(c, CoreKind::Aiv, 1),
                ],
            })
            .collect();
        let best = ids.into_iter().min_by_key(|&c| (free[c], c)).unwrap_or(0);
        return (vec![best], free[best]);
    }
    (0..cores.clusters)
        .map(|c| block_cores(block, c, cores, free))
        .min_by_key(|(ids, at)| (*at, ids.first().copied()))
        .unwrap_or_default()
}

fn place(
    task: &Task,
    cores: Cores,
    free: &mut [u64],
    not_before: u64,
    ready: u64,
) -> Vec<Vec<Placed>> {
    let choices: Vec<(Vec<usize>, u64)> = if task.gang {
        let mut taken = free.to_vec();
        task.blocks
            .iter()
            .map(|b| {
                let (ids, at) = choose(b, cores, &taken);
                for &c in &ids {
                    taken[c] = u64::MAX; // one block per core in a gang
                }
                (ids, at)
            })
            .collect()
    } else {
        Vec::new()
    };
    let gang_start = choices
        .iter()
        .map(|(_, at)| *at)
        .max()
        .unwrap_or(0)
        .max(not_before);
    task.blocks
        .iter()
        .enumerate()
        .map(|(b, block)| {
            let (ids, at) = if task.gang {
                choices[b].clone()
            } else {
                choose(block, cores, free)
            };
            let start = if task.gang {
                gang_start
            } else {
                at.max(not_before)
            };
            block
                .iter()
                .zip(ids)
                .map(|(s, core)| {
                    let end = start + s.cycles;
                    free[core] = end;
                    Placed {
                        core,
                        dispatch: ready,
                        start,
                        end,
                    }
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aiv(cycles: u64) -> Vec<Subtask> {
        vec![Subtask {
            kind: CoreKind::Aiv,
            cycles,
        }]
    }

    #[test]
    fn a_chain_adds_up_with_dispatch_overhead() {
        let tasks = vec![
            Task {
                blocks: vec![aiv(100)],
                ..Task::default()
            },
            Task {
                blocks: vec![aiv(50)],
                preds: vec![0],
                gang: false,
            },
        ];
        let s = schedule(&tasks, Cores { clusters: 24 }, 10);
        assert_eq!(s.makespan, 10 + 100 + 10 + 50);
        assert_eq!(s.placed[1][0][0].start, 120);
    }

    #[test]
    fn independent_tasks_spread_over_cores_until_they_run_out() {
        // 48 AIV cores: 48 tasks run side by side, the 49th waits for one.
        let tasks: Vec<Task> = (0..49)
            .map(|_| Task {
                blocks: vec![aiv(100)],
                ..Task::default()
            })
            .collect();
        let s = schedule(&tasks, Cores { clusters: 24 }, 0);
        assert_eq!(s.makespan, 200);
        let mut cores: Vec<usize> = s.placed[..48].iter().map(|p| p[0][0].core).collect();
        cores.sort_unstable();
        cores.dedup();
        assert_eq!(cores.len(), 48);
        assert!(
            cores.iter().all(|&c| c >= 24),
            "AIV ids follow the AIC ones"
        );
    }

    #[test]
    fn mix_blocks_share_a_cluster_and_gangs_start_together() {
        let block = vec![
            Subtask {
                kind: CoreKind::Aic,
                cycles: 30,
            },
            Subtask {
                kind: CoreKind::Aiv,
                cycles: 20,
            },
            Subtask {
                kind: CoreKind::Aiv,
                cycles: 10,
            },
        ];
        let tasks = vec![
            Task {
                blocks: vec![aiv(100)],
                ..Task::default()
            },
            Task {
                blocks: vec![block.clone(), block],
                preds: vec![],
                gang: true,
            },
        ];
        let s = schedule(&tasks, Cores { clusters: 2 }, 0);
        // Task 0 took AIV core 2 (cluster 0) until 100: block 0 goes to the free cluster 1,
        // block 1 to cluster 0, and the gang starts when cluster 0 is free.
        let cores = |b: usize| s.placed[1][b].iter().map(|p| p.core).collect::<Vec<_>>();
        assert_eq!(cores(0), vec![1, 4, 5]);
        assert_eq!(cores(1), vec![0, 2, 3]);
        assert!(s.placed[1].iter().flatten().all(|p| p.start == 100));
        assert_eq!(s.makespan, 130);
    }
}
