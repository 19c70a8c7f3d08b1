//! The `extern "C"` functions of the ops table handed to orchestrations.
//!
//! Each recovers the [`Orchestrator`] from the handle's context pointer and runs under
//! `catch_unwind`: a panic never crosses into C++; it becomes a fatal error instead.

use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::ErrorCode;
use crate::ffi::{
    ChipTensor, MixedKernels, RuntimeHandle, RuntimeOps, TaskArgsData, TaskOutputTensors,
    MAX_TENSOR_DIMS, SUBMIT_DUMMY,
};
use crate::orchestrator::{c_str, empty_outputs, Orchestrator, ScopeMode, SubmitKind};
use crate::task::Site;

/// The table every run hands to `framework_bind_runtime`.
pub static OPS: RuntimeOps = RuntimeOps {
    submit_task,
    alloc_tensors,
    scope_begin,
    scope_end,
    orchestration_done,
    is_fatal,
    report_fatal,
    log,
    get_tensor_data,
    set_tensor_data,
    available_cluster_count,
    available_aiv_count,
};

/// Runs `f` on the orchestrator behind `rt`, turning a panic into a fatal error.
///
/// # Safety
/// `rt` must be the handle the runtime bound for this orchestration thread; its context
/// points to the live `Orchestrator`, which only this thread uses.
unsafe fn with_orch<R>(
    rt: *mut RuntimeHandle,
    fallback: R,
    f: impl FnOnce(&mut Orchestrator) -> R,
) -> R {
    if rt.is_null() {
        return fallback;
    }
    // SAFETY: per the contract, `context` is the orchestrator owned by this thread.
    let orch = unsafe { &mut *((*rt).context as *mut Orchestrator) };
    match catch_unwind(AssertUnwindSafe(|| f(&mut *orch))) {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".to_string());
            orch.chip().raise(
                ErrorCode::ExplicitOrchFatal,
                format!("internal runtime error: {what}"),
            );
            fallback
        }
    }
}

unsafe extern "C" fn submit_task(
    rt: *mut RuntimeHandle,
    kernels: *const MixedKernels,
    args: *const TaskArgsData,
    kind: u32,
    file: *const c_char,
    line: i32,
    out: *mut TaskOutputTensors,
) {
    let site = Site { file, line };
    let kind = if kind == SUBMIT_DUMMY {
        SubmitKind::Dummy
    } else {
        SubmitKind::Kernel
    };
    let mut local = None;
    // SAFETY: `out`, when non-null, points to the caller's TaskOutputTensors.
    let out = unsafe { out_or_local(out, &mut local) };
    // SAFETY: the C++ API passes pointers to live objects for the duration of the call.
    let submitted = unsafe {
        with_orch(rt, false, |o| {
            if kernels.is_null() || args.is_null() {
                o.chip().raise(
                    ErrorCode::InvalidArgs,
                    format!("submit at {} with null arguments", site.render()),
                );
                return false;
            }
            o.submit(*kernels, &*args, site, kind, out);
            true
        })
    };
    if !submitted {
        *out = empty_outputs();
    }
}

/// The caller's `TaskOutputTensors` at `out`, or (null) `local`, which holds one.
///
/// # Safety
/// `out` must be null or point to a `TaskOutputTensors` the caller lets us write.
unsafe fn out_or_local(
    out: *mut TaskOutputTensors,
    local: &mut Option<TaskOutputTensors>,
) -> &mut TaskOutputTensors {
    // SAFETY: the caller's contract.
    match unsafe { out.as_mut() } {
        Some(out) => out,
        None => local.insert(empty_outputs()),
    }
}

unsafe extern "C" fn alloc_tensors(
    rt: *mut RuntimeHandle,
    args: *const TaskArgsData,
    file: *const c_char,
    line: i32,
    out: *mut TaskOutputTensors,
) {
    let site = Site { file, line };
    let none = MixedKernels {
        aic: -1,
        aiv0: -1,
        aiv1: -1,
    };
    let mut local = None;
    // SAFETY: `out`, when non-null, points to the caller's TaskOutputTensors.
    let out = unsafe { out_or_local(out, &mut local) };
    // SAFETY: as in submit_task.
    let submitted = unsafe {
        with_orch(rt, false, |o| {
            if args.is_null() {
                return false;
            }
            o.submit(none, &*args, site, SubmitKind::Alloc, out);
            true
        })
    };
    if !submitted {
        *out = empty_outputs();
    }
}

unsafe extern "C" fn scope_begin(rt: *mut RuntimeHandle, mode: u8, file: *const c_char, line: i32) {
    let mode = if mode == 1 {
        ScopeMode::Manual
    } else {
        ScopeMode::Auto
    };
    // SAFETY: bound handle on the orchestration thread.
    unsafe { with_orch(rt, (), |o| o.scope_begin(mode, Site { file, line })) }
}

