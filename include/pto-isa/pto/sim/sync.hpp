// pto/sim/sync.hpp: intra-core synchronisation, cache maintenance and core identity.
//
// A simulated core executes its instructions in program order on one thread, so the
// pipe-to-pipe hand-offs ptoas inserts (`set_flag` / `wait_flag` / `pipe_barrier`) and the
// vector-mask setup are no-ops. Cache maintenance (`dcci`, `dsb`) is a sequentially
// consistent fence: GM is ordinary host memory, coherent between the cores' threads.
//
// Two spellings of the cache-maintenance API must compile. Newer kernels call
// `dcci(ptr, cache_line_t::SINGLE_CACHE_LINE)` and `dsb(DSB_DDR)` directly. PyPTO's deepseek
// kernels carry a `__CPU_SIM` shim that `#undef`s `dcci`, `dsb`, `SINGLE_CACHE_LINE`,
// `ENTIRE_DATA_CACHE`, `CACHELINE_OUT` and `DSB_DDR` and then declares its own `namespace
// cache_line_t { constexpr int SINGLE_CACHE_LINE = 0; ... }`, `typedef int mem_dsb_t;`,
// `static inline void dcci(...)` and `dsb(mem_dsb_t)`. So ours are macros: `dcci` / `dsb`
// forward to functions in a private namespace, and the cache-line names expand to
// uniquely-named constants declared at global scope and brought into the (open) namespace
// `cache_line_t`, so both `cache_line_t::SINGLE_CACHE_LINE` and a bare `SINGLE_CACHE_LINE`
// (as Simpler's SPMD and MIX kernels write it: its platform header gives the names at global
// scope) compile; after the shim's `#undef`s nothing of ours collides with its declarations.
#pragma once

#include "pto/sim/context.hpp"

/// Hardware pipes named by the sync instructions (all one in-order stream on the CPU).
enum pipe_t : int {
    PIPE_S = 0,
    PIPE_V = 1,
    PIPE_M = 2,
    PIPE_MTE1 = 3,
    PIPE_MTE2 = 4,
    PIPE_MTE3 = 5,
    PIPE_ALL = 6,
    PIPE_MTE4 = 7,
    PIPE_MTE5 = 8,
    PIPE_V2 = 9,
    PIPE_FIX = 10,
};

/// Event ids of set_flag / wait_flag.
enum event_t : int {
    EVENT_ID0 = 0,
    EVENT_ID1 = 1,
    EVENT_ID2 = 2,
    EVENT_ID3 = 3,
    EVENT_ID4 = 4,
    EVENT_ID5 = 5,
    EVENT_ID6 = 6,
    EVENT_ID7 = 7,
};

/// Signals an event from one pipe to another (no-op: one core runs in program order).
template <class A, class B, class E>
inline void set_flag(A, B, E) {}
/// Waits for an event from one pipe to another (no-op: one core runs in program order).
template <class A, class B, class E>
inline void wait_flag(A, B, E) {}
/// Orders a pipe after its earlier work (no-op: one core runs in program order).
template <class P>
inline void pipe_barrier(P) {}
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

namespace pto_sim_cache {
/// `dcci(ptr, mode [, out])`: a sequentially consistent fence.
template <class... Args>
inline void dcci_impl(Args&&...) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
/// `dsb(kind)`: a sequentially consistent fence.
template <class... Args>
inline void dsb_impl(Args&&...) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
/// The value `DSB_DDR` expands to.
constexpr int dsb_ddr_kind = 0;
} // namespace pto_sim_cache

/// What `SINGLE_CACHE_LINE` names, bare or as `cache_line_t::SINGLE_CACHE_LINE`.
constexpr int pto_sim_single_cache_line = 0;
/// What `ENTIRE_DATA_CACHE` names, bare or as `cache_line_t::ENTIRE_DATA_CACHE`.
constexpr int pto_sim_entire_data_cache = 1;
/// What `CACHELINE_OUT` names, bare or as `cache_line_t::CACHELINE_OUT`.
constexpr int pto_sim_cacheline_out = 2;

namespace cache_line_t {
using ::pto_sim_cacheline_out;
using ::pto_sim_entire_data_cache;
using ::pto_sim_single_cache_line;
} // namespace cache_line_t

/// Barrier kind of `dsb`.
typedef int mem_dsb_t;

#define SINGLE_CACHE_LINE pto_sim_single_cache_line
#define ENTIRE_DATA_CACHE pto_sim_entire_data_cache
#define CACHELINE_OUT pto_sim_cacheline_out
#define DSB_DDR ::pto_sim_cache::dsb_ddr_kind
#define dcci(...) ::pto_sim_cache::dcci_impl(__VA_ARGS__)
#define dsb(...) ::pto_sim_cache::dsb_impl(__VA_ARGS__)

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
