// Kernel Function: kernel_add

#include <cstdint>

#ifndef __gm__
#define __gm__
#endif

#ifndef __aicore__
#if defined(__CPU_SIM)
#define __aicore__
#else
#define __aicore__ [aicore]
#endif
#endif

#include "tensor.h"

// --- ptoas-generated code ---
// c[64, 64] += p[64, 64]; p is contiguous, c a row-major view with row stride ldc.
static __aicore__ void kernel_add(__gm__ float* p, __gm__ float* c, int64_t ldc) {
    constexpr int64_t M = 64, N = 64;
    for (int64_t m = 0; m < M; ++m) {
        for (int64_t n = 0; n < N; ++n) c[m * ldc + n] += p[m * N + n];
    }
}
// --- Kernel entry point ---
extern "C" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t *args) {
    // Unpack tensor: p
    __gm__ Tensor *p_tensor = reinterpret_cast<__gm__ Tensor *>(args[0]);
    __gm__ float *p = reinterpret_cast<__gm__ float *>(p_tensor->buffer.addr) + p_tensor->start_offset;

    // Unpack tensor: c
    __gm__ Tensor *c_tensor = reinterpret_cast<__gm__ Tensor *>(args[1]);
    __gm__ float *c = reinterpret_cast<__gm__ float *>(c_tensor->buffer.addr) + c_tensor->start_offset;

    // Forward to ptoas-generated function
    kernel_add(p, c, (int64_t)c_tensor->strides[0]);
}
