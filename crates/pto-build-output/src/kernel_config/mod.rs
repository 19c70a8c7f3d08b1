//! `kernel_config.py`: the runtime manifest of a single-chip build.
//!
//! PyPTO's codegen writes this file as Python, and Simpler imports it. Here
//! it is *read* as data: a strict reader accepts exactly the declarative
//! slice PyPTO writes (and the builtin-collective templates use) and rejects
//! everything else with the file, line, column and what was found. No Python
//! runs. The accepted slice:
//!
//! - comments and blank lines;
//! - `from pathlib import Path` and
//!   `from simpler.task_interface import ArgDirection as _D`;
//! - `_ROOT_DIR = Path(__file__).parent`;
//! - `RUNTIME_CONFIG = {...}` (optional), `ORCHESTRATION = {...}` and
//!   `KERNELS = [...]`, whose values are dicts, lists, tuples, strings
//!   (single or double quoted, with escapes), ints, floats, `True`/`False`,
//!   `None`, `str(_ROOT_DIR / "a" / "b")` and `_D.IN` / `_D.OUT` /
//!   `_D.INOUT` / `_D.SCALAR`, over any number of lines, with trailing commas
//!   and any indentation inside brackets.
//!
//! Names must be defined before use, as in Python. Any other top-level name
//! is an error; unknown keys *inside* the dicts are tolerated, as PyPTO and
//! Simpler ignore them, with a warning naming the key and its line (a
//! misspelt `"sigature"` changes nothing, and says so); the builtin-collective
//! templates' `"block_dim"` is known and read by nothing. A path written as
//! `str(_ROOT_DIR / ...)` resolves against the directory holding the file; a
//! relative string literal path does too (PyPTO only writes absolute ones).
//!
//! [`KernelConfig::write`] produces exactly PyPTO's layout (see
//! [`KernelConfig::to_python_source`]), so `write` then [`KernelConfig::load`] round-trips.
//! [`load_name_map`] is a lenient reader for viewers that only need
//! `func_id -> name`.
//!
//! Bounded work: a file longer than [`MAX_KERNEL_CONFIG_BYTES`] is refused
//! before it is read ([`KernelConfigError::TooLarge`]), an expression may
//! nest at most 100 levels, and duplicate keys and `func_id`s are found with
//! hash maps, so no file makes the reader overflow its stack, exhaust memory
//! or take quadratic time.

mod eval;
#[cfg(test)]
mod proptests;
mod write;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use eval::{Assignment, DictEntry, Value, ValueKind};

use crate::fs::WriteError;
use crate::pysyntax::{Pos, SyntaxError};

/// The file name PyPTO gives the manifest.
pub const KERNEL_CONFIG_FILE: &str = "kernel_config.py";
/// The runtime used when `RUNTIME_CONFIG["runtime"]` is absent.
pub const DEFAULT_RUNTIME: &str = "tensormap_and_ringbuffer";
/// The orchestration entry symbol PyPTO writes for every program.
pub const DEFAULT_ORCHESTRATION_FUNCTION: &str = "aicpu_orchestration_entry";
/// The longest `kernel_config.py` the reader takes (8 MiB; the files
/// `ir.compile()` writes are a few KiB, about 200 bytes per kernel).
pub const MAX_KERNEL_CONFIG_BYTES: u64 = 8 << 20;

/// How a task argument is used (Simpler's `ArgDirection`, written `_D.<NAME>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgDirection {
    /// A scalar argument (`_D.SCALAR`).
    Scalar,
    /// Read only (`_D.IN`).
    In,
    /// Write only (`_D.OUT`).
    Out,
    /// Read and written (`_D.INOUT`).
    InOut,
}

impl ArgDirection {
    /// The member name: `SCALAR`, `IN`, `OUT` or `INOUT`.
    pub fn name(self) -> &'static str {
        match self {
            ArgDirection::Scalar => "SCALAR",
            ArgDirection::In => "IN",
            ArgDirection::Out => "OUT",
            ArgDirection::InOut => "INOUT",
        }
    }

    /// The direction with member name `name`.
    pub fn from_name(name: &str) -> Option<ArgDirection> {
        [
            ArgDirection::Scalar,
            ArgDirection::In,
            ArgDirection::Out,
            ArgDirection::InOut,
        ]
        .into_iter()
        .find(|d| d.name() == name)
    }
}

