//! Physical layouts and aliasing: ND / DN loads, Nz / Zn / Zz / Acc fractal images (observed
//! through a plain tile bound to the same address), CompactMode::Normal pitch, [16,1] vs
//! [1,16] aliasing, TRESHAPE, window moves, pads (including -inf for ragged contexts),
//! TTRANS and TCONCAT.

use pto_isa::reference::{bf16_rne, bf16_value};
use pto_isa::wrapper;

use crate::common::{build, one_task, run, values, Buf, Dt, Kernel};

/// Element offset of (r, c) in an Nz tile: column-of-blocks major, blocks of 16 rows x `ic`
/// columns stored row-major, `pitch` rows between block columns.
fn nz(r: usize, c: usize, pitch: usize, ic: usize) -> usize {
    (c / ic) * pitch * ic + (r / 16) * 16 * ic + (r % 16) * ic + c % ic
}
/// Element offset of (r, c) in a Zn tile: row-of-blocks major, blocks of `ir` rows x 16 columns
/// stored column-major.
fn zn(r: usize, c: usize, cols: usize, ir: usize) -> usize {
    (r / ir) * cols * ir + (c / 16) * ir * 16 + (c % 16) * ir + r % ir
}
/// Element offset of (r, c) in a Zz tile: row-of-blocks major, blocks stored row-major.
fn zz(r: usize, c: usize, cols: usize, ic: usize) -> usize {
    (r / 16) * cols * 16 + (c / ic) * 16 * ic + (r % 16) * ic + c % ic
}

const CUBE: &str = r#"
using MatNz = Tile<TileType::Mat, bfloat16_t, 32, 64, BLayout::ColMajor, 32, 64, SLayout::RowMajor, 512, PadValue::Null>;
using MatZn = Tile<TileType::Mat, bfloat16_t, 64, 32, BLayout::RowMajor, 64, 32, SLayout::ColMajor, 512, PadValue::Null>;
using MatPlainA = Tile<TileType::Mat, bfloat16_t, 32, 64, BLayout::RowMajor, 32, 64, SLayout::NoneBox, 512, PadValue::Null>;
using MatPlainB = Tile<TileType::Mat, bfloat16_t, 64, 32, BLayout::RowMajor, 64, 32, SLayout::NoneBox, 512, PadValue::Null>;
using LeftZz = Tile<TileType::Left, bfloat16_t, 32, 64, BLayout::RowMajor, -1, 64, SLayout::RowMajor, 512, PadValue::Null>;
using LeftPlain = Tile<TileType::Left, bfloat16_t, 32, 64, BLayout::RowMajor, 32, 64, SLayout::NoneBox, 512, PadValue::Null>;
using LeftWin = Tile<TileType::Left, bfloat16_t, 16, 32, BLayout::RowMajor, 16, 32, SLayout::RowMajor, 512, PadValue::Null>;
using MatWin = Tile<TileType::Mat, bfloat16_t, 16, 32, BLayout::RowMajor, 16, 32, SLayout::NoneBox, 512, PadValue::Null>;
using RightZn = Tile<TileType::Right, bfloat16_t, 64, 32, BLayout::RowMajor, 64, 32, SLayout::ColMajor, 512, PadValue::Null>;
using Acc = Tile<TileType::Acc, float, 32, 32, BLayout::ColMajor, 32, 32, SLayout::RowMajor, 1024, PadValue::Null>;
using AccPlain = Tile<TileType::Acc, float, 32, 32, BLayout::RowMajor, 32, 32, SLayout::NoneBox, 512, PadValue::Null>;
using AccCompact = Tile<TileType::Acc, float, 48, 32, BLayout::ColMajor, -1, 32, SLayout::RowMajor, 1024, PadValue::Null, CompactMode::Normal>;
using AccCompactPlain = Tile<TileType::Acc, float, 48, 32, BLayout::RowMajor, 48, 32, SLayout::NoneBox, 512, PadValue::Null>;
template <typename T, int R, int C> using G = GlobalTensor<T, pto::Shape<1, 1, 1, R, C>, pto::Stride<R * C, R * C, R * C, C, 1>, pto::Layout::ND>;

