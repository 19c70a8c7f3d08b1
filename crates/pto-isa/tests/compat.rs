//! Source compatibility: the deepseek `__CPU_SIM` cache shim and the newer direct
//! `dcci` / `dsb` calls, the old ptoas output form (10-parameter tiles, static valid shapes,
//! GlobalTensor without Layout, `__global__ AICORE` functions), the new form (11 parameters,
//! `-1` valid dims given at construction, `const int64_t` scalars, `// pto:` comments,
//! `pto::`-qualified names), a mixed kernel file with both bodies, and `pipe_sync.h`.

use pto_isa::wrapper;

use crate::common::{build, orchestration, run, values, Buf, Dt, Kernel};

/// The new ptoas form, with cache maintenance as both kernel styles spell it.
const NEW_FORM: &str = r#"
static __aicore__ void scale_new(__gm__ float* v1, __gm__ float* v2, float v3) {
    const int64_t v4 = 16;
    const int64_t v5 = 64;
    const int64_t v6 = 0;
    const int64_t v7 = 4096;
    RoundMode v8 = RoundMode::CAST_RINT;
    (void)v8;
    using T = float;
#if defined(__DAV_CUBE__)
    // the cube half of a mixed kernel: compiled out of the AIV library
    pto::Tile<pto::TileType::Acc, float, 16, 16, pto::BLayout::ColMajor, 16, 16, pto::SLayout::RowMajor, 1024> unused;
    (void)unused;
#endif
#if defined(__DAV_VEC__)
    set_mask_norm();
    set_vector_mask(-1, -1);
    // pto: %x
    Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>
        v9 = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
                  CompactMode::Null>(v4, v5);
    uint64_t v10 = (uint64_t)v6;
    TASSIGN(v9, v10);
    // pto: %x_view
    pto::Shape<1, 1, 1, -1, -1> v11 = pto::Shape<1, 1, 1, -1, -1>(v4 / v4, v4 / v4, v4 / v4, v4, v5);
    pto::Stride<-1, -1, -1, -1, -1> v12 = pto::Stride<-1, -1, -1, -1, -1>(v4 * v5, v4 * v5, v4 * v5, v5, v4 / v4);
    GlobalTensor<float, pto::Shape<1, 1, 1, -1, -1>, pto::Stride<-1, -1, -1, -1, -1>, pto::Layout::ND> v13 =
        GlobalTensor<float, pto::Shape<1, 1, 1, -1, -1>, pto::Stride<-1, -1, -1, -1, -1>, pto::Layout::ND>(v1, v11, v12);
    __gm__ float* v14 = PTOAS__GLOBAL_TENSOR_DATA(v13);
    PTOAS__DCCI_SINGLE_CACHE_LINE(v14);
    dcci((__gm__ void*)v14, cache_line_t::ENTIRE_DATA_CACHE, cache_line_t::CACHELINE_OUT);
    dsb(DSB_DDR);
    set_flag(PIPE_S, PIPE_MTE2, EVENT_ID0);
    wait_flag(PIPE_S, PIPE_MTE2, EVENT_ID0);
    TLOAD(v9, v13);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>
        v15 = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
                   CompactMode::Null>(v4, v5);
    TASSIGN(v15, (uint64_t)v7);
    TMULS(v15, v9, v3);
    pipe_barrier(PIPE_V);
    TADDS(v15, v15, 1.0f);
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    GlobalTensor<float, pto::Shape<1, 1, 1, -1, -1>, pto::Stride<-1, -1, -1, -1, -1>, pto::Layout::ND> v16 =
        GlobalTensor<float, pto::Shape<1, 1, 1, -1, -1>, pto::Stride<-1, -1, -1, -1, -1>, pto::Layout::ND>(v2, v11, v12);
    TSTORE(v16, v15);
    pipe_sync();
#endif
    ptoas_auto_sync_tail(PTOAutoSyncTailMode::kSetWaitMte3ToSEvent0);
    return;
}
"#;

