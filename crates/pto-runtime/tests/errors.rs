//! Bad input: each a clear error naming the task and the orchestration line; nothing panics.

use pto_runtime::{
    ArgDirection, CoreType, ErrorCode, KernelSpec, Program, ProgramSpec, RuntimeError,
};

use crate::common::{build, config, f32_arg, orchestration, run_body, Kernel, NOOP};

fn invalid_args(name: &str, body: &str, n_args: usize) -> String {
    let mut x = vec![0f32; 16];
    let mut args = vec![f32_arg(ArgDirection::InOut, &[16], &mut x)];
    args.truncate(n_args);
    match run_body(name, body, &mut args, &config()) {
        Err(RuntimeError::Fatal {
            code: ErrorCode::InvalidArgs,
            message,
        }) => message,
        Err(other) => panic!("expected INVALID_ARGS, got {other}"),
        Ok(_) => panic!("expected INVALID_ARGS, the run succeeded"),
    }
}

#[test]
fn unknown_kernel_id() {
    let msg = invalid_args(
        "bad_kernel",
        "PTO2_SCOPE() { CoreTaskArgs p; rt_submit_aiv_task(7, p); }",
        0,
    );
    assert!(
        msg.contains("task r1t0 submitted at bad_kernel_orch.cpp:"),
        "{msg}"
    );
    assert!(
        msg.contains("kernel id 7 has no kernel (known func_ids: [0, 1])"),
        "{msg}"
    );
}

#[test]
fn kernel_submitted_to_the_wrong_core_type() {
    let msg = invalid_args(
        "wrong_core",
        "PTO2_SCOPE() { CoreTaskArgs p; rt_submit_aic_task(0, p); }",
        0,
    );
    assert!(
        msg.contains("kernel 0 'noop_aiv' is an AIV kernel but was submitted to the AIC slot"),
        "{msg}"
    );
}

#[test]
fn tensor_after_scalar() {
    let body = "ChipTensor x = orch_args.tensor(0).ref(); PTO2_SCOPE() { CoreTaskArgs p; p.add_scalar(1); p.add_input(x); rt_submit_aiv_task(0, p); }";
    let msg = invalid_args("tensor_after_scalar", body, 1);
    assert!(
        msg.contains("all tensors must be added before any scalars"),
        "{msg}"
    );
}

#[test]
fn too_many_tensors_and_scalars() {
    let body = "ChipTensor x = orch_args.tensor(0).ref(); PTO2_SCOPE() { CoreTaskArgs p; for (int i = 0; i < 33; ++i) p.add_input(x); rt_submit_aiv_task(0, p); }";
    assert!(invalid_args("too_many_tensors", body, 1).contains("exceeds MAX_TENSOR_ARGS=32"));
    let body = "PTO2_SCOPE() { CoreTaskArgs p; for (int i = 0; i < 17; ++i) p.add_scalar(i); rt_submit_aiv_task(0, p); }";
    assert!(invalid_args("too_many_scalars", body, 0).contains("exceeds MAX_SCALAR_ARGS=16"));
}

#[test]
fn view_outside_its_buffer() {
    let body = "ChipTensor x = orch_args.tensor(0).ref(); PTO2_SCOPE() { uint32_t s[1] = {8}; uint32_t o[1] = {12}; ChipTensor v = x.view(s, o); CoreTaskArgs p; p.add_input(v); rt_submit_aiv_task(0, p); }";
    let msg = invalid_args("view_outside", body, 1);
    assert!(
        msg.contains("tensor argument 0 (INPUT)") && msg.contains("outside its 64-byte buffer"),
        "{msg}"
    );
}

#[test]
fn submits_after_a_fatal_error_are_ignored_and_reported() {
    let body = r#"
    PTO2_SCOPE() {
        rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "bad tiling %d", 3);
        CoreTaskArgs p; rt_submit_aiv_task(0, p);
        CoreTaskArgs q; rt_submit_aiv_task(0, q);
    }"#;
    match run_body("after_fatal", body, &mut [], &config()) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::ExplicitOrchFatal);
            assert!(message.contains("bad tiling 3"), "{message}");
            assert!(
                message
                    .contains("2 later submits were ignored, the first at after_fatal_orch.cpp:"),
                "{message}"
            );
        }
        other => panic!("expected a fatal error, got {other:?}"),
    }
}

