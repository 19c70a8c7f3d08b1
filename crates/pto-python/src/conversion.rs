//! Conversions between Python values and the runner's types, all in one place.
//!
//! Nothing else in this crate extracts a Python value. A wrong Python type fails here, as a
//! `TypeError` that names the parameter or option; a value of the right type that the Rust
//! validators reject fails with the Rust text (see [`python_value_in_message`]).
//!
//! Tensors are NumPy arrays. The module reads them through NumPy's Python API (`dtype.str`,
//! `shape`, `tobytes()`) and writes outputs back with `numpy.copyto`, so it needs neither the
//! buffer protocol (absent from the `abi3-py39` limited API) nor a second binding crate. The
//! copies cost one memcpy per tensor and direction, small beside compiling and running.
//! A [`HostArray`] (the native module's own tensor) is bound the same way, without NumPy;
//! NumPy is never imported here, only looked up once the caller has imported it.
//!
//! **bfloat16.** NumPy has no bfloat16. An ml_dtypes `bfloat16` array (`dtype.str == '<V2'`)
//! is read as bfloat16; so is a `uint16` array bound to a parameter whose declared dtype is
//! `bfloat16` (the raw bits; the sidecar's dtype is the explicit type).

use std::path::PathBuf;

use pto_build_output::{DType, NpyArray, ParamInfo};
use pto_runner::dfx_switches::{DfxSwitch, SwitchKind};
use pto_runner::{DfxOptions, RingValue};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyList, PyTuple};

use crate::error::{type_error, value_error};
use crate::host_array::HostArray;

/// The stand-in a Rust validator sees for a Python value its integer type cannot hold
/// (a bool, a negative or huge int, a non-int). Every validator rejects it, and
/// [`python_value_in_message`] puts the Python value back into the message.
pub const U64_SENTINEL: u64 = u64::MAX;

/// Replaces the trailing `got <sentinel>` of a Rust validation message with `got <repr>`, the
/// value the Python caller passed. Messages without that ending are returned unchanged.
pub fn python_value_in_message(message: String, sentinel: &str, repr: Option<&str>) -> String {
    let Some(repr) = repr else { return message };
    let tail = format!("got {sentinel}");
    match message.strip_suffix(&tail) {
        Some(head) => format!("{head}got {repr}"),
        None => message,
    }
}

/// `repr(obj)`, or a placeholder when `repr` itself fails.
pub fn repr(obj: &Bound<'_, PyAny>) -> String {
    obj.repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<unrepresentable>".to_string())
}

/// `type(obj).__name__`.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".to_string())
}

/// A path argument: `str` or `os.PathLike`.
pub fn path(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<PathBuf> {
    obj.extract::<PathBuf>().map_err(|_| {
        type_error(format!(
            "{what} must be a str or os.PathLike, got {}",
            type_name(obj)
        ))
    })
}

/// A non-bool Python int that fits `u64`.
fn plain_u64(obj: &Bound<'_, PyAny>) -> Option<u64> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return None;
    }
    obj.extract::<u64>().ok()
}

/// A ring override as written in Python: `None`, an int, or a list / tuple of one int per
/// ring (0 keeps that ring's default). `bad_repr` is the first value the Rust type could not
/// hold, shown in place of [`U64_SENTINEL`] in the validator's message.
pub struct RingArg {
    /// The override, with [`U64_SENTINEL`] for each value that does not fit.
    pub value: Option<RingValue>,
    /// `repr` of the first value replaced by the sentinel.
    pub bad_repr: Option<String>,
}

impl RingArg {
    /// Reads `obj` (see the type's docs). Never fails: type problems become the sentinel, so
    /// the Rust validator words the error (`<field> must ..., got <value>`).
    pub fn extract(obj: &Bound<'_, PyAny>) -> RingArg {
        let mut bad_repr = None;
        let mut one = |item: &Bound<'_, PyAny>| {
            plain_u64(item).unwrap_or_else(|| {
                bad_repr.get_or_insert_with(|| repr(item));
                U64_SENTINEL
            })
        };
        let value = if obj.is_none() {
            None
        } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
            let items: Vec<Bound<'_, PyAny>> = match obj.try_iter() {
                Ok(iter) => iter.filter_map(Result::ok).collect(),
                Err(_) => Vec::new(),
            };
            Some(RingValue::PerRing(items.iter().map(&mut one).collect()))
        } else {
            Some(RingValue::Scalar(one(obj)))
        };
        RingArg { value, bad_repr }
    }
}

