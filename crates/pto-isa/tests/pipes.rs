//! TPUSH / TPOP / TFREE between the AIC and both AIVs of MIX tasks: cube -> vector with row
//! halves (more tiles than slots), vector -> cube with both lanes filling one slot, and a
//! DIR_BOTH pipe with an IsNoSplit broadcast and an odd column split back. Two blocks run
//! on two clusters, and the task runs twice, so pipe state must carry over between tasks.

use pto_isa::reference::{bf16_rne, bf16_value};
use pto_isa::wrapper;

use crate::common::{assert_bits, build, orchestration, run, values, Buf, Dt, Kernel};

const NT: usize = 10;
const BLOCKS: usize = 2;

const PIPES: &str = r#"
constexpr int NT = 10;
using P0 = TPipe<0, Direction::DIR_C2V, 4096, 4>;            // 16 x 64 f32 per slot
using P1 = TPipe<1, Direction::DIR_V2C, 2048, 2>;            // 16 x 64 bf16 per slot
using P2 = TPipe<2, Direction::DIR_BOTH, 1024, 2, 2, true>;  // 16 x 16 f32 per slot
template <typename T, int R, int C> using G = GlobalTensor<T, pto::Shape<1, 1, 1, R, C>, pto::Stride<R * C, R * C, R * C, C, 1>, pto::Layout::ND>;
"#;

const CUBE: &str = r#"
static __aicore__ void pipes_aic(__gm__ bfloat16_t* a, __gm__ bfloat16_t* b, __gm__ float* src16,
                                 __gm__ bfloat16_t* out_v2c, __gm__ float* out_both) {
#if defined(__DAV_CUBE__)
    const int64_t block = get_block_idx();
    auto p0 = P0(nullptr, 0, 0);
    auto p1 = P1(nullptr, 0, 0x40000);
    auto p2 = P2(nullptr, 0, 0x48000);
    using MatA = Tile<TileType::Mat, bfloat16_t, 16, 32, BLayout::ColMajor, 16, 32, SLayout::RowMajor, 512>;
    using MatB = Tile<TileType::Mat, bfloat16_t, 32, 64, BLayout::ColMajor, 32, 64, SLayout::RowMajor, 512>;
    using L = Tile<TileType::Left, bfloat16_t, 16, 32, BLayout::RowMajor, 16, 32, SLayout::RowMajor, 512>;
    using R = Tile<TileType::Right, bfloat16_t, 32, 64, BLayout::RowMajor, 32, 64, SLayout::ColMajor, 512>;
    using Acc = Tile<TileType::Acc, float, 16, 64, BLayout::ColMajor, 16, 64, SLayout::RowMajor, 1024, PadValue::Null, CompactMode::Null>;
    MatB mb; TASSIGN(mb, 0x1000);
    G<bfloat16_t, 32, 64> gb(b);
    TLOAD(mb, gb);
    R r; TASSIGN(r, 0x0);
    TMOV(r, mb);
    MatA ma; TASSIGN(ma, 0x0);
    L l; TASSIGN(l, 0x0);
    Acc acc; TASSIGN(acc, 0x0);
    for (int t = 0; t < NT; ++t) {
        G<bfloat16_t, 16, 32> ga(a + (block * NT + t) * 512);
        TLOAD(ma, ga);
        TMOV(l, ma);
        TMATMUL(acc, l, r);
        TPUSH<P0, Acc, TileSplitAxis::TILE_UP_DOWN>(p0, acc);
    }
    using MatV = Tile<TileType::Mat, bfloat16_t, 16, 64, BLayout::ColMajor, 16, 64, SLayout::RowMajor, 512>;
    for (int t = 0; t < NT; ++t) {
        MatV mv;
        TPOP<P1, MatV, TileSplitAxis::TILE_UP_DOWN>(p1, mv);
        G<bfloat16_t, 16, 64> go(out_v2c + (block * NT + t) * 1024);
        TSTORE(go, mv);
        TFREE<P1, TileSplitAxis::TILE_UP_DOWN>(p1);
    }
    using Mat16 = Tile<TileType::Mat, float, 16, 16, BLayout::ColMajor, 16, 16, SLayout::RowMajor, 512>;
    using Acc16 = Tile<TileType::Acc, float, 16, 16, BLayout::ColMajor, 16, 16, SLayout::RowMajor, 1024>;
    Mat16 m16; TASSIGN(m16, 0x10000);
    G<float, 16, 16> gs(src16 + block * 256);
    TLOAD(m16, gs);
    Acc16 a16; TASSIGN(a16, 0x8000);
    TMOV(a16, m16);
    TPUSH<P2, Acc16, TileSplitAxis::TILE_NO_SPLIT>(p2, a16);
    using Back = Tile<TileType::Mat, float, 16, 16, BLayout::ColMajor, 16, -1, SLayout::RowMajor, 512>;
    Back back(15);
    TPOP<P2, Back, TileSplitAxis::TILE_LEFT_RIGHT_ODD>(p2, back);
    G<float, 16, 15> gback(out_both + block * 240);
    TSTORE(gback, back);
    TFREE<P2, TileSplitAxis::TILE_LEFT_RIGHT_ODD>(p2);
#endif
    ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
}
"#;

