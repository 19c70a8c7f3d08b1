//! Element-wise instructions (tile-tile, tile-scalar, unary, fill) on f32, i32, bf16 and f16
//! tiles against scalar references, including a partial (dynamic) valid region.

use pto_isa::reference::{bf16_rne, bf16_value, f16_rne, f16_value};
use pto_isa::wrapper;

use crate::common::{assert_bits, build, one_task, run, values, Buf, Dt, Kernel};

const N: usize = 16 * 64;

type F2 = fn(f32, f32) -> f32;
type I2 = fn(i32, i32) -> i32;
type F3 = fn(f32, f32, f32) -> f32;

/// f32 instructions: (C++ statement computing `r` from `x`, `y` and scalar `s`, reference).
fn f32_ops() -> Vec<(&'static str, F2)> {
    vec![
        ("TADD(r, x, y)", |a, b| a + b),
        ("TSUB(r, x, y)", |a, b| a - b),
        ("TMUL(r, x, y)", |a, b| a * b),
        ("TDIV(r, x, y)", |a, b| a / b),
        ("TMAX(r, x, y)", |a, b| if a > b { a } else { b }),
        ("TMIN(r, x, y)", |a, b| if a < b { a } else { b }),
        ("TADDS(r, x, s)", |a, _| a + 0.75),
        ("TSUBS(r, x, s)", |a, _| a - 0.75),
        ("TMULS(r, x, s)", |a, _| a * 0.75),
        ("TDIVS(r, x, s)", |a, _| a / 0.75),
        ("TDIVS(r, s, x)", |a, _| 0.75 / a),
        ("TMAXS(r, x, s)", |a, _| if a > 0.75 { a } else { 0.75 }),
        ("TMINS(r, x, s)", |a, _| if a < 0.75 { a } else { 0.75 }),
        ("TEXP(r, x)", |a, _| a.exp()),
        ("TABS(r, x); TLOG(r, r)", |a, _| a.abs().ln()),
        ("TABS(r, x); TSQRT(r, r)", |a, _| a.abs().sqrt()),
        ("TABS(r, x); TRSQRT(r, r)", |a, _| 1.0 / a.abs().sqrt()),
        ("TRECIP(r, x)", |a, _| 1.0 / a),
        ("TABS(r, x)", |a, _| a.abs()),
        ("TNEG(r, x)", |a, _| -a),
        ("TRELU(r, x)", |a, _| if a > 0.0 { a } else { 0.0 }),
        ("TLRELU(r, x, s)", |a, _| if a > 0.0 { a } else { a * 0.75 }),
        ("TEXPANDS(r, s)", |_, _| 0.75),
        ("TMOV(r, x); TADD(r, r, r)", |a, _| a + a),
    ]
}

/// i32 instructions.
fn i32_ops() -> Vec<(&'static str, I2)> {
    vec![
        ("TADD(ri, xi, yi)", |a, b| a.wrapping_add(b)),
        ("TSUB(ri, xi, yi)", |a, b| a.wrapping_sub(b)),
        ("TMUL(ri, xi, yi)", |a, b| a.wrapping_mul(b)),
        ("TDIV(ri, xi, yi)", |a, b| {
            if b == 0 {
                0
            } else {
                a.wrapping_div(b)
            }
        }),
        ("TMAX(ri, xi, yi)", |a, b| a.max(b)),
        ("TMIN(ri, xi, yi)", |a, b| a.min(b)),
        ("TAND(ri, xi, yi)", |a, b| a & b),
        ("TOR(ri, xi, yi)", |a, b| a | b),
        ("TXOR(ri, xi, yi, ri)", |a, b| a ^ b),
        ("TSHL(ri, xi, yi)", |a, b| {
            if (b as u32) >= 32 {
                0
            } else {
                ((a as u32) << b) as i32
            }
        }),
        ("TSHR(ri, xi, yi)", |a, b| {
            if (b as u32) >= 32 {
                if a < 0 {
                    -1
                } else {
                    0
                }
            } else {
                a >> b
            }
        }),
        ("TANDS(ri, xi, 0x0ff0)", |a, _| a & 0x0ff0),
        ("TORS(ri, xi, 5)", |a, _| a | 5),
        ("TXORS(ri, xi, 0x55, ri)", |a, _| a ^ 0x55),
        ("TSHLS(ri, xi, 3)", |a, _| ((a as u32) << 3) as i32),
        ("TSHRS(ri, xi, 3)", |a, _| a >> 3),
        ("TNOT(ri, xi)", |a, _| !a),
        ("TABS(ri, xi)", |a, _| a.wrapping_abs()),
        ("TNEG(ri, xi)", |a, _| a.wrapping_neg()),
        ("TDIVS(ri, xi, 7)", |a, _| a / 7),
    ]
}