/// The core a kernel runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CoreType {
    /// A cube core (`"aic"`).
    Aic,
    /// A vector core (`"aiv"`).
    Aiv,
}

impl CoreType {
    /// `"aic"` or `"aiv"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CoreType::Aic => "aic",
            CoreType::Aiv => "aiv",
        }
    }

    /// Parses `"aic"` or `"aiv"`.
    pub fn from_name(name: &str) -> Option<CoreType> {
        match name {
            "aic" => Some(CoreType::Aic),
            "aiv" => Some(CoreType::Aiv),
            _ => None,
        }
    }
}

/// `RUNTIME_CONFIG`: which Simpler runtime runs the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// The runtime's wire name (default [`DEFAULT_RUNTIME`]).
    pub runtime: String,
    /// AICPU thread count; 0 selects the architecture default. Not range
    /// checked here: the runner validates it with the other overrides.
    pub aicpu_thread_num: i64,
    /// Whether some kernel uses the SDMA workspace.
    pub enable_sdma: bool,
}

impl Default for RuntimeConfig {
    /// What an absent `RUNTIME_CONFIG` (or absent keys) mean.
    fn default() -> Self {
        RuntimeConfig {
            runtime: DEFAULT_RUNTIME.to_string(),
            aicpu_thread_num: 0,
            enable_sdma: false,
        }
    }
}

/// `ORCHESTRATION`: the orchestration source and entry point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrchestrationConfig {
    /// The orchestration `.cpp`, absolute when read from a file.
    pub source: PathBuf,
    /// The exported entry symbol (empty: `aicpu_orchestration_entry`).
    pub function_name: String,
    /// The exported config symbol, when `ORCHESTRATION` names one (`"config_name"`; absent or
    /// empty: `aicpu_orchestration_config`).
    pub config_name: Option<String>,
    /// Direction per orchestration tensor argument (scalars excluded).
    pub signature: Option<Vec<ArgDirection>>,
}

/// One `KERNELS` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelEntry {
    /// The id the orchestration submits tasks with.
    pub func_id: i32,
    /// The kernel's function name.
    pub name: String,
    /// The kernel `.cpp`, absolute when read from a file.
    pub source: PathBuf,
    /// The core it runs on.
    pub core_type: CoreType,
    /// Direction per tensor argument, in task-payload order.
    pub signature: Option<Vec<ArgDirection>>,
    /// Extra include directories (external kernels).
    pub extra_include_dirs: Vec<PathBuf>,
    /// A hand-written kernel referenced in place (`"external": True`).
    pub external: bool,
}

/// A whole `kernel_config.py`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelConfig {
    /// `RUNTIME_CONFIG` (defaults when absent).
    pub runtime: RuntimeConfig,
    /// `ORCHESTRATION`.
    pub orchestration: OrchestrationConfig,
    /// `KERNELS`, in file order.
    pub kernels: Vec<KernelEntry>,
}

const FIX: &str = "kernel_config.py must stay in the declarative form ir.compile() writes; fix that line or recompile via ir.compile() to regenerate the file";

/// Reading or writing `kernel_config.py` failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KernelConfigError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is longer than [`MAX_KERNEL_CONFIG_BYTES`].
    #[error("{}: the file is {len} bytes, more than the {} a kernel_config.py may have; {FIX}", path.display(), crate::fs::human_size(*limit))]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its length (at least).
        len: u64,
        /// The limit.
        limit: u64,
    },
    /// The file is not valid UTF-8.
    #[error("{} is not valid UTF-8 text; {FIX}", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
    },
    /// A line is outside the supported slice or holds a wrong value.
    #[error("{}:{line}:{col}: {message}; {FIX}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What was found and what was expected.
        message: String,
    },
    /// A required top-level name is not assigned.
    #[error("{}: {name} is not defined; a kernel_config.py needs ORCHESTRATION and KERNELS — recompile via ir.compile() to regenerate the file", path.display())]
    Missing {
        /// The file.
        path: PathBuf,
        /// `ORCHESTRATION` or `KERNELS`.
        name: &'static str,
    },
    /// A path cannot be written into the file (not valid UTF-8).
    #[error("cannot write {}: {message}", path.display())]
    Unrepresentable {
        /// The file being written.
        path: PathBuf,
        /// What cannot be written.
        message: String,
    },
    /// Writing the file failed.
    #[error(transparent)]
    Write(#[from] WriteError),
}

