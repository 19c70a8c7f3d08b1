//! Row and column reductions into [R,1] / [1,C] vectors (and the aliasing [1,R] form), and
//! the row / column broadcasts, over a ragged (dynamic) valid region.

use pto_isa::reference::{bf16_rne, bf16_value};
use pto_isa::wrapper;

use crate::common::{assert_bits, assert_close, build, one_task, run, values, Buf, Dt, Kernel};

const BODY: &str = r#"
using TF = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>;
using TB = Tile<TileType::Vec, bfloat16_t, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>;
using Col = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, 1, SLayout::NoneBox, 512, PadValue::Null>;
using ColB = Tile<TileType::Vec, bfloat16_t, 16, 1, BLayout::ColMajor, 16, 1, SLayout::NoneBox, 512, PadValue::Null>;
using RowR = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, 1, 16, SLayout::NoneBox, 512, PadValue::Null>;
using Row = Tile<TileType::Vec, float, 1, 64, BLayout::RowMajor, 1, -1, SLayout::NoneBox, 512, PadValue::Null>;
using Mode2 = Tile<TileType::Vec, float, 16, 8, BLayout::RowMajor, 16, 8, SLayout::NoneBox, 512, PadValue::Null>;
template <typename T, int R, int C> using G = GlobalTensor<T, pto::Shape<1, 1, 1, R, C>, pto::Stride<R * C, R * C, R * C, C, 1>>;

static __aicore__ void reduce(__gm__ float* x, __gm__ bfloat16_t* xb, __gm__ float* vec_out, __gm__ bfloat16_t* vecb_out,
                              __gm__ float* expand_out, int64_t vr, int64_t vc) {
#if defined(__DAV_VEC__)
    set_mask_norm();
    set_vector_mask(-1, -1);
    TF t(vr, vc); TASSIGN(t, 0x0);
    pto::Shape<1, 1, 1, -1, -1> shape(1, 1, 1, vr, vc);
    pto::Stride<1024, 1024, 1024, 64, 1> stride;
    GlobalTensor<float, pto::Shape<1, 1, 1, -1, -1>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND> gx(x, shape, stride);
    TLOAD(t, gx);
    TF tmp(vr, vc); TASSIGN(tmp, 0x1000);
    Col col(vr); TASSIGN(col, 0x2000);
    Row row(vc); TASSIGN(row, 0x2100);
    RowR alias; TASSIGN(alias, 0x2200);
    int k = 0;
    auto store_col = [&]() { G<float, 1, 16> g(vec_out + 64 * k++); RowR view; TRESHAPE(view, col); TSTORE(g, view); };
    auto store_row = [&]() { G<float, 1, 64> g(vec_out + 64 * k++); Tile<TileType::Vec, float, 1, 64> full; TRESHAPE(full, row); TSTORE(g, full); };
    TROWSUM(col, t, tmp); store_col();
    TROWMAX(col, t, tmp); store_col();
    TROWMIN(col, t, tmp); store_col();
    TROWPROD(col, t, tmp); store_col();
    TCOLSUM(row, t); store_row();
    TCOLMAX(row, t); store_row();
    TCOLMIN(row, t); store_row();
    TCOLSUM(row, t, tmp, true); store_row();
    TCOLPROD(row, t); store_row();
    TROWMAX(alias, t, tmp);   // a [1,16] destination receives (0, i)
    { G<float, 1, 16> g(vec_out + 64 * k++); TSTORE(g, alias); }

    TB tb(16, 64); TASSIGN(tb, 0x3000);
    G<bfloat16_t, 16, 64> gxb(xb);
    TLOAD(tb, gxb);
    ColB cb; TASSIGN(cb, 0x3800);
    TB tmpb(16, 64); TASSIGN(tmpb, 0x4000);
    TROWSUM(cb, tb, tmpb);
    GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN> gcb(vecb_out);
    TSTORE(gcb, cb);

    // Broadcasts of the row sums / column maxima over the valid region.
    TROWSUM(col, t, tmp);
    TCOLMAX(row, t);
    TF e(vr, vc); TASSIGN(e, 0x5000);
    int j = 0;
    auto store_e = [&]() { GlobalTensor<float, pto::Shape<1, 1, 1, -1, -1>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND> g(expand_out + 1024 * j++, shape, stride); TSTORE(g, e); };
    TROWEXPAND(e, col); store_e();
    TROWEXPANDADD(e, t, col); store_e();
    TROWEXPANDSUB(e, t, col); store_e();
    TROWEXPANDMUL(e, t, col); store_e();
    TROWEXPANDDIV(e, t, col); store_e();
    TROWEXPANDMAX(e, t, col); store_e();
    TROWEXPANDMIN(e, t, col, tmp); store_e();
    TROWEXPANDEXPDIF(e, t, col); store_e();
    TCOLEXPAND(e, row); store_e();
    TCOLEXPANDADD(e, t, row); store_e();
    TCOLEXPANDSUB(e, t, row); store_e();
    TCOLEXPANDMUL(e, t, row); store_e();
    TCOLEXPANDDIV(e, t, row); store_e();
    TCOLEXPANDMAX(e, t, row); store_e();
    TCOLEXPANDMIN(e, t, row); store_e();
    TCOLEXPANDEXPDIF(e, t, row); store_e();
    // PTO-ISA's mode 2: a [16, 8] operand repeating the per-row value in a 32-byte block.
    Mode2 m2; TASSIGN(m2, 0x6000);
    TROWEXPAND(m2, col);
    TROWEXPANDMUL(e, t, m2); store_e();
#endif
    ptoas_auto_sync_tail();
}
"#;