const VECTOR: &str = r#"
static __aicore__ void pipes_aiv(__gm__ float* out_c2v, int64_t block, int64_t lane) {
#if defined(__DAV_VEC__)
    set_mask_norm();
    set_vector_mask(-1, -1);
    auto p0 = P0(nullptr, 0x0, 0);
    auto p1 = P1(nullptr, 0, 0);
    auto p2 = P2(nullptr, 0x8000, 0);
    using Half = Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 8, 64, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>;
    using HalfB = Tile<TileType::Vec, bfloat16_t, 8, 64, BLayout::RowMajor, 8, 64, SLayout::NoneBox, 512, PadValue::Null>;
    Half scratch; TASSIGN(scratch, 0x4000);
    Half w; TASSIGN(w, 0x5000);
    for (int t = 0; t < NT; ++t) {
        Half v;
        TPOP<P0, Half, TileSplitAxis::TILE_UP_DOWN>(p0, v);
        G<float, 8, 64> go(out_c2v + ((block * NT + t) * 16 + lane * 8) * 64);
        TSTORE(go, v);
        for (int slow = 0; slow < 8; ++slow) { TEXP(scratch, v); TLOG(scratch, scratch); }
        TRELU(w, v);
        TMULS(w, w, 2.0f);
        HalfB wb; TASSIGN(wb, 0x10000 + t * 1024);
        TCVT(wb, w, RoundMode::CAST_RINT);
        TFREE<P0, TileSplitAxis::TILE_UP_DOWN>(p0);
    }
    for (int t = 0; t < NT; ++t) {
        HalfB wb; TASSIGN(wb, 0x10000 + t * 1024);
        TPUSH<P1, HalfB, TileSplitAxis::TILE_UP_DOWN>(p1, wb);
    }
    using Bc = Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, -1, SLayout::NoneBox, 512, PadValue::Null>;
    Bc bc(15);
    TPOP<P2, Bc, TileSplitAxis::TILE_NO_SPLIT>(p2, bc);   // IsNoSplit: both lanes get the tile
    using Part = Tile<TileType::Vec, float, 16, 8, BLayout::RowMajor, 16, -1, SLayout::NoneBox, 512, PadValue::Null>;
    Part part(lane == 0 ? 8 : 7); TASSIGN(part, 0x6000);
    TEXTRACT(part, bc, 0, lane == 0 ? 0 : 8);
    TFREE<P2, TileSplitAxis::TILE_NO_SPLIT>(p2);
    TADDS(part, part, 100.0f * (float)(lane + 1));
    TPUSH<P2, Part, TileSplitAxis::TILE_LEFT_RIGHT_ODD>(p2, part);
#endif
    ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
}
"#;

