// Kernel Function: builtin_tensor_allreduce__sum__fp32_kernel
// Builtin host collective `builtin.tensor.allreduce__sum__fp32` rendered by pto-examples (l3_collectives).
// Tensors: t0 = data, t1 = signal; scalars: domain_size, device_ctx.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#include "pto_comm_sim.h"
#include "pto_tile.h"
#include "tensor.h"

// --- ptoas-generated code ---
// One signal round: add 1 to this rank's cell in every peer's signal buffer, then wait until
// every peer's cell in this rank's buffer reached `round`.
static void coll_round(const CommContext* ctx, int32_t* sig, int32_t round, const char* what) {
    const uint32_t me = ctx->rankId;
    for (uint32_t p = 0; p < ctx->rankNum; ++p) {
        if (p != me) pto_comm_notify(pto_comm_peer_ptr(ctx, &sig[me], p), 1, PTO_NOTIFY_ADD);
    }
    for (uint32_t p = 0; p < ctx->rankNum; ++p) {
        if (p != me && pto_comm_wait(&sig[p], round, PTO_WAIT_GE) != 0) {
            fprintf(stderr, "%s: rank %u waited too long for rank %u (signal round %d)\n", what, me, p, round);
            abort();
        }
    }
}

// Takes back the `rounds` credits each peer put into its cell during this call, leaving the
// signal buffer as the call found it (a peer already in its next call keeps its credit).
static void coll_release(const CommContext* ctx, int32_t* sig, int32_t rounds) {
    for (uint32_t p = 0; p < ctx->rankNum; ++p) {
        if (p != ctx->rankId) __atomic_fetch_sub(&sig[p], rounds, __ATOMIC_SEQ_CST);
    }
}

static void coll_check(bool ok, const char* what, const char* message) {
    if (!ok) {
        fprintf(stderr, "%s: %s\n", what, message);
        abort();
    }
}

typedef float elem_t;
static inline float ld(elem_t v) { return v; }
static inline elem_t st(float f) { return f; }

#define WHAT "builtin.tensor.allreduce__sum__fp32"

static void builtin_tensor_allreduce__sum__fp32_kernel(const ChipTensor* t0, const ChipTensor* t1, uint64_t device_ctx) {
    const CommContext* ctx = pto_comm_ctx(device_ctx);
    const uint32_t me = ctx->rankId;
    const uint32_t nranks = ctx->rankNum;
    (void)me;
    (void)nranks;
    elem_t* data = t0->data<elem_t>();
    int32_t* sig = t1->data<int32_t>();
    const uint64_t n = t0->numel();
    coll_check(t1->numel() >= nranks, WHAT, "the signal buffer needs one int32 per rank");
    std::vector<elem_t> out(n);
    coll_round(ctx, sig, 1, WHAT);
    // This rank's own value first, then every peer's in rank order, rounded at each step.
    for (uint64_t i = 0; i < n; ++i) {
        float acc = ld(data[i]);
        for (uint32_t p = 0; p < nranks; ++p) {
            if (p == me) continue;
            const float v = ld(pto_comm_peer_ptr(ctx, data, p)[i]);
            acc = ld(st(acc + v));
        }
        out[i] = st(acc);
    }
    coll_round(ctx, sig, 2, WHAT);  // every peer has read this rank's data
    for (uint64_t i = 0; i < n; ++i) data[i] = out[i];
    coll_release(ctx, sig, 2);
}
// --- Kernel entry point ---
extern "C" void kernel_entry(int64_t* args) {
    builtin_tensor_allreduce__sum__fp32_kernel(kernel_tensor(args, 0), kernel_tensor(args, 1), (uint64_t)args[3]);
}
