//! Runtime overhead with empty kernels: independent tasks, a dependent chain, and a wide
//! fan-out / fan-in graph. Run with `cargo bench -p pto-runtime --bench runtime_overhead`;
//! results go to docs/PERFORMANCE.md.
//!
//! Each scenario is an orchestration compiled with the system C++ compiler and run through
//! the real runtime on `a2a3sim`; the best of several rounds is reported (the first round
//! also warms the task slots and heap pages). `PTO_BENCH_SCENARIOS` (a comma-separated
//! list of scenario names) runs only those, e.g. under `perf record`; `PTO_BENCH_WORKERS`
//! sets the pool's workers (default: a run's own default pool, the reserve worker included);
//! `PTO_BENCH_BATCHES` the orchestrator's ready-batch settings compared, rounds alternating
//! (comma-separated values of `PTO_READY_BATCH`; default `1,16`, at once and the default).
//!
//! The same invocation measures the machine's floor for handing work between threads, so
//! the runtime's costs can be read as ratios that travel between machines: a two-thread
//! hand-off of one item through a bounded spin queue (the ready queue's type) and through
//! `std::sync::mpsc`, and a one-way ping-pong latency (two threads taking turns on one
//! atomic). The last lines give an independent task over the spin hand-off and a chain
//! hop over the ping-pong.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;

use pto_runtime::{
    run, ArgDirection, ChipConfig, CoreType, HostTensor, KernelSpec, OrchArg, Platform, Program,
    ProgramSpec,
};
use pto_toolchain::{CompileUnit, CoreKind, Toolchain, UnitKind};

const NOOP: &str =
    "#include \"tensor.h\"\nextern \"C\" void kernel_entry(int64_t* args) { (void)args; }\n";

fn orchestration(body: &str) -> String {
    format!(
        r#"#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {{
    return PTO2OrchestrationConfig{{.expected_arg_count = 1}};
}}
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {{
    ChipTensor x = orch_args.tensor(0).ref();
    (void)x;
{body}
}}
"#
    )
}

struct Scenario {
    name: &'static str,
    body: &'static str,
    n_tasks: u64,
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "independent",
        body: r#"
    for (int s = 0; s < 100; ++s) {
        PTO2_SCOPE() {
            for (int i = 0; i < 1000; ++i) { CoreTaskArgs p; rt_submit_aiv_task(0, p); }
        }
    }"#,
        n_tasks: 100_000,
    },
    Scenario {
        name: "chain",
        body: r#"
    for (int s = 0; s < 100; ++s) {
        PTO2_SCOPE() {
            for (int i = 0; i < 1000; ++i) { CoreTaskArgs p; p.add_inout(x); rt_submit_aiv_task(0, p); }
        }
    }"#,
        n_tasks: 100_000,
    },
    Scenario {
        name: "fanout_fanin",
        body: r#"
    static PTO2TaskId ids[999];
    for (int s = 0; s < 100; ++s) {
        PTO2_SCOPE() {
            CoreTaskArgs root; root.add_output(x); PTO2TaskId r = rt_submit_aiv_task(0, root).task_id();
            for (int i = 0; i < 998; ++i) {
                CoreTaskArgs p; p.set_dependencies(&r, 1); ids[i] = rt_submit_aiv_task(0, p).task_id();
            }
            CoreTaskArgs join; join.set_dependencies(ids, 998); rt_submit_aiv_task(0, join);
        }
    }"#,
        n_tasks: 100_000,
    },
];

