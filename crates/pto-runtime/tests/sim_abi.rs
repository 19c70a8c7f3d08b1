//! The runtime side of `pto_sim_abi.h`, exercised by kernels that implement the header's
//! half of the contract themselves (a few lines of C++ each): the context's identity and
//! memories, cluster storage shared by a MIX block, faults, and the stop flag that ends a
//! wait when the scheduler timeout fires.

use std::time::Duration;

use pto_runtime::{run, ArgDirection, CoreType, ErrorCode, HostTensor, OrchArg, RuntimeError};

use crate::common::{build, config, orchestration, Kernel};

/// A kernel library with its own `pto_sim_invoke`: binds nothing, runs `BODY(ctx, args)`.
fn sim_kernel(core_type: &str, body: &str) -> String {
    format!(
        r#"
#include <sched.h>
#include "intrinsic.h"
#include "pto_sim_abi.h"
extern "C" __attribute__((visibility("default"))) const int pto_sim_kernel_core_type = {core_type};
static PtoSimContext* g_ctx;
extern "C" __attribute__((visibility("default")))
int pto_sim_invoke(PtoSimContext* ctx, PtoSimKernelEntry entry, int64_t* args) {{
    g_ctx = ctx;
    entry(args);
    int rc = ctx->n_gm_ranges == 0 ? 9 : (int)ctx->reserved0;  // the body stores its status here
    g_ctx = nullptr;
    return rc;
}}
extern "C" void kernel_entry(int64_t* args) {{
    PtoSimContext* ctx = g_ctx;
    ChipTensor* out = kernel_tensor(args, 0);
    int64_t* o = out->data<int64_t>();
    (void)o;
{body}
}}
"#
    )
}

fn i64_arg(data: &mut [i64]) -> OrchArg<'_> {
    let shape = vec![data.len() as u32];
    // SAFETY: i64 has no invalid bit patterns and u8 alignment is 1.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast::<u8>(), data.len() * 8) };
    OrchArg::Tensor(HostTensor {
        direction: ArgDirection::InOut,
        dtype: 7,
        shape,
        data: bytes,
    })
}

const SUBMIT_MIX: &str = r#"
    ChipTensor out = orch_args.tensor(0).ref();
    CoreTaskArgs p;
    p.add_inout(out);
    p.launch_spec.set_block_num(2);
    rt_submit_task(MixedKernels{0, 1, 2}, p);
"#;

#[test]
fn context_identity_memories_and_cluster_storage() {
    // Each core writes its identity into its own row of `out` (8 values per core, 3 cores per
    // block); every core of a block gets the same cluster storage block.
    let body = |slot: usize| {
        format!(
            r#"
    int64_t* row = o + (ctx->block_idx * 3 + {slot}) * 8;
    row[0] = ctx->core_type;
    row[1] = ctx->block_idx * 100 + ctx->block_num;
    row[2] = ctx->subblock_id * 10 + ctx->subblock_dim;
    row[3] = (int64_t)ctx->memory[PTO_SIM_UB].size;
    row[4] = (int64_t)ctx->memory[PTO_SIM_L0C].size;
    uint8_t* s = (uint8_t*)ctx->cluster_storage(ctx, 0x1234, 256);
    row[5] = (int64_t)(uintptr_t)s;
    row[6] = ctx->cluster_id;
    row[7] = ctx->func_id;
    ctx->memory[PTO_SIM_UB].base[ctx->memory[PTO_SIM_UB].size - 1] = 1;  // the buffer is real
    ctx->reserved0 = PTO_SIM_OK;
"#
        )
    };
    let (aic, aiv0, aiv1) = (
        sim_kernel("PTO_SIM_CORE_AIC", &body(0)),
        sim_kernel("PTO_SIM_CORE_AIV", &body(1)),
        sim_kernel("PTO_SIM_CORE_AIV", &body(2)),
    );
    let program = build(
        "sim_abi_identity",
        &orchestration(1, SUBMIT_MIX),
        &[
            Kernel {
                func_id: 0,
                name: "id_aic",
                core: CoreType::Aic,
                source: &aic,
            },
            Kernel {
                func_id: 1,
                name: "id_aiv0",
                core: CoreType::Aiv,
                source: &aiv0,
            },
            Kernel {
                func_id: 2,
                name: "id_aiv1",
                core: CoreType::Aiv,
                source: &aiv1,
            },
        ],
    );
    let mut out = vec![0i64; 2 * 3 * 8];
    let mut cfg = config();
    cfg.platform = pto_runtime::Platform::A5Sim;
    run(&program, &mut [i64_arg(&mut out)], &cfg).unwrap();
    for block in 0..2 {
        let rows: Vec<&[i64]> = (0..3).map(|s| &out[(block * 3 + s) * 8..][..8]).collect();
        assert_eq!([rows[0][0], rows[1][0], rows[2][0]], [0, 1, 1]);
        for (s, row) in rows.iter().enumerate() {
            assert_eq!(row[1], block as i64 * 100 + 2);
            assert_eq!(row[3], 256 * 1024, "a5 UB");
            assert_eq!(row[4], 256 * 1024, "a5 L0C");
            assert_eq!(row[7], s as i64);
            assert_ne!(row[5], 0);
        }
        assert_eq!(
            [rows[0][2], rows[1][2], rows[2][2]],
            [1, 2, 12],
            "sub-block id * 10 + dim"
        );
        assert_eq!(rows[0][5], rows[1][5], "one storage block per cluster");
        assert_eq!(rows[1][5], rows[2][5]);
        assert_eq!(rows[0][6], rows[2][6]);
    }
}

