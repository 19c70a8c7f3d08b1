//! What an example is (parameters, sources, data, tolerances) and how its build directory is
//! written.
//!
//! An [`Example`] is everything `ir.compile` plus the test harness would leave in a
//! `build_output/<dir>/`: the hand-written C++ (orchestration and kernels, embedded in this
//! crate), the orchestration's parameters with their input and golden data, and the
//! tolerances. [`Example::write`] lays it out exactly as PyPTO does (layout of
//! `pypto-runtime-layer.md` §1.2):
//!
//! ```text
//! <dir>/kernel_config.py                  the runtime manifest (PyPTO's exact shape)
//! <dir>/compiled_meta.json                the L2 sidecar (schema 1)
//! <dir>/orchestration/<name>.cpp
//! <dir>/kernels/{aic,aiv}/<func>.cpp
//! <dir>/ptoas/<unit>.{pto,cpp}           PTO-AS source and its translation (PTO-ISA kernels)
//! <dir>/golden.py                         generate_inputs / compute_golden (NumPy only)
//! <dir>/debug/run.py                      the re-runner (`python debug/run.py`), see run_script
//! <dir>/data/in/<param>.npy               pure inputs and initial values of InOut tensors
//! <dir>/data/out/<param>.npy              golden values of Out and InOut tensors
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pto_build_output::compiled_meta::{BackendType, CompiledMeta, ParamDirection, ParamInfo};
use pto_build_output::dtype::DType;
use pto_build_output::kernel_config::{
    ArgDirection, CoreType, KernelConfig, KernelEntry, OrchestrationConfig, RuntimeConfig,
    DEFAULT_ORCHESTRATION_FUNCTION,
};
use pto_build_output::npy::{write_npy, NpyArray};

use crate::golden_py;
use crate::ptoas_unit::PtoasUnit;
use crate::Error;

/// The platform recorded in every example's `compiled_meta.json`.
pub const PLATFORM: &str = "a2a3sim";

/// A scalar orchestration parameter and its value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A 32-bit float (PyPTO `fp32`, `ctypes.c_float`).
    F32(f32),
    /// A 32-bit integer (PyPTO `int32`, `ctypes.c_int32`).
    I32(i32),
    /// A 64-bit integer (PyPTO `int64`, `ctypes.c_int64`).
    I64(i64),
}

impl Scalar {
    /// The raw 64-bit value an orchestration receives from `orch_args.scalar(i)`: the value's
    /// little-endian bytes in the low bytes, zero above (what binding a ctypes value gives).
    pub fn bits(self) -> u64 {
        match self {
            Scalar::F32(v) => u64::from(v.to_bits()),
            Scalar::I32(v) => u64::from(v as u32),
            Scalar::I64(v) => v as u64,
        }
    }

    /// PyPTO's `str(DataType)` of the scalar.
    pub fn pypto_dtype(self) -> &'static str {
        match self {
            Scalar::F32(_) => "fp32",
            Scalar::I32(_) => "int32",
            Scalar::I64(_) => "int64",
        }
    }

    /// The Python expression building the value (`ctypes.c_float(0.5)`).
    pub fn ctypes_expr(self) -> String {
        match self {
            Scalar::F32(v) => format!(
                "ctypes.c_float({})",
                pto_base::pyrepr::float_literal(f64::from(v))
            ),
            Scalar::I32(v) => format!("ctypes.c_int32({v})"),
            Scalar::I64(v) => format!("ctypes.c_int64({v})"),
        }
    }
}

/// A tensor parameter: its type, shape and data.
#[derive(Clone, Debug)]
pub struct TensorParam {
    /// Element type.
    pub dtype: DType,
    /// Shape (row-major, contiguous).
    pub shape: Vec<usize>,
    /// The content of `data/in/<name>.npy`; `None` for a pure output (bound zero-filled).
    pub input: Option<NpyArray>,
    /// The content of `data/out/<name>.npy`; `None` for a pure input.
    pub golden: Option<NpyArray>,
}

/// What a parameter holds.
#[derive(Clone, Debug)]
pub enum ParamValue {
    /// A tensor.
    Tensor(TensorParam),
    /// A scalar (passed after every tensor).
    Scalar(Scalar),
}

/// One orchestration parameter, in call order.
#[derive(Clone, Debug)]
pub struct Param {
    /// The parameter name (also the `.npy` file stem).
    pub name: &'static str,
    /// How it is passed.
    pub direction: ParamDirection,
    /// Its type and data.
    pub value: ParamValue,
}

