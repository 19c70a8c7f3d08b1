//! Overhead of the diagnostics on real examples, and the args-dump throughput.
//!
//! `cargo bench -p pto-runner --bench dfx_overhead`. For bgemm and paged_attention it
//! replays the embedded example with no diagnostic, with swimlane level 4 and with dep_gen,
//! and reports the median device time over many rounds. Then it measures the full args dump
//! on a program whose tensors are large enough to time (3 × 64 MiB per run).
//! `PTO_BENCH_ROUNDS` sets the examples' rounds (100), `PTO_BENCH_DUMP_ROUNDS` the dump's
//! (5), `PTO_BENCH_DUMP_ONLY=1` skips the examples and `PTO_BENCH_KEEP=1` keeps the build
//! directories (to profile the CLI on them).
//! Results go to docs/PERFORMANCE.md.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pto_build_output::{write_npy, DType, NpyArray};
use pto_runner::demo::write_examples;
use pto_runner::{replay, DfxOptions, ReplayOptions, RunConfig};

/// The lower quartile: robust against the scheduling noise of a shared 2-core machine,
/// while still reflecting the typical run (the minimum alone flatters).
fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 4]
}

/// Lower-quartile device time, run wall time and whole replay time (artifacts included).
fn measure3(dir: &Path, dfx: DfxOptions, rounds: usize) -> (Duration, Duration, Duration) {
    let mut config = RunConfig::new(None).unwrap_or_else(|e| panic!("{e}"));
    config.dfx = dfx;
    let options = ReplayOptions {
        validate: false,
        recompile: true,
        rebuild_from_pto: true,
    };
    let mut device = Vec::new();
    let mut wall = Vec::new();
    let mut whole = Vec::new();
    for _ in 0..rounds {
        let t = std::time::Instant::now();
        let o = replay(dir, &config, &options).unwrap_or_else(|e| panic!("{e}"));
        whole.push(t.elapsed());
        device.push(o.report.device_time);
        wall.push(o.report.wall);
    }
    (median(device), median(wall), median(whole))
}

fn measure(dir: &Path, dfx: DfxOptions, rounds: usize) -> (Duration, Duration) {
    let (device, wall, _) = measure3(dir, dfx, rounds);
    (device, wall)
}

fn pct(base: Duration, x: Duration) -> f64 {
    (x.as_secs_f64() / base.as_secs_f64() - 1.0) * 100.0
}

