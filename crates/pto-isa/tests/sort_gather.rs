//! TSORT32 (value-index pairs), TMRGSORT (single list and multi-list with executed counts),
//! TGATHER (index and mask-pattern forms) and TCI.

use pto_isa::wrapper;

use crate::common::{build, one_task, run, values, Buf, Dt, Kernel};

const BODY: &str = r#"
template <typename T, int R, int C> using V = Tile<TileType::Vec, T, R, C, BLayout::RowMajor, R, C, SLayout::NoneBox, 512, PadValue::Null>;
template <typename T, int R, int C> using G = GlobalTensor<T, pto::Shape<1, 1, 1, R, C>, pto::Stride<R * C, R * C, R * C, C, 1>>;

static __aicore__ void sort_gather(__gm__ float* x, __gm__ uint32_t* idx, __gm__ float* sorted, __gm__ float* merged,
                                   __gm__ float* merged2, __gm__ uint32_t* counts, __gm__ float* gathered,
                                   __gm__ int32_t* ramps, __gm__ int32_t* gidx) {
#if defined(__DAV_VEC__)
    set_mask_norm();
    set_vector_mask(-1, -1);
    // Two rows of 128 values; indices are a row of 128 (shared by both rows).
    V<float, 2, 128> src; TASSIGN(src, 0x0);
    G<float, 2, 128> gx(x);
    TLOAD(src, gx);
    V<uint32_t, 1, 128> ix; TASSIGN(ix, 0x1000);
    G<uint32_t, 1, 128> gix(idx);
    TLOAD(ix, gix);
    V<float, 2, 256> dst; TASSIGN(dst, 0x2000);
    TSORT32(dst, src, ix);
    G<float, 2, 256> gs(sorted);
    TSTORE(gs, dst);

    // Row 0 of dst holds four sorted blocks of 32 pairs = 64 floats each: merge them.
    V<float, 1, 256> row0; TASSIGN(row0, 0x2000);
    V<float, 1, 256> m; TASSIGN(m, 0x4000);
    TMRGSORT(m, row0, 64);
    G<float, 1, 256> gm(merged);
    TSTORE(gm, m);

    // Multi-list: the first two blocks of row 1 (32 pairs each) and the third as a third list.
    V<float, 1, 64> l0; TASSIGN(l0, 0x2000 + 256 * 4);
    V<float, 1, 64> l1; TASSIGN(l1, 0x2000 + 256 * 4 + 64 * 4);
    V<float, 1, 64> l2; TASSIGN(l2, 0x2000 + 256 * 4 + 128 * 4);
    V<float, 1, 192> m2; TASSIGN(m2, 0x5000);
    V<float, 1, 64> tmp; TASSIGN(tmp, 0x6000);
    MrgSortExecutedNumList ex{};
    TMRGSORT<V<float, 1, 192>, V<float, 1, 64>, V<float, 1, 64>, V<float, 1, 64>, V<float, 1, 64>, false>(m2, ex, tmp, l0, l1, l2);
    G<float, 1, 192> gm2(merged2);
    TSTORE(gm2, m2);
    counts[0] = ex.mrgSortList0; counts[1] = ex.mrgSortList1; counts[2] = ex.mrgSortList2; counts[3] = ex.mrgSortList3;
    MrgSortExecutedNumList ex2{};
    V<float, 1, 64> shorter; TASSIGN(shorter, 0x7000);
    TEXPANDS(shorter, 0.0f);
    Tile<TileType::Vec, float, 1, 64, BLayout::RowMajor, 1, -1, SLayout::NoneBox, 512, PadValue::Null> l1short(16);
    TASSIGN(l1short, 0x2000 + 256 * 4 + 64 * 4);
    TMRGSORT<V<float, 1, 192>, V<float, 1, 64>, V<float, 1, 64>, decltype(l1short), true>(m2, ex2, tmp, l0, l1short);
    counts[4] = ex2.mrgSortList0; counts[5] = ex2.mrgSortList1;

    // Gathers.
    V<int32_t, 2, 64> gi; TASSIGN(gi, 0x8000);
    G<int32_t, 2, 64> ggi(gidx);
    TLOAD(gi, ggi);
    V<float, 2, 64> g; TASSIGN(g, 0x9000);
    TGATHER(g, src, gi, tmp);
    G<float, 2, 64> gg(gathered);
    TSTORE(gg, g);
    V<float, 1, 64> even; TASSIGN(even, 0xA000);
    V<float, 1, 128> row; TASSIGN(row, 0x0);
    TGATHER<V<float, 1, 64>, V<float, 1, 128>, MaskPattern::P0101>(even, row);
    G<float, 1, 64> ge(gathered + 128);
    TSTORE(ge, even);
    V<float, 1, 32> fourth; TASSIGN(fourth, 0xB000);
    TGATHER<V<float, 1, 32>, V<float, 1, 128>, MaskPattern::P1000>(fourth, row);
    G<float, 1, 32> gf(gathered + 192);
    TSTORE(gf, fourth);

    V<int32_t, 2, 16> up; TASSIGN(up, 0xC000);
    TCI<V<int32_t, 2, 16>, int32_t, 0>(up, 5);
    V<int32_t, 1, 16> down; TASSIGN(down, 0xC100);
    TCI<V<int32_t, 1, 16>, V<int32_t, 1, 16>, int32_t, 1>(down, 100, down);
    G<int32_t, 2, 16> gu(ramps); G<int32_t, 1, 16> gd(ramps + 32);
    TSTORE(gu, up); TSTORE(gd, down);
#endif
}
"#;

