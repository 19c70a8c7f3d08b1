// Self-test of include/pto/pto_tile.h, compiled and run by tests/examples.rs
// (tile_library_selftest). Prints every failed check and exits non-zero if any failed.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pto_tile.h"

static int g_failures = 0;

#define CHECK(cond)                                                      \
    do {                                                                 \
        if (!(cond)) {                                                   \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            ++g_failures;                                                \
        }                                                                \
    } while (0)

static float bits_to_float(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof(f));
    return f;
}

static void test_fp16() {
    using namespace pto_tile;
    CHECK(float_to_fp16(1.0f) == 0x3C00);
    CHECK(float_to_fp16(-2.0f) == 0xC000);
    CHECK(float_to_fp16(0.0f) == 0x0000);
    CHECK(float_to_fp16(-0.0f) == 0x8000);
    CHECK(float_to_fp16(65504.0f) == 0x7BFF);
    CHECK(float_to_fp16(65519.0f) == 0x7BFF);        // rounds down to the largest half
    CHECK(float_to_fp16(65520.0f) == 0x7C00);        // tie rounds to even: infinity
    CHECK(float_to_fp16(1e10f) == 0x7C00);
    CHECK(float_to_fp16(INFINITY) == 0x7C00);
    CHECK(float_to_fp16(-INFINITY) == 0xFC00);
    CHECK((float_to_fp16(NAN) & 0x7C00) == 0x7C00 && (float_to_fp16(NAN) & 0x3FF) != 0);
    CHECK(float_to_fp16(0.1f) == 0x2E66);
    CHECK(float_to_fp16(1.0f / 3.0f) == 0x3555);
    CHECK(float_to_fp16(ldexpf(1.0f, -14)) == 0x0400);  // smallest normal
    CHECK(float_to_fp16(ldexpf(1.0f, -24)) == 0x0001);  // smallest subnormal
    CHECK(float_to_fp16(ldexpf(1.0f, -25)) == 0x0000);  // tie to even: zero
    CHECK(float_to_fp16(ldexpf(1.5f, -25)) == 0x0001);
    CHECK(float_to_fp16(ldexpf(3.0f, -25)) == 0x0002);  // 1.5 ulp ties to even (2)
    CHECK(float_to_fp16(ldexpf(1.0f, -30)) == 0x0000);
    CHECK(float_to_fp16(1.0f + ldexpf(1.0f, -11)) == 0x3C00);       // tie to even (down)
    CHECK(float_to_fp16(1.0f + ldexpf(3.0f, -11)) == 0x3C02);       // tie to even (up)
    CHECK(float_to_fp16(ldexpf(1023.5f, -24)) == 0x0400);           // subnormal rounds up to normal
    CHECK(fp16_to_float(0x3C00) == 1.0f);
    CHECK(fp16_to_float(0x0001) == ldexpf(1.0f, -24));
    CHECK(fp16_to_float(0x7BFF) == 65504.0f);
    CHECK(isinf(fp16_to_float(0x7C00)));
    CHECK(isnan(fp16_to_float(0x7E00)));
    // Every non-NaN half survives a round trip through float.
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; ++h) {
        if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0) continue;
        if (float_to_fp16(fp16_to_float((uint16_t)h)) != h) ++bad;
    }
    CHECK(bad == 0);
}

static void test_bf16() {
    using namespace pto_tile;
    CHECK(float_to_bf16(1.0f) == 0x3F80);
    CHECK(float_to_bf16(-1.0f) == 0xBF80);
    CHECK(float_to_bf16(1.0f + ldexpf(1.0f, -8)) == 0x3F80);  // tie to even (down)
    CHECK(float_to_bf16(1.0f + ldexpf(3.0f, -8)) == 0x3F82);  // tie to even (up)
    CHECK(float_to_bf16(bits_to_float(0x3F80C000u)) == 0x3F81);  // above the tie
    CHECK(float_to_bf16(INFINITY) == 0x7F80);
    CHECK((float_to_bf16(NAN) & 0x7F80) == 0x7F80 && (float_to_bf16(NAN) & 0x7F) != 0);
    CHECK(float_to_bf16(bits_to_float(0x7F7FFFFFu)) == 0x7F80);  // FLT_MAX rounds to infinity
    CHECK(bf16_to_float(0x3F80) == 1.0f);
    int bad = 0;
    for (uint32_t b = 0; b < 0x10000; ++b) {
        if ((b & 0x7F80) == 0x7F80 && (b & 0x7F) != 0) continue;
        if (float_to_bf16(bf16_to_float((uint16_t)b)) != b) ++bad;
    }
    CHECK(bad == 0);
}

