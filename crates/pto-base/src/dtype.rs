//! Simpler's element types (`DataType` in `data_type.h`): the enum value each file and the
//! runtime's ABI carry, the upper-case name files spell (`get_dtype_name`), and the element
//! size. The one table of these facts: the runtime's byte sizes, the diagnostics' names and
//! the build directory's codes all come from here.

/// Name written for an enum value outside the table.
pub const UNKNOWN_DTYPE_NAME: &str = "UNKNOWN";

/// The element types, with the runtime's enum values.
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

/// Every element type, in code order.
pub const ALL: [DataType; 15] = [
    DataType::Float32,
    DataType::Float16,
    DataType::Int32,
    DataType::Int16,
    DataType::Int8,
    DataType::UInt8,
    DataType::BFloat16,
    DataType::Int64,
    DataType::UInt64,
    DataType::UInt16,
    DataType::UInt32,
    DataType::Bool,
    DataType::Fp8E4M3Fn,
    DataType::Fp8E8M0,
    DataType::Fp4E2M1,
];

impl DataType {
    /// The type with enum value `code`, if any.
    pub fn from_code(code: u32) -> Option<Self> {
        ALL.get(usize::try_from(code).ok()?).copied()
    }

    /// The enum value.
    pub const fn code(self) -> u32 {
        self as u32
    }

    /// The upper-case name files use, e.g. `FLOAT32`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Float32 => "FLOAT32",
            Self::Float16 => "FLOAT16",
            Self::Int32 => "INT32",
            Self::Int16 => "INT16",
            Self::Int8 => "INT8",
            Self::UInt8 => "UINT8",
            Self::BFloat16 => "BFLOAT16",
            Self::Int64 => "INT64",
            Self::UInt64 => "UINT64",
            Self::UInt16 => "UINT16",
            Self::UInt32 => "UINT32",
            Self::Bool => "BOOL",
            Self::Fp8E4M3Fn => "FP8E4M3FN",
            Self::Fp8E8M0 => "FP8E8M0",
            Self::Fp4E2M1 => "FP4E2M1",
        }
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
        match self {
            Self::Float32 | Self::Int32 | Self::UInt32 => 4,
            Self::Float16 | Self::Int16 | Self::BFloat16 | Self::UInt16 => 2,
            Self::Int64 | Self::UInt64 => 8,
            Self::Int8
            | Self::UInt8
            | Self::Bool
            | Self::Fp8E4M3Fn
            | Self::Fp8E8M0
            | Self::Fp4E2M1 => 1,
        }
    }
}

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
}