impl Param {
    /// A pure input tensor holding `data`.
    pub fn input(name: &'static str, data: NpyArray) -> Param {
        Param {
            name,
            direction: ParamDirection::In,
            value: ParamValue::Tensor(TensorParam {
                dtype: data.dtype,
                shape: data.shape.clone(),
                input: Some(data),
                golden: None,
            }),
        }
    }

    /// A pure output tensor whose expected value is `golden`.
    pub fn output(name: &'static str, golden: NpyArray) -> Param {
        Param {
            name,
            direction: ParamDirection::Out,
            value: ParamValue::Tensor(TensorParam {
                dtype: golden.dtype,
                shape: golden.shape.clone(),
                input: None,
                golden: Some(golden),
            }),
        }
    }

    /// An InOut tensor starting as `initial` and expected to end as `golden`.
    pub fn inout(name: &'static str, initial: NpyArray, golden: NpyArray) -> Param {
        Param {
            name,
            direction: ParamDirection::InOut,
            value: ParamValue::Tensor(TensorParam {
                dtype: initial.dtype,
                shape: initial.shape.clone(),
                input: Some(initial),
                golden: Some(golden),
            }),
        }
    }

    /// A scalar input.
    pub fn scalar(name: &'static str, value: Scalar) -> Param {
        Param {
            name,
            direction: ParamDirection::In,
            value: ParamValue::Scalar(value),
        }
    }

    /// The tensor part, or `None` for a scalar.
    pub fn tensor(&self) -> Option<&TensorParam> {
        match &self.value {
            ParamValue::Tensor(t) => Some(t),
            ParamValue::Scalar(_) => None,
        }
    }

    /// The scalar value, or `None` for a tensor.
    pub fn scalar_value(&self) -> Option<Scalar> {
        match self.value {
            ParamValue::Scalar(s) => Some(s),
            ParamValue::Tensor(_) => None,
        }
    }

    /// The kernel-config direction of a tensor parameter.
    fn arg_direction(&self) -> ArgDirection {
        match self.direction {
            ParamDirection::In => ArgDirection::In,
            ParamDirection::Out => ArgDirection::Out,
            ParamDirection::InOut => ArgDirection::InOut,
        }
    }
}

/// A kernel of an example: its `KERNELS` entry and its C++ source.
#[derive(Clone, Debug)]
pub struct KernelSource {
    /// The id the orchestration submits it with.
    pub func_id: i32,
    /// The kernel function name (also the `.cpp` file stem).
    pub name: &'static str,
    /// The core it runs on.
    pub core_type: CoreType,
    /// Direction per tensor argument, in task-payload order.
    pub signature: Vec<ArgDirection>,
    /// The kernel `.cpp` (header, ptoas body, `kernel_entry`).
    pub source: String,
    /// The ptoas unit whose translation is the body of `source` (written to
    /// `ptoas/<unit>.pto` and `ptoas/<unit>.cpp`); `None` for a kernel written directly in
    /// C++. The kernels of a mixed group share one unit.
    pub ptoas_unit: Option<Arc<PtoasUnit>>,
}

impl KernelSource {
    /// A kernel written directly in C++ (no `.pto`).
    pub fn cpp(
        func_id: i32,
        name: &'static str,
        core_type: CoreType,
        signature: Vec<ArgDirection>,
        source: &str,
    ) -> KernelSource {
        KernelSource {
            func_id,
            name,
            core_type,
            signature,
            source: source.to_string(),
            ptoas_unit: None,
        }
    }

    /// A kernel whose body is the translation of `unit`, spliced into `wrapper` (a kernel
    /// file in PyPTO's shape) between the sentinels; see [`PtoasUnit::kernel_source`].
    pub fn from_ptoas(
        func_id: i32,
        name: &'static str,
        core_type: CoreType,
        signature: Vec<ArgDirection>,
        unit: &Arc<PtoasUnit>,
        wrapper: &str,
    ) -> Result<KernelSource, Error> {
        Ok(KernelSource {
            func_id,
            name,
            core_type,
            signature,
            source: unit.kernel_source(name, wrapper)?,
            ptoas_unit: Some(Arc::clone(unit)),
        })
    }

    /// `kernels/<aic|aiv>/<name>.cpp`, relative to the build directory.
    pub fn relative_path(&self) -> PathBuf {
        Path::new("kernels")
            .join(self.core_type.as_str())
            .join(format!("{}.cpp", self.name))
    }
}

