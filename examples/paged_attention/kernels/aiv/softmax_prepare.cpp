// Kernel Function: softmax_prepare

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "tensor.h"
#include "pto_tile.h"

// --- ptoas-generated code ---
// For one KV block: s = scale * sij with the columns at and beyond `valid_len` masked out,
// mi_j = rowmax(s), pij = exp(s - mi_j), li_j = rowsum(pij).
static __aicore__ void softmax_prepare(const ChipTensor* sij, const ChipTensor* pij, const ChipTensor* mi_j,
                                       const ChipTensor* li_j, float scale, int64_t valid_len) {
    constexpr uint32_t H = 16, BS = 64;
    float s_buf[H * BS];
    float m_buf[H];
    float l_buf[H];
    pto_tile::TileView sv = pto_tile::tile_view(sij);
    pto_tile::TileView pv = pto_tile::tile_view(pij);
    pto_tile::TileView mv = pto_tile::tile_view(mi_j);
    pto_tile::TileView lv = pto_tile::tile_view(li_j);
    if (sv.rows != H || sv.cols != BS || pv.rows != H || pv.cols != BS || mv.numel() != H || lv.numel() != H ||
        valid_len < 1 || valid_len > (int64_t)BS) {
        fprintf(stderr, "softmax_prepare: unexpected tile shapes or valid_len %lld\n", (long long)valid_len);
        return;
    }
    pto_tile::load(sv, s_buf);
    pto_tile::scale(s_buf, scale, s_buf, H * BS);
    for (uint32_t r = 0; r < H; ++r) {
        pto_tile::fill(s_buf + r * BS + valid_len, BS - (uint64_t)valid_len, -INFINITY);
    }
    pto_tile::row_max(s_buf, H, BS, m_buf);
    pto_tile::row_sub(s_buf, m_buf, s_buf, H, BS);
    pto_tile::exp(s_buf, s_buf, H * BS);
    pto_tile::row_sum(s_buf, H, BS, l_buf);
    pto_tile::store(s_buf, pv);
    pto_tile::store(m_buf, mv);
    pto_tile::store(l_buf, lv);
}
// --- Kernel entry point ---
extern "C" void kernel_entry(int64_t* args) {
    const ChipTensor* sij = kernel_tensor(args, 0);
    const ChipTensor* pij = kernel_tensor(args, 1);
    const ChipTensor* mi_j = kernel_tensor(args, 2);
    const ChipTensor* li_j = kernel_tensor(args, 3);
    float scale = kernel_scalar<float>(args, 4);
    int64_t valid_len = kernel_scalar<int64_t>(args, 5);
    softmax_prepare(sij, pij, mi_j, li_j, scale, valid_len);
}
