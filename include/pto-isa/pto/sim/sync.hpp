// pto/sim/sync.hpp: intra-core synchronisation, cache maintenance and core identity.
//
// A simulated core executes its instructions in program order on one thread, so the
// pipe-to-pipe hand-offs ptoas inserts (`set_flag` / `wait_flag` / `pipe_barrier`) and the
// vector-mask setup are no-ops. The pipe / event ids, those no-ops and the cache maintenance
// (`dcci`, `dsb`: a sequentially consistent fence) live in `pto_kernel_sync.h`, which
// `tensor.h` includes too.
#pragma once

#include "pto/sim/context.hpp"

// Pipe and event ids, set_flag / wait_flag / pipe_barrier and the cache maintenance
// (dcci, dsb and their constants): shared with tensor.h, so kernels that include only
// tensor.h see the same names (found on the -I<headers>/pto root).
#include "pto_kernel_sync.h"

/// Selects normal vector-mask mode (no-op: every instruction covers its valid region).
inline void set_mask_norm() {}
/// Sets the FFTS (cross-core flag) base address: a no-op, cross-core flags are not modelled
/// (PyPTO's preprocessing drops the call; raw ptoas and PTO-ISA test kernels keep it).
template <typename A>
inline void set_ffts_base_addr(A) {}
/// Selects count vector-mask mode (no-op).
inline void set_mask_count() {}
/// Sets the vector mask (no-op: every instruction covers its valid region).
template <class A, class B>
inline void set_vector_mask(A, B) {}

/// Ends GM atomic accumulation: later TSTOREs overwrite.
inline void set_atomic_none() { pto::sim::tls_atomic_add = false; }
/// Starts GM atomic accumulation: later plain TSTOREs add (as `AtomicType::AtomicAdd`).
inline void set_atomic_add() { pto::sim::tls_atomic_add = true; }
/// Selects the f32 atomic type (the element type follows the GlobalTensor; no-op).
inline void set_atomic_f32() {}
/// Selects the f16 atomic type (no-op).
inline void set_atomic_f16() {}
/// Selects the bf16 atomic type (no-op).
inline void set_atomic_bf16() {}
/// Selects the s32 atomic type (no-op).
inline void set_atomic_s32() {}

/// SPMD block index of the executing core (shared by the cores of a MIX block).
inline int64_t get_block_idx() { return pto::sim::context("get_block_idx()").block_idx; }
/// SPMD block count of the task.
inline int64_t get_block_num() { return pto::sim::context("get_block_num()").block_num; }
/// AIV lane of the executing core in its cluster (0 or 1; 0 on AIC).
inline int64_t get_subblockid() { return pto::sim::context("get_subblockid()").subblock_id; }
/// AIV lanes the task uses in this cluster (1 or 2; 1 on AIC).
inline int64_t get_subblockdim() { return pto::sim::context("get_subblockdim()").subblock_dim; }

namespace pto {
using ::get_block_idx;
using ::get_block_num;
using ::get_subblockdim;
using ::get_subblockid;
} // namespace pto
