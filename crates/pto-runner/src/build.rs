//! Compiling and loading a single-chip build directory's program.

use std::path::Path;
use std::time::{Duration, Instant};

use pto_build_output::{CompiledMeta, CoreType as KcCore, KernelConfig, ParamDirection};
use pto_runtime::{CoreType, KernelSpec, Program, ProgramSpec};
use pto_toolchain::{CompileUnit, CoreKind, Toolchain, UnitKind};

use crate::error::RunnerError;

/// What was compiled.
#[derive(Clone, Debug, Default)]
pub struct CompileSummary {
    /// Units compiled or found in the cache (orchestration + kernels).
    pub n_units: usize,
    /// Units served from the cache.
    pub n_cached: usize,
    /// Time spent.
    pub elapsed: Duration,
}

/// A build directory compiled and loaded, ready to run any number of times
/// (`CompiledProgram.from_dir`).
pub struct CompiledBuild {
    /// The build directory.
    pub dir: std::path::PathBuf,
    /// `kernel_config.py`.
    pub kernel_config: KernelConfig,
    /// `compiled_meta.json`.
    pub meta: CompiledMeta,
    /// The loaded program.
    pub program: Program,
    /// What compiling took.
    pub compile: CompileSummary,
}

/// Loads a single-chip build directory: checks its layout, then [`load_build`] with the
/// default toolchain. Like `CompiledProgram.from_dir`, it never splices `.pto` files nor
/// invalidates cached binaries.
pub fn load(dir: &Path) -> Result<CompiledBuild, RunnerError> {
    match pto_build_output::BuildLayout::detect(dir)? {
        pto_build_output::BuildLayout::SingleChip => {}
        other => {
            return Err(RunnerError::config(format!(
                "{}: a {:?} build cannot be run on one chip; load one of its single-chip sub-builds (next_levels/<name>/) instead",
                dir.display(),
                other.kind()
            )))
        }
    }
    let toolchain = Toolchain::discover(&pto_toolchain::default_cache_root())?;
    load_build(dir, &toolchain)
}

/// Loads `kernel_config.py` and `compiled_meta.json`, compiles every unit (through the
/// content-addressed cache) and loads the program.
pub fn load_build(dir: &Path, toolchain: &Toolchain) -> Result<CompiledBuild, RunnerError> {
    let kernel_config = KernelConfig::load(&dir.join("kernel_config.py"))?;
    let meta = CompiledMeta::load(dir)?;
    check_signature(dir, &kernel_config, &meta)?;
    let started = Instant::now();
    let mut units = vec![CompileUnit::new(
        kernel_config.orchestration.source.clone(),
        UnitKind::Orchestration,
    )];
    for k in &kernel_config.kernels {
        let core = match k.core_type {
            KcCore::Aic => CoreKind::Aic,
            KcCore::Aiv => CoreKind::Aiv,
        };
        let mut unit = CompileUnit::new(k.source.clone(), UnitKind::Kernel(core));
        for inc in &k.extra_include_dirs {
            unit = unit.with_include_dir(inc.clone());
        }
        units.push(unit);
    }
    let mut objects = Vec::with_capacity(units.len());
    let mut n_cached = 0;
    for res in toolchain.compile_all(&units) {
        let obj = res?;
        n_cached += obj.cache_hit as usize;
        objects.push(obj.so_path);
    }
    let compile = CompileSummary {
        n_units: units.len(),
        n_cached,
        elapsed: started.elapsed(),
    };
    let spec = ProgramSpec {
        orchestration_so: objects[0].clone(),
        entry_symbol: kernel_config.orchestration.function_name.clone(),
        kernels: kernel_config
            .kernels
            .iter()
            .zip(&objects[1..])
            .map(|(k, so)| KernelSpec {
                func_id: k.func_id,
                name: k.name.clone(),
                core_type: match k.core_type {
                    KcCore::Aic => CoreType::Aic,
                    KcCore::Aiv => CoreType::Aiv,
                },
                so_path: so.clone(),
            })
            .collect(),
    };
    let program = Program::load(&spec)?;
    Ok(CompiledBuild {
        dir: dir.to_path_buf(),
        kernel_config,
        meta,
        program,
        compile,
    })
}

/// The orchestration signature in `kernel_config.py` (tensors only) must agree with the
/// tensor parameters of `compiled_meta.json`.
fn check_signature(dir: &Path, kc: &KernelConfig, meta: &CompiledMeta) -> Result<(), RunnerError> {
    let Some(sig) = &kc.orchestration.signature else {
        return Ok(());
    };
    let from_meta: Vec<&str> = meta
        .params
        .iter()
        .filter(|p| !p.is_scalar())
        .map(|p| match p.direction {
            ParamDirection::In => "IN",
            ParamDirection::Out => "OUT",
            ParamDirection::InOut => "INOUT",
        })
        .collect();
    let from_kc: Vec<&str> = sig
        .iter()
        .filter(|d| **d != pto_build_output::ArgDirection::Scalar)
        .map(|d| d.name())
        .collect();
    if from_kc.len() != from_meta.len() || from_kc.iter().zip(&from_meta).any(|(a, b)| a != b) {
        return Err(RunnerError::Data {
            path: dir.join("kernel_config.py"),
            message: format!(
                "ORCHESTRATION signature {from_kc:?} disagrees with the tensor parameters of compiled_meta.json {from_meta:?}; recompile via ir.compile() to refresh both"
            ),
        });
    }
    Ok(())
}
