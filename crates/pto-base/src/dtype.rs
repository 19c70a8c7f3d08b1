//! Element types: the one table of them. Every other spelling in the project (the runtime's
//! sizes, the diagnostics' names, the build directory's codes, the IR's types, the `.pto`
//! and C++ spellings, NumPy / torch / ctypes names, and Python's views through
//! `pypto._native`) is read from here or checked against it by a test.
//!
//! Two tables, one per naming authority:
//!
//! * [`SIMPLER_TYPES`]: Simpler's `DataType` (`data_type.h`), in enum-value order: the code
//!   files and the runtime's ABI carry, the upper-case name files spell (`get_dtype_name`),
//!   the element size (and how many values one element packs), torch's name of the type,
//!   and the host facts of the types this runtime's host path carries (NumPy's attribute,
//!   the ctypes class of a scalar).
//! * [`ELEMENT_TYPES`]: PyPTO's `DataType` (`pl.FP32`, `str()` `fp32`), in PyPTO's order:
//!   member and `str()` names, accepted aliases, width, kind, the C++ and `.pto` spellings,
//!   and the Simpler type of the runtime element and of a host tensor.

/// Name written for an enum value outside the table.
pub const UNKNOWN_DTYPE_NAME: &str = "UNKNOWN";

/// Simpler's element types, with the runtime's enum values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `FLOAT32`, 4 bytes.
    Float32 = 0,
    /// `FLOAT16`, 2 bytes.
    Float16 = 1,
    /// `INT32`, 4 bytes.
    Int32 = 2,
    /// `INT16`, 2 bytes.
    Int16 = 3,
    /// `INT8`, 1 byte.
    Int8 = 4,
    /// `UINT8`, 1 byte.
    UInt8 = 5,
    /// `BFLOAT16`, 2 bytes.
    BFloat16 = 6,
    /// `INT64`, 8 bytes.
    Int64 = 7,
    /// `UINT64`, 8 bytes.
    UInt64 = 8,
    /// `UINT16`, 2 bytes.
    UInt16 = 9,
    /// `UINT32`, 4 bytes.
    UInt32 = 10,
    /// `BOOL`, 1 byte.
    Bool = 11,
    /// `FP8E4M3FN`, 1 byte.
    Fp8E4M3Fn = 12,
    /// `FP8E8M0`, 1 byte.
    Fp8E8M0 = 13,
    /// `FP4E2M1`: two values packed per byte; [`elem_size`](DataType::elem_size) is 1.
    Fp4E2M1 = 14,
}

/// One row of [`SIMPLER_TYPES`]: a Simpler element type and its spellings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimplerType {
    /// The type (its enum value is the row's index).
    pub dtype: DataType,
    /// The upper-case name files use (`FLOAT32`).
    pub name: &'static str,
    /// Bytes per element (1 for the packed FP4 type).
    pub elem_size: usize,
    /// Values one element holds: 2 for the packed FP4 type (torch's `float4_e2m1fn_x2`, a
    /// byte of two values), else 1.
    pub values_per_element: u32,
    /// torch's name of the type (`torch.<name>`), which is also NumPy's
    /// (`numpy.dtype(...).name`) where NumPy has the type (`numpy_attr`). Simpler's own torch
    /// map (`torch_interop.py`) has the same names, the FP8 / FP4 ones included.
    pub torch_name: &'static str,
    /// Whether this runtime's host path carries the type: `.npy` / `.pt` files, NumPy
    /// arrays and the tensors of a run (`pto_build_output::DType`). False for the FP8 / FP4
    /// formats, which reach the chips only as L3 host tensors (torch storage the chips map).
    pub host: bool,
    /// NumPy's attribute (`np.<attr>`), `None` where NumPy has no such type (bfloat16, the
    /// FP8 / FP4 formats); `bool_` for BOOL (the spelling every NumPy version has).
    pub numpy_attr: Option<&'static str>,
    /// The ctypes class a scalar of the type is passed as (`c_float` for every float type a
    /// host holds: a scalar is a C `float` in the kernel ABI); `None` for the FP8 / FP4
    /// formats, which no scalar has.
    pub ctypes: Option<&'static str>,
}

