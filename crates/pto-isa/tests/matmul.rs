//! TMATMUL / TMATMUL_ACC / TMATMUL_BIAS for every operand pair (bf16, f16, f32, i8), K split
//! through TEXTRACT, Zz (a2a3) and Nz (a5) Left tiles, a ragged M, and the Acc -> GM
//! conversions (f32, bf16, f16, ReLU). f32 results are compared bit for bit with an fma chain
//! in k order.

use pto_isa::reference::{bf16_rne, bf16_value, f16_rne, f16_value};
use pto_isa::wrapper;

use crate::common::{assert_bits, build, one_task, run, values, Buf, Dt, Kernel};

const BODY: &str = r#"
template <typename T, int R, int C> using G = GlobalTensor<T, pto::Shape<1, 1, 1, R, C>, pto::Stride<R * C, R * C, R * C, C, 1>>;
template <typename T, int R, int C> using MatNz = Tile<TileType::Mat, T, R, C, BLayout::ColMajor, R, C, SLayout::RowMajor, 512, PadValue::Null>;
template <typename T, int R, int C> using LeftZz = Tile<TileType::Left, T, R, C, BLayout::RowMajor, R, C, SLayout::RowMajor, 512, PadValue::Null>;
template <typename T, int R, int C> using LeftNz = Tile<TileType::Left, T, R, C, BLayout::ColMajor, R, C, SLayout::RowMajor, 512, PadValue::Null>;
template <typename T, int R, int C> using Right = Tile<TileType::Right, T, R, C, BLayout::RowMajor, R, C, SLayout::ColMajor, 512, PadValue::Null>;
template <typename T, int R, int C> using AccT = Tile<TileType::Acc, T, R, C, BLayout::ColMajor, R, C, SLayout::RowMajor, 1024, PadValue::Null>;

// B is given transposed (N x K row-major): a DN view loads it as K x N into a Zn Mat tile.
template <typename T, int K, int N>
using GBt = GlobalTensor<T, pto::Shape<1, 1, 1, K, N>, pto::Stride<K * N, K * N, K * N, 1, K>, pto::Layout::DN>;
template <typename T, int R, int C> using MatZn = Tile<TileType::Mat, T, R, C, BLayout::RowMajor, R, C, SLayout::ColMajor, 512, PadValue::Null>;

