//! The sidecars `compiled_meta.json` (L2, schema 1) and
//! `distributed_meta.json` (L3, schema 2).
//!
//! A sidecar records what the live IR would tell a caller: the parameters of
//! the orchestration (name, direction, shape, dtype), how many values it
//! returns, the platform and the backend, and for L3 the
//! [`DistributedConfig`]. It lets a build directory be reloaded without
//! recompiling.
//!
//! Loads validate every field and fail with PyPTO's exact texts, so a front
//! end can show the same words PyPTO does; [`MetaError::kind`] tells it which
//! Python exception to raise ([`MetaErrorKind::NotFound`] is
//! `FileNotFoundError`, the others `ValueError`). Writes produce
//! `json.dumps(meta, indent=2)`'s bytes (2-space indent, ASCII only, no
//! trailing newline, keys in PyPTO's order) through
//! a hidden temporary and a rename (`pto_base::fs`).
//!
//! Bounded work: a sidecar longer than [`MAX_SIDECAR_BYTES`] is refused
//! before it is read, JSON nesting stops at serde_json's recursion limit
//! (128 levels), and a static shape whose bytes overflow 63 bits is
//! malformed, so no sidecar can make a later allocation of its tensors
//! overflow.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::dtype::{check_pypto_dtype, DType, DTypeError};
use crate::fs::WriteError;
use crate::pyrepr::{json_type_name, repr_json, repr_str_list};

/// The L2 sidecar's file name.
pub const COMPILED_META_FILE: &str = "compiled_meta.json";
/// The L2 sidecar's schema version.
pub const COMPILED_META_SCHEMA: u64 = 1;
/// The L3 sidecar's file name.
pub const DISTRIBUTED_META_FILE: &str = "distributed_meta.json";
/// The L3 sidecar's schema version.
pub const DISTRIBUTED_META_SCHEMA: u64 = 2;
/// The longest sidecar the readers take (64 MiB; PyPTO's are a few KiB,
/// about 80 bytes per parameter).
pub const MAX_SIDECAR_BYTES: u64 = 64 << 20;

/// How an orchestration parameter is passed (PyPTO's `ParamDirection`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamDirection {
    /// Read only.
    In,
    /// Written only; may be allocated for the caller in return-style calls.
    Out,
    /// Read and written; the caller always passes it.
    InOut,
}

impl ParamDirection {
    /// The member name written in JSON: `In`, `Out` or `InOut`.
    pub fn name(self) -> &'static str {
        match self {
            ParamDirection::In => "In",
            ParamDirection::Out => "Out",
            ParamDirection::InOut => "InOut",
        }
    }

    /// The direction with member name `name` (exact, case-sensitive).
    pub fn from_name(name: &str) -> Option<ParamDirection> {
        match name {
            "In" => Some(ParamDirection::In),
            "Out" => Some(ParamDirection::Out),
            "InOut" => Some(ParamDirection::InOut),
            _ => None,
        }
    }
}

/// The code generation backend (PyPTO's `BackendType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BackendType {
    /// Ascend 910B (a2a3); the default when the field is absent.
    #[default]
    Ascend910B,
    /// Ascend 950 (a5).
    Ascend950,
}

impl BackendType {
    /// The member name written in JSON.
    pub fn name(self) -> &'static str {
        match self {
            BackendType::Ascend910B => "Ascend910B",
            BackendType::Ascend950 => "Ascend950",
        }
    }

    /// The backend with member name `name` (exact).
    pub fn from_name(name: &str) -> Option<BackendType> {
        match name {
            "Ascend910B" => Some(BackendType::Ascend910B),
            "Ascend950" => Some(BackendType::Ascend950),
            _ => None,
        }
    }
}

/// One orchestration parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// The parameter's (post-SSA) name.
    pub name: String,
    /// How it is passed.
    pub direction: ParamDirection,
    /// `None` for a scalar; else the dimensions, `-1` for a dynamic one.
    pub shape: Option<Vec<i64>>,
    /// PyPTO's `str(DataType)` (`fp32`, `bfloat16`, `fp8e4m3fn`, ...);
    /// checked against [`crate::dtype::is_known_pypto_dtype`] on load.
    pub dtype: String,
}

impl ParamInfo {
    /// True for a scalar parameter.
    pub fn is_scalar(&self) -> bool {
        self.shape.is_none()
    }

    /// The host element type, if the dtype has one here.
    pub fn host_dtype(&self) -> Result<DType, DTypeError> {
        DType::from_pypto_str(&self.dtype)
    }
}

