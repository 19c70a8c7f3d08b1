// pto_orchestration_core.h: the orchestration API both Simpler generations share, over the C
// function table of pto_runtime_abi.h.
//
// User code never includes it: pto_orchestration_api.h (2026-08) and orchestration_api.h
// (2026-09) are thin spellings over it (scope guards and macros, config and runtime names,
// error-code names), so both generations run on one runtime.
//
// An orchestration is a shared object that exports (names configurable in kernel_config.py's
// ORCHESTRATION "function_name" / "config_name")
//
//     extern "C" <config struct> aicpu_orchestration_config(const ChipTaskArgs& orch_args);
//     extern "C" void aicpu_orchestration_entry(const ChipTaskArgs& orch_args);
//
// and submits kernel tasks with the functions below. Everything here is inline and reaches the
// runtime only through the C function table in pto_runtime_abi.h, so the shared object has no
// link dependency on the runtime.
//
// Argument errors are latched on the CoreTaskArgs (`has_error`, `error_msg`), never thrown;
// submitting arguments with an error fails the run with error 5 (INVALID_ARGS) naming the
// task and the orchestration line.
#pragma once

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// The STL Simpler's orchestration header makes visible (orchestrations rely on it).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pto_runtime_abi.h"
#include "pto_sim_thread_exit.h"

/// Alignment of runtime structures.
#define PTO2_ALIGN_SIZE 64
/// Alignment of each runtime-allocated output inside a task's packed buffer.
#define PTO2_PACKED_OUTPUT_ALIGN 1024
/// Most nested scopes.
#define PTO2_MAX_SCOPE_DEPTH 64

/// A pause for spin-wait loops in an orchestration (on the simulator: a CPU pause hint, then
/// a sleep of 10 us). Not sched_yield(): under the host's fair scheduler a thread that yields
/// in a loop is pushed behind every busy thread, and while many simulated cores spin (more
/// threads than host CPUs) the waiting orchestration would not run again for a long time; a
/// short sleep hands the CPU over without that penalty.
#if defined(__x86_64__) || defined(__i386__)
#define SPIN_WAIT_HINT() \
    do { __builtin_ia32_pause(); pto_detail::spin_wait_sleep(); } while (0)
#else
#define SPIN_WAIT_HINT() \
    do { pto_detail::spin_wait_sleep(); } while (0)
#endif

namespace pto_detail {
/// The sleep of SPIN_WAIT_HINT().
inline void spin_wait_sleep() {
    struct timespec ts = {0, 10000};
    nanosleep(&ts, nullptr);
}
} // namespace pto_detail

