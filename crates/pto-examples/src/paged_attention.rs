//! `paged_attention`: decode attention over a paged KV cache, one KV head shared by every
//! query head (MQA), fp32.
//!
//! ```text
//! out[b] = softmax(scale * query[b] @ K_b^T) @ V_b
//! K_b = the first context_lens[b] rows of key_cache[block_table[b, 0]], key_cache[block_table[b, 1]], ...
//! ```
//!
//! Parameters, in order: `query [B, H, D]`, `key_cache [NB, BS, D]`, `value_cache [NB, BS, D]`,
//! `block_table [B, MAX_BLOCKS]` (int32), `context_lens [B]` (int32), `out [B, H, D]` (Out) and
//! the scalar `scale` (fp32, `1/sqrt(D)`). The orchestration reads `context_lens[b]` and
//! `block_table[b, j]` with `get_tensor_data`; per batch it opens a scope, allocates the
//! online-softmax accumulators with `alloc_tensors`, and for each valid KV block submits QK
//! (AIC, func_id 0), SF (AIV, 1), PV (AIC, 2) and UP (AIV, 3). With the context lengths below
//! that is 2 + 4 + 8 + 5 = 19 blocks, i.e. 76 kernel tasks plus 4 allocation tasks.

use pto_build_output::kernel_config::{ArgDirection, CoreType};

use crate::example::{
    f32_array, f32_array_from_f64, i32_array, Example, KernelSource, Param, Scalar,
};
use crate::rng::SplitMix64;
use crate::Error;
use pto_base::pyrepr::float_literal;

/// Batch size.
pub const B: usize = 4;
/// Query heads.
pub const H: usize = 16;
/// Head dimension.
pub const D: usize = 128;
/// Blocks in the KV cache.
pub const NUM_BLOCKS: usize = 40;
/// Tokens per cache block.
pub const BLOCK_SIZE: usize = 64;
/// Block-table entries per batch (so at most 512 tokens of context).
pub const MAX_BLOCKS: usize = 8;
/// Context length of each batch: partial and full last blocks, one and many blocks.
pub const CONTEXT_LENS: [i32; B] = [97, 256, 512, 300];

const ORCHESTRATION: &str =
    include_str!("../../../examples/paged_attention/orchestration/paged_attention.cpp");
const QK_MATMUL: &str = include_str!("../../../examples/paged_attention/kernels/aic/qk_matmul.cpp");
const SOFTMAX_PREPARE: &str =
    include_str!("../../../examples/paged_attention/kernels/aiv/softmax_prepare.cpp");
const PV_MATMUL: &str = include_str!("../../../examples/paged_attention/kernels/aic/pv_matmul.cpp");
const ONLINE_UPDATE: &str =
    include_str!("../../../examples/paged_attention/kernels/aiv/online_update.cpp");

/// The attention scale `1/sqrt(D)` as the fp32 scalar the orchestration receives.
pub fn scale() -> f32 {
    1.0 / (D as f32).sqrt()
}

/// The block table: a fixed pseudo-random permutation of the cache blocks (the first
/// `B * MAX_BLOCKS` of a shuffle of `0..NUM_BLOCKS`), row-major `[B, MAX_BLOCKS]`.
pub fn block_table() -> Vec<i32> {
    let mut blocks: Vec<i32> = (0..NUM_BLOCKS as i32).collect();
    SplitMix64::new(0x9A6E_0004).shuffle(&mut blocks);
    blocks.truncate(B * MAX_BLOCKS);
    blocks
}

/// The golden output `[B, H, D]` in f64 (direct softmax, not the online form the kernels use).
///
/// # Panics
///
/// If a slice is shorter than its shape above (`table` is `[B, MAX_BLOCKS]`, `lens` is `[B]`)
/// or a block id or context length is out of range.
pub fn golden(
    query: &[f32],
    key_cache: &[f32],
    value_cache: &[f32],
    table: &[i32],
    lens: &[i32],
    scale: f32,
) -> Vec<f64> {
    let mut out = vec![0f64; B * H * D];
    let scale = f64::from(scale);
    for b in 0..B {
        let n = lens[b] as usize;
        // Cache row of token t of batch b.
        let row = |t: usize| {
            table[b * MAX_BLOCKS + t / BLOCK_SIZE] as usize * BLOCK_SIZE + t % BLOCK_SIZE
        };
        for h in 0..H {
            let q = &query[(b * H + h) * D..(b * H + h + 1) * D];
            let scores: Vec<f64> = (0..n)
                .map(|t| {
                    let k = &key_cache[row(t) * D..(row(t) + 1) * D];
                    scale
                        * q.iter()
                            .zip(k)
                            .map(|(&x, &y)| f64::from(x) * f64::from(y))
                            .sum::<f64>()
                })
                .collect();
            let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
            let total: f64 = weights.iter().sum();
            let o = &mut out[(b * H + h) * D..(b * H + h + 1) * D];
            for (t, w) in weights.iter().enumerate() {
                let v = &value_cache[row(t) * D..(row(t) + 1) * D];
                for (acc, &x) in o.iter_mut().zip(v) {
                    *acc += w / total * f64::from(x);
                }
            }
        }
    }
    out
}

