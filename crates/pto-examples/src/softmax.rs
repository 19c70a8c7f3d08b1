//! `softmax`: row softmax `y = softmax(x, axis=-1)` of `x [ROWS, COLS]` (bf16) into
//! `y [ROWS, COLS]` (fp32) with one PTO-ISA kernel in PyPTO's shape, translated from
//! `ptoas/row_softmax.pto`.
//!
//! The orchestration cuts the rows into tiles of [`TILE_ROWS`] (the last one shorter) and
//! submits one AIV task `row_softmax` (func_id 0) per tile with one SPMD block per 16 rows;
//! each block takes its rows from `get_block_idx(args)` and the tile's row count (the last
//! block of the last tile has fewer than 16 valid rows: dynamic-shape views and tiles). The
//! kernel: `TLOAD` (bf16), `TCVT` to f32, `TROWMAX`, `TROWEXPANDSUB`, `TEXP`, `TROWSUM`,
//! `TROWEXPANDDIV`, `TSTORE`.
//!
//! Rows come in four magnitudes, the largest (|x| up to 100) overflowing `exp` unless the row
//! maximum is subtracted first. The golden is computed here in `f32` in the kernel's order
//! (max, `exp(x - max)`, the sum left to right, the division); `golden.py` does the same in
//! NumPy float32.

use std::sync::Arc;

use half::bf16;
use pto_build_output::dtype::DType;
use pto_build_output::kernel_config::{ArgDirection, CoreType};
use pto_build_output::npy::NpyArray;

use crate::example::{f32_array, Example, KernelSource, Param};
use crate::ptoas_unit::PtoasUnit;
use crate::rng::SplitMix64;
use crate::Error;

/// Rows of `x`.
pub const ROWS: usize = 200;
/// Columns of `x` (the kernel's static tile width).
pub const COLS: usize = 128;
/// Rows per task.
pub const TILE_ROWS: usize = 64;
/// Rows per SPMD block.
pub const BLOCK_ROWS: usize = 16;
/// Magnitude of the values of row `r`: `AMPLITUDES[r % 4]`.
pub const AMPLITUDES: [f32; 4] = [0.5, 2.0, 8.0, 100.0];

/// Relative tolerance of the comparison.
pub const RTOL: f64 = 1e-5;
/// Absolute tolerance of the comparison.
pub const ATOL: f64 = 1e-7;

const ORCHESTRATION: &str = include_str!("../../../examples/softmax/orchestration/softmax.cpp");
const ROW_SOFTMAX_PTO: &str = include_str!("../../../examples/softmax/ptoas/row_softmax.pto");
/// The kernel file; its text between the sentinels is replaced by the `.pto`'s translation.
const ROW_SOFTMAX_WRAPPER: &str =
    include_str!("../../../examples/softmax/kernels/aiv/row_softmax.cpp");

const COMPUTE_GOLDEN: &str = r#"    """Row softmax in float32, in the kernel's order (max, exp(x - max), sum, divide).

    x arrives as 2-byte bf16 records (np.load of a |V2 file), ml_dtypes.bfloat16 or uint16 bits.
    """
    bits = np.ascontiguousarray(tensors["x"]).view(np.uint16).astype(np.uint32) << np.uint32(16)
    x = bits.view(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    tensors["y"][:] = e / e.sum(axis=1, keepdims=True, dtype=np.float32)
"#;

/// The input: row `r` uniform in `[-a, a)` with `a = AMPLITUDES[r % 4]`, rounded to bf16.
pub fn input() -> Vec<bf16> {
    let mut rng = SplitMix64::new(0x50F7_0001);
    (0..ROWS * COLS)
        .map(|i| bf16::from_f32(rng.uniform_f32() * AMPLITUDES[(i / COLS) % AMPLITUDES.len()]))
        .collect()
}

/// The golden softmax of the row-major `rows x cols` matrix `x`, as the kernel computes it.
/// With `subtract_max` false the row maximum is not subtracted (a wrong kernel, for the tests).
///
/// # Panics
///
/// If `cols` is zero or `x` is not a whole number of rows.
pub fn golden(x: &[bf16], cols: usize, subtract_max: bool) -> Vec<f32> {
    assert!(
        cols > 0 && x.len().is_multiple_of(cols),
        "x is not a matrix of {cols} columns"
    );
    let mut y = Vec::with_capacity(x.len());
    for row in x.chunks(cols) {
        let v: Vec<f32> = row.iter().map(|b| b.to_f32()).collect();
        let m = if subtract_max {
            v[1..]
                .iter()
                .fold(v[0], |acc, &a| if a > acc { a } else { acc })
        } else {
            0.0
        };
        let e: Vec<f32> = v.iter().map(|&a| (a - m).exp()).collect();
        let sum = e[1..].iter().fold(e[0], |acc, &a| acc + a);
        y.extend(e.iter().map(|&a| a / sum));
    }
    y
}

/// The example with its data.
pub fn example() -> Result<Example, Error> {
    let x = input();
    let y = golden(&x, COLS, true);
    let data = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    let x_array = NpyArray::new(DType::BFloat16, vec![ROWS, COLS], data)?;
    Ok(Example {
        name: "softmax",
        orchestration_source: ORCHESTRATION,
        kernels: vec![KernelSource::from_ptoas(
            0,
            "row_softmax",
            CoreType::Aiv,
            vec![ArgDirection::In, ArgDirection::Out],
            &Arc::new(PtoasUnit::new("row_softmax", ROW_SOFTMAX_PTO)?),
            ROW_SOFTMAX_WRAPPER,
        )?],
        params: vec![
            Param::input("x", x_array),
            Param::output("y", f32_array(&[ROWS, COLS], &y)?),
        ],
        rtol: RTOL,
        atol: ATOL,
        compute_golden_py: COMPUTE_GOLDEN.to_string(),
        expected_tasks: ROWS.div_ceil(TILE_ROWS) as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sum_to_one_and_follow_the_largest_entry() {
        let x = input();
        let y = golden(&x, COLS, true);
        for (r, (xr, yr)) in x.chunks(COLS).zip(y.chunks(COLS)).enumerate() {
            let sum: f64 = yr.iter().map(|&v| f64::from(v)).sum();
            assert!((sum - 1.0).abs() < 1e-5, "row {r} sums to {sum}");
            let argmax =
                |v: &[f32]| (0..COLS).fold(0, |best, c| if v[c] > v[best] { c } else { best });
            let xf: Vec<f32> = xr.iter().map(|b| b.to_f32()).collect();
            assert_eq!(argmax(yr), argmax(&xf), "row {r}");
        }
    }

    #[test]
    fn the_last_tile_and_block_are_partial() {
        const { assert!(!ROWS.is_multiple_of(TILE_ROWS)) };
        const { assert!(!(ROWS % TILE_ROWS).is_multiple_of(BLOCK_ROWS)) };
        const { assert!(TILE_ROWS.is_multiple_of(BLOCK_ROWS)) };
    }

    #[test]
    fn a_kernel_without_the_max_subtraction_fails() {
        // The rows of magnitude 100 overflow exp: inf / inf is NaN, which never compares equal.
        let x = input();
        let wrong = golden(&x, COLS, false);
        assert!(wrong.iter().any(|v| v.is_nan()));
    }
}