#[test]
fn a_fault_names_the_subtask() {
    let body = r#"
    ctx->fault(ctx, "tile Tile<Vec, float, 16, 16> at offset 196608 is outside UB (196608 bytes)");
    ctx->reserved0 = PTO_SIM_FAULT;
"#;
    let k = sim_kernel("PTO_SIM_CORE_AIV", body);
    let orch = orchestration(
        1,
        r#"
    ChipTensor out = orch_args.tensor(0).ref();
    CoreTaskArgs p;
    p.add_inout(out);
    rt_submit_aiv_task(4, p);
"#,
    );
    let program = build(
        "sim_abi_fault",
        &orch,
        &[Kernel {
            func_id: 4,
            name: "faulty",
            core: CoreType::Aiv,
            source: &k,
        }],
    );
    let mut out = vec![0i64; 8];
    match run(&program, &mut [i64_arg(&mut out)], &config()) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::KernelFault);
            for needle in [
                "task t",
                "kernel 4 'faulty'",
                "AIV core AIV_",
                "outside UB",
                "block 0 of 1",
            ] {
                assert!(message.contains(needle), "{needle:?} missing: {message}");
            }
        }
        other => panic!("expected a kernel fault, got {other:?}"),
    }
}

#[test]
fn the_timeout_names_the_wait_and_the_stop_flag_ends_it() {
    let body = r#"
    static const char what[] = "TPOP on pipe 0 (C2V): waiting for the AIC core to push";
    __atomic_store_n(&ctx->waiting_on, (const char*)what, __ATOMIC_RELEASE);
    while (__atomic_load_n(ctx->stop, __ATOMIC_ACQUIRE) == 0) sched_yield();
    __atomic_store_n(&ctx->waiting_on, (const char*)nullptr, __ATOMIC_RELEASE);
    o[0] = 1;  // proves the kernel returned
    ctx->reserved0 = PTO_SIM_STOPPED;
"#;
    let k = sim_kernel("PTO_SIM_CORE_AIV", body);
    let orch = orchestration(
        1,
        r#"
    ChipTensor out = orch_args.tensor(0).ref();
    CoreTaskArgs p;
    p.add_inout(out);
    rt_submit_aiv_task(0, p);
"#,
    );
    let program = build(
        "sim_abi_stop",
        &orch,
        &[Kernel {
            func_id: 0,
            name: "waiter",
            core: CoreType::Aiv,
            source: &k,
        }],
    );
    let mut out = vec![0i64; 8];
    let mut cfg = config();
    cfg.scheduler_timeout = Duration::from_millis(300);
    match run(&program, &mut [i64_arg(&mut out)], &cfg) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::SchedulerTimeout);
            assert!(
                message.contains("blocked in TPOP on pipe 0 (C2V)"),
                "{message}"
            );
            assert!(message.contains("kernel 0 'waiter'"), "{message}");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[test]
fn a_kernel_built_for_the_other_core_type_is_refused_at_load() {
    let k = sim_kernel("PTO_SIM_CORE_AIC", "    ctx->reserved0 = PTO_SIM_OK;");
    let tc = crate::common::toolchain();
    let dir =
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("programs/sim_abi_wrong_core");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("k.cpp");
    std::fs::write(&src, &k).unwrap();
    let so = tc
        .compile(&pto_toolchain::CompileUnit::new(
            src,
            pto_toolchain::UnitKind::Kernel(pto_toolchain::CoreKind::Aiv),
        ))
        .unwrap()
        .so_path;
    let orch = dir.join("o.cpp");
    std::fs::write(&orch, orchestration(0, "")).unwrap();
    let orch_so = tc
        .compile(&pto_toolchain::CompileUnit::new(
            orch,
            pto_toolchain::UnitKind::Orchestration,
        ))
        .unwrap()
        .so_path;
    let spec = pto_runtime::ProgramSpec {
        orchestration_so: orch_so,
        entry_symbol: "aicpu_orchestration_entry".into(),
        config_symbol: None,
        kernels: vec![pto_runtime::KernelSpec {
            func_id: 0,
            name: "cube_in_disguise".into(),
            core_type: CoreType::Aiv,
            so_path: so,
        }],
    };
    let err = pto_runtime::Program::load(&spec)
        .err()
        .expect("load must fail")
        .to_string();
    assert!(
        err.contains("cube_in_disguise") && err.contains("compiled for AIC"),
        "{err}"
    );
}