impl KernelConfigError {
    /// True when the error means the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, KernelConfigError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Where errors point: the file, for line/column messages.
struct Ctx<'a> {
    file: &'a Path,
    /// Warnings found while reading (unknown keys), `file:line:col: text`.
    warnings: std::cell::RefCell<Vec<String>>,
}

impl Ctx<'_> {
    fn err(&self, pos: Pos, message: impl Into<String>) -> KernelConfigError {
        KernelConfigError::Invalid {
            path: self.file.to_path_buf(),
            line: pos.line,
            col: pos.col,
            message: message.into(),
        }
    }

    fn syntax(&self, e: SyntaxError) -> KernelConfigError {
        self.err(e.pos, e.message)
    }

    fn warn(&self, pos: Pos, message: String) {
        self.warnings.borrow_mut().push(format!(
            "{}:{}:{}: {message}",
            self.file.display(),
            pos.line,
            pos.col
        ));
    }
}

/// The directory a file sits in, absolute (for resolving `_ROOT_DIR`).
fn parent_dir(path: &Path) -> PathBuf {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    crate::fs::absolute(parent)
}

fn read_text(path: &Path) -> Result<String, KernelConfigError> {
    use crate::fs::LimitedReadError;
    let bytes = crate::fs::read_limited(path, MAX_KERNEL_CONFIG_BYTES).map_err(|e| match e {
        LimitedReadError::Io(source) => KernelConfigError::Read {
            path: path.to_path_buf(),
            source,
        },
        LimitedReadError::TooLarge { len } => KernelConfigError::TooLarge {
            path: path.to_path_buf(),
            len,
            limit: MAX_KERNEL_CONFIG_BYTES,
        },
    })?;
    String::from_utf8(bytes).map_err(|_| KernelConfigError::NotUtf8 {
        path: path.to_path_buf(),
    })
}

impl KernelConfig {
    /// Reads and validates the `kernel_config.py` at `path`; `_ROOT_DIR` is
    /// the (absolute) directory holding it.
    pub fn load(path: &Path) -> Result<KernelConfig, KernelConfigError> {
        let text = read_text(path)?;
        KernelConfig::parse(&text, &parent_dir(path), path)
    }

    /// [`KernelConfig::load`], also returning the warnings instead of logging them.
    pub fn load_with_warnings(
        path: &Path,
    ) -> Result<(KernelConfig, Vec<String>), KernelConfigError> {
        let text = read_text(path)?;
        KernelConfig::parse_with_warnings(&text, &parent_dir(path), path)
    }

    /// Parses and validates `text`; `root_dir` is what `_ROOT_DIR` stands
    /// for and `file_for_errors` the name errors show. Warnings (keys PyPTO and
    /// Simpler do not read, which they ignore) are logged at warn level.
    pub fn parse(
        text: &str,
        root_dir: &Path,
        file_for_errors: &Path,
    ) -> Result<KernelConfig, KernelConfigError> {
        let (config, warnings) =
            KernelConfig::parse_with_warnings(text, root_dir, file_for_errors)?;
        for w in warnings {
            tracing::warn!("{w}");
        }
        Ok(config)
    }