static void test_views() {
    using namespace pto_tile;
    // A [4, 6] fp32 tensor holding 0..23.
    float data[24];
    for (int i = 0; i < 24; ++i) data[i] = (float)i;
    uint32_t shape[2] = {4, 6};
    ChipTensor t = make_tensor_external(data, shape, 2, DataType::FLOAT32);

    TileView whole = tile_view(t);
    CHECK(whole.valid && whole.rows == 4 && whole.cols == 6 && whole.row_stride == 6 && whole.col_stride == 1);

    // A non-contiguous [2, 3] window at (1, 2): elements 8 9 10 / 14 15 16.
    uint32_t wshape[2] = {2, 3};
    uint32_t woff[2] = {1, 2};
    ChipTensor w = t.view(wshape, woff);
    TileView wv = tile_view(&w);
    float buf[6];
    load(wv, buf);
    const float expect_w[6] = {8, 9, 10, 14, 15, 16};
    CHECK(wv.valid && wv.rows == 2 && wv.cols == 3);
    CHECK(memcmp(buf, expect_w, sizeof(buf)) == 0);

    // Store through the window touches only the window.
    const float ones[6] = {-1, -1, -1, -1, -1, -1};
    store(ones, wv);
    CHECK(data[7] == 7 && data[8] == -1 && data[10] == -1 && data[11] == 11 && data[13] == 13 && data[16] == -1 &&
          data[17] == 17);
    for (int i = 0; i < 24; ++i) data[i] = (float)i;

    // A transposed view: [6, 4], column stride 6.
    ChipTensor tt = t.transpose(0, 1);
    TileView tv = tile_view(tt);
    CHECK(tv.valid && tv.rows == 6 && tv.cols == 4 && tv.col_stride == 6 && tv.row_stride == 1);
    CHECK(tv.get(2, 3) == 20.0f);  // element (3, 2) of the original

    // Sub-windows and their bounds.
    TileView s = whole.sub(1, 1, 2, 2);
    CHECK(s.valid && s.get(0, 0) == 7.0f && s.get(1, 1) == 14.0f);
    CHECK(!whole.sub(3, 0, 2, 1).valid);

    // A [1, 3, 4] view of a [2, 3, 4] tensor folds into 3 x 4; a 1-D tensor is one row.
    float cube[24];
    for (int i = 0; i < 24; ++i) cube[i] = (float)i;
    uint32_t cshape[3] = {2, 3, 4};
    ChipTensor c = make_tensor_external(cube, cshape, 3, DataType::FLOAT32);
    uint32_t bshape[3] = {1, 3, 4};
    uint32_t boff[3] = {1, 0, 0};
    ChipTensor cb = c.view(bshape, boff);
    TileView cbv = tile_view(cb);
    CHECK(cbv.valid && cbv.rows == 3 && cbv.cols == 4 && cbv.get(0, 0) == 12.0f && cbv.get(2, 3) == 23.0f);
    TileView full3 = tile_view(c);
    CHECK(full3.valid && full3.rows == 6 && full3.cols == 4 && full3.get(5, 3) == 23.0f);
    // Permuting the two leading dimensions breaks folding: invalid.
    uint32_t perm[3] = {1, 0, 2};
    CHECK(!tile_view(c.permute(perm)).valid);
    uint32_t vshape[1] = {5};
    ChipTensor vec = make_tensor_external(cube, vshape, 1, DataType::FLOAT32);
    TileView vv = tile_view(vec);
    CHECK(vv.valid && vv.rows == 1 && vv.cols == 5 && vv.get(0, 4) == 4.0f);
    CHECK(!tile_view((const ChipTensor*)nullptr).valid);
    ChipTensor ints = make_tensor_external(cube, vshape, 1, DataType::INT32);
    CHECK(!tile_view(ints).valid);

    // fp16 and bf16 tensors load as float and store rounded.
    uint16_t halves[4] = {0x3C00, 0xC000, 0x3800, 0x0000};  // 1, -2, 0.5, 0
    uint32_t hshape[2] = {2, 2};
    ChipTensor h = make_tensor_external(halves, hshape, 2, DataType::FLOAT16);
    float hb[4];
    load(tile_view(h), hb);
    CHECK(hb[0] == 1.0f && hb[1] == -2.0f && hb[2] == 0.5f && hb[3] == 0.0f);
    const float hv[4] = {0.1f, 3.0f, -0.25f, 65504.0f};
    store(hv, tile_view(h));
    CHECK(halves[0] == 0x2E66 && halves[1] == 0x4200 && halves[2] == 0xB400 && halves[3] == 0x7BFF);
    uint16_t bfs[2] = {0x3F80, 0x4040};  // 1, 3
    uint32_t two[1] = {2};
    ChipTensor bt = make_tensor_external(bfs, two, 1, DataType::BFLOAT16);
    float bb[2];
    load(tile_view(bt), bb);
    CHECK(bb[0] == 1.0f && bb[1] == 3.0f);
}