static __aicore__ void matmul(__gm__ bfloat16_t* a_bf, __gm__ bfloat16_t* bt_bf, __gm__ half* a_h, __gm__ half* bt_h,
                              __gm__ float* a_f, __gm__ float* bt_f, __gm__ int8_t* a_i, __gm__ int8_t* bt_i,
                              __gm__ float* bias, __gm__ float* out_bf, __gm__ bfloat16_t* out_bf_b,
                              __gm__ half* out_bf_h, __gm__ float* out_h, __gm__ float* out_f, __gm__ int32_t* out_i,
                              __gm__ float* out_nz, __gm__ float* out_ragged, __gm__ float* out_relu) {
#if defined(__DAV_CUBE__)
    // bf16: 16 x 96 x 48, K in three slices of 32.
    {
        MatNz<bfloat16_t, 16, 96> ma; TASSIGN(ma, 0x0);
        MatZn<bfloat16_t, 96, 48> mb; TASSIGN(mb, 0x4000);
        G<bfloat16_t, 16, 96> ga(a_bf); GBt<bfloat16_t, 96, 48> gb(bt_bf);
        TLOAD(ma, ga); TLOAD(mb, gb);
        LeftZz<bfloat16_t, 16, 32> l; TASSIGN(l, 0x0);
        Right<bfloat16_t, 32, 48> r; TASSIGN(r, 0x0);
        AccT<float, 16, 48> acc; TASSIGN(acc, 0x0);
        for (int k0 = 0; k0 < 96; k0 += 32) {
            TEXTRACT(l, ma, 0, k0);
            TEXTRACT(r, mb, k0, 0);
            if (k0 == 0) TMATMUL(acc, l, r); else TMATMUL_ACC(acc, acc, l, r);
        }
        G<float, 16, 48> g0(out_bf); G<bfloat16_t, 16, 48> g1(out_bf_b); G<half, 16, 48> g2(out_bf_h);
        TSTORE(g0, acc); TSTORE(g1, acc); TSTORE(g2, acc);
        G<float, 16, 48> g3(out_relu);
        TSTORE<AccT<float, 16, 48>, G<float, 16, 48>, AtomicType::AtomicNone, ReluPreMode::NormalRelu>(g3, acc);
    }
    // f16 with bias: 32 x 32 x 32.
    {
        MatNz<half, 32, 32> ma; TASSIGN(ma, 0x0);
        MatZn<half, 32, 32> mb; TASSIGN(mb, 0x1000);
        G<half, 32, 32> ga(a_h); GBt<half, 32, 32> gb(bt_h);
        TLOAD(ma, ga); TLOAD(mb, gb);
        Tile<TileType::Mat, float, 1, 32, BLayout::RowMajor, 1, 32, SLayout::NoneBox, 512, PadValue::Null> mbias; TASSIGN(mbias, 0x2000);
        G<float, 1, 32> gbias(bias);
        TLOAD(mbias, gbias);
        Tile<TileType::Bias, float, 1, 32, BLayout::RowMajor, 1, 32, SLayout::NoneBox, 512, PadValue::Null> tbias; TASSIGN(tbias, 0x0);
        TMOV(tbias, mbias);
        LeftZz<half, 32, 32> l; TASSIGN(l, 0x0);
        Right<half, 32, 32> r; TASSIGN(r, 0x0);
        TMOV(l, ma); TMOV(r, mb);
        AccT<float, 32, 32> acc; TASSIGN(acc, 0x4000);
        TMATMUL_BIAS(acc, l, r, tbias);
        G<float, 32, 32> g(out_h);
        TSTORE(g, acc);
    }
    // f32: 16 x 16 x 16; i8: 16 x 64 x 32.
    {
        MatNz<float, 16, 16> ma; TASSIGN(ma, 0x0);
        MatZn<float, 16, 16> mb; TASSIGN(mb, 0x400);
        G<float, 16, 16> ga(a_f); GBt<float, 16, 16> gb(bt_f);
        TLOAD(ma, ga); TLOAD(mb, gb);
        LeftZz<float, 16, 16> l; TASSIGN(l, 0x0);
        Right<float, 16, 16> r; TASSIGN(r, 0x0);
        TMOV(l, ma); TMOV(r, mb);
        AccT<float, 16, 16> acc; TASSIGN(acc, 0x0);
        TMATMUL(acc, l, r);
        G<float, 16, 16> g(out_f);
        TSTORE(g, acc);

        MatNz<int8_t, 16, 64> mai; TASSIGN(mai, 0x1000);
        MatZn<int8_t, 64, 32> mbi; TASSIGN(mbi, 0x2000);
        G<int8_t, 16, 64> gai(a_i); GBt<int8_t, 64, 32> gbi(bt_i);
        TLOAD(mai, gai); TLOAD(mbi, gbi);
        LeftZz<int8_t, 16, 64> li; TASSIGN(li, 0x1000);
        Right<int8_t, 64, 32> ri; TASSIGN(ri, 0x1000);
        TMOV(li, mai); TMOV(ri, mbi);
        AccT<int32_t, 16, 32> acci; TASSIGN(acci, 0x2000);
        TMATMUL(acci, li, ri);
        TMATMUL_ACC(acci, li, ri);   // doubles it
        G<int32_t, 16, 32> gi(out_i);
        TSTORE(gi, acci);
    }
    // a5-style Nz Left and a ragged M (11 of 16 rows) with the bf16 operands' first K slice.
    {
        MatNz<bfloat16_t, 16, 96> ma; TASSIGN(ma, 0x0);
        MatZn<bfloat16_t, 96, 48> mb; TASSIGN(mb, 0x4000);
        G<bfloat16_t, 16, 96> ga(a_bf); GBt<bfloat16_t, 96, 48> gb(bt_bf);
        TLOAD(ma, ga); TLOAD(mb, gb);
        LeftNz<bfloat16_t, 16, 32> l; TASSIGN(l, 0x0);
        Right<bfloat16_t, 32, 48> r; TASSIGN(r, 0x0);
        TEXTRACT(l, ma, 0, 0);
        TEXTRACT(r, mb, 0, 0);
        AccT<float, 16, 48> acc; TASSIGN(acc, 0x0);
        TMATMUL(acc, l, r);
        G<float, 16, 48> g(out_nz);
        TSTORE(g, acc);
        Tile<TileType::Left, bfloat16_t, 16, 32, BLayout::RowMajor, -1, 32, SLayout::RowMajor, 512, PadValue::Null> lr(11);
        TASSIGN(lr, 0x2000);
        TEXTRACT(lr, ma, 0, 0);
        Tile<TileType::Acc, float, 16, 48, BLayout::ColMajor, -1, 48, SLayout::RowMajor, 1024, PadValue::Null, CompactMode::Normal> accr(11);
        TASSIGN(accr, 0x4000);
        TMATMUL(accr, lr, r);
        G<float, 11, 48> gr(out_ragged);
        TSTORE(gr, accr);
    }
#endif
    ptoas_auto_sync_tail();
}
"#;

