//! NumPy `.npy` files: the tensors at the boundary (`data/in`, `data/out`).
//!
//! [`read_npy`] accepts format versions 1.0, 2.0 and 3.0 with a
//! little-endian (or byte-order-free) dtype from [`DType`], C order only.
//! [`write_npy`] writes version 1.0 (2.0 only when the header would not fit
//! a 16-bit length), with the header padded so the data starts at a multiple
//! of 64 bytes, as NumPy does, and replaces the file atomically.
//!
//! The header is a Python dict literal; it is read with this crate's strict
//! Python-literal reader, so `{'descr': '<f4', 'fortran_order': False,
//! 'shape': (2, 3), }` parses and anything unusual fails with a message that
//! names the file.
//!
//! Bounded work: the header is at most [`MAX_HEADER_BYTES`] long and the
//! shape at most [`MAX_DIMS`] dimensions; the data size the header declares
//! is computed with checked arithmetic and compared with the file's length
//! *before* the data is read or any buffer for it allocated, and the buffer
//! is reserved fallibly, so a header claiming 2^60 elements is an error
//! naming the file, not an abort.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::dtype::DType;
use crate::fs::WriteError;
use crate::pysyntax::{self, ExprKind};

const MAGIC: &[u8; 6] = b"\x93NUMPY";
const ALIGN: usize = 64;

/// The longest `.npy` header read (64 KiB: every version-1.0 header fits;
/// NumPy itself refuses headers over 10000 bytes by default).
pub const MAX_HEADER_BYTES: usize = 64 << 10;

/// The most dimensions a shape may have (NumPy 2's `NPY_MAXDIMS`).
pub const MAX_DIMS: usize = 64;

/// An n-dimensional array in C order with little-endian elements.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    /// The element type.
    pub dtype: DType,
    /// The dimensions; empty for a 0-d (scalar) array.
    pub shape: Vec<usize>,
    /// `numel() * dtype.elem_size()` bytes of element data.
    pub data: Vec<u8>,
}

/// Reading or writing an `.npy` file failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NpyError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid `.npy` file this crate supports.
    #[error("{}: {message}; write it with numpy.save() (C order, little-endian)", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// `data` does not hold `numel * elem_size` bytes.
    #[error("array data has {actual} bytes but shape {shape:?} of {dtype} needs {expected}")]
    DataLength {
        /// The element type.
        dtype: DType,
        /// The shape.
        shape: Vec<usize>,
        /// Bytes the shape needs.
        expected: usize,
        /// Bytes present.
        actual: usize,
    },
    /// The shape's element count or byte size overflows `usize`.
    #[error("shape {shape:?} is too large to address")]
    TooLarge {
        /// The shape.
        shape: Vec<usize>,
    },
    /// The memory for an array's data cannot be had.
    #[error("cannot allocate {bytes} bytes for shape {shape:?} of {dtype}; the shape is larger than this machine's memory")]
    Alloc {
        /// The element type.
        dtype: DType,
        /// The shape.
        shape: Vec<usize>,
        /// Bytes the shape needs.
        bytes: usize,
    },
    /// The caller's check of the header ([`read_npy_checked`]) refused the file before its
    /// data was read.
    #[error("{}: {message}", path.display())]
    Refused {
        /// The file.
        path: PathBuf,
        /// What the check said.
        message: String,
    },
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] WriteError),
}