/// A row of [`SIMPLER_TYPES`] for a type this runtime's host path carries.
const fn host(
    dtype: DataType,
    name: &'static str,
    elem_size: usize,
    torch_name: &'static str,
    numpy_attr: Option<&'static str>,
    ctypes: &'static str,
) -> SimplerType {
    SimplerType {
        dtype,
        name,
        elem_size,
        values_per_element: 1,
        torch_name,
        host: true,
        numpy_attr,
        ctypes: Some(ctypes),
    }
}

/// A row of [`SIMPLER_TYPES`] for a type only the chips and torch hold (one byte per
/// element, `values_per_element` values in it).
const fn device(
    dtype: DataType,
    name: &'static str,
    values_per_element: u32,
    torch_name: &'static str,
) -> SimplerType {
    SimplerType {
        dtype,
        name,
        elem_size: 1,
        values_per_element,
        torch_name,
        host: false,
        numpy_attr: None,
        ctypes: None,
    }
}

/// Simpler's element types, in code order (row `i` is the type with enum value `i`).
#[rustfmt::skip]
pub const SIMPLER_TYPES: [SimplerType; 15] = {
    use DataType as D;
    [
        host(D::Float32, "FLOAT32", 4, "float32", Some("float32"), "c_float"),
        host(D::Float16, "FLOAT16", 2, "float16", Some("float16"), "c_float"),
        host(D::Int32, "INT32", 4, "int32", Some("int32"), "c_int32"),
        host(D::Int16, "INT16", 2, "int16", Some("int16"), "c_int16"),
        host(D::Int8, "INT8", 1, "int8", Some("int8"), "c_int8"),
        host(D::UInt8, "UINT8", 1, "uint8", Some("uint8"), "c_uint8"),
        host(D::BFloat16, "BFLOAT16", 2, "bfloat16", None, "c_float"),
        host(D::Int64, "INT64", 8, "int64", Some("int64"), "c_int64"),
        host(D::UInt64, "UINT64", 8, "uint64", Some("uint64"), "c_uint64"),
        host(D::UInt16, "UINT16", 2, "uint16", Some("uint16"), "c_uint16"),
        host(D::UInt32, "UINT32", 4, "uint32", Some("uint32"), "c_uint32"),
        host(D::Bool, "BOOL", 1, "bool", Some("bool_"), "c_bool"),
        device(D::Fp8E4M3Fn, "FP8E4M3FN", 1, "float8_e4m3fn"),
        device(D::Fp8E8M0, "FP8E8M0", 1, "float8_e8m0fnu"),
        device(D::Fp4E2M1, "FP4E2M1", 2, "float4_e2m1fn_x2"),
    ]
};

/// Every Simpler element type, in code order.
pub const ALL: [DataType; 15] = {
    let mut all = [DataType::Float32; 15];
    let mut i = 0;
    while i < SIMPLER_TYPES.len() {
        all[i] = SIMPLER_TYPES[i].dtype;
        i += 1;
    }
    all
};

impl DataType {
    /// The type with enum value `code`, if any.
    pub fn from_code(code: u32) -> Option<Self> {
        ALL.get(usize::try_from(code).ok()?).copied()
    }

    /// The enum value.
    pub const fn code(self) -> u32 {
        self as u32
    }

