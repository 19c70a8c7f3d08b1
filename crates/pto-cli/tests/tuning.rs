//! The tuning loop in predicted time (docs/TIMING.md): edit a kernel of a bundled example,
//! replay with `--timing predicted`, and the predicted makespan moves the way the edit should
//! move it on the chip, by an amount the edit can explain.
//!
//! * `examples/bgemm`, its kernels ported to PTO-ISA (`tests/tuning/`; the bundled ones are
//!   plain `ChipTensor` kernels the model marks "not modelled"): double buffering the add
//!   kernel's chunk loop helps, an extra `pipe_barrier(PIPE_ALL)` in that loop hurts.
//! * `examples/paged_attn_bf16` as bundled: an extra `pipe_barrier(PIPE_ALL)` between the two
//!   K halves of `pv_matmul` (whose second TEXTRACT overlaps the first TMATMUL) hurts.
//!
//! And the diagnostics in predicted time: `pmu.csv`'s pipe columns, the swimlane's
//! `metadata.timing`, `pto bench --timing predicted`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::text;
use serde_json::Value;

/// `predicted_timing.json` of one run, reduced to what the tests compare.
struct Predicted {
    makespan: u64,
    doc: Value,
}

impl Predicted {
    /// The `kernels` entry of `func_id`.
    fn kernel(&self, func_id: i64) -> &Value {
        self.doc["kernels"]
            .as_array()
            .and_then(|ks| ks.iter().find(|k| k["func_id"].as_i64() == Some(func_id)))
            .unwrap_or_else(|| panic!("no kernel {func_id} in {}", self.doc))
    }

    /// The mean predicted cycles of one subtask of `func_id`.
    fn mean_cycles(&self, func_id: i64) -> u64 {
        let k = self.kernel(func_id);
        k["cycles"].as_u64().unwrap() / k["subtasks"].as_u64().unwrap()
    }

    /// The mean busy cycles of each pipe (by name) for one subtask of `func_id`.
    fn mean_busy(&self, func_id: i64) -> BTreeMap<String, u64> {
        let k = self.kernel(func_id);
        let n = k["subtasks"].as_u64().unwrap();
        k["busy_cycles_by_pipe"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(pipe, v)| (pipe.clone(), v.as_u64().unwrap() / n))
            .collect()
    }
}

/// Replays `dir` with `--timing predicted --validate` (the edit must keep the results right)
/// and reads its `predicted_timing.json`.
fn replay_predicted(dir: &Path) -> Predicted {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pto"));
    cmd.args(["replay", dir.to_str().unwrap(), "--validate", "--swimlane"])
        .args(["--timing", "predicted", "--no-rebuild-from-pto"])
        .env("NO_COLOR", "1");
    let o = cmd.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let path = dir.join("dfx_outputs/predicted_timing.json");
    let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(doc["timing"], "predicted", "{doc}");
    assert_eq!(doc["unmodelled_subtasks"], Value::Array(vec![]), "{doc}");
    Predicted {
        makespan: doc["makespan_cycles"].as_u64().unwrap(),
        doc,
    }
}

/// Replaces the one occurrence of `from` in `file` with `to` (the "edit").
fn edit(file: &Path, from: &str, to: &str) {
    let s = std::fs::read_to_string(file).unwrap();
    assert_eq!(s.matches(from).count(), 1, "{from:?} in {}", file.display());
    std::fs::write(file, s.replacen(from, to, 1)).unwrap();
}

fn tuning_source(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tuning")
        .join(name)
}

/// A copy of `examples/bgemm` with its kernels ported to PTO-ISA.
fn bgemm_over_pto_isa(as_name: &str) -> PathBuf {
    let dir = common::example("tuning", "bgemm", as_name);
    for (src, dst) in [
        ("kernel_matmul.cpp", "kernels/aic/kernel_matmul.cpp"),
        ("kernel_add.cpp", "kernels/aiv/kernel_add.cpp"),
    ] {
        std::fs::copy(tuning_source(src), dir.join(dst)).unwrap();
    }
    dir
}

