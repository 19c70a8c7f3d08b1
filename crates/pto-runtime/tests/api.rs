//! Simpler's orchestration API, one family per test, written the way Simpler's own
//! orchestrations are (reused `CoreTaskArgs`, `PTO2_SCOPE`, explicit ids), run through the
//! real runtime: views and `data_as`, predicated dispatch, dependency kinds, argument reuse,
//! timing slots, a5 names, and the errors each family latches.

use std::time::Duration;

use pto_runtime::{
    run, ArgDirection, CoreType, ErrorCode, HostTensor, OrchArg, Platform, RuntimeError,
};

use crate::common::{build, build_with, compile, config, orchestration, Kernel};

fn i64_arg(direction: ArgDirection, data: &mut [i64]) -> OrchArg<'_> {
    let shape = vec![data.len() as u32];
    // SAFETY: i64 has no invalid bit patterns and u8 alignment is 1.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast::<u8>(), data.len() * 8) };
    OrchArg::Tensor(HostTensor {
        direction,
        dtype: 7,
        shape,
        data: bytes,
    })
}

/// `out[scalar0] += 1 + block_num * 100` (int64; AIV).
const MARK: &str = r#"
#include "intrinsic.h"
extern "C" void kernel_entry(int64_t* args) {
    ChipTensor* out = kernel_tensor(args, 0);
    int64_t i = kernel_scalar<int64_t>(args, 1);
    if (get_block_idx(args) == 0) __atomic_add_fetch(out->data<int64_t>() + i, 1 + 100 * get_block_num(args), __ATOMIC_SEQ_CST);
}
"#;

/// `t[scalar0] = scalar1` (int64; AIV).
const SET: &str = r#"
#include "intrinsic.h"
extern "C" void kernel_entry(int64_t* args) {
    ChipTensor* t = kernel_tensor(args, 0);
    t->data<int64_t>()[kernel_scalar<int64_t>(args, 1)] = kernel_scalar<int64_t>(args, 2);
}
"#;

fn mark_and_set() -> [Kernel<'static>; 2] {
    [
        Kernel {
            func_id: 0,
            name: "mark",
            core: CoreType::Aiv,
            source: MARK,
        },
        Kernel {
            func_id: 1,
            name: "set",
            core: CoreType::Aiv,
            source: SET,
        },
    ]
}

fn run_two(
    name: &str,
    body: &str,
    a: &mut [i64],
    b: &mut [i64],
) -> Result<pto_runtime::RunReport, RuntimeError> {
    let program = build(name, &orchestration(2, body), &mark_and_set());
    run(
        &program,
        &mut [
            i64_arg(ArgDirection::InOut, a),
            i64_arg(ArgDirection::InOut, b),
        ],
        &config(),
    )
}

fn invalid_args(name: &str, body: &str) -> String {
    let mut a = vec![0i64; 8];
    let mut b = vec![0i64; 8];
    match run_two(name, body, &mut a, &mut b) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::InvalidArgs, "{message}");
            assert!(
                message.contains(".cpp:"),
                "names the orchestration line: {message}"
            );
            message
        }
        other => panic!("expected INVALID_ARGS, got {other:?}"),
    }
}

