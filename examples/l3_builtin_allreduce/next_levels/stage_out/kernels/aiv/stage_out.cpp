// Kernel Function: stage_out
// y = window.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pto_comm_sim.h"
#include "tensor.h"

// --- ptoas-generated code ---
static void stage_out(const ChipTensor* win, const ChipTensor* y) {
    const float* s = win->data<float>();
    float* d = y->data<float>();
    for (uint64_t i = 0; i < y->numel(); ++i) d[i] = s[i];
}
extern "C" void kernel_entry(int64_t* args) { stage_out(kernel_tensor(args, 0), kernel_tensor(args, 1)); }
// --- Kernel entry point ---
