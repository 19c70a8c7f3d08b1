//! MGATHER / MSCATTER (PTO-ISA's SIMT gather and scatter): Elem and Row modes, the OOB
//! policies, last-writer-wins collisions and atomic accumulation, against scalar references;
//! an out-of-bounds index under `Undefined` is a fault naming it.

use crate::common::{build, one_task, run, run_with, values, Buf, Dt, Kernel};

/// Element scatter in the shape of Simpler's SIMT scene: load a source and an index tile,
/// scatter every element into a flat table, skipping indices outside it.
const ELEM_SCATTER: &str = r#"
#include <cstdint>
#include <pto/pto-inst.hpp>
#include "tensor.h"
using namespace pto;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ Tensor* ts = reinterpret_cast<__gm__ Tensor*>(args[0]);
    __gm__ Tensor* ti = reinterpret_cast<__gm__ Tensor*>(args[1]);
    __gm__ Tensor* to = reinterpret_cast<__gm__ Tensor*>(args[2]);
    using G8x32 = GlobalTensor<float, Shape<1, 1, 1, 8, 32>, Stride<1, 1, 1, 32, 1>>;
    using I8x32 = GlobalTensor<int32_t, Shape<1, 1, 1, 8, 32>, Stride<1, 1, 1, 32, 1>>;
    using Table = GlobalTensor<float, Shape<1, 1, 1, 1, 256>, Stride<1, 1, 1, 256, 1>>;
    G8x32 src(reinterpret_cast<__gm__ float*>(ts->buffer.addr) + ts->start_offset);
    I8x32 idx(reinterpret_cast<__gm__ int32_t*>(ti->buffer.addr) + ti->start_offset);
    Table out(reinterpret_cast<__gm__ float*>(to->buffer.addr) + to->start_offset);
    Tile<TileType::Vec, float, 8, 32, BLayout::RowMajor, 8, 32> s;
    Tile<TileType::Vec, int32_t, 8, 32, BLayout::RowMajor, 8, 32> i;
    TASSIGN(i, 0x0);
    TASSIGN(s, 0x400);
    TLOAD(i, idx);
    TLOAD(s, src);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    MSCATTER<Coalesce::Elem, ScatterAtomicOp::None, ScatterOOB::Skip>(out, s, i);
    pipe_barrier(PIPE_ALL);
}
"#;

#[test]
fn elem_scatter_skips_out_of_bounds_and_the_last_writer_wins() {
    let program = build(
        "gm_index_elem",
        &one_task(3, 0, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(0, "elem_scatter", ELEM_SCATTER.to_string())],
    );
    let src = values(256, 3, 4.0);
    // A permutation of 0..256 (i * 37 mod 256), then: element 5 goes out of bounds, and
    // elements 10 and 200 both target slot 7 (200 comes later in row-major order).
    let mut idx: Vec<i32> = (0..256).map(|i| i * 37 % 256).collect();
    idx[5] = 300;
    idx[10] = 7;
    idx[200] = 7;
    let mut bufs = vec![
        Buf::f32(&[8, 32], &src),
        Buf::i32(&[8, 32], &idx),
        Buf::f32(&[256], &[-1.0; 256]),
    ];
    run(&program, &mut bufs, &[]);
    let mut want = vec![-1.0f32; 256];
    for (k, &i) in idx.iter().enumerate() {
        if (0..256).contains(&i) {
            want[i as usize] = src[k];
        }
    }
    assert_eq!(want[7], src[200]);
    assert_eq!(bufs[2].as_f32(), want);
}

/// Row gather with Clamp, then a Row scatter-add with Wrap into a 4-row table, and an Elem
/// gather with Zero.
const ROW_GATHER_SCATTER: &str = r#"
#include <cstdint>
#include <pto/pto-inst.hpp>
#include "tensor.h"
using namespace pto;

template <class T> static __gm__ T* base(__gm__ Tensor* t) {
    return reinterpret_cast<__gm__ T*>(t->buffer.addr) + t->start_offset;
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ Tensor* const* t = reinterpret_cast<__gm__ Tensor* const*>(args);
    GlobalTensor<float, Shape<1, 1, 1, 8, 32>, Stride<1, 1, 1, 32, 1>> table(base<float>(t[0]));
    GlobalTensor<int32_t, Shape<1, 1, 1, 1, 8>, Stride<1, 1, 1, 8, 1>> ridx(base<int32_t>(t[1]));
    GlobalTensor<float, Shape<1, 1, 1, 8, 32>, Stride<1, 1, 1, 32, 1>> gathered(base<float>(t[2]));
    GlobalTensor<float, Shape<1, 1, 2, 2, 32>, Stride<1, 1, 64, 32, 1>> acc(base<float>(t[3]));
    GlobalTensor<int32_t, Shape<1, 1, 1, 8, 32>, Stride<1, 1, 1, 32, 1>> eidx(base<int32_t>(t[4]));
    GlobalTensor<float, Shape<1, 1, 1, 8, 32>, Stride<1, 1, 1, 32, 1>> picked(base<float>(t[5]));
    Tile<TileType::Vec, int32_t, 1, 8, BLayout::RowMajor, 1, 8> ri;
    Tile<TileType::Vec, float, 8, 32, BLayout::RowMajor, 8, 32> g;
    Tile<TileType::Vec, int32_t, 8, 32, BLayout::RowMajor, 8, 32> ei;
    Tile<TileType::Vec, float, 8, 32, BLayout::RowMajor, 8, 32> p;
    TASSIGN(ri, 0x0);
    TASSIGN(g, 0x100);
    TASSIGN(ei, 0x1100);
    TASSIGN(p, 0x2100);
    TLOAD(ri, ridx);
    TLOAD(ei, eidx);
    MGATHER<Coalesce::Row, GatherOOB::Clamp>(g, table, ri);
    TSTORE(gathered, g);
    MSCATTER<Coalesce::Row, ScatterAtomicOp::Add, ScatterOOB::Wrap>(acc, g, ri);
    MGATHER<Coalesce::Elem, GatherOOB::Zero>(p, table, ei);
    TSTORE(picked, p);
}
"#;

