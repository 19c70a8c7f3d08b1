//! PTO-ISA's distributed instructions (`pto::comm::TPUT`, `TNOTIFY`, `TWAIT`, `TTEST`) on a
//! 2-rank L3 run, as a user's kernel uses them: the bundled `l3_allreduce` build with its
//! hand-written comm kernel replaced by a PTO-ISA ring exchange (every rank puts its row into
//! the next rank's window through a staging tile, notifies it, waits for its own neighbour and
//! stores what arrived), checked against a NumPy golden; a wait that never completes ends in
//! the scheduler timeout naming the kernel and the signal; a put outside every window and
//! tensor is a fault naming the address.
//!
//! Like `l3.rs`, these need a Python with pypto and torch (`PTO_PYTHON`, else the checkout's
//! `target/venv-py/bin/python`).

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::text;

/// The kernel: `VARIANT` 0 is the ring exchange, 1 waits for a signal nobody sends, 2 puts to
/// an address far past the peer's window.
const KERNEL: &str = r#"// Kernel Function: window_allreduce (here: a ring exchange over pto::comm)
#include <cstdint>

#include <pto/pto-inst.hpp>
#include "tensor.h"
#include "pto_comm_sim.h"

using namespace pto;

// --- ptoas-generated code ---
using Row = GlobalTensor<float, Shape<1, 1, 1, 1, 256>, Stride<256, 256, 256, 256, 1>, Layout::ND>;

static __aicore__ void ring_put(__gm__ float* in, __gm__ float* out, __gm__ float* data, __gm__ int32_t* sig,
                                uint64_t device_ctx) {
    const CommContext* ctx = pto_comm_ctx(device_ctx);
    const uint32_t me = ctx->rankId, n = ctx->rankNum;
    const uint32_t next = (me + 1) % n, prev = (me + n - 1) % n;
    // A 1x64 staging tile: the 256-element row goes in four chunks.
    Tile<TileType::Vec, float, 1, 64> stage;
    TASSIGN(stage, 0);
    Row src(in);
    float* remote_data = pto_comm_peer_ptr(ctx, data, next);
#if VARIANT == 2
    remote_data += (1u << 26);
#endif
    Row remote(remote_data);
    comm::TPUT(remote, src, stage);
    comm::Signal mine(sig + prev);
#if VARIANT != 1
    comm::Signal theirs(pto_comm_peer_ptr(ctx, sig + me, next));
    comm::TNOTIFY(theirs, 1, comm::NotifyOp::AtomicAdd);
#endif
    comm::TWAIT(mine, 1, comm::WaitCmp::GE);
    if (!comm::TTEST(mine, 1, comm::WaitCmp::EQ)) {
        return;  // leaves the output zero: the golden check fails
    }
    Tile<TileType::Vec, float, 1, 256> row;
    TASSIGN(row, 1024);
    Row arrived(data);
    TLOAD(row, arrived);
    Row dst(out);
    TSTORE(dst, row);
}

// --- Kernel entry point ---
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* t0 = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* t1 = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ ChipTensor* t2 = reinterpret_cast<__gm__ ChipTensor*>(args[2]);
    __gm__ ChipTensor* t3 = reinterpret_cast<__gm__ ChipTensor*>(args[3]);
    ring_put(reinterpret_cast<__gm__ float*>(t0->buffer.addr) + t0->start_offset,
             reinterpret_cast<__gm__ float*>(t1->buffer.addr) + t1->start_offset,
             reinterpret_cast<__gm__ float*>(t2->buffer.addr) + t2->start_offset,
             reinterpret_cast<__gm__ int32_t*>(t3->buffer.addr) + t3->start_offset,
             static_cast<uint64_t>(args[4]));
}
"#;

/// Rank r receives rank r-1's row.
const GOLDEN: &str = r#"# Golden of the PTO-ISA ring exchange: rank r's output is rank r-1's input.

from pathlib import Path

import numpy as np

_DATA_DIR = Path(__file__).parent / "data"

__outputs__ = ['outputs']
RTOL = 0.0
ATOL = 0.0


def generate_inputs(params):
    inputs = np.load(_DATA_DIR / "in" / "inputs.npy")
    outputs = np.zeros((2, 1, 256), dtype=np.float32)
    return [("inputs", inputs), ("outputs", outputs)]


def compute_golden(tensors, params):
    x = np.asarray(tensors["inputs"])
    tensors["outputs"][:] = np.roll(x, 1, axis=0)
"#;

/// A copy of `l3_allreduce` under `as_name` whose kernel is the `variant` above.
fn build(as_name: &str, variant: u32) -> PathBuf {
    let dir = common::example("l3_comm", "l3_allreduce", as_name);
    let kernel = dir.join("next_levels/chip_orch/kernels/aiv/window_allreduce.cpp");
    std::fs::write(&kernel, format!("#define VARIANT {variant}\n{KERNEL}")).unwrap();
    std::fs::write(dir.join("golden.py"), GOLDEN).unwrap();
    dir
}

fn replay(dir: &std::path::Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pto"));
    c.args(["replay", dir.to_str().unwrap(), "--validate"])
        .env("NO_COLOR", "1")
        .env("PTO_PYTHON", common::pypto_python());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn a_pto_isa_ring_exchange_over_two_ranks_matches_golden() {
    let dir = build("ring", 0);
    let o = replay(&dir, &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("Golden validation: PASSED"), "{t}");
}

#[test]
fn a_twait_nobody_answers_is_a_scheduler_timeout_naming_the_kernel_and_the_signal() {
    let dir = build("never_notified", 1);
    let o = replay(&dir, &[("SIMPLER_SCHEDULER_TIMEOUT_MS", "1500")]);
    let t = text(&o);
    assert_ne!(o.status.code(), Some(0), "{t}");
    for want in [
        "PTO2_ERROR_SCHEDULER_TIMEOUT",
        "kernel 0 'window_allreduce'",
        "blocked in pto::comm::TWAIT on signal GlobalTensor<int32_t, ND> at 0x",
        "until every value >= 1 (first value 0 when it began)",
    ] {
        assert!(t.contains(want), "missing {want:?} in:\n{t}");
    }
    assert!(!t.contains("Golden validation: PASSED"), "{t}");
}

#[test]
fn a_tput_outside_every_window_and_tensor_is_a_fault_naming_the_address() {
    let dir = build("bad_address", 2);
    let o = replay(&dir, &[("SIMPLER_SCHEDULER_TIMEOUT_MS", "20000")]);
    let t = text(&o);
    assert_ne!(o.status.code(), Some(0), "{t}");
    for want in [
        "PTO2_ERROR_KERNEL_FAULT",
        "kernel 'window_allreduce'",
        "pto::comm::TPUT of GlobalTensor<float, ND> at 0x",
        "touches GM bytes [0x",
    ] {
        assert!(t.contains(want), "missing {want:?} in:\n{t}");
    }
}
