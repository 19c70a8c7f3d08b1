//! Compiling and loading a single-chip build directory's program.

use std::path::Path;
use std::time::{Duration, Instant};

use pto_build_output::{CompiledMeta, CoreType as KcCore, KernelConfig, ParamDirection};
use pto_runtime::{CoreType, KernelSpec, Program, ProgramSpec};
use std::path::PathBuf;

use pto_toolchain::binary_cache::{
    binary_path_for, install_binary, BinaryCacheBuild, BinaryContext,
};
use pto_toolchain::freshness::{LoadedFiles, ProgramIdentity, UnitsRecord};
use pto_toolchain::{CompileUnit, CoreKind, Toolchain, ToolchainError, UnitKind};

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
    /// The compiled objects it was loaded from (content-addressed, never rewritten), so a
    /// chip process can load the same program without compiling.
    pub spec: ProgramSpec,
    /// What identifies the loaded program (`pto_toolchain::freshness`): a chip process is
    /// reused for this build only while it holds a program of this identity.
    pub identity: ProgramIdentity,
    /// The platform the program was compiled and loaded for (part of its identity).
    pub platform: pto_runtime::Platform,
    /// The files the program was built from, as they were at load: a run after one changed
    /// says that it used the program as loaded (empty for a program a chip process loads
    /// from the host's objects: the host reports).
    pub loaded_files: LoadedFiles,
}

/// The identity of the program `spec` loads for `platform`, configured by `dir`'s
/// `kernel_config.py` and `compiled_meta.json` (read now: call it where they were read).
pub fn program_identity(
    dir: &Path,
    platform: pto_runtime::Platform,
    spec: &ProgramSpec,
) -> ProgramIdentity {
    let mut objects: Vec<&Path> = Vec::with_capacity(spec.kernels.len() + 1);
    objects.push(&spec.orchestration_so);
    objects.extend(spec.kernels.iter().map(|k| k.so_path.as_path()));
    let kc = dir.join("kernel_config.py");
    let meta = dir.join("compiled_meta.json");
    ProgramIdentity::compute(platform.name(), &objects, &[&kc, &meta])
}

impl CompiledBuild {
    /// Loads a build from objects compiled before (by the host, for a chip process):
    /// reads `kernel_config.py` and `compiled_meta.json` of `dir` and loads `spec`. With
    /// `expected` (the identity the host computed), a program whose configuration files
    /// changed since is refused before anything is loaded.
    pub fn from_spec(
        dir: &Path,
        platform: pto_runtime::Platform,
        spec: ProgramSpec,
        expected: Option<&ProgramIdentity>,
    ) -> Result<CompiledBuild, RunnerError> {
        let kernel_config = KernelConfig::load(&dir.join("kernel_config.py"))?;
        let meta = CompiledMeta::load(dir)?;
        let identity = program_identity(dir, platform, &spec);
        if let Some(expected) = expected.filter(|e| **e != identity) {
            return Err(RunnerError::config(format!(
                "{}: kernel_config.py or compiled_meta.json changed while the program was being loaded (identity {} in the host, {} here); run again to load the edited program",
                dir.display(),
                expected.short(),
                identity.short(),
            )));
        }
        let program = Program::load(&spec)?;
        Ok(CompiledBuild {
            dir: dir.to_path_buf(),
            kernel_config,
            meta,
            program,
            compile: CompileSummary {
                n_units: spec.kernels.len() + 1,
                n_cached: spec.kernels.len() + 1,
                elapsed: std::time::Duration::ZERO,
            },
            spec,
            identity,
            platform,
            loaded_files: LoadedFiles::default(),
        })
    }
}

