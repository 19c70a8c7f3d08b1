//! Loading a compiled program: the orchestration shared object and one kernel shared object
//! per `func_id`, resolved with `dlopen` / `dlsym`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::RuntimeError;
use crate::ffi::{
    BindRuntimeFn, KernelCallFn, KernelEntryFn, OrchCallFn, OrchConfigFn, OrchEntryFn,
};
use crate::platform::CoreType;
use crate::sim_abi::{SimInvokeFn, CORE_AIC, CORE_AIV};

/// What the caller knows about one kernel.
#[derive(Clone, Debug)]
pub struct KernelSpec {
    /// The id orchestrations pass to `rt_submit_*`.
    pub func_id: i32,
    /// Human-readable name (from `kernel_config.py`).
    pub name: String,
    /// The core type it was compiled for.
    pub core_type: CoreType,
    /// The compiled shared object.
    pub so_path: PathBuf,
}

/// The entry symbol when `kernel_config.py` names none.
pub const DEFAULT_ENTRY: &str = "aicpu_orchestration_entry";
/// The config symbol when `kernel_config.py` names none.
pub const DEFAULT_CONFIG: &str = "aicpu_orchestration_config";

/// What the caller knows about the program.
#[derive(Clone, Debug)]
pub struct ProgramSpec {
    /// The compiled orchestration.
    pub orchestration_so: PathBuf,
    /// The entry symbol (`aicpu_orchestration_entry` unless `kernel_config.py` says
    /// otherwise; empty means the default).
    pub entry_symbol: String,
    /// The config symbol (`None` or empty: `aicpu_orchestration_config`). A missing config
    /// symbol is not an error: the argument-count check is skipped, as in Simpler.
    pub config_symbol: Option<String>,
    /// The kernels.
    pub kernels: Vec<KernelSpec>,
}

/// One loaded kernel.
pub struct LoadedKernel {
    /// `func_id`.
    pub func_id: i32,
    /// Name.
    pub name: String,
    /// Core type.
    pub core_type: CoreType,
    /// `kernel_entry`.
    pub entry: KernelEntryFn,
    /// `pto_sim_invoke`, exported by kernels built over the PTO-ISA header.
    pub invoke: Option<SimInvokeFn>,
    /// `pto_kernel_call` (from `tensor.h`): runs the entry with C++ exceptions caught.
    pub call: Option<KernelCallFn>,
    /// The name as a C string (handed to the PTO-ISA header for its messages).
    pub c_name: std::ffi::CString,
    _library: Arc<libloading::Library>,
}

/// Kernels indexed by `func_id`. Holding the table keeps the libraries loaded.
#[derive(Default)]
pub struct KernelTable {
    by_id: Vec<Option<LoadedKernel>>,
}

impl KernelTable {
    /// The kernel with `func_id`.
    pub fn get(&self, func_id: i32) -> Option<&LoadedKernel> {
        usize::try_from(func_id)
            .ok()
            .and_then(|i| self.by_id.get(i))
            .and_then(Option::as_ref)
    }

    /// The name of `func_id`.
    pub fn name(&self, func_id: i32) -> Option<&str> {
        self.get(func_id).map(|k| k.name.as_str())
    }

    /// The known func_ids, ascending.
    pub fn ids(&self) -> Vec<i32> {
        self.by_id.iter().flatten().map(|k| k.func_id).collect()
    }

    /// Builds a table from already resolved entry points (tests and benchmarks).
    pub fn insert(&mut self, kernel: LoadedKernel) {
        let idx = kernel.func_id as usize;
        if self.by_id.len() <= idx {
            self.by_id.resize_with(idx + 1, || None);
        }
        self.by_id[idx] = Some(kernel);
    }
}

/// A loaded program, ready to run any number of times.
pub struct Program {
    pub(crate) entry: OrchEntryFn,
    pub(crate) call: Option<OrchCallFn>,
    pub(crate) config: Option<OrchConfigFn>,
    pub(crate) bind: BindRuntimeFn,
    pub(crate) kernels: Arc<KernelTable>,
    pub(crate) orchestration: Arc<libloading::Library>,
    orchestration_path: PathBuf,
}

