// Kernel Function: add_rank
// y = x + rank.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pto_comm_sim.h"
#include "tensor.h"

// --- ptoas-generated code ---
static void add_rank(const ChipTensor* x, const ChipTensor* y, int64_t rank) {
    const float* xs = x->data<float>();
    float* ys = y->data<float>();
    for (uint64_t i = 0; i < y->numel(); ++i) ys[i] = xs[i] + (float)rank;
}
extern "C" void kernel_entry(int64_t* args) {
    add_rank(kernel_tensor(args, 0), kernel_tensor(args, 1), kernel_scalar<int64_t>(args, 2));
}
// --- Kernel entry point ---
