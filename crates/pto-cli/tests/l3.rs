//! L3 (several chips) from the command line, as a new user tries it: `pto replay DIR
//! --validate --swimlane --dep-gen --pmu 2` on each bundled L3 example (leaving
//! `dfx_outputs/rank{r}/d{k}/` as the seeds describe), every builtin collective on 2 and 4
//! ranks checked against `golden.py`, and a chip killed mid-run.
//!
//! The host orchestration of an L3 build is Python, so `pto replay` hands it to the pypto
//! package: these tests need an interpreter with pypto and torch installed — `PTO_PYTHON`,
//! else the checkout's `target/venv-py/bin/python` (what `.ci/run` builds before it runs the
//! Rust tests).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::text;

fn python() -> String {
    common::pypto_python()
}

fn pto(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pto"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("PTO_PYTHON", python())
        .output()
        .unwrap()
}

fn example(name: &str, as_name: &str) -> PathBuf {
    common::example("l3", name, as_name)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The `d{k}` directories of `rank` (sorted), other entries left out.
fn dispatch_dirs(rank: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(rank)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('d') && n[1..].bytes().all(|b| b.is_ascii_digit()))
        .collect();
    v.sort();
    v
}

/// Checks one dispatch directory: the program it ran, the L2 artifacts of `--swimlane
/// --dep-gen --pmu 2`, and the name map of that program's own kernels.
fn check_leaf(leaf: &Path, program: &str, kernel: &str) {
    assert_eq!(
        read(&leaf.join("dispatch_program.json")),
        format!("{{\"program\": \"{program}\"}}"),
        "{}",
        leaf.display()
    );
    let lanes = pto_dfx::swimlane::read(&leaf.join("chip_swimlane_records.json"))
        .unwrap()
        .value;
    assert!(!lanes.aicore_tasks.is_empty(), "{}", leaf.display());
    let deps = pto_dfx::deps::read(&leaf.join("deps.json")).unwrap().value;
    assert!(!deps.tasks.is_empty(), "{}", leaf.display());
    let pmu = pto_dfx::pmu::read(&leaf.join("pmu.csv")).unwrap().value;
    assert!(!pmu.rows.is_empty(), "{}", leaf.display());
    let names: serde_json::Value =
        serde_json::from_str(&read(&leaf.join("name_map.json"))).unwrap();
    assert_eq!(
        names,
        serde_json::json!({"level": 2, "orchestrator_name": null, "callable_id_to_name": {"0": kernel}}),
        "{}",
        leaf.display()
    );
}

/// Writes the collectives coverage build over `ranks` ranks into a fresh directory.
fn collectives(ranks: usize) -> PathBuf {
    let dir = common::scratch("l3", &format!("collectives_{ranks}")).join("l3_collectives");
    pto_examples::l3_collectives::coverage(ranks)
        .unwrap()
        .write(&dir)
        .unwrap();
    dir
}

/// An example, its ranks, and the (program, kernel) of each rank's dispatches in order.
type ExampleCase = (&'static str, usize, &'static [(&'static str, &'static str)]);

#[test]
fn the_l3_examples_replay_with_diagnostics_into_one_directory_per_dispatch() {
    let cases: [ExampleCase; 4] = [
        ("l3_hello_rank", 2, &[("per_rank", "add_rank")]),
        ("l3_allreduce", 2, &[("chip_orch", "window_allreduce")]),
        ("l3_allreduce_4", 4, &[("chip_orch", "window_allreduce")]),
        // The builtin allreduce between the two gets no directory and no number.
        (
            "l3_builtin_allreduce",
            2,
            &[("stage_in", "stage_in"), ("stage_out", "stage_out")],
        ),
    ];
    for (name, ranks, programs) in cases {
        let dir = example(name, name);
        // Stale dispatch directories (marked by the run that wrote them) go; anything else
        // under rank*/ stays.
        let stale = dir.join("dfx_outputs/rank0/d7");
        std::fs::create_dir_all(&stale).unwrap();
        std::fs::write(stale.join(".pto_dispatch"), "").unwrap();
        std::fs::create_dir_all(dir.join("dfx_outputs/rank0/keepme")).unwrap();
        let o = pto(&[
            "replay",
            dir.to_str().unwrap(),
            "--validate",
            "--swimlane",
            "--dep-gen",
            "--pmu",
            "2",
        ]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(0), "{name}: {t}");
        assert!(t.contains("Golden validation: PASSED"), "{name}: {t}");
        // The simulators keep the raw records (PyPTO's line).
        assert!(
            t.contains("Skipping L3 swimlane conversion on simulator"),
            "{name}: {t}"
        );
        assert!(!stale.exists(), "{name}: stale d7 kept");
        assert!(dir.join("dfx_outputs/rank0/keepme").is_dir(), "{name}");
        let dfx = dir.join("dfx_outputs");
        let mut rank_dirs: Vec<String> = std::fs::read_dir(&dfx)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        rank_dirs.sort();
        let expected: Vec<String> = (0..ranks).map(|r| format!("rank{r}")).collect();
        assert_eq!(rank_dirs, expected, "{name}");
        for r in 0..ranks {
            let rank = dfx.join(format!("rank{r}"));
            let want: Vec<String> = (0..programs.len()).map(|k| format!("d{k}")).collect();
            assert_eq!(dispatch_dirs(&rank), want, "{name} rank{r}");
            for (k, (program, kernel)) in programs.iter().enumerate() {
                check_leaf(&rank.join(format!("d{k}")), program, kernel);
            }
        }
    }
}