/// One example build directory.
#[derive(Clone, Debug)]
pub struct Example {
    /// The directory name, which is also the orchestration function's name.
    pub name: &'static str,
    /// The orchestration `.cpp`.
    pub orchestration_source: &'static str,
    /// The kernels, by `func_id`.
    pub kernels: Vec<KernelSource>,
    /// Orchestration parameters in call order (tensors first, then scalars).
    pub params: Vec<Param>,
    /// Relative tolerance of the golden comparison.
    pub rtol: f64,
    /// Absolute tolerance of the golden comparison.
    pub atol: f64,
    /// The body of `compute_golden(tensors, params)` in `golden.py` (NumPy, 4-space indent).
    pub compute_golden_py: String,
    /// How many tasks one run submits (kernel and allocation tasks).
    pub expected_tasks: u64,
}

impl Example {
    /// `orchestration/<name>.cpp`, relative to the build directory.
    pub fn orchestration_relative_path(&self) -> PathBuf {
        Path::new("orchestration").join(format!("{}.cpp", self.name))
    }

    /// The content of `compiled_meta.json`. `num_return_types` counts the pure outputs
    /// (the tensors the PyPTO function returns).
    pub fn compiled_meta(&self) -> CompiledMeta {
        let params = self
            .params
            .iter()
            .map(|p| match &p.value {
                ParamValue::Tensor(t) => ParamInfo {
                    name: p.name.to_string(),
                    direction: p.direction,
                    shape: Some(t.shape.iter().map(|&d| d as i64).collect()),
                    dtype: t.dtype.pypto_name().to_string(),
                },
                ParamValue::Scalar(s) => ParamInfo {
                    name: p.name.to_string(),
                    direction: p.direction,
                    shape: None,
                    dtype: s.pypto_dtype().to_string(),
                },
            })
            .collect();
        let num_return_types = self
            .params
            .iter()
            .filter(|p| p.direction == ParamDirection::Out)
            .count() as u64;
        CompiledMeta {
            params,
            num_return_types,
            platform: Some(PLATFORM.to_string()),
            backend_type: BackendType::Ascend910B,
        }
    }

    /// The content of `kernel_config.py`, with sources relative to the build directory (so
    /// they are written as `str(_ROOT_DIR / ...)`).
    pub fn kernel_config(&self) -> KernelConfig {
        let signature = self
            .params
            .iter()
            .filter(|p| p.tensor().is_some())
            .map(Param::arg_direction)
            .collect();
        KernelConfig {
            runtime: RuntimeConfig::default(),
            orchestration: OrchestrationConfig {
                source: self.orchestration_relative_path(),
                function_name: DEFAULT_ORCHESTRATION_FUNCTION.to_string(),
                config_name: None,
                signature: Some(signature),
            },
            kernels: self
                .kernels
                .iter()
                .map(|k| KernelEntry {
                    func_id: k.func_id,
                    name: k.name.to_string(),
                    source: k.relative_path(),
                    core_type: k.core_type,
                    signature: Some(k.signature.clone()),
                    extra_include_dirs: Vec::new(),
                    external: false,
                })
                .collect(),
        }
    }

    /// The ptoas units of the kernels, each once, in kernel order.
    pub fn ptoas_units(&self) -> Result<Vec<&PtoasUnit>, Error> {
        let mut units: Vec<&PtoasUnit> = Vec::new();
        for unit in self.kernels.iter().filter_map(|k| k.ptoas_unit.as_deref()) {
            match units.iter().find(|u| u.name == unit.name) {
                Some(seen) if *seen == unit => {}
                Some(_) => {
                    return Err(Error::Unsupported {
                        what: format!(
                            "example {}: two different ptoas units named {}",
                            self.name, unit.name
                        ),
                    })
                }
                None => units.push(unit),
            }
        }
        Ok(units)
    }

    /// The text of `golden.py`.
    pub fn golden_py(&self) -> Result<String, Error> {
        golden_py::render(self)
    }

    /// The text of `debug/run.py` (what `pypto.runtime.debug.write_run_script` writes).
    pub fn run_script(&self) -> String {
        pto_build_output::run_script::render(
            &self.compiled_meta().params,
            Some(PLATFORM),
            pto_build_output::run_script::TensorLib::Numpy,
        )
    }

