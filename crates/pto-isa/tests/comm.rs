//! The distributed instructions on one chip (the L3 ring exchange over two chip processes is
//! `crates/pto-cli/tests/l3_comm.rs`): TPUT / TGET of a 5-D view through a staging tile
//! smaller than it (chunks over rows, columns and the outer dimensions, into a destination with
//! other strides), the ping-pong and atomic forms, TNOTIFY Set / AtomicAdd on a Signal and a
//! strided Signal2D, TWAIT that holds at once, every TTEST comparison; TREDUCE (Sum, Max, Min)
//! and TBROADCAST over a ParallelGroup through tiles smaller than the views; a TPUT past its tensor
//! is a fault naming the bytes; a TWAIT that never holds is the scheduler timeout naming the
//! signal.

use pto_runtime::{ErrorCode, RuntimeError};

use pto_isa::wrapper;

use pto_toolchain::CoreKind;

use crate::common::{build, compile_ok, config, one_task, run, run_with, values, Buf, Dt, Kernel};

const BODY: &str = r#"
using GSrc = GlobalTensor<float, pto::Shape<1, 2, 3, 40, 70>, pto::Stride<16800, 8400, 2800, 70, 1>, pto::Layout::ND>;
// The destination's rows are 84 floats apart (14 of padding each).
using GDst = GlobalTensor<float, pto::Shape<1, 2, 3, 40, 70>, pto::Stride<20160, 10080, 3360, 84, 1>, pto::Layout::ND>;
using GI = GlobalTensor<int32_t, pto::Shape<1, 1, 1, 8, 16>, pto::Stride<128, 128, 128, 16, 1>, pto::Layout::ND>;

static __aicore__ void comm_ops(__gm__ float* src, __gm__ float* dst, __gm__ float* back, __gm__ int32_t* ones,
                                __gm__ int32_t* acc, __gm__ int32_t* sig, __gm__ int32_t* flags) {
#if defined(__DAV_VEC__)
    Tile<TileType::Vec, float, 16, 32> stage, stage2;
    TASSIGN(stage, 0x0);
    TASSIGN(stage2, 0x800);
    GSrc s(src);
    GDst d(dst);
    comm::TPUT(d, s, stage);
    GSrc b(back);
    comm::TGET(b, d, stage, stage2);

    Tile<TileType::Vec, int32_t, 4, 16> si;
    TASSIGN(si, 0x2000);
    GI one(ones), sum(acc);
    comm::TPUT<AtomicType::AtomicAdd>(sum, one, si);
    comm::TPUT(sum, one, si, AtomicType::AtomicAdd);
    comm::TPUT(sum, one, si, AtomicType::AtomicAdd);

    comm::Signal s0(sig);
    comm::TNOTIFY(s0, 5, comm::NotifyOp::Set);
    comm::Signal s1(sig + 1);
    comm::TNOTIFY(s1, 3, comm::NotifyOp::AtomicAdd);
    comm::TNOTIFY(s1, 3, comm::NotifyOp::AtomicAdd);
    comm::Signal2D<2, 2> grid(sig + 4, 4);   // sig[4], sig[5], sig[8], sig[9]
    comm::TNOTIFY(grid, 7, comm::NotifyOp::Set);
    comm::TWAIT(grid, 7, comm::WaitCmp::EQ);
    comm::TWAIT(s1, 6, comm::WaitCmp::GE);
    flags[0] = comm::TTEST(s0, 5, comm::WaitCmp::EQ);
    flags[1] = comm::TTEST(s0, 5, comm::WaitCmp::NE);
    flags[2] = comm::TTEST(s0, 4, comm::WaitCmp::GT);
    flags[3] = comm::TTEST(s0, 6, comm::WaitCmp::GE);
    flags[4] = comm::TTEST(s0, 6, comm::WaitCmp::LT);
    flags[5] = comm::TTEST(s0, 4, comm::WaitCmp::LE);
    flags[6] = comm::TTEST(grid, 7, comm::WaitCmp::EQ);
    comm::Signal2D<2, 3> wider(sig + 4, 4);   // takes in sig[6] (still 0)
    flags[7] = comm::TTEST(wider, 7, comm::WaitCmp::EQ);
#endif
}
"#;