/// The old ptoas form (after PyPTO's preprocessing turned `__global__ AICORE` into
/// `static __aicore__`; AICORE on a helper stays).
const OLD_FORM: &str = r#"
AICORE inline float scale_of(float s) { return s; }

static __aicore__ void scale_old(__gm__ float* v1, __gm__ float* v2, float v3) {
  unsigned v4 = 0;
  const int32_t v5 = 64;
  const int32_t v6 = 1;
  using T = float;
#if defined(__DAV_VEC__)
  set_mask_norm();
  set_vector_mask(-1, -1);
  pto::Shape<1, 1, 1, 16, 64> v7 = pto::Shape<1, 1, 1, 16, 64>();
  pto::Stride<1024, 1024, 1024, 64, 1> v8 = pto::Stride<1024, 1024, 1024, 64, 1>();
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>> v9 =
      GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>>(v1 + (v4 + v4 * (unsigned) v5 + v4 * (unsigned) v6), v7, v8);
  Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null> v10;
  TASSIGN(v10, 0);
  Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null> v11;
  TASSIGN(v11, 4096);
  TLOAD(v10, v9);
  TMULS(v11, v10, scale_of(v3));
  TADDS(v11, v11, 1.0f);
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>> v12 =
      GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>>(v2, v7, v8);
  TSTORE(v12, v11);
#endif
  return;
}
"#;

fn entry(func: &str, out: usize) -> String {
    let unpack = format!(
        "{}{}{}    (void)get_block_idx(args); (void)get_block_idx(); (void)get_block_num(args);\n",
        wrapper::tensor_arg(0, "float", "x"),
        wrapper::tensor_arg(out, "float", "y"),
        wrapper::scalar_arg(4, "float", "s"),
    );
    wrapper::entry(&unpack, &format!("{func}(x, y, s)"))
}

#[test]
fn kernel_styles_compile_unchanged_and_agree() {
    let with_sync = |body: &str| format!("#include \"pipe_sync.h\"\n{body}");
    let kernels = [
        Kernel::aiv(
            0,
            "new_form_shim",
            wrapper::kernel_with_shim(&with_sync(NEW_FORM), &entry("scale_new", 1)),
        ),
        Kernel::aiv(
            1,
            "new_form",
            wrapper::kernel(&with_sync(NEW_FORM), &entry("scale_new", 2)),
        ),
        Kernel::aiv(
            2,
            "old_form",
            wrapper::kernel(OLD_FORM, &entry("scale_old", 3)),
        ),
    ];
    let mut body = String::new();
    for i in 0..4 {
        body += &format!("    ChipTensor t{i} = orch_args.tensor({i}).ref();\n");
    }
    for k in 0..3 {
        body += &format!(
            "    {{ CoreTaskArgs p; p.add_inout(t0, t1, t2, t3); p.add_scalar(orch_args.scalar(0)); rt_submit_aiv_task({k}, p); }}\n"
        );
    }
    let program = build("compat", &orchestration(5, &body), &kernels);
    let x = values(1024, 91, 3.0);
    let mut bufs = vec![
        Buf::f32(&[16, 64], &x),
        Buf::zeros(Dt::F32, &[16, 64]),
        Buf::zeros(Dt::F32, &[16, 64]),
        Buf::zeros(Dt::F32, &[16, 64]),
    ];
    run(&program, &mut bufs, &[u64::from(2.5f32.to_bits())]);
    let want: Vec<f32> = x.iter().map(|v| v * 2.5 + 1.0).collect();
    for (k, name) in ["deepseek shim", "direct dcci/dsb", "old form"]
        .iter()
        .enumerate()
    {
        assert_eq!(bufs[1 + k].as_f32(), want, "{name}");
    }
}

