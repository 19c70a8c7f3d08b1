//! The element types on the Python side: the one table of them (`pto_base::dtype`) as
//! [`element_type_table`] (PyPTO's types, each with its runtime and host facts) and
//! [`element_types`] (Simpler's codes). Every Python table of names is a view of these.

use pto_base::dtype::{ElementType, ALL, ELEMENT_TYPES};
use pyo3::prelude::*;

/// One element type, as `pypto._native.element_type_table()` lists it.
#[pyclass(module = "pypto._native", name = "ElementType", frozen)]
pub struct ElementTypeInfo {
    /// The member name (`FP32`, as in `pl.FP32`).
    #[pyo3(get)]
    member: &'static str,
    /// PyPTO's `str(DataType)` (`fp32`, `bfloat16`).
    #[pyo3(get)]
    name: &'static str,
    /// Other names accepted for the type (`["bf16"]`).
    #[pyo3(get)]
    aliases: Vec<&'static str>,
    /// Width in bits (4 for the sub-byte types).
    #[pyo3(get)]
    bits: u32,
    /// `bool`, `int`, `uint` or `float`.
    #[pyo3(get)]
    kind: &'static str,
    /// The C++ type of generated code (`float`, `half`), `None` where there is none.
    #[pyo3(get)]
    c_type: Option<&'static str>,
    /// Simpler's code of a tensor of this type at run time (`None` for `index` and the
    /// types Simpler has no code for, `fp8e5m2`, `int4`, ...).
    #[pyo3(get)]
    code: Option<u32>,
    /// torch's name of a host tensor of this type (`float8_e4m3fn`; `index`'s is its host
    /// type's), `None` for a type Simpler has no code for.
    #[pyo3(get)]
    torch_name: Option<&'static str>,
    /// The NumPy / torch name of a host tensor of this type that this runtime's host path
    /// (NumPy arrays, `.npy` / `.pt` files) carries (`bfloat16`), `None` otherwise (the FP8
    /// / FP4 formats too).
    #[pyo3(get)]
    host_name: Option<&'static str>,
    /// NumPy's attribute of the host type (`np.<attr>`: `bool_` for bool), `None` where
    /// NumPy has none (bfloat16).
    #[pyo3(get)]
    numpy_attr: Option<&'static str>,
    /// The ctypes class a scalar of this type is passed as (`c_float`).
    #[pyo3(get)]
    ctypes: Option<&'static str>,
}

impl ElementTypeInfo {
    fn new(t: &ElementType) -> Self {
        let host = t.host.filter(|h| h.row().host).map(|h| h.row());
        ElementTypeInfo {
            member: t.member,
            name: t.name,
            aliases: t.aliases.to_vec(),
            bits: t.bits,
            kind: t.kind.name(),
            c_type: t.c_type,
            code: t.simpler.map(|d| d.code()),
            torch_name: t.host.map(|h| h.torch_name()),
            host_name: host.map(|h| h.torch_name),
            numpy_attr: host.and_then(|h| h.numpy_attr),
            ctypes: host.and_then(|h| h.ctypes),
        }
    }
}

#[pymethods]
impl ElementTypeInfo {
    fn __repr__(&self) -> String {
        format!("ElementType({:?})", self.member)
    }
}

/// PyPTO's element types, in PyPTO's order (`INDEX` last).
#[pyfunction]
pub fn element_type_table() -> Vec<ElementTypeInfo> {
    ELEMENT_TYPES.iter().map(ElementTypeInfo::new).collect()
}

/// Simpler's element types, `(code, name, itemsize, torch_name)` in code order,
/// `torch_name` torch's name of the type (`float32`, `float8_e4m3fn`, `float4_e2m1fn_x2`).
#[pyfunction]
pub fn element_types() -> Vec<(u32, &'static str, usize, &'static str)> {
    ALL.iter()
        .map(|d| (d.code(), d.name(), d.elem_size(), d.torch_name()))
        .collect()
}

/// Registers the class and functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ElementTypeInfo>()?;
    m.add_function(wrap_pyfunction!(element_type_table, m)?)?;
    m.add_function(wrap_pyfunction!(element_types, m)?)?;
    Ok(())
}
