//! `vector_add`: `c[16384] = a + b` in fp32.
//!
//! The orchestration cuts the vectors into 8 tiles of 2048 elements and submits one AIV task
//! per tile running `kernel_add` (func_id 0) with `launch_spec.set_block_num(4)`; each SPMD
//! block adds a quarter of the tile, chosen with `get_block_idx` / `get_block_num`.

use pto_build_output::kernel_config::{ArgDirection, CoreType};

use crate::example::{f32_array, f32_array_from_f64, Example, KernelSource, Param, Scalar};
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
const ORCHESTRATION_2026_09: &str =
    include_str!("../../../examples/vector_add_2026_09/orchestration/vector_add_2026_09.cpp");
const KERNEL_ADD_2026_09: &str =
    include_str!("../../../examples/vector_add_2026_09/kernels/aiv/kernel_add.cpp");

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
    example_of("vector_add", ORCHESTRATION, KERNEL_ADD, None)
}

/// `vector_add_2026_09`: the same computation and data in Simpler's 2026-09 API
/// (`orchestration_api.h`, `const Tensor&` arguments, `SIMPLER_SCOPE`, kernels reading
/// `__gm__ Tensor*` as PyPTO's current codegen writes them), with the tile size as an int32
/// scalar argument read by `orch_args.scalar<int32_t>(0)`.
pub fn example_2026_09() -> Result<Example, Error> {
    example_of(
        "vector_add_2026_09",
        ORCHESTRATION_2026_09,
        KERNEL_ADD_2026_09,
        Some(TILE as i32),
    )
}

fn example_of(
    name: &'static str,
    orchestration: &'static str,
    kernel: &str,
    tile_scalar: Option<i32>,
) -> Result<Example, Error> {
    let a = SplitMix64::new(0x7EC7_0001).uniform_vec(N);
    let b = SplitMix64::new(0x7EC7_0002).uniform_vec(N);
    let c = golden(&a, &b);
    let mut params = vec![
        Param::input("a", f32_array(&[N], &a)?),
        Param::input("b", f32_array(&[N], &b)?),
        Param::output("c", f32_array_from_f64(&[N], &c)?),
    ];
    if let Some(tile) = tile_scalar {
        params.push(Param::scalar("tile", Scalar::I32(tile)));
    }
    Ok(Example {
        name,
        orchestration_source: orchestration,
        kernels: vec![KernelSource {
            func_id: 0,
            name: "kernel_add",
            core_type: CoreType::Aiv,
            signature: vec![ArgDirection::In, ArgDirection::In, ArgDirection::Out],
            source: kernel.to_string(),
            ptoas_unit: None,
        }],
        params,
        rtol: 1e-5,
        atol: 1e-5,
        compute_golden_py: COMPUTE_GOLDEN.to_string(),
        expected_tasks: (N / TILE) as u64,
    })
}