/// A hand-written MIX kernel in the style of Simpler's examples: one source compiled for the
/// cube and the vector cores (`if constexpr` on `__DAV_CUBE__` / `__DAV_VEC__`), PTO-ISA's
/// `pto/common/*` headers, tile sizes from `C0_SIZE_BYTE`, only `using pto::X;` declarations
/// (no `using namespace pto;`), so `TPUSH<...>(...)`, `TPOP<...>(...)` and `TFREE<...>(...)`
/// are found by argument-dependent lookup under -std=c++17; the lanes set the pipe endpoints'
/// entry offsets as Simpler's MIX paged attention does.
const HAND_MIX: &str = r#"
#include <cstdint>
#include <pto/pto-inst.hpp>
#include <pto/common/constants.hpp>
#include <pto/common/pto_tile.hpp>
#include <pto/common/fifo.hpp>
#include <pto/common/type.hpp>
#include <pto/common/debug.h>
#include "tensor.h"

using pto::BLayout;
using pto::Direction;
using pto::GlobalTensor;
using pto::Shape;
using pto::SLayout;
using pto::Tile;
using pto::TileAcc;
using pto::TileLeft;
using pto::TileRight;
using pto::TileSplitAxis;
using pto::TileType;
using pto::TPipe;

#ifdef __DAV_CUBE__
constexpr bool ON_CUBE = true;
#else
constexpr bool ON_CUBE = false;
#endif

constexpr int EDGE = 32;
constexpr int KDIM = (EDGE * 4 + pto::C0_SIZE_BYTE - 1) / pto::C0_SIZE_BYTE * (pto::C0_SIZE_BYTE / 4);
constexpr int HALF = EDGE / 2;
using Product = TileAcc<float, EDGE, EDGE, EDGE, EDGE>;
using HalfTile = Tile<TileType::Vec, float, HALF, EDGE, BLayout::RowMajor, HALF, EDGE>;
using Fifo = TPipe<3, Direction::DIR_C2V, sizeof(float) * HALF * EDGE, 2>;
template <int R, int C> using G = GlobalTensor<float, Shape<1, 1, 1, R, C>, pto::Stride<R * C, R * C, R * C, C, 1>>;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ Tensor* ta = reinterpret_cast<__gm__ Tensor*>(args[0]);
    __gm__ Tensor* tb = reinterpret_cast<__gm__ Tensor*>(args[1]);
    __gm__ Tensor* tc = reinterpret_cast<__gm__ Tensor*>(args[2]);
    Fifo fifo(nullptr, 0U, 0U);
    if constexpr (ON_CUBE) {
        static_assert(KDIM == EDGE, "C0_SIZE_BYTE is 32 bytes");
        G<EDGE, KDIM> ga(reinterpret_cast<__gm__ float*>(ta->buffer.addr) + ta->start_offset);
        G<KDIM, EDGE> gb(reinterpret_cast<__gm__ float*>(tb->buffer.addr) + tb->start_offset);
        Tile<TileType::Mat, float, EDGE, KDIM, BLayout::ColMajor, EDGE, KDIM, SLayout::RowMajor, 512> ma;
        Tile<TileType::Mat, float, KDIM, EDGE, BLayout::ColMajor, KDIM, EDGE, SLayout::RowMajor, 512> mb;
        TASSIGN(ma, 0x0);
        TASSIGN(mb, 0x10000);
        TileLeft<float, EDGE, KDIM, EDGE, KDIM> left;
        TileRight<float, KDIM, EDGE, KDIM, EDGE> right;
        Product acc;
        TASSIGN(left, 0x0);
        TASSIGN(right, 0x0);
        TASSIGN(acc, 0x0);
        TLOAD(ma, ga);
        TLOAD(mb, gb);
        TMOV(left, ma);
        TMOV(right, mb);
        TMATMUL(acc, left, right);
        fifo.prod.setEntryOffset(0);
        TPUSH<Fifo, Product, TileSplitAxis::TILE_UP_DOWN>(fifo, acc);
    } else {
        uint32_t lane = get_subblockid();
        // Device kernels give each lane's slot offset explicitly; it must not move the data here.
        fifo.cons.setEntryOffset(static_cast<int>(lane * HALF * EDGE * sizeof(float)));
        __gm__ float* c = reinterpret_cast<__gm__ float*>(tc->buffer.addr) + tc->start_offset + lane * HALF * EDGE;
        G<HALF, EDGE> gc(c);
        HalfTile popped, old, sum;
        TASSIGN(popped, 0x0);
        TASSIGN(old, 0x8000);
        TASSIGN(sum, 0xA000);
        TPOP<Fifo, HalfTile, TileSplitAxis::TILE_UP_DOWN>(fifo, popped);
        TLOAD(old, gc);
        TADD(sum, old, popped);
        TFREE<Fifo, TileSplitAxis::TILE_UP_DOWN>(fifo);
        TSTORE(gc, sum);
    }
}
"#;