fn pto(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pto"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn bgemm_double_buffering_helps_and_an_extra_barrier_hurts() {
    let dir = bgemm_over_pto_isa("bgemm");
    let add = dir.join("kernels/aiv/kernel_add.cpp");
    let single = replay_predicted(&dir);

    edit(&add, "constexpr int NBUF = 1;", "constexpr int NBUF = 2;");
    let double = replay_predicted(&dir);
    // The add kernel: chunk i+1's load now overlaps chunk i's add and store. It cannot beat
    // its busiest pipe (MTE2) and should save at least a fifth of the serial time.
    let (s, d) = (single.mean_cycles(1), double.mean_cycles(1));
    let busiest = *double.mean_busy(1).values().max().unwrap();
    assert!(
        d >= busiest && d * 5 <= s * 4,
        "add kernel {s} -> {d} cycles (busiest pipe {busiest})"
    );
    // The makespan: each output tile chains its 4 adds, so it gains at most 4 adds' savings.
    assert!(
        double.makespan < single.makespan && single.makespan - double.makespan <= 4 * (s - d),
        "makespan {} -> {} (add saves {} cycles)",
        single.makespan,
        double.makespan,
        s - d
    );

    edit(
        &add,
        "        set_flag(PIPE_MTE3, PIPE_MTE2, ev);\n",
        "        set_flag(PIPE_MTE3, PIPE_MTE2, ev);\n        pipe_barrier(PIPE_ALL);\n",
    );
    let barrier = replay_predicted(&dir);
    // The barrier drains every pipe each chunk: the kernel is serial again (at least the sum
    // of its pipes' busy cycles) and the makespan loses the gain.
    let b = barrier.mean_cycles(1);
    let serial: u64 = barrier.mean_busy(1).values().sum();
    assert!(
        b > d && b >= serial,
        "add kernel {d} -> {b} cycles (serial {serial})"
    );
    assert!(
        barrier.makespan > double.makespan && barrier.makespan - double.makespan <= 4 * (b - d),
        "makespan {} -> {}",
        double.makespan,
        barrier.makespan
    );
}

#[test]
fn paged_attention_extra_barrier_hurts() {
    let dir = common::example("tuning", "paged_attn_bf16", "paged_attn");
    let base = replay_predicted(&dir);
    // pv_matmul (func 2) splits K in two halves in separate L0 buffers: the second TEXTRACTs
    // overlap the first TMATMUL. A barrier after that TMATMUL makes them wait for it.
    edit(
        &dir.join("kernels/aic/pv_matmul.cpp"),
        "  TMATMUL(v27, v23, v25);\n",
        "  TMATMUL(v27, v23, v25);\n  pipe_barrier(PIPE_ALL);\n",
    );
    let hurt = replay_predicted(&dir);
    let (before, after) = (base.mean_cycles(2), hurt.mean_cycles(2));
    // At most the first TMATMUL (half the cube's work) plus a few issue cycles is lost.
    let cube_half = hurt.mean_busy(2)["CUBE"] / 2;
    assert!(
        after > before && after - before <= cube_half + 4,
        "pv_matmul {before} -> {after} cycles (first TMATMUL {cube_half})"
    );
    let subtasks = hurt.kernel(2)["subtasks"].as_u64().unwrap();
    assert!(
        hurt.makespan > base.makespan
            && hurt.makespan - base.makespan <= subtasks * (after - before),
        "makespan {} -> {}",
        base.makespan,
        hurt.makespan
    );
    // The other kernels did not change.
    for f in [0, 1, 3] {
        assert_eq!(base.mean_cycles(f), hurt.mean_cycles(f), "kernel {f}");
    }
}