fn compute_golden_py(scale: f32) -> String {
    format!(
        r#"    """Direct softmax attention over each batch's paged context, in float64."""
    query = np.asarray(tensors["query"], dtype=np.float64)
    key_cache = np.asarray(tensors["key_cache"], dtype=np.float64)
    value_cache = np.asarray(tensors["value_cache"], dtype=np.float64)
    block_table = np.asarray(tensors["block_table"])
    context_lens = np.asarray(tensors["context_lens"])
    scale = tensors.get("scale", ctypes.c_float({scale}))
    scale = float(getattr(scale, "value", scale))
    out = tensors["out"]
    head_dim = query.shape[2]
    block_size = key_cache.shape[1]
    for b in range(query.shape[0]):
        n = int(context_lens[b])
        blocks = block_table[b, : (n + block_size - 1) // block_size]
        k = key_cache[blocks].reshape(-1, head_dim)[:n]
        v = value_cache[blocks].reshape(-1, head_dim)[:n]
        s = scale * (query[b] @ k.T)
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        p = p / p.sum(axis=-1, keepdims=True)
        out[b] = (p @ v).astype(np.float32)
"#,
        scale = float_literal(f64::from(scale))
    )
}

/// The example with its data.
pub fn example() -> Result<Example, Error> {
    let query = SplitMix64::new(0x9A6E_0001).uniform_vec(B * H * D);
    let key_cache = SplitMix64::new(0x9A6E_0002).uniform_vec(NUM_BLOCKS * BLOCK_SIZE * D);
    let value_cache = SplitMix64::new(0x9A6E_0003).uniform_vec(NUM_BLOCKS * BLOCK_SIZE * D);
    let table = block_table();
    let scale = scale();
    let out = golden(
        &query,
        &key_cache,
        &value_cache,
        &table,
        &CONTEXT_LENS,
        scale,
    );
    let blocks: usize = CONTEXT_LENS
        .iter()
        .map(|&n| (n as usize).div_ceil(BLOCK_SIZE))
        .sum();
    use ArgDirection::{In, InOut, Out};
    Ok(Example {
        name: "paged_attention",
        orchestration_source: ORCHESTRATION,
        kernels: vec![
            KernelSource {
                func_id: 0,
                name: "qk_matmul",
                core_type: CoreType::Aic,
                signature: vec![In, In, Out],
                source: QK_MATMUL.to_string(),
                ptoas_unit: None,
            },
            KernelSource {
                func_id: 1,
                name: "softmax_prepare",
                core_type: CoreType::Aiv,
                signature: vec![In, Out, Out, Out],
                source: SOFTMAX_PREPARE.to_string(),
                ptoas_unit: None,
            },
            KernelSource {
                func_id: 2,
                name: "pv_matmul",
                core_type: CoreType::Aic,
                signature: vec![In, In, Out],
                source: PV_MATMUL.to_string(),
                ptoas_unit: None,
            },
            KernelSource {
                func_id: 3,
                name: "online_update",
                core_type: CoreType::Aiv,
                signature: vec![In, In, In, InOut, InOut, InOut, Out],
                source: ONLINE_UPDATE.to_string(),
                ptoas_unit: None,
            },
        ],
        params: vec![
            Param::input("query", f32_array(&[B, H, D], &query)?),
            Param::input(
                "key_cache",
                f32_array(&[NUM_BLOCKS, BLOCK_SIZE, D], &key_cache)?,
            ),
            Param::input(
                "value_cache",
                f32_array(&[NUM_BLOCKS, BLOCK_SIZE, D], &value_cache)?,
            ),
            Param::input("block_table", i32_array(&[B, MAX_BLOCKS], &table)?),
            Param::input("context_lens", i32_array(&[B], &CONTEXT_LENS)?),
            Param::output("out", f32_array_from_f64(&[B, H, D], &out)?),
            Param::scalar("scale", Scalar::F32(scale)),
        ],
        rtol: 1e-3,
        atol: 1e-4,
        compute_golden_py: compute_golden_py(scale),
        expected_tasks: (blocks * 4 + B) as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_table_is_a_non_identity_permutation() {
        let t = block_table();
        assert_eq!(t.len(), B * MAX_BLOCKS);
        let mut sorted = t.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), t.len(), "blocks are distinct");
        assert!(t.iter().all(|&x| (0..NUM_BLOCKS as i32).contains(&x)));
        assert_ne!(t, (0..(B * MAX_BLOCKS) as i32).collect::<Vec<_>>());
    }

    #[test]
    fn golden_of_one_token_is_its_value_row() {
        // With context length 1 the softmax is [1], so out[b, h] = value row of token 0.
        let query = vec![0.5f32; B * H * D];
        let keys = vec![0.25f32; NUM_BLOCKS * BLOCK_SIZE * D];
        let values: Vec<f32> = (0..NUM_BLOCKS * BLOCK_SIZE * D)
            .map(|i| (i % 97) as f32)
            .collect();
        let table = block_table();
        let out = golden(&query, &keys, &values, &table, &[1; B], 1.0);
        for b in 0..B {
            let row = table[b * MAX_BLOCKS] as usize * BLOCK_SIZE;
            for h in 0..H {
                for d in 0..D {
                    assert_eq!(out[(b * H + h) * D + d], f64::from(values[row * D + d]));
                }
            }
        }
    }
}
