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
// c = a + b over `n` contiguous elements; SPMD block `block_idx` of `block_num` adds its share.
static __aicore__ void kernel_add(__gm__ float* a, __gm__ float* b, __gm__ float* c, int64_t n, int32_t block_idx,
                                  int32_t block_num) {
    if (block_num <= 0) return;
    const int64_t lo = n * block_idx / block_num;
    const int64_t hi = n * (block_idx + 1) / block_num;
    for (int64_t i = lo; i < hi; ++i) c[i] = a[i] + b[i];
}
// --- Kernel entry point ---
extern "C" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t *args) {
    // Unpack tensor: a
    __gm__ Tensor *a_tensor = reinterpret_cast<__gm__ Tensor *>(args[0]);
    __gm__ float *a = reinterpret_cast<__gm__ float *>(a_tensor->buffer.addr) + a_tensor->start_offset;

    // Unpack tensor: b
    __gm__ Tensor *b_tensor = reinterpret_cast<__gm__ Tensor *>(args[1]);
    __gm__ float *b = reinterpret_cast<__gm__ float *>(b_tensor->buffer.addr) + b_tensor->start_offset;

    // Unpack tensor: c
    __gm__ Tensor *c_tensor = reinterpret_cast<__gm__ Tensor *>(args[2]);
    __gm__ float *c = reinterpret_cast<__gm__ float *>(c_tensor->buffer.addr) + c_tensor->start_offset;

    // Forward to ptoas-generated function
    kernel_add(a, b, c, (int64_t)c_tensor->shapes[0], get_block_idx(args), get_block_num(args));
}