/// 16-bit float instructions; `@r`, `@x`, `@y` become the bf16 (`rb`, ...) or f16 (`rh`, ...)
/// tiles. The reference gets the scalar 0.3 rounded to the element type (the scalar argument
/// has the tile's element type).
fn f16_ops() -> Vec<(&'static str, F3)> {
    vec![
        ("TADD(@r, @x, @y)", |a, b, _| a + b),
        ("TMUL(@r, @x, @y)", |a, b, _| a * b),
        ("TMULS(@r, @x, 0.3f)", |a, _, s| a * s),
        ("TEXP(@r, @x)", |a, _, _| a.exp()),
        ("TSUB(@r, @x, @y); TMAX(@r, @r, @x)", |a, b, _| {
            let d = a - b;
            if d > a {
                d
            } else {
                a
            }
        }),
    ]
}

fn kernel_source() -> String {
    let mut calls = String::new();
    for (k, (stmt, _)) in f32_ops().iter().enumerate() {
        calls += &format!("    {stmt}; STORE_F({k});\n");
    }
    for (k, (stmt, _)) in i32_ops().iter().enumerate() {
        calls += &format!("    {stmt}; STORE_I({k});\n");
    }
    for (k, (stmt, _)) in f16_ops().iter().enumerate() {
        let b = stmt
            .replace("@r", "rb")
            .replace("@x", "xb")
            .replace("@y", "yb");
        let h = stmt
            .replace("@r", "rh")
            .replace("@x", "xh")
            .replace("@y", "yh");
        calls += &format!("    {b}; STORE_B({k});\n    {h}; STORE_H({k});\n");
    }
    let body = format!(
        r#"
using TF = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>;
using TI = Tile<TileType::Vec, int32_t, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null>;
using TB = Tile<TileType::Vec, bfloat16_t, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null>;
using TH = Tile<TileType::Vec, half, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null>;
using TFDyn = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>;
template <typename T> using G = GlobalTensor<T, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND>;
#define STORE_F(k) {{ G<float> g_(outf + (k) * 1024); TSTORE(g_, r); }}
#define STORE_I(k) {{ G<int32_t> g_(outi + (k) * 1024); TSTORE(g_, ri); }}
#define STORE_B(k) {{ G<bfloat16_t> g_(outb + (k) * 1024); TSTORE(g_, rb); }}
#define STORE_H(k) {{ G<half> g_(outh + (k) * 1024); TSTORE(g_, rh); }}

static __aicore__ void elementwise(__gm__ float* a, __gm__ float* b, __gm__ int32_t* ia, __gm__ int32_t* ib,
                                   __gm__ bfloat16_t* ab, __gm__ half* ah, __gm__ float* outf, __gm__ int32_t* outi,
                                   __gm__ bfloat16_t* outb, __gm__ half* outh, __gm__ float* partial, float s) {{
#if defined(__DAV_VEC__)
    set_mask_norm();
    set_vector_mask(-1, -1);
    TF x; TASSIGN(x, 0x0);
    TF y; TASSIGN(y, 0x1000);
    TF r; TASSIGN(r, 0x2000);
    TI xi; TASSIGN(xi, 0x3000);
    TI yi; TASSIGN(yi, 0x4000);
    TI ri; TASSIGN(ri, 0x5000);
    TB xb; TASSIGN(xb, 0x6000);
    TB yb; TASSIGN(yb, 0x6800);
    TB rb; TASSIGN(rb, 0x7000);
    TH xh; TASSIGN(xh, 0x7800);
    TH yh; TASSIGN(yh, 0x8000);
    TH rh; TASSIGN(rh, 0x8800);
    G<float> ga(a), gb(b);
    G<int32_t> gia(ia), gib(ib);
    G<bfloat16_t> gab(ab), gbb(ab + 1024);
    G<half> gah(ah), gbh(ah + 1024);
    TLOAD(x, ga); TLOAD(y, gb); TLOAD(xi, gia); TLOAD(yi, gib);
    TLOAD(xb, gab); TLOAD(yb, gbb); TLOAD(xh, gah); TLOAD(yh, gbh);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
{calls}
    // A partial valid region: only rows [0, 12) x columns [0, 40) change.
    TEXPANDS(r, -7.0f);
    TFDyn rd(12, 40); TASSIGN(rd, 0x2000);
    TFDyn xd(12, 40); TASSIGN(xd, 0x0);
    TADD(rd, xd, xd);
    TMULS(rd, rd, s);
    G<float> gp(partial);
    TSTORE(gp, r);
#endif
    ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
}}
"#
    );
    let mut unpack = String::new();
    let names = [
        ("float", "a"),
        ("float", "b"),
        ("int32_t", "ia"),
        ("int32_t", "ib"),
        ("bfloat16_t", "ab"),
        ("half", "ah"),
        ("float", "outf"),
        ("int32_t", "outi"),
        ("bfloat16_t", "outb"),
        ("half", "outh"),
        ("float", "partial"),
    ];
    for (i, (t, n)) in names.iter().enumerate() {
        unpack += &wrapper::tensor_arg(i, t, n);
    }
    unpack += &wrapper::scalar_arg(names.len(), "float", "s");
    wrapper::kernel(
        &body,
        &wrapper::entry(
            &unpack,
            "elementwise(a, b, ia, ib, ab, ah, outf, outi, outb, outh, partial, s)",
        ),
    )
}

