//! Faults the runtime turns into errors in-process: a C++ exception escaping a kernel or the
//! orchestration, and an orchestration that never returns. (Crashes that end the process —
//! a segfault, `abort()`, `exit()` — are diagnosed by running the chip in a child process;
//! see `pto-runner`'s chip-process tests.)

use std::time::Duration;

use pto_runtime::{run, ArgDirection, CoreType, ErrorCode, RuntimeError};

use crate::common::{build, config, f32_arg, orchestration, Kernel};

const THROWING_KERNEL: &str = r#"
#include <stdexcept>
#include "tensor.h"
extern "C" void kernel_entry(int64_t* args) {
    if (kernel_tensor(args, 0)->data<float>()[0] > 0) throw std::out_of_range("row 9 of 8");
}
"#;

fn submit_one(func: &str) -> String {
    orchestration(
        1,
        &format!("ChipTensor x = orch_args.tensor(0).ref(); PTO2_SCOPE() {{ CoreTaskArgs p; p.add_inout(x); {func}(0, p); }}"),
    )
}

#[test]
fn a_kernel_exception_names_the_task_and_the_run_goes_on_in_this_process() {
    let program = build(
        "fault_kernel_exception",
        &submit_one("rt_submit_aiv_task"),
        &[Kernel {
            func_id: 0,
            name: "thrower",
            core: CoreType::Aiv,
            source: THROWING_KERNEL,
        }],
    );
    let mut x = vec![1f32; 4];
    match run(
        &program,
        &mut [f32_arg(ArgDirection::InOut, &[4], &mut x)],
        &config(),
    ) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::KernelFault);
            assert!(
                message.contains("uncaught C++ exception: row 9 of 8"),
                "{message}"
            );
            assert!(
                message.contains("kernel 0 'thrower'") && message.contains("AIV core"),
                "{message}"
            );
        }
        other => panic!("expected a kernel fault, got {other:?}"),
    }
    // The same program runs again (the exception did not take anything down).
    let mut y = vec![0f32; 4];
    run(
        &program,
        &mut [f32_arg(ArgDirection::InOut, &[4], &mut y)],
        &config(),
    )
    .unwrap();
}

#[test]
fn an_orchestration_exception_names_its_last_submit() {
    let body = r#"
    ChipTensor x = orch_args.tensor(0).ref();
    PTO2_SCOPE() {
        CoreTaskArgs p; p.add_inout(x); rt_submit_aiv_task(0, p);
        std::vector<int> v; (void)v.at(3);
    }
"#;
    let program = build(
        "fault_orch_exception",
        &orchestration(1, body),
        &[Kernel {
            func_id: 0,
            name: "noop",
            core: CoreType::Aiv,
            source: crate::common::NOOP,
        }],
    );
    let mut x = vec![0f32; 4];
    match run(
        &program,
        &mut [f32_arg(ArgDirection::InOut, &[4], &mut x)],
        &config(),
    ) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::ExplicitOrchFatal);
            assert!(message.contains("uncaught C++ exception"), "{message}");
            assert!(
                message.contains("fault_orch_exception_orch.cpp:10"),
                "names the last submit: {message}"
            );
        }
        other => panic!("expected an orchestration error, got {other:?}"),
    }
}

#[test]
fn an_orchestration_that_never_returns_times_out() {
    let body = r#"
    ChipTensor x = orch_args.tensor(0).ref();
    PTO2_SCOPE() { CoreTaskArgs p; p.add_inout(x); rt_submit_aiv_task(0, p); }
    volatile bool forever = true;
    while (forever && !rt_is_fatal()) { SPIN_WAIT_HINT(); }
"#;
    let program = build(
        "fault_orch_hang",
        &orchestration(1, body),
        &[Kernel {
            func_id: 0,
            name: "noop",
            core: CoreType::Aiv,
            source: crate::common::NOOP,
        }],
    );
    let mut cfg = config();
    cfg.orchestration_timeout = Duration::from_millis(300);
    let mut x = vec![0f32; 4];
    match run(
        &program,
        &mut [f32_arg(ArgDirection::InOut, &[4], &mut x)],
        &cfg,
    ) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::SchedulerTimeout);
            assert!(
                message.contains("the orchestration has neither returned nor submitted"),
                "{message}"
            );
            assert!(message.contains("fault_orch_hang_orch.cpp:9"), "{message}");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
}
