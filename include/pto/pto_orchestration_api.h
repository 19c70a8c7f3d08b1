// pto_orchestration_api.h: the C++ orchestration API of the PTO runtime.
//
// An orchestration is a shared object that exports
//
//     extern "C" PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args);
//     extern "C" void aicpu_orchestration_entry(const ChipTaskArgs& orch_args);
//
// and submits kernel tasks with the functions below. Everything here is inline and reaches the
// runtime only through the C function table in pto_runtime_abi.h, so the shared object has no
// link dependency on the runtime.
#pragma once

#include <stdarg.h>
#include <stdio.h>

#include <type_traits>

#include "pto_runtime_abi.h"

namespace pto_detail {
/// The DataType a scalar of C++ type T is recorded as in the args dump (doubles and other
/// 8-byte types are recorded as raw UINT64 bits).
template <class T> constexpr DataType scalar_dtype() {
    if (std::is_same<T, bool>::value) return DataType::BOOL;
    if (std::is_same<T, float>::value) return DataType::FLOAT32;
    if (!std::is_integral<T>::value) return DataType::UINT64;
    if (sizeof(T) == 1) return std::is_signed<T>::value ? DataType::INT8 : DataType::UINT8;
    if (sizeof(T) == 2) return std::is_signed<T>::value ? DataType::INT16 : DataType::UINT16;
    if (sizeof(T) == 4) return std::is_signed<T>::value ? DataType::INT32 : DataType::UINT32;
    return std::is_signed<T>::value ? DataType::INT64 : DataType::UINT64;
}

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

inline const ChipTensor& invalid_tensor() {
    static const ChipTensor t = [] {
        ChipTensor z;
        memset(&z, 0, sizeof(z));
        z.owner_task_id = PTO2TaskId::invalid();
        return z;
    }();
    return t;
}
}  // namespace pto_detail

/// Called by the runtime before the entry runs, on the orchestration thread.
extern "C" __attribute__((visibility("default"), weak)) void framework_bind_runtime(PTO2Runtime* rt) {
    pto_detail::g_runtime = rt;
}

/// Task arguments: tensors first (`add_input / add_output / add_inout / add_no_dep`), then
/// scalars (`add_scalar`). Errors (a tensor after a scalar, too many arguments) are latched
/// and reported by the runtime at submit, with the task and the orchestration line.
struct CoreTaskArgs : PTO2TaskArgsData {
    CoreTaskArgs() {
        n_tensors = 0;
        n_scalars = 0;
        deps = nullptr;
        n_deps = 0;
        dump_all = 0;
        launch_spec.block_num = 1;
        launch_spec.require_sync_start = 0;
        launch_spec.allow_early_resolve = 0;
        error = PTO2_ARG_OK;
        error_index = 0;
    }

    void add_tensor_slot(const ChipTensor* t, const void* source, TensorArgType type) {
        if (n_scalars > 0) { latch(PTO2_ARG_TENSOR_AFTER_SCALAR, n_tensors); return; }
        if (n_tensors >= MAX_TENSOR_ARGS) { latch(PTO2_ARG_TOO_MANY_TENSORS, n_tensors); return; }
        PTO2ArgSlot& s = tensors[n_tensors++];
        s.tensor = *t;
        s.source = source;
        s.create_info = TensorCreateInfo();
        s.type = type;
        s.dump = 0;
    }
    void add_create_slot(const TensorCreateInfo& ci) {
        if (n_scalars > 0) { latch(PTO2_ARG_TENSOR_AFTER_SCALAR, n_tensors); return; }
        if (n_tensors >= MAX_TENSOR_ARGS) { latch(PTO2_ARG_TOO_MANY_TENSORS, n_tensors); return; }
        PTO2ArgSlot& s = tensors[n_tensors++];
        memset(&s.tensor, 0, sizeof(s.tensor));
        s.source = &ci;
        s.create_info = ci;
        s.type = TensorArgType::OUTPUT;
        s.dump = 0;
    }
    void latch(int32_t code, uint32_t index) {
        if (error == PTO2_ARG_OK) { error = code; error_index = index; }
    }