#[test]
fn views_data_as_and_tensor_helpers() {
    // Each check stores 1 in flags[k] when it holds; the orchestration writes them with the
    // blocking set_tensor_data.
    let body = r#"
    ChipTensor flags = orch_args.tensor(0).ref();
    const ChipTensor& x = orch_args.tensor(1).ref();     // [8] int64
    int k = 0;
    auto check = [&](bool ok) { uint32_t i[1] = {(uint32_t)k++}; set_tensor_data<int64_t>(flags, 1, i, ok ? 1 : 0); };
    uint32_t s2[1] = {2}, o3[1] = {3}, s0[1] = {0};
    ChipTensor v = x.view(s2, o3, true);
    check(v.start_offset == 3 && v.manual_dep && v.shapes[0] == 2);
    check(v.data_as<int64_t>() == x.data_as<int64_t>());                       // base, not origin
    check(v.data_as<int64_t>() + v.start_offset == v.data<int64_t>());
    ChipTensor w = v.view(s2, s0);                                            // 2-arg view resets manual_dep
    check(!w.manual_dep && w.start_offset == 3);
    ChipTensor e = x.view(s0, o3);                                            // empty: offsets ignored
    check(e.start_offset == 0 && e.is_contiguous && e.extent_elem() == 0);
    uint32_t rs[2] = {2, 4};
    ChipTensor r = x.reshape(rs, 2, true);
    check(r.ndims == 2 && r.strides[0] == 4 && r.manual_dep && r.is_contiguous);
    ChipTensor t = r.transpose(0, 1);
    check(!t.is_contiguous && t.extent_elem() == 8 && !t.manual_dep);
    uint32_t col[2] = {4, 1}, c0[2] = {0, 0};
    ChipTensor c = r.view(col, c0);                                           // size-1 dim, stride 4: not contiguous
    check(!c.is_contiguous);
    ChipTensor sl = x.slice(0, 2, 8, 3);
    check(sl.shapes[0] == 2 && sl.strides[0] == 3 && sl.start_offset == 2);
    uint32_t idx[2] = {1, 2};
    check(r.compute_flat_offset(idx, 2) == 6 && r.numel() == 8 && r.nbytes() == 64);
    uint32_t ss[1] = {4}, st[1] = {2};
    ChipTensor m = make_tensor_strided(x.data_as<void>(), ss, st, 1, DataType::INT64);
    check(m.buffer.size == 7 * 8 && !m.is_contiguous);
    check(get_element_size(DataType::DATA_TYPE_NUM) == 0 && get_element_size(DataType::BFLOAT16) == 2);
    check(strcmp(get_dtype_name(DataType::FP8E4M3FN), "FP8E4M3FN") == 0);
    check(dtype_of<double>() == DataType::FLOAT32 && dtype_of<int16_t>() == DataType::INT16);
    check(to_u64((int32_t)-1) == 0xFFFFFFFFull && from_u64<float>(to_u64(1.5f)) == 1.5f);
    PTO2TaskId id = PTO2TaskId::make(2, 7);
    check(id.ring() == 2 && id.local() == 7 && id.is_valid() && PTO2TaskId::invalid().is_invalid());
    check(sizeof(TensorCreateInfo) == 64 && alignof(TensorCreateInfo) == 64);
    MixedKernels mk;
    check(mk.aic_kernel_id == INVALID_KERNEL_ID && mk.to_active_mask() == 0);
#if PTO2_ERROR_INVALID_ARGS == 5 && PTO2_ERROR_SCHEDULER_TIMEOUT == 100
    check(true);
#else
    check(false);
#endif
    check(rt_available_cluster_count() == 24 && rt_available_aiv_count() == 48);
    ChipTensor z;                                                             // no buffer: 0, not fatal
    memset(&z, 0, sizeof(z));
    z.ndims = 1; z.shapes[0] = 1; z.strides[0] = 1;
    uint32_t z0[1] = {0};
    check(get_tensor_data<int64_t>(z, 1, z0) == 0);
"#;
    let mut flags = vec![-1i64; 21];
    let mut x = vec![0i64; 8];
    run_two("api_views", body, &mut flags, &mut x).unwrap();
    let failed: Vec<usize> = (0..flags.len()).filter(|&k| flags[k] != 1).collect();
    assert!(
        failed.is_empty(),
        "checks that failed (by index): {failed:?}; flags {flags:?}"
    );
}

#[test]
fn predicated_tasks_run_only_when_the_gate_holds() {
    // Gates are written by kernels (the predicate's producer is a dependency); the mark
    // tasks run or retire without running according to `gate[i] OP target`.
    let body = r#"
    ChipTensor out = orch_args.tensor(0).ref();
    ChipTensor gate = orch_args.tensor(1).ref();
    PTO2_SCOPE() {
        int64_t values[4] = {0, 5, -1, 7};
        PTO2TaskId setters[4];
        CoreTaskArgs s;
        for (int64_t i = 0; i < 4; ++i) {
            s.reset();
            s.add_inout(gate);
            s.add_scalar(i, values[i]);
            setters[i] = rt_submit_aiv_task(1, s).task_id();
        }
        struct Case { uint32_t gate; PredicateOp op; int64_t target; };
        Case cases[6] = {{0, PredicateOp::GT, 0}, {1, PredicateOp::GT, 0}, {2, PredicateOp::LT, 0},
                         {3, PredicateOp::EQ, 7}, {3, PredicateOp::NE, 7}, {1, PredicateOp::LE, 4}};
        CoreTaskArgs p;
        for (int64_t c = 0; c < 6; ++c) {
            p.reset();
            p.add_inout(out);
            p.add_scalar(c);
            CoreTaskPredicate pr;
            pr.operand.tensor = &gate;
            pr.operand.ndims = 1;
            pr.operand.indices[0] = cases[c].gate;
            pr.op = cases[c].op;
            pr.target = cases[c].target;
            p.set_predicate(pr);
            p.set_dependencies(&setters[cases[c].gate], 1);
            rt_submit_aiv_task(0, p);
        }
    }
"#;
    let mut out = vec![0i64; 6];
    let mut gate = vec![99i64; 4];
    run_two("api_predicate", body, &mut out, &mut gate).unwrap();
    assert_eq!(gate, vec![0, 5, -1, 7]);
    // 0 > 0 no, 5 > 0 yes, -1 < 0 yes (sign-extended), 7 == 7 yes, 7 != 7 no, 5 <= 4 no.
    assert_eq!(out, vec![0, 101, 101, 101, 0, 0]);
}