impl CompiledBuild {
    /// [`CompiledBuild::from_spec`] for a chip program of an L3 build
    /// (`next_levels/<name>/`), which has no `compiled_meta.json`.
    pub fn from_spec_sub_build(
        dir: &Path,
        platform: pto_runtime::Platform,
        spec: ProgramSpec,
    ) -> Result<CompiledBuild, RunnerError> {
        let kernel_config = KernelConfig::load(&dir.join("kernel_config.py"))?;
        let meta = meta_from_signature(&kernel_config);
        let identity = program_identity(dir, platform, &spec);
        let program = Program::load(&spec)?;
        Ok(CompiledBuild {
            dir: dir.to_path_buf(),
            kernel_config,
            meta,
            program,
            compile: CompileSummary::default(),
            spec,
            identity,
            platform,
            loaded_files: LoadedFiles::default(),
        })
    }
}

/// Loads a chip program of an L3 build (`next_levels/<name>/`): like [`load_for`], but the
/// sub-build has no sidecar (PyPTO writes none there); its parameters are the
/// orchestration signature of its `kernel_config.py`.
pub fn load_sub_build(
    dir: &Path,
    platform: pto_runtime::Platform,
) -> Result<CompiledBuild, RunnerError> {
    let toolchain = Toolchain::discover(&pto_toolchain::default_cache_root())?;
    let kernel_config = KernelConfig::load(&dir.join("kernel_config.py"))?;
    let meta = meta_from_signature(&kernel_config);
    load_build_cached(dir, &toolchain, platform, kernel_config, meta)
}

/// Parameters named `arg<i>` after the orchestration signature (none without one).
fn meta_from_signature(kc: &KernelConfig) -> CompiledMeta {
    let params = kc
        .orchestration
        .signature
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, d)| pto_build_output::ParamInfo {
            name: format!("arg{i}"),
            direction: match d {
                pto_build_output::ArgDirection::Out => ParamDirection::Out,
                pto_build_output::ArgDirection::InOut => ParamDirection::InOut,
                _ => ParamDirection::In,
            },
            shape: (*d != pto_build_output::ArgDirection::Scalar).then(Vec::new),
            dtype: if *d == pto_build_output::ArgDirection::Scalar {
                "int64".to_string()
            } else {
                "fp32".to_string()
            },
        })
        .collect();
    CompiledMeta {
        params,
        num_return_types: 0,
        platform: None,
        backend_type: pto_build_output::BackendType::Ascend910B,
    }
}

/// Loads a single-chip build directory for the platform of its `compiled_meta.json`
/// (see [`load_for`]).
pub fn load(dir: &Path) -> Result<CompiledBuild, RunnerError> {
    load_for(dir, None)
}

/// Loads a single-chip build directory: checks its layout, then compiles and loads it with
/// the default toolchain and the directory's binary cache. Like `CompiledProgram.from_dir`, it
/// never splices `.pto` files nor forces invalidation; cached binaries next to the sources
/// are reused only when the stamp matches this runtime, headers, compiler and flags.
pub fn load_for(
    dir: &Path,
    platform: Option<pto_runtime::Platform>,
) -> Result<CompiledBuild, RunnerError> {
    if dir.join("compiled_meta.json").is_file() && !dir.join("kernel_config.py").is_file() {
        return Err(missing_kernel_config(dir));
    }
    match pto_build_output::BuildLayout::detect(dir)? {
        pto_build_output::BuildLayout::SingleChip => {}
        pto_build_output::BuildLayout::MultiOrchParent { sub_builds } => {
            return Err(RunnerError::Config {
                message: format!(
                    "Program has {} L2 orchestrations {:?}; select one explicitly: {}/next_levels/<name>",
                    sub_builds.len(),
                    sub_builds,
                    dir.display()
                ),
                kind: crate::error::ErrorKind::Type,
            })
        }
        other => {
            return Err(RunnerError::config(format!(
                "{dir}: a {:?} build (orchestration/host_orch.py) runs its host orchestration in Python, so this single-chip path cannot run it: replay it with `pto replay {dir}` or `python -m pypto.runtime.debug.replay {dir}` (the installed pypto package with torch), or give this command one chip sub-build (next_levels/<name>/)",
                other.kind(),
                dir = dir.display(),
            )))
        }
    }
    let toolchain = Toolchain::discover(&pto_toolchain::default_cache_root())?;
    // The sidecar first, as `CompiledProgram.from_dir` reads it before the config.
    let meta = CompiledMeta::load(dir)?;
    let kernel_config = KernelConfig::load(&dir.join("kernel_config.py"))?;
    let platform = match platform {
        Some(p) => p,
        None => meta
            .platform
            .as_deref()
            .and_then(|p| p.parse().ok())
            .unwrap_or(pto_runtime::Platform::A2a3Sim),
    };
    load_build_cached(dir, &toolchain, platform, kernel_config, meta)
}