unsafe extern "C" fn scope_end(rt: *mut RuntimeHandle) {
    // SAFETY: bound handle on the orchestration thread.
    unsafe { with_orch(rt, (), |o| o.scope_end()) }
}

unsafe extern "C" fn orchestration_done(rt: *mut RuntimeHandle) {
    // SAFETY: bound handle on the orchestration thread.
    unsafe { with_orch(rt, (), |o| o.orchestration_done()) }
}

unsafe extern "C" fn is_fatal(rt: *mut RuntimeHandle) -> bool {
    // SAFETY: bound handle on the orchestration thread.
    unsafe {
        with_orch(rt, true, |o| {
            // An orchestration that asks is usually polling (waiting in a loop for
            // something its tasks write): the tasks it holds back as ready must run now,
            // not after its next submit (Simpler queues a ready task at once).
            o.flush_ready();
            o.chip().fatal.is_set()
        })
    }
}

unsafe extern "C" fn report_fatal(
    rt: *mut RuntimeHandle,
    code: i32,
    func: *const c_char,
    message: *const c_char,
    file: *const c_char,
    line: i32,
) {
    // SAFETY: bound handle; strings are NUL-terminated (C++ API).
    unsafe {
        with_orch(rt, (), |o| {
            o.report_fatal(code, &c_str(func), &c_str(message), Site { file, line })
        })
    }
}

unsafe extern "C" fn log(
    _rt: *mut RuntimeHandle,
    level: i32,
    func: *const c_char,
    message: *const c_char,
) {
    let _ = catch_unwind(|| {
        // SAFETY: the C++ API passes NUL-terminated strings (`__func__`, a formatted buffer).
        let (func, message) = unsafe { (c_str(func), c_str(message)) };
        match level {
            l if l >= 40 => tracing::error!(target: "pto::orchestration", "{func}: {message}"),
            l if l >= 30 => tracing::warn!(target: "pto::orchestration", "{func}: {message}"),
            l if l >= 25 => tracing::info!(target: "pto::timing", "{func}: {message}"),
            l if l >= 20 => tracing::info!(target: "pto::orchestration", "{func}: {message}"),
            _ => tracing::debug!(target: "pto::orchestration", "{func}: {message}"),
        }
    });
}

fn indices(ndims: u32, idx: *const u32) -> Option<[u32; MAX_TENSOR_DIMS]> {
    if ndims as usize > MAX_TENSOR_DIMS || (ndims > 0 && idx.is_null()) {
        return None;
    }
    let mut out = [0u32; MAX_TENSOR_DIMS];
    for (d, slot) in out.iter_mut().enumerate().take(ndims as usize) {
        // SAFETY: the caller passes `ndims` indices.
        *slot = unsafe { *idx.add(d) };
    }
    Some(out)
}

unsafe extern "C" fn get_tensor_data(
    rt: *mut RuntimeHandle,
    t: *const ChipTensor,
    ndims: u32,
    idx: *const u32,
    file: *const c_char,
    line: i32,
) -> u64 {
    let site = Site { file, line };
    // SAFETY: bound handle; `t` points to the caller's tensor for the call.
    unsafe {
        with_orch(rt, 0, |o| match (t.as_ref(), indices(ndims, idx)) {
            (Some(t), Some(ix)) => o.get_tensor_data(t, ndims, &ix, site),
            _ => {
                o.chip().raise(
                    ErrorCode::InvalidArgs,
                    format!(
                        "get_tensor_data at {}: null tensor or more than {MAX_TENSOR_DIMS} indices",
                        site.render()
                    ),
                );
                0
            }
        })
    }
}

unsafe extern "C" fn set_tensor_data(
    rt: *mut RuntimeHandle,
    t: *const ChipTensor,
    ndims: u32,
    idx: *const u32,
    bits: u64,
    file: *const c_char,
    line: i32,
) {
    let site = Site { file, line };
    // SAFETY: bound handle; `t` points to the caller's tensor for the call.
    unsafe {
        with_orch(rt, (), |o| match (t.as_ref(), indices(ndims, idx)) {
            (Some(t), Some(ix)) => o.set_tensor_data(t, ndims, &ix, bits, site),
            _ => o.chip().raise(
                ErrorCode::InvalidArgs,
                format!(
                    "set_tensor_data at {}: null tensor or more than {MAX_TENSOR_DIMS} indices",
                    site.render()
                ),
            ),
        })
    }
}

unsafe extern "C" fn available_cluster_count(rt: *mut RuntimeHandle) -> i32 {
    // SAFETY: bound handle on the orchestration thread.
    unsafe { with_orch(rt, 0, |o| o.chip().topology.n_clusters as i32) }
}

unsafe extern "C" fn available_aiv_count(rt: *mut RuntimeHandle) -> i32 {
    // SAFETY: bound handle on the orchestration thread.
    unsafe { with_orch(rt, 0, |o| (o.chip().topology.n_clusters * 2) as i32) }
}