static void test_math() {
    using namespace pto_tile;
    // A[2, 3] @ B[3, 2]
    const float a[6] = {1, 2, 3, 4, 5, 6};
    const float b[6] = {7, 8, 9, 10, 11, 12};
    const float bt[6] = {7, 9, 11, 8, 10, 12};  // B transposed, [2, 3]
    float c[4];
    matmul(a, b, c, 2, 2, 3);
    CHECK(c[0] == 58 && c[1] == 64 && c[2] == 139 && c[3] == 154);
    float d[4];
    matmul(a, bt, d, 2, 2, 3, MATMUL_B_TRANSPOSED);
    CHECK(memcmp(c, d, sizeof(c)) == 0);
    matmul(a, b, c, 2, 2, 3, MATMUL_ACCUMULATE);
    CHECK(c[0] == 116 && c[3] == 308);
    matmul(a, bt, d, 2, 2, 3, MATMUL_ACCUMULATE | MATMUL_B_TRANSPOSED);
    CHECK(memcmp(c, d, sizeof(c)) == 0);

    float x[4] = {1, -2, 3, -4};
    const float y[4] = {0.5f, 0.5f, 4, -8};
    float o[4];
    add(x, y, o, 4);
    CHECK(o[0] == 1.5f && o[3] == -12);
    sub(x, y, o, 4);
    CHECK(o[0] == 0.5f && o[3] == 4);
    mul(x, y, o, 4);
    CHECK(o[1] == -1 && o[3] == 32);
    maximum(x, y, o, 4);
    CHECK(o[0] == 1 && o[1] == 0.5f && o[2] == 4 && o[3] == -4);
    scale(x, -2.0f, o, 4);
    CHECK(o[0] == -2 && o[3] == 8);
    add(x, x, x, 4);  // in place
    CHECK(x[0] == 2 && x[3] == -8);
    float e[2] = {0.0f, -INFINITY};
    exp(e, e, 2);
    CHECK(e[0] == 1.0f && e[1] == 0.0f);
    fill(o, 4, 7.0f);
    CHECK(o[0] == 7 && o[3] == 7);

    // Row reductions and broadcasts on a [2, 3] tile.
    const float m[6] = {1, 5, -2, -1, -3, -7};
    float rm[2], rs[2];
    row_max(m, 2, 3, rm);
    row_sum(m, 2, 3, rs);
    CHECK(rm[0] == 5 && rm[1] == -1 && rs[0] == 4 && rs[1] == -11);
    float rb[6];
    row_sub(m, rm, rb, 2, 3);
    CHECK(rb[1] == 0 && rb[2] == -7 && rb[3] == 0 && rb[5] == -6);
    row_mul(m, rm, rb, 2, 3);
    CHECK(rb[0] == 5 && rb[5] == 7);
    row_div(m, rs, rb, 2, 3);
    CHECK(rb[0] == 0.25f && rb[4] == 3.0f / 11.0f);
    float ninf[1];
    row_max(m, 1, 0, ninf);
    CHECK(isinf(ninf[0]) && ninf[0] < 0);
}

int main() {
    test_fp16();
    test_bf16();
    test_views();
    test_math();
    if (g_failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", g_failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