#[test]
fn row_gather_and_scatter_add_with_clamp_wrap_and_zero() {
    let program = build(
        "gm_index_row",
        &one_task(6, 0, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(
            0,
            "row_gather_scatter",
            ROW_GATHER_SCATTER.to_string(),
        )],
    );
    let table = values(256, 9, 2.0);
    let ridx: Vec<i32> = vec![3, 9, 0, 7, 1, 3, -1, 5];
    let eidx: Vec<i32> = (0..256)
        .map(|i| if i % 5 == 0 { 1000 } else { 255 - i })
        .collect();
    let mut bufs = vec![
        Buf::f32(&[8, 32], &table),
        Buf::i32(&[8], &ridx),
        Buf::zeros(Dt::F32, &[8, 32]),
        Buf::zeros(Dt::F32, &[4, 32]),
        Buf::i32(&[8, 32], &eidx),
        Buf::zeros(Dt::F32, &[8, 32]),
    ];
    run(&program, &mut bufs, &[]);
    // Row gather, Clamp: 9 and -1 (read unsigned) clamp to row 7.
    let gather_row = |i: i32| -> usize { (i as u32 as usize).min(7) };
    let mut gathered = Vec::new();
    for &i in &ridx {
        gathered.extend_from_slice(&table[gather_row(i) * 32..gather_row(i) * 32 + 32]);
    }
    assert_eq!(bufs[2].as_f32(), gathered);
    // Row scatter-add into 4 rows, Wrap: row index modulo 4, summed in source order.
    let mut acc = vec![0f32; 128];
    for (r, &i) in ridx.iter().enumerate() {
        let to = (i as u32 as usize) % 4;
        for c in 0..32 {
            acc[to * 32 + c] += gathered[r * 32 + c];
        }
    }
    assert_eq!(bufs[3].as_f32(), acc);
    // Elem gather, Zero: out-of-bounds elements become 0.
    let picked: Vec<f32> = eidx
        .iter()
        .map(|&i| {
            if (0..256).contains(&i) {
                table[i as usize]
            } else {
                0.0
            }
        })
        .collect();
    assert_eq!(bufs[5].as_f32(), picked);
}

#[test]
fn an_out_of_bounds_index_under_undefined_is_a_fault_naming_it() {
    let kernel = ELEM_SCATTER.replace("ScatterOOB::Skip", "ScatterOOB::Undefined");
    let program = build(
        "gm_index_undefined",
        &one_task(3, 0, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(0, "elem_scatter_undefined", kernel)],
    );
    let mut idx: Vec<i32> = (0..256).collect();
    idx[17] = 4096;
    let mut bufs = vec![
        Buf::f32(&[8, 32], &values(256, 1, 1.0)),
        Buf::i32(&[8, 32], &idx),
        Buf::zeros(Dt::F32, &[256]),
    ];
    let err = run_with(&program, &mut bufs, &[], &crate::common::config())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("MSCATTER: element index 4096 is outside the table (256 elements)"),
        "{err}"
    );
}

#[test]
fn row_mode_with_fewer_indices_than_rows_is_a_fault_naming_the_index_tile() {
    let kernel = ELEM_SCATTER
        .replace(
            "Tile<TileType::Vec, int32_t, 8, 32, BLayout::RowMajor, 8, 32> i;",
            "Tile<TileType::Vec, int32_t, 8, 32, BLayout::RowMajor, 1, 4> i;",
        )
        .replace("    TLOAD(i, idx);\n", "")
        .replace("MSCATTER<Coalesce::Elem,", "MSCATTER<Coalesce::Row,");
    let program = build(
        "gm_index_row_short",
        &one_task(3, 0, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(0, "row_scatter_short", kernel)],
    );
    let mut bufs = vec![
        Buf::f32(&[8, 32], &values(256, 1, 1.0)),
        Buf::i32(&[8, 32], &[0; 256]),
        Buf::zeros(Dt::F32, &[256]),
    ];
    let err = run_with(&program, &mut bufs, &[], &crate::common::config())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("MSCATTER: Row mode needs one index per source row (8)")
            && err.contains("has 4"),
        "{err}"
    );
}
