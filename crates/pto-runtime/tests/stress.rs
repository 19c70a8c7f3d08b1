//! Stress: a random task graph over shared tensors, with small rings. Every task must run
//! exactly once and after every producer the runtime wired (checked on real timestamps
//! taken inside the kernels).

use pto_runtime::{
    run, ArgDirection, CoreType, HostTensor, OrchArg, RingOverride, RingOverrides, RingSizes,
};

use crate::common::{build, config, orchestration, Kernel};

const N_TASKS: usize = 3000;

/// Logs a start and an end tick from a global counter; block 0 of each task logs.
const LOG_KERNEL: &str = r#"
#include "tensor.h"
extern "C" void kernel_entry(int64_t* args) {
    ChipTensor* log = kernel_tensor(args, 0);
    uint64_t i = (uint64_t)args[2];
    uint64_t* cells = log->data<uint64_t>();
    uint64_t t0 = __atomic_fetch_add(&cells[0], 1, __ATOMIC_SEQ_CST);
    if (get_block_idx(args) == 0) __atomic_store_n(&cells[1 + 3 * i], t0 + 1, __ATOMIC_SEQ_CST);
    volatile int spin = 0;
    for (int k = 0; k < 200; ++k) spin += k;
    uint64_t t1 = __atomic_fetch_add(&cells[0], 1, __ATOMIC_SEQ_CST);
    if (get_block_idx(args) == 0) {
        __atomic_store_n(&cells[2 + 3 * i], t1 + 1, __ATOMIC_SEQ_CST);
        __atomic_fetch_add(&cells[3 + 3 * i], 1, __ATOMIC_SEQ_CST);
    }
}
"#;

fn body() -> String {
    format!(
        r#"
    ChipTensor log = orch_args.tensor(0).ref();
    ChipTensor pool = orch_args.tensor(1).ref();   // [8, 64] f32: rows are the shared tensors
    uint64_t state = 12345;
    auto next = [&]() {{ state = state * 6364136223846793005ull + 1442695040888963407ull; return (uint32_t)(state >> 33); }};
    uint64_t i = 0;
    while (i < {N_TASKS}) {{
        PTO2_SCOPE() {{
            for (int k = 0; k < 40 && i < {N_TASKS}; ++k, ++i) {{
                CoreTaskArgs p;
                p.add_no_dep(log);
                uint32_t r = next() % 8, c0 = (next() % 2) * 32;
                uint32_t s[2] = {{1, 32}};
                uint32_t o[2] = {{r, c0}};
                uint32_t s2[2] = {{2, 64}};
                uint32_t o2[2] = {{r / 2 * 2, 0}};
                ChipTensor row = pool.view(s, o), pair = pool.view(s2, o2);
                switch (next() % 3) {{
                    case 0: p.add_input(row); break;
                    case 1: p.add_inout(row); break;
                    default: p.add_inout(pair);
                }}
                p.add_scalar(i);
                if (next() % 10 == 0) p.launch_spec.set_block_num(3);
                if (next() % 2) rt_submit_aiv_task(0, p); else rt_submit_aic_task(1, p);
            }}
        }}
    }}"#
    )
}

#[test]
fn random_graphs_run_each_task_once_in_dependency_order() {
    let program = build(
        "stress",
        &orchestration(2, &body()),
        &[
            Kernel {
                func_id: 0,
                name: "log_aiv",
                core: CoreType::Aiv,
                source: LOG_KERNEL,
            },
            Kernel {
                func_id: 1,
                name: "log_aic",
                core: CoreType::Aic,
                source: LOG_KERNEL,
            },
        ],
    );
    for platform in [pto_runtime::Platform::A2a3Sim, pto_runtime::Platform::Cpu] {
        for round in 0..3 {
            let mut cfg = config();
            cfg.platform = platform;
            cfg.record_deps = true;
            // Small rings: the orchestrator must wait for reclaim all the time.
            cfg.rings = RingSizes::resolve_with_env(
                &RingOverrides {
                    task_window: Some(RingOverride::All(64)),
                    dep_pool: Some(RingOverride::All(256)),
                    ..Default::default()
                },
                &|_| None,
            )
            .unwrap();
            let mut log = vec![0u8; (1 + 3 * N_TASKS) * 8];
            let mut pool = vec![0u8; 8 * 64 * 4];
            let mut args = [
                OrchArg::Tensor(HostTensor {
                    direction: ArgDirection::InOut,
                    dtype: 8,
                    shape: vec![(1 + 3 * N_TASKS) as u32],
                    data: &mut log,
                }),
                OrchArg::Tensor(HostTensor {
                    direction: ArgDirection::InOut,
                    dtype: 0,
                    shape: vec![8, 64],
                    data: &mut pool,
                }),
            ];
            let report = run(&program, &mut args, &cfg)
                .unwrap_or_else(|e| panic!("{platform} round {round}: {e}"));
            drop(args);
            let cells: Vec<u64> = log
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let start = |i: usize| cells[1 + 3 * i];
            let end = |i: usize| cells[2 + 3 * i];
            let count = |i: usize| cells[3 + 3 * i];
            for i in 0..N_TASKS {
                assert_eq!(
                    count(i),
                    1,
                    "{platform} round {round}: task {i} ran {} times",
                    count(i)
                );
                assert!(start(i) > 0 && end(i) > start(i));
            }
            let deps = report.deps.unwrap();
            let index: std::collections::HashMap<u64, usize> = deps
                .tasks
                .iter()
                .enumerate()
                .map(|(i, t)| (t.id.0, i))
                .collect();
            assert_eq!(index.len(), N_TASKS);
            let mut checked = 0;
            for e in &deps.edges {
                let (p, s) = (index[&e.pred.0], index[&e.succ.0]);
                assert!(
                    end(p) < start(s),
                    "{platform} round {round}: edge {p} -> {s} ran out of order"
                );
                checked += 1;
            }
            assert!(
                checked > N_TASKS / 2,
                "the graph must have dependencies ({checked})"
            );
        }
    }
}
