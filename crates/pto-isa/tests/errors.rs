//! Bad inputs: a tile past its buffer and a GM access outside the task's tensors fail the run
//! with messages naming the kernel and the culprit; unsupported API is a compile error that
//! points at docs/PTO_ISA.md; a kernel without a core type does not compile; a TFREE without
//! a TPOP is a fault; an instruction outside the runtime aborts with a message.

use pto_runtime::{ErrorCode, RuntimeError};
use pto_toolchain::{CompileUnit, CoreKind, UnitKind};

use pto_isa::wrapper;

use crate::common::{
    build, compile_error, config, one_task, run_with, scratch, toolchain, Buf, Dt, Kernel,
};

/// Runs a one-tensor AIV kernel and returns the fatal error's message.
fn fault_of(name: &'static str, body: &str) -> String {
    let source = wrapper::kernel(
        body,
        &wrapper::entry(&wrapper::tensor_arg(0, "float", "out"), "bad(out)"),
    );
    let program = build(
        name,
        &one_task(1, 0, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(0, name, source)],
    );
    let mut bufs = vec![Buf::zeros(Dt::F32, &[16, 64])];
    match run_with(&program, &mut bufs, &[], &config()) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::KernelFault, "{message}");
            message
        }
        other => panic!("{name}: expected a kernel fault, got {other:?}"),
    }
}

fn assert_mentions(message: &str, needles: &[&str]) {
    for n in needles {
        assert!(message.contains(n), "{n:?} missing in: {message}");
    }
}

#[test]
fn a_tile_past_its_buffer_is_a_fault() {
    let message = fault_of(
        "tile_past_ub",
        r#"
static __aicore__ void bad(__gm__ float* out) {
    Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null> t;
    TASSIGN(t, 196608 - 1024);   // 4096 bytes from 1 KiB before the end of UB
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>> g(out);
    TSTORE(g, t);
}
"#,
    );
    assert_mentions(
        &message,
        &[
            "kernel 'tile_past_ub'",
            "TASSIGN of Tile<Vec, float, 16x64, RowMajor, valid 16x64>",
            "UB offset 0x2fc00",
            "4096 bytes",
            "capacity of 196608 bytes",
        ],
    );
}

#[test]
fn a_gm_access_outside_the_tensors_is_a_fault() {
    let message = fault_of(
        "gm_overrun",
        r#"
static __aicore__ void bad(__gm__ float* out) {
    Tile<TileType::Vec, float, 32, 64, BLayout::RowMajor, 32, 64, SLayout::NoneBox, 512, PadValue::Null> t;
    TASSIGN(t, 0);
    TEXPANDS(t, 1.0f);
    // The tensor holds 16 x 64 floats; this view spans 32 rows.
    GlobalTensor<float, pto::Shape<1, 1, 1, 32, 64>, pto::Stride<2048, 2048, 2048, 64, 1>> g(out);
    TSTORE(g, t);
}
"#,
    );
    assert_mentions(
        &message,
        &[
            "kernel 'gm_overrun'",
            "TSTORE of GlobalTensor<float, ND>",
            "shape [1,1,1,32,64]",
            "strides [2048,2048,2048,64,1]",
            "outside the task's tensors",
        ],
    );
}

#[test]
fn a_tfree_without_a_tpop_is_a_fault() {
    let message = fault_of(
        "stray_tfree",
        r#"
static __aicore__ void bad(__gm__ float* out) {
    (void)out;
    auto p = TPipe<3, Direction::DIR_C2V, 1024, 2>(nullptr, 0, 0);
    TFREE<TPipe<3, Direction::DIR_C2V, 1024, 2>, TileSplitAxis::TILE_NO_SPLIT>(p);
}
"#,
    );
    assert_mentions(
        &message,
        &[
            "TFREE on pipe flag 3 DIR_C2V (2 slots x 1024 B)",
            "without a matching TPOP",
        ],
    );
}

#[test]
fn unsupported_api_is_a_compile_error_naming_the_docs() {
    let body = r#"
static __aicore__ void unsupported(__gm__ float* out) {
    Tile<TileType::Vec, float, 16, 64> a, b;
    Tile<TileType::Vec, int8_t, 16, 64> mask;
    TCMP(mask, a, b, CmpMode::GT);
    Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null, CompactMode::RowPlusOne> odd;
    (void)odd;
    TileLeft<half, 16, 32> l; TileRight<bfloat16_t, 32, 16> r; TileAcc<float, 16, 16> acc;
    TMATMUL(acc, l, r);
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::NZ> nz(out);
    TLOAD(a, nz);
    pto::comm::TPUT_ASYNC(nz, nz, a);
}
"#;
    let source = wrapper::kernel(
        body,
        &wrapper::entry(&wrapper::tensor_arg(0, "float", "out"), "unsupported(out)"),
    );
    let stderr = compile_error("unsupported_api", &source, CoreKind::Aiv);
    for needle in [
        "TCMP is not supported",
        "CompactMode::RowPlusOne and CompactMode::RowAlignedPadding are not supported",
        "TMATMUL: supported operand pairs are",
        "TLOAD: only ND and DN GlobalTensors are supported",
        "TPUT_ASYNC is not supported",
    ] {
        let line = stderr
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} missing in:\n{stderr}"));
        assert!(line.contains("docs/PTO_ISA.md"), "{line}");
    }
}