/// A diagnostics switch's value (`s`, from [`pto_runner::dfx_switches`]) as its
/// [`DfxOptions`] field stores it, and the Python value's repr when the field cannot hold it (so a range error
/// shows what the caller passed, see [`python_value_in_message`]).
///
/// A flag is Python truthiness. A level is an int (`True` the switch's bare value, `False`
/// 0); another type is a `TypeError` naming `source` (the keyword, or the deprecated alias
/// the caller used). An int the field cannot hold, when the stored value would pass the
/// range check, is a `ValueError` here; otherwise the range check reports it.
pub fn switch_value(
    s: &DfxSwitch,
    obj: &Bound<'_, PyAny>,
    source: &str,
) -> PyResult<(u32, Option<String>)> {
    let SwitchKind::Level {
        bare,
        type_text,
        range_text,
        ..
    } = s.kind
    else {
        return Ok((u32::from(flag(obj)?), None));
    };
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok((if b.is_true() { bare } else { 0 }, None));
    }
    if !obj.is_instance_of::<PyInt>() {
        return Err(type_error(format!(
            "{source} must be {type_text}, got {}",
            type_name(obj)
        )));
    }
    let given = obj.extract::<u32>().ok();
    let mut field = DfxOptions::default();
    (s.set)(&mut field, given.unwrap_or(u32::MAX));
    let stored = (s.get)(&field);
    if given == Some(stored) {
        return Ok((stored, None));
    }
    if s.check(stored, source).is_ok() {
        return Err(value_error(format!(
            "{source} must be {range_text}, got {}",
            repr(obj)
        )));
    }
    Ok((stored, Some(repr(obj))))
}

/// A flag: Python truthiness, as a dataclass `bool` field behaves.
pub fn flag(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    obj.is_truthy()
}

/// A non-negative count or `None` (`n_workers`).
pub fn optional_count(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<usize>> {
    if obj.is_none() {
        return Ok(None);
    }
    match plain_u64(obj).and_then(|v| usize::try_from(v).ok()) {
        Some(0) | None => Err(value_error(format!(
            "{what} must be a positive int or None, got {}",
            repr(obj)
        ))),
        Some(v) => Ok(Some(v)),
    }
}

/// A non-negative, finite number of seconds or `None` (`scheduler_timeout`).
pub fn optional_seconds(
    obj: &Bound<'_, PyAny>,
    what: &str,
) -> PyResult<Option<std::time::Duration>> {
    if obj.is_none() {
        return Ok(None);
    }
    let seconds = float(obj, what)?;
    std::time::Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .map(Some)
        .ok_or_else(|| {
            value_error(format!(
                "{what} must be a positive number of seconds or None, got {}",
                repr(obj)
            ))
        })
}

/// A float option (`rtol`, `atol`): any real number except bool.
pub fn float(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<f64> {
    if obj.is_instance_of::<PyBool>() {
        return Err(type_error(format!("{what} must be a float, got bool")));
    }
    obj.extract::<f64>()
        .map_err(|_| type_error(format!("{what} must be a float, got {}", type_name(obj))))
}

/// A list of ints (`device_ids`), with `TypeError` naming `what` otherwise.
pub fn int_list(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<i64>> {
    let err = || type_error(format!("{what} must be a list of ints, got {}", repr(obj)));
    if !(obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>()) {
        return Err(err());
    }
    let mut out = Vec::new();
    for item in obj.try_iter()? {
        let item = item?;
        if item.is_instance_of::<PyBool>() || !item.is_instance_of::<PyInt>() {
            return Err(err());
        }
        out.push(item.extract::<i64>().map_err(|_| err())?);
    }
    Ok(out)
}

/// An int option (`num_sub_workers`), `TypeError` naming `what` otherwise.
pub fn int(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(type_error(format!(
            "{what} must be an int, got {}",
            type_name(obj)
        )));
    }
    obj.extract::<i64>()
        .map_err(|_| value_error(format!("{what} is out of range, got {}", repr(obj))))
}

/// NumPy's module when it is imported already, else `None`: no NumPy value exists before
/// NumPy is imported, so the type tests never import it (a run fed with
/// [`HostArray`]s and ctypes scalars stays free of NumPy).
fn loaded_numpy<'py>(py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let numpy = py
        .import("sys")?
        .getattr("modules")?
        .call_method1("get", ("numpy",))?;
    Ok((!numpy.is_none()).then_some(numpy))
}

/// `isinstance(obj, numpy.<class_name>)`, false when NumPy is not imported.
fn is_numpy_instance(obj: &Bound<'_, PyAny>, class_name: &str) -> PyResult<bool> {
    match loaded_numpy(obj.py())? {
        Some(numpy) => obj.is_instance(&numpy.getattr(class_name)?),
        None => Ok(false),
    }
}

fn is_ndarray(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    is_numpy_instance(obj, "ndarray")
}

/// The element type of a NumPy array's `dtype.str`, or `None` when unsupported.
fn array_dtype(obj: &Bound<'_, PyAny>) -> PyResult<(String, Option<DType>)> {
    let descr: String = obj.getattr("dtype")?.getattr("str")?.extract()?;
    let dtype = DType::from_npy_descr(&descr).ok();
    Ok((descr, dtype))
}

/// The array's dtype name as NumPy prints it (`float64`), for messages.
fn numpy_dtype_name(obj: &Bound<'_, PyAny>) -> String {
    obj.getattr("dtype")
        .and_then(|d| d.getattr("name"))
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "unknown".to_string())
}

