//! `HostArray`: a tensor's host bytes held by the native module, so that a run can be fed
//! without NumPy.
//!
//! The replay command line binds a build's `data/in/*.npy` files through it when its
//! `golden.py` only loads those files (as `pto replay` binds them), so that it never imports
//! NumPy. A `HostArray` is accepted wherever a tensor argument is (`Program.execute`,
//! `Program.benchmark`), with the same dtype and shape checks as a NumPy array, and an output
//! is written back into it.

use pto_build_output::{DType, NpyArray};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::conversion;
use crate::error::{build_output_error, value_error};

/// A C-ordered tensor's dtype, shape and bytes, held natively.
#[pyclass(module = "pypto._native")]
pub struct HostArray {
    pub(crate) array: NpyArray,
}

#[pymethods]
impl HostArray {
    /// Reads a tensor file: `.npy` (as `numpy.save` writes it) or `.pt` (`torch.save`).
    ///
    /// Raises `FileNotFoundError` when it is missing and `ValueError` when it cannot be read
    /// (a Fortran-ordered or big-endian array, an unsupported dtype, a damaged file).
    #[staticmethod]
    fn load(py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<HostArray> {
        let path = conversion::path(path, "path")?;
        let array = py
            .detach(|| pto_build_output::read_tensor(&path))
            .map_err(build_output_error)?;
        Ok(HostArray { array })
    }

    /// A zero-filled array of PyPTO dtype `dtype` (`fp32`, `int32`, ...) and `shape`.
    ///
    /// Raises `ValueError` for a dtype with no host type or a shape too large to allocate.
    #[staticmethod]
    fn zeros(dtype: &str, shape: Vec<usize>) -> PyResult<HostArray> {
        let dtype = DType::from_pypto_str(dtype).map_err(|e| value_error(e.to_string()))?;
        let array = NpyArray::zeros(dtype, &shape).map_err(build_output_error)?;
        Ok(HostArray { array })
    }

    /// PyPTO's name of the element type (`fp32`, `bfloat16`, ...).
    #[getter]
    fn dtype(&self) -> &'static str {
        self.array.dtype.pypto_name()
    }

    /// The dimensions (empty for a 0-d array).
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.array.shape.clone()
    }

    /// The size of the data in bytes.
    #[getter]
    fn nbytes(&self) -> usize {
        self.array.data.len()
    }

    /// The data: the elements in C order, little-endian.
    fn tobytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.array.data)
    }

    /// A NumPy copy (imports NumPy); bfloat16 comes back as its `uint16` bits.
    fn to_numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let numpy = py.import("numpy")?;
        let descr = match self.array.dtype {
            DType::BFloat16 => "<u2",
            other => other.npy_descr(),
        };
        numpy
            .call_method1("frombuffer", (self.tobytes(py), descr))?
            .call_method1("reshape", (self.array.shape.clone(),))?
            .call_method0("copy")
    }

    fn __repr__(&self) -> String {
        format!(
            "HostArray(dtype='{}', shape={:?})",
            self.array.dtype.pypto_name(),
            self.array.shape
        )
    }
}
