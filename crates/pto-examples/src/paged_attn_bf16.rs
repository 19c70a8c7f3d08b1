//! `paged_attn_bf16`: decode attention over a paged bf16 KV cache with PTO-ISA kernels in
//! PyPTO's shape (each kernel's `ptoas/<name>.pto` translated by our ptoas inside PyPTO's
//! kernel wrapper), at the small sizes PyPTO's simulator tests use.
//!
//! ```text
//! out[b*H + h] = softmax(scale * q[b*H + h] @ K_b^T) @ V_b      (online softmax over KV blocks)
//! K_b / V_b = rows of key_cache / value_cache blocks block_table[b*MAX_BLOCKS + j], first context_lens[b]
//! ```
//!
//! Parameters, in order: `query [B*H, D]` (bf16), `key_cache [NUM_BLOCKS*BS, D]` (bf16),
//! `value_cache [NUM_BLOCKS*BS, D]` (bf16), `block_table [B*MAX_BLOCKS]` (int32),
//! `context_lens [B]` (int32), `out [B*H, D]` (fp32, Out) and the scalar `scale` (fp32). The
//! four kernels are those of PyPTO's paged-attention example:
//!
//! | kernel | core | what it does |
//! |---|---|---|
//! | `qk_matmul` | AIC | `sij = qi @ kj^T`: ND -> Nz load of q, DN -> Zn load of k (k transposed), `TMOV` to Left / Right, `TMATMUL`, Acc -> fp32 store |
//! | `softmax_prepare` | AIV | `TLOAD` with `valid_len` valid columns, `TFILLPAD` (`PadValue::Min`), `TMULS` by scale, `TROWMAX`, `TROWEXPANDSUB`, `TEXP`, `TCVT` f32 -> bf16 (ties away) -> f32, `TROWSUM`; stores pij (bf16) and mij / lij through `[16,1]` DN views |
//! | `pv_matmul` | AIC | `oi_new = pij @ vj` with K split in two `TEXTRACT` halves, `TMATMUL` + `TMATMUL_ACC` |
//! | `online_update` | AIV | `TMAX`, `TSUB`, `TEXP`, `TMUL`, `TADD` on `[1,16]` tiles aliasing the `[16,1]` ones (one UB address), `TROWEXPANDMUL`, `TROWEXPANDDIV`; `is_first` / `is_last` branches |
//!
//! The golden is computed here in `f32` with every rounding the kernels do, in their order:
//! fused multiply-adds in k order for the matmuls (the second K half added to the first),
//! `-inf` beyond `valid_len`, the scale, the row max, `exp` of the difference, pij rounded to
//! bf16 (nearest, ties away from zero: `RoundMode::CAST_ROUND`), the row sum left to right,
//! and the online update with separately rounded products and sums. `golden.py` does the
//! same in NumPy float32 (bf16 emulated on the `uint32` view of float32).

use std::sync::Arc;

use half::bf16;
use pto_build_output::dtype::DType;
use pto_build_output::kernel_config::{ArgDirection, CoreType};
use pto_build_output::npy::NpyArray;

use crate::example::{f32_array, i32_array, Example, KernelSource, Param, Scalar};
use crate::ptoas_unit::PtoasUnit;
use crate::rng::SplitMix64;
use crate::Error;
use pto_base::pyrepr::float_literal;

/// Batch size.
pub const B: usize = 3;
/// Query heads per batch (one 16-row q tile).
pub const H: usize = 16;
/// Head dimension.
pub const D: usize = 128;
/// Tokens per cache block.
pub const BS: usize = 128;
/// Block-table entries per batch (at most 512 tokens of context).
pub const MAX_BLOCKS: usize = 4;
/// Blocks in the KV cache pool.
pub const NUM_BLOCKS: usize = 12;
/// Context length of each batch: two full blocks and one token; one partial block (first and
/// last at once); three full blocks.
pub const CONTEXT_LENS: [i32; B] = [257, 100, 384];

const ORCHESTRATION: &str =
    include_str!("../../../examples/paged_attn_bf16/orchestration/paged_attn_bf16.cpp");