static __aicore__ void layouts_cube(__gm__ bfloat16_t* a, __gm__ bfloat16_t* bt, __gm__ bfloat16_t* nz_img,
                                    __gm__ bfloat16_t* zn_img, __gm__ bfloat16_t* zz_img, __gm__ float* acc_img,
                                    __gm__ float* compact_img, __gm__ float* compact_out, __gm__ bfloat16_t* window) {
#if defined(__DAV_CUBE__)
    MatNz m_nz; TASSIGN(m_nz, 0x0);
    G<bfloat16_t, 32, 64> ga(a);
    TLOAD(m_nz, ga);
    MatPlainA m_nz_plain; TASSIGN(m_nz_plain, 0x0);          // the same bytes, read in storage order
    G<bfloat16_t, 32, 64> g_nz(nz_img);
    TSTORE(g_nz, m_nz_plain);

    // B (64 x 32) from its transpose in GM: a DN view (element (k, n) at n * 64 + k).
    MatZn m_zn; TASSIGN(m_zn, 0x2000);
    GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 64, 32>, pto::Stride<2048, 2048, 2048, 1, 64>, pto::Layout::DN> gbt(bt);
    TLOAD(m_zn, gbt);
    MatPlainB m_zn_plain; TASSIGN(m_zn_plain, 0x2000);
    G<bfloat16_t, 64, 32> g_zn(zn_img);
    TSTORE(g_zn, m_zn_plain);

    LeftZz left(32); TASSIGN(left, 0x0);
    TMOV(left, m_nz);
    LeftPlain left_plain; TASSIGN(left_plain, 0x0);
    MatPlainA staging; TASSIGN(staging, 0x4000);
    TMOV(staging, left_plain);
    G<bfloat16_t, 32, 64> g_zz(zz_img);
    TSTORE(g_zz, staging);

    RightZn right; TASSIGN(right, 0x0);
    TMOV(right, m_zn);
    Acc acc; TASSIGN(acc, 0x0);
    TMATMUL(acc, left, right);
    AccPlain acc_plain; TASSIGN(acc_plain, 0x0);
    G<float, 32, 32> g_acc(acc_img);
    TSTORE(g_acc, acc_plain);

    // 20 valid rows into a 48-row compact accumulator: block columns 32 rows apart.
    left.SetValidRow(20);
    AccCompact compact(20); TASSIGN(compact, 0x2000);
    AccCompactPlain compact_plain; TASSIGN(compact_plain, 0x2000);
    for (int i = 0; i < 48 * 32; ++i) compact_plain.data()[i] = -1.0f;
    TMATMUL(compact, left, right);
    G<float, 48, 32> g_cimg(compact_img);
    TSTORE(g_cimg, compact_plain);
    G<float, 20, 32> g_cout(compact_out);
    TSTORE(g_cout, compact);

    // A 16 x 32 window of the Nz tile at (16, 32), through L0A.
    LeftWin win; TASSIGN(win, 0x8000);
    TEXTRACT(win, m_nz, 16, 32);
    MatWin win_plain; TASSIGN(win_plain, 0x6000);
    TMOV(win_plain, win);
    G<bfloat16_t, 16, 32> g_win(window);
    TSTORE(g_win, win_plain);
#endif
    ptoas_auto_sync_tail();
}
"#;