/// `sys.exit(0)` or `os._exit(0)` in `host_orch.py` made `pto replay --validate` exit 0 with
/// nothing validated; a C-level `_exit(0)` leaves no result record. All three are errors
/// (exit 2) naming what happened.
#[test]
fn a_host_orchestration_that_exits_fails_the_replay() {
    let cases = [
        ("sys.exit(0)", "import sys", "called sys.exit(0)"),
        ("os._exit(0)", "import os", "called os._exit(0)"),
        (
            "ctypes.CDLL(None)._exit(0)",
            "import ctypes",
            "exited with status 0 without reporting a result",
        ),
    ];
    for (call, import, said) in cases {
        let dir = example("l3_hello_rank", "l3_exits");
        let orch = dir.join("orchestration/host_orch.py");
        let head = "def hello_rank(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size, _domain_provider=None):";
        let source = read(&orch);
        assert!(source.contains(head));
        std::fs::write(
            &orch,
            format!(
                "{import}\n{}",
                source.replace(head, &format!("{head}\n    {call}"))
            ),
        )
        .unwrap();
        let o = pto(&["replay", dir.to_str().unwrap(), "--validate"]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{call}: {t}");
        assert!(!t.contains("PASSED"), "{call}: {t}");
        assert!(t.contains(said), "{call}: {t}");
        if !call.starts_with("ctypes") {
            assert!(
                t.contains(&format!("the host orchestration {}", orch.display())),
                "{call}: {t}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn the_swimlane_on_cpu_runs_twice_and_converts_every_dispatch() {
    let dir = example("l3_allreduce", "cpu");
    let o = pto(&[
        "replay",
        dir.to_str().unwrap(),
        "--platform",
        "cpu",
        "--validate",
        "--swimlane",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for line in [
        "[swimlane] run 1/2",
        "[swimlane] run 2/2",
        "[pypto] l3_swimlane_pass=graph event=begin",
        "[pypto] l3_swimlane_pass=timing event=end",
        "Golden validation: PASSED",
    ] {
        assert!(t.contains(line), "{line}: {t}");
    }
    for r in 0..2 {
        let leaf = dir.join(format!("dfx_outputs/rank{r}/d0"));
        let merged: Vec<PathBuf> = std::fs::read_dir(&leaf)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("merged_swimlane_"))
            })
            .collect();
        assert_eq!(merged.len(), 1, "{}", leaf.display());
        // The trace names the kernel from this dispatch's own program.
        assert!(
            read(&merged[0]).contains("window_allreduce"),
            "{}",
            merged[0].display()
        );
        assert!(leaf.join("deps.json").is_file());
    }
}

/// Every process below `root` (by parent id), with its command line.
fn descendants(root: u32) -> Vec<(u32, String)> {
    let mut parent = std::collections::HashMap::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some(after) = stat.rsplit_once(')').map(|(_, a)| a.to_string()) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        if let Some(ppid) = fields.get(1).and_then(|p| p.parse::<u32>().ok()) {
            parent.insert(pid, ppid);
        }
    }
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (&c, &pp) in &parent {
            if pp == p {
                let cmd = std::fs::read(format!("/proc/{c}/cmdline"))
                    .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
                    .unwrap_or_default();
                out.push((c, cmd));
                frontier.push(c);
            }
        }
    }
    out
}

#[test]
fn killing_one_chip_mid_run_names_it_and_leaves_no_process_behind() {
    let dir = example("l3_hello_rank", "kill");
    let k = dir.join("next_levels/per_rank/kernels/aiv/add_rank.cpp");
    let src = read(&k).replace(
        "    for (uint64_t i = 0; i < y->numel(); ++i)",
        "    for (volatile int spin = 0; spin >= 0; spin = spin * 0) { }\n    for (uint64_t i = 0; i < y->numel(); ++i)",
    );
    std::fs::write(&k, src).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_pto"))
        .args(["replay", dir.to_str().unwrap(), "--validate"])
        .env("NO_COLOR", "1")
        .env("PTO_PYTHON", python())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pto_pid = child.id();
    // Wait until both chip processes run (each spins in its kernel), then kill one.
    let deadline = Instant::now() + Duration::from_secs(240);
    let chips = loop {
        let chips: Vec<u32> = descendants(pto_pid)
            .into_iter()
            // `pto __chip-worker`, `python -m pypto.runtime._chip_worker` or the package's
            // bootstrap calling `chip_worker_main()`.
            .filter(|(_, cmd)| cmd.contains("chip_worker") || cmd.contains("__chip-worker"))
            .map(|(p, _)| p)
            .collect();
        if chips.len() == 2 {
            break chips;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let o = child.wait_with_output().unwrap();
            panic!(
                "the replay ended ({status}) before both chip processes ran: {}",
                text(&o)
            );
        }
        assert!(
            Instant::now() < deadline,
            "the chip processes never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    // Give the dispatches time to reach the spinning kernel.
    std::thread::sleep(Duration::from_secs(3));
    let everyone: Vec<u32> = descendants(pto_pid).into_iter().map(|(p, _)| p).collect();
    let killed = Command::new("kill")
        .args(["-KILL", &chips[1].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    for part in [
        "killed by SIGKILL",
        "dispatch 0 of rank",
        "program 'per_rank'",
        "add_rank",
    ] {
        assert!(t.contains(part), "{part}: {t}");
    }
    // Nothing of the run is left: not the interpreter, not the other chip.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let alive: Vec<u32> = everyone
            .iter()
            .copied()
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/stat"))
                    .map(|s| {
                        s.rsplit_once(')')
                            .is_some_and(|(_, a)| !a.trim_start().starts_with('Z'))
                    })
                    .unwrap_or(false)
            })
            .collect();
        if alive.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still running after the run failed: {alive:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn without_pypto_and_torch_the_error_says_how_to_get_them() {
    let dir = example("l3_hello_rank", "no_python");
    let o = Command::new(env!("CARGO_BIN_EXE_pto"))
        .args(["replay", dir.to_str().unwrap()])
        .env("PTO_PYTHON", "/nonexistent/python3")
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    for part in [
        "is an L3 (distributed) build",
        "`/nonexistent/python3` cannot be started",
        "PTO_PYTHON",
        "pip install torch",
    ] {
        assert!(t.contains(part), "{part}: {t}");
    }
}

/// (With pypto and torch the demo runs and validates them: `demo_runs_every_example_from_any_
/// directory` in `replay.rs`.)
#[test]
fn without_pypto_and_torch_the_demo_skips_the_l3_examples_saying_how_to_get_them() {
    let names: Vec<&str> = pto_runner::demo::example_names()
        .into_iter()
        .filter(|n| n.starts_with("l3_"))
        .collect();
    assert!(names.len() >= 4, "{names:?}");
    let out = common::scratch("l3", "demo_without");
    let o = Command::new(env!("CARGO_BIN_EXE_pto"))
        .args(["demo", "--out", out.to_str().unwrap()])
        .env("PTO_PYTHON", "/nonexistent/python3")
        .output()
        .unwrap();
    let t = text(&o);
    // Skipped rows never fail the demo: its exit code is the other examples' alone.
    let others_ok = !t
        .lines()
        .any(|l| l.contains("  ERROR: ") || l.ends_with("FAIL (golden mismatch)"));
    assert_eq!(o.status.code() == Some(0), others_ok, "{t}");
    for name in &names {
        let line = common::demo_row(&t, name).unwrap_or_else(|| panic!("{name}: {t}"));
        assert!(line.ends_with("SKIPPED (see below)"), "{line}");
    }
    assert!(
        t.contains("L3 examples skipped: ")
            && t.contains("`/nonexistent/python3` cannot be started")
            && t.contains("PTO_PYTHON"),
        "{t}"
    );
    let line = common::demo_row(&t, "vector_add").unwrap_or_else(|| panic!("{t}"));
    assert!(line.ends_with("PASS"), "{line}");
}

#[test]
fn every_builtin_collective_on_two_and_four_ranks_matches_golden() {
    for ranks in [2, 4] {
        let dir = collectives(ranks);
        let o = pto(&["replay", dir.to_str().unwrap(), "--validate"]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(0), "{ranks} ranks: {t}");
        assert!(t.contains("Golden validation: PASSED"), "{t}");
    }
}

#[test]
fn an_l3_build_replays_without_validate() {
    // Without --validate the inputs come from golden.py too (not the native .npy reader,
    // whose arrays a host orchestration cannot take).
    let dir = example("l3_hello_rank", "no_validate");
    let o = pto(&["replay", dir.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("[execute] L3 run: 2 tasks on 2 chips"), "{t}");
}