/// Waits (bounded) until `flag[0] == 1`, then stores 2 into `flag[1]`.
const WAIT_FOR_FLAG: &str = r#"
#include <sched.h>
#include "intrinsic.h"
extern "C" void kernel_entry(int64_t* args) {
    int64_t* f = kernel_tensor(args, 0)->data<int64_t>();
    for (long spin = 0; __atomic_load_n(f, __ATOMIC_ACQUIRE) != 1 && spin < 50000000L; ++spin) sched_yield();
    __atomic_store_n(f + 1, __atomic_load_n(f, __ATOMIC_ACQUIRE) == 1 ? 2 : -1, __ATOMIC_RELEASE);
}
"#;
/// Stores 1 into `flag[0]` and records in `flag[2]` what `flag[1]` held then.
const RAISE_FLAG: &str = r#"
#include "intrinsic.h"
extern "C" void kernel_entry(int64_t* args) {
    int64_t* f = kernel_tensor(args, 0)->data<int64_t>();
    f[2] = __atomic_load_n(f + 1, __ATOMIC_ACQUIRE);
    __atomic_store_n(f, 1, __ATOMIC_RELEASE);
}
"#;

#[test]
fn dependency_kinds_wait_orders_and_retain_only_does_not() {
    // A RETAIN-only dependency must not order the consumer: the producer waits for the
    // consumer's flag, so treating it as WAIT would never finish. A WAIT dependency orders
    // the second consumer after the producer (it sees the producer's 2).
    let body = r#"
    ChipTensor f = orch_args.tensor(0).ref();
    ChipTensor g = orch_args.tensor(1).ref();
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
        CoreTaskArgs p;
        p.add_inout(f);
        PTO2TaskId producer = rt_submit_aiv_task(0, p).task_id();
        CoreTaskArgs c;
        c.add_inout(f);
        DepFlags retain_only[1] = {DEP_RETAIN};
        c.set_dependencies_with_kinds(&producer, retain_only, 1);
        rt_submit_aiv_task(1, c);
        CoreTaskArgsWithDeps<2> d;
        d.add_inout(g);
        d.add_dep_wait(producer);
        rt_submit_aiv_task(2, d);
    }
"#;
    let copy = r#"
#include "intrinsic.h"
extern "C" void kernel_entry(int64_t* args) { (void)args; }
"#;
    let program = build(
        "api_dep_kinds",
        &orchestration(2, body),
        &[
            Kernel {
                func_id: 0,
                name: "wait_for_flag",
                core: CoreType::Aiv,
                source: WAIT_FOR_FLAG,
            },
            Kernel {
                func_id: 1,
                name: "raise_flag",
                core: CoreType::Aiv,
                source: RAISE_FLAG,
            },
            Kernel {
                func_id: 2,
                name: "after",
                core: CoreType::Aiv,
                source: copy,
            },
        ],
    );
    let mut cfg = config();
    cfg.n_workers = Some(2);
    cfg.record_deps = true;
    cfg.scheduler_timeout = Duration::from_secs(20);
    let mut f = vec![0i64; 3];
    let mut g = vec![0i64; 1];
    let report = run(
        &program,
        &mut [
            i64_arg(ArgDirection::InOut, &mut f),
            i64_arg(ArgDirection::InOut, &mut g),
        ],
        &cfg,
    )
    .unwrap();
    assert_eq!(
        f,
        vec![1, 2, 0],
        "the consumer ran while the producer waited"
    );
    let deps = report.deps.unwrap();
    let explicit: Vec<(u64, u64, bool)> = deps
        .edges
        .iter()
        .filter(|e| e.source == pto_runtime::EdgeSource::Explicit)
        .map(|e| (e.pred.local(), e.succ.local(), e.retain))
        .collect();
    assert_eq!(
        explicit,
        vec![(0, 1, true), (0, 2, false)],
        "manual scope: explicit edges only"
    );
}

