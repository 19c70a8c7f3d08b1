//! Runtime overhead with empty kernels: independent tasks, a dependent chain, and a wide
//! fan-out / fan-in graph. Run with `cargo bench -p pto-runtime --bench runtime_overhead`;
//! results go to docs/PERFORMANCE.md.
//!
//! Each scenario is an orchestration compiled with the system C++ compiler and run through
//! the real runtime on `a2a3sim`; the best of several rounds is reported (the first round
//! also warms the task slots and heap pages).

use std::path::PathBuf;
use std::time::Duration;

use pto_runtime::{
    run, ArgDirection, ChipConfig, CoreType, HostTensor, KernelSpec, OrchArg, Platform, Program,
    ProgramSpec,
};
use pto_toolchain::{CompileUnit, CoreKind, Toolchain, UnitKind};

const NOOP: &str =
    "#include \"tensor.h\"\nextern \"C\" void kernel_entry(int64_t* args) { (void)args; }\n";

fn orchestration(body: &str) -> String {
    format!(
        r#"#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {{
    return PTO2OrchestrationConfig{{.expected_arg_count = 1}};
}}
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {{
    ChipTensor x = orch_args.tensor(0).ref();
    (void)x;
{body}
}}
"#
    )
}

struct Scenario {
    name: &'static str,
    body: &'static str,
    n_tasks: u64,
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "independent",
        body: r#"
    for (int s = 0; s < 100; ++s) {
        PTO2_SCOPE() {
            for (int i = 0; i < 1000; ++i) { CoreTaskArgs p; rt_submit_aiv_task(0, p); }
        }
    }"#,
        n_tasks: 100_000,
    },
    Scenario {
        name: "chain",
        body: r#"
    for (int s = 0; s < 100; ++s) {
        PTO2_SCOPE() {
            for (int i = 0; i < 1000; ++i) { CoreTaskArgs p; p.add_inout(x); rt_submit_aiv_task(0, p); }
        }
    }"#,
        n_tasks: 100_000,
    },
    Scenario {
        name: "fanout_fanin",
        body: r#"
    static PTO2TaskId ids[999];
    for (int s = 0; s < 100; ++s) {
        PTO2_SCOPE() {
            CoreTaskArgs root; root.add_output(x); PTO2TaskId r = rt_submit_aiv_task(0, root).task_id();
            for (int i = 0; i < 998; ++i) {
                CoreTaskArgs p; p.set_dependencies(&r, 1); ids[i] = rt_submit_aiv_task(0, p).task_id();
            }
            CoreTaskArgs join; join.set_dependencies(ids, 998); rt_submit_aiv_task(0, join);
        }
    }"#,
        n_tasks: 100_000,
    },
];

fn build(tc: &Toolchain, dir: &std::path::Path, s: &Scenario) -> Program {
    let orch = dir.join(format!("{}_orch.cpp", s.name));
    let kernel = dir.join("noop.cpp");
    std::fs::write(&orch, orchestration(s.body)).expect("write orchestration");
    std::fs::write(&kernel, NOOP).expect("write kernel");
    let objs: Vec<_> = tc
        .compile_all(&[
            CompileUnit::new(orch, UnitKind::Orchestration),
            CompileUnit::new(kernel, UnitKind::Kernel(CoreKind::Aiv)),
        ])
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{e}")).so_path)
        .collect();
    Program::load(&ProgramSpec {
        orchestration_so: objs[0].clone(),
        entry_symbol: "aicpu_orchestration_entry".into(),
        config_symbol: None,
        kernels: vec![KernelSpec {
            func_id: 0,
            name: "noop".into(),
            core_type: CoreType::Aiv,
            so_path: objs[1].clone(),
        }],
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

fn main() {
    let dir = std::env::temp_dir().join(format!("pto-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pto-cache");
    let tc = Toolchain::discover(&cache).unwrap_or_else(|e| panic!("{e}"));
    let rounds: usize = std::env::var("PTO_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    println!(
        "{:<14} {:>10} {:>12} {:>12} {:>14} {:>12}",
        "scenario", "tasks", "wall (ms)", "device (ms)", "tasks/s", "us/task"
    );
    for s in SCENARIOS {
        let program = build(&tc, &dir, s);
        let config = ChipConfig::new(Platform::A2a3Sim).unwrap_or_else(|e| panic!("{e}"));
        let mut best: Option<(Duration, Duration)> = None;
        for _ in 0..rounds {
            let mut x = vec![0u8; 64 * 4];
            let mut args = [OrchArg::Tensor(HostTensor {
                direction: ArgDirection::InOut,
                dtype: 0,
                shape: vec![64],
                data: &mut x,
            })];
            let report = run(&program, &mut args, &config).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(report.n_tasks, s.n_tasks, "{}", s.name);
            if best.is_none_or(|(_, d)| report.device_time < d) {
                best = Some((report.wall, report.device_time));
            }
        }
        let (wall, device) = best.unwrap_or_default();
        let per_task = device.as_secs_f64() * 1e6 / s.n_tasks as f64;
        println!(
            "{:<14} {:>10} {:>12.2} {:>12.2} {:>14.0} {:>12.3}",
            s.name,
            s.n_tasks,
            wall.as_secs_f64() * 1e3,
            device.as_secs_f64() * 1e3,
            s.n_tasks as f64 / device.as_secs_f64(),
            per_task
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
