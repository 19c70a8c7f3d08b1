// pto_arg_with_deps.h: task arguments that carry their own explicit-dependency buffer.
//
// `CoreTaskArgsWithDeps<N>` collects up to N dependencies with `add_dep(...)` (WAIT | RETAIN)
// and `add_dep_wait(...)` (WAIT only), so no separate id array has to outlive the submit.
// pto_orchestration_api.h includes this header last; including it again is harmless.
#pragma once

#include "pto_orchestration_api.h"

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
        static_assert(sizeof...(Ts) > 0, "add_dep needs at least one PTO2TaskId");
        static_assert(pto_detail::all_task_ids<Ts...>, "add_dep takes PTO2TaskId values");
        (push(ids, DEP_WAIT | DEP_RETAIN), ...);
    }
    /// Adds dependencies on `ids...` that only order this task (WAIT).
    template <class... Ts> void add_dep_wait(const Ts&... ids) {
        static_assert(sizeof...(Ts) > 0, "add_dep_wait needs at least one PTO2TaskId");
        static_assert(pto_detail::all_task_ids<Ts...>, "add_dep_wait takes PTO2TaskId values");
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
    void push(PTO2TaskId id, DepFlags kind) {
        if (n_ >= MAX_DEP_COUNT) {
            CoreTaskArgs::set_error("add_dep: more dependencies than CoreTaskArgsWithDeps<N> holds; raise N");
            return;
        }
        ids_[n_] = id;
        kinds_[n_] = kind;
        ++n_;
    }

    PTO2TaskId ids_[MAX_DEP_COUNT > 0 ? MAX_DEP_COUNT : 1];
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