fn source() -> String {
    let names = [
        ("float", "src"),
        ("float", "dst"),
        ("float", "back"),
        ("int32_t", "ones"),
        ("int32_t", "acc"),
        ("int32_t", "sig"),
        ("int32_t", "flags"),
    ];
    let unpack: String = names
        .iter()
        .enumerate()
        .map(|(i, (t, n))| wrapper::tensor_arg(i, t, n))
        .collect();
    wrapper::kernel(
        BODY,
        &wrapper::entry(&unpack, "comm_ops(src, dst, back, ones, acc, sig, flags)"),
    )
}

#[test]
fn puts_gets_notifies_waits_and_tests_on_one_chip() {
    let program = build(
        "comm_ops",
        &one_task(7, 0, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(0, "comm_ops", source())],
    );
    let n = 2 * 3 * 40 * 70;
    let x = values(n, 7, 4.0);
    let mut bufs = vec![
        Buf::f32(&[6, 40, 70], &x),
        Buf::f32(&[6, 40, 84], &vec![-1.0; 6 * 40 * 84]),
        Buf::zeros(Dt::F32, &[6, 40, 70]),
        Buf::i32(&[8, 16], &(0..128).collect::<Vec<i32>>()),
        Buf::i32(&[8, 16], &[10; 128]),
        Buf::zeros(Dt::I32, &[16]),
        Buf::i32(&[8], &[-1; 8]),
    ];
    run(&program, &mut bufs, &[]);
    let dst = bufs[1].as_f32();
    for (m, row) in dst.chunks(84).enumerate() {
        assert_eq!(&row[..70], &x[m * 70..m * 70 + 70], "dst row {m}");
        assert!(
            row[70..].iter().all(|&v| v == -1.0),
            "dst row {m}: padding written"
        );
    }
    assert_eq!(bufs[2].as_f32(), x, "TGET back");
    let want_acc: Vec<i32> = (0..128).map(|i| 10 + 3 * i).collect();
    assert_eq!(bufs[4].as_i32(), want_acc, "atomic TPUTs");
    let mut want_sig = vec![0i32; 16];
    want_sig[0] = 5;
    want_sig[1] = 6;
    for i in [4, 5, 8, 9] {
        want_sig[i] = 7;
    }
    assert_eq!(bufs[5].as_i32(), want_sig, "signals");
    assert_eq!(bufs[6].as_i32(), vec![1, 0, 1, 0, 1, 0, 1, 0], "TTEST");
}

#[test]
fn a_tput_past_its_destination_is_a_fault_naming_the_bytes() {
    let body = r#"
static __aicore__ void bad(__gm__ float* a, __gm__ float* b) {
#if defined(__DAV_VEC__)
    Tile<TileType::Vec, float, 16, 64> stage;
    TASSIGN(stage, 0);
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>> src(a);
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>> dst(b + 512);
    comm::TPUT(dst, src, stage);
#endif
}
"#;
    let unpack = wrapper::tensor_arg(0, "float", "a") + &wrapper::tensor_arg(1, "float", "b");
    let program = build(
        "comm_bad_put",
        &one_task(2, 0, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(
            0,
            "bad_put",
            wrapper::kernel(body, &wrapper::entry(&unpack, "bad(a, b)")),
        )],
    );
    let mut bufs = vec![
        Buf::zeros(Dt::F32, &[16, 64]),
        Buf::zeros(Dt::F32, &[16, 64]),
    ];
    match run_with(&program, &mut bufs, &[], &config()) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::KernelFault, "{message}");
            for want in [
                "kernel 'bad_put'",
                "pto::comm::TPUT of GlobalTensor<float, ND> at 0x",
                "touches GM bytes [0x",
            ] {
                assert!(message.contains(want), "{want:?} missing in: {message}");
            }
        }
        other => panic!("expected a kernel fault, got {other:?}"),
    }
    assert!(
        bufs[1].as_f32().iter().all(|&v| v == 0.0),
        "a faulting TPUT wrote"
    );
}

