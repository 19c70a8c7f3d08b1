// The simulator's comm context: what a kernel of an L3 (several chips) run uses to reach
// the windows of its peers.
//
// A dispatch that uses a comm domain passes the domain's `device_ctx` as a scalar: the
// address, in this chip process, of the rank's `CommContext` (Simpler's layout, 1056
// bytes, mirrored by `pto_runner::l3::comm::CommContext`). `windowsIn[i]` is this process's
// address of rank i's window; all windows of a domain live in one shared mapping, so a
// peer's copy of a local window address is `local + (windowsIn[peer] - windowsIn[rankId])`
// and plain loads, stores and atomics on it reach the peer. Signals are 32-bit integers in
// a window: `pto_comm_notify` adds to or sets a peer's word, `pto_comm_wait` spins until a
// local word reaches a value (with a timeout, so a missing peer is an error, not a hang).
//
// Kernels over <pto/pto-inst.hpp> use PTO-ISA's own instructions on these addresses instead:
// pto::comm::TPUT / TGET / TNOTIFY / TWAIT / TTEST (pto/sim/comm.hpp, docs/L3.md). The runtime
// counts every window of a joined domain as GM those kernels may touch, and their TWAIT reports
// the signal to the chip's scheduler timeout rather than timing out itself.
#pragma once

#include <stdint.h>
#include <sched.h>
#include <time.h>

#ifndef PTO_COMM_MAX_RANKS
#define PTO_COMM_MAX_RANKS 64
#endif

struct CommContext {
    uint64_t workSpace;
    uint64_t workSpaceSize;
    uint32_t rankId;
    uint32_t rankNum;
    uint64_t winSize;
    uint64_t windowsIn[PTO_COMM_MAX_RANKS];
    uint64_t windowsOut[PTO_COMM_MAX_RANKS];
};

static_assert(sizeof(CommContext) == 1056, "CommContext layout is Simpler's");
static_assert(__builtin_offsetof(CommContext, rankId) == 16, "CommContext layout");
static_assert(__builtin_offsetof(CommContext, winSize) == 24, "CommContext layout");
static_assert(__builtin_offsetof(CommContext, windowsIn) == 32, "CommContext layout");
static_assert(__builtin_offsetof(CommContext, windowsOut) == 544, "CommContext layout");

// The context a `device_ctx` scalar points to.
static inline const CommContext* pto_comm_ctx(uint64_t device_ctx) {
    return reinterpret_cast<const CommContext*>(static_cast<uintptr_t>(device_ctx));
}

// Peer `peer`'s copy of `local` (an address inside this rank's window).
template <typename T>
static inline T* pto_comm_peer_ptr(const CommContext* ctx, T* local, uint32_t peer) {
    const uint64_t delta = ctx->windowsIn[peer] - ctx->windowsIn[ctx->rankId];
    return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(local) + delta);
}

// How `pto_comm_notify` changes the word.
enum PtoNotifyOp { PTO_NOTIFY_ADD = 0, PTO_NOTIFY_SET = 1 };
// What `pto_comm_wait` waits for.
enum PtoWaitCmp { PTO_WAIT_EQ = 0, PTO_WAIT_GE = 1 };

// Adds `value` to (or sets) the 32-bit word at `addr` (usually a peer's, from
// pto_comm_peer_ptr), with release ordering: stores before it are visible to the waiter.
static inline void pto_comm_notify(int32_t* addr, int32_t value, PtoNotifyOp op) {
    if (op == PTO_NOTIFY_ADD) {
        __atomic_fetch_add(addr, value, __ATOMIC_SEQ_CST);
    } else {
        __atomic_store_n(addr, value, __ATOMIC_SEQ_CST);
    }
}

// Milliseconds a wait spins before giving up (PTO_COMM_WAIT_TIMEOUT_MS may lower it).
#ifndef PTO_COMM_WAIT_TIMEOUT_MS
#define PTO_COMM_WAIT_TIMEOUT_MS 60000
#endif

static inline uint64_t pto_comm_now_ms() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000u + static_cast<uint64_t>(ts.tv_nsec) / 1000000u;
}

// Spins until the word at `addr` is `== value` or `>= value` (acquire ordering). Returns 0,
// or -1 after PTO_COMM_WAIT_TIMEOUT_MS (a peer that never notifies).
static inline int pto_comm_wait(const int32_t* addr, int32_t value, PtoWaitCmp cmp) {
    const uint64_t deadline = pto_comm_now_ms() + PTO_COMM_WAIT_TIMEOUT_MS;
    for (uint32_t spin = 0;; ++spin) {
        const int32_t v = __atomic_load_n(addr, __ATOMIC_SEQ_CST);
        if (cmp == PTO_WAIT_EQ ? v == value : v >= value) return 0;
        if ((spin & 255u) == 255u) {
            if (pto_comm_now_ms() > deadline) return -1;
            sched_yield();
        }
    }
}