const VECTOR: &str = r#"
using Col = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1, SLayout::NoneBox, 512, PadValue::Null>;
using Row = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, 1, 16, SLayout::NoneBox, 512, PadValue::Null>;
using PlainB = Tile<TileType::Vec, bfloat16_t, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null>;
using NzB = Tile<TileType::Vec, bfloat16_t, 16, 64, BLayout::ColMajor, 16, 64, SLayout::RowMajor, 512, PadValue::Null>;
using TF = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null>;
using TFDyn = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, -1, SLayout::NoneBox, 512, PadValue::Null>;
using TFRows = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, 64, SLayout::NoneBox, 512, PadValue::Null>;
using TFMin = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Min>;
using TFMax = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Max>;
using TFZero = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Zero>;
using TFHalf = Tile<TileType::Vec, float, 8, 32, BLayout::RowMajor, 8, 32, SLayout::NoneBox, 512, PadValue::Null>;
using TI = Tile<TileType::Vec, int32_t, 16, 64, BLayout::RowMajor, 16, -1, SLayout::NoneBox, 512, PadValue::Null>;
using TIMin = Tile<TileType::Vec, int32_t, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Min>;
using Sq = Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16, SLayout::NoneBox, 512, PadValue::Null>;
using Half = Tile<TileType::Vec, float, 16, 32, BLayout::RowMajor, 16, 32, SLayout::NoneBox, 512, PadValue::Null>;
using Win = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null>;
template <typename T, int R, int C> using G = GlobalTensor<T, pto::Shape<1, 1, 1, R, C>, pto::Stride<R * C, R * C, R * C, C, 1>>;

static __aicore__ void layouts_vector(__gm__ float* v16, __gm__ bfloat16_t* xb, __gm__ float* x, __gm__ int32_t* xi,
                                      __gm__ float* out_alias, __gm__ bfloat16_t* out_nz, __gm__ bfloat16_t* out_back,
                                      __gm__ float* out_pads, __gm__ int32_t* out_ipad, __gm__ float* out_misc) {
#if defined(__DAV_VEC__)
    set_mask_norm();
    set_vector_mask(-1, -1);
    // [16,1] ColMajor and [1,16] RowMajor at one address see the same 16 floats.
    Col col; TASSIGN(col, 0x0);
    Row row; TASSIGN(row, 0x0);
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN> gv(v16);
    TLOAD(col, gv);
    TMULS(row, row, 2.0f);
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN> ga0(out_alias);
    TSTORE(ga0, col);
    Row row2;
    TRESHAPE(row2, col);
    TADDS(row2, row2, 1.0f);
    G<float, 1, 16> ga1(out_alias + 16);
    TSTORE(ga1, row2);

    // ND bf16 -> Nz (Vec) -> ND: the Nz image, then the round trip.
    PlainB plain; TASSIGN(plain, 0x100);
    G<bfloat16_t, 16, 64> gxb(xb);
    TLOAD(plain, gxb);
    NzB nz; TASSIGN(nz, 0x1000);
    TMOV(nz, plain);
    PlainB nz_bytes; TASSIGN(nz_bytes, 0x1000);
    G<bfloat16_t, 16, 64> gnz(out_nz);
    TSTORE(gnz, nz_bytes);
    PlainB back; TASSIGN(back, 0x2000);
    TMOV(back, nz);
    G<bfloat16_t, 16, 64> gback(out_back);
    TSTORE(gback, back);

    // Pads: -inf right of column 37 (ragged context), +inf below row 10, zero padding on load.
    G<float, 16, 64> gx(x);
    TF t; TASSIGN(t, 0x4000);
    TLOAD(t, gx);
    TFDyn ragged(37); TASSIGN(ragged, 0x4000);
    TFMin tmin; TASSIGN(tmin, 0x4000);
    TFILLPAD_INPLACE(tmin, ragged);
    G<float, 16, 64> gp0(out_pads);
    TSTORE(gp0, tmin);
    TFRows top(10); TASSIGN(top, 0x8000);
    GlobalTensor<float, pto::Shape<1, 1, 1, 10, 64>, pto::Stride<640, 640, 640, 64, 1>> gx10(x);
    TLOAD(top, gx10);
    TFMax tmax; TASSIGN(tmax, 0xC000);
    TFILLPAD(tmax, top);
    G<float, 16, 64> gp1(out_pads + 1024);
    TSTORE(gp1, tmax);
    TF junk; TASSIGN(junk, 0x10000);
    TEXPANDS(junk, 5.0f);
    TFZero zpad; TASSIGN(zpad, 0x10000);
    TLOAD(zpad, gx10);
    G<float, 16, 64> gp2(out_pads + 2048);
    TSTORE(gp2, zpad);
    TFHalf small; TASSIGN(small, 0x14000);
    GlobalTensor<float, pto::Shape<1, 1, 1, 8, 32>, pto::Stride<1024, 1024, 1024, 64, 1>> gx8(x);
    TLOAD(small, gx8);
    TFMin expand; TASSIGN(expand, 0x18000);
    TFILLPAD_EXPAND(expand, small);
    G<float, 16, 64> gp3(out_pads + 3072);
    TSTORE(gp3, expand);

    G<int32_t, 16, 64> gxi(xi);
    TI ti(20); TASSIGN(ti, 0x1C000);
    TLOAD(ti, gxi);
    TIMin timin; TASSIGN(timin, 0x1C000);
    TFILLPAD_INPLACE(timin, ti);
    G<int32_t, 16, 64> gpi(out_ipad);
    TSTORE(gpi, timin);

    // TTRANS, TCONCAT, windows, scalar access.
    Sq sq; TASSIGN(sq, 0x20000);
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 16>, pto::Stride<1024, 1024, 1024, 64, 1>> gsq(x);
    TLOAD(sq, gsq);
    Sq sqt; TASSIGN(sqt, 0x20400);
    TTRANS(sqt, sq, sq);
    G<float, 16, 16> gm0(out_misc);
    TSTORE(gm0, sqt);
    Half h0; TASSIGN(h0, 0x20800);
    Half h1; TASSIGN(h1, 0x21000);
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 32>, pto::Stride<1024, 1024, 1024, 64, 1>> gh0(x), gh1(x + 32);
    TLOAD(h0, gh1);
    TLOAD(h1, gh0);
    TF cat; TASSIGN(cat, 0x22000);
    TCONCAT(cat, h0, h1);
    G<float, 16, 64> gm1(out_misc + 256);
    TSTORE(gm1, cat);
    Win w(5, 9); TASSIGN(w, 0x23000);
    TEXPANDS(cat, 0.0f);
    TEXTRACT(w, t, 3, 7);
    TINSERT(cat, w, 10, 50);
    cat.SetValue(1, cat.GetValue(10 * 64 + 50) + 100.0f);
    G<float, 16, 64> gm2(out_misc + 256 + 1024);
    TSTORE(gm2, cat);
#endif
    ptoas_auto_sync_tail();
}
"#;

