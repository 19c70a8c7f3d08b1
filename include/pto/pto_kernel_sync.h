// pto_kernel_sync.h: the pipe / event ids, the intra-core sync no-ops and the cache
// maintenance a kernel may call, for kernels built over PTO-ISA (<pto/pto-inst.hpp> includes
// this) and for plain kernels that include only "tensor.h" (it includes this in kernel units,
// those compiled with `__DAV_VEC__` or `__DAV_CUBE__`). Simpler's simulator gives plain
// kernels `pipe_barrier(PIPE_ALL)`, `dcci` and the cache-line names through its platform's
// AICore header; this is our own declaration of the same names, one for both include paths.
// It also gives the system counter `get_sys_cnt()`.
//
// A simulated core executes its instructions in program order on one thread, so the
// pipe-to-pipe hand-offs (`set_flag` / `wait_flag` / `pipe_barrier`) do nothing, except
// append an event to the timing trace when the runtime turned tracing on. Cache
// maintenance (`dcci`, `dsb`) is a sequentially consistent fence: GM is ordinary host
// memory, coherent between the cores' threads.
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

#include <stdint.h>

#include <atomic>
#include <sched.h>
#include <chrono>

#include "pto_sim_trace.h"

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

/// The trace buffer of the running subtask, or null (the default: nothing is recorded).
/// Set by the PTO-ISA header's `pto_sim_invoke` from `PtoSimContext::trace`; plain kernels
/// never set it. One per kernel library and thread.
inline thread_local PtoSimTrace* pto_sim_tls_trace __attribute__((visibility("hidden"))) = nullptr;

/// Appends a sync event to the trace (tracing is on).
inline void pto_sim_trace_sync(uint8_t kind, int src, int dst, int event) {
    PtoSimTrace* t = pto_sim_tls_trace;
    if (t->len >= t->capacity && t->flush != nullptr) t->flush(t);
    if (t->len < t->capacity) {
        PtoSimTraceEvent& e = t->events[t->len];
        e = PtoSimTraceEvent{};
        e.kind = kind;
        e.loc[0] = static_cast<uint8_t>(src);
        e.loc[1] = static_cast<uint8_t>(dst);
        e.loc[2] = PTO_SIM_TRACE_NO_BUFFER;
        e.rows = static_cast<uint32_t>(event);
    }
    ++t->len;
}

/// Signals an event from one pipe to another (one core runs in program order; recorded for
/// the timing model when tracing is on).
template <class A, class B, class E>
inline void set_flag(A a, B b, E e) {
    if (__builtin_expect(pto_sim_tls_trace != nullptr, 0)) {
        pto_sim_trace_sync(PTO_SIM_TRACE_SET_FLAG, static_cast<int>(a), static_cast<int>(b), static_cast<int>(e));
    }
}
/// Waits for an event from one pipe to another (see set_flag).
template <class A, class B, class E>
inline void wait_flag(A a, B b, E e) {
    if (__builtin_expect(pto_sim_tls_trace != nullptr, 0)) {
        pto_sim_trace_sync(PTO_SIM_TRACE_WAIT_FLAG, static_cast<int>(a), static_cast<int>(b), static_cast<int>(e));
    }
}
/// Orders a pipe after its earlier work (see set_flag).
template <class P>
inline void pipe_barrier(P p) {
    if (__builtin_expect(pto_sim_tls_trace != nullptr, 0)) {
        pto_sim_trace_sync(PTO_SIM_TRACE_BARRIER, static_cast<int>(p), 0, 0);
    }
}
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

namespace pto_sim_clock {
/// Ticks per second of the system counter: Simpler's `PLATFORM_PROF_SYS_CNT_FREQ` (50 MHz on
/// a2a3, 1 GHz on a5; `common/platform_config.h`).
#if defined(PTO_ARCH_A5)
constexpr uint64_t sys_cnt_freq = 1000000000ull;
#else
constexpr uint64_t sys_cnt_freq = 50000000ull;
#endif
/// A kernel that reads the counter in a tight loop is waiting for time to pass (a device
/// core would just spin). On the simulator many simulated cores share few host CPUs, so every
/// 32nd reading less than 5 us after the previous one gives the host CPU to another thread:
/// the cores that have work (or are starting) get to run. A kernel that reads the counter to
/// time its work is not slowed.
inline void note_reading(uint64_t ns) {
    thread_local uint64_t last_ns = 0;
    thread_local uint32_t rapid = 0;
    if (ns - last_ns < 5000) {
        if (++rapid >= 32) {
            rapid = 0;
            sched_yield();
        }
    } else {
        rapid = 0;
    }
    last_ns = ns;
}
} // namespace pto_sim_clock

/// The core's system counter (a device intrinsic kernels time themselves with): the host's
/// monotonic clock in ticks of `PLATFORM_PROF_SYS_CNT_FREQ`, so a kernel that waits a number
/// of ticks waits the time it would on the device.
inline uint64_t get_sys_cnt() {
    const uint64_t ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
    pto_sim_clock::note_reading(ns);
    constexpr uint64_t second = 1000000000ull;
    return ns / second * pto_sim_clock::sys_cnt_freq + ns % second * pto_sim_clock::sys_cnt_freq / second;
}