#[test]
fn reused_args_reset_and_clear() {
    // One CoreTaskArgs reused with reset() in a loop (Simpler's paged-attention style); clear()
    // keeps the launch spec, so the second batch runs with 2 blocks.
    let body = r#"
    ChipTensor out = orch_args.tensor(0).ref();
    PTO2_SCOPE() {
        CoreTaskArgs p;
        for (int64_t i = 0; i < 3; ++i) {
            p.reset();
            p.add_inout(out);
            p.add_scalar(i);
            rt_submit_aiv_task(0, p);
        }
        p.launch_spec.set_block_num(2);
        for (int64_t i = 3; i < 5; ++i) {
            p.clear();
            p.add_inout(out);
            p.add_scalar(i);
            rt_submit_aiv_task(0, p);
        }
        int32_t raw[2] = {-1, 5};
        CoreTaskArgs q;
        q.add_inout(out);
        q.add_scalars_i32(raw, 2);                  // zero-extended: -1 -> 0xFFFFFFFF
        uint64_t bits[1] = {7};
        q.add_scalars(bits, 1);
        CoreTaskArgs r;
        r.add_inout(out);
        r.copy_scalars_from(q, 0, 3);
        uint32_t i5[1] = {5}, i6[1] = {6}, i7[1] = {7};
        set_tensor_data<int64_t>(out, 1, i5, (int64_t)r.scalar(0));
        set_tensor_data<int64_t>(out, 1, i6, (int64_t)r.scalar(1) + 10 * (int64_t)r.scalar(2));
        set_tensor_data<int64_t>(out, 1, i7, (int64_t)r.scalar_count());
    }
"#;
    let mut out = vec![0i64; 8];
    let mut other = vec![0i64; 1];
    run_two("api_reuse", body, &mut out, &mut other).unwrap();
    assert_eq!(out, vec![101, 101, 101, 201, 201, 0xFFFF_FFFF, 75, 3]);
}

#[test]
fn timing_slots_span_their_tasks() {
    let body = r#"
    ChipTensor out = orch_args.tensor(0).ref();
    PTO2_SCOPE() {
        CoreTaskArgs p;
        for (int64_t i = 0; i < 3; ++i) {
            p.reset();
            p.add_inout(out);
            p.add_scalar(i);
            if (i < 2) p.set_task_timing_slot(5);
            rt_submit_aiv_task(0, p);
        }
    }
"#;
    let mut out = vec![0i64; 3];
    let mut other = vec![0i64; 1];
    let report = run_two("api_timing", body, &mut out, &mut other).unwrap();
    for (k, slot) in report.timing_slots.iter().enumerate() {
        assert_eq!(slot.is_some(), k == 5, "slot {k}: {slot:?}");
    }
    let msg = invalid_args(
        "api_timing_bad",
        "ChipTensor out = orch_args.tensor(0).ref(); CoreTaskArgs p; p.add_inout(out); p.set_task_timing_slot(16); rt_submit_aiv_task(0, p);",
    );
    assert!(
        msg.contains("set_task_timing_slot: the slot must be -1 or 0..15"),
        "{msg}"
    );
}

#[test]
fn a5_names_and_the_a5_include_guard() {
    // The same source picks set_core_num on a5 (through a5's include guard) and
    // set_block_num on a2a3; platform_config.h follows the architecture too.
    let body = r#"
    ChipTensor out = orch_args.tensor(0).ref();
    CoreTaskArgs p;
    p.add_inout(out);
    p.add_scalar((int64_t)0);
#if defined(SRC_A5_RUNTIME_TENSORMAP_AND_RINGBUFFER_RUNTIME_PTO_TYPES_H_)
    p.launch_spec.set_core_num(3);
#else
    p.launch_spec.set_block_num(2);
#endif
    rt_submit_aiv_task(0, p);
    uint32_t i1[1] = {1};
    set_tensor_data<int64_t>(out, 1, i1, (int64_t)PLATFORM_MAX_BLOCKDIM);
"#;
    let src = format!(
        "#include \"common/platform_config.h\"\n{}",
        orchestration(1, body)
    );
    for (platform, blocks, max) in [(Platform::A2a3Sim, 2, 24), (Platform::A5Sim, 3, 36)] {
        let out = run_mark_on("api_a5", &src, platform, 2);
        assert_eq!(out, vec![1 + 100 * blocks, max], "{platform}");
    }
}

