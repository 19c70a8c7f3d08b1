//! Element type codes (Simpler's `DataType`) as the runtime needs them: sizes and names.

/// Size in bytes of one element of type `code` (FP4 reports 1; unknown codes report 1).
pub fn elem_size(code: u8) -> usize {
    match code {
        0 | 2 | 10 => 4,
        1 | 3 | 6 | 9 => 2,
        7 | 8 => 8,
        _ => 1,
    }
}

/// Size in bytes of one element of type `code`, or `None` for a code that is no DataType.
pub fn elem_size_checked(code: u8) -> Option<usize> {
    (code <= 14).then(|| elem_size(code))
}

/// Simpler's upper-case name of type `code` (`FLOAT32`, ..., `UNKNOWN`).
pub fn name(code: u8) -> &'static str {
    match code {
        0 => "FLOAT32",
        1 => "FLOAT16",
        2 => "INT32",
        3 => "INT16",
        4 => "INT8",
        5 => "UINT8",
        6 => "BFLOAT16",
        7 => "INT64",
        8 => "UINT64",
        9 => "UINT16",
        10 => "UINT32",
        11 => "BOOL",
        12 => "FP8E4M3FN",
        13 => "FP8E8M0",
        14 => "FP4E2M1",
        _ => "UNKNOWN",
    }
}
