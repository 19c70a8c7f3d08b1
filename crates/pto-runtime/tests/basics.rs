use pto_runtime::{run, ArgDirection, CoreType, HostTensor, OrchArg};

use crate::common::{build, bytes_of, config, Kernel};

const ADD_KERNEL: &str = r#"
#include "tensor.h"
extern "C" void kernel_entry(int64_t* args) {
    ChipTensor* a = kernel_tensor(args, 0);
    ChipTensor* b = kernel_tensor(args, 1);
    ChipTensor* c = kernel_tensor(args, 2);
    uint64_t n = c->numel();
    int32_t blk = get_block_idx(args), nb = get_block_num(args);
    uint64_t lo = n * blk / nb, hi = n * (blk + 1) / nb;
    for (uint64_t i = lo; i < hi; ++i) c->data<float>()[i] = a->data<float>()[i] + b->data<float>()[i];
}
"#;

const VECTOR_ADD_ORCH: &str = r#"
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 3};
}
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
    ChipTensor a = orch_args.tensor(0).ref();
    ChipTensor b = orch_args.tensor(1).ref();
    ChipTensor c = orch_args.tensor(2).ref();
    uint32_t tile = 256;
    uint32_t n = a.shapes[0];
    for (uint32_t off = 0; off < n; off += tile) {
        PTO2_SCOPE() {
            uint32_t shp[1] = {tile};
            uint32_t o[1] = {off};
            ChipTensor av = a.view(shp, o), bv = b.view(shp, o), cv = c.view(shp, o);
            TensorCreateInfo ci(shp, 1, DataType::FLOAT32);
            CoreTaskArgs p;
            p.add_input(av, bv);
            p.add_output(ci);
            TaskOutputTensors t = rt_submit_aiv_task(0, p);
            CoreTaskArgs q;
            q.add_input(t.get_ref(0), bv);
            q.add_output(cv);
            q.launch_spec.set_block_num(4);
            rt_submit_aiv_task(0, q);
        }
    }
}
"#;

#[test]
fn vector_add_runs_and_matches() {
    let program = build(
        "vector_add",
        VECTOR_ADD_ORCH,
        &[Kernel {
            func_id: 0,
            name: "add",
            core: CoreType::Aiv,
            source: ADD_KERNEL,
        }],
    );
    let n = 4096;
    let mut a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut b: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    let mut c = vec![0f32; n];
    let expected: Vec<f32> = (0..n).map(|i| a[i] + 2.0 * b[i]).collect();
    let shape = vec![n as u32];
    let mut args = vec![
        OrchArg::Tensor(HostTensor {
            direction: ArgDirection::In,
            dtype: 0,
            shape: shape.clone(),
            data: bytes_of(&mut a),
        }),
        OrchArg::Tensor(HostTensor {
            direction: ArgDirection::In,
            dtype: 0,
            shape: shape.clone(),
            data: bytes_of(&mut b),
        }),
        OrchArg::Tensor(HostTensor {
            direction: ArgDirection::Out,
            dtype: 0,
            shape,
            data: bytes_of(&mut c),
        }),
    ];
    let report = run(&program, &mut args, &config()).unwrap();
    drop(args);
    assert_eq!(c, expected);
    assert_eq!(report.n_tasks, 32);
}

/// A plain kernel in the shape of Simpler's MoE prepare kernel: only `tensor.h`, and the
/// sync and cache calls Simpler's simulator gives plain kernels through its AICore platform
/// header (`pipe_barrier(PIPE_ALL)`, `set_flag` / `wait_flag`, bare `dcci` names).
const PLAIN_SYNC_KERNEL: &str = r#"
#include <cstdint>
#include "tensor.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ Tensor* t = reinterpret_cast<__gm__ Tensor*>(args[0]);
    __gm__ float* x = reinterpret_cast<__gm__ float*>(t->buffer.addr) + t->start_offset;
    pipe_barrier(PIPE_ALL);
    for (int i = 0; i < 8; ++i) x[i] += 1.0f;
    set_flag(PIPE_S, PIPE_MTE3, EVENT_ID7);
    wait_flag(PIPE_S, PIPE_MTE3, EVENT_ID7);
    dcci(x, SINGLE_CACHE_LINE, CACHELINE_OUT);
    dsb(DSB_DDR);
    pipe_barrier(PIPE_ALL);
}
"#;