namespace pto_detail {
// The runtime bound to this thread. Thread-local so that two runs of the same orchestration
// shared object in one process (each on its own orchestration thread) do not interfere.
inline thread_local PTO2Runtime* g_runtime = nullptr;

inline PTO2Runtime* rt() { return g_runtime; }

inline void vlog(int32_t level, const char* func, const char* fmt, va_list ap) {
    char buf[2048];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    if (g_runtime != nullptr) {
        g_runtime->ops->log(g_runtime, level, func, buf);
    } else {
        fprintf(stderr, "%s: %s\n", func, buf);
    }
}

inline void log(int32_t level, const char* func, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
inline void log(int32_t level, const char* func, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog(level, func, fmt, ap);
    va_end(ap);
}

inline const simpler::tmr::Tensor& invalid_tensor() {
    static const simpler::tmr::Tensor t = [] {
        simpler::tmr::Tensor z;
        memset(&z, 0, sizeof(z));
        z.owner_task_id = simpler::tmr::TaskId::invalid();
        return z;
    }();
    return t;
}

inline void report_fatal(int32_t code, const char* func, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
inline void report_fatal(int32_t code, const char* func, const char* file, int line, const char* fmt, ...) {
    char buf[1024];  // Simpler truncates the message to 1024 bytes
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (rt() != nullptr) {
        rt()->ops->report_fatal(rt(), code, func, buf, file, line);
    } else {
        fprintf(stderr, "%s:%d: %s: fatal error %d: %s\n", file, line, func, code, buf);
    }
}

inline void tensor_contract_violation(const char* message) {
    report_fatal(PTO2_ERROR_INVALID_ARGS, PTO_TENSOR_SPELLING, nullptr, 0, "%s", message);
}

/// Whether every type is a tensor lvalue (the task stores pointers to them).
template <class... Ts> constexpr bool all_tensor_lvalues =
    ((std::is_lvalue_reference<Ts>::value && std::is_same<std::decay_t<Ts>, simpler::tmr::Tensor>::value) && ...);
/// Whether every type is a TensorCreateInfo lvalue.
template <class... Ts> constexpr bool all_create_info_lvalues =
    ((std::is_lvalue_reference<Ts>::value && std::is_same<std::decay_t<Ts>, TensorCreateInfo>::value) && ...);
/// Whether every type is a task id.
template <class... Ts> constexpr bool all_task_ids = (std::is_same<std::decay_t<Ts>, simpler::tmr::TaskId>::value && ...);
}  // namespace pto_detail

/// Called by the runtime before the entry runs, on the orchestration thread.
extern "C" __attribute__((visibility("default"), weak)) void framework_bind_runtime(PTO2Runtime* rt) {
    pto_detail::g_runtime = rt;
    pto_detail::tensor_contract_hook = rt != nullptr ? &pto_detail::tensor_contract_violation : nullptr;
}

/// Runs the orchestration entry and turns a C++ exception that escapes it into a status, so
/// it never unwinds into the runtime: 0 = returned, 2 = threw (its text in `message`).
extern "C" __attribute__((weak, visibility("default"))) int pto_orchestration_call(
    void (*entry)(const ChipTaskArgs&), const ChipTaskArgs* args, char* message, size_t capacity) {
    try {
        entry(*args);
        return 0;
    } catch (abi::__forced_unwind&) {
        pto_detail::thread_exit_refused("orchestration");
    } catch (const std::exception& e) {
        snprintf(message, capacity, "%s", e.what());
    } catch (...) {
        snprintf(message, capacity, "an exception that is not a std::exception");
    }
    return 2;
}

/// The runtime this orchestration thread is bound to (null outside a run).
inline PTO2Runtime* current_runtime() { return pto_detail::g_runtime; }

/// Aborts with a message when `cond` is false (in every build), as Simpler's assertion.
#define always_assert(cond)                                                                     \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "%s:%d: %s: assertion failed: %s\n", __FILE__, __LINE__, __func__, #cond); \
            abort();                                                                            \
        }                                                                                       \
    } while (0)
/// `always_assert` in builds without NDEBUG.
#ifdef NDEBUG
#define debug_assert(cond) ((void)0)
#else
#define debug_assert(cond) always_assert(cond)
#endif

/// A tensor slot as `tensor(i)` returns it: the tensor, or the create info of an OUTPUT.
union TensorRef {
    const simpler::tmr::Tensor* ptr;
    const TensorCreateInfo* create_info;
};

/// Task arguments (Simpler's `Arg`): tensors first (`add_input / add_output / add_inout /
/// add_no_dep`), then scalars (`add_scalar`), then options (dependencies, predicate, launch
/// spec, timing slot, dump marks). Tensor slots hold *pointers* to the caller's objects,
/// which must outlive the submit; passing a temporary is a compile error. Built in place and
/// reused with `reset()`; not copyable.
class CoreTaskArgs : public PTO2TaskArgsData {
public:
    CoreTaskArgs() { reset(); }
    CoreTaskArgs(const CoreTaskArgs&) = delete;
    CoreTaskArgs& operator=(const CoreTaskArgs&) = delete;