/// The content of `compiled_meta.json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledMeta {
    /// Orchestration parameters, in call order.
    pub params: Vec<ParamInfo>,
    /// How many values the program returns (only the count matters).
    pub num_return_types: u64,
    /// The platform compiled for (`a2a3sim`, ...), if recorded.
    pub platform: Option<String>,
    /// The backend compiled for.
    pub backend_type: BackendType,
}

/// Which Python exception a [`MetaError`] corresponds to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MetaErrorKind {
    /// The sidecar does not exist (`FileNotFoundError`).
    NotFound,
    /// The sidecar is unreadable or a field is wrong (`ValueError`).
    Invalid,
    /// The sidecar has another schema version (`ValueError`).
    IncompatibleSchema,
}

/// Loading a sidecar failed; the text is PyPTO's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct MetaError {
    kind: MetaErrorKind,
    path: PathBuf,
    message: String,
}

impl MetaError {
    /// What kind of failure this is.
    pub fn kind(&self) -> MetaErrorKind {
        self.kind
    }

    /// The sidecar file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A [`DistributedConfig`] value is out of range (PyPTO's `__post_init__` texts).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("DistributedConfig.{field} {requirement}{}", got.as_ref().map(|g| format!(", got {g}")).unwrap_or_default())]
pub struct DistributedConfigError {
    field: &'static str,
    requirement: &'static str,
    got: Option<String>,
}

/// Most host sub-workers a `DistributedConfig` may ask for: the host runs one thread per
/// sub-worker, and 1024 is the worker-thread limit of a run (`num_sub_workers: 1000000`
/// made the host build a million threads and grow to 2.4 GB).
pub const MAX_SUB_WORKERS: i64 = 1024;

/// Most devices (ranks) a `DistributedConfig` may list: one chip process each.
pub const MAX_DEVICES: usize = 1024;

/// How an L3 program is spread over devices (PyPTO's `DistributedConfig`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistributedConfig {
    device_ids: Vec<i64>,
    num_sub_workers: i64,
    runtime: String,
    aicpu_thread_num: i64,
}

impl Default for DistributedConfig {
    /// PyPTO's defaults: device 0, no sub-workers, the default runtime,
    /// the architecture's AICPU thread count.
    fn default() -> Self {
        DistributedConfig {
            device_ids: vec![0],
            num_sub_workers: 0,
            runtime: crate::kernel_config::DEFAULT_RUNTIME.to_string(),
            aicpu_thread_num: 0,
        }
    }
}

impl DistributedConfig {
    /// A checked config: `device_ids` non-empty, non-negative, distinct and at most
    /// [`MAX_DEVICES`]; `0 <= num_sub_workers <= MAX_SUB_WORKERS`; `aicpu_thread_num` 0 or
    /// at least 2.
    pub fn new(
        device_ids: Vec<i64>,
        num_sub_workers: i64,
        runtime: String,
        aicpu_thread_num: i64,
    ) -> Result<DistributedConfig, DistributedConfigError> {
        let ids_repr = || {
            let parts: Vec<String> = device_ids.iter().map(i64::to_string).collect();
            format!("[{}]", parts.join(", "))
        };
        let fail = |field, requirement, got| {
            Err(DistributedConfigError {
                field,
                requirement,
                got,
            })
        };
        if device_ids.is_empty() {
            return fail("device_ids", "must not be empty", None);
        }
        if device_ids.iter().any(|&id| id < 0) {
            return fail(
                "device_ids",
                "must be non-negative device indices",
                Some(ids_repr()),
            );
        }
        if device_ids.len() > MAX_DEVICES {
            return fail(
                "device_ids",
                "must list at most 1024 devices (MAX_DEVICES: one chip process each)",
                Some(format!("{} devices", device_ids.len())),
            );
        }
        let mut sorted = device_ids.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return fail("device_ids", "must be distinct", Some(ids_repr()));
        }
        if num_sub_workers < 0 {
            return fail(
                "num_sub_workers",
                "must be non-negative",
                Some(num_sub_workers.to_string()),
            );
        }
        if num_sub_workers > MAX_SUB_WORKERS {
            return fail(
                "num_sub_workers",
                "must be at most 1024 (MAX_SUB_WORKERS: the host runs one thread per sub-worker)",
                Some(num_sub_workers.to_string()),
            );
        }
        if aicpu_thread_num < 0 || aicpu_thread_num == 1 {
            return fail(
                "aicpu_thread_num",
                "must be 0 (architecture default) or at least 2",
                Some(aicpu_thread_num.to_string()),
            );
        }
        Ok(DistributedConfig {
            device_ids,
            num_sub_workers,
            runtime,
            aicpu_thread_num,
        })
    }

    /// The devices (ranks) in rank order.
    pub fn device_ids(&self) -> &[i64] {
        &self.device_ids
    }

    /// Host sub-worker processes.
    pub fn num_sub_workers(&self) -> i64 {
        self.num_sub_workers
    }

    /// The chip runtime's wire name.
    pub fn runtime(&self) -> &str {
        &self.runtime
    }

    /// AICPU threads per chip; 0 selects the architecture default.
    pub fn aicpu_thread_num(&self) -> i64 {
        self.aicpu_thread_num
    }
}