#[test]
fn a_plain_kernel_calls_the_sync_no_ops_without_pto_isa() {
    let body = "    ChipTensor x = orch_args.tensor(0).ref();\n    CoreTaskArgs p; p.add_inout(x); rt_submit_aiv_task(0, p);\n";
    let program = build(
        "plain_sync",
        &crate::common::orchestration(1, body),
        &[Kernel {
            func_id: 0,
            name: "plain_sync",
            core: CoreType::Aiv,
            source: PLAIN_SYNC_KERNEL,
        }],
    );
    let mut x = vec![1f32; 8];
    let mut args = [crate::common::f32_arg(ArgDirection::InOut, &[8], &mut x)];
    run(&program, &mut args, &config()).unwrap();
    assert_eq!(x, vec![2f32; 8]);
}

/// A broadcast view (stride 0 over a dimension of 4) reads one element four times: Simpler
/// accepts any strides, and every element of such a view lies inside its buffer.
#[test]
fn a_broadcast_view_with_a_zero_stride_is_accepted() {
    let kernel = r#"
#include "tensor.h"
extern "C" void kernel_entry(int64_t* args) {
    ChipTensor* b = kernel_tensor(args, 0);
    ChipTensor* x = kernel_tensor(args, 1);
    float sum = 0.0f;
    for (uint32_t i = 0; i < b->shapes[0]; ++i) sum += b->data<float>()[i * b->strides[0]];
    x->data<float>()[1] = sum;
}
"#;
    let body = r#"
    ChipTensor x = orch_args.tensor(0).ref();
    uint32_t shapes[1] = {4};
    uint32_t strides[1] = {0};
    ChipTensor b = make_tensor_strided(x.data_as<void>(), shapes, strides, 1);
    CoreTaskArgs p; p.add_input(b); p.add_inout(x); rt_submit_aiv_task(0, p);
"#;
    let program = build(
        "broadcast_view",
        &crate::common::orchestration(1, body),
        &[Kernel {
            func_id: 0,
            name: "broadcast_sum",
            core: CoreType::Aiv,
            source: kernel,
        }],
    );
    let mut x = vec![2.5f32, 0.0];
    let mut args = [crate::common::f32_arg(ArgDirection::InOut, &[2], &mut x)];
    run(&program, &mut args, &config()).unwrap();
    assert_eq!(x, vec![2.5, 10.0]);
}

/// `get_sys_cnt()` counts at Simpler's `PLATFORM_PROF_SYS_CNT_FREQ` (50 MHz on a2a3): a kernel
/// that sleeps 20 ms sees about a million ticks (Simpler's spin kernels wait a tick count).
#[test]
fn the_system_counter_ticks_at_the_platform_frequency() {
    let kernel = r#"
#include <chrono>
#include <thread>
#include "tensor.h"
extern "C" void kernel_entry(int64_t* args) {
    ChipTensor* x = kernel_tensor(args, 0);
    uint64_t t0 = get_sys_cnt();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    uint64_t t1 = get_sys_cnt();
    x->data<float>()[0] = static_cast<float>(t1 - t0);
}
"#;
    let body = "    ChipTensor x = orch_args.tensor(0).ref();\n    CoreTaskArgs p; p.add_inout(x); rt_submit_aiv_task(0, p);\n";
    let program = build(
        "sys_cnt",
        &crate::common::orchestration(1, body),
        &[Kernel {
            func_id: 0,
            name: "sys_cnt",
            core: CoreType::Aiv,
            source: kernel,
        }],
    );
    let mut x = vec![0f32; 1];
    let mut args = [crate::common::f32_arg(ArgDirection::InOut, &[1], &mut x)];
    run(&program, &mut args, &config()).unwrap();
    assert!(
        (1.0e6..2.0e7).contains(&x[0]),
        "20 ms at 50 MHz is 1e6 ticks, got {}",
        x[0]
    );
}
