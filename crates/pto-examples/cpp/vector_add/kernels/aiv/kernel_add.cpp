// Kernel Function: kernel_add

#include <stdint.h>

#include "tensor.h"
#include "pto_tile.h"

// --- ptoas-generated code ---
// c = a + b over one tile; SPMD block `block_idx` of `block_num` handles its share of columns.
static __aicore__ void kernel_add(const ChipTensor* a, const ChipTensor* b, const ChipTensor* c,
                                  int32_t block_idx, int32_t block_num) {
    constexpr uint32_t CHUNK = 512;
    float a_buf[CHUNK];
    float b_buf[CHUNK];
    pto_tile::TileView av = pto_tile::tile_view(a);
    pto_tile::TileView bv = pto_tile::tile_view(b);
    pto_tile::TileView cv = pto_tile::tile_view(c);
    if (!av.valid || !bv.valid || !cv.valid || block_num <= 0) return;
    const uint64_t cols = cv.cols;
    const uint32_t lo = (uint32_t)(cols * (uint64_t)block_idx / (uint64_t)block_num);
    const uint32_t hi = (uint32_t)(cols * (uint64_t)(block_idx + 1) / (uint64_t)block_num);
    for (uint32_t r = 0; r < cv.rows; ++r) {
        for (uint32_t c0 = lo; c0 < hi; c0 += CHUNK) {
            const uint32_t n = hi - c0 < CHUNK ? hi - c0 : CHUNK;
            pto_tile::load(av.sub(r, c0, 1, n), a_buf);
            pto_tile::load(bv.sub(r, c0, 1, n), b_buf);
            pto_tile::add(a_buf, b_buf, a_buf, n);
            pto_tile::store(a_buf, cv.sub(r, c0, 1, n));
        }
    }
}
// --- Kernel entry point ---
extern "C" void kernel_entry(int64_t* args) {
    const ChipTensor* a = kernel_tensor(args, 0);
    const ChipTensor* b = kernel_tensor(args, 1);
    const ChipTensor* c = kernel_tensor(args, 2);
    kernel_add(a, b, c, get_block_idx(args), get_block_num(args));
}
