//! Diagnostics at scale: what each DFX switch costs on runs of 100k and 1M tasks.
//!
//! `cargo bench -p pto-runner --bench dfx_scale`. Three workloads with empty kernels are
//! generated as build directories and compiled once:
//!
//! - `independent`: scopes of 1000 tasks without arguments;
//! - `chain`: every task INOUT on one small tensor (64 f32), so each is a dependent hop;
//! - `paged_attn`: the paged-attention shape — per batch one scope with `alloc_tensors`
//!   accumulators, per KV block `qk (AIC) -> softmax (AIV) -> pv (AIC) -> update (AIV)`
//!   over runtime-allocated intermediates, the updates chained through INOUT accumulators.
//!
//! Each is run bare, with each switch alone (swimlane level 4, dep_gen, PMU, args dump
//! level 2, scope stats) and with all five, in process, interleaved round by round (each
//! round in another pseudo-random order, every run after a `sync`, so that no run always
//! pays for freeing the previous one's memory and files) so that a noisy moment of the
//! shared machine hits every configuration alike; the figure is the best round. "device" is the runtime's device window (first submit to last completion),
//! "e2e" the whole execution as a caller sees it (binding, threads, run, copy-back and
//! writing every artifact through its temp-file-and-rename path), "run" the runtime's own
//! part of it (its `wall`: threads, the run with its recording, copy-back; no file written
//! yet). The ratios are against the bare run of the same round set ("run×" against the bare
//! run's e2e: what is left of the whole-process budget for the files); "B/task" is what
//! `dfx_outputs/` holds afterwards.
//!
//! Environment: `PTO_BENCH_TASKS` (comma-separated sizes, default `100000,1000000`),
//! `PTO_BENCH_ROUNDS` (default 3), `PTO_BENCH_WORKLOADS` (a comma-separated subset),
//! `PTO_BENCH_CONFIGS` (a subset of `bare,swimlane4,swimlane4c,dep_gen,dep_genc,pmu,dump2,
//! scope_stats,all,allc`; the `…c` rows write the swimlane records and the dep_gen log in
//! the compact form, `--dfx-format compact`),
//! `PTO_BENCH_DIR` (where the build directories go; default the system temp dir),
//! `PTO_BENCH_WORKERS` (the pool's workers; default: a run's own default pool).
//! Results go to docs/PERFORMANCE.md.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pto_build_output::{write_npy, DType, NpyArray};
use pto_runner::config::DfxFormat;
use pto_runner::{load_for, DfxOptions, RunConfig};

const NOOP: &str =
    "#include \"tensor.h\"\nextern \"C\" void kernel_entry(int64_t* args) { (void)args; }\n";

struct Workload {
    name: &'static str,
    /// The orchestration body for about `n` tasks; `x` is the 64-element INOUT tensor.
    body: fn(u64) -> String,
    /// Kernels: (name, core type).
    kernels: &'static [(&'static str, &'static str)],
    /// Tasks the body submits for `n`.
    tasks: fn(u64) -> u64,
}

fn independent(n: u64) -> String {
    format!(
        r#"    for (int s = 0; s < {scopes}; ++s) {{
        PTO2_SCOPE() {{
            for (int i = 0; i < 1000; ++i) {{ CoreTaskArgs p; rt_submit_aiv_task(0, p); }}
        }}
    }}"#,
        scopes = n / 1000
    )
}

fn chain(n: u64) -> String {
    format!(
        r#"    for (int s = 0; s < {scopes}; ++s) {{
        PTO2_SCOPE() {{
            for (int i = 0; i < 1000; ++i) {{ CoreTaskArgs p; p.add_inout(x); rt_submit_aiv_task(0, p); }}
        }}
    }}"#,
        scopes = n / 1000
    )
}

/// 100 blocks of 4 tasks per batch, plus the batch's `alloc_tensors`.
fn paged_attn(n: u64) -> String {
    format!(
        r#"    uint32_t sq[2] = {{16, 16}};
    uint32_t vec[1] = {{16}};
    TensorCreateInfo oi_ci(sq, 2, DataType::FLOAT32), li_ci(vec, 1, DataType::FLOAT32), mi_ci(vec, 1, DataType::FLOAT32);
    TensorCreateInfo sij_ci(sq, 2, DataType::FLOAT32), pij_ci(sq, 2, DataType::FLOAT32), oij_ci(sq, 2, DataType::FLOAT32);
    TensorCreateInfo mij_ci(vec, 1, DataType::FLOAT32), lij_ci(vec, 1, DataType::FLOAT32);
    for (int b = 0; b < {batches}; ++b) {{
        PTO2_SCOPE() {{
            TaskOutputTensors acc = alloc_tensors(oi_ci, li_ci, mi_ci);
            const ChipTensor& oi = acc.get_ref(0);
            const ChipTensor& li = acc.get_ref(1);
            const ChipTensor& mi = acc.get_ref(2);
            for (int j = 0; j < 100; ++j) {{
                CoreTaskArgs t0; t0.add_input(x); t0.add_input(x); t0.add_output(sij_ci);
                TaskOutputTensors o0 = rt_submit_aic_task(0, t0);
                CoreTaskArgs t1; t1.add_input(o0.get_ref(0)); t1.add_output(pij_ci); t1.add_output(mij_ci); t1.add_output(lij_ci);
                t1.add_scalar(1.0f); t1.add_scalar((int64_t)j);
                TaskOutputTensors o1 = rt_submit_aiv_task(1, t1);
                CoreTaskArgs t2; t2.add_input(o1.get_ref(0)); t2.add_input(x); t2.add_output(oij_ci);
                TaskOutputTensors o2 = rt_submit_aic_task(2, t2);
                CoreTaskArgs t3; t3.add_input(o1.get_ref(1)); t3.add_input(o1.get_ref(2)); t3.add_input(o2.get_ref(0));
                t3.add_inout(oi); t3.add_inout(li); t3.add_inout(mi);
                rt_submit_aiv_task(3, t3);
            }}
        }}
    }}"#,
        batches = n / 400
    )
}