    /// Read-only existing tensors.
    template <class... Ts> void add_input(Ts&&... ts) {
        static_assert(sizeof...(Ts) > 0, "add_input needs at least one " PTO_TENSOR_SPELLING);
        static_assert(pto_detail::all_tensor_lvalues<Ts...>,
                      "add_input takes named " PTO_TENSOR_SPELLING " variables: the task keeps a pointer, so a temporary "
                      "(e.g. x.view(...)) would dangle; bind it to a variable first");
        (add_slot(&ts, TensorArgType::INPUT), ...);
    }
    /// Either tensors the runtime allocates (all TensorCreateInfo: OUTPUT, returned by the
    /// submit in TaskOutputTensors), or existing tensors this task writes (all tensors:
    /// OUTPUT_EXISTING). Mixing the two in one call is a compile error.
    template <class... Ts> void add_output(Ts&&... ts) {
        static_assert(sizeof...(Ts) > 0, "add_output needs at least one argument");
        static_assert(pto_detail::all_tensor_lvalues<Ts...> || pto_detail::all_create_info_lvalues<Ts...>,
                      "add_output takes either named TensorCreateInfo variables (runtime-allocated outputs) or "
                      "named " PTO_TENSOR_SPELLING " variables (existing outputs), not a mix and not temporaries");
        if constexpr (pto_detail::all_create_info_lvalues<Ts...>) {
            (add_slot(&ts, TensorArgType::OUTPUT), ...);
        } else {
            (add_slot(&ts, TensorArgType::OUTPUT_EXISTING), ...);
        }
    }
    /// Read-then-write existing tensors.
    template <class... Ts> void add_inout(Ts&&... ts) {
        static_assert(sizeof...(Ts) > 0, "add_inout needs at least one " PTO_TENSOR_SPELLING);
        static_assert(pto_detail::all_tensor_lvalues<Ts...>,
                      "add_inout takes named " PTO_TENSOR_SPELLING " variables (the task keeps a pointer)");
        (add_slot(&ts, TensorArgType::INOUT), ...);
    }
    /// Existing tensors without TensorMap tracking (creator edge only).
    template <class... Ts> void add_no_dep(Ts&&... ts) {
        static_assert(sizeof...(Ts) > 0, "add_no_dep needs at least one " PTO_TENSOR_SPELLING);
        static_assert(pto_detail::all_tensor_lvalues<Ts...>,
                      "add_no_dep takes named " PTO_TENSOR_SPELLING " variables (the task keeps a pointer)");
        (add_slot(&ts, TensorArgType::NO_DEP), ...);
    }
    /// Scalars (arithmetic or enum values), bit-cast into zeroed 64-bit slots; they must come
    /// after every tensor.
    template <class... Ts> void add_scalar(const Ts&... vs) {
        static_assert(sizeof...(Ts) > 0, "add_scalar needs at least one value");
        static_assert((is_supported_scalar_arg_v<Ts> && ...), "add_scalar: type must be arithmetic or enum");
        (push_scalar(to_u64(vs), &vs, (uint8_t)dtype_of<Ts>()), ...);
    }
    /// `count` raw 64-bit scalars.
    void add_scalars(const uint64_t* values, int count) {
        if (count < 0 || (values == nullptr && count > 0)) {
            set_error("add_scalars: negative count or null values");
            return;
        }
        if ((uint32_t)count > MAX_SCALAR_ARGS - n_scalars) {
            set_error("Too many scalar args (exceeds MAX_SCALAR_ARGS=16)");
            return;
        }
        for (int i = 0; i < count; ++i) push_scalar(values[i], nullptr, (uint8_t)DataType::UINT64);
    }
    /// `count` int32 values, each *zero*-extended into its slot (-1 is 0x00000000FFFFFFFF).
    void add_scalars_i32(const int32_t* values, int count) {
        if (count < 0 || (values == nullptr && count > 0)) {
            set_error("add_scalars_i32: negative count or null values");
            return;
        }
        if ((uint32_t)count > MAX_SCALAR_ARGS - n_scalars) {
            set_error("Too many scalar args (exceeds MAX_SCALAR_ARGS=16)");
            return;
        }
        for (int i = 0; i < count; ++i) push_scalar((uint64_t)(uint32_t)values[i], nullptr, (uint8_t)DataType::INT32);
    }
    /// Copies scalars `[src_offset, src_offset + count)` of `src`.
    void copy_scalars_from(const CoreTaskArgs& src, int src_offset, int count) {
        if (src_offset < 0 || count < 0 || (uint32_t)(src_offset + count) > src.n_scalars) {
            set_error("Source scalar range out of bounds in copy_scalars_from");
            return;
        }
        if ((uint32_t)count > MAX_SCALAR_ARGS - n_scalars) {
            set_error("Too many scalar args (exceeds MAX_SCALAR_ARGS=16)");
            return;
        }
        for (int i = 0; i < count; ++i) {
            push_scalar(src.scalars[src_offset + i], nullptr, src.scalar_dtype[src_offset + i]);
        }
    }

