//! Binding a build directory's data to the orchestration signature.
//!
//! Parameters come from `compiled_meta.json`, in orchestration order. A tensor parameter
//! reads `data/in/<name>.pt` (as PyPTO's `torch.save` writes it) or `data/in/<name>.npy`,
//! whichever exists (both is an error naming the two); a pure output may have neither: it
//! starts zero-filled. Its dtype and shape must match the sidecar (`-1` matches any
//! extent). A scalar parameter reads a 0-d (or one-element) tensor file the same way; its
//! bytes are placed in the low bytes of the 64-bit scalar slot, as `add_scalar` does in
//! C++.

use std::path::{Path, PathBuf};

use pto_build_output::{
    locate_tensor, read_tensor, read_tensor_checked, CompiledMeta, DType, NpyArray, ParamDirection,
    TensorFormat,
};
use pto_runtime::{ArgDirection, HostTensor, OrchArg};

use crate::error::RunnerError;

/// One bound parameter.
#[derive(Debug)]
pub enum BoundParam {
    /// A tensor and its host bytes.
    Tensor {
        /// Parameter name.
        name: String,
        /// Direction.
        direction: ParamDirection,
        /// The data (outputs are overwritten by the run).
        array: NpyArray,
    },
    /// A scalar.
    Scalar {
        /// Parameter name.
        name: String,
        /// Raw 64-bit slot.
        bits: u64,
    },
}

/// `DIR/data/in/<name>.npy`, the file an input is written to when none exists.
pub fn input_path(dir: &Path, name: &str) -> PathBuf {
    TensorFormat::Npy.path_in(&dir.join("data").join("in"), name)
}

/// The existing input file of `name`: `DIR/data/in/<name>.pt` or `.npy` (`None`:
/// neither; both is an error naming the two files).
pub fn find_input(dir: &Path, name: &str) -> Result<Option<PathBuf>, RunnerError> {
    Ok(locate_tensor(&dir.join("data").join("in"), name)?.map(|(path, _)| path))
}

/// Reads every parameter's data (see the module docs).
pub fn bind_inputs(dir: &Path, meta: &CompiledMeta) -> Result<Vec<BoundParam>, RunnerError> {
    let mut out = Vec::with_capacity(meta.params.len());
    for p in &meta.params {
        let found = find_input(dir, &p.name)?;
        let path = found.clone().unwrap_or_else(|| input_path(dir, &p.name));
        let dtype = p.host_dtype()?;
        let data_err = |message: String| RunnerError::Data {
            path: path.clone(),
            message,
        };
        match &p.shape {
            None => {
                if found.is_none() {
                    return Err(data_err(format!(
                        "scalar parameter '{}' ({}) has no value; write it as a 0-d tensor with torch.save (.pt) or numpy.save (.npy)",
                        p.name, p.dtype
                    )));
                }
                let a = read_tensor(&path)?;
                if a.dtype != dtype || a.numel() != 1 {
                    return Err(data_err(format!(
                        "scalar parameter '{}' must be one {} value, got {} with shape {:?}",
                        p.name,
                        p.dtype,
                        a.dtype.pypto_name(),
                        a.shape
                    )));
                }
                let mut slot = [0u8; 8];
                slot[..a.data.len().min(8)].copy_from_slice(&a.data[..a.data.len().min(8)]);
                out.push(BoundParam::Scalar {
                    name: p.name.clone(),
                    bits: u64::from_le_bytes(slot),
                });
            }
            Some(shape) => {
                let array = if found.is_some() {
                    // The header is checked before the data is read (a file of the wrong
                    // shape may be far larger than the one the sidecar declares).
                    read_tensor_checked(&path, &mut |got_dtype, got_shape| {
                        check_header(&p.name, &p.dtype, dtype, shape, got_dtype, got_shape)
                    })?
                } else if p.direction == ParamDirection::Out {
                    let dims = concrete_shape(shape).ok_or_else(|| {
                        data_err(format!(
                            "output '{}' has a dynamic shape {shape:?}; provide data/in/{}.pt or .npy with the concrete shape",
                            p.name, p.name
                        ))
                    })?;
                    NpyArray::zeros(dtype, &dims)?
                } else {
                    return Err(data_err(format!(
                        "missing input for parameter '{}' ({} {:?}) (nor is there data/in/{}.pt); copy the data there, or replay with `python debug/run.py`, which takes its inputs from golden.py (`pypto.ir.compile` writes golden.py and data/ only when given inputs= and golden=)",
                        p.name, p.dtype, shape, p.name
                    )));
                };
                out.push(BoundParam::Tensor {
                    name: p.name.clone(),
                    direction: p.direction,
                    array,
                });
            }
        }
    }
    Ok(out)
}

fn concrete_shape(shape: &[i64]) -> Option<Vec<usize>> {
    shape.iter().map(|&d| usize::try_from(d).ok()).collect()
}

/// Checks an array against a parameter's dtype and shape.
pub fn check_tensor(
    name: &str,
    dtype_name: &str,
    dtype: DType,
    shape: &[i64],
    a: &NpyArray,
) -> Result<(), String> {
    check_header(name, dtype_name, dtype, shape, a.dtype, &a.shape)
}

/// [`check_tensor`] on a file's declared element type and shape (its header), before its
/// data is read.
pub fn check_header(
    name: &str,
    dtype_name: &str,
    dtype: DType,
    shape: &[i64],
    got_dtype: DType,
    got_shape: &[usize],
) -> Result<(), String> {
    let shape_ok = got_shape.len() == shape.len()
        && got_shape
            .iter()
            .zip(shape)
            .all(|(&got, &want)| want < 0 || i64::try_from(got).is_ok_and(|g| g == want));
    if got_dtype != dtype || !shape_ok {
        return Err(format!(
            "parameter '{name}' expects {dtype_name} {shape:?} but the file holds {} {got_shape:?}; fix the data or recompile",
            got_dtype.pypto_name(),
        ));
    }
    Ok(())
}

/// The runtime's view of the bound parameters.
pub fn orch_args(params: &mut [BoundParam]) -> Result<Vec<OrchArg<'_>>, RunnerError> {
    let mut args = Vec::with_capacity(params.len());
    for p in params.iter_mut() {
        match p {
            BoundParam::Scalar { bits, .. } => args.push(OrchArg::Scalar(*bits)),
            BoundParam::Tensor {
                name,
                direction,
                array,
            } => {
                let shape = array
                    .shape
                    .iter()
                    .map(|&d| u32::try_from(d))
                    .collect::<Result<Vec<u32>, _>>()
                    .map_err(|_| {
                        RunnerError::config(format!(
                            "parameter '{name}' has a dimension above 2^32"
                        ))
                    })?;
                args.push(OrchArg::Tensor(HostTensor {
                    direction: match direction {
                        ParamDirection::In => ArgDirection::In,
                        ParamDirection::Out => ArgDirection::Out,
                        ParamDirection::InOut => ArgDirection::InOut,
                    },
                    dtype: array.dtype.runtime_code(),
                    shape,
                    data: &mut array.data,
                }));
            }
        }
    }
    Ok(args)
}
