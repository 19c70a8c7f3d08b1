// orchestration_api.h (2026-09): Simpler's newest orchestration API (tensormap_and_ringbuffer),
// a spelling over the same shared API (pto_orchestration_core.h) and C function table
// (pto_runtime_abi.h) as 2026-08's pto_orchestration_api.h: one runtime, two spellings.
//
// An orchestration exports
//
//     extern "C" OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args);
//     extern "C" void aicpu_orchestration_entry(const ChipTaskArgs& orch_args);
//
// reads its arguments as `const Tensor& t = orch_args.tensor(i).ref()` and
// `orch_args.scalar<T>(i)`, and submits with `CoreTaskArgs`, `rt_submit_*`, `alloc_tensors`,
// `SIMPLER_SCOPE(...)`, `TaskId` dependencies. Names only this generation has: `Tensor` /
// `TaskTensor` / `simpler::tmr::Tensor`, `TaskId`, `ScopeMode`, `ScopeGuard`, `SIMPLER_SCOPE`,
// `SIMPLER_SCOPE_GUARD`, `OrchestrationConfig`, `RuntimeContext`, `RuntimeOps`, `LaunchSpec`,
// `SIMPLER_ERROR_*`, `SIMPLER_STALL_DETAIL_*`, `SubtaskSlot`, `ResourceShape`. Removed against
// 2026-08: `TensorCreateInfo::set_initial_value`.
#pragma once

#include "tensor.h"
#include "pto_orchestration_core.h"

/// The runtime handle an orchestration is bound to (`framework_bind_runtime`, `current_runtime()`).
using RuntimeContext = PTO2Runtime;
/// The runtime's function table.
using RuntimeOps = PTO2RuntimeOps;
/// AUTO scopes infer dependencies through the TensorMap; MANUAL scopes use explicit ones only.
using ScopeMode = PTO2ScopeMode;
/// SPMD launch parameters (`args.launch_spec`).
using LaunchSpec = PTO2LaunchSpec;
/// Returned by `aicpu_orchestration_config` (`{.expected_arg_count = N}`).
using OrchestrationConfig = PTO2OrchestrationConfig;
#define ORCHESTRATION_CONFIG_DEFINED 1
/// RAII scope: opens at construction (mode, call site), closes at destruction.
using ScopeGuard = pto_detail::ScopeGuard;

#define _SIMPLER_CONCATENATE_IMPL(a, b) a##b
#define _SIMPLER_CONCATENATE(a, b) _SIMPLER_CONCATENATE_IMPL(a, b)
/// `SIMPLER_SCOPE() { ... }` or `SIMPLER_SCOPE(ScopeMode::MANUAL) { ... }`: a scope around a block.
#define SIMPLER_SCOPE(...) \
    if (::pto_detail::ScopeGuard _SIMPLER_CONCATENATE(scope_guard_, __COUNTER__){__VA_ARGS__}; true)
/// A scope for the rest of the enclosing block.
#define SIMPLER_SCOPE_GUARD(...) \
    [[maybe_unused]] ::pto_detail::ScopeGuard _SIMPLER_CONCATENATE(scope_guard_, __COUNTER__) { __VA_ARGS__ }

// Status codes (2026-08's PTO2_ERROR_* renamed; same numbers, 4 is now FANIN_CAPACITY_EXCEEDED).
#define SIMPLER_ERROR_NONE PTO2_ERROR_NONE
#define SIMPLER_ERROR_SCOPE_DEADLOCK PTO2_ERROR_SCOPE_DEADLOCK
#define SIMPLER_ERROR_HEAP_RING_DEADLOCK PTO2_ERROR_HEAP_RING_DEADLOCK
#define SIMPLER_ERROR_FLOW_CONTROL_DEADLOCK PTO2_ERROR_FLOW_CONTROL_DEADLOCK
#define SIMPLER_ERROR_FANIN_CAPACITY_EXCEEDED PTO2_ERROR_DEP_POOL_OVERFLOW
#define SIMPLER_ERROR_INVALID_ARGS PTO2_ERROR_INVALID_ARGS
#define SIMPLER_ERROR_REQUIRE_SYNC_START_INVALID PTO2_ERROR_REQUIRE_SYNC_START_INVALID
#define SIMPLER_ERROR_TENSOR_WAIT_TIMEOUT PTO2_ERROR_TENSOR_WAIT_TIMEOUT
#define SIMPLER_ERROR_EXPLICIT_ORCH_FATAL PTO2_ERROR_EXPLICIT_ORCH_FATAL
#define SIMPLER_ERROR_SCOPE_TASKS_OVERFLOW PTO2_ERROR_SCOPE_TASKS_OVERFLOW
#define SIMPLER_ERROR_TENSORMAP_OVERFLOW PTO2_ERROR_TENSORMAP_OVERFLOW
#define SIMPLER_ERROR_SCHEDULER_TIMEOUT PTO2_ERROR_SCHEDULER_TIMEOUT
#define SIMPLER_ERROR_ASYNC_COMPLETION_INVALID PTO2_ERROR_ASYNC_COMPLETION_INVALID
#define SIMPLER_ERROR_ASYNC_WAIT_OVERFLOW PTO2_ERROR_ASYNC_WAIT_OVERFLOW
#define SIMPLER_ERROR_ASYNC_REGISTRATION_FAILED PTO2_ERROR_ASYNC_REGISTRATION_FAILED
// Stall classifications of a scheduler timeout.
#define SIMPLER_STALL_DETAIL_NONE 0
#define SIMPLER_STALL_DETAIL_RUNNING_STALLED 1
#define SIMPLER_STALL_DETAIL_READY_IDLE 3
#define SIMPLER_STALL_DETAIL_DEP_DEADLOCK 4
#define SIMPLER_STALL_DETAIL_ORCH_STARVATION 5
#define SIMPLER_STALL_DETAIL_UNKNOWN 99

/// Scope-depth rings.
#define CHIP_MAX_RING_DEPTH 4

/// The cluster slots of a task.
enum class SubtaskSlot : uint8_t { AIC = 0, AIV0 = 1, AIV1 = 2 };
/// Number of cluster slots.
constexpr int SUBTASK_SLOT_COUNT = 3;
constexpr uint8_t SUBTASK_MASK_AIC = 1u << 0;
constexpr uint8_t SUBTASK_MASK_AIV0 = 1u << 1;
constexpr uint8_t SUBTASK_MASK_AIV1 = 1u << 2;
/// What a task occupies: one AIC, one AIV, a cluster (MIX), or nothing (DUMMY).
enum class ResourceShape : uint8_t { AIC = 0, AIV = 1, MIX = 2, DUMMY = 3 };
constexpr int NUM_RESOURCE_SHAPES = 4;