/// PyPTO's error for a build directory with a sidecar but no `kernel_config.py`: either a
/// compile-only artifact (`skip_ptoas=True`, raw `.pto` kernels) or a damaged directory.
fn missing_kernel_config(dir: &Path) -> RunnerError {
    let wd = dir.display();
    let mut pto_files = Vec::new();
    for sub in ["kernels", "kernels/aic", "kernels/aiv", "ptoas"] {
        if let Ok(entries) = std::fs::read_dir(dir.join(sub)) {
            pto_files.extend(
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "pto")),
            );
        }
    }
    let message = if pto_files.is_empty() {
        format!(
            "Cannot execute PyPTO artifact '{wd}': required '{wd}/kernel_config.py' is missing.\nNo raw .pto kernel files were found under {wd}; the directory is incomplete. Recompile via ir.compile() to regenerate it."
        )
    } else {
        let ptoas = match std::env::var_os("PTOAS_ROOT") {
            Some(root) => format!("PTOAS_ROOT={}", Path::new(&root).display()),
            None => "PTOAS_ROOT is not set; ptoas is looked up on PATH".to_string(),
        };
        format!(
            "Cannot execute PyPTO artifact '{wd}': required '{wd}/kernel_config.py' was not generated.\nReason:\n  Found {} raw .pto kernel file(s): this is a compile-only artifact produced with skip_ptoas=True.\n  ptoas: {ptoas}\nHow to fix:\n  1. Install ptoas and make it discoverable (PTOAS_ROOT or PATH).\n  2. Recompile via ir.compile() without skip_ptoas so kernel_config.py and the kernel .cpp files are written.",
            pto_files.len()
        )
    };
    RunnerError::Config {
        message,
        kind: crate::error::ErrorKind::NotFound,
    }
}

/// Under the build directory's lock: reuse the binaries next to the sources when the
/// stamp and the source fingerprints match, else compile every unit (through the
/// content-addressed cache) and install them; load the program; stamp only after success.
fn load_build_cached(
    dir: &Path,
    toolchain: &Toolchain,
    platform: pto_runtime::Platform,
    kernel_config: KernelConfig,
    meta: CompiledMeta,
) -> Result<CompiledBuild, RunnerError> {
    if !pto_toolchain::binary_cache::dir_writable(dir) {
        tracing::warn!(
            "{} is not writable: its binaries are built in (or found in) the shared object cache and loaded from there; nothing is written next to the sources",
            dir.display()
        );
        return load_build_with(
            dir,
            toolchain,
            platform,
            kernel_config,
            meta,
            Binaries::SharedCacheOnly,
        );
    }
    let context =
        BinaryContext::current(platform.name(), &kernel_config.runtime.runtime, toolchain);
    let cache = BinaryCacheBuild::begin(dir, context).map_err(ToolchainError::from)?;
    let binaries = Binaries::InTree {
        reuse: cache.reuse(),
    };
    let build = load_build_with(dir, toolchain, platform, kernel_config, meta, binaries)?;
    cache.commit().map_err(ToolchainError::from)?;
    Ok(build)
}

/// Where a build's binaries come from and go.
#[derive(Debug, Clone, Copy)]
enum Binaries {
    /// Next to the sources (PyPTO's layout); `reuse` when the stamp matched.
    InTree { reuse: bool },
    /// A build directory this process cannot write: straight from the shared object cache,
    /// nothing installed or recorded.
    SharedCacheOnly,
}