    /// [`KernelConfig::parse`], returning the warnings (`file:line:col: text`) instead of
    /// logging them.
    pub fn parse_with_warnings(
        text: &str,
        root_dir: &Path,
        file_for_errors: &Path,
    ) -> Result<(KernelConfig, Vec<String>), KernelConfigError> {
        let ctx = Ctx {
            file: file_for_errors,
            warnings: Default::default(),
        };
        let assignments = eval::read_module(text, root_dir).map_err(|e| ctx.syntax(e))?;

        let mut runtime: Option<&Assignment> = None;
        let mut orchestration: Option<&Assignment> = None;
        let mut kernels: Option<&Assignment> = None;
        for a in &assignments {
            let slot = match a.name.as_str() {
                "RUNTIME_CONFIG" => &mut runtime,
                "ORCHESTRATION" => &mut orchestration,
                "KERNELS" => &mut kernels,
                other => {
                    return Err(ctx.err(
                        a.pos,
                        format!("unknown top-level name `{other}`; kernel_config.py defines only _ROOT_DIR, RUNTIME_CONFIG, ORCHESTRATION and KERNELS"),
                    ))
                }
            };
            if let Some(first) = slot {
                return Err(ctx.err(
                    a.pos,
                    format!(
                        "`{}` is assigned twice (first on line {})",
                        a.name, first.pos.line
                    ),
                ));
            }
            *slot = Some(a);
        }

        let runtime = match runtime {
            Some(a) => read_runtime(&ctx, &a.value)?,
            None => RuntimeConfig::default(),
        };
        let orchestration = orchestration.ok_or_else(|| KernelConfigError::Missing {
            path: file_for_errors.to_path_buf(),
            name: "ORCHESTRATION",
        })?;
        let kernels = kernels.ok_or_else(|| KernelConfigError::Missing {
            path: file_for_errors.to_path_buf(),
            name: "KERNELS",
        })?;
        let config = KernelConfig {
            runtime,
            orchestration: read_orchestration(&ctx, &orchestration.value, root_dir)?,
            kernels: read_kernels(&ctx, &kernels.value, root_dir)?,
        };
        Ok((config, ctx.warnings.into_inner()))
    }

    /// `func_id -> name` for every kernel.
    pub fn name_map(&self) -> BTreeMap<i32, String> {
        self.kernels
            .iter()
            .map(|k| (k.func_id, k.name.clone()))
            .collect()
    }

    /// The kernel with `func_id`, if any.
    pub fn kernel(&self, func_id: i32) -> Option<&KernelEntry> {
        self.kernels.iter().find(|k| k.func_id == func_id)
    }
}

/// The `RUNTIME_CONFIG` keys read (`block_dim`: written by the builtin-collective
/// templates, read by nothing here, tolerated without a warning).
const RUNTIME_CONFIG_KEYS: &[&str] = &["runtime", "aicpu_thread_num", "enable_sdma", "block_dim"];
/// The `ORCHESTRATION` keys PyPTO and Simpler read (`config_name`: Simpler's config symbol).
const ORCHESTRATION_KEYS: &[&str] = &["source", "function_name", "config_name", "signature"];
/// The `KERNELS[i]` keys read.
const KERNEL_KEYS: &[&str] = &[
    "func_id",
    "name",
    "source",
    "core_type",
    "signature",
    "external",
    "extra_include_dirs",
];

/// A dict value being read, with the name errors use for it.
struct Fields<'a> {
    what: String,
    value: &'a Value,
    entries: &'a [DictEntry],
}

impl<'a> Fields<'a> {
    fn new(ctx: &Ctx<'_>, what: String, value: &'a Value) -> Result<Self, KernelConfigError> {
        match &value.kind {
            ValueKind::Dict(entries) => Ok(Fields {
                what,
                value,
                entries,
            }),
            _ => Err(ctx.err(
                value.pos,
                format!("{what} must be a dict, found {}", value.describe()),
            )),
        }
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.entries.iter().find(|e| e.key == key).map(|e| &e.value)
    }