fn array_shape(obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    obj.getattr("shape")?.extract()
}

fn array_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let bytes = obj.call_method1("tobytes", ("C",))?;
    Ok(bytes.cast::<PyBytes>()?.as_bytes().to_vec())
}

/// A NumPy array as host bytes, for comparisons (no parameter to check it against).
pub fn any_array(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<NpyArray> {
    if !is_ndarray(obj)? {
        return Err(type_error(format!(
            "{what} must be a numpy.ndarray, got {}",
            type_name(obj)
        )));
    }
    let (descr, dtype) = array_dtype(obj)?;
    let dtype = dtype.ok_or_else(|| {
        type_error(format!(
            "{what} has dtype {} ({descr}), which the runtime has no element type for",
            numpy_dtype_name(obj)
        ))
    })?;
    let array = NpyArray::new(dtype, array_shape(obj)?, array_bytes(obj)?)
        .map_err(crate::error::build_output_error)?;
    Ok(array)
}

/// A tensor argument for parameter `param` (at `position`): a C-contiguous NumPy array (or
/// a [`HostArray`]) of the declared dtype and a matching shape (`-1` matches any extent).
pub fn tensor_arg(
    obj: &Bound<'_, PyAny>,
    param: &ParamInfo,
    position: usize,
) -> PyResult<NpyArray> {
    let name = &param.name;
    if let Ok(host) = obj.cast::<HostArray>() {
        let host = host.borrow();
        let a = &host.array;
        let dtype = checked_dtype(param, Some(a.dtype), a.dtype.host_name())?;
        check_shape(param, &a.shape)?;
        return NpyArray::new(dtype, a.shape.clone(), a.data.clone())
            .map_err(crate::error::build_output_error);
    }
    if !is_ndarray(obj)? {
        return Err(type_error(format!(
            "Parameter '{name}' is a tensor; got {}. Pass a numpy.ndarray (or a torch.Tensor).",
            type_name(obj)
        )));
    }
    let contiguous: bool = obj.getattr("flags")?.getattr("c_contiguous")?.extract()?;
    if !contiguous {
        return Err(value_error(format!(
            "Tensor at position {position} is not contiguous. Call numpy.ascontiguousarray() (or .contiguous() on a torch.Tensor) first."
        )));
    }
    let (_, got) = array_dtype(obj)?;
    let dtype = checked_dtype(param, got, &numpy_dtype_name(obj))?;
    let shape = array_shape(obj)?;
    check_shape(param, &shape)?;
    NpyArray::new(dtype, shape, array_bytes(obj)?).map_err(crate::error::build_output_error)
}

/// The element type a tensor of element type `got` (NumPy's name `got_name`) is bound as
/// for `param`, or the `TypeError` of a mismatch.
fn checked_dtype(param: &ParamInfo, got: Option<DType>, got_name: &str) -> PyResult<DType> {
    let want = param
        .host_dtype()
        .map_err(crate::error::build_output_error)?;
    match got {
        Some(d) if d == want => Ok(d),
        // uint16 bits bound to a bfloat16 parameter (see the module docs).
        Some(DType::UInt16) if want == DType::BFloat16 => Ok(DType::BFloat16),
        _ => Err(type_error(format!(
            "Parameter '{}' expects dtype {}; got a {got_name} array. Convert it with .astype() first{}.",
            param.name,
            param.dtype,
            if want == DType::BFloat16 {
                " (bfloat16: an ml_dtypes.bfloat16 array, or its bits as uint16)"
            } else {
                ""
            }
        ))),
    }
}

/// The `ValueError` of a shape that does not match `param`'s (`-1` matches any extent).
fn check_shape(param: &ParamInfo, shape: &[usize]) -> PyResult<()> {
    let declared = param.shape.as_deref().unwrap_or(&[]);
    let shape_ok = shape.len() == declared.len()
        && shape
            .iter()
            .zip(declared)
            .all(|(&got, &want)| want < 0 || i64::try_from(got) == Ok(want));
    if shape_ok {
        Ok(())
    } else {
        Err(value_error(format!(
            "Parameter '{}' expects shape {declared:?}; got {shape:?}",
            param.name
        )))
    }
}

/// A scalar argument for parameter `param`: a Python number, a NumPy scalar or a ctypes
/// value, encoded as the declared dtype: its little-endian bytes in the low bytes of the
/// 64-bit slot, zero above.
pub fn scalar_arg(obj: &Bound<'_, PyAny>, param: &ParamInfo) -> PyResult<u64> {
    let name = &param.name;
    let wrong_type = || {
        type_error(format!(
            "Parameter '{name}' is a scalar ({}); got {}. Pass a Python number, a NumPy scalar or a ctypes value.",
            param.dtype,
            type_name(obj)
        ))
    };
    if is_ndarray(obj)? || obj.is_instance_of::<HostArray>() {
        return Err(wrong_type());
    }
    // ctypes values expose `.value`; NumPy scalars `.item()`.
    let ctypes = obj.py().import("ctypes")?;
    let value = if obj.is_instance(&ctypes.getattr("_SimpleCData")?)? {
        obj.getattr("value")?
    } else if is_numpy_instance(obj, "generic")? {
        obj.call_method0("item")?
    } else {
        obj.clone()
    };
    let dtype = param
        .host_dtype()
        .map_err(crate::error::build_output_error)?;
    let is_int = value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>();
    let is_bool = value.is_instance_of::<PyBool>();
    let is_float = value.is_instance_of::<PyFloat>();
    let out_of_range = || {
        value_error(format!(
            "Parameter '{name}' ({}) cannot hold {}",
            param.dtype,
            repr(&value)
        ))
    };
    let mut bytes = Vec::with_capacity(8);
    if dtype.is_float() {
        if !(is_int || is_float) {
            return Err(wrong_type());
        }
        let v: f64 = value.extract()?;
        dtype.encode_f64(v, &mut bytes);
    } else if dtype == DType::Bool {
        if !(is_bool || is_int) {
            return Err(wrong_type());
        }
        bytes.push(u8::from(value.is_truthy()?));
    } else {
        if !(is_int || is_bool) {
            return Err(wrong_type());
        }
        let signed = matches!(
            dtype,
            DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64
        );
        let width = dtype.elem_size() * 8;
        if signed {
            let v: i64 = value.extract().map_err(|_| out_of_range())?;
            let (lo, hi) = (-(1i128 << (width - 1)), (1i128 << (width - 1)) - 1);
            if !(lo..=hi).contains(&i128::from(v)) {
                return Err(out_of_range());
            }
            bytes.extend_from_slice(&v.to_le_bytes()[..dtype.elem_size()]);
        } else {
            let v: u64 = value.extract().map_err(|_| out_of_range())?;
            if width < 64 && v >= (1u64 << width) {
                return Err(out_of_range());
            }
            bytes.extend_from_slice(&v.to_le_bytes()[..dtype.elem_size()]);
        }
    }
    let mut slot = [0u8; 8];
    slot[..bytes.len()].copy_from_slice(&bytes);
    Ok(u64::from_le_bytes(slot))
}

/// Writes `array`'s bytes back into the NumPy array (or [`HostArray`]) `obj` (same shape;
/// its own dtype).
pub fn write_back(obj: &Bound<'_, PyAny>, array: &NpyArray) -> PyResult<()> {
    if let Ok(host) = obj.cast::<HostArray>() {
        host.borrow_mut().array.data.clone_from(&array.data);
        return Ok(());
    }
    let py = obj.py();
    let numpy = py.import("numpy")?;
    let data = PyBytes::new(py, &array.data);
    let source = numpy
        .call_method1("frombuffer", (data, obj.getattr("dtype")?))?
        .call_method1("reshape", (obj.getattr("shape")?,))?;
    numpy.call_method1("copyto", (obj, source))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinel_is_replaced_only_at_the_end() {
        let msg =
            "ring_heap must be a power of 2 >= 1024 (bytes per ring), got 18446744073709551615"
                .to_string();
        assert_eq!(
            python_value_in_message(msg.clone(), &U64_SENTINEL.to_string(), Some("True")),
            "ring_heap must be a power of 2 >= 1024 (bytes per ring), got True"
        );
        assert_eq!(
            python_value_in_message(msg.clone(), &U64_SENTINEL.to_string(), None),
            msg
        );
        let other = "ring_heap must be a power of 2 >= 1024 (bytes per ring), got 6".to_string();
        assert_eq!(
            python_value_in_message(other.clone(), &U64_SENTINEL.to_string(), Some("True")),
            other
        );
    }
}