    /// The type's row of [`SIMPLER_TYPES`].
    pub const fn row(self) -> &'static SimplerType {
        &SIMPLER_TYPES[self as usize]
    }

    /// The upper-case name files use, e.g. `FLOAT32`.
    pub const fn name(self) -> &'static str {
        self.row().name
    }

    /// The name for an enum value, `UNKNOWN` outside the table.
    pub fn name_of_code(code: u32) -> &'static str {
        Self::from_code(code).map_or(UNKNOWN_DTYPE_NAME, Self::name)
    }

    /// The type named `name`, ignoring ASCII case.
    pub fn from_name(name: &str) -> Option<Self> {
        ALL.iter()
            .copied()
            .find(|d| d.name().eq_ignore_ascii_case(name))
    }

    /// Bytes per element (1 for the packed FP4 type).
    pub const fn elem_size(self) -> usize {
        self.row().elem_size
    }

    /// torch's name of the type ([`SimplerType::torch_name`]): `float32`,
    /// `float8_e4m3fn`, ...
    pub const fn torch_name(self) -> &'static str {
        self.row().torch_name
    }

    /// The NumPy / torch name of a type this runtime's host path carries
    /// ([`SimplerType::host`]), `None` for the FP8 / FP4 formats.
    pub const fn host_name(self) -> Option<&'static str> {
        let row = self.row();
        if row.host {
            Some(row.torch_name)
        } else {
            None
        }
    }

    /// PyPTO's element type for this runtime type (its row of [`ELEMENT_TYPES`]), if any.
    pub fn element_type(self) -> Option<&'static ElementType> {
        ELEMENT_TYPES.iter().find(|t| t.simpler == Some(self))
    }
}

/// What an [`ElementType`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `bool`.
    Bool,
    /// A signed integer (`INDEX` included).
    Int,
    /// An unsigned integer.
    UInt,
    /// A floating-point number.
    Float,
}

impl Kind {
    /// The lower-case name (`bool`, `int`, `uint`, `float`), as Python sees it.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Bool => "bool",
            Kind::Int => "int",
            Kind::UInt => "uint",
            Kind::Float => "float",
        }
    }
}

/// One row of [`ELEMENT_TYPES`]: a PyPTO element type and its spellings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementType {
    /// The member name (`DataType.FP32`, `pl.FP32`).
    pub member: &'static str,
    /// PyPTO's `str(DataType)`, the spelling of `compiled_meta.json` (`fp32`, `bfloat16`).
    pub name: &'static str,
    /// Other names accepted for the type (`bf16`); never another type's name.
    pub aliases: &'static [&'static str],
    /// Width in bits (4 for the sub-byte types).
    pub bits: u32,
    /// What the type holds.
    pub kind: Kind,
    /// The C++ type of one element in generated code, `None` for a type generated code has
    /// no scalar for.
    pub c_type: Option<&'static str>,
    /// The `.pto` (MLIR) element type, for the types this compiler generates.
    pub pto_name: Option<&'static str>,
    /// The runtime's element type of a tensor of this type (`DataType::` in generated
    /// orchestration, Simpler's code in files), `None` for `INDEX` and the types Simpler has
    /// no code for (`FP8E5M2`, `INT4`, ...).
    pub simpler: Option<DataType>,
    /// The Simpler type a host tensor of this type holds (`INDEX`: `INT64`), `None` for a
    /// type no host tensor holds. Whether this runtime's host path (NumPy, `.npy` / `.pt`)
    /// carries it too is that type's [`SimplerType::host`].
    pub host: Option<DataType>,
}

impl ElementType {
    /// The row whose `str()` name or alias is `name`.
    pub fn from_name(name: &str) -> Option<&'static ElementType> {
        ELEMENT_TYPES
            .iter()
            .find(|t| t.name == name || t.aliases.contains(&name))
    }

    /// The row whose member name is `member` (`FP32`).
    pub fn from_member(member: &str) -> Option<&'static ElementType> {
        ELEMENT_TYPES.iter().find(|t| t.member == member)
    }

    /// Bytes per element, rounded up (1 for the sub-byte types).
    pub const fn size_bytes(&self) -> u64 {
        (self.bits as u64).div_ceil(8)
    }
}

/// A row of [`ELEMENT_TYPES`] the runtime and the hosts carry as `simpler`.
const fn carried(
    member: &'static str,
    name: &'static str,
    aliases: &'static [&'static str],
    bits: u32,
    kind: Kind,
    (c_type, pto_name): (&'static str, &'static str),
    simpler: DataType,
) -> ElementType {
    ElementType {
        member,
        name,
        aliases,
        bits,
        kind,
        c_type: Some(c_type),
        pto_name: Some(pto_name),
        simpler: Some(simpler),
        host: Some(simpler),
    }
}