#[test]
fn missing_kernel_entry_symbol() {
    let program_src = orchestration(0, "");
    let bad_kernel = "extern \"C\" void not_the_entry(long*) {}";
    // Build a valid program first to get compiled objects, then point a kernel at a .so
    // without `kernel_entry`.
    let ok = build(
        "missing_entry_ok",
        &program_src,
        &[Kernel {
            func_id: 0,
            name: "k",
            core: CoreType::Aiv,
            source: NOOP,
        }],
    );
    drop(ok);
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("programs")
        .join("missing_entry");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("bad.cpp");
    std::fs::write(&src, bad_kernel).unwrap();
    let so = dir.join("bad.so");
    let status = std::process::Command::new("c++")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&src)
        .status()
        .unwrap();
    assert!(status.success());
    let orch_so = dir.join("orch.so");
    let orch_src = dir.join("orch.cpp");
    std::fs::write(&orch_src, &program_src).unwrap();
    let include = pto_toolchain::materialize_headers(
        &std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pto-cache"),
    )
    .unwrap()
    .join(pto_toolchain::RUNTIME_INCLUDE);
    let status = std::process::Command::new("c++")
        .args(["-std=c++17", "-shared", "-fPIC", "-I"])
        .arg(&include)
        .arg("-o")
        .arg(&orch_so)
        .arg(&orch_src)
        .status()
        .unwrap();
    assert!(status.success());
    let spec = ProgramSpec {
        orchestration_so: orch_so,
        entry_symbol: "aicpu_orchestration_entry".into(),
        config_symbol: None,
        kernels: vec![KernelSpec {
            func_id: 3,
            name: "softmax".into(),
            core_type: CoreType::Aiv,
            so_path: so,
        }],
    };
    let err = Program::load(&spec)
        .err()
        .expect("load must fail")
        .to_string();
    assert!(
        err.contains("no `kernel_entry` symbol") && err.contains("kernel 'softmax' (func_id 3)"),
        "{err}"
    );
}

#[test]
fn too_few_orchestration_arguments() {
    let program = build(
        "too_few_args",
        &orchestration(2, ""),
        &[Kernel {
            func_id: 0,
            name: "k",
            core: CoreType::Aiv,
            source: NOOP,
        }],
    );
    match pto_runtime::run(&program, &mut [], &config()) {
        Err(RuntimeError::Fatal {
            code: ErrorCode::InvalidArgs,
            message,
        }) => {
            assert!(
                message.contains("expects 2 arguments (tensors + scalars) but the call passed 0"),
                "{message}"
            )
        }
        other => panic!("expected INVALID_ARGS, got {other:?}"),
    }
}

#[test]
fn tensor_data_index_out_of_range() {
    let body = "ChipTensor x = orch_args.tensor(0).ref(); uint32_t idx[1] = {16}; (void)get_tensor_data<float>(x, 1, idx);";
    let msg = invalid_args("get_out_of_range", body, 1);
    assert!(
        msg.contains("get_tensor_data at get_out_of_range_orch.cpp:"),
        "{msg}"
    );
    assert!(
        msg.contains("index 16 is out of range for dimension 0 of size 16"),
        "{msg}"
    );
    let body = "ChipTensor x = orch_args.tensor(0).ref(); uint32_t idx[2] = {0, 0}; set_tensor_data<float>(x, 2, idx, 1.0f);";
    let msg = invalid_args("set_wrong_rank", body, 1);
    assert!(
        msg.contains("set_tensor_data at") && msg.contains("2 indices for a 1-dimensional tensor"),
        "{msg}"
    );
}

#[test]
fn auto_scope_inside_a_manual_scope() {
    let body = "PTO2_SCOPE(PTO2ScopeMode::MANUAL) { PTO2_SCOPE() { } }";
    let msg = invalid_args("auto_in_manual", body, 0);
    assert!(
        msg.contains("is nested inside the MANUAL scope at auto_in_manual_orch.cpp:"),
        "{msg}"
    );
    assert!(msg.contains("make the inner scope MANUAL too"), "{msg}");
}

#[test]
fn more_producers_than_the_dep_pool_holds() {
    use pto_runtime::{RingOverride, RingOverrides, RingSizes};
    // Five producers that are still running when the consumer is submitted.
    let slow = r#"
#include <time.h>
#include "tensor.h"
extern "C" void kernel_entry(int64_t*) { struct timespec ts = {0, 300000000}; nanosleep(&ts, nullptr); }
"#;
    let body = r#"
    PTO2_SCOPE() {
        PTO2TaskId ids[5];
        for (int i = 0; i < 5; ++i) { CoreTaskArgs p; ids[i] = rt_submit_aiv_task(0, p).task_id(); }
        CoreTaskArgs q; q.set_dependencies(ids, 5); rt_submit_aiv_task(0, q);
    }"#;
    let program = build(
        "dep_pool_small",
        &orchestration(0, body),
        &[Kernel {
            func_id: 0,
            name: "slow",
            core: CoreType::Aiv,
            source: slow,
        }],
    );
    let mut cfg = config();
    cfg.rings = RingSizes::resolve_with_env(
        &RingOverrides {
            dep_pool: Some(RingOverride::All(4)),
            ..Default::default()
        },
        &|_| None,
    )
    .unwrap();
    match pto_runtime::run(&program, &mut [], &cfg) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::DepPoolOverflow);
            assert!(
                message.contains("has 5 producers but the dep pool of ring 1 holds 4 entries; raise ring_dep_pool"),
                "{message}"
            );
        }
        other => panic!("expected DEP_POOL_OVERFLOW, got {other:?}"),
    }
}
