//! Element types of host tensors, and their names in every file format.
//!
//! One [`DType`] has several spellings, one per consumer: PyPTO's `str(DataType)` (`fp32`),
//! Simpler's name and code (`FLOAT32` / 0), the NumPy / torch name (`float32`), all read from
//! the one table of element types ([`pto_base::dtype`]); and the `.npy` descr (`<f4`), this
//! module's own ([`DType::npy_descr`]). `ALL` is Simpler's codes 0..=11, the types a host
//! tensor can hold.
//!
//! **bfloat16 in `.npy` files.** NumPy has no bfloat16. The ml_dtypes
//! convention is used: a bfloat16 array is stored as 2-byte void records
//! (descr `|V2`, the raw little-endian bf16 bits). [`DType::from_npy_descr`]
//! also accepts `<V2`, which is what `np.save` writes for an ml_dtypes
//! bfloat16 array. Any other void width stays unsupported, so a `|V2` file is
//! always read as bfloat16.
//!
//! PyPTO knows more data types than a host tensor can hold here (`fp8e4m3fn`,
//! `fp4`, `hf8`, ...). [`is_known_pypto_dtype`] accepts every name PyPTO
//! writes (what `compiled_meta.json` validation needs);
//! [`DType::from_pypto_str`] only the ones that map to a [`DType`].
//!
//! Values convert to and from `f64` for comparisons ([`DType::decode_f64`],
//! [`DType::encode_f64`]); fp16 and bf16 go through the `half` crate.
//! 64-bit integers beyond 2^53 lose precision in `f64`.

use std::fmt;
use std::str::FromStr;

use pto_base::dtype::{ElementType, ELEMENT_TYPES};

/// The element type of a host tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// IEEE 754 single precision.
    Float32,
    /// IEEE 754 half precision.
    Float16,
    /// Brain floating point (8-bit exponent, 7-bit mantissa).
    BFloat16,
    /// Signed 8-bit integer.
    Int8,
    /// Signed 16-bit integer.
    Int16,
    /// Signed 32-bit integer.
    Int32,
    /// Signed 64-bit integer.
    Int64,
    /// Unsigned 8-bit integer.
    UInt8,
    /// Unsigned 16-bit integer.
    UInt16,
    /// Unsigned 32-bit integer.
    UInt32,
    /// Unsigned 64-bit integer.
    UInt64,
    /// Boolean stored as one byte (0 or 1).
    Bool,
}

/// Every name `str(DataType)` gives in PyPTO ([`pto_base::dtype::ELEMENT_TYPES`]), sorted
/// as Python's `sorted()` sorts them (the order of the `known: [...]` list in errors).
pub fn known_pypto_dtypes() -> Vec<&'static str> {
    let mut names: Vec<&str> = ELEMENT_TYPES.iter().map(|t| t.name).collect();
    names.sort_unstable();
    names
}

/// Whether `name` is a data type name PyPTO writes (`str(DataType)`).
pub fn is_known_pypto_dtype(name: &str) -> bool {
    ELEMENT_TYPES.iter().any(|t| t.name == name)
}

/// Checks a PyPTO data type name, failing with PyPTO's exact message
/// (`Unknown DataType string 'fp99'; known: [...]`).
pub fn check_pypto_dtype(name: &str) -> Result<(), DTypeError> {
    if is_known_pypto_dtype(name) {
        Ok(())
    } else {
        Err(DTypeError::UnknownPyptoName {
            name: name.to_string(),
        })
    }
}