fn source() -> String {
    let names = [
        ("float", "x"),
        ("uint32_t", "idx"),
        ("float", "sorted"),
        ("float", "merged"),
        ("float", "merged2"),
        ("uint32_t", "counts"),
        ("float", "gathered"),
        ("int32_t", "ramps"),
        ("int32_t", "gidx"),
    ];
    let unpack: String = names
        .iter()
        .enumerate()
        .map(|(i, (t, n))| wrapper::tensor_arg(i, t, n))
        .collect();
    let call = format!(
        "sort_gather({})",
        names.iter().map(|(_, n)| *n).collect::<Vec<_>>().join(", ")
    );
    wrapper::kernel(BODY, &wrapper::entry(&unpack, &call))
}

/// (value, index) pairs as stored: value bits, index bits.
fn pairs(v: &[f32]) -> Vec<(f32, u32)> {
    v.chunks_exact(2).map(|p| (p[0], p[1].to_bits())).collect()
}

fn sort_desc(items: &mut [(f32, u32)]) {
    items.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap().then(a.1.cmp(&b.1)));
}

#[test]
fn sort_merge_gather_and_ramps() {
    let program = build(
        "sort_gather",
        &one_task(9, 0, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(0, "sort_gather", source())],
    );
    let mut x: Vec<f32> = values(256, 81, 10.0).iter().map(|v| v.round()).collect(); // ties
    x[3] = x[7];
    let idx: Vec<u32> = (0..128).map(|i| 1000 + i * 3).collect();
    let gidx: Vec<i32> = (0..128).map(|i| i * 37 % 300 - 20).collect(); // some out of range
    let mut bufs = vec![
        Buf::f32(&[2, 128], &x),
        Buf::u32(&[128], &idx),
        Buf::zeros(Dt::F32, &[2, 256]),
        Buf::zeros(Dt::F32, &[256]),
        Buf::zeros(Dt::F32, &[192]),
        Buf::zeros(Dt::U32, &[8]),
        Buf::zeros(Dt::F32, &[224]),
        Buf::zeros(Dt::I32, &[48]),
        Buf::i32(&[2, 64], &gidx),
    ];
    run(&program, &mut bufs, &[]);

    let sorted = pairs(&bufs[2].as_f32());
    let mut blocks = Vec::new();
    for r in 0..2 {
        for blk in 0..4 {
            let mut want: Vec<(f32, u32)> = (0..32)
                .map(|k| (x[r * 128 + blk * 32 + k], idx[blk * 32 + k]))
                .collect();
            sort_desc(&mut want);
            assert_eq!(
                &sorted[r * 128 + blk * 32..][..32],
                &want[..],
                "TSORT32 row {r} block {blk}"
            );
            blocks.push(want);
        }
    }
    let mut all: Vec<(f32, u32)> = blocks[..4].concat();
    all.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap()); // stable: earlier list first on ties
    assert_eq!(pairs(&bufs[3].as_f32()), all, "TMRGSORT single list");
    let mut three: Vec<(f32, u32)> = blocks[4..7].concat();
    three.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
    assert_eq!(pairs(&bufs[4].as_f32()), three, "TMRGSORT three lists");
    let counts = bufs[5].as_u32();
    assert_eq!(&counts[..4], &[32, 32, 32, 0], "executed counts");
    // Exhausted mode with a list of 8 pairs: the merge stops when the first list runs out.
    let (l0, short) = (&blocks[4][..], &blocks[5][..8]);
    let (mut c0, mut c1) = (0, 0);
    while c0 < l0.len() && c1 < short.len() {
        if short[c1].0 > l0[c0].0 {
            c1 += 1;
        } else {
            c0 += 1;
        }
    }
    assert_eq!(
        (counts[4] as usize, counts[5] as usize),
        (c0, c1),
        "executed counts (exhausted)"
    );

    let gathered = bufs[6].as_f32();
    for r in 0..2 {
        for c in 0..64 {
            let i = gidx[r * 64 + c];
            let want = if (0..256).contains(&i) {
                x[i as usize]
            } else {
                0.0
            };
            assert_eq!(gathered[r * 64 + c], want, "TGATHER ({r}, {c}) index {i}");
        }
    }
    for k in 0..64 {
        assert_eq!(gathered[128 + k], x[2 * k], "TGATHER P0101 [{k}]");
    }
    for k in 0..32 {
        assert_eq!(gathered[192 + k], x[4 * k + 3], "TGATHER P1000 [{k}]");
    }
    let ramps = bufs[7].as_i32();
    assert_eq!(
        &ramps[..32],
        &(5..37).collect::<Vec<i32>>()[..],
        "TCI ascending"
    );
    assert_eq!(
        &ramps[32..],
        &(85..=100).rev().collect::<Vec<i32>>()[..],
        "TCI descending"
    );
}