/// Builds `src` with the MARK kernel as func_id 0 for `platform`'s architecture
/// (`-DPTO_ARCH_A5` on a5sim, as the toolchain adds it) and runs it over `len` zeroed
/// int64 elements (one INOUT tensor), returning them.
fn run_mark_on(name: &str, src: &str, platform: Platform, len: usize) -> Vec<i64> {
    let defines: &[&str] = match platform {
        Platform::A5Sim => &["PTO_ARCH_A5"],
        _ => &[],
    };
    let program = build_with(
        &format!("{name}_{platform}"),
        src,
        &[Kernel {
            func_id: 0,
            name: "mark",
            core: CoreType::Aiv,
            source: MARK,
        }],
        defines,
    );
    let mut cfg = config();
    cfg.platform = platform;
    let mut out = vec![0i64; len];
    run(
        &program,
        &mut [i64_arg(ArgDirection::InOut, &mut out)],
        &cfg,
    )
    .unwrap();
    out
}

#[test]
fn each_arch_has_only_its_own_launch_spec_names() {
    // A source may pick the SPMD setter by asking which one the launch spec has (two
    // overloads, each viable only if its setter exists). As in Simpler, a2a3 has only
    // set_block_num and a5 only set_core_num (its a2a3 names are deleted, which SFINAE
    // treats as absent), so exactly one overload is viable on each: with both names the
    // call would be ambiguous and the orchestration would not compile. The kernel marks
    // element 0 after set_block_num, element 1 after set_core_num.
    let helpers = r#"
#include <cstdint>
template <typename S>
static inline auto pick_count(S& s, int16_t n) -> decltype(s.set_block_num(n), int64_t()) { s.set_block_num(n); return 0; }
template <typename S>
static inline auto pick_count(S& s, int16_t n) -> decltype(s.set_core_num(n), int64_t()) { s.set_core_num(n); return 1; }
"#;
    let body = r#"
    ChipTensor out = orch_args.tensor(0).ref();
    CoreTaskArgs p;
    p.add_inout(out);
    int64_t which = pick_count(p.launch_spec, 3);
    p.add_scalar(which);
    rt_submit_aiv_task(0, p);
"#;
    let src = format!("{helpers}{}", orchestration(1, body));
    for (platform, which) in [(Platform::A2a3Sim, 0), (Platform::A5Sim, 1)] {
        let out = run_mark_on("api_launch_names", &src, platform, 2);
        let mut expected = vec![0i64; 2];
        expected[which] = 1 + 100 * 3;
        assert_eq!(out, expected, "{platform}");
    }
}

#[test]
fn a2a3_names_on_a5_are_a_compile_error_naming_a5s() {
    // PyPTO's a5 codegen emits set_core_num; an a2a3 spelling on a5 does not compile, and
    // the compiler's note quotes the deleted declaration, which names the a5 setter.
    let body = r#"
    ChipTensor out = orch_args.tensor(0).ref();
    CoreTaskArgs p;
    p.add_inout(out);
    p.launch_spec.set_block_num(2);
    rt_submit_aiv_task(0, p);
"#;
    let err = crate::common::orchestration_compile_error_with(
        "api_block_num_on_a5",
        &orchestration(1, body),
        &["PTO_ARCH_A5"],
    );
    assert!(err.contains("set_block_num"), "{err}");
    assert!(err.contains("names it set_core_num(n)"), "{err}");
}

#[test]
fn a_predicate_without_a_tensor_always_dispatches() {
    // Simpler degrades a predicate whose operand tensor is missing to "always dispatch"
    // (not an error): the task runs whatever the comparison would say.
    let body = r#"
    ChipTensor out = orch_args.tensor(0).ref();
    CoreTaskArgs p;
    p.add_inout(out);
    p.add_scalar((int64_t)0);
    CoreTaskPredicate pr;
    pr.op = PredicateOp::EQ;
    pr.target = 12345;
    p.set_predicate(pr);
    rt_submit_aiv_task(0, p);
"#;
    let program = build_with(
        "api_predicate_no_tensor",
        &orchestration(1, body),
        &[Kernel {
            func_id: 0,
            name: "mark",
            core: CoreType::Aiv,
            source: MARK,
        }],
        &[],
    );
    let mut out = vec![0i64; 1];
    run(
        &program,
        &mut [i64_arg(ArgDirection::InOut, &mut out)],
        &config(),
    )
    .unwrap();
    assert_eq!(out, vec![1 + 100]);
}