#[test]
fn a_twait_that_never_holds_is_a_scheduler_timeout_naming_the_signal() {
    let body = r#"
static __aicore__ void stuck(__gm__ int32_t* sig) {
#if defined(__DAV_VEC__)
    comm::Signal2D<1, 2> flags(sig);
    comm::TWAIT(flags, 3, comm::WaitCmp::LT);
#endif
}
"#;
    let program = build(
        "comm_stuck_wait",
        &one_task(1, 0, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(
            0,
            "stuck_wait",
            wrapper::kernel(
                body,
                &wrapper::entry(&wrapper::tensor_arg(0, "int32_t", "sig"), "stuck(sig)"),
            ),
        )],
    );
    let mut cfg = config();
    cfg.scheduler_timeout = std::time::Duration::from_millis(300);
    let mut bufs = vec![Buf::i32(&[2], &[1, 9])];
    match run_with(&program, &mut bufs, &[], &cfg) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::SchedulerTimeout, "{message}");
            for want in [
                "kernel 0 'stuck_wait'",
                "blocked in pto::comm::TWAIT on signal GlobalTensor<int32_t, ND> at 0x",
                "shape [1,1,1,1,2]",
                "until every value < 3 (first value 1 when it began)",
            ] {
                assert!(message.contains(want), "{want:?} missing in: {message}");
            }
        }
        other => panic!("expected a scheduler timeout, got {other:?}"),
    }
}

const COLLECTIVES: &str = r#"
using G = GlobalTensor<float, pto::Shape<1, 1, 1, 20, 40>, pto::Stride<800, 800, 800, 40, 1>, pto::Layout::ND>;

static __aicore__ void collectives(__gm__ float* ranks, __gm__ float* sum, __gm__ float* mx, __gm__ float* mn,
                                   __gm__ float* bcast) {
#if defined(__DAV_VEC__)
    // Three "ranks" (views of one tensor here; on L3 each would be a peer's window).
    G views[3] = {G(ranks), G(ranks + 800), G(ranks + 1600)};
    comm::ParallelGroup<G> group = comm::ParallelGroup<G>::Create(views, 3, 0);
    Tile<TileType::Vec, float, 8, 16> acc, recv, pong;
    TASSIGN(acc, 0x0);
    TASSIGN(recv, 0x200);
    TASSIGN(pong, 0x400);
    G s(sum), x(mx), n(mn);
    comm::TREDUCE(group, s, acc, recv, comm::ReduceOp::Sum);
    comm::TREDUCE(group, x, acc, recv, pong, comm::ReduceOp::Max);
    comm::TREDUCE(group, n, acc, recv, comm::ReduceOp::Min);
    G out[2] = {G(bcast), G(bcast + 800)};
    comm::ParallelGroup<G> targets(out, 2, 0);
    comm::TBROADCAST(targets, views[1], acc);
#endif
}
"#;