const WORKLOADS: &[Workload] = &[
    Workload {
        name: "independent",
        body: independent,
        kernels: &[("noop", "aiv")],
        tasks: |n| n / 1000 * 1000,
    },
    Workload {
        name: "chain",
        body: chain,
        kernels: &[("noop", "aiv")],
        tasks: |n| n / 1000 * 1000,
    },
    Workload {
        name: "paged_attn",
        body: paged_attn,
        kernels: &[
            ("qk_matmul", "aic"),
            ("softmax_prepare", "aiv"),
            ("pv_matmul", "aic"),
            ("online_update", "aiv"),
        ],
        tasks: |n| n / 400 * 401,
    },
];

/// Writes a single-chip build directory for `w` at size `n`.
fn write_build(root: &Path, w: &Workload, n: u64) -> PathBuf {
    let dir = root.join(format!("{}_{n}", w.name));
    let write = |rel: &str, text: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(&dir)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    };
    write(
        "orchestration/orch.cpp",
        &format!(
            r#"#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {{
    return PTO2OrchestrationConfig{{.expected_arg_count = 1}};
}}
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {{
    ChipTensor x = orch_args.tensor(0).ref();
    (void)x;
{}
}}
"#,
            (w.body)(n)
        ),
    );
    let mut kernels = String::new();
    for (id, (name, core)) in w.kernels.iter().enumerate() {
        write(&format!("kernels/{core}/{name}.cpp"), NOOP);
        kernels.push_str(&format!(
            "\t{{\"func_id\": {id}, \"name\": \"{name}\", \"source\": str(_ROOT_DIR / \"kernels\" / \"{core}\" / \"{name}.cpp\"), \"core_type\": \"{core}\"}},\n"
        ));
    }
    write(
        "kernel_config.py",
        &format!(
            r#"from pathlib import Path

from simpler.task_interface import ArgDirection as _D

_ROOT_DIR = Path(__file__).parent

RUNTIME_CONFIG = {{
	"runtime": "tensormap_and_ringbuffer",
	"aicpu_thread_num": 0,
}}

ORCHESTRATION = {{
	"source": str(_ROOT_DIR / "orchestration" / "orch.cpp"),
	"function_name": "aicpu_orchestration_entry",
	"signature": [_D.INOUT],
}}

KERNELS = [
{kernels}]
"#
        ),
    );
    write(
        "compiled_meta.json",
        r#"{
  "schema": 1,
  "params": [{"name": "x", "direction": "InOut", "shape": [64], "dtype": "fp32"}],
  "num_return_types": 0,
  "platform": "a2a3sim",
  "backend_type": "Ascend910B"
}
"#,
    );
    let data: Vec<u8> = (0..64).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let arr = NpyArray::new(DType::Float32, vec![64], data).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.join("data/in")).unwrap_or_else(|e| panic!("{e}"));
    write_npy(&dir.join("data/in/x.npy"), &arr).unwrap_or_else(|e| panic!("{e}"));
    dir
}

/// Each configuration: name, switches, and how the two large files are written (`…c`:
/// the compact form, beside the JSON rows).
fn configs() -> Vec<(&'static str, DfxOptions, DfxFormat)> {
    let one = |f: fn(&mut DfxOptions)| {
        let mut d = DfxOptions::default();
        f(&mut d);
        d
    };
    let all = DfxOptions {
        chip_swimlane: 4,
        dump_args: 2,
        pmu: 2,
        dep_gen: true,
        scope_stats: true,
        predicted_timing: false,
    };
    let (json, compact) = (DfxFormat::Json, DfxFormat::Compact);
    vec![
        ("bare", DfxOptions::default(), json),
        ("swimlane4", one(|d| d.chip_swimlane = 4), json),
        ("swimlane4c", one(|d| d.chip_swimlane = 4), compact),
        ("dep_gen", one(|d| d.dep_gen = true), json),
        ("dep_genc", one(|d| d.dep_gen = true), compact),
        ("pmu", one(|d| d.pmu = 2), json),
        ("dump2", one(|d| d.dump_args = 2), json),
        ("scope_stats", one(|d| d.scope_stats = true), json),
        ("all", all, json),
        ("allc", all, compact),
    ]
}

