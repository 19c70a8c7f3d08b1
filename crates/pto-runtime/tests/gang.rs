//! Gangs: the cores of a MIX block, and every block of a sync-start task, run at the same
//! time, even with a single worker thread. The kernels here wait for each other through
//! global memory, so a runtime that ran them one after another would never finish (the
//! scheduler timeout would turn that into a failed run).

use std::time::Duration;

use pto_runtime::{run, ArgDirection, CoreType, ErrorCode, HostTensor, OrchArg, RuntimeError};

use crate::common::{build, config, orchestration, Kernel};

/// A handshake over `flags[block]`: for each `(wait, set)` step, wait until the flag equals
/// `wait`, then store `set`; finally record the AIV sub-block id in `ids[block * 3 + slot]`.
fn handshake_kernel(steps: &[(i32, i32)], slot: i32) -> String {
    let body: String = steps
        .iter()
        .map(|(wait, set)| {
            format!(
                "    if (!wait_for(flag, {wait})) return;\n    __atomic_store_n(flag, {set}, __ATOMIC_RELEASE);\n"
            )
        })
        .collect();
    format!(
        r#"
#include <sched.h>
#include "intrinsic.h"
static bool wait_for(int32_t* flag, int32_t v) {{
    for (long spin = 0; __atomic_load_n(flag, __ATOMIC_ACQUIRE) != v; ++spin) {{
        if (spin > 20000000L) return false;  // give up: the test sees the wrong flags
        sched_yield();
    }}
    return true;
}}
extern "C" void kernel_entry(int64_t* args) {{
    ChipTensor* flags = kernel_tensor(args, 0);
    ChipTensor* ids = kernel_tensor(args, 1);
    int32_t b = get_block_idx(args);
    int32_t* flag = flags->data<int32_t>() + b;
{body}    ids->data<int32_t>()[b * 3 + {slot}] = 10 + get_sub_block_id(args);
}}
"#
    )
}

fn i32_arg<'a>(direction: ArgDirection, data: &'a mut [i32]) -> OrchArg<'a> {
    let shape = vec![data.len() as u32];
    // SAFETY: i32 has no invalid bit patterns and u8 alignment is 1.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast::<u8>(), data.len() * 4) };
    OrchArg::Tensor(HostTensor {
        direction,
        dtype: 2,
        shape,
        data: bytes,
    })
}

#[test]
fn mix_block_cores_run_together_with_one_worker() {
    // AIC 0 -> 1, AIV0 1 -> 2, AIC 2 -> 3, AIV0 3 -> 4, AIV1 4 -> 5: no order of running
    // the three one after another gets through; every block has its own flag.
    let aic = handshake_kernel(&[(0, 1), (2, 3)], 0);
    let aiv0 = handshake_kernel(&[(1, 2), (3, 4)], 1);
    let aiv1 = handshake_kernel(&[(4, 5)], 2);
    let orch = orchestration(
        2,
        r#"
    ChipTensor flags = orch_args.tensor(0).ref();
    ChipTensor ids = orch_args.tensor(1).ref();
    CoreTaskArgs p;
    p.add_inout(flags);
    p.add_inout(ids);
    p.launch_spec.set_block_num(3);
    rt_submit_task(MixedKernels{0, 1, 2}, p);
"#,
    );
    let program = build(
        "gang_mix",
        &orch,
        &[
            Kernel {
                func_id: 0,
                name: "mix_aic",
                core: CoreType::Aic,
                source: &aic,
            },
            Kernel {
                func_id: 1,
                name: "mix_aiv0",
                core: CoreType::Aiv,
                source: &aiv0,
            },
            Kernel {
                func_id: 2,
                name: "mix_aiv1",
                core: CoreType::Aiv,
                source: &aiv1,
            },
        ],
    );
    let mut cfg = config();
    cfg.n_workers = Some(1);
    cfg.scheduler_timeout = Duration::from_secs(20);
    let mut flags = vec![0i32; 3];
    let mut ids = vec![0i32; 9];
    let mut args = vec![
        i32_arg(ArgDirection::InOut, &mut flags),
        i32_arg(ArgDirection::InOut, &mut ids),
    ];
    run(&program, &mut args, &cfg).unwrap();
    drop(args);
    assert_eq!(flags, vec![5; 3]);
    assert_eq!(ids, [10, 10, 11].repeat(3));
}

const RENDEZVOUS: &str = r#"
#include <sched.h>
#include "intrinsic.h"
extern "C" void kernel_entry(int64_t* args) {
    ChipTensor* counter = kernel_tensor(args, 0);
    ChipTensor* out = kernel_tensor(args, 1);
    int32_t n = get_block_num(args);
    int32_t* c = counter->data<int32_t>();
    __atomic_add_fetch(c, 1, __ATOMIC_ACQ_REL);
    for (long spin = 0; __atomic_load_n(c, __ATOMIC_ACQUIRE) < n; ++spin) {
        if (spin > 200000000L) return;
        sched_yield();
    }
    out->data<int32_t>()[get_block_idx(args)] = 1;
}
"#;

fn sync_start_orch(blocks: u32, submit: &str) -> String {
    orchestration(
        2,
        &format!(
            r#"
    ChipTensor counter = orch_args.tensor(0).ref();
    ChipTensor out = orch_args.tensor(1).ref();
    CoreTaskArgs p;
    p.add_inout(counter);
    p.add_inout(out);
    p.launch_spec.set_block_num({blocks});
    p.launch_spec.set_require_sync_start(true);
    {submit};
"#
        ),
    )
}

#[test]
fn sync_start_blocks_launch_together() {
    let program = build(
        "gang_sync_start",
        &sync_start_orch(8, "rt_submit_aiv_task(0, p)"),
        &[Kernel {
            func_id: 0,
            name: "rendezvous",
            core: CoreType::Aiv,
            source: RENDEZVOUS,
        }],
    );
    let mut cfg = config();
    cfg.n_workers = Some(1);
    cfg.scheduler_timeout = Duration::from_secs(20);
    let mut counter = vec![0i32; 1];
    let mut out = vec![0i32; 8];
    let mut args = vec![
        i32_arg(ArgDirection::InOut, &mut counter),
        i32_arg(ArgDirection::InOut, &mut out),
    ];
    run(&program, &mut args, &cfg).unwrap();
    drop(args);
    assert_eq!(counter, vec![8]);
    assert_eq!(out, vec![1; 8]);
}

#[test]
fn sync_start_above_the_cluster_count_is_rejected() {
    let program = build(
        "gang_sync_start_limit",
        &sync_start_orch(25, "rt_submit_aic_task(0, p)"),
        &[Kernel {
            func_id: 0,
            name: "rendezvous_aic",
            core: CoreType::Aic,
            source: RENDEZVOUS,
        }],
    );
    let mut counter = vec![0i32; 1];
    let mut out = vec![0i32; 25];
    let mut args = vec![
        i32_arg(ArgDirection::InOut, &mut counter),
        i32_arg(ArgDirection::InOut, &mut out),
    ];
    match run(&program, &mut args, &config()) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::RequireSyncStartInvalid);
            assert!(
                message.contains("25 blocks") && message.contains("24 clusters"),
                "{message}"
            );
            assert!(
                message.contains(".cpp:"),
                "names the orchestration line: {message}"
            );
        }
        other => panic!("expected REQUIRE_SYNC_START_INVALID, got {other:?}"),
    }
}
