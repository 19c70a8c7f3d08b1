// pto_orchestration_api.h (2026-08): Simpler 6ebaf77's orchestration API, a spelling over the
// runtime's shared API (pto_orchestration_core.h) and C function table (pto_runtime_abi.h).
//
// An orchestration is a shared object that exports (names configurable in kernel_config.py's
// ORCHESTRATION "function_name" / "config_name")
//
//     extern "C" PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args);
//     extern "C" void aicpu_orchestration_entry(const ChipTaskArgs& orch_args);
//
// and submits kernel tasks with `CoreTaskArgs`, `rt_submit_*`, `alloc_tensors`, ... (shared
// with 2026-09). This header adds the names only 2026-08 has: `ChipTensor` (tensor.h),
// `PTO2TaskId`, `PTO2ScopeGuard`, `PTO2_SCOPE`, `PTO2_SCOPE_GUARD`, `PTO2OrchestrationConfig`,
// `PTO2_ERROR_*`, and a neighbouring release's `L2TaskArgs` / `L0TaskArgs` / `LOG_INFO_V*`.
// The 2026-09 API is orchestration_api.h; a build directory uses one of the two.
#pragma once

#include "tensor.h"
#include "pto_orchestration_core.h"

// a5's pto_types.h include guard: sources that choose between a2a3 and a5 names test it.
#if defined(PTO_ARCH_A5) && !defined(SRC_A5_RUNTIME_TENSORMAP_AND_RINGBUFFER_RUNTIME_PTO_TYPES_H_)
#define SRC_A5_RUNTIME_TENSORMAP_AND_RINGBUFFER_RUNTIME_PTO_TYPES_H_
#endif

/// RAII scope: opens at construction, closes at destruction.
using PTO2ScopeGuard = pto_detail::ScopeGuard;

/// `PTO2_SCOPE() { ... }` or `PTO2_SCOPE(PTO2ScopeMode::MANUAL) { ... }`: a scope around a block.
#define PTO2_SCOPE(...) \
    if (::pto_detail::ScopeGuard PTO_CONCAT(pto_scope_guard_, __LINE__){__VA_ARGS__}; true)
/// A scope for the rest of the enclosing block.
#define PTO2_SCOPE_GUARD(...) ::pto_detail::ScopeGuard PTO_CONCAT(pto_scope_guard_, __LINE__) { __VA_ARGS__ }

// Spellings of a neighbouring Simpler release (same API, other names), so its orchestrations
// compile unchanged: `L2TaskArgs` / `L0TaskArgs` for the orchestration's and a task's
// arguments, and the verbosity-levelled `LOG_INFO_V0` ... `LOG_INFO_V9` (all INFO here).
/// The orchestration's arguments, under a neighbouring Simpler release's name.
using L2TaskArgs = ChipTaskArgs;
/// A task's arguments, under a neighbouring Simpler release's name.
using L0TaskArgs = CoreTaskArgs;
#define LOG_INFO_V0(...) LOG_INFO(__VA_ARGS__)
#define LOG_INFO_V1(...) LOG_INFO(__VA_ARGS__)
#define LOG_INFO_V2(...) LOG_INFO(__VA_ARGS__)
#define LOG_INFO_V3(...) LOG_INFO(__VA_ARGS__)
#define LOG_INFO_V4(...) LOG_INFO(__VA_ARGS__)
#define LOG_INFO_V5(...) LOG_INFO(__VA_ARGS__)
#define LOG_INFO_V6(...) LOG_INFO(__VA_ARGS__)
#define LOG_INFO_V7(...) LOG_INFO(__VA_ARGS__)
#define LOG_INFO_V8(...) LOG_INFO(__VA_ARGS__)
#define LOG_INFO_V9(...) LOG_INFO(__VA_ARGS__)