#[test]
fn a_kernel_without_a_core_type_does_not_compile() {
    let dir = scratch("no_core_type");
    let path = dir.join("no_core_type.cpp");
    std::fs::write(
        &path,
        "#include <pto/pto-inst.hpp>\nextern \"C\" void kernel_entry(int64_t* args) { (void)args; }\n",
    )
    .unwrap();
    // Orchestration units get neither __DAV_VEC__ nor __DAV_CUBE__.
    let err = toolchain()
        .compile(&CompileUnit::new(path, UnitKind::Orchestration))
        .expect_err("must not compile")
        .to_string();
    assert!(
        err.contains("compile AIV kernels with -D__DAV_VEC__ and AIC kernels with -D__DAV_CUBE__"),
        "{err}"
    );
}

#[test]
fn an_instruction_outside_the_runtime_aborts_with_a_message() {
    let tc = toolchain();
    let dir = scratch("outside_runtime");
    let src = dir.join("main.cpp");
    std::fs::write(
        &src,
        r#"#include <pto/pto-inst.hpp>
int main() {
    pto::Tile<pto::TileType::Vec, float, 16, 64> t;
    pto::TASSIGN(t, 0);
    return 0;
}
"#,
    )
    .unwrap();
    let exe = dir.join("main");
    let out = std::process::Command::new(tc.compiler())
        .args(["-std=c++17", "-O1", "-D__CPU_SIM", "-D__DAV_VEC__"])
        .arg(format!("-I{}", tc.include_dir().display()))
        .arg(format!("-I{}", tc.isa_include_dir().display()))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = std::process::Command::new(&exe).output().unwrap();
    assert!(!run.status.success(), "must abort");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("TASSIGN called outside the PTO runtime")
            && stderr.contains("no simulation context is bound"),
        "{stderr}"
    );
}

/// A MIX-less pipe wait: an AIV pops from a pipe nobody pushes to.
const BLOCKED_POP: &str = r#"
static __aicore__ void bad(__gm__ float* out) {
    (void)out;
    using P = TPipe<5, Direction::DIR_C2V, 1024, 2>;
    auto p = P(nullptr, 0, 0);
    Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16, SLayout::NoneBox, 512, PadValue::Null> t;
    TPOP<P, decltype(t), TileSplitAxis::TILE_NO_SPLIT>(p, t);
}
"#;

#[test]
fn a_blocked_tpop_names_the_pipe_and_gives_up_when_the_run_stops() {
    let source = wrapper::kernel(
        BLOCKED_POP,
        &wrapper::entry(&wrapper::tensor_arg(0, "float", "out"), "bad(out)"),
    );
    let program = build(
        "blocked_tpop",
        &one_task(1, 0, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(0, "blocked_tpop", source)],
    );
    let mut cfg = config();
    cfg.scheduler_timeout = std::time::Duration::from_millis(300);
    let mut bufs = vec![Buf::zeros(Dt::F32, &[16, 64])];
    match run_with(&program, &mut bufs, &[], &cfg) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::SchedulerTimeout, "{message}");
            assert_mentions(
                &message,
                &["TPOP on pipe flag 5 DIR_C2V (2 slots x 1024 B): waiting for the AIC core to push"],
            );
        }
        other => panic!("expected a scheduler timeout, got {other:?}"),
    }
}

#[test]
fn a_fault_on_the_cube_releases_the_vector_cores_waiting_on_it() {
    let aic = wrapper::kernel(
        r#"
static __aicore__ void cube(__gm__ float* out) {
    (void)out;
    using Acc = Tile<TileType::Acc, float, 16, 16, BLayout::ColMajor, 16, 16, SLayout::RowMajor, 1024>;
    Acc acc;
    TASSIGN(acc, 0x7ffffff0);   // far past L0C
}
"#,
        &wrapper::entry(&wrapper::tensor_arg(0, "float", "out"), "cube(out)"),
    );
    let aiv = wrapper::kernel(
        BLOCKED_POP,
        &wrapper::entry(&wrapper::tensor_arg(0, "float", "out"), "bad(out)"),
    );
    let program = build(
        "fault_releases_waiters",
        &one_task(1, 0, "", "rt_submit_task(MixedKernels{0, 1, 1}, p)"),
        &[
            Kernel::aic(0, "faulty_cube", aic),
            Kernel::aiv(1, "waiting_vector", aiv),
        ],
    );
    // The vector cores block in TPOP; the run must end with the cube's fault (their waits see
    // the stop flag), not with the scheduler timeout.
    let mut bufs = vec![Buf::zeros(Dt::F32, &[16, 64])];
    match run_with(&program, &mut bufs, &[], &config()) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::KernelFault, "{message}");
            assert_mentions(&message, &["kernel 'faulty_cube'", "L0C offset 0x7ffffff0"]);
        }
        other => panic!("expected a kernel fault, got {other:?}"),
    }
}