/// A row of [`ELEMENT_TYPES`] Simpler has a code for but generated code has no scalar of
/// (the FP8 / FP4 formats: kernels written by hand move them; the DSL does not compute them).
const fn stored(
    member: &'static str,
    name: &'static str,
    bits: u32,
    simpler: DataType,
) -> ElementType {
    ElementType {
        member,
        name,
        aliases: &[],
        bits,
        kind: Kind::Float,
        c_type: None,
        pto_name: None,
        simpler: Some(simpler),
        host: Some(simpler),
    }
}

/// A row of [`ELEMENT_TYPES`] only named here (sidecars may carry it; nothing computes it,
/// and Simpler has no code for it).
const fn named(member: &'static str, name: &'static str, bits: u32, kind: Kind) -> ElementType {
    ElementType {
        member,
        name,
        aliases: &[],
        bits,
        kind,
        c_type: None,
        pto_name: None,
        simpler: None,
        host: None,
    }
}

/// PyPTO's element types, in PyPTO's order. `INDEX` comes last, after `INT64` whose host
/// type it shares, so the first row of a host type is that type's own.
#[rustfmt::skip]
pub const ELEMENT_TYPES: [ElementType; 21] = {
    use DataType as D;
    use Kind::{Bool, Float, Int, UInt};
    [
        carried("BOOL", "bool", &[], 8, Bool, ("bool", "i1"), D::Bool),
        named("INT4", "int4", 4, Int),
        carried("INT8", "int8", &[], 8, Int, ("int8_t", "i8"), D::Int8),
        carried("INT16", "int16", &[], 16, Int, ("int16_t", "i16"), D::Int16),
        carried("INT32", "int32", &[], 32, Int, ("int32_t", "i32"), D::Int32),
        carried("INT64", "int64", &[], 64, Int, ("int64_t", "i64"), D::Int64),
        named("UINT4", "uint4", 4, UInt),
        carried("UINT8", "uint8", &[], 8, UInt, ("uint8_t", "ui8"), D::UInt8),
        carried("UINT16", "uint16", &[], 16, UInt, ("uint16_t", "ui16"), D::UInt16),
        carried("UINT32", "uint32", &[], 32, UInt, ("uint32_t", "ui32"), D::UInt32),
        carried("UINT64", "uint64", &[], 64, UInt, ("uint64_t", "ui64"), D::UInt64),
        stored("FP4", "fp4", 4, D::Fp4E2M1),
        stored("FP8E4M3FN", "fp8e4m3fn", 8, D::Fp8E4M3Fn),
        named("FP8E5M2", "fp8e5m2", 8, Float),
        stored("FP8E8M0", "fp8e8m0", 8, D::Fp8E8M0),
        carried("FP16", "fp16", &[], 16, Float, ("half", "f16"), D::Float16),
        carried("FP32", "fp32", &[], 32, Float, ("float", "f32"), D::Float32),
        carried("BF16", "bfloat16", &["bf16"], 16, Float, ("bfloat16_t", "bf16"), D::BFloat16),
        named("HF4", "hf4", 4, Float),
        named("HF8", "hf8", 8, Float),
        ElementType {
            simpler: None,
            ..carried("INDEX", "index", &[], 64, Int, ("int64_t", "index"), D::Int64)
        },
    ]
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let expected = [
            (0, "FLOAT32", 4),
            (1, "FLOAT16", 2),
            (2, "INT32", 4),
            (3, "INT16", 2),
            (4, "INT8", 1),
            (5, "UINT8", 1),
            (6, "BFLOAT16", 2),
            (7, "INT64", 8),
            (8, "UINT64", 8),
            (9, "UINT16", 2),
            (10, "UINT32", 4),
            (11, "BOOL", 1),
            (12, "FP8E4M3FN", 1),
            (13, "FP8E8M0", 1),
            (14, "FP4E2M1", 1),
        ];
        for (code, name, size) in expected {
            let d = DataType::from_code(code).unwrap();
            assert_eq!((d.code(), d.name(), d.elem_size()), (code, name, size));
            assert_eq!(DataType::from_name(name), Some(d));
            assert_eq!(DataType::from_name(&name.to_lowercase()), Some(d));
        }
        assert_eq!(DataType::name_of_code(15), "UNKNOWN");
        assert_eq!(DataType::from_name("UNKNOWN"), None);
    }

    #[test]
    fn simpler_rows_are_in_code_order() {
        for (i, row) in SIMPLER_TYPES.iter().enumerate() {
            assert_eq!(row.dtype as usize, i, "{row:?}");
            assert_eq!(ALL[i], row.dtype);
            // The host path's types are those a scalar has a ctypes class for and NumPy a
            // type for (bfloat16 through ml_dtypes), each one value per element.
            assert_eq!(row.host, row.ctypes.is_some(), "{row:?}");
            assert!(row.numpy_attr.is_none() || row.host, "{row:?}");
            assert_eq!(row.dtype.host_name().is_some(), row.host, "{row:?}");
            assert!(!row.host || row.values_per_element == 1, "{row:?}");
        }
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = ELEMENT_TYPES
            .iter()
            .flat_map(|t| std::iter::once(t.name).chain(t.aliases.iter().copied()))
            .collect();
        let mut members: Vec<&str> = ELEMENT_TYPES.iter().map(|t| t.member).collect();
        let n = (names.len(), members.len());
        names.sort_unstable();
        names.dedup();
        members.sort_unstable();
        members.dedup();
        assert_eq!((names.len(), members.len()), n);
    }

    /// Every runtime and host type of a PyPTO row agrees with it (size, a host name), and a
    /// Simpler type's first PyPTO row is the one carried as that type.
    #[test]
    fn pypto_rows_agree_with_simpler_rows() {
        for t in &ELEMENT_TYPES {
            assert_eq!(ElementType::from_name(t.name), Some(t));
            assert_eq!(ElementType::from_member(t.member), Some(t));
            for d in t.simpler.iter().chain(&t.host) {
                let row = d.row();
                let bits = 8 * row.elem_size as u32;
                assert_eq!(t.bits * row.values_per_element, bits, "{}", t.member);
            }
            // Generated code computes only what the host path carries.
            assert!(
                t.c_type.is_none() || t.host.is_some_and(|h| h.host_name().is_some()),
                "{}",
                t.member
            );
            assert!(t.simpler.is_none() || t.simpler == t.host, "{}", t.member);
            assert_eq!(t.c_type.is_some(), t.pto_name.is_some(), "{}", t.member);
        }
        for d in ALL {
            if let Some(t) = d.element_type() {
                assert_eq!(t.host, Some(d));
            }
            assert!(d.element_type().is_some(), "{d:?} has no PyPTO row");
        }
        // Simpler's FP8 / FP4 codes are PyPTO's FP8E4M3FN / FP8E8M0 / FP4, with torch's
        // names (Simpler's torch_interop.py); FP8E5M2 has no Simpler code.
        let fp = |m: &str| {
            let t = ElementType::from_member(m).unwrap();
            t.simpler.map(|d| (d.code(), d.torch_name(), d.host_name()))
        };
        assert_eq!(fp("FP8E4M3FN"), Some((12, "float8_e4m3fn", None)));
        assert_eq!(fp("FP8E8M0"), Some((13, "float8_e8m0fnu", None)));
        assert_eq!(fp("FP4"), Some((14, "float4_e2m1fn_x2", None)));
        assert_eq!(fp("FP8E5M2"), None);
        assert_eq!(ElementType::from_name("bf16").unwrap().member, "BF16");
        assert_eq!(
            ElementType::from_name("index").unwrap().host,
            Some(DataType::Int64)
        );
        assert_eq!(DataType::Int64.element_type().unwrap().member, "INT64");
        assert_eq!(ElementType::from_name("fp4").unwrap().size_bytes(), 1);
    }
}
