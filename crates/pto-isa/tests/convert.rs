//! TCVT between float, half, bf16 and integer tiles in every rounding mode, with and without
//! saturation, on values chosen to hit ties, overflow, NaN and infinities.

use pto_isa::reference::{
    bf16_bits, bf16_rne, bf16_value, convert_float, f16_bits, f16_rne, f16_value, float_to_int,
    wrap, Format, Round,
};
use pto_isa::wrapper;

use crate::common::{build, one_task, run, values, Buf, Dt, Kernel};

const N: usize = 256;

/// Tile element types of the test.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Ty {
    F32,
    F16,
    Bf16,
    I32,
    I16,
    I8,
}

impl Ty {
    fn cpp(self) -> &'static str {
        match self {
            Ty::F32 => "float",
            Ty::F16 => "half",
            Ty::Bf16 => "bfloat16_t",
            Ty::I32 => "int32_t",
            Ty::I16 => "int16_t",
            Ty::I8 => "int8_t",
        }
    }
    fn tile(self) -> &'static str {
        match self {
            Ty::F32 => "f",
            Ty::F16 => "h",
            Ty::Bf16 => "b",
            Ty::I32 => "i",
            Ty::I16 => "s",
            Ty::I8 => "c",
        }
    }
    fn dt(self) -> Dt {
        match self {
            Ty::F32 => Dt::F32,
            Ty::F16 => Dt::F16,
            Ty::Bf16 => Dt::Bf16,
            Ty::I32 => Dt::I32,
            Ty::I16 => Dt::I16,
            Ty::I8 => Dt::I8,
        }
    }
}

/// One conversion: source, destination, mode, saturation (None: the 3-argument form).
type Conv = (Ty, Ty, Round, Option<bool>);

fn conversions() -> Vec<Conv> {
    let mut v = Vec::new();
    for mode in Round::ALL {
        for sat in [None, Some(true)] {
            v.push((Ty::F32, Ty::Bf16, mode, sat));
            v.push((Ty::F32, Ty::F16, mode, sat));
            v.push((Ty::I32, Ty::F16, mode, sat));
        }
        for sat in [Some(true), Some(false)] {
            v.push((Ty::F32, Ty::I32, mode, sat));
            v.push((Ty::F16, Ty::I8, mode, sat));
        }
        v.push((Ty::I32, Ty::F32, mode, None));
        v.push((Ty::F32, Ty::I8, mode, Some(true)));
    }
    for sat in [Some(true), Some(false)] {
        v.push((Ty::F32, Ty::I16, Round::Trunc, sat));
        v.push((Ty::I32, Ty::I16, Round::Rint, sat));
        v.push((Ty::I32, Ty::I8, Round::Rint, sat));
    }
    v.push((Ty::Bf16, Ty::F32, Round::None, None));
    v.push((Ty::F16, Ty::F32, Round::Rint, None));
    v.push((Ty::F16, Ty::Bf16, Round::Rint, None));
    v.push((Ty::Bf16, Ty::F16, Round::Floor, None));
    v
}

fn f32_inputs() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0 + 2f32.powi(-8),       // bf16 tie, even below
        1.0 + 3.0 * 2f32.powi(-8), // bf16 tie, odd below
        -(1.0 + 2f32.powi(-8)),
        1.0 + 2f32.powi(-11), // f16 tie
        -(1.0 + 3.0 * 2f32.powi(-11)),
        2.5,
        -2.5,
        3.5,
        -0.5,
        127.5,
        -128.5,
        300.7,
        -300.2,
        65519.0,
        65520.0,
        70000.0,
        -1e6,
        3.3e38,
        3.4e38,
        1e10,
        -1e10,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1e-6,
        -3e-5,
        6e-8,
        1e-40,
    ];
    v.extend(values(N - v.len(), 41, 200.0));
    v
}

fn i32_inputs() -> Vec<i32> {
    let mut v = vec![
        0,
        1,
        -1,
        16_777_217,
        -16_777_219,
        i32::MAX,
        i32::MIN,
        65519,
        65520,
        -65521,
        70000,
        2049,
        2051,
        -4097,
        300,
        -300,
        127,
        128,
        -129,
        32767,
        32768,
        -40000,
    ];
    v.extend(
        values(N - v.len(), 42, 1.0)
            .iter()
            .map(|x| (x * 100_000.0) as i32),
    );
    v
}