    /// Explicit dependencies (WAIT | RETAIN each). The array must outlive the submit; `n == 0`
    /// clears them; setting a second non-empty list without clearing is an error.
    void set_dependencies(const simpler::tmr::TaskId* ids, uint32_t n) { set_deps(ids, nullptr, n); }
    /// Explicit dependencies with per-dependency flags (`kinds[i]`, DEP_WAIT / DEP_RETAIN).
    void set_dependencies_with_kinds(const simpler::tmr::TaskId* ids, const DepFlags* kinds, uint32_t n) {
        if (n > 0 && kinds == nullptr) {
            set_error("set_dependencies_with_kinds: null kinds with a non-zero count");
            return;
        }
        set_deps(ids, kinds, n);
    }
    /// Number of explicit dependencies.
    uint32_t explicit_dep_count() const { return n_deps; }
    /// Explicit dependency `i`.
    simpler::tmr::TaskId explicit_dep(uint32_t i) const { return i < n_deps ? deps[i] : simpler::tmr::TaskId::invalid(); }
    /// Flags of explicit dependency `i` (WAIT | RETAIN unless set with kinds).
    DepFlags explicit_dep_kind(uint32_t i) const {
        if (i >= n_deps) return DEP_NONE;
        return dep_kinds != nullptr ? dep_kinds[i] : DEP_WAIT | DEP_RETAIN;
    }

    /// Lets the runtime stage this task on a core before its producers finish (a hint).
    void set_allow_early_resolve(bool v = true) { allow_early_resolve_ = v ? 1 : 0; }
    bool allow_early_resolve() const { return allow_early_resolve_ != 0; }

    /// Dispatch only if the predicate holds when the task becomes ready (see CoreTaskPredicate).
    void set_predicate(const CoreTaskPredicate& p) { predicate_ = p; }
    const CoreTaskPredicate& predicate() const { return predicate_; }

    /// Records this task's dispatch and finish in timing slot `slot` (0..15).
    void set_task_timing_slot(int32_t slot) {
        if (slot < TASK_TIMING_SLOT_NONE || slot >= NUM_TASK_TIMING_SLOTS) {
            set_error("set_task_timing_slot: the slot must be -1 or 0..15");
            return;
        }
        timing_slot = slot;
    }
    int32_t task_timing_slot() const { return timing_slot; }

    /// Marks the whole task for the selective args dump.
    void dump() {
        if (n_tensors == 0 && n_scalars == 0) {
            set_error("dump(): the task has no arguments yet; add them before marking");
            return;
        }
        dump_all = 1;
    }
    /// Marks specific arguments (the variables already added to this task) for the dump.
    template <class T, class... Ts> void dump(const T& a, const Ts&... rest) {
        mark_dump(&a, std::is_same<std::decay_t<T>, simpler::tmr::Tensor>::value,
                  std::is_same<std::decay_t<T>, TensorCreateInfo>::value);
        if constexpr (sizeof...(rest) > 0) dump(rest...);
    }

    /// Drops every argument, dependency, hint, predicate, timing slot and dump mark; keeps
    /// the launch spec and a latched error.
    void clear() {
        n_tensors = 0;
        n_scalars = 0;
        deps = nullptr;
        dep_kinds = nullptr;
        n_deps = 0;
        dump_all = 0;
        allow_early_resolve_ = 0;
        timing_slot = TASK_TIMING_SLOT_NONE;
        predicate_ = CoreTaskPredicate();
    }
    /// `clear()` plus the latched error.
    void reset() {
        clear();
        has_error = false;
        error_msg = nullptr;
    }
    /// Latches `msg` (a text that outlives the submit) unless an error is already latched.
    void set_error(const char* msg) {
        if (!has_error) {
            has_error = true;
            error_msg = msg;
        }
    }

