//! The hot path allocates nothing per task in steady state: a run of 4× more tasks through
//! the same rings makes (almost) no more heap allocations than the smaller run.
//!
//! Its own test binary: it installs a counting global allocator.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use pto_runtime::{
    run, ArgDirection, ChipConfig, CoreType, HostTensor, OrchArg, Program, RingOverride,
    RingOverrides, RingSizes,
};

use common::{build, config, orchestration, Kernel, NOOP};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator and only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The tests of this binary count one process-wide figure: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

const BODY: &str = r#"
    ChipTensor x = orch_args.tensor(0).ref();
    uint64_t n = orch_args.scalar(0);
    uint32_t s[1] = {16};
    TensorCreateInfo ci(s, 1);
    for (uint64_t i = 0; i < n; i += 100) {
        PTO2_SCOPE() {
            for (int k = 0; k < 100; ++k) {
                CoreTaskArgs p; p.add_inout(x); p.add_output(ci);
                TaskOutputTensors t = rt_submit_aiv_task(0, p);
                CoreTaskArgs q; q.add_input(t.get_ref(0)); rt_submit_aiv_task(0, q);
            }
        }
    }
"#;

/// `body` (taking `n_args` arguments) built with one no-op AIV kernel, and a two-worker
/// configuration whose task windows hold `window` tasks.
fn setup(name: &str, body: &str, n_args: u32, window: u64) -> (Program, ChipConfig) {
    let program = build(
        name,
        &orchestration(n_args, body),
        &[Kernel {
            func_id: 0,
            name: "noop",
            core: CoreType::Aiv,
            source: NOOP,
        }],
    );
    let mut cfg = config();
    cfg.n_workers = Some(2);
    cfg.rings = RingSizes::resolve_with_env(
        &RingOverrides {
            task_window: Some(RingOverride::All(window)),
            ..Default::default()
        },
        &|_| None,
    )
    .unwrap();
    (program, cfg)
}

/// The allocations of one run of `program` over a 16-element f32 tensor (`direction`) and
/// `scalars`, which must submit `n_tasks` tasks.
fn allocations(
    program: &Program,
    cfg: &ChipConfig,
    direction: ArgDirection,
    scalars: &[u64],
    n_tasks: u64,
) -> u64 {
    let mut x = vec![0f32; 16];
    let bytes: &mut [u8] =
        // SAFETY: plain f32 storage viewed as bytes.
        unsafe { std::slice::from_raw_parts_mut(x.as_mut_ptr().cast::<u8>(), 64) };
    let mut args = vec![OrchArg::Tensor(HostTensor {
        direction,
        dtype: 0,
        shape: vec![16],
        data: bytes,
    })];
    args.extend(scalars.iter().map(|&v| OrchArg::Scalar(v)));
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let report = run(program, &mut args, cfg).unwrap();
    assert_eq!(report.n_tasks, n_tasks);
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

/// Asserts that the second run made at most a few allocations more than the first (what a
/// run's threads and rings vary by), printing both.
fn assert_about_as_many((base, base_run): (u64, &str), (more, more_run): (u64, &str)) {
    eprintln!("allocations: {base} {base_run}, {more} {more_run}");
    assert!(
        more <= base + 200,
        "{base} allocations {base_run}, {more} {more_run}"
    );
}

#[test]
fn steady_state_makes_no_per_task_allocations() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (program, cfg) = setup("alloc", BODY, 2, 512);
    let count =
        |n_tasks: u64| allocations(&program, &cfg, ArgDirection::InOut, &[n_tasks / 2], n_tasks);
    count(4_000); // warm-up: thread-locals, lazy statics
    let small = count(4_000);
    let large = count(16_000);
    // Per-run allocations (threads, ring slots, queues) are the same for both sizes; a
    // per-task allocation would add at least 12,000 here.
    assert_about_as_many((small, "for 4k tasks"), (large, "for 16k tasks"));
}

/// Every task in a slot of its own (one scope, a window larger than the run): one tensor,
/// or five (past the slot's first cells, into its overflow cells) and two scalars.
const FRESH: &str = r#"
    ChipTensor x = orch_args.tensor(0).ref();
    uint64_t n = orch_args.scalar(0);
    uint64_t wide = orch_args.scalar(1);
    PTO2_SCOPE() {
        for (uint64_t i = 0; i < n; ++i) {
            CoreTaskArgs p; p.add_input(x);
            if (wide) {
                p.add_input(x); p.add_input(x); p.add_input(x); p.add_input(x);
                p.add_scalar((int64_t)i); p.add_scalar(1.0f);
            }
            rt_submit_aiv_task(0, p);
        }
    }
"#;

#[test]
fn a_task_with_up_to_six_tensors_and_two_scalars_allocates_nothing_on_a_fresh_slot() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (program, cfg) = setup("alloc_fresh", FRESH, 3, 4096);
    let count = |wide: u64| allocations(&program, &cfg, ArgDirection::In, &[2_000, wide], 2_000);
    count(1); // warm-up: thread-locals, lazy statics
    let narrow = count(0);
    let wide = count(1);
    // A list that spilled to a vector on a slot's first use would add 2,000 or more.
    assert_about_as_many(
        (narrow, "with one tensor per task"),
        (wide, "with five and two scalars"),
    );
}