#[test]
fn hand_written_mix_kernel_without_using_namespace() {
    let body = "    ChipTensor t0 = orch_args.tensor(0).ref();\n    ChipTensor t1 = orch_args.tensor(1).ref();\n    ChipTensor t2 = orch_args.tensor(2).ref();\n    { CoreTaskArgs p; p.add_inout(t0, t1, t2); rt_submit_task(MixedKernels{0, 1, 1}, p); }\n";
    let program = build(
        "compat_hand_mix",
        &orchestration(3, body),
        &[
            Kernel::aic(0, "hand_mix_aic", HAND_MIX.to_string()),
            Kernel::aiv(1, "hand_mix_aiv", HAND_MIX.to_string()),
        ],
    );
    let a = values(32 * 32, 5, 2.0);
    let b = values(32 * 32, 6, 2.0);
    let c = values(32 * 32, 7, 10.0);
    let mut bufs = vec![
        Buf::f32(&[32, 32], &a),
        Buf::f32(&[32, 32], &b),
        Buf::f32(&[32, 32], &c),
    ];
    run(&program, &mut bufs, &[]);
    let mut want = Vec::new();
    for r in 0..32 {
        for col in 0..32 {
            let p = (0..32).fold(0f32, |s, k| a[r * 32 + k].mul_add(b[k * 32 + col], s));
            want.push(c[r * 32 + col] + p);
        }
    }
    assert_eq!(bufs[2].as_f32(), want, "C + A @ B through a split C2V pipe");
}

/// A scalar SPMD kernel in the style of Simpler's: each block writes its index to GM and
/// flushes the line with the cache-line names *unqualified* (`SINGLE_CACHE_LINE`,
/// `CACHELINE_OUT`, `ENTIRE_DATA_CACHE`), which Simpler's platform header gives at global
/// scope, next to the qualified spelling ptoas emits.
const BARE_CACHE_NAMES: &str = r#"
#include <cstdint>
#include <pto/pto-inst.hpp>
#include "tensor.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ Tensor* t = reinterpret_cast<__gm__ Tensor*>(args[0]);
    __gm__ float* out = reinterpret_cast<__gm__ float*>(t->buffer.addr) + t->start_offset;
    int32_t block = get_block_idx(args);
    dcci(out, ENTIRE_DATA_CACHE);
    out[block] = static_cast<float>(block + 1);
    dcci(&out[block], SINGLE_CACHE_LINE, CACHELINE_OUT);
    dcci(&out[block], cache_line_t::SINGLE_CACHE_LINE, cache_line_t::CACHELINE_OUT);
    int mode = SINGLE_CACHE_LINE + CACHELINE_OUT + ENTIRE_DATA_CACHE;
    (void)mode;
    dsb(DSB_DDR);
}
"#;

#[test]
fn unqualified_cache_line_names_compile_as_in_simplers_kernels() {
    let program = build(
        "compat_bare_cache_names",
        &crate::common::one_task(
            1,
            0,
            "p.launch_spec.set_block_num(4);",
            "rt_submit_aiv_task(0, p)",
        ),
        &[Kernel::aiv(
            0,
            "bare_cache_names",
            BARE_CACHE_NAMES.to_string(),
        )],
    );
    let mut bufs = vec![Buf::zeros(Dt::F32, &[4])];
    run(&program, &mut bufs, &[]);
    assert_eq!(bufs[0].as_f32(), vec![1.0, 2.0, 3.0, 4.0]);
}
