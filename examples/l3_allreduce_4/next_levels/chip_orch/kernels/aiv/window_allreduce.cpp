// Kernel Function: window_allreduce
// out = sum over ranks of their inputs, through the comm windows.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pto_comm_sim.h"
#include "tensor.h"

// --- ptoas-generated code ---
static void window_allreduce(const ChipTensor* in, const ChipTensor* out, const ChipTensor* data_t,
                             const ChipTensor* sig_t, uint64_t device_ctx) {
    const CommContext* ctx = pto_comm_ctx(device_ctx);
    const uint32_t me = ctx->rankId;
    const uint64_t n = out->numel();
    float* data = data_t->data<float>();
    int32_t* sig = sig_t->data<int32_t>();
    const float* x = in->data<float>();
    for (uint64_t i = 0; i < n; ++i) data[i] = x[i];
    // Tell every peer this rank's window holds its vector, then wait for all of them.
    for (uint32_t p = 0; p < ctx->rankNum; ++p) {
        if (p != me) pto_comm_notify(pto_comm_peer_ptr(ctx, &sig[me], p), 1, PTO_NOTIFY_SET);
    }
    for (uint32_t p = 0; p < ctx->rankNum; ++p) {
        if (p != me && pto_comm_wait(&sig[p], 1, PTO_WAIT_EQ) != 0) {
            fprintf(stderr, "window_allreduce: rank %u never heard from rank %u\n", me, p);
            abort();
        }
    }
    float* y = out->data<float>();
    for (uint64_t i = 0; i < n; ++i) {
        float acc = 0.0f;
        for (uint32_t p = 0; p < ctx->rankNum; ++p) acc += pto_comm_peer_ptr(ctx, data, p)[i];
        y[i] = acc;
    }
}
extern "C" void kernel_entry(int64_t* args) {
    window_allreduce(kernel_tensor(args, 0), kernel_tensor(args, 1), kernel_tensor(args, 2), kernel_tensor(args, 3), (uint64_t)args[4]);
}
// --- Kernel entry point ---