fn open(path: &Path) -> Result<Arc<libloading::Library>, RuntimeError> {
    if !path.exists() {
        return Err(RuntimeError::Load {
            path: path.to_path_buf(),
            message: "no such file".to_string(),
        });
    }
    // SAFETY: loading a user shared object runs its static initializers; that is the
    // contract of running user code at all. RTLD_LOCAL keeps its symbols private.
    let lib = unsafe {
        libloading::os::unix::Library::open(Some(path), libc::RTLD_NOW | libc::RTLD_LOCAL)
    }
    .map_err(|e| RuntimeError::Load {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(Arc::new(libloading::Library::from(lib)))
}

fn symbol<T: Copy>(
    lib: &libloading::Library,
    path: &Path,
    name: &str,
    hint: &str,
) -> Result<T, RuntimeError> {
    // SAFETY: the caller names the C type of the symbol; the ABI is documented in
    // include/pto and the symbol is only called with matching arguments.
    let sym = unsafe { lib.get::<T>(name.as_bytes()) }.map_err(|_| RuntimeError::Load {
        path: path.to_path_buf(),
        message: format!("no `{name}` symbol; {hint}"),
    })?;
    Ok(*sym)
}

/// The PTO-ISA header's exports of a kernel library: `pto_sim_invoke` (optional) and the
/// core type it was compiled for, which must be the one `kernel_config.py` declares.
fn sim_invoke(
    library: &libloading::Library,
    k: &KernelSpec,
) -> Result<Option<SimInvokeFn>, RuntimeError> {
    // SAFETY: `pto_sim_invoke` has this C type wherever the header defines it.
    let invoke = unsafe { library.get::<SimInvokeFn>(b"pto_sim_invoke") }
        .ok()
        .map(|s| *s);
    // SAFETY: the header defines `pto_sim_kernel_core_type` as a `const int`; the symbol's
    // value is its address.
    let core = unsafe { library.get::<*const i32>(b"pto_sim_kernel_core_type") }
        .ok()
        .map(|s| *s)
        .filter(|p| !p.is_null())
        // SAFETY: a non-null address of the header's `const int`.
        .map(|p| unsafe { *p });
    let built_for = match core {
        Some(CORE_AIC) => Some(CoreType::Aic),
        Some(CORE_AIV) => Some(CoreType::Aiv),
        Some(other) => {
            return Err(RuntimeError::Load {
                path: k.so_path.clone(),
                message: format!(
                    "kernel '{}' (func_id {}) reports an unknown core type {other}",
                    k.name, k.func_id
                ),
            })
        }
        None => None,
    };
    if let Some(built) = built_for {
        if built != k.core_type {
            let flag = |c: CoreType| match c {
                CoreType::Aic => "-D__DAV_CUBE__",
                CoreType::Aiv => "-D__DAV_VEC__",
            };
            return Err(RuntimeError::Load {
                path: k.so_path.clone(),
                message: format!(
                    "kernel '{}' (func_id {}) is declared core_type {:?} but was compiled for {} ({}); rebuild it with {} or fix its core_type in kernel_config.py",
                    k.name,
                    k.func_id,
                    k.core_type.name(),
                    built.name().to_uppercase(),
                    flag(built),
                    flag(k.core_type)
                ),
            });
        }
    }
    Ok(invoke)
}

impl Program {
    /// Loads the orchestration and every kernel.
    pub fn load(spec: &ProgramSpec) -> Result<Program, RuntimeError> {
        let orch_path = &spec.orchestration_so;
        let orchestration = open(orch_path)?;
        let entry_name = if spec.entry_symbol.is_empty() {
            DEFAULT_ENTRY
        } else {
            spec.entry_symbol.as_str()
        };
        let entry: OrchEntryFn = symbol(
            &orchestration,
            orch_path,
            entry_name,
            &format!(
                "export it as extern \"C\" void {entry_name}(const ChipTaskArgs&), or fix ORCHESTRATION[\"function_name\"] in kernel_config.py"
            ),
        )?;
        let config_name = match spec.config_symbol.as_deref() {
            None | Some("") => DEFAULT_CONFIG,
            Some(name) => name,
        };
        let config: Option<OrchConfigFn> = symbol(&orchestration, orch_path, config_name, "").ok();
        let call: Option<OrchCallFn> =
            symbol(&orchestration, orch_path, "pto_orchestration_call", "").ok();
        if config.is_none() {
            tracing::debug!(
                "{}: no `{config_name}` export; the argument-count check is skipped",
                orch_path.display()
            );
        }
        let bind: BindRuntimeFn = symbol(
            &orchestration,
            orch_path,
            "framework_bind_runtime",
            "include \"pto_orchestration_api.h\" in the orchestration source",
        )?;
        let mut table = KernelTable::default();
        for k in &spec.kernels {
            if k.func_id < 0 {
                return Err(RuntimeError::Load {
                    path: k.so_path.clone(),
                    message: format!("kernel '{}' has a negative func_id {}", k.name, k.func_id),
                });
            }
            if let Some(earlier) = table.get(k.func_id) {
                // Simpler's registration keeps the last kernel of a func_id.
                tracing::warn!(
                    "func_id {} is used by two kernels, '{}' and '{}': the later one, '{}', is registered (as Simpler does)",
                    k.func_id,
                    earlier.name,
                    k.name,
                    k.name
                );
            }
            let library = open(&k.so_path)?;
            let entry: KernelEntryFn = symbol(
                &library,
                &k.so_path,
                "kernel_entry",
                &format!(
                    "kernel '{}' (func_id {}) must define extern \"C\" void kernel_entry(int64_t* args)",
                    k.name, k.func_id
                ),
            )?;
            let invoke = sim_invoke(&library, k)?;
            // SAFETY: `pto_kernel_call` has this C type wherever tensor.h defines it.
            let call = unsafe { library.get::<KernelCallFn>(b"pto_kernel_call") }
                .ok()
                .map(|s| *s);
            table.insert(LoadedKernel {
                func_id: k.func_id,
                name: k.name.clone(),
                core_type: k.core_type,
                entry,
                invoke,
                call,
                c_name: crate::exec::c_name(&k.name),
                _library: library,
            });
        }
        Ok(Program {
            entry,
            call,
            config,
            bind,
            kernels: Arc::new(table),
            orchestration,
            orchestration_path: orch_path.clone(),
        })
    }

    /// The kernels.
    pub fn kernels(&self) -> &KernelTable {
        &self.kernels
    }

    /// The orchestration shared object.
    pub fn orchestration_path(&self) -> &Path {
        &self.orchestration_path
    }
}

impl LoadedKernel {
    /// A kernel from an entry point that lives in the current executable (tests, benches).
    ///
    /// # Safety
    /// `entry` must follow the kernel ABI for as long as the table lives.
    pub unsafe fn from_static(
        func_id: i32,
        name: &str,
        core_type: CoreType,
        entry: KernelEntryFn,
    ) -> LoadedKernel {
        // The library handle of the running executable keeps nothing extra loaded.
        let this = libloading::os::unix::Library::this();
        LoadedKernel {
            func_id,
            name: name.to_string(),
            core_type,
            entry,
            invoke: None,
            call: None,
            c_name: crate::exec::c_name(name),
            _library: Arc::new(libloading::Library::from(this)),
        }
    }
}
