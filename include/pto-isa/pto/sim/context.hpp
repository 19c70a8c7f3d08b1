// pto/sim/context.hpp: the simulation context of the executing core.
//
// The runtime calls `pto_sim_invoke(ctx, entry, args)` (pto/sim/invoke.hpp) on the thread that
// runs a subtask; it binds `ctx` to that thread for the call. Everything the header needs from
// the chip comes from it: core identity, the core's on-chip memories, per-cluster storage for
// the cross-core pipes, the stop flag and the task's GM ranges. A fault (a tile outside its
// buffer, a GM access outside the task's tensors, a protocol error) is reported through
// `ctx->fault` and unwinds the kernel with an internal exception that `pto_sim_invoke` turns
// into PTO_SIM_FAULT. Without a bound context (a kernel called outside the runtime), every
// instruction aborts the process with a message instead of touching memory.
#pragma once

#include "pto/sim/types.hpp"

namespace pto {
namespace sim {

/// Thrown after `ctx->fault` was called; caught by `pto_sim_invoke` (PTO_SIM_FAULT).
struct FaultUnwind {};
/// Thrown when a blocking wait sees the run stopping; caught by `pto_sim_invoke` (PTO_SIM_STOPPED).
struct StopUnwind {};

/// The context bound to this thread by `pto_sim_invoke` (one per kernel library: hidden).
inline thread_local PtoSimContext* tls_context __attribute__((visibility("hidden"))) = nullptr;

/// The GM atomic mode set by `set_atomic_add()` / `set_atomic_none()` (reset per subtask).
inline thread_local bool tls_atomic_add __attribute__((visibility("hidden"))) = false;

/// `v` as `0x...`.
inline std::string hex(uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

/// Reports a fatal error of the running kernel and unwinds it; aborts when no context is bound.
[[noreturn]] inline void fatal(const std::string& message) {
    PtoSimContext* ctx = tls_context;
    if (ctx == nullptr) {
        std::fprintf(stderr,
                     "pto-isa: %s\npto-isa: no simulation context is bound to this thread: kernels built "
                     "over <pto/pto-inst.hpp> run through the PTO runtime (pto_sim_invoke)\n",
                     message.c_str());
        std::fflush(stderr);
        std::abort();
    }
    std::string full = "kernel '";
    full += ctx->kernel_name != nullptr ? ctx->kernel_name : "?";
    full += "': ";
    full += message;
    if (ctx->fault != nullptr) {
        ctx->fault(ctx, full.c_str());
    } else {
        std::fprintf(stderr, "pto-isa: %s\n", full.c_str());
    }
    throw FaultUnwind{};
}

/// The bound context; `what` names the operation in the error when none is bound.
inline PtoSimContext& context(const char* what) {
    PtoSimContext* ctx = tls_context;
    if (ctx == nullptr) {
        fatal(std::string(what) + " called outside the PTO runtime");
    }
    return *ctx;
}

/// True once the runtime asked every blocking wait to give up.
inline bool stop_requested() {
    PtoSimContext* ctx = tls_context;
    return ctx != nullptr && ctx->stop != nullptr && __atomic_load_n(ctx->stop, __ATOMIC_ACQUIRE) != 0;
}

/// Publishes what this core is blocked on (`text` must outlive the run), or clears it (null).
inline void set_waiting(const char* text) {
    PtoSimContext* ctx = tls_context;
    if (ctx != nullptr) {
        __atomic_store_n(&ctx->waiting_on, text, __ATOMIC_RELEASE);
    }
}

/// A lock word in shared storage (zero = unlocked, so zero-filled storage needs no setup).
struct SpinLock {
    uint32_t word; ///< 0 free, 1 held
};

/// Lets a spinning hyperthread make progress.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/// Escalating pause for blocking waits: spin briefly, then yield, then sleep 50 us.
struct Backoff {
    unsigned rounds = 0; ///< pauses so far
    /// Waits a little longer than last time.
    void pause() {
        if (rounds < 64) {
            cpu_relax();
        } else if (rounds < 256) {
            sched_yield();
        } else {
            const struct timespec ts = {0, 50 * 1000};
            nanosleep(&ts, nullptr);
        }
        ++rounds;
    }
};

/// Takes `l`.
inline void lock(SpinLock& l) {
    Backoff b;
    while (__atomic_exchange_n(&l.word, 1u, __ATOMIC_ACQUIRE) != 0u) {
        while (__atomic_load_n(&l.word, __ATOMIC_RELAXED) != 0u) b.pause();
    }
}
/// Releases `l`.
inline void unlock(SpinLock& l) { __atomic_store_n(&l.word, 0u, __ATOMIC_RELEASE); }

/// Holds a SpinLock for a scope (released on unwinding too).
struct LockGuard {
    SpinLock& l; ///< the lock
    /// Takes the lock.
    explicit LockGuard(SpinLock& lk) : l(lk) { lock(l); }
    /// Releases the lock.
    ~LockGuard() { unlock(l); }
    LockGuard(const LockGuard&) = delete;            ///< not copyable
    LockGuard& operator=(const LockGuard&) = delete; ///< not copyable
};

/// With `l` held, waits until `ready()` (evaluated with the lock held), releasing the lock
/// while pausing. Publishes `what` in ctx->waiting_on while blocked; gives up with StopUnwind
/// (lock still held, for the caller's guard to release) when the run stops.
template <class Ready>
inline void wait_until(SpinLock& l, Ready ready, const char* what) {
    if (ready()) {
        return;
    }
    set_waiting(what);
    Backoff b;
    while (!ready()) {
        if (stop_requested()) {
            set_waiting(nullptr);
            throw StopUnwind{};
        }
        unlock(l);
        b.pause();
        lock(l);
    }
    set_waiting(nullptr);
}

/// One on-chip memory of the executing core.
struct Region {
    uint8_t* base;     ///< first byte
    uint64_t size;     ///< capacity in bytes
    const char* name;  ///< "UB", "L1", ...
};

/// The runtime buffer index of a tile type.
constexpr int buffer_index(TileType t) {
    switch (t) {
    case TileType::Vec: return PTO_SIM_UB;
    case TileType::Mat: return PTO_SIM_L1;
    case TileType::Left: return PTO_SIM_L0A;
    case TileType::Right: return PTO_SIM_L0B;
    case TileType::Acc: return PTO_SIM_L0C;
    case TileType::Bias: return PTO_SIM_BIAS;
    case TileType::Scaling: return PTO_SIM_FBUF;
    default: return -1;
    }
}

/// Name of an on-chip memory.
constexpr const char* buffer_name(int index) {
    switch (index) {
    case PTO_SIM_UB: return "UB";
    case PTO_SIM_L1: return "L1";
    case PTO_SIM_L0A: return "L0A";
    case PTO_SIM_L0B: return "L0B";
    case PTO_SIM_L0C: return "L0C";
    case PTO_SIM_BIAS: return "BIAS";
    case PTO_SIM_FBUF: return "FBUF";
    default: return "?";
    }
}

/// The executing core's memory for tiles of type `t`; a fault if the core has none.
inline Region region_of(TileType t, const char* what) {
    const int index = buffer_index(t);
    PtoSimContext& ctx = context(what);
    if (index < 0 || index >= PTO_SIM_BUFFER_COUNT) {
        fatal(std::string(what) + ": tiles of type " + std::to_string(static_cast<int>(t)) + " have no memory");
    }
    const PtoSimMemory& mem = ctx.memory[index];
    if (mem.base == nullptr || mem.size == 0) {
        fatal(std::string(what) + ": this core (" + (ctx.core_type == PTO_SIM_CORE_AIC ? "AIC" : "AIV") +
              ") has no " + buffer_name(index) + " memory");
    }
    return Region{mem.base, mem.size, buffer_name(index)};
}

/// Checks that GM bytes `[lo, hi)` lie inside one of the task's tensor buffers (when the
/// runtime supplied them); `describe()` names the access in the fault.
template <class Describe>
inline void check_gm(uint64_t lo, uint64_t hi, Describe describe) {
    PtoSimContext* ctx = tls_context;
    if (ctx == nullptr || ctx->n_gm_ranges == 0 || ctx->gm_ranges == nullptr || lo >= hi) {
        return;
    }
    for (uint32_t i = 0; i < ctx->n_gm_ranges; ++i) {
        if (lo >= ctx->gm_ranges[2 * i] && hi <= ctx->gm_ranges[2 * i + 1]) {
            return;
        }
    }
    std::string ranges;
    for (uint32_t i = 0; i < ctx->n_gm_ranges && i < 8; ++i) {
        ranges += (i == 0 ? "" : ", ");
        ranges += "[" + hex(ctx->gm_ranges[2 * i]) + ", " + hex(ctx->gm_ranges[2 * i + 1]) + ")";
    }
    if (ctx->n_gm_ranges > 8) {
        ranges += ", ...";
    }
    fatal(describe() + " touches GM bytes [" + hex(lo) + ", " + hex(hi) +
          ") outside the task's tensors (" + ranges + ")");
}

} // namespace sim
} // namespace pto