const NAMES: [(&str, &str); 18] = [
    ("bfloat16_t", "a_bf"),
    ("bfloat16_t", "bt_bf"),
    ("half", "a_h"),
    ("half", "bt_h"),
    ("float", "a_f"),
    ("float", "bt_f"),
    ("int8_t", "a_i"),
    ("int8_t", "bt_i"),
    ("float", "bias"),
    ("float", "out_bf"),
    ("bfloat16_t", "out_bf_b"),
    ("half", "out_bf_h"),
    ("float", "out_h"),
    ("float", "out_f"),
    ("int32_t", "out_i"),
    ("float", "out_nz"),
    ("float", "out_ragged"),
    ("float", "out_relu"),
];

fn source() -> String {
    let unpack: String = NAMES
        .iter()
        .enumerate()
        .map(|(i, (t, n))| wrapper::tensor_arg(i, t, n))
        .collect();
    let call = format!(
        "matmul({})",
        NAMES.iter().map(|(_, n)| *n).collect::<Vec<_>>().join(", ")
    );
    wrapper::kernel(BODY, &wrapper::entry(&unpack, &call))
}

/// sum over k in [k0, k1) of a[i][k] * bt[j][k], as an fma chain from zero.
fn dot(a: &[f32], bt: &[f32], k: usize, i: usize, j: usize, k0: usize, k1: usize) -> f32 {
    (k0..k1).fold(0f32, |s, kk| a[i * k + kk].mul_add(bt[j * k + kk], s))
}