fn build(tc: &Toolchain, dir: &std::path::Path, s: &Scenario) -> Program {
    let orch = dir.join(format!("{}_orch.cpp", s.name));
    let kernel = dir.join("noop.cpp");
    std::fs::write(&orch, orchestration(s.body)).expect("write orchestration");
    std::fs::write(&kernel, NOOP).expect("write kernel");
    let objs: Vec<_> = tc
        .compile_all(&[
            CompileUnit::new(orch, UnitKind::Orchestration),
            CompileUnit::new(kernel, UnitKind::Kernel(CoreKind::Aiv)),
        ])
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{e}")).so_path)
        .collect();
    Program::load(&ProgramSpec {
        orchestration_so: objs[0].clone(),
        entry_symbol: "aicpu_orchestration_entry".into(),
        config_symbol: None,
        kernels: vec![KernelSpec {
            func_id: 0,
            name: "noop".into(),
            core_type: CoreType::Aiv,
            so_path: objs[1].clone(),
        }],
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

fn main() {
    let dir = std::env::temp_dir().join(format!("pto-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pto-cache");
    let tc = Toolchain::discover(&cache).unwrap_or_else(|e| panic!("{e}"));
    let rounds: usize = std::env::var("PTO_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    println!(
        "{:<14} {:>6} {:>10} {:>12} {:>12} {:>14} {:>12}",
        "scenario", "batch", "tasks", "wall (ms)", "device (ms)", "tasks/s", "us/task"
    );
    let only = std::env::var("PTO_BENCH_SCENARIOS").ok();
    let mut per_task: Vec<(&str, f64)> = Vec::new();
    for s in SCENARIOS {
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|n| n.trim() == s.name))
        {
            continue;
        }
        let program = build(&tc, &dir, s);
        let mut config = ChipConfig::new(Platform::A2a3Sim).unwrap_or_else(|e| panic!("{e}"));
        config.n_workers = std::env::var("PTO_BENCH_WORKERS")
            .ok()
            .and_then(|v| v.parse().ok());
        // The orchestrator's ready batch (`PTO_READY_BATCH`): 1 pushes every ready task at
        // its submit (as before the batch existed), 16 is the default. Rounds alternate.
        let batches = batches();
        let mut best: Vec<Option<(Duration, Duration)>> = vec![None; batches.len()];
        for _ in 0..rounds {
            for (k, batch) in batches.iter().enumerate() {
                std::env::set_var("PTO_READY_BATCH", batch);
                let (wall, device) = run_once(&program, &config, s);
                if best[k].is_none_or(|(_, d)| device < d) {
                    best[k] = Some((wall, device));
                }
            }
        }
        std::env::remove_var("PTO_READY_BATCH");
        for (k, batch) in batches.iter().enumerate() {
            let (wall, device) = best[k].unwrap_or_default();
            let us = device.as_secs_f64() * 1e6 / s.n_tasks as f64;
            println!(
                "{:<14} {:>6} {:>10} {:>12.2} {:>12.2} {:>14.0} {:>12.3}",
                s.name,
                batch,
                s.n_tasks,
                wall.as_secs_f64() * 1e3,
                device.as_secs_f64() * 1e3,
                s.n_tasks as f64 / device.as_secs_f64(),
                us
            );
            if k + 1 == batches.len() {
                per_task.push((s.name, us));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    floors(rounds, &per_task);
}

/// The ready-batch settings compared (`PTO_BENCH_BATCHES`, comma-separated values of
/// `PTO_READY_BATCH`): by default pushing at once, and the default. The last one's figures
/// are the ones set against the floors.
fn batches() -> Vec<String> {
    std::env::var("PTO_BENCH_BATCHES")
        .unwrap_or_else(|_| "1,16".to_owned())
        .split(',')
        .map(|b| b.trim().to_owned())
        .filter(|b| !b.is_empty())
        .collect()
}

/// One run of `s`: (wall, device time).
fn run_once(program: &Program, config: &ChipConfig, s: &Scenario) -> (Duration, Duration) {
    let mut x = vec![0u8; 64 * 4];
    let mut args = [OrchArg::Tensor(HostTensor {
        direction: ArgDirection::InOut,
        dtype: 0,
        shape: vec![64],
        data: &mut x,
    })];
    let report = run(program, &mut args, config).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.n_tasks, s.n_tasks, "{}", s.name);
    (report.wall, report.device_time)
}

/// Items each floor measurement moves.
const FLOOR_ITEMS: u64 = 1_000_000;

/// Spins, yielding the CPU every 64 calls (as the runtime's idle workers do: on a shared
/// machine a thread that only spins can hold the core the other side needs).
fn backoff(spins: &mut u32) {
    *spins += 1;
    if spins.is_multiple_of(64) {
        std::thread::yield_now();
    } else {
        std::hint::spin_loop();
    }
}

/// ns per item handed from one thread to another through a bounded spin queue.
fn spin_handoff() -> f64 {
    let q = ArrayQueue::<u64>::new(1024);
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            let (mut got, mut spins) = (0, 0);
            while got < FLOOR_ITEMS {
                match q.pop() {
                    Some(_) => got += 1,
                    None => backoff(&mut spins),
                }
            }
        });
        let mut spins = 0;
        for i in 0..FLOOR_ITEMS {
            let mut v = i;
            while let Err(back) = q.push(v) {
                v = back;
                backoff(&mut spins);
            }
        }
    });
    start.elapsed().as_nanos() as f64 / FLOOR_ITEMS as f64
}

/// ns per item handed from one thread to another through `std::sync::mpsc`.
fn mpsc_handoff() -> f64 {
    let (tx, rx) = std::sync::mpsc::channel::<u64>();
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(move || while rx.recv().is_ok() {});
        for i in 0..FLOOR_ITEMS {
            let _ = tx.send(i);
        }
        drop(tx);
    });
    start.elapsed().as_nanos() as f64 / FLOOR_ITEMS as f64
}

/// One-way latency (ns) of two threads taking turns on one atomic counter.
fn ping_pong() -> f64 {
    let turns = FLOOR_ITEMS / 4;
    let turn = AtomicU64::new(0);
    let wait_for = |v: u64| {
        let mut spins = 0u32;
        while turn.load(Ordering::Acquire) != v {
            backoff(&mut spins);
        }
    };
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..turns {
                wait_for(2 * i + 1);
                turn.store(2 * i + 2, Ordering::Release);
            }
        });
        for i in 0..turns {
            turn.store(2 * i + 1, Ordering::Release);
            wait_for(2 * i + 2);
        }
    });
    start.elapsed().as_nanos() as f64 / (2 * turns) as f64
}

/// The floors (best of `rounds`) and the runtime's costs over them.
fn floors(rounds: usize, per_task: &[(&str, f64)]) {
    let best = |f: fn() -> f64| (0..rounds.max(1)).map(|_| f()).fold(f64::MAX, f64::min);
    let (spin, mpsc, pong) = (best(spin_handoff), best(mpsc_handoff), best(ping_pong));
    println!("floor: hand-off {spin:.1} ns (spin queue), {mpsc:.1} ns (mpsc); ping-pong {pong:.1} ns one way");
    let us = |name: &str| per_task.iter().find(|(n, _)| *n == name).map(|&(_, v)| v);
    if let Some(t) = us("independent") {
        println!("independent task / spin hand-off: {:.1}x", t * 1e3 / spin);
    }
    if let Some(h) = us("chain") {
        println!("chain hop / ping-pong: {:.1}x", h * 1e3 / pong);
    }
}