#[test]
fn a_predicate_with_an_unknown_op_always_dispatches() {
    // Simpler's predicate evaluation falls through to "dispatch" for an op outside
    // EQ..LE; the gate's value (0 here, which EQ 12345 would fail) does not matter.
    let body = r#"
    ChipTensor out = orch_args.tensor(0).ref();
    CoreTaskArgs p;
    p.add_inout(out);
    p.add_scalar((int64_t)0);
    CoreTaskPredicate pr;
    pr.op = static_cast<PredicateOp>(42);
    pr.target = 12345;
    pr.operand.tensor = &out;
    pr.operand.ndims = 1;
    pr.operand.indices[0] = 0;
    p.set_predicate(pr);
    rt_submit_aiv_task(0, p);
"#;
    let program = build_with(
        "api_predicate_unknown_op",
        &orchestration(1, body),
        &[Kernel {
            func_id: 0,
            name: "mark",
            core: CoreType::Aiv,
            source: MARK,
        }],
        &[],
    );
    let mut out = vec![0i64; 1];
    run(
        &program,
        &mut [i64_arg(ArgDirection::InOut, &mut out)],
        &config(),
    )
    .unwrap();
    assert_eq!(out, vec![1 + 100]);
}

#[test]
fn two_kernels_with_one_func_id_register_the_later_one() {
    // Simpler's registration keeps the last kernel of a func_id (a warning here).
    let body = r#"
    ChipTensor out = orch_args.tensor(0).ref();
    CoreTaskArgs p;
    p.add_inout(out);
    p.add_scalar((int64_t)0);
    rt_submit_aiv_task(0, p);
"#;
    let twice = MARK.replace("1 + 100 *", "7 + 100 *");
    let program = build_with(
        "api_duplicate_func_id",
        &orchestration(1, body),
        &[
            Kernel {
                func_id: 0,
                name: "mark",
                core: CoreType::Aiv,
                source: MARK,
            },
            Kernel {
                func_id: 0,
                name: "mark_seven",
                core: CoreType::Aiv,
                source: &twice,
            },
        ],
        &[],
    );
    let mut out = vec![0i64; 1];
    run(
        &program,
        &mut [i64_arg(ArgDirection::InOut, &mut out)],
        &config(),
    )
    .unwrap();
    assert_eq!(out, vec![7 + 100]);
}

#[test]
fn a_neighbouring_releases_names_compile_and_run() {
    // Spelled the way a neighbouring Simpler release spells the same API: `L2TaskArgs` for
    // the orchestration's arguments, `L0TaskArgs` for a task's, `LOG_INFO_V0`. A dummy task
    // stands in as the output's producer; the orchestration writes the cluster count and one
    // kernel task marks its block count next to it.
    let src = r#"#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const L2TaskArgs& orch_args) {
    (void)orch_args;
    return PTO2OrchestrationConfig{.expected_arg_count = 1};
}
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const L2TaskArgs& orch_args) {
    const ChipTensor& out = orch_args.tensor(0).ref();
    {
        L0TaskArgs args;
        args.add_inout(out);
        rt_submit_dummy_task(args);
    }
    int32_t clusters = rt_available_cluster_count();
    LOG_INFO_V0("clusters=%d", clusters);
    uint32_t i0[1] = {0};
    set_tensor_data<int64_t>(out, 1, i0, (int64_t)clusters);
    PTO2_SCOPE_GUARD();
    L0TaskArgs mark;
    mark.add_inout(out);
    mark.add_scalar((int64_t)1);
    mark.launch_spec.set_block_num(2);
    rt_submit_aiv_task(0, mark);
}
"#;
    let program = build_with(
        "api_neighbour_names",
        src,
        &[Kernel {
            func_id: 0,
            name: "mark",
            core: CoreType::Aiv,
            source: MARK,
        }],
        &[],
    );
    let mut out = vec![0i64; 2];
    run(
        &program,
        &mut [i64_arg(ArgDirection::InOut, &mut out)],
        &config(),
    )
    .unwrap();
    assert_eq!(out, vec![24, 1 + 100 * 2]);
}

