// Kernel Function: kernel_matmul

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
// p[64, 64] = a[64, 64] @ b[64, 64]; a and b are row-major views with row strides lda / ldb,
// p is contiguous.
static __aicore__ void kernel_matmul(__gm__ float* a, int64_t lda, __gm__ float* b, int64_t ldb, __gm__ float* p) {
    constexpr int64_t M = 64, N = 64, K = 64;
    for (int64_t m = 0; m < M; ++m) {
        float row[N] = {};
        for (int64_t k = 0; k < K; ++k) {
            const float amk = a[m * lda + k];
            for (int64_t n = 0; n < N; ++n) row[n] += amk * b[k * ldb + n];
        }
        for (int64_t n = 0; n < N; ++n) p[m * N + n] = row[n];
    }
}
// --- Kernel entry point ---
extern "C" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t *args) {
    // Unpack tensor: a
    __gm__ Tensor *a_tensor = reinterpret_cast<__gm__ Tensor *>(args[0]);
    __gm__ float *a = reinterpret_cast<__gm__ float *>(a_tensor->buffer.addr) + a_tensor->start_offset;

    // Unpack tensor: b
    __gm__ Tensor *b_tensor = reinterpret_cast<__gm__ Tensor *>(args[1]);
    __gm__ float *b = reinterpret_cast<__gm__ float *>(b_tensor->buffer.addr) + b_tensor->start_offset;

    // Unpack tensor: p
    __gm__ Tensor *p_tensor = reinterpret_cast<__gm__ Tensor *>(args[2]);
    __gm__ float *p = reinterpret_cast<__gm__ float *>(p_tensor->buffer.addr) + p_tensor->start_offset;

    // Forward to ptoas-generated function
    kernel_matmul(a, (int64_t)a_tensor->strides[0], b, (int64_t)b_tensor->strides[0], p);
}
