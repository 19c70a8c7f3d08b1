//! Ring back-pressure, exhaustion messages, SPMD and the scheduler timeout.

use std::time::{Duration, Instant};

use pto_runtime::{
    ArgDirection, ChipConfig, CoreType, ErrorCode, RingOverride, RingOverrides, RingSizes,
    RuntimeError,
};

use crate::common::{build, config, f32_arg, orchestration, run_body, Kernel, NOOP};

fn with_rings(over: RingOverrides) -> ChipConfig {
    let mut cfg = config();
    cfg.rings = RingSizes::resolve_with_env(&over, &|_| None).unwrap();
    cfg
}

fn fatal(res: Result<pto_runtime::RunReport, RuntimeError>) -> (ErrorCode, String) {
    match res {
        Err(RuntimeError::Fatal { code, message }) => (code, message),
        Err(other) => panic!("expected a fatal error, got {other}"),
        Ok(_) => panic!("expected a fatal error, the run succeeded"),
    }
}

const NINE_TASKS_IN_ONE_SCOPE: &str = r#"
    ChipTensor x = orch_args.tensor(0).ref();
    PTO2_SCOPE() {
        for (int i = 0; i < 9; ++i) { CoreTaskArgs p; p.add_inout(x); rt_submit_aiv_task(0, p); }
    }
"#;

#[test]
fn tiny_task_window_is_a_clear_deadlock() {
    let mut x = vec![0f32; 16];
    let mut args = [f32_arg(ArgDirection::InOut, &[16], &mut x)];
    let cfg = with_rings(RingOverrides {
        task_window: Some(RingOverride::All(4)),
        ..Default::default()
    });
    // A deadlock is found by quiescence, not by the scheduler timeout: the code says which.
    let (code, msg) = fatal(run_body(
        "window4",
        NINE_TASKS_IN_ONE_SCOPE,
        &mut args,
        &cfg,
    ));
    assert_eq!(code, ErrorCode::FlowControlDeadlock);
    assert!(msg.contains("task window 4 of ring 1"), "{msg}");
    assert!(msg.contains("window4_orch.cpp:"), "{msg}");
    assert!(msg.contains("raise ring_task_window"), "{msg}");
}