fn source() -> String {
    let names = [
        ("float", "x"),
        ("bfloat16_t", "xb"),
        ("float", "vec_out"),
        ("bfloat16_t", "vecb_out"),
        ("float", "expand_out"),
    ];
    let mut unpack: String = names
        .iter()
        .enumerate()
        .map(|(i, (t, n))| wrapper::tensor_arg(i, t, n))
        .collect();
    unpack += &wrapper::scalar_arg(5, "int64_t", "vr");
    unpack += &wrapper::scalar_arg(6, "int64_t", "vc");
    wrapper::kernel(
        BODY,
        &wrapper::entry(
            &unpack,
            "reduce(x, xb, vec_out, vecb_out, expand_out, vr, vc)",
        ),
    )
}

#[test]
fn reductions_and_broadcasts_over_a_ragged_region() {
    let (vr, vc) = (13usize, 45usize);
    let program = build(
        "reduce",
        &one_task(5, 2, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(0, "reduce", source())],
    );
    let x = values(16 * 64, 31, 1.5);
    let xb: Vec<u16> = values(16 * 64, 32, 2.0)
        .iter()
        .map(|v| bf16_rne(*v))
        .collect();
    let mut bufs = vec![
        Buf::f32(&[16, 64], &x),
        Buf::u16(Dt::Bf16, &[16, 64], &xb),
        Buf::zeros(Dt::F32, &[10, 64]),
        Buf::zeros(Dt::Bf16, &[16]),
        Buf::zeros(Dt::F32, &[17, 16, 64]),
    ];
    run(&program, &mut bufs, &[vr as u64, vc as u64]);
    let at = |r: usize, c: usize| x[r * 64 + c];
    let fold = |init: fn(f32) -> f32, f: fn(f32, f32) -> f32, row: bool, i: usize| -> f32 {
        let n = if row { vc } else { vr };
        let get = |j: usize| if row { at(i, j) } else { at(j, i) };
        (1..n).fold(init(get(0)), |acc, j| f(acc, get(j)))
    };
    let id = |v: f32| v;
    let (sum, max, min, prod): (fn(f32, f32) -> f32, _, _, _) = (
        |a, b| a + b,
        |a: f32, b: f32| if b > a { b } else { a },
        |a: f32, b: f32| if b < a { b } else { a },
        |a, b| a * b,
    );
    let vec_out = bufs[2].as_f32();
    let row_red = |k: usize, f| -> (Vec<f32>, Vec<f32>) {
        (
            vec_out[64 * k..64 * k + vr].to_vec(),
            (0..vr).map(|i| fold(id, f, true, i)).collect(),
        )
    };
    let col_red = |k: usize, f| -> (Vec<f32>, Vec<f32>) {
        (
            vec_out[64 * k..64 * k + vc].to_vec(),
            (0..vc).map(|j| fold(id, f, false, j)).collect(),
        )
    };
    for (k, name, f) in [
        (0, "TROWSUM", sum),
        (1, "TROWMAX", max),
        (2, "TROWMIN", min),
        (3, "TROWPROD", prod),
    ] {
        let (got, want) = row_red(k, f);
        assert_bits(name, &got, &want);
    }
    for (k, name, f) in [
        (4, "TCOLSUM", sum),
        (5, "TCOLMAX", max),
        (6, "TCOLMIN", min),
        (7, "TCOLSUM(tmp)", sum),
        (8, "TCOLPROD", prod),
    ] {
        let (got, want) = col_red(k, f);
        assert_bits(name, &got, &want);
    }
    let (got, want) = row_red(9, max);
    assert_bits("TROWMAX into [1,16]", &got, &want);
    let vb = bufs[3].as_u16();
    for (i, g) in vb.iter().enumerate() {
        let s = (0..64).fold(0f32, |acc, j| acc + bf16_value(xb[i * 64 + j]));
        assert_eq!(*g, bf16_rne(s), "bf16 TROWSUM row {i}");
    }

    let rs: Vec<f32> = (0..vr).map(|i| fold(id, sum, true, i)).collect();
    let cm: Vec<f32> = (0..vc).map(|j| fold(id, max, false, j)).collect();
    type Op = fn(f32, f32) -> f32;
    let ops: [(&str, bool, Op); 17] = [
        ("TROWEXPAND", true, |_, v| v),
        ("TROWEXPANDADD", true, |a, v| a + v),
        ("TROWEXPANDSUB", true, |a, v| a - v),
        ("TROWEXPANDMUL", true, |a, v| a * v),
        ("TROWEXPANDDIV", true, |a, v| a / v),
        ("TROWEXPANDMAX", true, |a, v| if a > v { a } else { v }),
        ("TROWEXPANDMIN", true, |a, v| if a < v { a } else { v }),
        ("TROWEXPANDEXPDIF", true, |a, v| (a - v).exp()),
        ("TCOLEXPAND", false, |_, v| v),
        ("TCOLEXPANDADD", false, |a, v| a + v),
        ("TCOLEXPANDSUB", false, |a, v| a - v),
        ("TCOLEXPANDMUL", false, |a, v| a * v),
        ("TCOLEXPANDDIV", false, |a, v| a / v),
        ("TCOLEXPANDMAX", false, |a, v| if a > v { a } else { v }),
        ("TCOLEXPANDMIN", false, |a, v| if a < v { a } else { v }),
        ("TCOLEXPANDEXPDIF", false, |a, v| (a - v).exp()),
        ("TROWEXPANDMUL (mode 2)", true, |a, v| a * v),
    ];
    let out = bufs[4].as_f32();
    for (k, (name, by_row, f)) in ops.iter().enumerate() {
        let mut got = Vec::new();
        let mut want = Vec::new();
        for r in 0..vr {
            for c in 0..vc {
                got.push(out[k * 1024 + r * 64 + c]);
                want.push(f(at(r, c), if *by_row { rs[r] } else { cm[c] }));
            }
        }
        if name.contains("EXPDIF") {
            assert_close(name, &got, &want, 2e-6, 1e-30);
        } else {
            assert_bits(name, &got, &want);
        }
        for r in 0..16 {
            for c in 0..64 {
                if r >= vr || c >= vc {
                    assert_eq!(
                        out[k * 1024 + r * 64 + c],
                        0.0,
                        "{name}: ({r}, {c}) outside the valid region"
                    );
                }
            }
        }
    }
}