fn aic_source() -> String {
    let names = [
        ("bfloat16_t", "a"),
        ("bfloat16_t", "b"),
        ("float", "src16"),
        ("float", "out_c2v"),
        ("bfloat16_t", "out_v2c"),
        ("float", "out_both"),
    ];
    let unpack: String = names
        .iter()
        .enumerate()
        .map(|(i, (t, n))| wrapper::tensor_arg(i, t, n))
        .collect();
    wrapper::kernel(
        &format!("{PIPES}{CUBE}"),
        &wrapper::entry(
            &format!("{unpack}    (void)out_c2v;\n"),
            "pipes_aic(a, b, src16, out_v2c, out_both)",
        ),
    )
}

fn aiv_source() -> String {
    let unpack = format!(
        "{}    int64_t block = get_block_idx(args);\n    int64_t lane = get_sub_block_id(args);\n",
        wrapper::tensor_arg(3, "float", "out_c2v")
    );
    wrapper::kernel(
        &format!("{PIPES}{VECTOR}"),
        &wrapper::entry(&unpack, "pipes_aiv(out_c2v, block, lane)"),
    )
}

#[test]
fn mix_tasks_stream_tiles_through_pipes() {
    let mut body = String::new();
    for i in 0..6 {
        body += &format!("    ChipTensor t{i} = orch_args.tensor({i}).ref();\n");
    }
    // Two identical tasks: the second depends on the first (in/out tensors) and reuses the
    // clusters' pipe state.
    for _ in 0..2 {
        body += "    {\n        CoreTaskArgs p;\n        p.add_inout(t0, t1, t2, t3, t4, t5);\n";
        body += &format!("        p.launch_spec.set_block_num({BLOCKS});\n");
        body += "        rt_submit_task(MixedKernels{0, 1, 1}, p);\n    }\n";
    }
    let program = build(
        "pipes",
        &orchestration(6, &body),
        &[
            Kernel::aic(0, "pipes_aic", aic_source()),
            Kernel::aiv(1, "pipes_aiv", aiv_source()),
        ],
    );
    let a: Vec<u16> = values(BLOCKS * NT * 16 * 32, 71, 2.0)
        .iter()
        .map(|v| bf16_rne(*v))
        .collect();
    let b: Vec<u16> = values(32 * 64, 72, 2.0)
        .iter()
        .map(|v| bf16_rne(*v))
        .collect();
    let src16 = values(BLOCKS * 256, 73, 5.0);
    let mut bufs = vec![
        Buf::u16(Dt::Bf16, &[(BLOCKS * NT) as u32, 16, 32], &a),
        Buf::u16(Dt::Bf16, &[32, 64], &b),
        Buf::f32(&[BLOCKS as u32, 16, 16], &src16),
        Buf::zeros(Dt::F32, &[(BLOCKS * NT) as u32, 16, 64]),
        Buf::zeros(Dt::Bf16, &[(BLOCKS * NT) as u32, 16, 64]),
        Buf::zeros(Dt::F32, &[BLOCKS as u32, 16, 15]),
    ];
    run(&program, &mut bufs, &[]);

    let mut acc = Vec::new();
    for tile in 0..BLOCKS * NT {
        for r in 0..16 {
            for c in 0..64 {
                let s = (0..32).fold(0f32, |s, k| {
                    bf16_value(a[tile * 512 + r * 32 + k]).mul_add(bf16_value(b[k * 64 + c]), s)
                });
                acc.push(s);
            }
        }
    }
    assert_bits("cube -> vector halves", &bufs[3].as_f32(), &acc);
    let v2c: Vec<u16> = acc.iter().map(|v| bf16_rne(v.max(0.0) * 2.0)).collect();
    assert_eq!(
        bufs[4].as_u16(),
        v2c,
        "vector -> cube, both lanes into one slot"
    );
    let both = bufs[5].as_f32();
    for blk in 0..BLOCKS {
        for r in 0..16 {
            for c in 0..15 {
                let lane = if c < 8 { 0.0 } else { 1.0 };
                let want = src16[blk * 256 + r * 16 + c] + 100.0 * (lane + 1.0);
                assert_eq!(
                    both[blk * 240 + r * 15 + c],
                    want,
                    "DIR_BOTH block {blk} ({r}, {c})"
                );
            }
        }
    }
}
