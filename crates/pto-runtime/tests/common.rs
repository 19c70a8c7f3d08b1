//! Shared helpers: compile real C++ with the project's toolchain and load it.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::PathBuf;

use pto_runtime::{ChipConfig, CoreType, KernelSpec, Platform, Program, ProgramSpec};
use pto_toolchain::{CompileUnit, CoreKind, Toolchain, UnitKind};

/// A kernel source for [`build`].
pub struct Kernel<'a> {
    pub func_id: i32,
    pub name: &'a str,
    pub core: CoreType,
    pub source: &'a str,
}

pub fn toolchain() -> Toolchain {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pto-cache");
    match Toolchain::discover(&root) {
        Ok(t) => t,
        Err(e) => panic!("no toolchain: {e}"),
    }
}

/// Compiles an orchestration and kernels (written to a temp dir) and loads them.
pub fn build(name: &str, orchestration: &str, kernels: &[Kernel<'_>]) -> Program {
    build_with(name, orchestration, kernels, &[])
}

/// [`build`] with extra `-D` definitions on every unit (e.g. `PTO_ARCH_A5`).
pub fn build_with(
    name: &str,
    orchestration: &str,
    kernels: &[Kernel<'_>],
    defines: &[&str],
) -> Program {
    let spec = compile(name, orchestration, kernels, defines);
    match Program::load(&spec) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

/// Compiles an orchestration and kernels and returns the spec that loads them with the
/// default entry and config symbols.
pub fn compile(
    name: &str,
    orchestration: &str,
    kernels: &[Kernel<'_>],
    defines: &[&str],
) -> ProgramSpec {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("programs")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let tc = toolchain();
    let orch_path = dir.join(format!("{name}_orch.cpp"));
    std::fs::write(&orch_path, orchestration).unwrap();
    let with_defines = |mut u: CompileUnit| {
        for d in defines {
            u = u.with_define(*d);
        }
        u
    };
    let mut units = vec![with_defines(CompileUnit::new(
        orch_path,
        UnitKind::Orchestration,
    ))];
    for k in kernels {
        let p = dir.join(format!("{}.cpp", k.name));
        std::fs::write(&p, k.source).unwrap();
        let kind = match k.core {
            CoreType::Aic => CoreKind::Aic,
            CoreType::Aiv => CoreKind::Aiv,
        };
        units.push(with_defines(CompileUnit::new(p, UnitKind::Kernel(kind))));
    }
    let results = tc.compile_all(&units);
    let mut objects = Vec::new();
    for r in results {
        match r {
            Ok(o) => objects.push(o.so_path),
            Err(e) => panic!("{e}"),
        }
    }
    ProgramSpec {
        orchestration_so: objects[0].clone(),
        entry_symbol: "aicpu_orchestration_entry".to_string(),
        config_symbol: None,
        kernels: kernels
            .iter()
            .zip(&objects[1..])
            .map(|(k, so)| KernelSpec {
                func_id: k.func_id,
                name: k.name.to_string(),
                core_type: k.core,
                so_path: so.clone(),
            })
            .collect(),
    }
}

/// Compiles `orchestration` alone and returns the compiler's error text; panics when it
/// compiles (the caller expects a compile error).
pub fn orchestration_compile_error(name: &str, orchestration: &str) -> String {
    orchestration_compile_error_with(name, orchestration, &[])
}

/// [`orchestration_compile_error`] with extra `-D` definitions (e.g. `PTO_ARCH_A5`).
pub fn orchestration_compile_error_with(
    name: &str,
    orchestration: &str,
    defines: &[&str],
) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("programs")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let orch_path = dir.join(format!("{name}_orch.cpp"));
    std::fs::write(&orch_path, orchestration).unwrap();
    let mut unit = CompileUnit::new(orch_path, UnitKind::Orchestration);
    for d in defines {
        unit = unit.with_define(*d);
    }
    match toolchain().compile_all(&[unit]).pop() {
        Some(Err(e)) => e.to_string(),
        Some(Ok(o)) => panic!(
            "{name}: expected a compile error, got {}",
            o.so_path.display()
        ),
        None => panic!("{name}: no compile result"),
    }
}

/// A default a2a3sim configuration.
pub fn config() -> ChipConfig {
    ChipConfig::new(Platform::A2a3Sim).unwrap()
}

/// f32 slice as bytes.
pub fn bytes_of(v: &mut [f32]) -> &mut [u8] {
    // SAFETY: f32 has no invalid bit patterns and u8 alignment is 1.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), v.len() * 4) }
}

/// An empty kernel.
pub const NOOP: &str = r#"
#include "tensor.h"
extern "C" void kernel_entry(int64_t* args) { (void)args; }
"#;

/// The exports every test orchestration needs, then `body` as the entry's body.
pub fn orchestration(expected_args: u32, body: &str) -> String {
    format!(
        r#"#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {{
    return PTO2OrchestrationConfig{{.expected_arg_count = {expected_args}}};
}}
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {{
    (void)orch_args;
{body}
}}
"#
    )
}

/// One f32 tensor argument.
pub fn f32_arg<'a>(
    direction: pto_runtime::ArgDirection,
    shape: &[u32],
    data: &'a mut [f32],
) -> pto_runtime::OrchArg<'a> {
    pto_runtime::OrchArg::Tensor(pto_runtime::HostTensor {
        direction,
        dtype: 0,
        shape: shape.to_vec(),
        data: bytes_of(data),
    })
}

/// Builds and runs an orchestration body with no-op kernels 0 (AIV) and 1 (AIC).
pub fn run_body(
    name: &str,
    body: &str,
    args: &mut [pto_runtime::OrchArg<'_>],
    config: &ChipConfig,
) -> Result<pto_runtime::RunReport, pto_runtime::RuntimeError> {
    let program = build(
        name,
        &orchestration(args.len() as u32, body),
        &[
            Kernel {
                func_id: 0,
                name: "noop_aiv",
                core: CoreType::Aiv,
                source: NOOP,
            },
            Kernel {
                func_id: 1,
                name: "noop_aic",
                core: CoreType::Aic,
                source: NOOP,
            },
        ],
    );
    pto_runtime::run(&program, args, config)
}