fn cube_source() -> String {
    let names = [
        ("bfloat16_t", "a"),
        ("bfloat16_t", "bt"),
        ("bfloat16_t", "nz_img"),
        ("bfloat16_t", "zn_img"),
        ("bfloat16_t", "zz_img"),
        ("float", "acc_img"),
        ("float", "compact_img"),
        ("float", "compact_out"),
        ("bfloat16_t", "window"),
    ];
    let unpack: String = names
        .iter()
        .enumerate()
        .map(|(i, (t, n))| wrapper::tensor_arg(i, t, n))
        .collect();
    let call = format!(
        "layouts_cube({})",
        names.iter().map(|(_, n)| *n).collect::<Vec<_>>().join(", ")
    );
    wrapper::kernel(CUBE, &wrapper::entry(&unpack, &call))
}

fn vector_source() -> String {
    let names = [
        ("float", "v16"),
        ("bfloat16_t", "xb"),
        ("float", "x"),
        ("int32_t", "xi"),
        ("float", "out_alias"),
        ("bfloat16_t", "out_nz"),
        ("bfloat16_t", "out_back"),
        ("float", "out_pads"),
        ("int32_t", "out_ipad"),
        ("float", "out_misc"),
    ];
    let unpack: String = names
        .iter()
        .enumerate()
        .map(|(i, (t, n))| wrapper::tensor_arg(i, t, n))
        .collect();
    let call = format!(
        "layouts_vector({})",
        names.iter().map(|(_, n)| *n).collect::<Vec<_>>().join(", ")
    );
    wrapper::kernel(VECTOR, &wrapper::entry(&unpack, &call))
}

