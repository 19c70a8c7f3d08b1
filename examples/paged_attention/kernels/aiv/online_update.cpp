// Kernel Function: online_update

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tensor.h"
#include "pto_tile.h"

// --- ptoas-generated code ---
// Online softmax update with the block results (mi_j, li_j, oi_j):
//   first block:  mi = mi_j, li = li_j, oi = oi_j
//   later blocks: m = max(mi, mi_j), a = exp(mi - m), b = exp(mi_j - m),
//                 li = a * li + b * li_j, oi = a * oi + b * oi_j, mi = m
//   last block:   out = oi / li (row-wise)
static __aicore__ void online_update(const ChipTensor* mi_j, const ChipTensor* li_j, const ChipTensor* oi_j,
                                     const ChipTensor* mi, const ChipTensor* li, const ChipTensor* oi,
                                     const ChipTensor* out, int64_t is_first, int64_t is_last) {
    constexpr uint32_t H = 16, D = 128;
    float mj[H], lj[H], m[H], l[H], m_new[H], alpha[H], beta[H];
    float oj[H * D], o[H * D];
    pto_tile::TileView mjv = pto_tile::tile_view(mi_j);
    pto_tile::TileView ljv = pto_tile::tile_view(li_j);
    pto_tile::TileView ojv = pto_tile::tile_view(oi_j);
    pto_tile::TileView mv = pto_tile::tile_view(mi);
    pto_tile::TileView lv = pto_tile::tile_view(li);
    pto_tile::TileView ov = pto_tile::tile_view(oi);
    pto_tile::TileView outv = pto_tile::tile_view(out);
    if (mjv.numel() != H || ljv.numel() != H || mv.numel() != H || lv.numel() != H || ojv.rows != H ||
        ojv.cols != D || ov.rows != H || ov.cols != D || outv.rows != H || outv.cols != D) {
        fprintf(stderr, "online_update: unexpected tile shapes\n");
        return;
    }
    pto_tile::load(mjv, mj);
    pto_tile::load(ljv, lj);
    pto_tile::load(ojv, oj);
    if (is_first != 0) {
        memcpy(m, mj, sizeof(m));
        memcpy(l, lj, sizeof(l));
        memcpy(o, oj, sizeof(o));
    } else {
        pto_tile::load(mv, m);
        pto_tile::load(lv, l);
        pto_tile::load(ov, o);
        pto_tile::maximum(m, mj, m_new, H);
        pto_tile::sub(m, m_new, alpha, H);
        pto_tile::exp(alpha, alpha, H);
        pto_tile::sub(mj, m_new, beta, H);
        pto_tile::exp(beta, beta, H);
        pto_tile::mul(alpha, l, l, H);
        pto_tile::mul(beta, lj, lj, H);
        pto_tile::add(l, lj, l, H);
        pto_tile::row_mul(o, alpha, o, H, D);
        pto_tile::row_mul(oj, beta, oj, H, D);
        pto_tile::add(o, oj, o, H * D);
        memcpy(m, m_new, sizeof(m));
    }
    pto_tile::store(m, mv);
    pto_tile::store(l, lv);
    pto_tile::store(o, ov);
    if (is_last != 0) {
        pto_tile::row_div(o, l, o, H, D);
        pto_tile::store(o, outv);
    }
}
// --- Kernel entry point ---
extern "C" void kernel_entry(int64_t* args) {
    const ChipTensor* mi_j = kernel_tensor(args, 0);
    const ChipTensor* li_j = kernel_tensor(args, 1);
    const ChipTensor* oi_j = kernel_tensor(args, 2);
    const ChipTensor* mi = kernel_tensor(args, 3);
    const ChipTensor* li = kernel_tensor(args, 4);
    const ChipTensor* oi = kernel_tensor(args, 5);
    const ChipTensor* out = kernel_tensor(args, 6);
    int64_t is_first = kernel_scalar<int64_t>(args, 7);
    int64_t is_last = kernel_scalar<int64_t>(args, 8);
    online_update(mi_j, li_j, oi_j, mi, li, oi, out, is_first, is_last);
}