/// The compile units of a build: the orchestration, then the kernels in manifest order, all
/// of the Simpler generation their sources are written against (detected once for the whole
/// build, so a source set mixing generations is an error naming both headers).
fn build_units(
    kernel_config: &KernelConfig,
    arch: impl Fn(CompileUnit) -> CompileUnit,
) -> Result<Vec<CompileUnit>, RunnerError> {
    let mut units = vec![arch(CompileUnit::new(
        kernel_config.orchestration.source.clone(),
        UnitKind::Orchestration,
    ))];
    for k in &kernel_config.kernels {
        let core = match k.core_type {
            KcCore::Aic => CoreKind::Aic,
            KcCore::Aiv => CoreKind::Aiv,
        };
        let mut unit = arch(CompileUnit::new(k.source.clone(), UnitKind::Kernel(core)));
        for inc in &k.extra_include_dirs {
            unit = unit.with_include_dir(inc.clone());
        }
        units.push(unit);
    }
    let sources: Vec<&Path> = units.iter().map(|u| u.source.as_path()).collect();
    let generation = pto_toolchain::detect_generation(&sources)?;
    Ok(units
        .into_iter()
        .map(|u| u.with_generation(generation))
        .collect())
}

fn load_build_with(
    dir: &Path,
    toolchain: &Toolchain,
    platform: pto_runtime::Platform,
    kernel_config: KernelConfig,
    meta: CompiledMeta,
    binaries: Binaries,
) -> Result<CompiledBuild, RunnerError> {
    let mut meta = meta;
    reconcile_signature(dir, &kernel_config, &mut meta)?;
    check_core_guards(&kernel_config);
    let started = Instant::now();
    // a5 / a5sim builds see a5's names (PTO_ARCH_A5: `platform_config.h`'s constants and
    // the a5 include guard orchestrations test to pick `set_core_num`).
    let arch = |u: CompileUnit| {
        if platform.arch_id() == 1 {
            u.with_define("PTO_ARCH_A5")
        } else {
            u
        }
    };
    let units = build_units(&kernel_config, arch)?;
    let installed: Vec<PathBuf> = units.iter().map(|u| binary_path_for(&u.source)).collect();
    let mut objects = Vec::with_capacity(units.len());
    let mut n_cached = 0;
    // What the program is built from, for the note of a run after one of them changed.
    let mut watched: Vec<PathBuf> = units.iter().map(|u| u.source.clone()).collect();
    watched.push(dir.join("kernel_config.py"));
    let current = match binaries {
        Binaries::InTree { reuse: true } if installed.iter().all(|p| p.is_file()) => {
            UnitsRecord::load(dir).filter(|r| r.still_current(&units, &installed))
        }
        _ => None,
    };
    if let Some(record) = &current {
        watched.extend(record.input_paths().map(Path::to_path_buf));
        watched.extend(installed.iter().cloned());
        // Load through a content-addressed copy: dlopen returns an already-loaded library
        // for a path it has seen, which would be stale after an in-place rebuild.
        for p in &installed {
            objects.push(toolchain.adopt_object(p)?);
        }
        n_cached = units.len();
    } else if matches!(binaries, Binaries::SharedCacheOnly) {
        for res in toolchain.compile_all(&units) {
            let obj = res?;
            n_cached += obj.cache_hit as usize;
            objects.push(obj.so_path);
        }
    } else {
        let mut record = UnitsRecord::for_units(&units);
        let mut stable = true;
        for (res, dest) in toolchain.compile_all(&units).into_iter().zip(&installed) {
            let obj = res?;
            n_cached += obj.cache_hit as usize;
            install_binary(&obj.so_path, dest).map_err(ToolchainError::from)?;
            // The hashes of what was compiled, not of the files as they are now: an edit
            // made during the compile must make the next load rebuild.
            for (path, hash) in &obj.inputs {
                record.add_input_hashed(path, hash);
            }
            stable &= obj.stable;
            record.add_binary(dest)?;
            watched.push(dest.clone());
            objects.push(obj.so_path);
        }
        watched.extend(record.input_paths().map(Path::to_path_buf));
        if stable {
            record.save(dir)?;
        } else {
            tracing::info!(
                "{}: a source changed while it compiled; its binaries serve this run and are rebuilt next time",
                dir.display()
            );
            UnitsRecord::remove(dir)?;
        }
    }
    let compile = CompileSummary {
        n_units: units.len(),
        n_cached,
        elapsed: started.elapsed(),
    };
    let spec = ProgramSpec {
        orchestration_so: objects[0].clone(),
        entry_symbol: kernel_config.orchestration.function_name.clone(),
        config_symbol: kernel_config.orchestration.config_name.clone(),
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
    let identity = program_identity(dir, platform, &spec);
    let program = Program::load(&spec)?;
    Ok(CompiledBuild {
        dir: dir.to_path_buf(),
        kernel_config,
        meta,
        program,
        compile,
        spec,
        identity,
        platform,
        loaded_files: LoadedFiles::snapshot(watched),
    })
}

/// The core macros the toolchain defines: `__DAV_VEC__` for AIV kernels, `__DAV_CUBE__` for
/// AIC kernels (Simpler's simulator build defines the same ones).
const VEC_MACRO: &str = "__DAV_VEC__";
const CUBE_MACRO: &str = "__DAV_CUBE__";

/// How a conditional directive tests `macro_`: `Some(true)` when it selects code only if the
/// macro is defined (`#ifdef M`, `#if defined(M)`, `#if defined M`), `Some(false)` for any
/// other mention of it (`#ifndef M`, `!defined(M)`, a compound condition), `None` when it
/// does not mention it.
fn tests_macro(directive: &str, condition: &str, macro_: &str) -> Option<bool> {
    if !condition.contains(macro_) {
        return None;
    }
    let c: String = condition.chars().filter(|c| !c.is_whitespace()).collect();
    let positive = match directive {
        "ifdef" => c == macro_,
        "if" => c == format!("defined({macro_})") || c == format!("defined{macro_}"),
        _ => false,
    };
    Some(positive)
}

/// Which core a kernel source's code is for, judged from its preprocessor lines: `Some(m)`
/// when every directive that mentions a core macro is an `#if` / `#ifdef` selecting on core
/// macro `m` being defined, with no `#else` / `#elif` alternative, so a build for the other
/// core compiles none of that code. A file with alternatives (`#ifdef __DAV_VEC__ ... #else
/// ... #endif`, two `kernel_entry` definitions under different guards), negative tests or
/// both macros has code for both cores: `None`.
fn guarded_for_one_core(source: &str) -> Option<&'static str> {
    // Per open `#if` group: the core macro its opening directive positively tests, if any.
    let mut open: Vec<Option<&'static str>> = Vec::new();
    let mut positive: Option<&'static str> = None;
    let mut mixed = false;
    for line in source.lines() {
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix('#') else {
            continue;
        };
        let rest = rest.trim_start();
        let directive: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        let condition = rest[directive.len()..].split("//").next().unwrap_or("");
        let mentions = [VEC_MACRO, CUBE_MACRO]
            .into_iter()
            .filter_map(|m| tests_macro(&directive, condition, m).map(|p| (m, p)))
            .collect::<Vec<_>>();
        match directive.as_str() {
            "if" | "ifdef" | "ifndef" => {
                let mut selects = None;
                match mentions.as_slice() {
                    [] => {}
                    [(m, true)] => {
                        if positive.is_some_and(|p| p != *m) {
                            mixed = true;
                        }
                        positive = Some(m);
                        selects = Some(*m);
                    }
                    _ => mixed = true,
                }
                open.push(selects);
            }
            "elif" | "else" => {
                if !mentions.is_empty() {
                    mixed = true;
                }
                if open.last().is_some_and(Option::is_some) {
                    mixed = true; // the alternative holds code for the other core
                }
            }
            "endif" => {
                open.pop();
            }
            _ => {}
        }
    }
    if mixed {
        None
    } else {
        positive
    }
}

