// Kernel Function: stage_in
// window = x.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pto_comm_sim.h"
#include "tensor.h"

// --- ptoas-generated code ---
static void stage_in(const ChipTensor* x, const ChipTensor* win) {
    const float* s = x->data<float>();
    float* d = win->data<float>();
    for (uint64_t i = 0; i < win->numel(); ++i) d[i] = s[i];
}
extern "C" void kernel_entry(int64_t* args) { stage_in(kernel_tensor(args, 0), kernel_tensor(args, 1)); }
// --- Kernel entry point ---
