//! `vector_add`: `c[16384] = a + b` in fp32.
//!
//! The orchestration cuts the vectors into 8 tiles of 2048 elements and submits one AIV task
//! per tile running `kernel_add` (func_id 0) with `launch_spec.set_block_num(4)`; each SPMD
//! block adds a quarter of the tile, chosen with `get_block_idx` / `get_block_num`.

use pto_build_output::kernel_config::{ArgDirection, CoreType};

use crate::example::{f32_array, f32_array_from_f64, Example, KernelSource, Param};
use crate::rng::SplitMix64;
use crate::Error;

/// Number of elements.
pub const N: usize = 16384;
/// Elements per task.
pub const TILE: usize = 2048;
/// SPMD blocks per task.
pub const BLOCKS: usize = 4;

const ORCHESTRATION: &str =
    include_str!("../../../examples/vector_add/orchestration/vector_add.cpp");
const KERNEL_ADD: &str = include_str!("../../../examples/vector_add/kernels/aiv/kernel_add.cpp");

const COMPUTE_GOLDEN: &str = r#"    """c = a + b, computed in float64 and rounded to float32."""
    a = np.asarray(tensors["a"], dtype=np.float64)
    b = np.asarray(tensors["b"], dtype=np.float64)
    tensors["c"][:] = (a + b).astype(np.float32)
"#;

/// The golden `c = a + b`, in f64 (as long as the shorter of `a` and `b`).
pub fn golden(a: &[f32], b: &[f32]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) + f64::from(y))
        .collect()
}

/// The example with its data.
pub fn example() -> Result<Example, Error> {
    let a = SplitMix64::new(0x7EC7_0001).uniform_vec(N);
    let b = SplitMix64::new(0x7EC7_0002).uniform_vec(N);
    let c = golden(&a, &b);
    Ok(Example {
        name: "vector_add",
        orchestration_source: ORCHESTRATION,
        kernels: vec![KernelSource {
            func_id: 0,
            name: "kernel_add",
            core_type: CoreType::Aiv,
            signature: vec![ArgDirection::In, ArgDirection::In, ArgDirection::Out],
            source: KERNEL_ADD.to_string(),
            ptoas_unit: None,
        }],
        params: vec![
            Param::input("a", f32_array(&[N], &a)?),
            Param::input("b", f32_array(&[N], &b)?),
            Param::output("c", f32_array_from_f64(&[N], &c)?),
        ],
        rtol: 1e-5,
        atol: 1e-5,
        compute_golden_py: COMPUTE_GOLDEN.to_string(),
        expected_tasks: (N / TILE) as u64,
    })
}