/// A kernel whose code is guarded for the other core type compiles to an empty body: ptoas
/// wraps vector bodies in `#if defined(__DAV_VEC__)` and cube bodies in
/// `#if defined(__DAV_CUBE__)`, and the toolchain defines the macro of the declared
/// `core_type` only. Simpler compiles and runs such a kernel the same way (its simulator
/// defines the same macros and checks nothing), so this is a warning, not a refusal: the
/// run goes on, and the warning names the likely cause of the outputs it leaves untouched.
fn check_core_guards(kc: &KernelConfig) {
    for k in &kc.kernels {
        if let Some(message) = core_guard_warning(k) {
            tracing::warn!("{}: {message}", k.source.display());
        }
    }
}

/// The warning of [`check_core_guards`] for one kernel, if any.
fn core_guard_warning(k: &pto_build_output::KernelEntry) -> Option<String> {
    let text = std::fs::read_to_string(&k.source).ok()?; // the compile step reports it
    let (declared, other, other_macro) = match k.core_type {
        KcCore::Aic => ("aic", "aiv", VEC_MACRO),
        KcCore::Aiv => ("aiv", "aic", CUBE_MACRO),
    };
    (guarded_for_one_core(&text) == Some(other_macro)).then(|| {
        format!(
            "kernel '{}' (func_id {}) is declared core_type \"{declared}\" in kernel_config.py, but all its code is guarded by {other_macro} (an {other} kernel), so it compiles to an empty body (as on Simpler); set its core_type to \"{other}\" (and move the file to kernels/{other}/) or fix the guards",
            k.name, k.func_id
        )
    })
}