/// A data type name or code that does not map to a [`DType`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DTypeError {
    /// Not a name PyPTO's `str(DataType)` ever gives.
    #[error(
        "Unknown DataType string {}; known: {}",
        crate::pyrepr::repr_str(name),
        crate::pyrepr::repr_str_list(known_pypto_dtypes())
    )]
    UnknownPyptoName {
        /// The name as found.
        name: String,
    },
    /// A PyPTO data type that host tensors here cannot hold.
    #[error("DataType {} has no host element type here; supported: {}", crate::pyrepr::repr_str(name), crate::pyrepr::repr_str_list(DType::ALL.iter().map(|d| d.pypto_name())))]
    NoHostType {
        /// The PyPTO name.
        name: String,
    },
    /// Not one of Simpler's `DataType` enum values 0..=11.
    #[error("unknown Simpler DataType code {code}; supported codes are 0..=11 (FLOAT32..BOOL)")]
    UnknownRuntimeCode {
        /// The code as found.
        code: u8,
    },
    /// Not one of Simpler's upper-case data type names.
    #[error("unknown Simpler DataType name {}; known: {}", crate::pyrepr::repr_str(name), crate::pyrepr::repr_str_list(DType::ALL.iter().map(|d| d.simpler_name())))]
    UnknownSimplerName {
        /// The name as found.
        name: String,
    },
    /// An `.npy` dtype descr with no [`DType`].
    #[error("unsupported .npy dtype {}; supported: {}", crate::pyrepr::repr_str(descr), crate::pyrepr::repr_str_list(DType::ALL.iter().map(|d| d.npy_descr())))]
    UnsupportedNpyDescr {
        /// The descr as found.
        descr: String,
    },
}

impl DType {
    /// All element types, in Simpler code order.
    pub const ALL: [DType; 12] = [
        DType::Float32,
        DType::Float16,
        DType::Int32,
        DType::Int16,
        DType::Int8,
        DType::UInt8,
        DType::BFloat16,
        DType::Int64,
        DType::UInt64,
        DType::UInt16,
        DType::UInt32,
        DType::Bool,
    ];

    /// Simpler's `DataType` of this element type: the one table of codes, names and sizes
    /// ([`pto_base::dtype`]).
    pub const fn simpler(self) -> pto_base::dtype::DataType {
        use pto_base::dtype::DataType as S;
        match self {
            DType::Float32 => S::Float32,
            DType::Float16 => S::Float16,
            DType::Int32 => S::Int32,
            DType::Int16 => S::Int16,
            DType::Int8 => S::Int8,
            DType::UInt8 => S::UInt8,
            DType::BFloat16 => S::BFloat16,
            DType::Int64 => S::Int64,
            DType::UInt64 => S::UInt64,
            DType::UInt16 => S::UInt16,
            DType::UInt32 => S::UInt32,
            DType::Bool => S::Bool,
        }
    }

    /// Size of one element in bytes.
    pub const fn elem_size(self) -> usize {
        self.simpler().elem_size()
    }

    /// Simpler's `DataType` enum value (`data_type.h`).
    pub const fn runtime_code(self) -> u8 {
        self.simpler().code() as u8
    }

    /// The element type with Simpler's `DataType` enum value `code`.
    pub fn from_runtime_code(code: u8) -> Result<DType, DTypeError> {
        DType::ALL
            .get(usize::from(code))
            .copied()
            .ok_or(DTypeError::UnknownRuntimeCode { code })
    }