#[test]
fn elementwise_instructions_match_scalar_references() {
    let (fops, iops, hops) = (f32_ops(), i32_ops(), f16_ops());
    let program = build(
        "elementwise",
        &one_task(11, 1, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(0, "elementwise", kernel_source())],
    );
    let a = values(N, 1, 4.0);
    let mut b = values(N, 2, 4.0);
    b.iter_mut().for_each(|v| {
        if v.abs() < 0.1 {
            *v = 0.5
        }
    });
    let ia: Vec<i32> = values(N, 3, 1.0)
        .iter()
        .map(|v| (v * 1e9) as i32)
        .chain([i32::MIN, -1, 7, 0])
        .skip(4)
        .collect();
    let mut ib: Vec<i32> = values(N, 4, 1.0)
        .iter()
        .map(|v| (v * 40.0) as i32)
        .collect();
    ib[0] = 0; // x / 0
    ib[1] = -1;
    ib[2] = 33; // shift by more than the width
    ib[3] = -3; // negative shift count
    let mut ia = ia;
    ia[1] = i32::MIN; // MIN / -1
    let ab: Vec<u16> = values(2 * N, 5, 3.0).iter().map(|v| bf16_rne(*v)).collect();
    let ah: Vec<u16> = values(2 * N, 6, 3.0).iter().map(|v| f16_rne(*v)).collect();
    let mut bufs = vec![
        Buf::f32(&[16, 64], &a),
        Buf::f32(&[16, 64], &b),
        Buf::i32(&[16, 64], &ia),
        Buf::i32(&[16, 64], &ib),
        Buf::u16(Dt::Bf16, &[2, 16, 64], &ab),
        Buf::u16(Dt::F16, &[2, 16, 64], &ah),
        Buf::zeros(Dt::F32, &[fops.len() as u32, 16, 64]),
        Buf::zeros(Dt::I32, &[iops.len() as u32, 16, 64]),
        Buf::zeros(Dt::Bf16, &[hops.len() as u32, 16, 64]),
        Buf::zeros(Dt::F16, &[hops.len() as u32, 16, 64]),
        Buf::zeros(Dt::F32, &[16, 64]),
    ];
    run(&program, &mut bufs, &[u64::from(0.75f32.to_bits())]);

    let outf = bufs[6].as_f32();
    for (k, (stmt, f)) in fops.iter().enumerate() {
        let want: Vec<f32> = (0..N).map(|i| f(a[i], b[i])).collect();
        let got = &outf[k * N..(k + 1) * N];
        if stmt.contains("EXP") || stmt.contains("LOG") || stmt.contains("SQRT") {
            crate::common::assert_close(stmt, got, &want, 2e-6, 1e-30);
        } else {
            assert_bits(stmt, got, &want);
        }
    }
    let outi = bufs[7].as_i32();
    for (k, (stmt, f)) in iops.iter().enumerate() {
        for i in 0..N {
            let want = if stmt.starts_with("TDIV(") && ib[i] == -1 && ia[i] == i32::MIN {
                i32::MIN
            } else {
                f(ia[i], ib[i])
            };
            assert_eq!(outi[k * N + i], want, "{stmt}[{i}] ({} , {})", ia[i], ib[i]);
        }
    }
    let (outb, outh) = (bufs[8].as_u16(), bufs[9].as_u16());
    for (k, (stmt, f)) in hops.iter().enumerate() {
        for i in 0..N {
            let sb = bf16_value(bf16_rne(0.3));
            let sh = f16_value(f16_rne(0.3));
            let wb = bf16_rne(f(bf16_value(ab[i]), bf16_value(ab[N + i]), sb));
            let wh = f16_rne(f(f16_value(ah[i]), f16_value(ah[N + i]), sh));
            let (gb, gh) = (outb[k * N + i], outh[k * N + i]);
            let exp = stmt.contains("EXP");
            let near = |g: u16, w: u16| g == w || (exp && (i32::from(g) - i32::from(w)).abs() <= 1);
            assert!(near(gb, wb), "bf16 {stmt}[{i}]: {gb:#x} vs {wb:#x}");
            assert!(near(gh, wh), "f16 {stmt}[{i}]: {gh:#x} vs {wh:#x}");
        }
    }
    let partial = bufs[10].as_f32();
    for r in 0..16 {
        for c in 0..64 {
            let i = r * 64 + c;
            let want = if r < 12 && c < 40 {
                (a[i] + a[i]) * 0.75
            } else {
                -7.0
            };
            assert_eq!(partial[i], want, "partial valid region ({r}, {c})");
        }
    }
}