    /// Writes the whole build directory into `dir` (created if needed) and returns the files
    /// written, in a fixed order. Every file is replaced atomically; files already in `dir`
    /// that this example does not produce are left alone.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, Error> {
        let mut written = Vec::new();
        // A fresh single-chip build drops the other build kind's markers (never directories),
        // exactly as a compile into a reused directory does.
        std::fs::create_dir_all(dir).map_err(|source| Error::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        pto_build_output::drop_foreign_build_markers(dir, pto_build_output::BuildKind::SingleChip)
            .map_err(|e| Error::Write {
                path: dir.to_path_buf(),
                source: std::io::Error::other(e.to_string()),
            })?;

        let path = dir.join("kernel_config.py");
        create_parent(&path)?;
        self.kernel_config().write(&path)?;
        written.push(path);

        written.push(self.compiled_meta().write(dir)?);

        let path = dir.join(self.orchestration_relative_path());
        write_file(&path, self.orchestration_source.as_bytes())?;
        written.push(path);
        for k in &self.kernels {
            let path = dir.join(k.relative_path());
            write_file(&path, k.source.as_bytes())?;
            written.push(path);
        }
        // The `.pto` first, then its translation: replay regenerates a unit whose
        // `ptoas/<unit>.cpp` is older than its `.pto`.
        for unit in self.ptoas_units()? {
            for (ext, text) in [("pto", unit.pto), ("cpp", unit.cpp.as_str())] {
                let path = dir.join("ptoas").join(format!("{}.{ext}", unit.name));
                write_file(&path, text.as_bytes())?;
                written.push(path);
            }
        }

        let path = dir.join("golden.py");
        write_file(&path, self.golden_py()?.as_bytes())?;
        written.push(path);

        let path = dir.join("debug").join("run.py");
        write_file(&path, self.run_script().as_bytes())?;
        written.push(path);

        for p in &self.params {
            // Scalars are stored as 0-d arrays so that tools without Python (the `pto` CLI)
            // can bind them too; golden.py builds the same values with ctypes.
            if let Some(s) = p.scalar_value() {
                let array = match s {
                    Scalar::F32(v) => f32_array(&[], &[v])?,
                    Scalar::I32(v) => i32_array(&[], &[v])?,
                    Scalar::I64(v) => {
                        NpyArray::new(DType::Int64, Vec::new(), v.to_le_bytes().to_vec())?
                    }
                };
                let path = dir.join("data").join("in").join(format!("{}.npy", p.name));
                create_parent(&path)?;
                write_npy(&path, &array)?;
                written.push(path);
                continue;
            }
            let Some(t) = p.tensor() else { continue };
            for (sub, array) in [("in", &t.input), ("out", &t.golden)] {
                if let Some(array) = array {
                    let path = dir.join("data").join(sub).join(format!("{}.npy", p.name));
                    create_parent(&path)?;
                    write_npy(&path, array)?;
                    written.push(path);
                }
            }
        }
        Ok(written)
    }
}

/// Creates the directory `path` goes in (and its parents).
fn create_parent(path: &Path) -> Result<(), Error> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).map_err(|source| Error::CreateDir {
                path: dir.to_path_buf(),
                source,
            })
        }
        _ => Ok(()),
    }
}

/// Writes `bytes` to `path` (creating its directory) atomically
/// ([`pto_base::fs`]), so the file is never seen half-written.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    pto_base::fs::write_atomic(path, bytes).map_err(|e| Error::Write {
        path: e.path,
        source: std::io::Error::new(e.source.kind(), format!("{}: {}", e.step, e.source)),
    })
}

/// An fp32 array of `shape` holding `values`.
pub fn f32_array(shape: &[usize], values: &[f32]) -> Result<NpyArray, Error> {
    let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Ok(NpyArray::new(DType::Float32, shape.to_vec(), data)?)
}

/// An int32 array of `shape` holding `values`.
pub fn i32_array(shape: &[usize], values: &[i32]) -> Result<NpyArray, Error> {
    let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Ok(NpyArray::new(DType::Int32, shape.to_vec(), data)?)
}

/// An fp32 array of `shape` holding `values` rounded from f64 to nearest f32.
pub fn f32_array_from_f64(shape: &[usize], values: &[f64]) -> Result<NpyArray, Error> {
    let rounded: Vec<f32> = values.iter().map(|&v| v as f32).collect();
    f32_array(shape, &rounded)
}
