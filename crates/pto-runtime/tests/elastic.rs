//! The elastic worker pool: kernels that hold their cores for long do not keep other
//! dispatched subtasks from starting. Simulated cores run at the same time on the device, so
//! a program may rely on it (Simpler's `sync_start_early_local_owner` fills every AIV core
//! with a one-second blocker and waits until all of them report running).

use std::time::Duration;

use pto_runtime::{run, ArgDirection, ChipConfig, CoreType, HostTensor, OrchArg, Platform};

use crate::common::{build, build_with, config, orchestration, Kernel};

/// Each block counts itself in, then waits (at most 5 s of wall time, so a runtime that
/// runs the blocks a few at a time fails the test instead of hanging it) until every block
/// has counted in, and records whether it saw them all.
const BLOCKER: &str = r#"
#include <sched.h>
#include <time.h>
#include "intrinsic.h"
static double now_s() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
extern "C" void kernel_entry(int64_t* args) {
    ChipTensor* counter = kernel_tensor(args, 0);
    ChipTensor* out = kernel_tensor(args, 1);
    int32_t n = get_block_num(args);
    int32_t* c = counter->data<int32_t>();
    __atomic_add_fetch(c, 1, __ATOMIC_ACQ_REL);
    double give_up = now_s() + 5.0;
    while (__atomic_load_n(c, __ATOMIC_ACQUIRE) < n) {
        if (now_s() > give_up) return;
        sched_yield();
    }
    out->data<int32_t>()[get_block_idx(args)] = 1;
}
"#;

fn i32_arg(data: &mut [i32]) -> OrchArg<'_> {
    let shape = vec![data.len() as u32];
    // SAFETY: i32 has no invalid bit patterns and u8 alignment is 1.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast::<u8>(), data.len() * 4) };
    OrchArg::Tensor(HostTensor {
        direction: ArgDirection::InOut,
        dtype: 2,
        shape,
        data: bytes,
    })
}

/// 24 blocks of one ordinary (not sync-start) AIV task on two workers: every block must be
/// running at once, each on an AIV core of its own.
#[test]
fn held_cores_do_not_keep_other_blocks_waiting() {
    const BLOCKS: u32 = 24;
    let orch = orchestration(
        2,
        &format!(
            r#"
    ChipTensor counter = orch_args.tensor(0).ref();
    ChipTensor out = orch_args.tensor(1).ref();
    CoreTaskArgs p;
    p.add_inout(counter);
    p.add_inout(out);
    p.launch_spec.set_block_num({BLOCKS});
    rt_submit_aiv_task(0, p);
"#
        ),
    );
    let program = build(
        "elastic_blockers",
        &orch,
        &[Kernel {
            func_id: 0,
            name: "blocker",
            core: CoreType::Aiv,
            source: BLOCKER,
        }],
    );
    let mut cfg = config();
    cfg.n_workers = Some(2);
    cfg.scheduler_timeout = Duration::from_secs(30);
    cfg.dfx.swimlane = 1;
    let mut counter = vec![0i32; 1];
    let mut out = vec![0i32; BLOCKS as usize];
    let mut args = vec![i32_arg(&mut counter), i32_arg(&mut out)];
    let report = run(&program, &mut args, &cfg).unwrap();
    drop(args);
    assert_eq!(counter, vec![BLOCKS as i32]);
    assert_eq!(
        out,
        vec![1; BLOCKS as usize],
        "every block must have seen all {BLOCKS} running at once"
    );
    // The swimlane names a distinct AIV core for each block, and the pool's records keep
    // the core ownership of `core_to_worker`.
    let topology = report.dfx.topology.unwrap();
    let mut cores: Vec<u32> = Vec::new();
    for (w, records) in report.dfx.workers.iter().enumerate() {
        for s in &records.subtasks {
            assert_eq!(topology.core_type(s.core as usize), CoreType::Aiv);
            assert_eq!(report.dfx.core_to_worker[s.core as usize], w as i32);
            cores.push(s.core);
        }
    }
    cores.sort_unstable();
    cores.dedup();
    assert_eq!(cores.len(), BLOCKS as usize, "cores: {cores:?}");
}

/// Each block marks its status line running (1), spins on the system counter for two
/// measured seconds as a device kernel would (no yield of its own), then marks it released
/// (2).
const COUNTER_BLOCKER: &str = r#"
#include "common/platform_config.h"
#include "intrinsic.h"
extern "C" void kernel_entry(int64_t* args) {
    ChipTensor* status = kernel_tensor(args, 0);
    int32_t* mine = status->data<int32_t>() + get_block_idx(args) * 16;
    uint64_t start = get_sys_cnt();
    __atomic_store_n(mine, 1, __ATOMIC_RELEASE);
    while (get_sys_cnt() - start < 2 * PLATFORM_PROF_SYS_CNT_FREQ) {
    }
    __atomic_store_n(mine, 2, __ATOMIC_RELEASE);
}
"#;