impl NpyError {
    /// True when the error means the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, NpyError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

fn checked_numel(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

fn checked_nbytes(dtype: DType, shape: &[usize]) -> Result<usize, NpyError> {
    checked_numel(shape)
        .and_then(|n| n.checked_mul(dtype.elem_size()))
        // No allocation can exceed `isize::MAX` bytes.
        .filter(|&n| isize::try_from(n).is_ok())
        .ok_or_else(|| NpyError::TooLarge {
            shape: shape.to_vec(),
        })
}

/// A zeroed buffer of `nbytes`, or [`NpyError::Alloc`] when the memory cannot be had.
fn try_zeroed(dtype: DType, shape: &[usize], nbytes: usize) -> Result<Vec<u8>, NpyError> {
    let mut data = Vec::new();
    data.try_reserve_exact(nbytes)
        .map_err(|_| NpyError::Alloc {
            dtype,
            shape: shape.to_vec(),
            bytes: nbytes,
        })?;
    data.resize(nbytes, 0);
    Ok(data)
}

impl NpyArray {
    /// An array from parts, checking that `data` has exactly the bytes the
    /// shape needs.
    pub fn new(dtype: DType, shape: Vec<usize>, data: Vec<u8>) -> Result<NpyArray, NpyError> {
        let array = NpyArray { dtype, shape, data };
        array.check_data_len()?;
        Ok(array)
    }

    /// Checks that `data` holds exactly the bytes the shape needs (the
    /// fields are public, so an array can be built inconsistent).
    pub fn check_data_len(&self) -> Result<(), NpyError> {
        let expected = checked_nbytes(self.dtype, &self.shape)?;
        if self.data.len() == expected {
            Ok(())
        } else {
            Err(NpyError::DataLength {
                dtype: self.dtype,
                shape: self.shape.clone(),
                expected,
                actual: self.data.len(),
            })
        }
    }

    /// An all-zero array; a shape whose bytes overflow is [`NpyError::TooLarge`]
    /// and one whose memory cannot be had [`NpyError::Alloc`] (never an abort).
    pub fn zeros(dtype: DType, shape: &[usize]) -> Result<NpyArray, NpyError> {
        let nbytes = checked_nbytes(dtype, shape)?;
        Ok(NpyArray {
            dtype,
            shape: shape.to_vec(),
            data: try_zeroed(dtype, shape, nbytes)?,
        })
    }

    /// An array holding `values` converted to `dtype` (see
    /// [`DType::encode_f64`]); `values.len()` must equal the shape's count.
    pub fn from_f64(dtype: DType, shape: &[usize], values: &[f64]) -> Result<NpyArray, NpyError> {
        let mut data = Vec::with_capacity(values.len().saturating_mul(dtype.elem_size()));
        for &v in values {
            dtype.encode_f64(v, &mut data);
        }
        NpyArray::new(dtype, shape.to_vec(), data)
    }

    /// The number of elements (1 for a 0-d array).
    pub fn numel(&self) -> usize {
        checked_numel(&self.shape).unwrap_or(usize::MAX)
    }

    /// Element `i` (flat, C order) as `f64`, or `None` past the end.
    pub fn get_f64(&self, i: usize) -> Option<f64> {
        let size = self.dtype.elem_size();
        let start = i.checked_mul(size)?;
        self.dtype
            .decode_f64(self.data.get(start..start.checked_add(size)?)?)
    }

    /// All elements as `f64`, in C order.
    pub fn to_f64_vec(&self) -> Vec<f64> {
        self.data
            .chunks_exact(self.dtype.elem_size())
            .filter_map(|chunk| self.dtype.decode_f64(chunk))
            .collect()
    }
}

/// Reads an `.npy` file: the header first, then, once the data size it
/// declares matches the file's length, exactly that many bytes.
pub fn read_npy(path: &Path) -> Result<NpyArray, NpyError> {
    read_npy_checked(path, &mut |_, _| Ok(()))
}

/// A check of a tensor file's declared element type and shape, run before its data is
/// read: `Err` says what is wrong.
pub type HeaderCheck<'a> = dyn FnMut(DType, &[usize]) -> Result<(), String> + 'a;

/// [`read_npy`], with `check(dtype, shape)` run on the header before any data is
/// read or allocated: a refusal is [`NpyError::Refused`] naming the file (so an 8 GiB
/// file of the wrong shape costs its header, not its data).
pub fn read_npy_checked(path: &Path, check: &mut HeaderCheck<'_>) -> Result<NpyArray, NpyError> {
    let io_err = |source| NpyError::Read {
        path: path.to_path_buf(),
        source,
    };
    let invalid = |message| NpyError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let file = std::fs::File::open(path).map_err(io_err)?;
    let file_len = file.metadata().map_err(io_err)?.len();
    let mut reader = std::io::BufReader::new(file);
    // The preamble and the header, at most 12 + MAX_HEADER_BYTES bytes: the
    // magic and version say how long the length field is, which says how
    // long the header is.
    let mut head = Vec::new();
    let mut read_more = |head: &mut Vec<u8>, n: usize| {
        (&mut reader)
            .take(n as u64)
            .read_to_end(head)
            .map(|_| ())
            .map_err(io_err)
    };
    read_more(&mut head, 8)?;
    let len_size = match head.get(6) {
        Some(1) => 2,
        _ => 4,
    };
    read_more(&mut head, len_size)?;
    let preamble = parse_preamble(&head).map_err(invalid)?;
    read_more(&mut head, preamble.header_len)?;
    let (dtype, shape) = parse_after_preamble(&head, &preamble).map_err(invalid)?;
    check(dtype, &shape).map_err(|message| NpyError::Refused {
        path: path.to_path_buf(),
        message,
    })?;
    let expected = checked_nbytes(dtype, &shape).map_err(|e| invalid(e.to_string()))?;
    let data_len = file_len.saturating_sub(preamble.data_start() as u64);
    if data_len != expected as u64 {
        return Err(invalid(data_len_message(data_len, &shape, dtype, expected)));
    }
    let mut data = Vec::new();
    data.try_reserve_exact(expected)
        .map_err(|_| NpyError::Alloc {
            dtype,
            shape: shape.clone(),
            bytes: expected,
        })?;
    reader
        .take(expected as u64)
        .read_to_end(&mut data)
        .map_err(io_err)?;
    if data.len() != expected {
        // The file shrank while it was read.
        return Err(invalid(data_len_message(
            data.len() as u64,
            &shape,
            dtype,
            expected,
        )));
    }
    Ok(NpyArray { dtype, shape, data })
}

/// Parses the bytes of a whole `.npy` file (what [`read_npy`] reads);
/// `path_for_errors` names it in errors.
pub fn decode_npy(bytes: &[u8], path_for_errors: &Path) -> Result<NpyArray, NpyError> {
    parse_npy(bytes).map_err(|message| NpyError::Invalid {
        path: path_for_errors.to_path_buf(),
        message,
    })
}

fn data_len_message(actual: u64, shape: &[usize], dtype: DType, expected: usize) -> String {
    format!(
        "the data has {actual} bytes but shape {shape:?} of {} needs {expected}",
        dtype.npy_descr()
    )
}

/// The magic, version and header length.
struct Preamble {
    /// Where the header starts (10 or 12).
    header_start: usize,
    /// The header's length in bytes, at most [`MAX_HEADER_BYTES`].
    header_len: usize,
    /// Version 3.0: the header is UTF-8 rather than Latin-1.
    utf8: bool,
}

impl Preamble {
    fn data_start(&self) -> usize {
        self.header_start + self.header_len
    }
}

/// Reads the preamble from the first (up to 12) bytes of a file.
fn parse_preamble(bytes: &[u8]) -> Result<Preamble, String> {
    if bytes.len() < 8 || bytes.get(..6) != Some(MAGIC.as_slice()) {
        return Err("not an .npy file (missing the \\x93NUMPY magic)".to_string());
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (len_size, utf8) = match (major, minor) {
        (1, 0) => (2, false),
        (2, 0) => (4, false),
        (3, 0) => (4, true),
        _ => {
            return Err(format!(
                ".npy format version {major}.{minor} is not supported (only 1.0, 2.0 and 3.0 are)"
            ))
        }
    };
    let header_start = 8 + len_size;
    let len_bytes = bytes
        .get(8..header_start)
        .ok_or("the file ends inside the header length")?;
    let header_len = len_bytes
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    let header_len = usize::try_from(header_len)
        .ok()
        .filter(|&n| n <= MAX_HEADER_BYTES)
        .ok_or_else(|| {
            format!(
                "the header length field says {header_len} bytes, more than the {MAX_HEADER_BYTES} an .npy header may have (the file is damaged or not written by numpy.save())"
            )
        })?;
    Ok(Preamble {
        header_start,
        header_len,
        utf8,
    })
}

/// The dtype and shape from `bytes`, which start with the preamble.
fn parse_after_preamble(bytes: &[u8], preamble: &Preamble) -> Result<(DType, Vec<usize>), String> {
    let header_len = preamble.header_len;
    let header_bytes = bytes
        .get(preamble.header_start..preamble.data_start())
        .ok_or_else(|| format!("the file ends inside the {header_len}-byte header"))?;
    let header: String = if preamble.utf8 {
        String::from_utf8(header_bytes.to_vec())
            .map_err(|_| "the version 3.0 header is not valid UTF-8".to_string())?
    } else {
        header_bytes.iter().map(|&b| char::from(b)).collect()
    };
    parse_header(&header)
}

/// Parses `.npy` bytes; the error is a message without the file name.
fn parse_npy(bytes: &[u8]) -> Result<NpyArray, String> {
    let preamble = parse_preamble(bytes)?;
    let (dtype, shape) = parse_after_preamble(bytes, &preamble)?;
    let expected = checked_nbytes(dtype, &shape).map_err(|e| e.to_string())?;
    let data = bytes.get(preamble.data_start()..).unwrap_or(&[]);
    if data.len() != expected {
        return Err(data_len_message(data.len() as u64, &shape, dtype, expected));
    }
    Ok(NpyArray {
        dtype,
        shape,
        data: data.to_vec(),
    })
}

fn parse_header(header: &str) -> Result<(DType, Vec<usize>), String> {
    let located = |e: pysyntax::SyntaxError| {
        format!(
            "the header is not a Python dict literal ({} at column {})",
            e.message, e.pos.col
        )
    };
    let expr = pysyntax::parse_single_expr(header).map_err(located)?;
    let ExprKind::Dict(items) = expr.kind else {
        return Err(format!("the header is {}, not a dict", expr.describe()));
    };
    let mut descr = None;
    let mut fortran_order = None;
    let mut shape = None;
    for (key, value) in items {
        let ExprKind::Str(key) = key.kind else {
            return Err(format!(
                "the header has a non-string key ({})",
                key.describe()
            ));
        };
        match key.as_str() {
            "descr" => match value.kind {
                ExprKind::Str(s) => descr = Some(s),
                _ => {
                    return Err(format!(
                        "'descr' is {}; structured dtypes are not supported",
                        value.describe()
                    ))
                }
            },
            "fortran_order" => match value.kind {
                ExprKind::Bool(b) => fortran_order = Some(b),
                _ => return Err(format!("'fortran_order' is {}, not a bool", value.describe())),
            },
            "shape" => {
                let ExprKind::Tuple(dims) = value.kind else {
                    return Err(format!("'shape' is {}, not a tuple", value.describe()));
                };
                if dims.len() > MAX_DIMS {
                    return Err(format!(
                        "'shape' has {} dimensions, more than the {MAX_DIMS} NumPy allows",
                        dims.len()
                    ));
                }
                let mut out = Vec::with_capacity(dims.len());
                for dim in dims {
                    match dim.kind {
                        ExprKind::Int(d) if d >= 0 => {
                            out.push(usize::try_from(d).map_err(|_| format!("dimension {d} is too large"))?)
                        }
                        _ => {
                            return Err(format!(
                                "'shape' holds {}, not a non-negative int",
                                dim.describe()
                            ))
                        }
                    }
                }
                shape = Some(out);
            }
            other => {
                return Err(format!(
                    "the header has the unexpected key {}; expected exactly 'descr', 'fortran_order' and 'shape'",
                    crate::pyrepr::repr_str(other)
                ))
            }
        }
    }
    let missing = |key: &str| format!("the header has no {key:?} key");
    let descr = descr.ok_or_else(|| missing("descr"))?;
    let fortran_order = fortran_order.ok_or_else(|| missing("fortran_order"))?;
    let shape = shape.ok_or_else(|| missing("shape"))?;
    if fortran_order {
        return Err(
            "the array is stored in Fortran order, which is not supported; save a C-contiguous array (numpy.ascontiguousarray)"
                .to_string(),
        );
    }
    let dtype = DType::from_npy_descr(&descr).map_err(|e| e.to_string())?;
    Ok((dtype, shape))
}

fn shape_repr(shape: &[usize]) -> String {
    match shape {
        [] => "()".to_string(),
        [d] => format!("({d},)"),
        dims => {
            let parts: Vec<String> = dims.iter().map(usize::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// The bytes of an `.npy` file holding `array` (checked against its shape).
pub fn encode_npy(array: &NpyArray) -> Result<Vec<u8>, NpyError> {
    array.check_data_len()?;
    let dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
        array.dtype.npy_descr(),
        shape_repr(&array.shape)
    );
    // Version 1.0 has a 2-byte header length; fall back to 2.0 (4 bytes).
    let mut len_size = 2;
    let mut total = (10 + dict.len() + 1).div_ceil(ALIGN) * ALIGN;
    if total - 10 > usize::from(u16::MAX) {
        len_size = 4;
        total = (12 + dict.len() + 1).div_ceil(ALIGN) * ALIGN;
    }
    let header_len = total - 8 - len_size;
    let mut out = Vec::with_capacity(total + array.data.len());
    out.extend_from_slice(MAGIC);
    if len_size == 2 {
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&u16::try_from(header_len).unwrap_or(u16::MAX).to_le_bytes());
    } else {
        out.extend_from_slice(&[2, 0]);
        let len32 = u32::try_from(header_len).map_err(|_| NpyError::TooLarge {
            shape: array.shape.clone(),
        })?;
        out.extend_from_slice(&len32.to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out.extend_from_slice(&array.data);
    Ok(out)
}

/// Writes `array` to `path` atomically (see [`encode_npy`] for the format).
pub fn write_npy(path: &Path, array: &NpyArray) -> Result<(), NpyError> {
    let bytes = encode_npy(array)?;
    crate::fs::write_atomic(path, &bytes)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy_bytes(version: (u8, u8), header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[version.0, version.1]);
        if version.0 == 1 {
            out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    fn check_parse(bytes: &[u8], expected: Result<(DType, &[usize], Vec<f64>), &str>) {
        let res = parse_npy(bytes);
        match expected {
            Ok((dtype, shape, values)) => {
                let array = res.expect("parses");
                assert_eq!((array.dtype, array.shape.as_slice()), (dtype, shape));
                assert_eq!(array.to_f64_vec(), values);
            }
            Err(head) => {
                let err = res.expect_err("must fail");
                assert!(err.starts_with(head), "got: {err}\nwant: {head}");
            }
        }
    }

    #[test]
    fn reads_versions_and_dtypes() {
        let h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }   \n";
        let data = [0, 0, 0x80, 0x3f, 0, 0, 0, 0x40];
        check_parse(
            &npy_bytes((1, 0), h, &data),
            Ok((DType::Float32, &[2], vec![1.0, 2.0])),
        );
        check_parse(
            &npy_bytes((2, 0), h, &data),
            Ok((DType::Float32, &[2], vec![1.0, 2.0])),
        );
        check_parse(
            &npy_bytes((3, 0), h, &data),
            Ok((DType::Float32, &[2], vec![1.0, 2.0])),
        );
        let h = "{'descr': '|b1', 'fortran_order': False, 'shape': (1, 2)}\n";
        check_parse(
            &npy_bytes((1, 0), h, &[1, 0]),
            Ok((DType::Bool, &[1, 2], vec![1.0, 0.0])),
        );
        let h = "{'descr': '<i8', 'fortran_order': False, 'shape': ()}\n";
        check_parse(
            &npy_bytes((1, 0), h, &[0xff; 8]),
            Ok((DType::Int64, &[], vec![-1.0])),
        );
        let h = "{'descr': '|V2', 'fortran_order': False, 'shape': (0, 3)}\n";
        check_parse(
            &npy_bytes((1, 0), h, &[]),
            Ok((DType::BFloat16, &[0, 3], vec![])),
        );
    }

    #[test]
    fn rejects_bad_files() {
        let ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n";
        check_parse(b"PK\x03\x04", Err("not an .npy file"));
        check_parse(
            &npy_bytes((4, 0), ok_dict, &[0; 4]),
            Err(".npy format version 4.0 is not supported"),
        );
        check_parse(
            &npy_bytes((1, 0), ok_dict, &[0; 3]),
            Err("the data has 3 bytes but shape [1] of <f4 needs 4"),
        );
        check_parse(
            &npy_bytes((1, 0), ok_dict, &[0; 5]),
            Err("the data has 5 bytes but shape [1] of <f4 needs 4"),
        );
        check_parse(
            &npy_bytes(
                (1, 0),
                "{'descr': '<f4', 'fortran_order': True, 'shape': (1,)}\n",
                &[0; 4],
            ),
            Err("the array is stored in Fortran order, which is not supported"),
        );
        check_parse(
            &npy_bytes(
                (1, 0),
                "{'descr': '>f4', 'fortran_order': False, 'shape': (1,)}\n",
                &[0; 4],
            ),
            Err("unsupported .npy dtype '>f4'"),
        );
        check_parse(
            &npy_bytes(
                (1, 0),
                "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}\n",
                &[0; 4],
            ),
            Err("'descr' is a list; structured dtypes are not supported"),
        );
        check_parse(
            &npy_bytes((1, 0), "{'descr': '<f4', 'shape': (1,)}\n", &[0; 4]),
            Err("the header has no \"fortran_order\" key"),
        );
        check_parse(
            &npy_bytes(
                (1, 0),
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}\n",
                &[],
            ),
            Err("'shape' holds int -1, not a non-negative int"),
        );
        check_parse(
            &npy_bytes(
                (1, 0),
                "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}\n",
                &[0; 4],
            ),
            Err("the header has the unexpected key 'x'"),
        );
        check_parse(
            &npy_bytes(
                (1, 0),
                "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)\n",
                &[0; 4],
            ),
            Err("the header is not a Python dict literal (`{` is never closed at column 1)"),
        );
        let mut truncated = npy_bytes((1, 0), ok_dict, &[]);
        truncated.truncate(20);
        check_parse(&truncated, Err("the file ends inside the"));
    }

    fn check_write(shape: &[usize], expected_dict: &str) {
        let array = NpyArray::zeros(DType::Float16, shape).unwrap();
        let bytes = encode_npy(&array).unwrap();
        let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
        let data_start = 10 + header_len;
        assert_eq!(data_start % ALIGN, 0);
        let header = std::str::from_utf8(&bytes[10..data_start]).unwrap();
        assert_eq!(header.trim_end(), expected_dict);
        assert!(header.ends_with('\n'));
        assert_eq!(parse_npy(&bytes).unwrap(), array);
    }

    #[test]
    fn writes_numpy_style_headers() {
        check_write(
            &[],
            "{'descr': '<f2', 'fortran_order': False, 'shape': (), }",
        );
        check_write(
            &[5],
            "{'descr': '<f2', 'fortran_order': False, 'shape': (5,), }",
        );
        check_write(
            &[2, 3],
            "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }",
        );
    }

    #[test]
    fn file_round_trip_and_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        let array = NpyArray::from_f64(DType::BFloat16, &[2, 2], &[1.0, -2.0, 0.5, 3.0]).unwrap();
        write_npy(&path, &array).unwrap();
        assert_eq!(read_npy(&path).unwrap(), array);
        assert_eq!(array.get_f64(1), Some(-2.0));
        assert_eq!(array.get_f64(4), None);
        assert_eq!(array.numel(), 4);

        let missing = dir.path().join("missing.npy");
        let err = read_npy(&missing).unwrap_err();
        assert!(err.is_not_found());
        assert!(err
            .to_string()
            .starts_with(&format!("cannot read {}", missing.display())));

        std::fs::write(&path, b"junk").unwrap();
        let err = read_npy(&path).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{}: not an .npy file (missing the \\x93NUMPY magic); write it with numpy.save() (C order, little-endian)",
                path.display()
            )
        );
    }

    /// The shape a header claims is checked against the data (and the
    /// address space) before any buffer for it exists.
    #[test]
    fn huge_shapes_are_errors_not_allocations() {
        let huge = "{'descr': '<f4', 'fortran_order': False, 'shape': (1152921504606846976,), }\n";
        check_parse(
            &npy_bytes((1, 0), huge, &[0; 4]),
            Err("the data has 4 bytes but shape [1152921504606846976] of <f4 needs 4611686018427387904"),
        );
        let overflow =
            "{'descr': '<i8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }\n";
        check_parse(
            &npy_bytes((1, 0), overflow, &[]),
            Err("shape [4294967296, 4294967296] is too large to address"),
        );
        // Past isize::MAX bytes is too large too (no allocation can hold it).
        let past_isize =
            "{'descr': '<i8', 'fortran_order': False, 'shape': (2305843009213693952,), }\n";
        check_parse(
            &npy_bytes((1, 0), past_isize, &[]),
            Err("shape [2305843009213693952] is too large to address"),
        );
        let dims = format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}\n",
            "1, ".repeat(MAX_DIMS + 1)
        );
        check_parse(
            &npy_bytes((1, 0), &dims, &[0; 4]),
            Err("'shape' has 65 dimensions, more than the 64 NumPy allows"),
        );
        let deep = format!("{}{}\n", "(".repeat(100_000), ")".repeat(100_000));
        check_parse(
            &npy_bytes((2, 0), &deep, &[]),
            Err("the header length field says 200001 bytes, more than the 65536 an .npy header may have"),
        );
        let deep = format!("{}{}\n", "(".repeat(1000), ")".repeat(1000));
        check_parse(
            &npy_bytes((1, 0), &deep, &[]),
            Err("the header is not a Python dict literal (the expression nests more than 100 levels deep"),
        );
        // A header length field far past the file.
        let mut claim = MAGIC.to_vec();
        claim.extend_from_slice(&[2, 0, 0xff, 0xff, 0xff, 0xff]);
        check_parse(
            &claim,
            Err("the header length field says 4294967295 bytes, more than the 65536"),
        );
    }

    /// `read_npy` reads the header first and checks the declared data size
    /// against the file's length before reading (or allocating) the data.
    #[test]
    fn read_npy_checks_sizes_before_reading_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        let huge = "{'descr': '<f4', 'fortran_order': False, 'shape': (1152921504606846976,), }\n";
        std::fs::write(&path, npy_bytes((1, 0), huge, &[0; 8])).unwrap();
        assert_eq!(
            read_npy(&path).unwrap_err().to_string(),
            format!(
                "{}: the data has 8 bytes but shape [1152921504606846976] of <f4 needs 4611686018427387904; write it with numpy.save() (C order, little-endian)",
                path.display()
            )
        );
        // Every error and every array is the in-memory decoder's.
        let good = NpyArray::from_f64(DType::Float32, &[3], &[1.0, 2.0, 3.0]).unwrap();
        let bytes = encode_npy(&good).unwrap();
        for cut in 0..bytes.len() + 1 {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let from_file = read_npy(&path).map_err(|e| e.to_string());
            let from_bytes = decode_npy(&bytes[..cut], &path).map_err(|e| e.to_string());
            assert_eq!(from_file, from_bytes, "cut at {cut}");
        }
        assert_eq!(read_npy(&path).unwrap(), good);
    }

    /// A zeroed array whose memory cannot be had is an error, not an abort.
    #[test]
    fn zeros_fail_instead_of_aborting() {
        let err = NpyArray::zeros(DType::Float32, &[1 << 40, 1 << 20]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot allocate 4611686018427387904 bytes for shape [1099511627776, 1048576] of fp32; the shape is larger than this machine's memory"
        );
        assert!(matches!(
            NpyArray::zeros(DType::Int64, &[1 << 62]),
            Err(NpyError::TooLarge { .. })
        ));
    }

    #[test]
    fn data_length_is_checked() {
        let err = NpyArray::new(DType::Int32, vec![2], vec![0; 7]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "array data has 7 bytes but shape [2] of int32 needs 8"
        );
        let bad = NpyArray {
            dtype: DType::Int32,
            shape: vec![2],
            data: vec![0; 4],
        };
        assert!(encode_npy(&bad).is_err());
        assert!(NpyArray::zeros(DType::Int64, &[usize::MAX, 2]).is_err());
    }
}