#[test]
fn treduce_and_tbroadcast_over_a_parallel_group() {
    let names = [
        ("float", "ranks"),
        ("float", "sum"),
        ("float", "mx"),
        ("float", "mn"),
        ("float", "bcast"),
    ];
    let unpack: String = names
        .iter()
        .enumerate()
        .map(|(i, (t, n))| wrapper::tensor_arg(i, t, n))
        .collect();
    let program = build(
        "comm_collectives",
        &one_task(5, 0, "", "rt_submit_aiv_task(0, p)"),
        &[Kernel::aiv(
            0,
            "collectives",
            wrapper::kernel(
                COLLECTIVES,
                &wrapper::entry(&unpack, "collectives(ranks, sum, mx, mn, bcast)"),
            ),
        )],
    );
    let x = values(3 * 800, 11, 8.0);
    let mut bufs = vec![
        Buf::f32(&[3, 20, 40], &x),
        Buf::zeros(Dt::F32, &[20, 40]),
        Buf::zeros(Dt::F32, &[20, 40]),
        Buf::zeros(Dt::F32, &[20, 40]),
        Buf::zeros(Dt::F32, &[2, 20, 40]),
    ];
    run(&program, &mut bufs, &[]);
    let at = |r: usize, i: usize| x[r * 800 + i];
    let sum: Vec<f32> = (0..800).map(|i| (at(0, i) + at(1, i)) + at(2, i)).collect();
    let mx: Vec<f32> = (0..800)
        .map(|i| at(0, i).max(at(1, i)).max(at(2, i)))
        .collect();
    let mn: Vec<f32> = (0..800)
        .map(|i| at(0, i).min(at(1, i)).min(at(2, i)))
        .collect();
    assert_eq!(bufs[1].as_f32(), sum, "TREDUCE Sum");
    assert_eq!(bufs[2].as_f32(), mx, "TREDUCE Max");
    assert_eq!(bufs[3].as_f32(), mn, "TREDUCE Min");
    let row1 = &x[800..1600];
    let b = bufs[4].as_f32();
    assert_eq!(&b[..800], row1, "TBROADCAST to view 0");
    assert_eq!(&b[800..], row1, "TBROADCAST to view 1");
}

/// A distributed kernel in the shape of Simpler's hand-written ones: PTO-ISA's comm headers by
/// their own names, the CommContext from `platform_comm/comm_context.h`, a peer's address
/// computed from `windowsIn[]`.
const SIMPLER_STYLE: &str = r#"
#include <cstdint>
#include <pto/pto-inst.hpp>
#include "pto/comm/comm_types.hpp"
#include "pto/comm/pto_comm_inst.hpp"
#include "platform_comm/comm_context.h"
#include "common/comm_context.h"
#include "tensor.h"

#ifndef __gm__
#define __gm__
#endif
#ifndef __aicore__
#define __aicore__ [aicore]
#endif

template <typename T>
AICORE inline __gm__ T* PeerAddress(__gm__ CommContext* ctx, __gm__ T* local, int peer) {
    return (__gm__ T*)(ctx->windowsIn[peer] + ((uint64_t)local - ctx->windowsIn[ctx->rankId]));
}

extern "C" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t* args) {
    __gm__ Tensor* win = reinterpret_cast<__gm__ Tensor*>(args[0]);
    __gm__ Tensor* sig = reinterpret_cast<__gm__ Tensor*>(args[1]);
    __gm__ CommContext* ctx = reinterpret_cast<__gm__ CommContext*>(args[2]);
    __gm__ float* data = reinterpret_cast<__gm__ float*>(win->buffer.addr) + win->start_offset;
    __gm__ int32_t* flags = reinterpret_cast<__gm__ int32_t*>(sig->buffer.addr) + sig->start_offset;
    const int me = (int)ctx->rankId, n = (int)ctx->rankNum;
    using G = pto::GlobalTensor<float, pto::Shape<1, 1, 1, 1, 64>, pto::Stride<64, 64, 64, 64, 1>>;
    pto::Tile<pto::TileType::Vec, float, 1, 64> stage;
    TASSIGN(stage, 0x0);
    for (int peer = 0; peer < n; ++peer) {
        if (peer == me) continue;
        G local(data), remote(PeerAddress(ctx, data + 64 * (me + 1), peer));
        pto::comm::TPUT(remote, local, stage);
        pto::comm::Signal s(PeerAddress(ctx, flags + me, peer));
        pto::comm::TNOTIFY(s, 1, pto::comm::NotifyOp::AtomicAdd);
    }
    for (int peer = 0; peer < n; ++peer) {
        if (peer == me) continue;
        pto::comm::Signal s(flags + peer);
        pto::comm::TWAIT(s, 1, pto::comm::WaitCmp::GE);
    }
    pipe_barrier(PIPE_ALL);
}
"#;

#[test]
fn a_simpler_style_distributed_kernel_compiles_with_pto_isa_header_names() {
    compile_ok("comm_simpler_style", SIMPLER_STYLE, CoreKind::Aiv);
}
