//! Faults become diagnoses: with the chip in a child process (the default), a kernel or an
//! orchestration that crashes, aborts, exits or hangs makes `pto replay` fail with exit
//! code 2 and an error naming what ran, and `pto` itself survives to say so.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::text;

/// The vector_add example with the fault-injecting kernel and orchestration of
/// `tests/faults/` (the fault is chosen per run by an environment variable).
fn faulty_build(name: &str) -> PathBuf {
    let dir = common::example("faults", "vector_add", name);
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/faults");
    std::fs::copy(
        fixtures.join("kernel_add.cpp"),
        dir.join("kernels/aiv/kernel_add.cpp"),
    )
    .unwrap();
    std::fs::copy(
        fixtures.join("vector_add.cpp"),
        dir.join("orchestration/vector_add.cpp"),
    )
    .unwrap();
    dir
}

fn replay(dir: &Path, env: &[(&str, &str)], extra: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pto"));
    cmd.args([
        "replay",
        dir.to_str().unwrap(),
        "--validate",
        "--scheduler-timeout-ms",
        "1500",
    ])
    .args(extra)
    .env("NO_COLOR", "1")
    .env_remove("PTO_IN_PROCESS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn every_kernel_fault_kind_is_named() {
    let dir = faulty_build("kernel");
    let ok = replay(&dir, &[], &[]);
    assert_eq!(ok.status.code(), Some(0), "no fault: {}", text(&ok));
    let common_parts = [
        "kernel 0 'kernel_add'",
        "func_id 0",
        "AIV core AIV_",
        "arguments: [0] INPUT FLOAT32 [2048]",
    ];
    let cases: [(&str, &[&str]); 10] = [
        (
            "segv",
            &["killed by SIGSEGV at address 0x0", "unmapped memory"],
        ),
        ("bus", &["killed by SIGBUS"]),
        ("fpe", &["killed by SIGFPE", "division by zero"]),
        ("ill", &["killed by SIGILL"]),
        ("abort", &["killed by SIGABRT", "abort()"]),
        (
            "terminate",
            &["killed by SIGABRT", "uncaught C++ exception"],
        ),
        ("throw", &["uncaught C++ exception: index 9 of 8"]),
        ("exit", &["exited with status 0", "called exit()"]),
        ("_exit", &["exited with status 3"]),
        ("hang", &["PTO2_ERROR_SCHEDULER_TIMEOUT", "has run for"]),
    ];
    for (kind, needles) in cases {
        let o = replay(&dir, &[("PTO_TEST_FAULT", kind)], &[]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{kind}: {t}");
        for n in needles.iter().chain(if kind == "hang" {
            &common_parts[..1]
        } else {
            &common_parts[..]
        }) {
            assert!(t.contains(n), "{kind}: {n:?} missing in: {t}");
        }
        assert!(!t.contains("PASS"), "{kind}: {t}");
    }
}

#[test]
fn orchestration_faults_name_the_last_submit() {
    let dir = faulty_build("orchestration");
    let o = replay(&dir, &[("PTO_TEST_ORCH_FAULT", "segv")], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("SIGSEGV")
            && t.contains("in the orchestration")
            && t.contains("vector_add.cpp:28"),
        "{t}"
    );
    let o = replay(&dir, &[("PTO_TEST_ORCH_FAULT", "exit")], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("exited with status 0") && t.contains("vector_add.cpp:28"),
        "{t}"
    );
    let o = replay(
        &dir,
        &[
            ("PTO_TEST_ORCH_FAULT", "hang"),
            ("PTO_ORCHESTRATION_TIMEOUT_MS", "500"),
        ],
        &[],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("the orchestration has neither returned") && t.contains("vector_add.cpp:28"),
        "{t}"
    );
}

#[test]
fn in_process_mode_is_still_available() {
    let dir = faulty_build("in_process");
    let o = replay(&dir, &[], &["--in-process"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = replay(
        &dir,
        &[("PTO_TEST_FAULT", "throw"), ("PTO_IN_PROCESS", "1")],
        &[],
    );
    assert!(
        text(&o).contains("uncaught C++ exception: index 9 of 8"),
        "{}",
        text(&o)
    );
}