fn source() -> String {
    let mut calls = String::new();
    let mut next = std::collections::HashMap::new();
    for (src, dst, mode, sat) in conversions() {
        let slot = next.entry(dst).or_insert(0usize);
        let sat = match sat {
            None => String::new(),
            Some(true) => ", SaturationMode::ON".into(),
            Some(false) => ", SaturationMode::OFF".into(),
        };
        calls += &format!(
            "    TCVT(d{d}, s{s}, {m}{sat}); STORE({d}, {ty}, {slot});\n",
            d = dst.tile(),
            s = src.tile(),
            m = mode.cpp(),
            ty = dst.cpp(),
        );
        *slot += 1;
    }
    let body = format!(
        r#"
template <typename T> using TT = Tile<TileType::Vec, T, 4, 64, BLayout::RowMajor, 4, 64, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>;
template <typename T> using G = GlobalTensor<T, pto::Shape<1, 1, 1, 4, 64>, pto::Stride<256, 256, 256, 64, 1>, pto::Layout::ND>;
#define STORE(x, T, k) {{ G<T> g_(out_##x + (k) * 256); TSTORE(g_, d##x); }}

static __aicore__ void convert(__gm__ float* xf, __gm__ half* xh, __gm__ bfloat16_t* xb, __gm__ int32_t* xi,
                               __gm__ float* out_f, __gm__ half* out_h, __gm__ bfloat16_t* out_b, __gm__ int32_t* out_i,
                               __gm__ int16_t* out_s, __gm__ int8_t* out_c) {{
#if defined(__DAV_VEC__)
    set_mask_norm();
    set_vector_mask(-1, -1);
    TT<float> sf; TASSIGN(sf, 0x0);
    TT<half> sh; TASSIGN(sh, 0x400);
    TT<bfloat16_t> sb; TASSIGN(sb, 0x600);
    TT<int32_t> si; TASSIGN(si, 0x800);
    TT<float> df; TASSIGN(df, 0x1000);
    TT<half> dh; TASSIGN(dh, 0x1400);
    TT<bfloat16_t> db; TASSIGN(db, 0x1600);
    TT<int32_t> di; TASSIGN(di, 0x1800);
    TT<int16_t> ds; TASSIGN(ds, 0x1C00);
    TT<int8_t> dc; TASSIGN(dc, 0x1E00);
    G<float> gf(xf); G<half> gh(xh); G<bfloat16_t> gb(xb); G<int32_t> gi(xi);
    TLOAD(sf, gf); TLOAD(sh, gh); TLOAD(sb, gb); TLOAD(si, gi);
{calls}#endif
}}
"#
    );
    let names = [
        ("float", "xf"),
        ("half", "xh"),
        ("bfloat16_t", "xb"),
        ("int32_t", "xi"),
        ("float", "out_f"),
        ("half", "out_h"),
        ("bfloat16_t", "out_b"),
        ("int32_t", "out_i"),
        ("int16_t", "out_s"),
        ("int8_t", "out_c"),
    ];
    let unpack: String = names
        .iter()
        .enumerate()
        .map(|(i, (t, n))| wrapper::tensor_arg(i, t, n))
        .collect();
    wrapper::kernel(
        &body,
        &wrapper::entry(
            &unpack,
            "convert(xf, xh, xb, xi, out_f, out_h, out_b, out_i, out_s, out_c)",
        ),
    )
}

/// Expected destination bits (floats: encodings; integers: values) of converting `x`.
fn expect(dst: Ty, x: f64, mode: Round, sat: Option<bool>, int_src: bool) -> i64 {
    let saturate = sat == Some(true);
    match dst {
        Ty::F32 => i64::from((convert_float(Format::F32, x, mode, saturate) as f32).to_bits()),
        Ty::F16 => i64::from(f16_bits(convert_float(Format::F16, x, mode, saturate))),
        Ty::Bf16 => i64::from(bf16_bits(convert_float(Format::Bf16, x, mode, saturate))),
        Ty::I32 | Ty::I16 | Ty::I8 => {
            let bits = match dst {
                Ty::I32 => 32,
                Ty::I16 => 16,
                _ => 8,
            };
            if int_src && !saturate {
                wrap(x as i64, bits, true)
            } else {
                float_to_int(x, mode, saturate, bits, true)
            }
        }
    }
}