fn main() {
    // PTO_BENCH_DIR puts the build directories (and so args.bin) on another file system.
    let base = std::env::var_os("PTO_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let root = base.join(format!("pto-dfx-bench-{}", std::process::id()));
    let dirs = write_examples(&root).unwrap_or_else(|e| panic!("{e}"));
    let rounds: usize = std::env::var("PTO_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    println!(
        "{:<20} {:>14} {:>14} {:>10} {:>14} {:>10}",
        "example", "no DFX (ms)", "swimlane 4", "overhead", "dep_gen", "overhead"
    );
    // L3 examples run through Python, not this single-chip path.
    let single_chip = |d: &&PathBuf| !d.join("distributed_meta.json").exists();
    let dump_only = std::env::var("PTO_BENCH_DUMP_ONLY").is_ok_and(|v| v == "1");
    for dir in dirs
        .iter()
        .filter(|d| !dump_only && !d.ends_with("vector_add") && single_chip(d))
    {
        let _ = measure(dir, DfxOptions::default(), 3); // warm the compile cache and pages
        let (base, _) = measure(dir, DfxOptions::default(), rounds);
        let (swim, _) = measure(
            dir,
            DfxOptions {
                chip_swimlane: 4,
                ..Default::default()
            },
            rounds,
        );
        let (deps, _) = measure(
            dir,
            DfxOptions {
                dep_gen: true,
                ..Default::default()
            },
            rounds,
        );
        println!(
            "{:<20} {:>14.3} {:>14.3} {:>9.1}% {:>14.3} {:>9.1}%",
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            base.as_secs_f64() * 1e3,
            swim.as_secs_f64() * 1e3,
            pct(base, swim),
            deps.as_secs_f64() * 1e3,
            pct(base, deps)
        );
    }

    // Args-dump throughput: a copy kernel over 16 Mi f32 elements (64 MiB per tensor).
    let dir = big_copy(&root);
    let dump_rounds: usize = std::env::var("PTO_BENCH_DUMP_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let _ = measure(&dir, DfxOptions::default(), 1);
    let (base_dev, base_wall, base_whole) = measure3(&dir, DfxOptions::default(), dump_rounds);
    let (dump_dev, dump_wall, dump_whole) = measure3(
        &dir,
        DfxOptions {
            dump_args: 2,
            ..Default::default()
        },
        dump_rounds,
    );
    let bytes = std::fs::metadata(dir.join("dfx_outputs/args_dump/args.bin"))
        .map(|m| m.len())
        .unwrap_or(0);
    // The capture happens inside the device window (inputs before dispatch, outputs after
    // completion), so the added device time is what the dump costs the run.
    let extra = dump_dev.saturating_sub(base_dev).as_secs_f64().max(1e-9);
    // End to end: everything the replay call does more with the dump on (the capture, the
    // manifest, syncing and renaming the files), as its caller waits for it.
    let extra_whole = dump_whole.saturating_sub(base_whole).as_secs_f64();
    println!(
        "args dump: {:.1} MiB per run; device {:.1} ms without / {:.1} ms with => {:.2} GB/s sustained; whole run (binding, copy-back) {:.1} / {:.1} ms; whole replay (artifacts written and synced) {:.1} / {:.1} ms => {:.2} GB/s end to end, {:.2} GB/s of the whole replay with the dump",
        bytes as f64 / (1 << 20) as f64,
        base_dev.as_secs_f64() * 1e3,
        dump_dev.as_secs_f64() * 1e3,
        bytes as f64 / extra / 1e9,
        base_wall.as_secs_f64() * 1e3,
        dump_wall.as_secs_f64() * 1e3,
        base_whole.as_secs_f64() * 1e3,
        dump_whole.as_secs_f64() * 1e3,
        // A difference lost in the noise (with ≤ without) is shown as infinite.
        if extra_whole > 0.0 {
            bytes as f64 / extra_whole / 1e9
        } else {
            f64::INFINITY
        },
        bytes as f64 / dump_whole.as_secs_f64() / 1e9,
    );
    publish_over_previous(&root, bytes.max(1 << 20), dump_rounds);
    if std::env::var("PTO_BENCH_KEEP").is_ok_and(|v| v == "1") {
        // For profiling `pto replay <root>/big_copy --no-recompile --dump-args 2`.
        println!("kept {}", root.display());
    } else {
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// The publication alone: a staged `args.bin` of `bytes` renamed over the previous run's
/// (what replacing the file costs the run), lower quartile of `rounds`.
fn publish_over_previous(root: &Path, bytes: u64, rounds: usize) {
    let out = root.join("publish/dfx_outputs");
    let payload = vec![7u8; bytes as usize];
    let mut times = Vec::new();
    for round in 0..=rounds {
        let stage = pto_runner::dfx_publish::staging_dir(&out).unwrap_or_else(|e| panic!("{e}"));
        let bin = stage.join("args_dump/args.bin");
        std::fs::create_dir_all(stage.join("args_dump")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&bin, &payload).unwrap_or_else(|e| panic!("{e}"));
        let t = std::time::Instant::now();
        pto_runner::dfx_publish::publish(&stage, &out, &mut [], "bench")
            .unwrap_or_else(|e| panic!("{e}"));
        if round > 0 {
            // The first publication replaces nothing.
            times.push(t.elapsed());
        }
    }
    println!(
        "publish of a {:.1} MiB args.bin over the previous one: {:.2} ms",
        bytes as f64 / (1 << 20) as f64,
        median(times).as_secs_f64() * 1e3
    );
}

/// A single-task build directory copying a 64 MiB tensor (c = a + 0 * b).
fn big_copy(root: &Path) -> PathBuf {
    let dir = root.join("big_copy");
    let examples = root.join("vector_add");
    // Reuse vector_add's files for the layout, then replace sources, sidecar and data.
    copy_dir(&examples, &dir);
    let n: usize = 16 << 20;
    std::fs::write(
        dir.join("orchestration/vector_add.cpp"),
        r#"#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 3};
}
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
    ChipTensor a = orch_args.tensor(0).ref(), b = orch_args.tensor(1).ref(), c = orch_args.tensor(2).ref();
    PTO2_SCOPE() { CoreTaskArgs p; p.add_input(a, b); p.add_output(c); rt_submit_aiv_task(0, p); }
}
"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        dir.join("kernels/aiv/kernel_add.cpp"),
        "#include <string.h>\n#include \"tensor.h\"\n// --- ptoas-generated code ---\n// --- Kernel entry point ---\nextern \"C\" void kernel_entry(int64_t* args) { ChipTensor* a = kernel_tensor(args, 0); ChipTensor* c = kernel_tensor(args, 2); memcpy(c->data<float>(), a->data<float>(), c->numel() * 4); }\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let meta =
        std::fs::read_to_string(dir.join("compiled_meta.json")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        dir.join("compiled_meta.json"),
        meta.replace("16384", &n.to_string()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let data: Vec<u8> = (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let arr = NpyArray::new(DType::Float32, vec![n], data).unwrap_or_else(|e| panic!("{e}"));
    write_npy(&dir.join("data/in/a.npy"), &arr).unwrap_or_else(|e| panic!("{e}"));
    write_npy(&dir.join("data/in/b.npy"), &arr).unwrap_or_else(|e| panic!("{e}"));
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{e}"));
    for entry in std::fs::read_dir(from)
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
    {
        let p = entry.path();
        let dest = to.join(entry.file_name());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}
