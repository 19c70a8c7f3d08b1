// Kernel Function: builtin_tensor_allreduce__sum__fp32_kernel
// Builtin host collective `builtin.tensor.allreduce__sum__fp32` rendered by pto-examples (l3_collectives).

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#include "pto_comm_sim.h"
#include "tensor.h"

// --- ptoas-generated code ---
static void signal_round(const CommContext* ctx, int32_t* sig, int32_t round) {
    const uint32_t me = ctx->rankId;
    for (uint32_t p = 0; p < ctx->rankNum; ++p) {
        pto_comm_notify(pto_comm_peer_ptr(ctx, &sig[me], p), 1, PTO_NOTIFY_ADD);
    }
    for (uint32_t p = 0; p < ctx->rankNum; ++p) {
        if (pto_comm_wait(&sig[p], round, PTO_WAIT_GE) != 0) {
            fprintf(stderr, "builtin.tensor.allreduce__sum__fp32: rank %u waited too long for rank %u (round %d)\n", me, p, round);
            abort();
        }
    }
}

static void builtin_tensor_allreduce__sum__fp32_kernel(const ChipTensor* data_t, const ChipTensor* sig_t, uint64_t device_ctx) {
    const CommContext* ctx = pto_comm_ctx(device_ctx);
    const uint32_t me = ctx->rankId;
    const uint32_t nranks = ctx->rankNum;
    float* data = data_t->data<float>();
    int32_t* sig = sig_t->data<int32_t>();
    const uint64_t n = data_t->numel();
    const uint64_t chunk = nranks ? n / nranks : 0;
    (void)me;
    (void)chunk;
    std::vector<float> tmp(n);
    signal_round(ctx, sig, 1);
    for (uint64_t i = 0; i < n; ++i) {
        float acc = pto_comm_peer_ptr(ctx, data, 0)[i];
        for (uint32_t p = 1; p < nranks; ++p) {
            const float v = pto_comm_peer_ptr(ctx, data, p)[i];
            acc = acc + v;
        }
        tmp[i] = acc;
    }
    signal_round(ctx, sig, 2);
    for (uint64_t i = 0; i < n; ++i) data[i] = tmp[i];
}
// --- Kernel entry point ---
extern "C" void kernel_entry(int64_t* args) {
    builtin_tensor_allreduce__sum__fp32_kernel(kernel_tensor(args, 0), kernel_tensor(args, 1), (uint64_t)args[3]);
}