    uint32_t tensor_count() const { return n_tensors; }
    uint32_t scalar_count() const { return n_scalars; }
    /// Tensor slot `i` (`.create_info` for an OUTPUT slot, else `.ptr`).
    TensorRef tensor(uint32_t i) const {
        TensorRef r;
        r.ptr = static_cast<const simpler::tmr::Tensor*>(tensors[i].ref);
        return r;
    }
    uint64_t scalar(uint32_t i) const { return scalars[i]; }
    TensorArgType tag(uint32_t i) const { return (TensorArgType)tensors[i].type; }

private:
    void add_slot(const void* ref, TensorArgType type) {
        if (n_scalars != 0) {
            set_error("add_input/add_output/add_inout called after add_scalar: all tensors must be added before any scalars");
            return;
        }
        if (n_tensors >= MAX_TENSOR_ARGS) {
            set_error("Too many tensor args (exceeds MAX_TENSOR_ARGS=32)");
            return;
        }
        PTO2ArgSlot& s = tensors[n_tensors++];
        s.ref = ref;
        s.type = (uint8_t)type;
        s.dump = 0;
    }
    void push_scalar(uint64_t bits, const void* source, uint8_t dtype) {
        if (n_scalars >= MAX_SCALAR_ARGS) {
            set_error("Too many scalar args (exceeds MAX_SCALAR_ARGS=16)");
            return;
        }
        scalar_sources[n_scalars] = source;
        scalar_dump[n_scalars] = 0;
        scalar_dtype[n_scalars] = dtype;
        scalars[n_scalars++] = bits;
    }
    void set_deps(const simpler::tmr::TaskId* ids, const DepFlags* kinds, uint32_t n) {
        if (n == 0) {
            deps = nullptr;
            dep_kinds = nullptr;
            n_deps = 0;
            return;
        }
        if (ids == nullptr) {
            set_error("set_dependencies: null ids with a non-zero count");
            return;
        }
        if (n_deps != 0) {
            set_error("set_dependencies: dependencies are already set; clear them (n = 0) or reset() first");
            return;
        }
        deps = ids;
        dep_kinds = kinds;
        n_deps = n;
    }
    void mark_dump(const void* p, bool is_tensor, bool is_create_info) {
        for (uint32_t i = 0; i < n_tensors; ++i) {
            bool output = tensors[i].type == (uint8_t)TensorArgType::OUTPUT;
            if (tensors[i].ref == p && (is_create_info ? output : !output) && (is_tensor || is_create_info)) {
                tensors[i].dump = 1;
                return;
            }
        }
        if (!is_tensor && !is_create_info) {
            for (uint32_t i = 0; i < n_scalars; ++i) {
                if (scalar_sources[i] != p) continue;
                scalar_dump[i] |= 1;
                for (uint32_t j = i + 1; j < n_scalars; ++j) {
                    if (scalar_sources[j] == p) scalar_dump[i] |= 2;  // the same variable twice
                }
                return;
            }
        }
        set_error("dump(...): an argument is not one of this task's arguments (pass the variables you added)");
    }
};

inline const simpler::tmr::Tensor& TaskOutputTensors::get_ref(uint32_t i) const& {
    if (i >= count_ || tensors_[i] == nullptr) {
        pto_detail::report_fatal(PTO2_ERROR_INVALID_ARGS, "get_ref", nullptr, 0,
                                 "get_ref(%u): output index out of range (the task has %u runtime-allocated outputs)",
                                 i, count_);
        return pto_detail::invalid_tensor();
    }
    return *tensors_[i];
}

namespace pto_detail {
inline TaskOutputTensors submit(const MixedKernels& kernels, const PTO2TaskArgsData& args, uint32_t kind,
                                const char* file, int line) {
    TaskOutputTensors out;
    out.task_id_ = simpler::tmr::TaskId::invalid();
    out.count_ = 0;
    out._pad0 = 0;
    if (rt() == nullptr) return out;
    rt()->ops->submit_task(rt(), &kernels, &args, kind, file, line, &out);
    return out;
}
}  // namespace pto_detail

