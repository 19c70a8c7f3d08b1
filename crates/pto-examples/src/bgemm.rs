//! `bgemm`: `C[256, 256] += A[256, 256] @ B[256, 256]` in fp32 with 64 x 64 tiles.
//!
//! For every output tile (i, j) and every k, the orchestration submits an AIC task
//! `kernel_matmul` (func_id 0) on the views `A[i, k]` and `B[k, j]`, producing a
//! runtime-allocated tile, then an AIV task `kernel_add` (func_id 1) that adds it into the view
//! `C[i, j]` passed as INOUT, so the TensorMap chains the k steps of each output tile. `C`
//! starts as zeros (`data/in/c.npy`). 16 output tiles x 4 k steps x 2 = 128 tasks.

use pto_build_output::kernel_config::{ArgDirection, CoreType};

use crate::example::{f32_array, f32_array_from_f64, Example, KernelSource, Param};
use crate::rng::SplitMix64;
use crate::Error;

/// Matrix size (rows = columns).
pub const SIZE: usize = 256;
/// Tile size.
pub const TILE: usize = 64;

const ORCHESTRATION: &str = include_str!("../../../examples/bgemm/orchestration/bgemm.cpp");
const KERNEL_MATMUL: &str = include_str!("../../../examples/bgemm/kernels/aic/kernel_matmul.cpp");
const KERNEL_ADD: &str = include_str!("../../../examples/bgemm/kernels/aiv/kernel_add.cpp");
const ORCHESTRATION_2026_09: &str =
    include_str!("../../../examples/bgemm_2026_09/orchestration/bgemm_2026_09.cpp");
const KERNEL_MATMUL_2026_09: &str =
    include_str!("../../../examples/bgemm_2026_09/kernels/aic/kernel_matmul.cpp");
const KERNEL_ADD_2026_09: &str =
    include_str!("../../../examples/bgemm_2026_09/kernels/aiv/kernel_add.cpp");

const COMPUTE_GOLDEN: &str = r#"    """c = c + a @ b, computed in float64 and rounded to float32."""
    a = np.asarray(tensors["a"], dtype=np.float64)
    b = np.asarray(tensors["b"], dtype=np.float64)
    c = np.asarray(tensors["c"], dtype=np.float64)
    tensors["c"][:] = (c + a @ b).astype(np.float32)
"#;

/// The golden `c + a @ b` for row-major `n x n` matrices, in f64.
///
/// # Panics
///
/// If `a`, `b` or `c` has fewer than `n * n` elements.
pub fn golden(a: &[f32], b: &[f32], c: &[f32], n: usize) -> Vec<f64> {
    let mut out: Vec<f64> = c.iter().map(|&v| f64::from(v)).collect();
    for i in 0..n {
        let row = &mut out[i * n..(i + 1) * n];
        for k in 0..n {
            let aik = f64::from(a[i * n + k]);
            for (o, &bkj) in row.iter_mut().zip(&b[k * n..(k + 1) * n]) {
                *o += aik * f64::from(bkj);
            }
        }
    }
    out
}

/// The example with its data.
pub fn example() -> Result<Example, Error> {
    example_of("bgemm", [ORCHESTRATION, KERNEL_MATMUL, KERNEL_ADD])
}

/// `bgemm_2026_09`: the same computation and data in Simpler's 2026-09 API: one MANUAL scope
/// (`SIMPLER_SCOPE(ScopeMode::MANUAL)`) per output tile, the k steps ordered by explicit
/// `TaskId` dependencies instead of the TensorMap, kernels reading `__gm__ Tensor*`.
pub fn example_2026_09() -> Result<Example, Error> {
    example_of(
        "bgemm_2026_09",
        [
            ORCHESTRATION_2026_09,
            KERNEL_MATMUL_2026_09,
            KERNEL_ADD_2026_09,
        ],
    )
}

/// `sources`: the orchestration, `kernel_matmul` and `kernel_add`.
fn example_of(name: &'static str, sources: [&'static str; 3]) -> Result<Example, Error> {
    let [orchestration, matmul, add] = sources;
    let n = SIZE;
    let a = SplitMix64::new(0xB6E3_0001).uniform_vec(n * n);
    let b = SplitMix64::new(0xB6E3_0002).uniform_vec(n * n);
    let c0 = vec![0f32; n * n];
    let c = golden(&a, &b, &c0, n);
    let tiles = (SIZE / TILE) as u64;
    Ok(Example {
        name,
        orchestration_source: orchestration,
        kernels: vec![
            KernelSource {
                func_id: 0,
                name: "kernel_matmul",
                core_type: CoreType::Aic,
                signature: vec![ArgDirection::In, ArgDirection::In, ArgDirection::Out],
                source: matmul.to_string(),
                ptoas_unit: None,
            },
            KernelSource {
                func_id: 1,
                name: "kernel_add",
                core_type: CoreType::Aiv,
                signature: vec![ArgDirection::In, ArgDirection::InOut],
                source: add.to_string(),
                ptoas_unit: None,
            },
        ],
        params: vec![
            Param::input("a", f32_array(&[n, n], &a)?),
            Param::input("b", f32_array(&[n, n], &b)?),
            Param::inout(
                "c",
                f32_array(&[n, n], &c0)?,
                f32_array_from_f64(&[n, n], &c)?,
            ),
        ],
        rtol: 1e-4,
        atol: 1e-4,
        compute_golden_py: COMPUTE_GOLDEN.to_string(),
        expected_tasks: tiles * tiles * tiles * 2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_is_a_matrix_product() {
        // [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] + 1 = [[20, 23], [44, 51]]
        let out = golden(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], &[1.0; 4], 2);
        assert_eq!(out, vec![20.0, 23.0, 44.0, 51.0]);
    }
}