    /// Simpler's upper-case name (`get_dtype_name`): `FLOAT32`, `BFLOAT16`, ...
    pub const fn simpler_name(self) -> &'static str {
        self.simpler().name()
    }

    /// The element type with Simpler's upper-case name `name`.
    pub fn from_simpler_name(name: &str) -> Result<DType, DTypeError> {
        DType::ALL
            .into_iter()
            .find(|d| d.simpler_name() == name)
            .ok_or_else(|| DTypeError::UnknownSimplerName {
                name: name.to_string(),
            })
    }

    /// NumPy's attribute for the element type (`np.<name>`), for the types NumPy has
    /// natively: `bool_` for bool, none for bfloat16 ([`pto_base::dtype::SimplerType`]).
    pub fn numpy_attr(self) -> Option<&'static str> {
        self.simpler().row().numpy_attr
    }

    /// The name NumPy and torch give the element type (`float32`, `bfloat16`, `bool`, ...):
    /// `numpy.dtype(...).name`, and the `torch.<name>` attribute.
    pub fn host_name(self) -> &'static str {
        self.simpler()
            .host_name()
            .expect("every host type has a host name (pto_base::dtype tests)")
    }

    /// PyPTO's element type of this host type (its row of [`ELEMENT_TYPES`]).
    fn element_type(self) -> &'static ElementType {
        self.simpler()
            .element_type()
            .expect("every host type has a PyPTO row (pto_base::dtype tests)")
    }

    /// PyPTO's canonical `str(DataType)` name: `fp32`, `bfloat16`, `int32`, ...
    pub fn pypto_name(self) -> &'static str {
        self.element_type().name
    }

    /// Parses a PyPTO data type name (`str(DataType)`, plus `bf16`).
    /// `index` is PyPTO's 64-bit index type and maps to [`DType::Int64`].
    pub fn from_pypto_str(name: &str) -> Result<DType, DTypeError> {
        match ElementType::from_name(name) {
            Some(t) => t
                .host
                .and_then(|h| DType::from_runtime_code(h.code() as u8).ok())
                .ok_or_else(|| DTypeError::NoHostType {
                    name: name.to_string(),
                }),
            None => Err(DTypeError::UnknownPyptoName {
                name: name.to_string(),
            }),
        }
    }

    /// The `.npy` header descr this crate writes (little-endian).
    pub fn npy_descr(self) -> &'static str {
        match self {
            DType::Float32 => "<f4",
            DType::Float16 => "<f2",
            DType::BFloat16 => "|V2",
            DType::Int8 => "|i1",
            DType::Int16 => "<i2",
            DType::Int32 => "<i4",
            DType::Int64 => "<i8",
            DType::UInt8 => "|u1",
            DType::UInt16 => "<u2",
            DType::UInt32 => "<u4",
            DType::UInt64 => "<u8",
            DType::Bool => "|b1",
        }
    }

    /// Parses a little-endian (or byte-order-free) `.npy` descr. One-byte
    /// types accept `|`, `<` and `=`; wider ones `<` only (and `=` on
    /// little-endian hosts), so big-endian data is rejected.
    pub fn from_npy_descr(descr: &str) -> Result<DType, DTypeError> {
        let unsupported = || DTypeError::UnsupportedNpyDescr {
            descr: descr.to_string(),
        };
        let (order, code) = match descr.chars().next() {
            Some(c @ ('<' | '>' | '|' | '=')) => (c, &descr[1..]),
            _ => ('=', descr),
        };
        let dtype = match code {
            "f4" => DType::Float32,
            "f2" => DType::Float16,
            "V2" => DType::BFloat16,
            "i1" => DType::Int8,
            "i2" => DType::Int16,
            "i4" => DType::Int32,
            "i8" => DType::Int64,
            "u1" => DType::UInt8,
            "u2" => DType::UInt16,
            "u4" => DType::UInt32,
            "u8" => DType::UInt64,
            "b1" => DType::Bool,
            _ => return Err(unsupported()),
        };
        let byte_order_ok = match (order, dtype.elem_size()) {
            (_, 1) | ('<', _) => true,
            ('=', _) => cfg!(target_endian = "little"),
            // Void records carry no byte order; NumPy writes `|V2`.
            ('|', _) => dtype == DType::BFloat16,
            _ => false,
        };
        if byte_order_ok {
            Ok(dtype)
        } else {
            Err(unsupported())
        }
    }

    /// True for `Float32`, `Float16` and `BFloat16`.
    pub fn is_float(self) -> bool {
        matches!(self, DType::Float32 | DType::Float16 | DType::BFloat16)
    }

    /// Reads one little-endian element from the start of `bytes` as `f64`
    /// (`Bool` gives 0.0 or 1.0). `None` if `bytes` is shorter than
    /// [`DType::elem_size`].
    pub fn decode_f64(self, bytes: &[u8]) -> Option<f64> {
        fn arr<const N: usize>(bytes: &[u8]) -> Option<[u8; N]> {
            bytes.get(..N)?.try_into().ok()
        }
        let value = match self {
            DType::Float32 => f64::from(f32::from_le_bytes(arr(bytes)?)),
            DType::Float16 => half::f16::from_le_bytes(arr(bytes)?).to_f64(),
            DType::BFloat16 => half::bf16::from_le_bytes(arr(bytes)?).to_f64(),
            DType::Int8 => f64::from(i8::from_le_bytes(arr(bytes)?)),
            DType::Int16 => f64::from(i16::from_le_bytes(arr(bytes)?)),
            DType::Int32 => f64::from(i32::from_le_bytes(arr(bytes)?)),
            // Precision loss beyond 2^53 is inherent in comparing as f64.
            DType::Int64 => i64::from_le_bytes(arr(bytes)?) as f64,
            DType::UInt8 => f64::from(u8::from_le_bytes(arr(bytes)?)),
            DType::UInt16 => f64::from(u16::from_le_bytes(arr(bytes)?)),
            DType::UInt32 => f64::from(u32::from_le_bytes(arr(bytes)?)),
            DType::UInt64 => u64::from_le_bytes(arr(bytes)?) as f64,
            DType::Bool => {
                if *bytes.first()? != 0 {
                    1.0
                } else {
                    0.0
                }
            }
        };
        Some(value)
    }

    /// Appends `value` as one little-endian element to `out`. Floats round
    /// to nearest; integers truncate toward zero and saturate (NaN gives 0);
    /// `Bool` stores 1 for any non-zero value.
    pub fn encode_f64(self, value: f64, out: &mut Vec<u8>) {
        match self {
            DType::Float32 => out.extend_from_slice(&(value as f32).to_le_bytes()),
            DType::Float16 => out.extend_from_slice(&half::f16::from_f64(value).to_le_bytes()),
            DType::BFloat16 => out.extend_from_slice(&half::bf16::from_f64(value).to_le_bytes()),
            DType::Int8 => out.extend_from_slice(&(value as i8).to_le_bytes()),
            DType::Int16 => out.extend_from_slice(&(value as i16).to_le_bytes()),
            DType::Int32 => out.extend_from_slice(&(value as i32).to_le_bytes()),
            DType::Int64 => out.extend_from_slice(&(value as i64).to_le_bytes()),
            DType::UInt8 => out.extend_from_slice(&(value as u8).to_le_bytes()),
            DType::UInt16 => out.extend_from_slice(&(value as u16).to_le_bytes()),
            DType::UInt32 => out.extend_from_slice(&(value as u32).to_le_bytes()),
            DType::UInt64 => out.extend_from_slice(&(value as u64).to_le_bytes()),
            DType::Bool => out.push(u8::from(value != 0.0 && !value.is_nan())),
        }
    }
}

