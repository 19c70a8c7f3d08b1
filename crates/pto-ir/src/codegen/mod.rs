//! Codegen into a build directory: the single-chip layout of PyPTO's `ir.compile`
//! (`pypto-runtime-layer.md` §1.2), written through `pto-build-output`'s writers so a
//! compiled program is an ordinary build directory that replay, `from_dir` and benchmarks
//! take:
//!
//! ```text
//! <out>/kernel_config.py          KernelConfig::write (func_ids in kernel definition order)
//! <out>/compiled_meta.json        CompiledMeta::write (params, num_return_types, platform)
//! <out>/orchestration/<orch>.cpp  [`orchestration`]
//! <out>/ptoas/<kernel>.pto        [`pto`]: the editable input of the .pto splice
//! <out>/ptoas/<kernel>.cpp        the raw ptoas output (its mtime is the unit's build stamp)
//! <out>/kernels/<aic|aiv>/<kernel>.cpp   [`wrapper`]: header + sentinels + kernel_entry
//! <out>/passes_dump/NN_*.py       the IR before and after each pass (with dump_passes)
//! <out>/report/                   always created, as PyPTO does
//! ```
//!
//! A program whose entry is a HOST function compiles into PyPTO's L3 layout instead
//! ([`host`]: `distributed_meta.json`, `orchestration/host_orch.py`, `next_levels/<chip>/`).
//!
//! Build-kind markers of another layout (`distributed_meta.json`, `orchestration/host_orch.py`
//! ...) left by an earlier build in the same directory are deleted. `debug/run.py` and
//! `golden.py` are written by the Python front end (they need the caller's inputs and
//! reference).

pub mod host;
pub mod orchestration;
pub mod pto;
pub mod wrapper;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pto_build_output::kernel_config::{DEFAULT_ORCHESTRATION_FUNCTION, DEFAULT_RUNTIME};
use pto_build_output::{
    ArgDirection, BackendType, BuildKind, CompiledMeta, CoreType, KernelConfig, KernelEntry,
    OrchestrationConfig, ParamInfo, RuntimeConfig,
};

use crate::error::CompileError;
use crate::fsutil::{create_dir, write_file};
use crate::ir::{Function, Program};
use crate::passes::ssa::base_name;
use crate::types::{FunctionType, ParamDirection, Type};
use orchestration::KernelInfo;

/// How to compile.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// The platform recorded in `compiled_meta.json` (`a2a3sim` unless told).
    pub platform: String,
    /// The backend recorded in `compiled_meta.json`.
    pub backend_type: BackendType,
    /// Write `passes_dump/` (PyPTO's `ir.compile` default).
    pub dump_passes: bool,
}

impl CompileOptions {
    /// The defaults of `ir.compile`: `a2a3sim`, Ascend910B, passes dumped.
    pub fn new() -> CompileOptions {
        CompileOptions {
            platform: "a2a3sim".to_string(),
            backend_type: BackendType::Ascend910B,
            dump_passes: true,
        }
    }
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions::new()
    }
}

/// How long each step took (the compile-time benchmark reads these).
#[derive(Clone, Debug, Default)]
pub struct CompileTimings {
    /// The passes (with their snapshots).
    pub passes: Duration,
    /// `.pto` and orchestration emission.
    pub codegen: Duration,
    /// ptoas (all kernels).
    pub ptoas: Duration,
    /// Writing the build directory's files (sources, manifest, sidecar).
    pub write: Duration,
}

/// What a compilation produced.
#[derive(Clone, Debug)]
pub struct CompileReport {
    /// The build directory.
    pub output_dir: PathBuf,
    /// The orchestration function.
    pub orchestration: String,
    /// The kernels, by func_id.
    pub kernels: Vec<String>,
    /// The orchestration parameters (what `compiled_meta.json` records).
    pub params: Vec<ParamInfo>,
    /// Step durations.
    pub timings: CompileTimings,
    /// The program after the passes.
    pub program: Program,
}

fn meta_direction(d: ParamDirection) -> pto_build_output::ParamDirection {
    match d {
        ParamDirection::In => pto_build_output::ParamDirection::In,
        ParamDirection::Out => pto_build_output::ParamDirection::Out,
        ParamDirection::InOut => pto_build_output::ParamDirection::InOut,
    }
}

fn arg_direction(d: ParamDirection) -> ArgDirection {
    match d {
        ParamDirection::In => ArgDirection::In,
        ParamDirection::Out => ArgDirection::Out,
        ParamDirection::InOut => ArgDirection::InOut,
    }
}