#[test]
fn tcvt_rounds_and_saturates_like_the_reference() {
    let convs = conversions();
    let program = build(
        "convert",
        &one_task(10, 0, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(0, "convert", source())],
    );
    let xf = f32_inputs();
    let xh: Vec<u16> = xf.iter().map(|v| f16_rne(*v)).collect();
    let xb: Vec<u16> = xf.iter().map(|v| bf16_rne(*v)).collect();
    let xi = i32_inputs();
    let count = |t: Ty| convs.iter().filter(|c| c.1 == t).count().max(1) as u32;
    let mut bufs = vec![
        Buf::f32(&[4, 64], &xf),
        Buf::u16(Dt::F16, &[4, 64], &xh),
        Buf::u16(Dt::Bf16, &[4, 64], &xb),
        Buf::i32(&[4, 64], &xi),
    ];
    for t in [Ty::F32, Ty::F16, Ty::Bf16, Ty::I32, Ty::I16, Ty::I8] {
        bufs.push(Buf::zeros(t.dt(), &[count(t), 4, 64]));
    }
    run(&program, &mut bufs, &[]);

    let mut next = std::collections::HashMap::new();
    for (src, dst, mode, sat) in convs {
        let slot = next.entry(dst).or_insert(0usize);
        let out = &bufs[4 + [Ty::F32, Ty::F16, Ty::Bf16, Ty::I32, Ty::I16, Ty::I8]
            .iter()
            .position(|t| *t == dst)
            .unwrap()];
        for i in 0..N {
            let x = match src {
                Ty::F32 => f64::from(xf[i]),
                Ty::F16 => f64::from(f16_value(xh[i])),
                Ty::Bf16 => f64::from(bf16_value(xb[i])),
                _ => f64::from(xi[i]),
            };
            let got: i64 = match dst {
                Ty::F32 => i64::from(out.as_u32()[*slot * N + i]),
                Ty::F16 | Ty::Bf16 => i64::from(out.as_u16()[*slot * N + i]),
                Ty::I32 => i64::from(out.as_i32()[*slot * N + i]),
                Ty::I16 => i64::from(out.as_u16()[*slot * N + i] as i16),
                Ty::I8 => i64::from(out.as_i8()[*slot * N + i]),
            };
            let want = expect(dst, x, mode, sat, matches!(src, Ty::I32));
            let nan = |bits: i64| match dst {
                Ty::F32 => f32::from_bits(bits as u32).is_nan(),
                Ty::F16 => f16_value(bits as u16).is_nan(),
                Ty::Bf16 => bf16_value(bits as u16).is_nan(),
                _ => false,
            };
            assert!(
                got == want || (nan(got) && nan(want)),
                "TCVT {src:?} -> {dst:?} {mode:?} sat {sat:?}: input {x} gave {got:#x}, want {want:#x}"
            );
        }
        *slot += 1;
    }
}

/// TCVT whose source and destination share an address, as PyPTO's memory planner emits it
/// (an f32 accumulator narrowed to bf16 in place, then widened back in place): every element
/// converts from its original value.
const IN_PLACE: &str = r#"
static __aicore__ void cvt_in_place(__gm__ float* x, __gm__ bfloat16_t* narrowed, __gm__ float* widened) {
#if defined(__DAV_VEC__)
    using F = Tile<TileType::Vec, float, 1, 4096, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>;
    using B = Tile<TileType::Vec, bfloat16_t, 1, 4096, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>;
    using GF = GlobalTensor<float, pto::Shape<1, 1, 1, 1, 4096>, pto::Stride<4096, 4096, 4096, 4096, 1>, pto::Layout::ND>;
    using GB = GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 1, 4096>, pto::Stride<4096, 4096, 4096, 4096, 1>, pto::Layout::ND>;
    F acc(1, 4096);
    TASSIGN(acc, (uint64_t)0);
    B low(1, 4096);
    TASSIGN(low, (uint64_t)0);
    GF gx(x, pto::Shape<1, 1, 1, 1, 4096>(), pto::Stride<4096, 4096, 4096, 4096, 1>());
    GB gn(narrowed, pto::Shape<1, 1, 1, 1, 4096>(), pto::Stride<4096, 4096, 4096, 4096, 1>());
    GF gw(widened, pto::Shape<1, 1, 1, 1, 4096>(), pto::Stride<4096, 4096, 4096, 4096, 1>());
    TLOAD(acc, gx);
    TCVT(low, acc, RoundMode::CAST_RINT, SaturationMode::OFF);
    TSTORE(gn, low);
    F wide(1, 4096);
    TASSIGN(wide, (uint64_t)0);
    TCVT(wide, low, RoundMode::CAST_ROUND);
    TSTORE(gw, wide);
#endif
}
"#;

#[test]
fn tcvt_in_place_converts_every_element_from_its_original_value() {
    let unpack = format!(
        "{}{}{}",
        wrapper::tensor_arg(0, "float", "x"),
        wrapper::tensor_arg(1, "bfloat16_t", "n"),
        wrapper::tensor_arg(2, "float", "w"),
    );
    let source = wrapper::kernel(IN_PLACE, &wrapper::entry(&unpack, "cvt_in_place(x, n, w)"));
    let program = build(
        "convert_in_place",
        &one_task(3, 0, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(0, "cvt_in_place", source)],
    );
    let x = values(4096, 41, 100.0);
    let mut bufs = vec![
        Buf::f32(&[4096], &x),
        Buf::zeros(Dt::Bf16, &[4096]),
        Buf::zeros(Dt::F32, &[4096]),
    ];
    run(&program, &mut bufs, &[]);
    let want: Vec<u16> = x.iter().map(|v| bf16_rne(*v)).collect();
    assert_eq!(bufs[1].as_u16(), want, "f32 -> bf16 in place");
    let back: Vec<f32> = want.iter().map(|b| bf16_value(*b)).collect();
    assert_eq!(bufs[2].as_f32(), back, "bf16 -> f32 in place");
}