    /// Read-only existing tensors.
    template <class... Ts> CoreTaskArgs& add_input(const ChipTensor& t, const Ts&... rest) {
        add_tensor_slot(&t, &t, TensorArgType::INPUT);
        if constexpr (sizeof...(rest) > 0) add_input(rest...);
        return *this;
    }
    /// Write-only existing tensor (registers this task as its producer).
    CoreTaskArgs& add_output(const ChipTensor& t) {
        add_tensor_slot(&t, &t, TensorArgType::OUTPUT_EXISTING);
        return *this;
    }
    /// A tensor the runtime allocates; returned by the submit in `TaskOutputTensors`.
    CoreTaskArgs& add_output(const TensorCreateInfo& ci) {
        add_create_slot(ci);
        return *this;
    }
    template <class A, class B, class... Ts> CoreTaskArgs& add_output(const A& a, const B& b, const Ts&... rest) {
        add_output(a);
        add_output(b, rest...);
        return *this;
    }
    /// Read-then-write existing tensors.
    template <class... Ts> CoreTaskArgs& add_inout(const ChipTensor& t, const Ts&... rest) {
        add_tensor_slot(&t, &t, TensorArgType::INOUT);
        if constexpr (sizeof...(rest) > 0) add_inout(rest...);
        return *this;
    }
    /// Existing tensors without TensorMap tracking (creator edge only).
    template <class... Ts> CoreTaskArgs& add_no_dep(const ChipTensor& t, const Ts&... rest) {
        add_tensor_slot(&t, &t, TensorArgType::NO_DEP);
        if constexpr (sizeof...(rest) > 0) add_no_dep(rest...);
        return *this;
    }
    /// Scalars, bit-cast to 64 bits; they must come after every tensor.
    template <class T, class... Ts> CoreTaskArgs& add_scalar(const T& v, const Ts&... rest) {
        static_assert(sizeof(T) <= 8, "scalar arguments are at most 64 bits");
        if (n_scalars >= MAX_SCALAR_ARGS) {
            latch(PTO2_ARG_TOO_MANY_SCALARS, n_tensors + n_scalars);
        } else {
            uint64_t bits = 0;
            memcpy(&bits, &v, sizeof(T));
            scalar_sources[n_scalars] = &v;
            scalar_dump[n_scalars] = 0;
            scalar_dtype[n_scalars] = (uint8_t)pto_detail::scalar_dtype<T>();
            scalars[n_scalars++] = bits;
        }
        if constexpr (sizeof...(rest) > 0) add_scalar(rest...);
        return *this;
    }
    /// `n` raw 64-bit scalars.
    CoreTaskArgs& add_scalars(const uint64_t* v, uint32_t n) {
        for (uint32_t i = 0; i < n; ++i) add_scalar(v[i]);
        return *this;
    }
    /// `n` 32-bit scalars, each widened to a 64-bit slot.
    CoreTaskArgs& add_scalars_i32(const int32_t* v, uint32_t n) {
        for (uint32_t i = 0; i < n; ++i) add_scalar((int64_t)v[i]);
        return *this;
    }
    /// Explicit dependencies. The array must outlive the submit; `n == 0` clears them.
    CoreTaskArgs& set_dependencies(const PTO2TaskId* ids, uint32_t n) {
        deps = n == 0 ? nullptr : ids;
        n_deps = n;
        return *this;
    }
    /// Allows the runtime to stage this task before its producers finish (recorded only).
    CoreTaskArgs& set_allow_early_resolve(bool b) {
        launch_spec.allow_early_resolve = b ? 1 : 0;
        return *this;
    }
    /// Marks the whole task for the selective args dump.
    CoreTaskArgs& dump() {
        dump_all = 1;
        return *this;
    }
    /// Marks specific arguments (lvalues already added to this task) for the selective args dump.
    template <class T, class... Ts> CoreTaskArgs& dump(const T& a, const Ts&... rest) {
        mark_dump(&a);
        if constexpr (sizeof...(rest) > 0) dump(rest...);
        return *this;
    }
    void mark_dump(const void* p) {
        for (uint32_t i = 0; i < n_tensors; ++i) {
            if (tensors[i].source == p) { tensors[i].dump = 1; return; }
        }
        for (uint32_t i = 0; i < n_scalars; ++i) {
            if (scalar_sources[i] == p) { scalar_dump[i] = 1; return; }
        }
        latch(PTO2_ARG_DUMP_UNKNOWN, n_tensors + n_scalars);
    }
};