#[test]
fn matmul_operand_pairs_and_acc_conversions() {
    let program = build(
        "matmul",
        &one_task(NAMES.len(), 0, "", "rt_submit_aic_task(0, p)"),
        &[Kernel::aic(0, "matmul", source())],
    );
    let a_bf: Vec<u16> = values(16 * 96, 51, 2.0)
        .iter()
        .map(|v| bf16_rne(*v))
        .collect();
    let bt_bf: Vec<u16> = values(48 * 96, 52, 2.0)
        .iter()
        .map(|v| bf16_rne(*v))
        .collect();
    let a_h: Vec<u16> = values(32 * 32, 53, 2.0)
        .iter()
        .map(|v| f16_rne(*v))
        .collect();
    let bt_h: Vec<u16> = values(32 * 32, 54, 2.0)
        .iter()
        .map(|v| f16_rne(*v))
        .collect();
    let a_f = values(16 * 16, 55, 3.0);
    let bt_f = values(16 * 16, 56, 3.0);
    let a_i: Vec<i8> = values(16 * 64, 57, 127.0)
        .iter()
        .map(|v| *v as i8)
        .collect();
    let bt_i: Vec<i8> = values(32 * 64, 58, 127.0)
        .iter()
        .map(|v| *v as i8)
        .collect();
    let bias = values(32, 59, 10.0);
    let mut bufs = vec![
        Buf::u16(Dt::Bf16, &[16, 96], &a_bf),
        Buf::u16(Dt::Bf16, &[48, 96], &bt_bf),
        Buf::u16(Dt::F16, &[32, 32], &a_h),
        Buf::u16(Dt::F16, &[32, 32], &bt_h),
        Buf::f32(&[16, 16], &a_f),
        Buf::f32(&[16, 16], &bt_f),
        Buf::i8(&[16, 64], &a_i),
        Buf::i8(&[32, 64], &bt_i),
        Buf::f32(&[32], &bias),
        Buf::zeros(Dt::F32, &[16, 48]),
        Buf::zeros(Dt::Bf16, &[16, 48]),
        Buf::zeros(Dt::F16, &[16, 48]),
        Buf::zeros(Dt::F32, &[32, 32]),
        Buf::zeros(Dt::F32, &[16, 16]),
        Buf::zeros(Dt::I32, &[16, 32]),
        Buf::zeros(Dt::F32, &[16, 48]),
        Buf::zeros(Dt::F32, &[11, 48]),
        Buf::zeros(Dt::F32, &[16, 48]),
    ];
    run(&program, &mut bufs, &[]);

    let abf: Vec<f32> = a_bf.iter().map(|b| bf16_value(*b)).collect();
    let bbf: Vec<f32> = bt_bf.iter().map(|b| bf16_value(*b)).collect();
    let mut want = Vec::new();
    for i in 0..16 {
        for j in 0..48 {
            let mut acc = dot(&abf, &bbf, 96, i, j, 0, 32);
            acc += dot(&abf, &bbf, 96, i, j, 32, 64);
            acc += dot(&abf, &bbf, 96, i, j, 64, 96);
            want.push(acc);
        }
    }
    assert_bits("bf16 matmul (K split)", &bufs[9].as_f32(), &want);
    let as_bf: Vec<u16> = want.iter().map(|v| bf16_rne(*v)).collect();
    assert_eq!(bufs[10].as_u16(), as_bf, "Acc -> bf16");
    let as_h: Vec<u16> = want.iter().map(|v| f16_rne(*v)).collect();
    assert_eq!(bufs[11].as_u16(), as_h, "Acc -> f16");
    let relu: Vec<f32> = want.iter().map(|v| v.max(0.0)).collect();
    assert_bits("Acc -> f32 with ReLU", &bufs[17].as_f32(), &relu);

    let ah: Vec<f32> = a_h.iter().map(|b| f16_value(*b)).collect();
    let bh: Vec<f32> = bt_h.iter().map(|b| f16_value(*b)).collect();
    let want: Vec<f32> = (0..32 * 32)
        .map(|x| dot(&ah, &bh, 32, x / 32, x % 32, 0, 32) + bias[x % 32])
        .collect();
    assert_bits("f16 matmul + bias", &bufs[12].as_f32(), &want);

    let want: Vec<f32> = (0..256)
        .map(|x| dot(&a_f, &bt_f, 16, x / 16, x % 16, 0, 16))
        .collect();
    assert_bits("f32 matmul", &bufs[13].as_f32(), &want);

    let want: Vec<i32> = (0..16 * 32)
        .map(|x| {
            let (i, j) = (x / 32, x % 32);
            2 * (0..64)
                .map(|k| i32::from(a_i[i * 64 + k]) * i32::from(bt_i[j * 64 + k]))
                .sum::<i32>()
        })
        .collect();
    assert_eq!(
        bufs[14].as_i32(),
        want,
        "i8 matmul (TMATMUL then TMATMUL_ACC)"
    );

    let first: Vec<f32> = (0..16 * 48)
        .map(|x| dot(&abf, &bbf, 96, x / 48, x % 48, 0, 32))
        .collect();
    assert_bits("Nz Left", &bufs[15].as_f32(), &first);
    assert_bits("ragged M", &bufs[16].as_f32(), &first[..11 * 48]);
}