#[test]
fn pmu_swimlane_and_bench_say_predicted_time() {
    let dir = bgemm_over_pto_isa("diagnostics");
    let d = dir.to_str().unwrap();
    let o = pto(&["replay", d, "--swimlane", "--pmu", "--timing", "predicted"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = dir.join("dfx_outputs");
    let predicted: Value =
        serde_json::from_slice(&std::fs::read(out.join("predicted_timing.json")).unwrap()).unwrap();
    let swimlane: Value =
        serde_json::from_slice(&std::fs::read(out.join("chip_swimlane_records.json")).unwrap())
            .unwrap();
    assert_eq!(swimlane["metadata"]["timing"], "predicted");

    // pmu.csv: per subtask, the model's total and per-pipe busy cycles; summed per kernel
    // they are predicted_timing.json's.
    let csv = std::fs::read_to_string(out.join("pmu.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let mut sums: BTreeMap<(String, &str), u64> = BTreeMap::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        for (column, key) in [
            ("pmu_total_cycles", "cycles"),
            ("mte2_busy_cycles", "MTE2"),
            ("cube_busy_cycles", "CUBE"),
            ("vec_busy_cycles", "VEC"),
            ("mte3_busy_cycles", "MTE3"),
        ] {
            *sums
                .entry((f[col("func_id")].to_string(), key))
                .or_default() += f[col(column)].parse::<u64>().unwrap();
        }
    }
    for k in predicted["kernels"].as_array().unwrap() {
        let func = k["func_id"].to_string();
        assert_eq!(
            sums[&(func.clone(), "cycles")],
            k["cycles"].as_u64().unwrap()
        );
        for pipe in ["MTE2", "CUBE", "VEC", "MTE3"] {
            let want = k["busy_cycles_by_pipe"][pipe].as_u64().unwrap();
            assert_eq!(sums[&(func.clone(), pipe)], want, "kernel {func} {pipe}");
        }
    }
    assert!(sums[&("0".to_string(), "CUBE")] > 0 && sums[&("1".to_string(), "VEC")] > 0);

    // bench: the same makespan, next to both host times.
    let o = pto(&[
        "bench",
        d,
        "--rounds",
        "2",
        "--warmup",
        "0",
        "--timing",
        "predicted",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let bench: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        bench["predicted"]["makespan_cycles"],
        predicted["makespan_cycles"]
    );
    assert_eq!(bench["bare"]["host_wall_us"]["n"], 2, "{bench}");
    assert!(
        bench["host_median_ratio"].as_f64().unwrap() > 0.0,
        "{bench}"
    );
    let o = pto(&[
        "bench",
        d,
        "--rounds",
        "1",
        "--warmup",
        "0",
        "--timing",
        "predicted",
    ]);
    let t = text(&o);
    let cycles = predicted["makespan_cycles"].as_u64().unwrap();
    assert!(
        t.contains(&format!("predicted device time: {cycles} cycles = "))
            && t.contains("at 1.85 GHz"),
        "{t}"
    );

    // Host time keeps Simpler's layout: no key (its absence means host time).
    let o = pto(&["replay", d, "--swimlane", "--timing", "host"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let swimlane: Value =
        serde_json::from_slice(&std::fs::read(out.join("chip_swimlane_records.json")).unwrap())
            .unwrap();
    assert_eq!(swimlane["metadata"].get("timing"), None, "{swimlane}");
}

/// Perfetto in predicted time: `pto swimlane-converter` on a `--timing predicted` swimlane
/// draws each core's pipes as tracks (`Pipe View (predicted)`), every pipe slice inside its
/// task's Worker View bar on the same core; `pto critical-path` reports predicted cycles.
#[test]
fn perfetto_shows_each_cores_pipes_and_critical_path_says_predicted() {
    let dir = common::example("tuning", "paged_attn_bf16", "pipes");
    let d = dir.to_str().unwrap();
    let o = pto(&[
        "replay",
        d,
        "--swimlane",
        "--dep-gen",
        "--timing",
        "predicted",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = dir.join("dfx_outputs");
    let trace_path = out.join("merged_swimlane_test.json");
    let o = pto(&[
        "swimlane-converter",
        out.join("chip_swimlane_records.json").to_str().unwrap(),
        "-o",
        trace_path.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("Pipe View (predicted): "), "{t}");
    let trace: Value = serde_json::from_slice(&std::fs::read(&trace_path).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let pid_of = |name: &str| {
        events
            .iter()
            .find(|e| e["name"] == "process_name" && e["args"]["name"] == name)
            .and_then(|e| e["pid"].as_u64())
            .unwrap_or_else(|| panic!("no process {name}"))
    };
    let (worker, pipes) = (pid_of("Worker View"), pid_of("Pipe View (predicted)"));
    // Track names: `<core> <pipe>`; the cube and vector sides both show.
    let tracks: BTreeMap<u64, String> = events
        .iter()
        .filter(|e| e["name"] == "thread_name" && e["pid"] == pipes)
        .map(|e| {
            let name = e["args"]["name"].as_str().unwrap().to_string();
            (e["tid"].as_u64().unwrap(), name)
        })
        .collect();
    for want in [" MTE2", " MTE1", " CUBE", " FIXP", " VEC", " MTE3"] {
        assert!(
            tracks.values().any(|n| n.ends_with(want)),
            "{want}: {tracks:?}"
        );
    }
    assert!(tracks
        .values()
        .any(|n| n.starts_with("AIC_") && n.ends_with(" CUBE")));
    assert!(tracks
        .values()
        .any(|n| n.starts_with("AIV_") && n.ends_with(" VEC")));
    // Worker View bars by (task, core); core from the lane's tid (10000 + 10 * core).
    let us = |e: &Value, k: &str| e[k].as_f64().unwrap();
    let core_of = |tid: u64| (tid - 10_000) / 10;
    let mut bars: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    for e in events
        .iter()
        .filter(|e| e["pid"] == worker && e["ph"] == "X")
    {
        let (ts, dur) = (us(e, "ts"), us(e, "dur"));
        let key = (
            e["args"]["taskId"].as_u64().unwrap(),
            core_of(e["tid"].as_u64().unwrap()),
        );
        bars.entry(key).or_default().push((ts, ts + dur));
    }
    let slices: Vec<&Value> = events
        .iter()
        .filter(|e| e["pid"] == pipes && e["ph"] == "X")
        .collect();
    assert!(slices.len() > bars.len(), "{} slices", slices.len());
    let mut per_track: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
    for s in &slices {
        let tid = s["tid"].as_u64().unwrap();
        let track = &tracks[&tid];
        assert!(
            track.ends_with(&format!(" {}", s["name"].as_str().unwrap())),
            "{s} on {track}"
        );
        let (a, b) = (us(s, "ts"), us(s, "ts") + us(s, "dur"));
        let task = s["args"]["taskId"].as_u64().unwrap();
        let inside = bars[&(task, core_of(tid))]
            .iter()
            .any(|&(x, y)| a >= x - 1e-6 && b <= y + 1e-6);
        assert!(
            inside,
            "pipe slice {s} outside its task's bars {:?}",
            bars[&(task, core_of(tid))]
        );
        per_track.entry(tid).or_default().push((a, b));
    }
    // A pipe does one thing at a time.
    for (tid, mut v) in per_track {
        v.sort_by(|x, y| x.partial_cmp(y).unwrap());
        for w in v.windows(2) {
            assert!(w[0].1 <= w[1].0 + 1e-6, "{}: {w:?} overlap", tracks[&tid]);
        }
    }

    // critical-path: its durations are predicted, and it says so with cycles.
    let o = pto(&["critical-path", out.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("timing: predicted device time") && t.contains("at its 1.85 GHz core clock"),
        "{t}"
    );
    let predicted: Value =
        serde_json::from_slice(&std::fs::read(out.join("predicted_timing.json")).unwrap()).unwrap();
    let makespan = predicted["makespan_cycles"].as_u64().unwrap();
    let line = t.lines().find(|l| l.contains("**makespan**")).unwrap();
    let cycles: u64 = line
        .split(" = ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    // First start to last end: the whole predicted makespan but the first dispatch (1850
    // cycles), within the swimlane's 50 MHz tick (37 cycles) at each end.
    assert!(
        cycles <= makespan && makespan - cycles <= 1850 + 2 * 37,
        "critical path {cycles} vs predicted makespan {makespan}: {line}"
    );
}