/// `compiled_meta.json` of `dir` with `kernel_config.py`'s orchestration signature applied:
/// the parameters a run binds (shapes and dtypes from the sidecar, directions as PyPTO reads
/// them, from `kernel_config.py`). See `reconcile_signature`.
pub fn load_meta(dir: &Path) -> Result<CompiledMeta, RunnerError> {
    let mut meta = CompiledMeta::load(dir)?;
    let kc = KernelConfig::load(&dir.join("kernel_config.py"))?;
    reconcile_signature(dir, &kc, &mut meta)?;
    Ok(meta)
}

/// Makes `meta`'s tensor directions those of `kc`'s `ORCHESTRATION` signature, which is
/// what PyPTO binds by (it reads only `kernel_config.py`): a direction that differs is taken
/// from the signature with a warning. A different number of tensor parameters is an error:
/// the files describe different programs, and binding by the sidecar would hand the kernels
/// arguments that are not theirs.
fn reconcile_signature(
    dir: &Path,
    kc: &KernelConfig,
    meta: &mut CompiledMeta,
) -> Result<(), RunnerError> {
    let Some(sig) = &kc.orchestration.signature else {
        return Ok(());
    };
    let from_kc: Vec<ParamDirection> = sig
        .iter()
        .filter_map(|d| match d {
            pto_build_output::ArgDirection::Scalar => None,
            pto_build_output::ArgDirection::In => Some(ParamDirection::In),
            pto_build_output::ArgDirection::Out => Some(ParamDirection::Out),
            pto_build_output::ArgDirection::InOut => Some(ParamDirection::InOut),
        })
        .collect();
    let tensors: Vec<&mut pto_build_output::ParamInfo> =
        meta.params.iter_mut().filter(|p| !p.is_scalar()).collect();
    if from_kc.len() != tensors.len() {
        return Err(RunnerError::Data {
            path: dir.join("kernel_config.py"),
            message: format!(
                "ORCHESTRATION signature has {} tensor parameters, compiled_meta.json {}: the two files come from different compiles, and binding by one would hand the kernels arguments that are not theirs; recompile via ir.compile() to refresh both",
                from_kc.len(),
                tensors.len()
            ),
        });
    }
    for (p, d) in tensors.into_iter().zip(from_kc) {
        if p.direction != d {
            tracing::warn!(
                "{}: parameter '{}' is {:?} in compiled_meta.json but {:?} in kernel_config.py's ORCHESTRATION signature; bound as {:?}, as PyPTO does",
                dir.display(),
                p.name,
                p.direction,
                d,
                d
            );
            p.direction = d;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::guarded_for_one_core;
    use super::{program_identity, CompiledBuild};
    use pto_runtime::{Platform, ProgramSpec};
    use pto_toolchain::freshness::ProgramIdentity;

    #[test]
    fn a_load_whose_config_changed_since_the_host_computed_it_is_refused() {
        let example =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/vector_add");
        let spec = ProgramSpec {
            orchestration_so: "/nonexistent/orch.so".into(),
            entry_symbol: "aicpu_orchestration_entry".into(),
            config_symbol: None,
            kernels: Vec::new(),
        };
        let stale = ProgramIdentity::from_hex("0123456789abcdef");
        let err = CompiledBuild::from_spec(&example, Platform::A2a3Sim, spec.clone(), Some(&stale))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("changed while the program was being loaded"),
            "{err}"
        );
        assert!(err.contains("0123456789ab"), "{err}");
        // The identity the host computed gets past the check (to the load, which fails here).
        let current = program_identity(&example, Platform::A2a3Sim, &spec);
        let err = CompiledBuild::from_spec(&example, Platform::A2a3Sim, spec, Some(&current))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(!err.contains("changed while"), "{err}");
    }

    #[test]
    fn core_guards_are_found_in_preprocessor_lines_only() {
        assert_eq!(
            guarded_for_one_core("#if defined(__DAV_VEC__)\nx\n#endif"),
            Some("__DAV_VEC__")
        );
        assert_eq!(
            guarded_for_one_core("  #ifdef __DAV_CUBE__\n#endif\n"),
            Some("__DAV_CUBE__")
        );
        assert_eq!(
            guarded_for_one_core("# if defined __DAV_VEC__ // body\n#endif"),
            Some("__DAV_VEC__")
        );
        assert_eq!(
            guarded_for_one_core("// __DAV_VEC__ in a comment\nint x;"),
            None
        );
        assert_eq!(
            guarded_for_one_core(
                "#if defined(__DAV_CUBE__)\n#endif\n#if defined(__DAV_VEC__)\n#endif"
            ),
            None
        );
    }

    #[test]
    fn alternative_guards_have_code_for_both_cores() {
        // One kernel_entry whose body switches on the core (Simpler's MIX kernels).
        let body_switch = "extern \"C\" void kernel_entry(int64_t* args) {\n#ifdef __DAV_VEC__\n  vec(args);\n#else\n  cube(args);\n#endif\n}\n";
        assert_eq!(guarded_for_one_core(body_switch), None);
        // Two kernel_entry definitions under different guards.
        let two_entries = "#if defined(__DAV_VEC__)\nextern \"C\" void kernel_entry(int64_t*) {}\n#elif defined(__DAV_CUBE__)\nextern \"C\" void kernel_entry(int64_t*) {}\n#endif\n";
        assert_eq!(guarded_for_one_core(two_entries), None);
        assert_eq!(
            guarded_for_one_core("#ifndef __DAV_VEC__\nint cube;\n#endif"),
            None
        );
        assert_eq!(
            guarded_for_one_core("#if defined(__DAV_VEC__) && defined(X)\n#endif"),
            None
        );
        // Nested guards unrelated to the core keep the judgement.
        assert_eq!(
            guarded_for_one_core("#if defined(__DAV_VEC__)\n#ifdef X\n#else\n#endif\n#endif"),
            Some("__DAV_VEC__")
        );
    }
}
