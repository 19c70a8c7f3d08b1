// tensor.h (2026-08 spelling): the 128-byte tensor descriptor under Simpler 6ebaf77's names.
//
// `ChipTensor` (and its earlier name `Tensor`) is the descriptor of pto_tensor_core.h,
// `PTO2TaskId` its task id; `make_tensor_external` / `make_tensor_strided` build external
// descriptors. Kernels include this header to read their arguments (`args[i]` points at a
// `ChipTensor`). The 2026-09 root has its own tensor.h, which spells the same descriptor
// `Tensor` / `TaskTensor`.
#pragma once

#include "pto_tensor_core.h"

#if PTO_SIMPLER_GENERATION >= 202609
#error "tensor.h of the 2026-08 headers reached in a 2026-09 (orchestration_api.h) translation unit: the 2026-09 include root must come first"
#endif

/// The task id (`(ring << 32) | local`, all ones = invalid).
using PTO2TaskId = simpler::tmr::TaskId;
/// The 128-byte tensor descriptor.
using ChipTensor = simpler::tmr::Tensor;
/// The descriptor's earlier name: Simpler's hand-written kernels (and older ptoas output,
/// before PyPTO's rename) declare their arguments as `Tensor*`.
using Tensor = ChipTensor;

using simpler::tmr::make_tensor_external;
using simpler::tmr::make_tensor_strided;

#include "intrinsic.h"