/// Submits a task spanning a cluster subset (`INVALID_KERNEL_ID` = inactive slot; at least one
/// slot must be active).
inline TaskOutputTensors rt_submit_task(const MixedKernels& kernels, const CoreTaskArgs& args,
                                        const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return pto_detail::submit(kernels, args, PTO2_SUBMIT_KERNEL, file, line);
}
/// Submits an AIC (cube) task running kernel `kernel_id`.
inline TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs& args,
                                            const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    MixedKernels k;
    k.aic_kernel_id = kernel_id;
    return pto_detail::submit(k, args, PTO2_SUBMIT_KERNEL, file, line);
}
/// Submits an AIV (vector) task running kernel `kernel_id` (the AIV0 slot).
inline TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs& args,
                                            const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    MixedKernels k;
    k.aiv0_kernel_id = kernel_id;
    return pto_detail::submit(k, args, PTO2_SUBMIT_KERNEL, file, line);
}
/// Submits a dependency-only task: it takes part in dependency tracking (outputs and
/// explicit dependencies included) and completes once ready, without running a kernel.
inline TaskOutputTensors rt_submit_dummy_task(const CoreTaskArgs& args, const char* file = __builtin_FILE(),
                                              int line = __builtin_LINE()) {
    return pto_detail::submit(MixedKernels{}, args, PTO2_SUBMIT_DUMMY, file, line);
}

namespace pto_detail {
inline TaskOutputTensors alloc(const PTO2TaskArgsData& a, const char* file, int line) {
    TaskOutputTensors out;
    out.task_id_ = simpler::tmr::TaskId::invalid();
    out.count_ = 0;
    out._pad0 = 0;
    if (rt() == nullptr) return out;
    rt()->ops->alloc_tensors(rt(), &a, file, line, &out);
    return out;
}
}  // namespace pto_detail

namespace pto_detail {
inline TaskOutputTensors alloc_args(const char* file, int line, const CoreTaskArgs& args) {
    return alloc(args, file, line);
}
inline TaskOutputTensors alloc_args(const char* file, int line, const TensorCreateInfo* cis, uint32_t n) {
    CoreTaskArgs a;
    for (uint32_t i = 0; i < n; ++i) a.add_output(cis[i]);
    return alloc(a, file, line);
}
template <class... Ts>
inline TaskOutputTensors alloc_args(const char* file, int line, const TensorCreateInfo& ci, const Ts&... rest) {
    static_assert(all_create_info_lvalues<const Ts&...>, "alloc_tensors takes TensorCreateInfo variables");
    CoreTaskArgs a;
    a.add_output(ci, rest...);
    return alloc(a, file, line);
}
}  // namespace pto_detail

/// Allocates tensors without running a kernel and returns them like a submit does;
/// `.task_id()` of the result can be used as an explicit dependency. Three forms:
/// `alloc_tensors(ci, ...)` (one or more TensorCreateInfo variables),
/// `alloc_tensors(cis, n)` (an array of create infos) and `alloc_tensors(args)` (the OUTPUT
/// slots of a CoreTaskArgs that holds nothing else). A macro over
/// `pto_detail::alloc_args`, so that error messages name the caller's file and line.
#define alloc_tensors(...) ::pto_detail::alloc_args(__FILE__, __LINE__, __VA_ARGS__)

/// Blocking read of element `idx` of `t`: waits for the tensor's creator and every writer
/// overlapping it, then returns the element's bytes reinterpreted as `T`.
template <class T = uint64_t>
inline T get_tensor_data(const simpler::tmr::Tensor& t, uint32_t ndims, const uint32_t idx[],
                         const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    if (pto_detail::rt() == nullptr) return T{};
    uint64_t bits = pto_detail::rt()->ops->get_tensor_data(pto_detail::rt(), &t, ndims, idx, file, line);
    return from_u64<T>(bits);
}
/// Blocking write of element `idx` of `t`: additionally waits until every consumer of those
/// producers is done, then writes the low bytes of `v`.
template <class T = uint64_t>
inline void set_tensor_data(const simpler::tmr::Tensor& t, uint32_t ndims, const uint32_t idx[], T v,
                            const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    if (pto_detail::rt() == nullptr) return;
    pto_detail::rt()->ops->set_tensor_data(pto_detail::rt(), &t, ndims, idx, to_u64(v), file, line);
}