/// The content of `distributed_meta.json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistributedMeta {
    /// The HOST orchestrator's parameters, return count, platform and
    /// backend (the fields shared with `compiled_meta.json`).
    pub program: CompiledMeta,
    /// The `distributed_config` block (defaults when absent).
    pub distributed_config: DistributedConfig,
}

const KNOWN_CONFIG_KEYS: [&str; 4] = [
    "aicpu_thread_num",
    "device_ids",
    "num_sub_workers",
    "runtime",
];

/// One sidecar kind: its file, schema and missing-file text.
struct Sidecar {
    file: &'static str,
    schema: u64,
    not_found: &'static str,
}

const COMPILED: Sidecar = Sidecar {
    file: COMPILED_META_FILE,
    schema: COMPILED_META_SCHEMA,
    not_found: "not found — cannot reconstruct a compiled program from this directory. It predates the single-chip replay feature, is a distributed (L3+) build (use DistributedCompiledProgram.from_dir), or is the parent of a multi-orch build (load next_levels/<name>/ instead). Recompile via ir.compile() to refresh.",
};

const DISTRIBUTED: Sidecar = Sidecar {
    file: DISTRIBUTED_META_FILE,
    schema: DISTRIBUTED_META_SCHEMA,
    not_found: "not found — cannot reconstruct a distributed program from this directory. It predates the L3 replay feature or is not a distributed (L3+) build. Recompile via ir.compile() to refresh.",
};

impl Sidecar {
    /// The sidecar path for `dir_or_path`: the path itself when it names the
    /// sidecar (`.../compiled_meta.json`) or an existing file, else the
    /// sidecar inside it, taken as the build directory.
    fn resolve(&self, dir_or_path: &Path) -> PathBuf {
        let names_file = dir_or_path.file_name().is_some_and(|n| n == self.file);
        if (names_file || dir_or_path.is_file()) && !dir_or_path.is_dir() {
            dir_or_path.to_path_buf()
        } else {
            dir_or_path.join(self.file)
        }
    }

    fn invalid(&self, path: &Path, detail: &str) -> MetaError {
        MetaError {
            kind: MetaErrorKind::Invalid,
            path: path.to_path_buf(),
            message: format!(
                "Invalid {} in {}: {detail}. The metadata was written by a different pypto version or hand-edited — recompile via ir.compile() to refresh.",
                self.file,
                path.display()
            ),
        }
    }

    /// Reads the file at `path` (already resolved) up to the schema check.
    fn read_object(&self, path: &Path) -> Result<Map<String, Value>, MetaError> {
        if let Ok(false) = path.try_exists() {
            return Err(MetaError {
                kind: MetaErrorKind::NotFound,
                path: path.to_path_buf(),
                message: format!("{} {}", path.display(), self.not_found),
            });
        }
        let bytes = crate::fs::read_limited(path, MAX_SIDECAR_BYTES).map_err(|e| match e {
            crate::fs::LimitedReadError::Io(e) => {
                self.invalid(path, &format!("cannot be read ({e})"))
            }
            crate::fs::LimitedReadError::TooLarge { len } => self.invalid(
                path,
                &format!(
                    "is {len} bytes, more than the {} a sidecar may have",
                    crate::fs::human_size(MAX_SIDECAR_BYTES)
                ),
            ),
        })?;
        let text = String::from_utf8(bytes)
            .map_err(|e| self.invalid(path, &format!("is not valid UTF-8 text ({e})")))?;
        self.parse_object(&text, path)
    }