/// Compiles `program` into `output_dir` (created; existing files are overwritten, others
/// kept, as `ir.compile` never clears a directory).
pub fn compile(
    program: Program,
    output_dir: &Path,
    options: &CompileOptions,
) -> Result<CompileReport, CompileError> {
    let t0 = Instant::now();
    create_dir(output_dir)?;
    // Sources are recorded relative to the build directory: work with absolute paths.
    let absolute = std::path::absolute(output_dir).map_err(|source| CompileError::Io {
        action: "resolve",
        path: output_dir.to_path_buf(),
        source,
    })?;
    let output_dir = absolute.as_path();
    let dump = options.dump_passes.then(|| output_dir.join("passes_dump"));
    let program = crate::passes::run_pipeline(program, dump.as_deref())?;
    let mut timings = CompileTimings {
        passes: t0.elapsed(),
        ..CompileTimings::default()
    };

    let orch = single_orchestration(&program)?;

    check_function_names(&program)?;

    // Kernels in definition order: their func_ids.
    let t1 = Instant::now();
    let units = emit_kernels(&program)?;
    let infos = kernel_infos(&program, &units, &orch)?;
    let orch_cpp = orchestration::emit_orchestration(&orch, &infos)?;
    timings.codegen = t1.elapsed();

    let mut kernel_entries = Vec::new();
    let mut write_time = Duration::ZERO;
    let mut ptoas_time = Duration::ZERO;
    for (i, u) in units.iter().enumerate() {
        let pto_path = output_dir.join("ptoas").join(format!("{}.pto", u.name));
        let tw = Instant::now();
        write_file(&pto_path, u.pto.as_bytes())?;
        write_time += tw.elapsed();
        let tp = Instant::now();
        let file = format!("{}.pto", u.name);
        let options = ptoas::Options {
            arch: None,
            level: ptoas::Level::Level2,
            infer_layout: true,
            insert_sync: true,
        };
        let raw = ptoas::translate(&u.pto, &file, &options)
            .map_err(|e| ptoas_error(&e, &program, &u.name, &pto_path))?;
        ptoas_time += tp.elapsed();
        let tw = Instant::now();
        write_file(
            &output_dir.join("ptoas").join(format!("{}.cpp", u.name)),
            raw.as_bytes(),
        )?;
        let core = if u.cube { CoreType::Aic } else { CoreType::Aiv };
        let src = output_dir
            .join("kernels")
            .join(core.as_str())
            .join(format!("{}.cpp", u.name));
        let wrapped =
            wrapper::kernel_source(&u.name, &u.params, raw.as_bytes()).ok_or_else(|| {
                CompileError::program(
                    "codegen",
                    &orch.span,
                    "kernel wrapper without sentinels".into(),
                    "",
                )
            })?;
        write_file(&src, &wrapped)?;
        write_time += tw.elapsed();
        let f = program.function(&u.name);
        let signature = f.map(|f| {
            f.params
                .iter()
                .filter(|p| p.var.ty().is_tensor())
                .map(|p| arg_direction(p.direction))
                .collect()
        });
        kernel_entries.push(KernelEntry {
            func_id: i as i32,
            name: u.name.clone(),
            source: src,
            core_type: core,
            signature,
            extra_include_dirs: Vec::new(),
            external: false,
        });
    }
    timings.ptoas = ptoas_time;

    let tw = Instant::now();
    let orch_src = output_dir
        .join("orchestration")
        .join(format!("{}.cpp", orch.name));
    write_file(&orch_src, orch_cpp.as_bytes())?;
    let config = KernelConfig {
        runtime: RuntimeConfig {
            runtime: DEFAULT_RUNTIME.to_string(),
            aicpu_thread_num: 0,
            enable_sdma: false,
        },
        orchestration: OrchestrationConfig {
            source: orch_src,
            function_name: DEFAULT_ORCHESTRATION_FUNCTION.to_string(),
            config_name: None,
            signature: Some(
                orch.params
                    .iter()
                    .filter(|p| p.var.ty().is_tensor())
                    .map(|p| arg_direction(p.direction))
                    .collect(),
            ),
        },
        kernels: kernel_entries,
    };
    config.write(&output_dir.join("kernel_config.py"))?;
    let params = orchestration_params(&orch)?;
    let meta = CompiledMeta {
        params: params.clone(),
        num_return_types: orch.return_types.len() as u64,
        platform: Some(options.platform.clone()),
        backend_type: options.backend_type,
    };
    meta.write(output_dir)?;
    create_dir(&output_dir.join("report"))?;
    pto_build_output::drop_foreign_build_markers(output_dir, BuildKind::SingleChip)
        .map_err(|e| CompileError::BuildOutput(e.into()))?;
    write_time += tw.elapsed();
    timings.write = write_time;

    Ok(CompileReport {
        output_dir: output_dir.to_path_buf(),
        orchestration: orch.name.clone(),
        kernels: units.iter().map(|u| u.name.clone()).collect(),
        params,
        timings,
        program,
    })
}

/// The error of ptoas on kernel `name` (written to `pto_path`): a tile overflow is the
/// program's, anything else ptoas's.
fn ptoas_error(e: &ptoas::Error, program: &Program, name: &str, pto_path: &Path) -> CompileError {
    let message = match e.excerpt() {
        Some(x) => format!("{e}\n{x}"),
        None => e.to_string(),
    };
    if e.kind() == ptoas::ErrorKind::Memory {
        let f = program.function(name);
        CompileError::program(
            "ptoas",
            &f.map(|f| f.span.clone()).unwrap_or_default(),
            format!("the tiles of kernel '{name}' do not fit its on-chip memory: {message}"),
            "Use smaller tiles, or fewer tiles alive at the same time.",
        )
    } else {
        CompileError::Ptoas {
            pto: pto_path.to_path_buf(),
            message,
        }
    }
}

