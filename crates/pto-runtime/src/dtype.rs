//! Element type codes (Simpler's `DataType`) as the runtime needs them: sizes and names,
//! from the one table of them ([`pto_base::dtype::DataType`]).

use pto_base::dtype::DataType;

/// Size in bytes of one element of type `code` (FP4 reports 1; unknown codes report 1).
#[inline]
pub fn elem_size(code: u8) -> usize {
    elem_size_checked(code).unwrap_or(1)
}

/// Size in bytes of one element of type `code`, or `None` for a code that is no DataType.
#[inline]
pub fn elem_size_checked(code: u8) -> Option<usize> {
    DataType::from_code(u32::from(code)).map(DataType::elem_size)
}

/// Simpler's upper-case name of type `code` (`FLOAT32`, ..., `UNKNOWN`).
pub fn name(code: u8) -> &'static str {
    DataType::name_of_code(u32::from(code))
}
