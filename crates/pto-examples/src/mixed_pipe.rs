//! `mixed_pipe`: `c = relu(a @ b) * scale` as one mixed (cube + vector) PTO-ISA kernel whose
//! cores talk through a `TPUSH` / `TPOP` / `TFREE` pipe, in PyPTO's mixed-kernel wrapper shape.
//!
//! `a [ROWS, K]` and `b [K, N]` are bf16, `c [ROWS, N]` fp32, `scale` an fp32 scalar. The
//! orchestration submits one MIX task per [`TASK_ROWS`] rows with
//! `rt_submit_task(MixedKernels{0, 1, 1}, args)` and [`BLOCKS`] SPMD blocks; the runtime runs
//! each block's AIC and both AIVs at once on one cluster. Both kernel files hold both
//! functions (the translation of the group's one unit, `ptoas/matmul_relu.pto`, whose
//! `reserve_buffer` / `import_reserved_buffer` pair places the consumer slots in UB):
//! `matmul_relu_aic` (cube body under
//! `__DAV_CUBE__`) and `matmul_relu_aiv` (vector body under `__DAV_VEC__`), and each
//! `kernel_entry` forwards to the one of its directory.
//!
//! Per block the AIC loads `b` once (ND -> Nz, `TMOV` to a Zn Right tile), then for each of
//! [`TILES_PER_BLOCK`] 32-row tiles of `a`: `TLOAD`, `TMOV` to Left, `TMATMUL`, and `TPUSH` of
//! the 32 x 64 accumulator into a `TPipe<0, DIR_C2V, 8192, 2, 2>` split `TILE_UP_DOWN`: two
//! slots for four tiles, so the cube waits for the vector cores. Each AIV lane
//! (`get_sub_block_id(args)`) pops its 16-row half, applies `TRELU`, frees the slot, multiplies
//! by `scale` (`TMULS`) and stores its rows.
//!
//! The golden is computed here in `f32` as the kernels do: one fused multiply-add chain in k
//! order per element, relu, then the product with `scale`.

use std::sync::Arc;

use half::bf16;
use pto_build_output::dtype::DType;
use pto_build_output::kernel_config::{ArgDirection, CoreType};
use pto_build_output::npy::NpyArray;

use crate::example::{f32_array, Example, KernelSource, Param, Scalar};
use crate::ptoas_unit::PtoasUnit;
use crate::rng::SplitMix64;
use crate::Error;
use pto_base::pyrepr::float_literal;

/// Rows of `a` and `c`.
pub const ROWS: usize = 512;
/// Columns of `a`, rows of `b`.
pub const K: usize = 64;
/// Columns of `b` and `c`.
pub const N: usize = 64;
/// Rows per MIX task.
pub const TASK_ROWS: usize = 256;
/// SPMD blocks per task.
pub const BLOCKS: usize = 2;
/// 32-row accumulator tiles each block pushes through the pipe (more than its 2 slots).
pub const TILES_PER_BLOCK: usize = TASK_ROWS / BLOCKS / 32;
/// Slots of the pipe.
pub const PIPE_SLOTS: usize = 2;

/// Relative tolerance of the comparison.
pub const RTOL: f64 = 1e-5;
/// Absolute tolerance of the comparison.
pub const ATOL: f64 = 1e-5;

const ORCHESTRATION: &str =
    include_str!("../../../examples/mixed_pipe/orchestration/mixed_pipe.cpp");
/// The mixed group's one ptoas unit: both functions, translated into one C++ file.
const MATMUL_RELU_PTO: &str = include_str!("../../../examples/mixed_pipe/ptoas/matmul_relu.pto");
/// The kernel files; their text between the sentinels is replaced by the unit's translation.
const MATMUL_RELU_AIC_WRAPPER: &str =
    include_str!("../../../examples/mixed_pipe/kernels/aic/matmul_relu_aic.cpp");
const MATMUL_RELU_AIV_WRAPPER: &str =
    include_str!("../../../examples/mixed_pipe/kernels/aiv/matmul_relu_aiv.cpp");

/// The scale the vector cores apply.
pub fn scale() -> f32 {
    0.7
}

/// `n` bf16 values uniform in `[-1, 1)` (rounded to nearest even).
fn bf16_values(seed: u64, n: usize) -> Vec<bf16> {
    let mut rng = SplitMix64::new(seed);
    (0..n).map(|_| bf16::from_f32(rng.uniform_f32())).collect()
}