#[test]
fn cube_layouts_alias_as_on_the_device() {
    let program = build(
        "layouts_cube",
        &one_task(9, 0, "", "rt_submit_aic_task(0, p)"),
        &[Kernel::aic(0, "layouts_cube", cube_source())],
    );
    let a: Vec<u16> = values(32 * 64, 11, 2.0)
        .iter()
        .map(|v| bf16_rne(*v))
        .collect();
    let b: Vec<u16> = values(64 * 32, 12, 2.0)
        .iter()
        .map(|v| bf16_rne(*v))
        .collect(); // B[k][n]
    let mut bt = vec![0u16; 64 * 32]; // its transpose: bt[n][k]
    for k in 0..64 {
        for n in 0..32 {
            bt[n * 64 + k] = b[k * 32 + n];
        }
    }
    let mut bufs = vec![
        Buf::u16(Dt::Bf16, &[32, 64], &a),
        Buf::u16(Dt::Bf16, &[32, 64], &bt),
        Buf::zeros(Dt::Bf16, &[32, 64]),
        Buf::zeros(Dt::Bf16, &[64, 32]),
        Buf::zeros(Dt::Bf16, &[32, 64]),
        Buf::zeros(Dt::F32, &[32, 32]),
        Buf::zeros(Dt::F32, &[48, 32]),
        Buf::zeros(Dt::F32, &[20, 32]),
        Buf::zeros(Dt::Bf16, &[16, 32]),
    ];
    run(&program, &mut bufs, &[]);
    let (nz_img, zn_img, zz_img) = (bufs[2].as_u16(), bufs[3].as_u16(), bufs[4].as_u16());
    for r in 0..32 {
        for c in 0..64 {
            assert_eq!(nz_img[nz(r, c, 32, 16)], a[r * 64 + c], "Nz ({r}, {c})");
            assert_eq!(zz_img[zz(r, c, 64, 16)], a[r * 64 + c], "Zz ({r}, {c})");
        }
    }
    for k in 0..64 {
        for n in 0..32 {
            assert_eq!(zn_img[zn(k, n, 32, 16)], b[k * 32 + n], "Zn ({k}, {n})");
        }
    }
    let product = |r: usize, c: usize| {
        let mut s = 0f32;
        for k in 0..64 {
            s = bf16_value(a[r * 64 + k]).mul_add(bf16_value(b[k * 32 + c]), s);
        }
        s
    };
    let acc_img = bufs[5].as_f32();
    let compact_img = bufs[6].as_f32();
    let compact_out = bufs[7].as_f32();
    for r in 0..32 {
        for c in 0..32 {
            assert_eq!(acc_img[nz(r, c, 32, 16)], product(r, c), "Acc ({r}, {c})");
        }
    }
    let mut written = vec![false; 48 * 32];
    for r in 0..20 {
        for c in 0..32 {
            assert_eq!(
                compact_img[nz(r, c, 32, 16)],
                product(r, c),
                "compact ({r}, {c})"
            );
            written[nz(r, c, 32, 16)] = true;
            assert_eq!(
                compact_out[r * 32 + c],
                product(r, c),
                "compact store ({r}, {c})"
            );
        }
    }
    for (i, w) in written.iter().enumerate() {
        if !w {
            assert_eq!(compact_img[i], -1.0, "compact image {i} must be untouched");
        }
    }
    let window = bufs[8].as_u16();
    for r in 0..16 {
        for c in 0..32 {
            assert_eq!(
                window[r * 32 + c],
                a[(16 + r) * 64 + 32 + c],
                "window ({r}, {c})"
            );
        }
    }
}