#[test]
fn dummy_tasks_and_alloc_tensors_from_args() {
    let body = r#"
    ChipTensor out = orch_args.tensor(0).ref();
    PTO2_SCOPE() {
        uint32_t s[1] = {4};
        TensorCreateInfo ci(s, 1, DataType::INT64);
        ci.set_initial_value<int64_t>(41);
        CoreTaskArgs a;
        a.add_output(ci);
        TaskOutputTensors t = alloc_tensors(a);
        CoreTaskArgs d;
        d.add_input(t.get_ref(0));
        PTO2TaskId dummy = rt_submit_dummy_task(d).task_id();
        uint32_t i0[1] = {0};
        int64_t v = get_tensor_data<int64_t>(t.get_ref(0), 1, i0);
        set_tensor_data<int64_t>(out, 1, i0, v + (dummy.is_valid() ? 1 : 0));
    }
"#;
    let mut out = vec![0i64; 2];
    let mut other = vec![0i64; 1];
    run_two("api_dummy", body, &mut out, &mut other).unwrap();
    assert_eq!(out[0], 42);
}

#[test]
fn argument_errors_are_latched_and_reported_at_submit() {
    // One orchestration, one error per case (selected by the scalar argument).
    let cases: [(&str, &str); 9] = [
        (
            "for (int i = 0; i < 65; ++i) rt_scope_begin(); for (int i = 0; i < 65; ++i) rt_scope_end();",
            "at most 64 scopes",
        ),
        (
            "CoreTaskArgs p; p.add_inout(out); rt_submit_task(MixedKernels{}, p);",
            "no active kernel",
        ),
        (
            "CoreTaskArgs a; a.add_inout(out); PTO2TaskId t = rt_submit_aiv_task(1, a).task_id(); CoreTaskArgs p; p.add_inout(out); p.set_dependencies(&t, 1); p.set_dependencies(&t, 1); rt_submit_aiv_task(0, p);",
            "dependencies are already set",
        ),
        (
            "uint32_t s[1] = {4}; TensorCreateInfo ci(s, 1); CoreTaskArgs a; a.add_output(ci); a.add_scalar(1); alloc_tensors(a);",
            "alloc_tensors takes only TensorCreateInfo outputs",
        ),
        (
            "ChipTensor other = out; CoreTaskArgs p; p.add_inout(out); p.dump(other); rt_submit_aiv_task(0, p);",
            "not one of this task's arguments",
        ),
        ("CoreTaskArgs p; p.dump(); rt_submit_aiv_task(0, p);", "has no arguments yet"),
        (
            "CoreTaskArgs p; p.add_inout(out); CoreTaskPredicate pr; pr.operand.tensor = &out; pr.operand.ndims = 1; pr.operand.indices[0] = 99; pr.op = PredicateOp::GT; p.set_predicate(pr); rt_submit_aiv_task(0, p);",
            "outside dimension 0 of size 8",
        ),
        (
            "PTO2TaskId bad = PTO2TaskId::invalid(); CoreTaskArgs p; p.add_inout(out); p.set_dependencies(&bad, 1); rt_submit_aiv_task(0, p);",
            "invalid task id",
        ),
        (
            "CoreTaskArgs p; p.add_inout(out); p.set_dependencies(nullptr, 2); rt_submit_aiv_task(0, p);",
            "null ids with a non-zero count",
        ),
    ];
    let mut body = String::from(
        "    ChipTensor out = orch_args.tensor(0).ref();\n    switch (orch_args.scalar(0)) {\n",
    );
    for (i, (code, _)) in cases.iter().enumerate() {
        body.push_str(&format!("    case {i}: {{ {code} break; }}\n"));
    }
    body.push_str("    }\n");
    let program = build("api_errors", &orchestration(2, &body), &mark_and_set());
    for (i, (_, needle)) in cases.iter().enumerate() {
        let mut out = vec![0i64; 8];
        let mut args = [
            i64_arg(ArgDirection::InOut, &mut out),
            OrchArg::Scalar(i as u64),
        ];
        match run(&program, &mut args, &config()) {
            Err(RuntimeError::Fatal { code, message }) => {
                assert_eq!(code, ErrorCode::InvalidArgs, "case {i}: {message}");
                assert!(message.contains(needle), "case {i}: {message}");
                assert!(
                    message.contains("api_errors_orch.cpp:"),
                    "case {i} names the line: {message}"
                );
            }
            other => panic!("case {i}: expected INVALID_ARGS, got {other:?}"),
        }
    }
}