/// The golden `relu(a @ b) * scale` of row-major `a [rows, K]` and `b [K, N]`, as the kernels
/// compute it; with `relu` false the relu is left out (a wrong kernel, for the tests).
///
/// # Panics
///
/// If `b` has fewer than `K * N` elements.
pub fn golden(a: &[bf16], b: &[bf16], scale: f32, relu: bool) -> Vec<f32> {
    let bf: Vec<f32> = b.iter().map(|v| v.to_f32()).collect();
    let mut c = Vec::with_capacity(a.len() / K * N);
    for row in a.chunks(K) {
        let af: Vec<f32> = row.iter().map(|v| v.to_f32()).collect();
        for j in 0..N {
            let acc = (0..K).fold(0f32, |acc, k| af[k].mul_add(bf[k * N + j], acc));
            let r = if !relu || acc > 0.0 { acc } else { 0.0 };
            c.push(r * scale);
        }
    }
    c
}

fn compute_golden_py(scale: f32) -> String {
    format!(
        r#"    """c = relu(a @ b) * scale in float32 (a and b are bf16: |V2 records, ml_dtypes.bfloat16 or uint16 bits)."""

    def as_f32(x):
        bits = np.ascontiguousarray(x).view(np.uint16).astype(np.uint32) << np.uint32(16)
        return bits.view(np.float32)

    a = as_f32(tensors["a"])
    b = as_f32(tensors["b"])
    scale = tensors.get("scale", ctypes.c_float({scale}))
    scale = np.float32(getattr(scale, "value", scale))
    tensors["c"][:] = np.maximum(a @ b, np.float32(0)) * scale
"#,
        scale = float_literal(f64::from(scale))
    )
}

/// A bf16 array of `shape`.
fn bf16_array(shape: &[usize], values: &[bf16]) -> Result<NpyArray, Error> {
    let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Ok(NpyArray::new(DType::BFloat16, shape.to_vec(), data)?)
}

/// The example with its data.
pub fn example() -> Result<Example, Error> {
    let a = bf16_values(0x3D7E_0001, ROWS * K);
    let b = bf16_values(0x3D7E_0002, K * N);
    let scale = scale();
    let c = golden(&a, &b, scale, true);
    use ArgDirection::{In, Out};
    let signature = vec![In, In, Out, Out];
    let unit = Arc::new(PtoasUnit::new("matmul_relu", MATMUL_RELU_PTO)?);
    Ok(Example {
        name: "mixed_pipe",
        orchestration_source: ORCHESTRATION,
        kernels: vec![
            KernelSource::from_ptoas(
                0,
                "matmul_relu_aic",
                CoreType::Aic,
                signature.clone(),
                &unit,
                MATMUL_RELU_AIC_WRAPPER,
            )?,
            KernelSource::from_ptoas(
                1,
                "matmul_relu_aiv",
                CoreType::Aiv,
                signature,
                &unit,
                MATMUL_RELU_AIV_WRAPPER,
            )?,
        ],
        params: vec![
            Param::input("a", bf16_array(&[ROWS, K], &a)?),
            Param::input("b", bf16_array(&[K, N], &b)?),
            Param::output("c", f32_array(&[ROWS, N], &c)?),
            Param::scalar("scale", Scalar::F32(scale)),
        ],
        rtol: RTOL,
        atol: ATOL,
        compute_golden_py: compute_golden_py(scale),
        expected_tasks: (ROWS / TASK_ROWS) as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_block_pushes_more_tiles_than_the_pipe_has_slots() {
        const { assert!(TILES_PER_BLOCK > PIPE_SLOTS) };
        const { assert!(TILES_PER_BLOCK * 32 * BLOCKS == TASK_ROWS) };
        const { assert!(ROWS.is_multiple_of(TASK_ROWS)) };
    }

    #[test]
    fn a_kernel_without_relu_fails_the_tolerances() {
        let a = bf16_values(0x3D7E_0001, ROWS * K);
        let b = bf16_values(0x3D7E_0002, K * N);
        let want = golden(&a, &b, scale(), true);
        let wrong = golden(&a, &b, scale(), false);
        let bad = want
            .iter()
            .zip(&wrong)
            .filter(|(&w, &g)| {
                (f64::from(g) - f64::from(w)).abs() > ATOL + RTOL * f64::from(w).abs()
            })
            .count();
        assert!(bad > want.len() / 4, "{bad} of {} differ", want.len());
        assert!(want.iter().all(|&v| v >= 0.0));
    }
}