#[test]
fn vector_layouts_alias_and_pad() {
    let program = build(
        "layouts_vector",
        &one_task(10, 0, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(0, "layouts_vector", vector_source())],
    );
    let v16 = values(16, 21, 3.0);
    let xb: Vec<u16> = values(16 * 64, 22, 3.0)
        .iter()
        .map(|v| bf16_rne(*v))
        .collect();
    let x = values(16 * 64, 23, 3.0);
    let xi: Vec<i32> = (0..16 * 64).map(|i| i * 3 - 100).collect();
    let mut bufs = vec![
        Buf::f32(&[16], &v16),
        Buf::u16(Dt::Bf16, &[16, 64], &xb),
        Buf::f32(&[16, 64], &x),
        Buf::i32(&[16, 64], &xi),
        Buf::zeros(Dt::F32, &[32]),
        Buf::zeros(Dt::Bf16, &[16, 64]),
        Buf::zeros(Dt::Bf16, &[16, 64]),
        Buf::zeros(Dt::F32, &[4, 16, 64]),
        Buf::zeros(Dt::I32, &[16, 64]),
        Buf::zeros(Dt::F32, &[256 + 2048]),
    ];
    run(&program, &mut bufs, &[]);
    let alias = bufs[4].as_f32();
    for i in 0..16 {
        assert_eq!(alias[i], v16[i] * 2.0, "[16,1] sees the [1,16] write ({i})");
        assert_eq!(alias[16 + i], v16[i] * 2.0 + 1.0, "TRESHAPE view ({i})");
    }
    let (nz_img, back) = (bufs[5].as_u16(), bufs[6].as_u16());
    for r in 0..16 {
        for c in 0..64 {
            assert_eq!(
                nz_img[nz(r, c, 16, 16)],
                xb[r * 64 + c],
                "Vec Nz ({r}, {c})"
            );
        }
    }
    assert_eq!(back, xb, "ND -> Nz -> ND");
    let pads = bufs[7].as_f32();
    for r in 0..16 {
        for c in 0..64 {
            let i = r * 64 + c;
            let v = x[i];
            assert_eq!(
                pads[i],
                if c < 37 { v } else { f32::NEG_INFINITY },
                "Min pad ({r}, {c})"
            );
            assert_eq!(
                pads[1024 + i],
                if r < 10 { v } else { f32::INFINITY },
                "Max pad ({r}, {c})"
            );
            assert_eq!(
                pads[2048 + i],
                if r < 10 { v } else { 0.0 },
                "load pad ({r}, {c})"
            );
            let e = if r < 8 && c < 32 {
                v
            } else {
                f32::NEG_INFINITY
            };
            assert_eq!(pads[3072 + i], e, "expand pad ({r}, {c})");
        }
    }
    let ipad = bufs[8].as_i32();
    for r in 0..16 {
        for c in 0..64 {
            let want = if c < 20 { xi[r * 64 + c] } else { i32::MIN };
            assert_eq!(ipad[r * 64 + c], want, "int Min pad ({r}, {c})");
        }
    }
    let misc = bufs[9].as_f32();
    for r in 0..16 {
        for c in 0..16 {
            assert_eq!(misc[c * 16 + r], x[r * 64 + c], "TTRANS ({r}, {c})");
        }
        for c in 0..64 {
            let want = if c < 32 {
                x[r * 64 + 32 + c]
            } else {
                x[r * 64 + c - 32]
            };
            assert_eq!(misc[256 + r * 64 + c], want, "TCONCAT ({r}, {c})");
        }
    }
    let win = &misc[256 + 1024..];
    for r in 0..16 {
        for c in 0..64 {
            let mut want = if (10..15).contains(&r) && (50..59).contains(&c) {
                x[(r - 10 + 3) * 64 + (c - 50 + 7)]
            } else {
                0.0
            };
            if r == 0 && c == 1 {
                want = x[3 * 64 + 7] + 100.0;
            }
            assert_eq!(
                win[r * 64 + c],
                want,
                "TEXTRACT/TINSERT/SetValue ({r}, {c})"
            );
        }
    }
}