#[test]
fn named_entry_and_config_symbols() {
    // ORCHESTRATION's "function_name" / "config_name" select the exports; a missing entry is
    // a load error naming the symbol and the fix.
    let src = r#"
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig build_graph_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 3};
}
extern "C" __attribute__((visibility("default"))) void build_graph(const ChipTaskArgs& orch_args) { (void)orch_args; }
"#;
    let mut spec = compile("api_named", src, &mark_and_set(), &[]);
    let err = pto_runtime::Program::load(&spec)
        .err()
        .expect("the default entry is missing")
        .to_string();
    assert!(
        err.contains("aicpu_orchestration_entry") && err.contains("function_name"),
        "{err}"
    );
    spec.entry_symbol = "build_graph".into();
    spec.config_symbol = Some("build_graph_config".into());
    let program = pto_runtime::Program::load(&spec).unwrap();
    let mut a = vec![0i64; 1];
    match run(
        &program,
        &mut [i64_arg(ArgDirection::InOut, &mut a)],
        &config(),
    ) {
        Err(RuntimeError::Fatal { code, message }) => {
            assert_eq!(code, ErrorCode::InvalidArgs);
            assert!(
                message.contains("expects 3 arguments"),
                "the named config ran: {message}"
            );
        }
        other => panic!("expected the argument-count error, got {other:?}"),
    }
    // More arguments than expected are fine (Simpler).
    spec.config_symbol = None;
    let program = pto_runtime::Program::load(&spec).unwrap();
    let mut b = vec![0i64; 1];
    run(
        &program,
        &mut [
            i64_arg(ArgDirection::InOut, &mut a),
            i64_arg(ArgDirection::InOut, &mut b),
        ],
        &config(),
    )
    .unwrap();
}

/// A task keeps a pointer to each tensor argument (Simpler's pointer-held slots), so a
/// temporary such as `x.view(...)` or a mixed `add_output` must not compile; the message says
/// why and what to do.
#[test]
fn temporaries_and_mixed_outputs_are_compile_errors() {
    let temp = orchestration(
        1,
        r#"
    const ChipTensor& x = orch_args.tensor(0).ref();
    uint32_t s[1] = {2}, o[1] = {0};
    CoreTaskArgs args;
    args.add_input(x.view(s, o));
    rt_submit_aiv_task(0, args);"#,
    );
    let err = crate::common::orchestration_compile_error("api_temporary_view", &temp);
    assert!(
        err.contains("add_input takes named ChipTensor variables") && err.contains("dangle"),
        "{err}"
    );
    let mixed = orchestration(
        1,
        r#"
    ChipTensor x = orch_args.tensor(0).ref();
    uint32_t s[1] = {2};
    TensorCreateInfo ci(s, 1, DataType::FLOAT32);
    CoreTaskArgs args;
    args.add_output(ci, x);
    rt_submit_aiv_task(0, args);"#,
    );
    let err = crate::common::orchestration_compile_error("api_mixed_outputs", &mixed);
    assert!(err.contains("not a mix"), "{err}");
}

/// An orchestration that waits in a loop for what its task writes, asking `rt_is_fatal()`
/// as Simpler's programs do, sees the task run: a task ready at submit is not held back
/// until a later submit that never comes.
#[test]
fn an_orchestration_polling_rt_is_fatal_sees_its_ready_task_run() {
    let orch = orchestration(
        1,
        r#"
    ChipTensor out = orch_args.tensor(0).ref();
    CoreTaskArgs p;
    p.add_inout(out);
    p.add_scalar((int64_t)0);
    rt_submit_aiv_task(0, p);
    volatile int64_t* seen = out.data_as<int64_t>();
    for (long spin = 0; *seen == 0; ++spin) {
        if (rt_is_fatal()) return;
        if (spin > 200000000L) {
            rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "the task never ran");
            return;
        }
    }
"#,
    );
    let program = build(
        "api_poll_is_fatal",
        &orch,
        &[Kernel {
            func_id: 0,
            name: "mark",
            core: CoreType::Aiv,
            source: MARK,
        }],
    );
    let mut cfg = config();
    cfg.scheduler_timeout = Duration::from_secs(30);
    cfg.orchestration_timeout = Duration::from_secs(30);
    let mut out = vec![0i64; 1];
    let mut args = vec![i64_arg(ArgDirection::InOut, &mut out)];
    run(&program, &mut args, &cfg).unwrap();
    drop(args);
    assert_eq!(out, vec![101]);
}