/// Number of clusters (1 AIC + 2 AIV each) of this run's platform.
inline int32_t rt_available_cluster_count() { return pto_detail::rt()->ops->available_cluster_count(pto_detail::rt()); }
/// Number of AIV cores of this run's platform.
inline int32_t rt_available_aiv_count() { return pto_detail::rt()->ops->available_aiv_count(pto_detail::rt()); }
/// Marks the end of submission.
inline void rt_orchestration_done() { pto_detail::rt()->ops->orchestration_done(pto_detail::rt()); }
/// Whether a fatal error has been latched (later submits are ignored).
inline bool rt_is_fatal() { return pto_detail::rt() != nullptr && pto_detail::rt()->ops->is_fatal(pto_detail::rt()); }

/// Opens a scope (prefer the scope macros or guard, which close it).
inline void rt_scope_begin(PTO2ScopeMode mode = PTO2ScopeMode::AUTO, const char* file = __builtin_FILE(),
                           int line = __builtin_LINE()) {
    pto_detail::rt()->ops->scope_begin(pto_detail::rt(), mode, file, line);
}
/// Closes the innermost scope.
inline void rt_scope_end() { pto_detail::rt()->ops->scope_end(pto_detail::rt()); }

namespace pto_detail {
/// RAII scope: opens at construction, closes at destruction (2026-08 spells it
/// `PTO2ScopeGuard`, 2026-09 `ScopeGuard`).
class ScopeGuard {
public:
    explicit ScopeGuard(PTO2ScopeMode mode = PTO2ScopeMode::AUTO, const char* file = __builtin_FILE(),
                        int line = __builtin_LINE()) {
        rt_scope_begin(mode, file, line);
    }
    ~ScopeGuard() { rt_scope_end(); }
    ScopeGuard(const ScopeGuard&) = delete;
    ScopeGuard& operator=(const ScopeGuard&) = delete;
};
}  // namespace pto_detail

/// Latches a fatal error with `code` and a printf-style message (truncated to 1024 bytes).
#define rt_report_fatal(code, ...) ::pto_detail::report_fatal((code), __func__, __FILE__, __LINE__, __VA_ARGS__)

#define PTO_CONCAT_INNER(a, b) a##b
#define PTO_CONCAT(a, b) PTO_CONCAT_INNER(a, b)

#define LOG_ERROR(...) ::pto_detail::log(PTO2_LOG_ERROR, __FUNCTION__, __VA_ARGS__)
#define LOG_WARN(...) ::pto_detail::log(PTO2_LOG_WARN, __FUNCTION__, __VA_ARGS__)
#define LOG_TIMING(...) ::pto_detail::log(PTO2_LOG_TIMING, __FUNCTION__, __VA_ARGS__)
#define LOG_INFO(...) ::pto_detail::log(PTO2_LOG_INFO, __FUNCTION__, __VA_ARGS__)
#define LOG_DEBUG(...) ::pto_detail::log(PTO2_LOG_DEBUG, __FUNCTION__, __VA_ARGS__)

// ---------------------------------------------------------------------------------------------
// Task arguments that carry their own explicit-dependency buffer (2026-08: pto_arg_with_deps.h,
// 2026-09: arg_with_deps.h; both API headers include them last).
// ---------------------------------------------------------------------------------------------

/// Task arguments with a fixed buffer of `MAX_DEP_COUNT` explicit dependencies.
template <size_t MAX_DEP_COUNT = 16>
class CoreTaskArgsWithDeps : private CoreTaskArgs {
public:
    CoreTaskArgsWithDeps() : n_(0) {}