inline const ChipTensor& TaskOutputTensors::get_ref(uint32_t i) const {
    if (i >= count_ || tensors_[i] == nullptr) {
        char buf[160];
        snprintf(buf, sizeof(buf), "get_ref(%u): output index out of range (the task has %u runtime-allocated outputs)",
                 i, count_);
        if (pto_detail::rt() != nullptr) {
            pto_detail::rt()->ops->report_fatal(pto_detail::rt(), PTO2_ERROR_INVALID_ARGS, "get_ref", buf, nullptr, 0);
        }
        return pto_detail::invalid_tensor();
    }
    return *tensors_[i];
}

/// Submits a task spanning a cluster subset (`INVALID_KERNEL_ID` = inactive slot).
inline TaskOutputTensors rt_submit_task(const MixedKernels& kernels, const CoreTaskArgs& args,
                                        const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    TaskOutputTensors out;
    out.task_id_ = PTO2TaskId::invalid();
    out.count_ = 0;
    pto_detail::rt()->ops->submit_task(pto_detail::rt(), &kernels, &args, file, line, &out);
    return out;
}
/// Submits an AIC (cube) task running kernel `kernel_id`.
inline TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs& args,
                                            const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return rt_submit_task(MixedKernels{kernel_id, INVALID_KERNEL_ID, INVALID_KERNEL_ID}, args, file, line);
}
/// Submits an AIV (vector) task running kernel `kernel_id`.
inline TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs& args,
                                            const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return rt_submit_task(MixedKernels{INVALID_KERNEL_ID, kernel_id, INVALID_KERNEL_ID}, args, file, line);
}
/// Submits a dependency-only task that never runs a kernel.
inline TaskOutputTensors rt_submit_dummy_task(const CoreTaskArgs& args, const char* file = __builtin_FILE(),
                                              int line = __builtin_LINE()) {
    return rt_submit_task(MixedKernels{INVALID_KERNEL_ID, INVALID_KERNEL_ID, INVALID_KERNEL_ID}, args, file, line);
}

namespace pto_detail {
inline void add_create_infos(CoreTaskArgs&) {}
template <class... Ts> inline void add_create_infos(CoreTaskArgs& a, const TensorCreateInfo& ci, const Ts&... rest) {
    a.add_output(ci);
    add_create_infos(a, rest...);
}
}  // namespace pto_detail

/// Allocates tensors without running a kernel; `.task_id()` of the result can be used as an
/// explicit dependency.
template <class... Ts> inline TaskOutputTensors alloc_tensors(const TensorCreateInfo& ci, const Ts&... rest) {
    CoreTaskArgs a;
    pto_detail::add_create_infos(a, ci, rest...);
    TaskOutputTensors out;
    out.task_id_ = PTO2TaskId::invalid();
    out.count_ = 0;
    pto_detail::rt()->ops->alloc_tensors(pto_detail::rt(), &a, __builtin_FILE(), __builtin_LINE(), &out);
    return out;
}