/// What the orchestration needs of each kernel (func_id, core, parameters), by name.
fn kernel_infos(
    program: &Program,
    units: &[pto::KernelUnit],
    orch: &Function,
) -> Result<HashMap<String, KernelInfo>, CompileError> {
    let mut infos = HashMap::new();
    for (i, u) in units.iter().enumerate() {
        let f = program.function(&u.name).ok_or_else(|| {
            CompileError::program("codegen", &orch.span, format!("no kernel {}", u.name), "")
        })?;
        infos.insert(
            u.name.clone(),
            KernelInfo {
                func_id: i as i32,
                cube: u.cube,
                params: f
                    .params
                    .iter()
                    .map(|p| (p.var.ty().clone(), p.direction))
                    .collect(),
                return_params: u.return_params.clone(),
            },
        );
    }
    Ok(infos)
}

/// The program's one orchestration function (several are not supported yet).
fn single_orchestration(program: &Program) -> Result<Function, CompileError> {
    let orchs: Vec<_> = program.orchestrations().collect();
    match orchs.as_slice() {
        [o] => Ok((*o).clone()),
        [] => {
            let span = program
                .functions
                .first()
                .map(|f| f.span.clone())
                .unwrap_or_default();
            Err(CompileError::program(
                "codegen",
                &span,
                format!("program {} has no Orchestration function", program.name),
                "Add a @pl.function(type=pl.FunctionType.Orchestration) method that calls the kernels.",
            ))
        }
        [_, second, ..] => {
            Err(CompileError::program(
                "codegen",
                &second.span,
                format!(
                    "program {} has {} Orchestration functions; multi-orchestration builds (next_levels/) are not supported yet",
                    program.name,
                    orchs.len()
                ),
                "Keep one Orchestration function per program.",
            ))
        }
    }
}

/// Checks that no function's name is a C++ keyword or one ptoas reserves.
fn check_function_names(program: &Program) -> Result<(), CompileError> {
    // Every kernel and the orchestration become C++ functions of their own names: a C++
    // keyword there made ptoas refuse the generated code ("internal error").
    for f in &program.functions {
        let value_name = f.name.len() > 1
            && f.name.starts_with('v')
            && f.name[1..].bytes().all(|b| b.is_ascii_digit());
        if CPP_KEYWORDS.contains(&f.name.as_str()) || value_name {
            let what = if value_name {
                "a name ptoas reserves for its values (v<N>)"
            } else {
                "the name of a C++ keyword"
            };
            return Err(CompileError::program(
                "codegen",
                &f.span,
                format!(
                    "function '{}' has {what}; kernels and the orchestration become C++ functions of their own names",
                    f.name
                ),
                &format!("Rename the method (for example '{}_kernel').", f.name),
            ));
        }
    }
    Ok(())
}

/// The `.pto` units of the program's kernels, in definition order (their func_ids).
fn emit_kernels(program: &Program) -> Result<Vec<pto::KernelUnit>, CompileError> {
    let mut units = Vec::new();
    for f in &program.functions {
        match f.ftype {
            FunctionType::Aic | FunctionType::Aiv => units.push(pto::emit_kernel(f)?),
            FunctionType::Orchestration => {}
            other => {
                return Err(CompileError::program(
                    "codegen",
                    &f.span,
                    format!(
                        "function '{}' of type {} has no codegen (only Orchestration, AIC, AIV and InCore functions are compiled)",
                        f.name,
                        other.name()
                    ),
                    "Give it type Orchestration, InCore, AIC, AIV or Inline.",
                ))
            }
        }
    }
    Ok(units)
}

/// The orchestration's parameters as `compiled_meta.json` records them.
fn orchestration_params(orch: &Function) -> Result<Vec<ParamInfo>, CompileError> {
    let mut params = Vec::new();
    for p in &orch.params {
        let (shape, dtype) = match p.var.ty() {
            Type::Tensor(t) => (Some(t.shape.clone()), t.dtype),
            Type::Scalar(d) => (None, *d),
            other => {
                return Err(CompileError::program(
                    "codegen",
                    &orch.span,
                    format!("parameter '{}' is a {}", p.var.name(), other.describe()),
                    "Orchestration parameters are tensors and scalars.",
                ))
            }
        };
        params.push(ParamInfo {
            name: base_name(p.var.name()).to_string(),
            direction: meta_direction(p.direction),
            shape,
            dtype: dtype.pypto_str().to_string(),
        });
    }
    Ok(params)
}

/// C++ keywords (and alternative tokens), which no kernel, orchestration or generated
/// variable may be named.
pub(crate) const CPP_KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "concept",
    "const",
    "consteval",
    "constexpr",
    "constinit",
    "const_cast",
    "continue",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
];