    fn parse_object(&self, text: &str, path: &Path) -> Result<Map<String, Value>, MetaError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| self.invalid(path, &format!("not valid JSON ({e})")))?;
        let Value::Object(obj) = value else {
            return Err(self.invalid(
                path,
                &format!("expected a JSON object, got {}", json_type_name(&value)),
            ));
        };
        let schema = obj.get("schema");
        let schema_ok = match schema {
            Some(Value::Number(n)) => {
                n.as_u64() == Some(self.schema)
                    || (n.is_f64() && n.as_f64() == Some(self.schema as f64))
            }
            _ => false,
        };
        if !schema_ok {
            let shown = schema.map_or_else(|| "None".to_string(), repr_json);
            return Err(MetaError {
                kind: MetaErrorKind::IncompatibleSchema,
                path: path.to_path_buf(),
                message: format!(
                    "Incompatible {} schema {shown} (expected {}) in {}. The metadata was written by a different pypto version — recompile via ir.compile() to refresh.",
                    self.file,
                    self.schema,
                    path.display()
                ),
            });
        }
        Ok(obj)
    }

    /// The fields both sidecars share.
    fn common(&self, obj: &Map<String, Value>, path: &Path) -> Result<CompiledMeta, MetaError> {
        let bad = |detail: String| self.invalid(path, &detail);
        let params = match obj.get("params") {
            Some(Value::Array(items)) => items,
            other => {
                let got = other.map_or("NoneType", json_type_name);
                return Err(bad(format!("'params' must be a list, got {got}")));
            }
        };
        let params = params
            .iter()
            .enumerate()
            .map(|(i, entry)| match entry {
                Value::Object(fields) => param_from_json(fields)
                    .map_err(|detail| bad(format!("params[{i}] is malformed ({detail})"))),
                other => Err(bad(format!(
                    "params[{i}] must be an object, got {}",
                    json_type_name(other)
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        // Each name picks the files data/in/<name>.npy, data/out/<name>.npy and
        // data/actual/<name>.npy: two parameters must not share them.
        let mut seen: std::collections::HashMap<&str, usize> =
            std::collections::HashMap::with_capacity(params.len());
        for (i, p) in params.iter().enumerate() {
            if let Some(j) = seen.insert(p.name.as_str(), i) {
                return Err(bad(format!(
                    "params[{i}] repeats the name {} of params[{j}]; parameter names must be unique",
                    crate::pyrepr::repr_str(&p.name)
                )));
            }
        }

        let num_return_types = match obj.get("num_return_types") {
            None => 0,
            Some(v) => v.as_u64().ok_or_else(|| {
                bad(format!(
                    "'num_return_types' must be a non-negative integer, got {}",
                    repr_json(v)
                ))
            })?,
        };
        let backend_type = match obj.get("backend_type") {
            None => BackendType::default(),
            Some(v) => v.as_str().and_then(BackendType::from_name).ok_or_else(|| {
                bad(format!(
                    "'backend_type' must be one of ['Ascend910B', 'Ascend950'], got {}",
                    repr_json(v)
                ))
            })?,
        };
        let platform = match obj.get("platform") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                return Err(bad(format!(
                    "'platform' must be a string or absent, got {}",
                    json_type_name(other)
                )))
            }
        };
        Ok(CompiledMeta {
            params,
            num_return_types,
            platform,
            backend_type,
        })
    }
}

/// A Python identifier (what a parameter name is): a letter or `_`, then letters, digits
/// or `_`. No path separator, dot, space or control character can appear in one.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// One `params[i]` object; the error is the detail inside `(...)`.
fn param_from_json(fields: &Map<String, Value>) -> Result<ParamInfo, String> {
    let get = |key: &str| {
        fields
            .get(key)
            .ok_or_else(|| format!("missing key '{key}'"))
    };
    let name = match get("name")? {
        Value::String(s) => s.clone(),
        other => return Err(format!("'name' must be a string, got {}", repr_json(other))),
    };
    if !is_identifier(&name) {
        return Err(format!(
            "'name' must be a plain identifier (a Python parameter name), got {}; it names the files data/in/<name>.npy and data/out/<name>.npy",
            crate::pyrepr::repr_str(&name)
        ));
    }
    let raw_direction = get("direction")?;
    let direction = raw_direction
        .as_str()
        .and_then(ParamDirection::from_name)
        .ok_or_else(|| {
            format!(
                "'direction' must be one of ['In', 'InOut', 'Out'], got {}",
                repr_json(raw_direction)
            )
        })?;
    let raw_shape = get("shape")?;
    let shape = match raw_shape {
        Value::Null => None,
        Value::Array(dims) => Some(
            dims.iter()
                .map(Value::as_i64)
                .collect::<Option<Vec<i64>>>()
                .ok_or_else(|| {
                    format!(
                        "'shape' must be null or a list of ints, got {}",
                        repr_json(raw_shape)
                    )
                })?,
        ),
        other => {
            return Err(format!(
                "'shape' must be null or a list of ints, got {}",
                repr_json(other)
            ))
        }
    };
    let dtype = match get("dtype")? {
        Value::String(s) => s.clone(),
        other => {
            return Err(format!(
                "'dtype' must be a string, got {}",
                repr_json(other)
            ))
        }
    };
    check_pypto_dtype(&dtype).map_err(|e| e.to_string())?;
    if let Some(dims) = &shape {
        // The static dimensions (-1 is dynamic) must describe a tensor whose
        // bytes fit 63 bits, or allocating it later would overflow.
        let elem_size = DType::from_pypto_str(&dtype).map_or(1, DType::elem_size);
        let bytes = dims
            .iter()
            .filter(|&&d| d >= 0)
            .try_fold(elem_size as i64, |acc, &d| acc.checked_mul(d));
        if bytes.is_none() {
            return Err(format!(
                "'shape' {} of {dtype} holds more bytes than a tensor can (the size overflows 63 bits)",
                repr_json(raw_shape)
            ));
        }
    }
    Ok(ParamInfo {
        name,
        direction,
        shape,
        dtype,
    })
}

fn config_from_json(value: &Value) -> Result<DistributedConfig, String> {
    let Value::Object(fields) = value else {
        return Err(format!(
            "'distributed_config' must be an object, got {}",
            json_type_name(value)
        ));
    };
    let mut unknown: Vec<&str> = fields
        .keys()
        .map(String::as_str)
        .filter(|k| !KNOWN_CONFIG_KEYS.contains(k))
        .collect();
    if !unknown.is_empty() {
        unknown.sort_unstable();
        return Err(format!(
            "'distributed_config' has unknown key(s) {}; known: {}",
            repr_str_list(unknown),
            repr_str_list(KNOWN_CONFIG_KEYS)
        ));
    }
    let defaults = DistributedConfig::default();
    let int = |key: &str, default: i64| -> Result<i64, String> {
        match fields.get(key) {
            None => Ok(default),
            Some(v) => v.as_i64().ok_or_else(|| {
                format!(
                    "'distributed_config.{key}' must be an int, got {}",
                    repr_json(v)
                )
            }),
        }
    };
    let device_ids = match fields.get("device_ids") {
        None => defaults.device_ids.clone(),
        Some(v) => v
            .as_array()
            .and_then(|ids| {
                ids.iter()
                    .map(|d| d.as_i64().filter(|_| !d.is_f64()))
                    .collect()
            })
            .ok_or_else(|| {
                format!(
                    "'distributed_config.device_ids' must be a list of ints, got {}",
                    repr_json(v)
                )
            })?,
    };
    let num_sub_workers = int("num_sub_workers", defaults.num_sub_workers)?;
    let aicpu_thread_num = int("aicpu_thread_num", defaults.aicpu_thread_num)?;
    let runtime = match fields.get("runtime") {
        None => defaults.runtime.clone(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(format!(
                "'distributed_config.runtime' must be a string, got {}",
                repr_json(other)
            ))
        }
    };
    DistributedConfig::new(device_ids, num_sub_workers, runtime, aicpu_thread_num)
        .map_err(|e| format!("'distributed_config' is invalid ({e})"))
}

/// `json.dumps(value, indent=2)`: 2-space indent, non-ASCII escaped.
fn python_json(value: &Value) -> String {
    pto_base::json::escape_non_ascii(&serde_json::to_string_pretty(value).unwrap_or_default())
}

fn common_json(meta: &CompiledMeta, schema: u64) -> Map<String, Value> {
    let params: Vec<Value> = meta
        .params
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "direction": p.direction.name(),
                "shape": p.shape,
                "dtype": p.dtype,
            })
        })
        .collect();
    let mut obj = Map::new();
    obj.insert("schema".into(), json!(schema));
    obj.insert("params".into(), Value::Array(params));
    obj.insert("num_return_types".into(), json!(meta.num_return_types));
    obj.insert("platform".into(), json!(meta.platform));
    obj.insert("backend_type".into(), json!(meta.backend_type.name()));
    obj
}