    /// Warns about each key outside `known`: PyPTO and Simpler read these dicts by key
    /// and ignore the rest, so an unknown key (often a misspelt one) changes nothing.
    fn warn_unknown(&self, ctx: &Ctx<'_>, known: &[&str]) {
        for e in self.entries {
            if !known.contains(&e.key.as_str()) {
                ctx.warn(
                    e.value.pos,
                    format!(
                        "{} has the key {} that nothing reads (PyPTO and Simpler ignore it; the known keys are {})",
                        self.what,
                        crate::pyrepr::repr_str(&e.key),
                        known
                            .iter()
                            .map(|k| format!("\"{k}\""))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
        }
    }

    fn required(
        &self,
        ctx: &Ctx<'_>,
        key: &str,
        needs: &str,
    ) -> Result<&'a Value, KernelConfigError> {
        self.get(key).ok_or_else(|| {
            ctx.err(
                self.value.pos,
                format!("{} has no \"{key}\" key; {needs}", self.what),
            )
        })
    }

    fn field_name(&self, key: &str) -> String {
        format!("{}[\"{key}\"]", self.what)
    }

    fn string(&self, ctx: &Ctx<'_>, key: &str, v: &Value) -> Result<String, KernelConfigError> {
        match &v.kind {
            ValueKind::Str(s) => Ok(s.clone()),
            _ => Err(ctx.err(
                v.pos,
                format!(
                    "{} must be a string, found {}",
                    self.field_name(key),
                    v.describe()
                ),
            )),
        }
    }

    fn int(&self, ctx: &Ctx<'_>, key: &str, v: &Value) -> Result<i128, KernelConfigError> {
        match &v.kind {
            ValueKind::Int(i) => Ok(*i),
            _ => Err(ctx.err(
                v.pos,
                format!(
                    "{} must be an int, found {}",
                    self.field_name(key),
                    v.describe()
                ),
            )),
        }
    }

    fn boolean(&self, ctx: &Ctx<'_>, key: &str, v: &Value) -> Result<bool, KernelConfigError> {
        match &v.kind {
            ValueKind::Bool(b) => Ok(*b),
            _ => Err(ctx.err(
                v.pos,
                format!(
                    "{} must be True or False, found {}",
                    self.field_name(key),
                    v.describe()
                ),
            )),
        }
    }

    fn path(
        &self,
        ctx: &Ctx<'_>,
        key: &str,
        v: &Value,
        root: &Path,
    ) -> Result<PathBuf, KernelConfigError> {
        path_value(ctx, &self.field_name(key), v, root)
    }

    fn signature(
        &self,
        ctx: &Ctx<'_>,
        key: &str,
    ) -> Result<Option<Vec<ArgDirection>>, KernelConfigError> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let items = match &v.kind {
            ValueKind::None => return Ok(None),
            ValueKind::List(items) => items,
            _ => {
                return Err(ctx.err(
                    v.pos,
                    format!(
                        "{} must be a list of _D.<direction>, found {}",
                        self.field_name(key),
                        v.describe()
                    ),
                ))
            }
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item.kind {
                ValueKind::ArgDir(d) => Ok(d),
                _ => Err(ctx.err(
                    item.pos,
                    format!(
                        "{}[{i}] must be _D.IN, _D.OUT, _D.INOUT or _D.SCALAR, found {}",
                        self.field_name(key),
                        item.describe()
                    ),
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

fn path_value(
    ctx: &Ctx<'_>,
    what: &str,
    v: &Value,
    root: &Path,
) -> Result<PathBuf, KernelConfigError> {
    match &v.kind {
        ValueKind::Path(p) => Ok(p.clone()),
        ValueKind::Str(s) if !s.is_empty() => Ok(root.join(s)),
        _ => Err(ctx.err(
            v.pos,
            format!(
                "{what} must be a path string or str(_ROOT_DIR / ...), found {}",
                v.describe()
            ),
        )),
    }
}

fn read_runtime(ctx: &Ctx<'_>, value: &Value) -> Result<RuntimeConfig, KernelConfigError> {
    let f = Fields::new(ctx, "RUNTIME_CONFIG".to_string(), value)?;
    f.warn_unknown(ctx, RUNTIME_CONFIG_KEYS);
    let mut cfg = RuntimeConfig::default();
    if let Some(v) = f.get("runtime") {
        cfg.runtime = f.string(ctx, "runtime", v)?;
    }
    if let Some(v) = f.get("aicpu_thread_num") {
        let n = f.int(ctx, "aicpu_thread_num", v)?;
        cfg.aicpu_thread_num = i64::try_from(n).map_err(|_| {
            ctx.err(
                v.pos,
                format!("RUNTIME_CONFIG[\"aicpu_thread_num\"] = {n} is out of range"),
            )
        })?;
    }
    if let Some(v) = f.get("enable_sdma") {
        cfg.enable_sdma = f.boolean(ctx, "enable_sdma", v)?;
    }
    Ok(cfg)
}

fn read_orchestration(
    ctx: &Ctx<'_>,
    value: &Value,
    root: &Path,
) -> Result<OrchestrationConfig, KernelConfigError> {
    const NEEDS: &str = "ORCHESTRATION needs \"source\" and \"function_name\"";
    let f = Fields::new(ctx, "ORCHESTRATION".to_string(), value)?;
    f.warn_unknown(ctx, ORCHESTRATION_KEYS);
    let source = f.required(ctx, "source", NEEDS)?;
    let function_name = f.required(ctx, "function_name", NEEDS)?;
    let config_name = match f.get("config_name") {
        Some(v) => Some(f.string(ctx, "config_name", v)?),
        None => None,
    };
    Ok(OrchestrationConfig {
        source: f.path(ctx, "source", source, root)?,
        function_name: f.string(ctx, "function_name", function_name)?,
        config_name,
        signature: f.signature(ctx, "signature")?,
    })
}

fn read_kernels(
    ctx: &Ctx<'_>,
    value: &Value,
    root: &Path,
) -> Result<Vec<KernelEntry>, KernelConfigError> {
    const NEEDS: &str = "each kernel needs \"func_id\", \"name\", \"source\" and \"core_type\"";
    let ValueKind::List(items) = &value.kind else {
        return Err(ctx.err(
            value.pos,
            format!(
                "KERNELS must be a list of dicts, found {}",
                value.describe()
            ),
        ));
    };
    let mut out: Vec<KernelEntry> = Vec::with_capacity(items.len());
    // func_id -> index in `out`, so uniqueness costs O(1) per kernel.
    let mut seen: HashMap<i32, usize> = HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let f = Fields::new(ctx, format!("KERNELS[{i}]"), item)?;
        f.warn_unknown(ctx, KERNEL_KEYS);
        let func_id_v = f.required(ctx, "func_id", NEEDS)?;
        let name_v = f.required(ctx, "name", NEEDS)?;
        let source_v = f.required(ctx, "source", NEEDS)?;
        let core_v = f.required(ctx, "core_type", NEEDS)?;

        let raw_id = f.int(ctx, "func_id", func_id_v)?;
        let func_id = i32::try_from(raw_id).ok().filter(|id| *id >= 0).ok_or_else(|| {
            ctx.err(
                func_id_v.pos,
                format!("KERNELS[{i}][\"func_id\"] must be a non-negative 32-bit int, found {raw_id}"),
            )
        })?;
        if let Some(&j) = seen.get(&func_id) {
            return Err(ctx.err(
                func_id_v.pos,
                format!(
                    "KERNELS[{i}] reuses func_id {func_id} of KERNELS[{j}] ({}); func_ids must be unique",
                    crate::pyrepr::repr_str(&out[j].name)
                ),
            ));
        }
        let core_name = f.string(ctx, "core_type", core_v)?;
        let core_type = CoreType::from_name(&core_name).ok_or_else(|| {
            ctx.err(
                core_v.pos,
                format!(
                    "KERNELS[{i}][\"core_type\"] must be \"aic\" or \"aiv\", found {}",
                    crate::pyrepr::repr_str(&core_name)
                ),
            )
        })?;
        let extra_include_dirs = match f.get("extra_include_dirs") {
            None => Vec::new(),
            Some(v) => match &v.kind {
                ValueKind::None => Vec::new(),
                ValueKind::List(dirs) | ValueKind::Tuple(dirs) => dirs
                    .iter()
                    .enumerate()
                    .map(|(j, d)| {
                        path_value(
                            ctx,
                            &format!("KERNELS[{i}][\"extra_include_dirs\"][{j}]"),
                            d,
                            root,
                        )
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                _ => {
                    return Err(ctx.err(
                        v.pos,
                        format!(
                        "KERNELS[{i}][\"extra_include_dirs\"] must be a list of paths, found {}",
                        v.describe()
                    ),
                    ))
                }
            },
        };
        let external = match f.get("external") {
            Some(v) => f.boolean(ctx, "external", v)?,
            None => false,
        };
        seen.insert(func_id, out.len());
        out.push(KernelEntry {
            func_id,
            name: f.string(ctx, "name", name_v)?,
            source: f.path(ctx, "source", source_v, root)?,
            core_type,
            signature: f.signature(ctx, "signature")?,
            extra_include_dirs,
            external,
        });
    }
    Ok(out)
}

/// `func_id -> name` read leniently from a `kernel_config.py`, for viewers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameMap {
    /// Kernel names by `func_id`.
    pub names: BTreeMap<i32, String>,
    /// One line per `KERNELS` entry that was skipped or overridden.
    pub skipped: Vec<String>,
}

/// Reads `func_id -> name` from the `kernel_config.py` at `path`.
///
/// Lenient like Simpler's swimlane converter: the file must parse and define
/// `KERNELS` (a list), but an entry without an int `func_id` and a string
/// `name` is skipped and reported in [`NameMap::skipped`] instead of failing
/// the whole map; a repeated `func_id` keeps the later name, also reported.
pub fn load_name_map(path: &Path) -> Result<NameMap, KernelConfigError> {
    let text = read_text(path)?;
    parse_name_map(&text, &parent_dir(path), path)
}

/// [`load_name_map`] over `text`; `root_dir` is what `_ROOT_DIR` stands for
/// and `file_for_errors` the name errors show.
pub fn parse_name_map(
    text: &str,
    root_dir: &Path,
    file_for_errors: &Path,
) -> Result<NameMap, KernelConfigError> {
    let ctx = Ctx {
        file: file_for_errors,
        warnings: Default::default(),
    };
    let assignments = eval::read_module(text, root_dir).map_err(|e| ctx.syntax(e))?;
    let kernels = assignments
        .iter()
        .rev()
        .find(|a| a.name == "KERNELS")
        .ok_or_else(|| KernelConfigError::Missing {
            path: file_for_errors.to_path_buf(),
            name: "KERNELS",
        })?;
    let items = match &kernels.value.kind {
        ValueKind::List(items) | ValueKind::Tuple(items) => items,
        _ => {
            return Err(ctx.err(
                kernels.value.pos,
                format!(
                    "KERNELS must be a list of dicts, found {}",
                    kernels.value.describe()
                ),
            ))
        }
    };
    let mut map = NameMap::default();
    for (i, item) in items.iter().enumerate() {
        let entries: &[DictEntry] = match &item.kind {
            ValueKind::Dict(entries) => entries,
            _ => &[],
        };
        let get = |key: &str| entries.iter().find(|e| e.key == key).map(|e| &e.value.kind);
        let func_id = match get("func_id") {
            Some(ValueKind::Int(id)) => i32::try_from(*id).ok(),
            _ => None,
        };
        let name = match get("name") {
            Some(ValueKind::Str(name)) => Some(name.clone()),
            _ => None,
        };
        match (func_id, name) {
            (Some(id), Some(name)) => {
                let shown = crate::pyrepr::repr_str(&name);
                if map.names.insert(id, name).is_some() {
                    map.skipped.push(format!(
                        "KERNELS[{i}] (line {}): func_id {id} repeats an earlier entry; {shown} replaces it",
                        item.pos.line,
                    ));
                }
            }
            _ => map.skipped.push(format!(
                "KERNELS[{i}] (line {}): skipped, it needs an int \"func_id\" and a string \"name\"",
                item.pos.line
            )),
        }
    }
    Ok(map)
}

#[cfg(test)]
mod tests;