    using CoreTaskArgs::add_inout;
    using CoreTaskArgs::add_input;
    using CoreTaskArgs::add_no_dep;
    using CoreTaskArgs::add_output;
    using CoreTaskArgs::add_scalar;
    using CoreTaskArgs::add_scalars;
    using CoreTaskArgs::add_scalars_i32;
    using CoreTaskArgs::allow_early_resolve;
    using CoreTaskArgs::copy_scalars_from;
    using CoreTaskArgs::dump;
    using CoreTaskArgs::error_msg;
    using CoreTaskArgs::has_error;
    using CoreTaskArgs::launch_spec;
    using CoreTaskArgs::predicate;
    using CoreTaskArgs::scalar;
    using CoreTaskArgs::scalar_count;
    using CoreTaskArgs::set_allow_early_resolve;
    using CoreTaskArgs::set_error;
    using CoreTaskArgs::set_predicate;
    using CoreTaskArgs::set_task_timing_slot;
    using CoreTaskArgs::tag;
    using CoreTaskArgs::task_timing_slot;
    using CoreTaskArgs::tensor;
    using CoreTaskArgs::tensor_count;

    /// Adds dependencies on `ids...` (WAIT | RETAIN); accumulates across calls.
    template <class... Ts> void add_dep(const Ts&... ids) {
        static_assert(sizeof...(Ts) > 0, "add_dep needs at least one task id");
        static_assert(pto_detail::all_task_ids<Ts...>, "add_dep takes task ids (the task_id() of a submit result)");
        (push(ids, DEP_WAIT | DEP_RETAIN), ...);
    }
    /// Adds dependencies on `ids...` that only order this task (WAIT).
    template <class... Ts> void add_dep_wait(const Ts&... ids) {
        static_assert(sizeof...(Ts) > 0, "add_dep_wait needs at least one task id");
        static_assert(pto_detail::all_task_ids<Ts...>, "add_dep_wait takes task ids (the task_id() of a submit result)");
        (push(ids, DEP_WAIT), ...);
    }
    /// Dependencies added so far.
    uint32_t dep_count() const { return (uint32_t)n_; }

    /// Resets the arguments and the dependency list.
    void reset() {
        CoreTaskArgs::reset();
        n_ = 0;
    }
    /// Binds the dependency buffer to the arguments (safe to call before every submit).
    CoreTaskArgs& finalize_for_submit() {
        CoreTaskArgs::set_dependencies_with_kinds(nullptr, nullptr, 0);
        if (n_ > 0) CoreTaskArgs::set_dependencies_with_kinds(ids_, kinds_, (uint32_t)n_);
        return *this;
    }

private:
    void push(simpler::tmr::TaskId id, DepFlags kind) {
        if (n_ >= MAX_DEP_COUNT) {
            CoreTaskArgs::set_error("add_dep: more dependencies than CoreTaskArgsWithDeps<N> holds; raise N");
            return;
        }
        ids_[n_] = id;
        kinds_[n_] = kind;
        ++n_;
    }

    simpler::tmr::TaskId ids_[MAX_DEP_COUNT > 0 ? MAX_DEP_COUNT : 1];
    DepFlags kinds_[MAX_DEP_COUNT > 0 ? MAX_DEP_COUNT : 1];
    size_t n_;
};

/// Submits a task with its own dependency buffer.
template <size_t N>
inline TaskOutputTensors rt_submit_task(const MixedKernels& kernels, CoreTaskArgsWithDeps<N>& args,
                                        const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return rt_submit_task(kernels, args.finalize_for_submit(), file, line);
}
/// Submits an AIC task with its own dependency buffer.
template <size_t N>
inline TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, CoreTaskArgsWithDeps<N>& args,
                                            const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return rt_submit_aic_task(kernel_id, args.finalize_for_submit(), file, line);
}
/// Submits an AIV task with its own dependency buffer.
template <size_t N>
inline TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, CoreTaskArgsWithDeps<N>& args,
                                            const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return rt_submit_aiv_task(kernel_id, args.finalize_for_submit(), file, line);
}