/// The kernels. Each body is the translation of the kernel's `ptoas/<name>.pto`; the wrapper
/// is the kernel file outside the sentinels.
fn kernels() -> Result<Vec<KernelSource>, Error> {
    use ArgDirection::{In, InOut, Out};
    let kernel = |func_id, name, core, signature, pto, wrapper: &str| {
        let unit = Arc::new(PtoasUnit::new(name, pto)?);
        KernelSource::from_ptoas(func_id, name, core, signature, &unit, wrapper)
    };
    Ok(vec![
        kernel(
            0,
            "qk_matmul",
            CoreType::Aic,
            vec![In, In, Out],
            include_str!("../../../examples/paged_attn_bf16/ptoas/qk_matmul.pto"),
            include_str!("../../../examples/paged_attn_bf16/kernels/aic/qk_matmul.cpp"),
        )?,
        kernel(
            1,
            "softmax_prepare",
            CoreType::Aiv,
            vec![In, Out, Out, Out],
            include_str!("../../../examples/paged_attn_bf16/ptoas/softmax_prepare.pto"),
            include_str!("../../../examples/paged_attn_bf16/kernels/aiv/softmax_prepare.cpp"),
        )?,
        kernel(
            2,
            "pv_matmul",
            CoreType::Aic,
            vec![In, In, Out],
            include_str!("../../../examples/paged_attn_bf16/ptoas/pv_matmul.pto"),
            include_str!("../../../examples/paged_attn_bf16/kernels/aic/pv_matmul.cpp"),
        )?,
        kernel(
            3,
            "online_update",
            CoreType::Aiv,
            vec![In, In, In, InOut, InOut, InOut, Out],
            include_str!("../../../examples/paged_attn_bf16/ptoas/online_update.pto"),
            include_str!("../../../examples/paged_attn_bf16/kernels/aiv/online_update.cpp"),
        )?,
    ])
}

/// The attention scale `1/sqrt(D)` as the fp32 scalar the orchestration receives.
pub fn scale() -> f32 {
    1.0 / (D as f32).sqrt()
}

/// `x` rounded to bf16 the way `TCVT(..., RoundMode::CAST_ROUND)` rounds (nearest, ties away
/// from zero), returned as the f32 it converts back to exactly.
pub fn bf16_round_away(x: f32) -> f32 {
    f32::from_bits(x.to_bits().wrapping_add(0x8000) & 0xFFFF_0000)
}

/// The block table: the cache blocks in a fixed pseudo-random order, `[B * MAX_BLOCKS]`.
pub fn block_table() -> Vec<i32> {
    let mut blocks: Vec<i32> = (0..NUM_BLOCKS as i32).collect();
    SplitMix64::new(0xB16A_0004).shuffle(&mut blocks);
    blocks.truncate(B * MAX_BLOCKS);
    blocks
}

/// `n` values uniform in `[-amplitude, amplitude)`, rounded to bf16 (nearest even).
fn bf16_values(seed: u64, n: usize, amplitude: f32) -> Vec<bf16> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| bf16::from_f32(rng.uniform_f32() * amplitude))
        .collect()
}

/// A bf16 array of `shape`.
fn bf16_array(shape: &[usize], values: &[bf16]) -> Result<NpyArray, Error> {
    let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Ok(NpyArray::new(DType::BFloat16, shape.to_vec(), data)?)
}

/// Which step of the computation to get wrong, for the tests that show the tolerances catch a
/// wrong kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Variant {
    /// The kernels' computation.
    Exact,
    /// Pad the columns beyond `valid_len` with zero instead of `-inf`.
    ZeroPad,
    /// Ignore `valid_len` (treat every block as full).
    NoMask,
    /// Forget the scale.
    NoScale,
    /// Sum the unrounded `exp` values into `lij` (no f32 -> bf16 -> f32 round trip).
    UnroundedRowSum,
    /// Keep only the last block's contribution (no online rescaling of `oi`).
    NoRescale,
}