impl fmt::Display for DType {
    /// Writes the PyPTO name (`fp32`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.pypto_name())
    }
}

impl FromStr for DType {
    type Err = DTypeError;

    /// Parses a PyPTO name, as [`DType::from_pypto_str`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DType::from_pypto_str(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_round_trips() {
        for (i, d) in DType::ALL.into_iter().enumerate() {
            assert_eq!(usize::from(d.runtime_code()), i);
            assert_eq!(DType::from_runtime_code(d.runtime_code()), Ok(d));
            assert_eq!(DType::from_simpler_name(d.simpler_name()), Ok(d));
            assert_eq!(DType::from_pypto_str(d.pypto_name()), Ok(d));
            assert_eq!(DType::from_npy_descr(d.npy_descr()), Ok(d));
            assert!(is_known_pypto_dtype(d.pypto_name()), "{d}");
        }
    }

    #[test]
    fn known_names_are_sorted_like_python() {
        let names = known_pypto_dtypes();
        assert_eq!(names.len(), 21);
        assert_eq!(names[..4], ["bfloat16", "bool", "fp16", "fp32"]);
    }

    fn check_pypto(input: &str, expected: Result<DType, &str>) {
        let res = DType::from_pypto_str(input).map_err(|e| e.to_string());
        match expected {
            Ok(d) => assert_eq!(res, Ok(d), "{input}"),
            Err(head) => {
                let err = res.expect_err(input);
                assert!(err.starts_with(head), "{input}: {err}");
            }
        }
    }

    #[test]
    fn pypto_names() {
        check_pypto("fp32", Ok(DType::Float32));
        check_pypto("bf16", Ok(DType::BFloat16));
        check_pypto("bfloat16", Ok(DType::BFloat16));
        check_pypto("index", Ok(DType::Int64));
        check_pypto("uint64", Ok(DType::UInt64));
        check_pypto(
            "fp99",
            Err("Unknown DataType string 'fp99'; known: ['bfloat16', 'bool', 'fp16', "),
        );
        check_pypto(
            "fp8e4m3fn",
            Err("DataType 'fp8e4m3fn' has no host element type here; supported: ['fp32', 'fp16', "),
        );
        check_pypto("FP32", Err("Unknown DataType string 'FP32'"));
    }

    #[test]
    fn pypto_name_check_matches_pypto_text() {
        assert_eq!(check_pypto_dtype("fp8e5m2"), Ok(()));
        let err = check_pypto_dtype("fp99").unwrap_err().to_string();
        assert!(err.ends_with("'uint4', 'uint64', 'uint8']"), "{err}");
    }

    fn check_descr(input: &str, expected: Option<DType>) {
        assert_eq!(DType::from_npy_descr(input).ok(), expected, "{input}");
    }

    #[test]
    fn npy_descrs() {
        check_descr("<f4", Some(DType::Float32));
        check_descr("<i1", Some(DType::Int8));
        check_descr("|i1", Some(DType::Int8));
        check_descr("|u1", Some(DType::UInt8));
        check_descr("|b1", Some(DType::Bool));
        check_descr("<V2", Some(DType::BFloat16));
        check_descr("|V2", Some(DType::BFloat16));
        check_descr(">f4", None);
        check_descr(">V2", None);
        check_descr("<f8", None);
        check_descr("|V4", None);
        check_descr("", None);
        let err = DType::from_npy_descr("<c8").unwrap_err().to_string();
        assert!(
            err.starts_with("unsupported .npy dtype '<c8'; supported: ['<f4', "),
            "{err}"
        );
    }

    fn check_value(dtype: DType, value: f64, expected_bytes: &[u8], expected_back: f64) {
        let mut bytes = Vec::new();
        dtype.encode_f64(value, &mut bytes);
        assert_eq!(bytes, expected_bytes, "{dtype} encode {value}");
        assert_eq!(
            dtype.decode_f64(&bytes),
            Some(expected_back),
            "{dtype} decode"
        );
    }

    #[test]
    fn f64_conversions() {
        check_value(DType::Float32, 1.5, &[0, 0, 0xc0, 0x3f], 1.5);
        check_value(DType::Float16, 1.0, &[0x00, 0x3c], 1.0);
        check_value(DType::BFloat16, 1.0, &[0x80, 0x3f], 1.0);
        check_value(DType::BFloat16, 1.00390625, &[0x80, 0x3f], 1.0);
        check_value(DType::Int8, -2.0, &[0xfe], -2.0);
        check_value(DType::Int8, 300.0, &[0x7f], 127.0);
        check_value(DType::UInt16, 513.0, &[0x01, 0x02], 513.0);
        check_value(DType::Int64, -1.0, &[0xff; 8], -1.0);
        check_value(DType::Bool, 7.0, &[1], 1.0);
        check_value(DType::Bool, 0.0, &[0], 0.0);
        assert_eq!(DType::Int32.decode_f64(&[1, 0]), None);
    }

    /// `ALL` is in Simpler's code order, so `from_runtime_code` (an index into it) and
    /// `runtime_code` (the shared table) agree.
    #[test]
    fn all_is_in_code_order() {
        for (i, d) in DType::ALL.into_iter().enumerate() {
            assert_eq!(usize::from(d.runtime_code()), i, "{d:?}");
            assert_eq!(DType::from_runtime_code(i as u8).unwrap(), d);
        }
        // The host types are exactly the table's rows the host path carries.
        let host: Vec<_> = pto_base::dtype::SIMPLER_TYPES
            .iter()
            .filter(|r| r.host)
            .map(|r| r.dtype)
            .collect();
        assert_eq!(DType::ALL.map(DType::simpler).to_vec(), host);
    }

    #[test]
    fn runtime_code_out_of_range() {
        assert_eq!(
            DType::from_runtime_code(12).unwrap_err().to_string(),
            "unknown Simpler DataType code 12; supported codes are 0..=11 (FLOAT32..BOOL)"
        );
    }
}