fn dir_bytes(p: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(p) else {
        return 0;
    };
    rd.flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                dir_bytes(&p)
            } else {
                e.metadata().map(|m| m.len()).unwrap_or(0)
            }
        })
        .sum()
}

/// The configurations' order in `round`: a fixed pseudo-random permutation per round, so
/// that no configuration always runs right after the same one (a run after the one that
/// wrote the most pays for freeing its memory and files).
fn round_order(n: usize, round: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ (round as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    for i in (1..n).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    order
}

fn env_list(name: &str) -> Option<Vec<String>> {
    std::env::var(name)
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
}

#[derive(Clone, Copy)]
struct Best {
    device: Duration,
    e2e: Duration,
    run: Duration,
    bytes: u64,
}

fn main() {
    let base = std::env::var_os("PTO_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let root = base.join(format!("pto-dfx-scale-{}", std::process::id()));
    let sizes: Vec<u64> = env_list("PTO_BENCH_TASKS")
        .map(|v| v.iter().filter_map(|s| s.parse().ok()).collect())
        .unwrap_or_else(|| vec![100_000, 1_000_000]);
    let rounds: usize = std::env::var("PTO_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let only_w = env_list("PTO_BENCH_WORKLOADS");
    let workers: Option<usize> = std::env::var("PTO_BENCH_WORKERS")
        .ok()
        .and_then(|v| v.parse().ok());
    let only_c = env_list("PTO_BENCH_CONFIGS");
    let configs: Vec<_> = configs()
        .into_iter()
        .filter(|(n, _, _)| {
            *n == "bare" || only_c.as_ref().is_none_or(|o| o.iter().any(|x| x == n))
        })
        .collect();
    println!(
        "{:<12} {:>8} {:<12} {:>11} {:>11} {:>8} {:>8} {:>9} {:>8} {:>6}",
        "workload",
        "tasks",
        "config",
        "device ms",
        "e2e ms",
        "device×",
        "e2e×",
        "B/task",
        "run ms",
        "run×"
    );
    for w in WORKLOADS {
        if only_w
            .as_ref()
            .is_some_and(|o| !o.iter().any(|x| x == w.name))
        {
            continue;
        }
        for &n in &sizes {
            let dir = write_build(&root, w, n);
            let build = load_for(&dir, None).unwrap_or_else(|e| panic!("{e}"));
            let mut best: Vec<Option<Best>> = vec![None; configs.len()];
            let mut reported = 0;
            for round in 0..rounds + 1 {
                for k in round_order(configs.len(), round) {
                    let (_, dfx, format) = &configs[k];
                    let mut config = RunConfig::new(None).unwrap_or_else(|e| panic!("{e}"));
                    config.dfx = *dfx;
                    config.dfx_format = *format;
                    config.in_process = true;
                    config.n_workers = workers;
                    let _ = std::fs::remove_dir_all(dir.join("dfx_outputs"));
                    // The previous run's files must not be written back during this one.
                    // SAFETY: sync(2) has no preconditions.
                    unsafe { libc::sync() };
                    let mut params = pto_runner::inputs::bind_inputs(&dir, &build.meta)
                        .unwrap_or_else(|e| panic!("{e}"));
                    let t = Instant::now();
                    let outcome = build
                        .execute_with(&mut params, &config, &mut |_| {})
                        .unwrap_or_else(|e| panic!("{} {n}: {e}", w.name));
                    let e2e = t.elapsed();
                    reported = outcome.report.n_tasks;
                    if round == 0 {
                        continue; // warm-up: page cache, task slots, compiled binaries
                    }
                    let b = Best {
                        device: outcome.report.device_time,
                        e2e,
                        run: outcome.report.wall,
                        bytes: dir_bytes(&dir.join("dfx_outputs")),
                    };
                    let slot = &mut best[k];
                    *slot = Some(match *slot {
                        None => b,
                        Some(o) => Best {
                            device: o.device.min(b.device),
                            e2e: o.e2e.min(b.e2e),
                            run: o.run.min(b.run),
                            bytes: b.bytes,
                        },
                    });
                }
            }
            assert_eq!(reported, (w.tasks)(n), "{} {n}", w.name);
            let Some(bare) = best[0] else { continue };
            for ((name, _, _), b) in configs.iter().zip(&best) {
                let Some(b) = b else { continue };
                println!(
                    "{:<12} {:>8} {:<12} {:>11.2} {:>11.2} {:>8.2} {:>8.2} {:>9.0} {:>8.2} {:>6.2}",
                    w.name,
                    reported,
                    name,
                    b.device.as_secs_f64() * 1e3,
                    b.e2e.as_secs_f64() * 1e3,
                    b.device.as_secs_f64() / bare.device.as_secs_f64(),
                    b.e2e.as_secs_f64() / bare.e2e.as_secs_f64(),
                    b.bytes as f64 / reported as f64,
                    b.run.as_secs_f64() * 1e3,
                    b.run.as_secs_f64() / bare.e2e.as_secs_f64(),
                );
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}