/// The golden `out [B*H, D]` of row-major bf16 `query [B*H, D]`, `key` / `value`
/// `[NUM_BLOCKS*BS, D]`, `table [B*MAX_BLOCKS]` and `lens [B]`, computed as the kernels do
/// (see the module documentation); `variant` introduces one mistake.
///
/// # Panics
///
/// If a slice is shorter than its shape or a block id or context length is out of range.
pub fn golden(
    query: &[bf16],
    key: &[bf16],
    value: &[bf16],
    table: &[i32],
    lens: &[i32],
    scale: f32,
    variant: Variant,
) -> Vec<f32> {
    let q: Vec<f32> = query.iter().map(|v| v.to_f32()).collect();
    let k: Vec<f32> = key.iter().map(|v| v.to_f32()).collect();
    let v: Vec<f32> = value.iter().map(|v| v.to_f32()).collect();
    let mut out = vec![0f32; B * H * D];
    for b in 0..B {
        let n = lens[b] as usize;
        let blocks = n.div_ceil(BS);
        let mut mi = [0f32; H];
        let mut li = [0f32; H];
        let mut oi = vec![0f32; H * D];
        for j in 0..blocks {
            let blk = table[b * MAX_BLOCKS + j] as usize;
            let valid = if variant == Variant::NoMask {
                BS
            } else {
                (n - j * BS).min(BS)
            };
            let kv_row = |t: usize| (blk * BS + t) * D;
            let mut pij = vec![0f32; H * BS];
            let mut mij = [0f32; H];
            let mut lij = [0f32; H];
            for h in 0..H {
                let qr = &q[(b * H + h) * D..(b * H + h + 1) * D];
                // qk_matmul: one fma chain over the head dimension.
                let mut s = [0f32; BS];
                for (t, st) in s.iter_mut().enumerate() {
                    let kr = &k[kv_row(t)..kv_row(t) + D];
                    *st = qr
                        .iter()
                        .zip(kr)
                        .fold(0f32, |acc, (&x, &y)| x.mul_add(y, acc));
                }
                // softmax_prepare.
                let pad = if variant == Variant::ZeroPad {
                    0.0
                } else {
                    f32::NEG_INFINITY
                };
                let factor = if variant == Variant::NoScale {
                    1.0
                } else {
                    scale
                };
                let x: Vec<f32> = (0..BS)
                    .map(|t| if t < valid { s[t] } else { pad } * factor)
                    .collect();
                let m = x[1..]
                    .iter()
                    .fold(x[0], |acc, &y| if y > acc { y } else { acc });
                let p = &mut pij[h * BS..(h + 1) * BS];
                let mut sum_input = [0f32; BS];
                for t in 0..BS {
                    let e = (x[t] - m).exp();
                    p[t] = bf16_round_away(e);
                    sum_input[t] = if variant == Variant::UnroundedRowSum {
                        e
                    } else {
                        p[t]
                    };
                }
                mij[h] = m;
                lij[h] = sum_input[1..].iter().fold(sum_input[0], |acc, &y| acc + y);
            }
            // pv_matmul: two fma chains over the K halves, the second added to the first.
            let mut oi_new = vec![0f32; H * D];
            for h in 0..H {
                let p = &pij[h * BS..(h + 1) * BS];
                for d in 0..D {
                    let chain = |range: std::ops::Range<usize>| {
                        range.fold(0f32, |acc, t| p[t].mul_add(v[kv_row(t) + d], acc))
                    };
                    let first = chain(0..BS / 2);
                    oi_new[h * D + d] = first + chain(BS / 2..BS);
                }
            }
            // online_update.
            if j == 0 || variant == Variant::NoRescale {
                mi = mij;
                li = lij;
                oi.copy_from_slice(&oi_new);
            } else {
                for h in 0..H {
                    let m_new = if mi[h] > mij[h] { mi[h] } else { mij[h] };
                    let alpha = (mi[h] - m_new).exp();
                    let beta = (mij[h] - m_new).exp();
                    li[h] = alpha * li[h] + beta * lij[h];
                    for d in 0..D {
                        oi[h * D + d] = oi[h * D + d] * alpha + oi_new[h * D + d] * beta;
                    }
                    mi[h] = m_new;
                }
            }
        }
        for h in 0..H {
            for d in 0..D {
                out[(b * H + h) * D + d] = oi[h * D + d] / li[h];
            }
        }
    }
    out
}