impl CompiledMeta {
    /// Loads `compiled_meta.json` from the build directory `dir_or_path`,
    /// or from `dir_or_path` itself when it names a `compiled_meta.json` or
    /// an existing file. Errors carry PyPTO's texts and the absolute path of
    /// the file.
    pub fn load(dir_or_path: &Path) -> Result<CompiledMeta, MetaError> {
        let path = crate::fs::absolute(&COMPILED.resolve(dir_or_path));
        let obj = COMPILED.read_object(&path)?;
        COMPILED.common(&obj, &path)
    }

    /// Parses sidecar text; `path_for_errors` is the path errors show.
    pub fn parse(text: &str, path_for_errors: &Path) -> Result<CompiledMeta, MetaError> {
        let obj = COMPILED.parse_object(text, path_for_errors)?;
        COMPILED.common(&obj, path_for_errors)
    }

    /// Indices of the pure `Out` parameters (the ones a return-style call
    /// allocates).
    pub fn output_indices(&self) -> Vec<usize> {
        self.params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.direction == ParamDirection::Out)
            .map(|(i, _)| i)
            .collect()
    }

    /// The file text PyPTO writes for this metadata.
    pub fn to_json_text(&self) -> String {
        python_json(&Value::Object(common_json(self, COMPILED_META_SCHEMA)))
    }

    /// Writes `compiled_meta.json` atomically into the build directory
    /// `dir_or_path` (or to `dir_or_path` itself, chosen as in
    /// [`CompiledMeta::load`]); returns the file written.
    pub fn write(&self, dir_or_path: &Path) -> Result<PathBuf, WriteError> {
        let path = COMPILED.resolve(dir_or_path);
        crate::fs::write_atomic(&path, self.to_json_text().as_bytes())?;
        Ok(path)
    }
}