/// Every AIV core of an a5 chip (72) holds a blocker, and the orchestration, polling with
/// `rt_is_fatal()` and `SPIN_WAIT_HINT()`, must see all of them running at once on a host with
/// far fewer CPUs: the task is not held back as ready, extra workers start for the blocks,
/// and neither the blockers started last nor the orchestration are kept off the CPUs by the
/// ones spinning.
#[test]
fn the_orchestration_sees_every_core_held_at_once() {
    let orch = orchestration(
        1,
        r#"
    ChipTensor status = orch_args.tensor(0).ref();
    int32_t n = (int32_t)rt_available_aiv_count();
    CoreTaskArgs p;
    p.add_inout(status);
    p.launch_spec.set_core_num(n);
    rt_submit_aiv_task(0, p);
    volatile int32_t* s = status.data_as<int32_t>();
    for (;;) {
        if (rt_is_fatal()) return;
        int32_t running = 0;
        bool released = false;
        for (int32_t i = 0; i < n; ++i) {
            running += s[i * 16] == 1;
            released |= s[i * 16] == 2;
        }
        if (running == n) break;
        if (released) {
            rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "a blocker finished before all %d ran at once (%d running)", n, running);
            return;
        }
        SPIN_WAIT_HINT();
    }
    s[n * 16] = n;
"#,
    );
    let program = build_with(
        "elastic_counter_blockers_a5",
        &orch,
        &[Kernel {
            func_id: 0,
            name: "counter_blocker",
            core: CoreType::Aiv,
            source: COUNTER_BLOCKER,
        }],
        &["PTO_ARCH_A5"],
    );
    let mut cfg = ChipConfig::new(Platform::A5Sim).unwrap();
    cfg.n_workers = Some(2);
    cfg.scheduler_timeout = Duration::from_secs(30);
    let mut status = vec![0i32; 73 * 16];
    let mut args = vec![i32_arg(&mut status)];
    run(&program, &mut args, &cfg).unwrap();
    drop(args);
    assert_eq!(status[72 * 16], 72);
    assert!((0..72).all(|i| status[i * 16] == 2));
}

/// Spins on the system counter for 200 µs (below the elastic pool's threshold: no extra
/// worker starts for it).
const SPIN_200US: &str = r#"
#include "common/platform_config.h"
#include "intrinsic.h"
extern "C" void kernel_entry(int64_t* args) {
    (void)args;
    uint64_t start = get_sys_cnt();
    while (get_sys_cnt() - start < PLATFORM_PROF_SYS_CNT_FREQ / 5000) {
    }
}
"#;

/// The default pool on a simulated chip: one worker per host CPU, the last the reserve,
/// which runs ready work once the orchestration has returned (here: 300 independent tasks
/// submitted at once) on cores of its own, in a lane of its own.
#[test]
fn the_reserve_runs_ready_work_once_the_orchestration_returns() {
    const TASKS: u32 = 300;
    let orch = orchestration(
        0,
        &format!(
            "    for (int i = 0; i < {TASKS}; ++i) {{ CoreTaskArgs p; rt_submit_aiv_task(0, p); }}\n"
        ),
    );
    let program = build(
        "reserve_worker",
        &orch,
        &[Kernel {
            func_id: 0,
            name: "spin_200us",
            core: CoreType::Aiv,
            source: SPIN_200US,
        }],
    );
    let mut cfg = config();
    cfg.dfx.swimlane = 4;
    let report = run(&program, &mut [], &cfg).unwrap();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!((report.n_workers, report.dfx.workers.len()), (cpus, cpus));
    let subtasks: usize = report.dfx.workers.iter().map(|w| w.subtasks.len()).sum();
    assert_eq!(subtasks, TASKS as usize);
    for (w, records) in report.dfx.workers.iter().enumerate() {
        for s in &records.subtasks {
            assert_eq!(report.dfx.core_to_worker[s.core as usize], w as i32);
        }
    }
    if cpus > 1 {
        let reserve = &report.dfx.workers[cpus - 1];
        assert!(
            !reserve.subtasks.is_empty(),
            "the reserve ran no task: {:?}",
            reserve.phases
        );
        // The ring has room for every task: the orchestrator never waits, so the reserve
        // starts only once it has submitted the last one.
        let submitted = report.dfx.orchestrator.iter().map(|o| o.end_ns).max();
        assert!(
            submitted.is_some(),
            "no orchestrator records at swimlane level 4"
        );
        let first = reserve.subtasks.iter().map(|s| s.start_ns).min();
        assert!(first >= submitted, "{first:?} before {submitted:?}");
    }
}