fn compute_golden_py(scale: f32) -> String {
    format!(
        r#"    """Online-softmax paged attention in float32, rounding as the kernels do.

    bf16 tensors arrive as 2-byte records (np.load of a |V2 file), ml_dtypes.bfloat16 or uint16
    bits; pij is rounded to bf16 as TCVT with RoundMode::CAST_ROUND does (nearest, ties away
    from zero), emulated on the uint32 view of float32.
    """

    def as_f32(a):
        bits = np.ascontiguousarray(a).view(np.uint16).astype(np.uint32) << np.uint32(16)
        return bits.view(np.float32)

    def bf16_round(x):
        bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
        return ((bits + np.uint32(0x8000)) & np.uint32(0xFFFF0000)).view(np.float32)

    query = as_f32(tensors["query"])
    key_cache = as_f32(tensors["key_cache"])
    value_cache = as_f32(tensors["value_cache"])
    block_table = np.asarray(tensors["block_table"])
    context_lens = np.asarray(tensors["context_lens"])
    scale = tensors.get("scale", ctypes.c_float({scale}))
    scale = np.float32(getattr(scale, "value", scale))
    out = tensors["out"]
    q_tile, block_size = 16, 128
    batch = context_lens.shape[0]
    num_heads = query.shape[0] // batch
    max_blocks = block_table.shape[0] // batch
    for b in range(batch):
        n = int(context_lens[b])
        for q0 in range(0, num_heads, q_tile):
            rows = slice(b * num_heads + q0, b * num_heads + q0 + q_tile)
            qi = query[rows]
            for bn in range((n + block_size - 1) // block_size):
                blk = int(block_table[b * max_blocks + bn])
                kv = slice(blk * block_size, (blk + 1) * block_size)
                valid = min(block_size, n - bn * block_size)
                sij = qi @ key_cache[kv].T
                sij[:, valid:] = -np.inf
                s = sij * scale
                mij = s.max(axis=1, keepdims=True)
                pij = bf16_round(np.exp(s - mij))
                lij = pij.sum(axis=1, keepdims=True, dtype=np.float32)
                oi_new = pij @ value_cache[kv]
                if bn == 0:
                    mi, li, oi = mij, lij, oi_new
                else:
                    mi_new = np.maximum(mi, mij)
                    alpha = np.exp(mi - mi_new)
                    beta = np.exp(mij - mi_new)
                    li = alpha * li + beta * lij
                    oi = oi * alpha + oi_new * beta
                    mi = mi_new
            out[rows] = oi / li
"#,
        scale = float_literal(f64::from(scale))
    )
}

/// The example with its data.
pub fn example() -> Result<Example, Error> {
    let query = bf16_values(0xB16A_0001, B * H * D, 2.0);
    let key = bf16_values(0xB16A_0002, NUM_BLOCKS * BS * D, 1.0);
    let value = bf16_values(0xB16A_0003, NUM_BLOCKS * BS * D, 1.0);
    let table = block_table();
    let scale = scale();
    let out = golden(
        &query,
        &key,
        &value,
        &table,
        &CONTEXT_LENS,
        scale,
        Variant::Exact,
    );
    let blocks: usize = CONTEXT_LENS
        .iter()
        .map(|&n| (n as usize).div_ceil(BS))
        .sum();
    Ok(Example {
        name: "paged_attn_bf16",
        orchestration_source: ORCHESTRATION,
        kernels: kernels()?,
        params: vec![
            Param::input("query", bf16_array(&[B * H, D], &query)?),
            Param::input("key_cache", bf16_array(&[NUM_BLOCKS * BS, D], &key)?),
            Param::input("value_cache", bf16_array(&[NUM_BLOCKS * BS, D], &value)?),
            Param::input("block_table", i32_array(&[B * MAX_BLOCKS], &table)?),
            Param::input("context_lens", i32_array(&[B], &CONTEXT_LENS)?),
            Param::output("out", f32_array(&[B * H, D], &out)?),
            Param::scalar("scale", Scalar::F32(scale)),
        ],
        rtol: RTOL,
        atol: ATOL,
        compute_golden_py: compute_golden_py(scale),
        expected_tasks: (blocks * 4 + B) as u64,
    })
}

/// Relative tolerance of the comparison.
pub const RTOL: f64 = 1e-4;
/// Absolute tolerance of the comparison.
pub const ATOL: f64 = 1e-5;

#[cfg(test)]
mod tests {
    use super::*;

    /// Elements of `got` outside `|got - want| <= ATOL + RTOL * |want|`.
    fn mismatches(got: &[f32], want: &[f32]) -> usize {
        got.iter()
            .zip(want)
            .filter(|(&g, &w)| {
                let (g, w) = (f64::from(g), f64::from(w));
                (g - w).is_nan() || (g - w).abs() > ATOL + RTOL * w.abs()
            })
            .count()
    }

    fn inputs() -> (Vec<bf16>, Vec<bf16>, Vec<bf16>, Vec<i32>) {
        (
            bf16_values(0xB16A_0001, B * H * D, 2.0),
            bf16_values(0xB16A_0002, NUM_BLOCKS * BS * D, 1.0),
            bf16_values(0xB16A_0003, NUM_BLOCKS * BS * D, 1.0),
            block_table(),
        )
    }

    #[test]
    fn rounding_ties_away_from_zero() {
        // 1 + 2^-8 is halfway between two bf16 values: ties away rounds up, nearest even down.
        let tie = 1.0 + 2f32.powi(-8);
        assert_eq!(bf16_round_away(tie), 1.0 + 2f32.powi(-7));
        assert_eq!(bf16::from_f32(tie).to_f32(), 1.0);
        assert_eq!(bf16_round_away(-tie), -(1.0 + 2f32.powi(-7)));
        assert_eq!(bf16_round_away(0.5), 0.5);
        assert_eq!(bf16_round_away(1.0 + 2f32.powi(-9)), 1.0);
    }

    #[test]
    fn block_table_is_a_permutation_of_the_pool() {
        let mut t = block_table();
        assert_ne!(t, (0..NUM_BLOCKS as i32).collect::<Vec<_>>());
        t.sort_unstable();
        assert_eq!(t, (0..NUM_BLOCKS as i32).collect::<Vec<_>>());
    }

    #[test]
    fn golden_of_one_token_is_its_value_row() {
        // One valid token: the softmax is [1] (pij = 1 is exact in bf16), out = its value row.
        let (q, k, v, table) = inputs();
        let out = golden(&q, &k, &v, &table, &[1; B], scale(), Variant::Exact);
        for b in 0..B {
            let row = table[b * MAX_BLOCKS] as usize * BS;
            for h in 0..H {
                for d in 0..D {
                    assert_eq!(out[(b * H + h) * D + d], v[row * D + d].to_f32());
                }
            }
        }
    }

    #[test]
    fn every_variant_of_the_computation_fails_the_tolerances() {
        let (q, k, v, table) = inputs();
        let exact = golden(&q, &k, &v, &table, &CONTEXT_LENS, scale(), Variant::Exact);
        for variant in [
            Variant::ZeroPad,
            Variant::NoMask,
            Variant::NoScale,
            Variant::UnroundedRowSum,
            Variant::NoRescale,
        ] {
            let wrong = golden(&q, &k, &v, &table, &CONTEXT_LENS, scale(), variant);
            let bad = mismatches(&wrong, &exact);
            eprintln!(
                "{variant:?}: {bad} of {} elements outside the tolerances",
                exact.len()
            );
            assert!(bad > 0, "{variant:?} passes the tolerances");
        }
    }
}