impl DistributedMeta {
    /// Loads `distributed_meta.json` from the build directory
    /// `dir_or_path`, or from `dir_or_path` itself when it names a
    /// `distributed_meta.json` or an existing file.
    pub fn load(dir_or_path: &Path) -> Result<DistributedMeta, MetaError> {
        let path = crate::fs::absolute(&DISTRIBUTED.resolve(dir_or_path));
        let obj = DISTRIBUTED.read_object(&path)?;
        DistributedMeta::from_object(&obj, &path)
    }

    /// Loads `distributed_meta.json` as [`DistributedMeta::load`] does, checking everything
    /// but its `distributed_config` block: what PyPTO's `from_dir` does when the caller
    /// passes its own `DistributedConfig` (the persisted one is then neither used nor
    /// validated).
    pub fn load_program(dir_or_path: &Path) -> Result<CompiledMeta, MetaError> {
        let path = crate::fs::absolute(&DISTRIBUTED.resolve(dir_or_path));
        let obj = DISTRIBUTED.read_object(&path)?;
        DISTRIBUTED.common(&obj, &path)
    }

    /// Parses sidecar text; `path_for_errors` is the path errors show.
    pub fn parse(text: &str, path_for_errors: &Path) -> Result<DistributedMeta, MetaError> {
        let obj = DISTRIBUTED.parse_object(text, path_for_errors)?;
        DistributedMeta::from_object(&obj, path_for_errors)
    }

    fn from_object(obj: &Map<String, Value>, path: &Path) -> Result<DistributedMeta, MetaError> {
        let program = DISTRIBUTED.common(obj, path)?;
        let distributed_config = match obj.get("distributed_config") {
            None => DistributedConfig::default(),
            Some(v) => config_from_json(v).map_err(|detail| DISTRIBUTED.invalid(path, &detail))?,
        };
        Ok(DistributedMeta {
            program,
            distributed_config,
        })
    }

    /// The file text PyPTO writes for this metadata.
    pub fn to_json_text(&self) -> String {
        let mut obj = common_json(&self.program, DISTRIBUTED_META_SCHEMA);
        let dc = &self.distributed_config;
        obj.insert(
            "distributed_config".into(),
            json!({
                "device_ids": dc.device_ids,
                "num_sub_workers": dc.num_sub_workers,
                "runtime": dc.runtime,
                "aicpu_thread_num": dc.aicpu_thread_num,
            }),
        );
        python_json(&Value::Object(obj))
    }

    /// Writes `distributed_meta.json` atomically into the build directory
    /// `dir_or_path` (or to `dir_or_path` itself, chosen as in
    /// [`DistributedMeta::load`]); returns the file written.
    pub fn write(&self, dir_or_path: &Path) -> Result<PathBuf, WriteError> {
        let path = DISTRIBUTED.resolve(dir_or_path);
        crate::fs::write_atomic(&path, self.to_json_text().as_bytes())?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests;
