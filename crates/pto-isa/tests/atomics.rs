//! GM atomics: eight SPMD blocks add into one GM tile concurrently, many times over, with
//! `TSTORE<..., AtomicType::AtomicAdd>` (f32, bf16, i32) and with `set_atomic_add()`.

use pto_isa::reference::bf16_value;
use pto_isa::wrapper;

use crate::common::{build, one_task, run, values, Buf, Dt, Kernel};

const BLOCKS: usize = 8;
const REPEAT: usize = 40;

const BODY: &str = r#"
template <typename T> using TT = Tile<TileType::Vec, T, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null>;
template <typename T> using G = GlobalTensor<T, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND>;

static __aicore__ void atomics(__gm__ float* x, __gm__ float* sum_f, __gm__ bfloat16_t* sum_b, __gm__ int32_t* sum_i,
                               __gm__ float* sum_mode, __gm__ float* own, int32_t block) {
#if defined(__DAV_VEC__)
    set_mask_norm();
    set_vector_mask(-1, -1);
    TT<float> t; TASSIGN(t, 0x0);
    G<float> gx(x);
    TLOAD(t, gx);
    TT<bfloat16_t> tb; TASSIGN(tb, 0x1000);   // x * 8 in {-2, .., 2}: sums stay exact in bf16
    TT<float> t8; TASSIGN(t8, 0x3000);
    TMULS(t8, t, 8.0f);
    TCVT(tb, t8, RoundMode::CAST_RINT);
    TMULS(t, t, (float)(block + 1));
    TT<int32_t> ti; TASSIGN(ti, 0x2000);
    TCVT(ti, t, RoundMode::CAST_RINT);
    G<float> gf(sum_f); G<bfloat16_t> gb(sum_b); G<int32_t> gi(sum_i); G<float> gm(sum_mode);
    for (int r = 0; r < REPEAT; ++r) {
        TSTORE<TT<float>, G<float>, AtomicType::AtomicAdd>(gf, t);
        if (r < 16) TSTORE<TT<bfloat16_t>, G<bfloat16_t>, AtomicType::AtomicAdd>(gb, tb);
        TSTORE<TT<int32_t>, G<int32_t>, AtomicType::AtomicAdd>(gi, ti);
        set_atomic_add();
        set_atomic_f32();
        TSTORE(gm, t);
        set_atomic_none();
    }
    G<float> go(own + 1024 * block);
    TSTORE(go, t);   // after set_atomic_none(): a plain store
#endif
}
"#;

fn source() -> String {
    let body = BODY.replace("REPEAT", &REPEAT.to_string());
    let names = [
        ("float", "x"),
        ("float", "sum_f"),
        ("bfloat16_t", "sum_b"),
        ("int32_t", "sum_i"),
        ("float", "sum_mode"),
        ("float", "own"),
    ];
    let mut unpack: String = names
        .iter()
        .enumerate()
        .map(|(i, (t, n))| wrapper::tensor_arg(i, t, n))
        .collect();
    unpack += "    int32_t block = get_block_idx(args);\n";
    wrapper::kernel(
        &body,
        &wrapper::entry(
            &unpack,
            "atomics(x, sum_f, sum_b, sum_i, sum_mode, own, block)",
        ),
    )
}

#[test]
fn atomic_stores_from_concurrent_blocks_add_up() {
    let program = build(
        "atomics",
        &one_task(
            6,
            0,
            &format!("p.launch_spec.set_block_num({BLOCKS});"),
            "rt_submit_aiv_task(0, p)",
        ),
        &[Kernel::aiv(0, "atomics", source())],
    );
    // Multiples of 1/8: every partial sum is exact in f32, bf16 (|sum| <= 256) and i32.
    let x: Vec<f32> = values(1024, 61, 1.0)
        .iter()
        .map(|v| (v * 1.9).round() * 0.125)
        .collect();
    let mut bufs = vec![
        Buf::f32(&[16, 64], &x),
        Buf::zeros(Dt::F32, &[16, 64]),
        Buf::zeros(Dt::Bf16, &[16, 64]),
        Buf::zeros(Dt::I32, &[16, 64]),
        Buf::zeros(Dt::F32, &[16, 64]),
        Buf::zeros(Dt::F32, &[BLOCKS as u32, 16, 64]),
    ];
    run(&program, &mut bufs, &[]);
    let weight: f32 = (1..=BLOCKS).map(|b| b as f32).sum::<f32>() * REPEAT as f32;
    let (f, b, i, m, own) = (
        bufs[1].as_f32(),
        bufs[2].as_u16(),
        bufs[3].as_i32(),
        bufs[4].as_f32(),
        bufs[5].as_f32(),
    );
    for k in 0..1024 {
        assert_eq!(f[k], x[k] * weight, "f32 atomic sum [{k}]");
        assert_eq!(m[k], x[k] * weight, "set_atomic_add sum [{k}]");
        let ints: i32 = (1..=BLOCKS)
            .map(|blk| (x[k] * blk as f32).round_ties_even() as i32)
            .sum::<i32>()
            * REPEAT as i32;
        assert_eq!(i[k], ints, "i32 atomic sum [{k}]");
        let bsum = x[k] * 8.0 * (BLOCKS * 16) as f32;
        assert_eq!(bf16_value(b[k]), bsum, "bf16 atomic sum [{k}]");
        for blk in 0..BLOCKS {
            assert_eq!(
                own[blk * 1024 + k],
                x[k] * (blk + 1) as f32,
                "plain store of block {blk}"
            );
        }
    }
}