/// Blocking read of element `idx` of `t` (waits for the tensor's producers).
template <class T>
inline T get_tensor_data(const ChipTensor& t, uint32_t ndims, const uint32_t idx[],
                         const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    uint64_t bits = pto_detail::rt()->ops->get_tensor_data(pto_detail::rt(), &t, ndims, idx, file, line);
    T v;
    memcpy(&v, &bits, sizeof(T));
    return v;
}
/// Blocking write of element `idx` of `t` (waits for every task using the buffer).
template <class T>
inline void set_tensor_data(const ChipTensor& t, uint32_t ndims, const uint32_t idx[], T v,
                            const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof(T));
    pto_detail::rt()->ops->set_tensor_data(pto_detail::rt(), &t, ndims, idx, bits, file, line);
}

/// Number of clusters (1 AIC + 2 AIV each) of this run's platform.
inline int32_t rt_available_cluster_count() { return pto_detail::rt()->ops->available_cluster_count(pto_detail::rt()); }
/// Number of AIV cores of this run's platform.
inline int32_t rt_available_aiv_count() { return pto_detail::rt()->ops->available_aiv_count(pto_detail::rt()); }
/// Marks the end of submission.
inline void rt_orchestration_done() { pto_detail::rt()->ops->orchestration_done(pto_detail::rt()); }
/// Whether a fatal error has been latched (later submits are ignored).
inline bool rt_is_fatal() { return pto_detail::rt()->ops->is_fatal(pto_detail::rt()); }

namespace pto_detail {
inline void report_fatal(int32_t code, const char* func, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
inline void report_fatal(int32_t code, const char* func, const char* file, int line, const char* fmt, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    rt()->ops->report_fatal(rt(), code, func, buf, file, line);
}

/// RAII scope guard behind PTO2_SCOPE / PTO2_SCOPE_GUARD.
struct ScopeGuard {
    ScopeGuard(const char* file, int line, PTO2ScopeMode mode = PTO2ScopeMode::AUTO) {
        rt()->ops->scope_begin(rt(), mode, file, line);
    }
    ~ScopeGuard() { rt()->ops->scope_end(rt()); }
    ScopeGuard(const ScopeGuard&) = delete;
    ScopeGuard& operator=(const ScopeGuard&) = delete;
};
}  // namespace pto_detail

/// Latches a fatal error with `code` and a printf-style message.
#define rt_report_fatal(code, ...) ::pto_detail::report_fatal((code), __func__, __FILE__, __LINE__, __VA_ARGS__)

#define PTO_CONCAT_INNER(a, b) a##b
#define PTO_CONCAT(a, b) PTO_CONCAT_INNER(a, b)

/// `PTO2_SCOPE() { ... }` or `PTO2_SCOPE(PTO2ScopeMode::MANUAL) { ... }`: a scope around a block.
#define PTO2_SCOPE(...) \
    if (::pto_detail::ScopeGuard PTO_CONCAT(pto_scope_guard_, __LINE__){__FILE__, __LINE__, ##__VA_ARGS__}; true)
/// A scope for the rest of the enclosing block.
#define PTO2_SCOPE_GUARD(...) \
    ::pto_detail::ScopeGuard PTO_CONCAT(pto_scope_guard_, __LINE__) { __FILE__, __LINE__, ##__VA_ARGS__ }

#define LOG_ERROR(...) ::pto_detail::log(PTO2_LOG_ERROR, __func__, __VA_ARGS__)
#define LOG_WARN(...) ::pto_detail::log(PTO2_LOG_WARN, __func__, __VA_ARGS__)
#define LOG_TIMING(...) ::pto_detail::log(PTO2_LOG_TIMING, __func__, __VA_ARGS__)
#define LOG_INFO(...) ::pto_detail::log(PTO2_LOG_INFO, __func__, __VA_ARGS__)
#define LOG_DEBUG(...) ::pto_detail::log(PTO2_LOG_DEBUG, __func__, __VA_ARGS__)