/// The number after `= ` in "... (or ENV) = N fits".
fn advised(msg: &str, field: &str) -> u64 {
    let key = format!("{field} (or ");
    let at = msg
        .find(&key)
        .map(|i| &msg[i..])
        .unwrap_or_else(|| panic!("{msg}"));
    let n = at.split(") = ").nth(1).unwrap_or_else(|| panic!("{msg}"));
    n.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn the_advised_window_fits_the_whole_run() {
    // The window fails at the 4th task of a scope that goes on to hold 40, with a nested
    // scope of 20 on the next ring and a second scope of 12: only a count to the end of
    // the orchestration names a window that fits.
    let body = r#"
    ChipTensor x = orch_args.tensor(0).ref();
    PTO2_SCOPE() {
        for (int i = 0; i < 40; ++i) { CoreTaskArgs p; p.add_inout(x); rt_submit_aiv_task(0, p); }
        PTO2_SCOPE() {
            for (int i = 0; i < 20; ++i) { CoreTaskArgs p; p.add_inout(x); rt_submit_aiv_task(0, p); }
        }
    }
    PTO2_SCOPE() {
        for (int i = 0; i < 12; ++i) { CoreTaskArgs p; p.add_inout(x); rt_submit_aiv_task(0, p); }
    }"#;
    let mut x = vec![0f32; 16];
    let window = |n: u64| {
        with_rings(RingOverrides {
            task_window: Some(RingOverride::PerRing([4, n, n, n])),
            ..Default::default()
        })
    };
    let run = |cfg: &ChipConfig, x: &mut [f32]| {
        let mut args = [f32_arg(ArgDirection::InOut, &[16], x)];
        run_body("window_census", body, &mut args, cfg)
    };
    let (code, msg) = fatal(run(&window(4), &mut x));
    assert_eq!(code, ErrorCode::FlowControlDeadlock);
    assert!(msg.contains("at least 8 so far"), "{msg}");
    assert!(
        msg.contains("hold up to 40 tasks at once on ring 1"),
        "{msg}"
    );
    let fit = advised(&msg, "ring_task_window");
    assert_eq!(fit, 64, "{msg}");
    // The nested scope's 20 tasks run out of ring 2's window in turn: its own advice.
    let (_, msg) = fatal(run(
        &with_rings(RingOverrides {
            task_window: Some(RingOverride::PerRing([4, fit, 4, 4])),
            ..Default::default()
        }),
        &mut x,
    ));
    assert!(
        msg.contains("hold up to 20 tasks at once on ring 2"),
        "{msg}"
    );
    let fit2 = advised(&msg, "ring_task_window");
    assert_eq!(fit2, 32, "{msg}");
    // Both advices together fit: the run succeeds.
    let report = run(
        &with_rings(RingOverrides {
            task_window: Some(RingOverride::PerRing([4, fit, fit2, 4])),
            ..Default::default()
        }),
        &mut x,
    )
    .unwrap();
    assert_eq!(report.n_tasks, 72);
}

#[test]
fn the_advised_heap_fits_the_whole_run() {
    // Three 1 KiB outputs fit a 2 KiB heap one at a time but not in one scope; the scope
    // goes on to hold six.
    let body = r#"
    PTO2_SCOPE() { uint32_t s[1] = {256}; TensorCreateInfo ci(s, 1);
        for (int i = 0; i < 6; ++i) { CoreTaskArgs p; p.add_output(ci); rt_submit_aiv_task(0, p); } }"#;
    let heap = |n: u64| {
        with_rings(RingOverrides {
            heap: Some(RingOverride::All(n)),
            ..Default::default()
        })
    };
    let (code, msg) = fatal(run_body("heap_census", body, &mut [], &heap(2048)));
    assert_eq!(code, ErrorCode::HeapRingDeadlock);
    assert!(msg.contains("hold up to 6144 bytes of outputs"), "{msg}");
    let fit = advised(&msg, "ring_heap");
    assert_eq!(fit, 8192, "{msg}");
    run_body("heap_census", body, &mut [], &heap(fit)).unwrap();
}

#[test]
fn small_window_back_pressures_without_deadlock() {
    // 200 scopes of 2 tasks each through a window of 4: the orchestrator waits for reclaim.
    let body = r#"
    ChipTensor x = orch_args.tensor(0).ref();
    for (int s = 0; s < 200; ++s) {
        PTO2_SCOPE() {
            for (int i = 0; i < 2; ++i) { CoreTaskArgs p; p.add_inout(x); rt_submit_aiv_task(0, p); }
        }
    }"#;
    let mut x = vec![0f32; 16];
    let mut args = [f32_arg(ArgDirection::InOut, &[16], &mut x)];
    let cfg = with_rings(RingOverrides {
        task_window: Some(RingOverride::PerRing([8, 4, 0, 0])),
        dep_pool: Some(RingOverride::All(4)),
        ..Default::default()
    });
    let report = run_body("backpressure", body, &mut args, &cfg).unwrap();
    assert_eq!(report.n_tasks, 400);
}

#[test]
fn heap_exhaustion_names_the_ring_and_the_fix() {
    let too_big = r#"
    PTO2_SCOPE() { uint32_t s[1] = {1024}; TensorCreateInfo ci(s, 1); CoreTaskArgs p; p.add_output(ci); rt_submit_aiv_task(0, p); }"#;
    let cfg = with_rings(RingOverrides {
        heap: Some(RingOverride::All(2048)),
        ..Default::default()
    });
    let (code, msg) = fatal(run_body("heap_big", too_big, &mut [], &cfg));
    assert_eq!(code, ErrorCode::HeapRingDeadlock);
    assert!(
        msg.contains("needs 4096 bytes")
            && msg.contains("raise ring_heap (or PTO2_RING_HEAP) to at least 4096"),
        "{msg}"
    );
    run_body(
        "heap_big",
        too_big,
        &mut [],
        &with_rings(RingOverrides {
            heap: Some(RingOverride::All(4096)),
            ..Default::default()
        }),
    )
    .unwrap();

    let held = r#"
    PTO2_SCOPE() { uint32_t s[1] = {256}; TensorCreateInfo ci(s, 1);
        for (int i = 0; i < 3; ++i) { CoreTaskArgs p; p.add_output(ci); rt_submit_aiv_task(0, p); } }"#;
    let (code, msg) = fatal(run_body("heap_held", held, &mut [], &cfg));
    assert_eq!(code, ErrorCode::HeapRingDeadlock);
    assert!(
        msg.contains("heap of ring 1 (2048 bytes)") && msg.contains("heap_held_orch.cpp"),
        "{msg}"
    );
}

#[test]
fn a_heap_that_is_not_a_power_of_two_wraps_cleanly() {
    // Simpler asks a heap of at least 1024 bytes, not a power of two. 2500 bytes hold two
    // 1 KiB outputs; the third wraps to the start. Each scope's producer fills its fresh
    // output with the scope's number and the consumer copies it out: a straddling or
    // overlapping allocation would show as a wrong value.
    let fill = r#"
#include "tensor.h"
extern "C" void kernel_entry(int64_t* args) {
    ChipTensor* out = kernel_tensor(args, 0);
    float v = static_cast<float>(kernel_scalar<int32_t>(args, 1));
    for (uint64_t i = 0; i < out->numel(); ++i) out->data<float>()[i] = v;
}
"#;
    let take = r#"
#include "tensor.h"
extern "C" void kernel_entry(int64_t* args) {
    ChipTensor* in = kernel_tensor(args, 0);
    ChipTensor* x = kernel_tensor(args, 1);
    int32_t at = kernel_scalar<int32_t>(args, 2);
    float sum = 0.0f;
    for (uint64_t i = 0; i < in->numel(); ++i) sum += in->data<float>()[i];
    x->data<float>()[at] = sum / static_cast<float>(in->numel());
}
"#;
    let body = r#"
    ChipTensor x = orch_args.tensor(0).ref();
    for (int32_t s = 0; s < 24; ++s) {
        PTO2_SCOPE() {
            uint32_t shape[1] = {256}; TensorCreateInfo ci(shape, 1);
            CoreTaskArgs p; p.add_output(ci); p.add_scalar(s + 1);
            TaskOutputTensors made = rt_submit_aiv_task(0, p);
            const ChipTensor& t = made.get_ref(0);
            CoreTaskArgs q; q.add_input(t); q.add_inout(x); q.add_scalar(s);
            rt_submit_aiv_task(1, q);
        }
    }"#;
    let program = build(
        "heap_wrap",
        &orchestration(1, body),
        &[
            Kernel {
                func_id: 0,
                name: "heap_fill",
                core: CoreType::Aiv,
                source: fill,
            },
            Kernel {
                func_id: 1,
                name: "heap_take",
                core: CoreType::Aiv,
                source: take,
            },
        ],
    );
    let cfg = with_rings(RingOverrides {
        heap: Some(RingOverride::All(2500)),
        ..Default::default()
    });
    assert_eq!(cfg.rings.heap[1], 2500);
    let mut x = vec![0f32; 24];
    let mut args = [f32_arg(ArgDirection::InOut, &[24], &mut x)];
    pto_runtime::run(&program, &mut args, &cfg).unwrap();
    let want: Vec<f32> = (1..=24).map(|v| v as f32).collect();
    assert_eq!(x, want);
}

#[test]
fn spmd_and_mixed_tasks_run_every_block_and_slot() {
    let kernel = r#"
#include "tensor.h"
extern "C" void kernel_entry(int64_t* args) {
    ChipTensor* out = kernel_tensor(args, 0);
    int32_t slot = kernel_scalar<int32_t>(args, 1);
    // One cell per (block, slot); AIV slots tell sub-blocks apart.
    int32_t sub = get_sub_block_id(args);
    out->data<float>()[get_block_idx(args) * 3 + slot + sub] += 1.0f + get_block_num(args) * 0.0f;
}
"#;
    let body = r#"
    ChipTensor out = orch_args.tensor(0).ref();
    PTO2_SCOPE() {
        CoreTaskArgs p; p.add_inout(out); p.add_scalar((int32_t)0); p.launch_spec.set_block_num(4);
        rt_submit_aic_task(0, p);
        CoreTaskArgs q; q.add_inout(out); q.add_scalar((int32_t)1); q.launch_spec.set_block_num(4);
        rt_submit_task(MixedKernels{INVALID_KERNEL_ID, 1, 1}, q);
    }"#;
    let program = build(
        "spmd",
        &orchestration(1, body),
        &[
            Kernel {
                func_id: 0,
                name: "mark_aic",
                core: CoreType::Aic,
                source: kernel,
            },
            Kernel {
                func_id: 1,
                name: "mark_aiv",
                core: CoreType::Aiv,
                source: kernel,
            },
        ],
    );
    let mut out = vec![0f32; 12];
    let mut args = [f32_arg(ArgDirection::InOut, &[12], &mut out)];
    pto_runtime::run(&program, &mut args, &config()).unwrap();
    assert_eq!(
        out,
        vec![1.0; 12],
        "every block of the AIC task and both AIV slots ran once"
    );
}

#[test]
fn a_kernel_that_never_returns_trips_the_scheduler_timeout() {
    // Sleeps forever without burning a CPU (the stuck worker is leaked by design).
    let stuck = r#"
#include <time.h>
#include "tensor.h"
extern "C" void kernel_entry(int64_t*) { for (;;) { struct timespec ts = {0, 50000000}; nanosleep(&ts, nullptr); } }
"#;
    let body = r#"
    PTO2_SCOPE() { CoreTaskArgs p; rt_submit_aiv_task(0, p); }"#;
    let program = build(
        "stuck",
        &orchestration(0, body),
        &[Kernel {
            func_id: 0,
            name: "spin_forever",
            core: CoreType::Aiv,
            source: stuck,
        }],
    );
    let mut cfg = config();
    cfg.scheduler_timeout = Duration::from_millis(300);
    let started = Instant::now();
    let (code, msg) = fatal(pto_runtime::run(&program, &mut [], &cfg));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(code, ErrorCode::SchedulerTimeout);
    assert!(msg.contains("task r1t0 (kernel 0 'spin_forever'"), "{msg}");
    assert!(
        msg.contains("no task finished and no subtask started for 0.3 s"),
        "{msg}"
    );
    let _ = NOOP;
}

/// The scheduler timeout blamed "no task finished" while the blocks of one SPMD task were
/// progressing: a block starting is progress. Six 150 ms blocks on one worker take 900 ms
/// together, three times the 300 ms limit, and each starts well within it.
#[test]
fn spmd_blocks_that_keep_starting_do_not_trip_the_scheduler_timeout() {
    let slow = r#"
#include <time.h>
#include "tensor.h"
extern "C" void kernel_entry(int64_t*) { struct timespec ts = {0, 150000000}; nanosleep(&ts, nullptr); }
"#;
    let body = r#"
    PTO2_SCOPE() { CoreTaskArgs p; p.launch_spec.set_block_num(6); rt_submit_aiv_task(0, p); }"#;
    let program = build(
        "slow_blocks",
        &orchestration(0, body),
        &[Kernel {
            func_id: 0,
            name: "slow_block",
            core: CoreType::Aiv,
            source: slow,
        }],
    );
    let mut cfg = config();
    cfg.n_workers = Some(1);
    cfg.scheduler_timeout = Duration::from_millis(300);
    pto_runtime::run(&program, &mut [], &cfg).unwrap();
}

#[test]
fn an_interrupt_stops_a_stuck_run() {
    let stuck = r#"
#include <time.h>
#include "tensor.h"
extern "C" void kernel_entry(int64_t*) { for (;;) { struct timespec ts = {0, 50000000}; nanosleep(&ts, nullptr); } }
"#;
    let program = build(
        "interrupted",
        &orchestration(
            0,
            "PTO2_SCOPE() { CoreTaskArgs p; rt_submit_aiv_task(0, p); }",
        ),
        &[Kernel {
            func_id: 0,
            name: "sleep_forever",
            core: CoreType::Aiv,
            source: stuck,
        }],
    );
    let mut cfg = config();
    let started = Instant::now();
    cfg.interrupt = Some(pto_runtime::Interrupt(std::sync::Arc::new(move || {
        started.elapsed() > Duration::from_millis(200)
    })));
    match pto_runtime::run(&program, &mut [], &cfg) {
        Err(RuntimeError::Interrupted) => {}
        other => panic!("expected Interrupted, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// Regression: a kernel abandoned by the timeout that later writes its tensor argument must
/// find the memory still mapped (the chip keeps it alive for detached workers).
#[test]
fn an_abandoned_kernel_can_still_touch_its_arguments() {
    let late = r#"
#include <time.h>
#include "tensor.h"
extern "C" void kernel_entry(int64_t* args) {
    struct timespec ts = {2, 400000000};
    nanosleep(&ts, nullptr);
    ChipTensor* t = kernel_tensor(args, 0);
    for (uint64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = 1.0f;
}
"#;
    let program = build(
        "late_writer",
        &orchestration(1, "ChipTensor x = orch_args.tensor(0).ref(); PTO2_SCOPE() { CoreTaskArgs p; p.add_inout(x); rt_submit_aiv_task(0, p); }"),
        &[Kernel { func_id: 0, name: "late_writer", core: CoreType::Aiv, source: late }],
    );
    let mut cfg = config();
    cfg.scheduler_timeout = Duration::from_millis(150);
    let mut x = vec![0f32; 1 << 16];
    let mut args = [f32_arg(ArgDirection::InOut, &[1 << 16], &mut x)];
    let (code, _) = fatal(pto_runtime::run(&program, &mut args, &cfg));
    assert_eq!(code, ErrorCode::SchedulerTimeout);
    // The abandoned kernel wakes up and writes while this thread goes on.
    std::thread::sleep(Duration::from_millis(2600));
}
