// pto_tile.h: a small CPU tile library for kernels (C++17, header-only, no exceptions).
//
// A kernel receives ChipTensor descriptors (views: shape, element strides, element offset into
// a buffer). This header gives it a 2-D strided view of such a descriptor (`TileView`) and a
// handful of operations on dense, row-major `float` tiles held in local buffers:
//
//     pto_tile::TileView a = pto_tile::tile_view(kernel_tensor(args, 0));
//     float buf[64 * 64];
//     pto_tile::load(a, buf);                 // any of fp32 / fp16 / bf16 -> float
//     pto_tile::scale(buf, 2.0f, buf, 64 * 64);
//     pto_tile::store(buf, a);                // float -> the view's element type
//
// Conventions:
// - A local tile of R rows and C columns is a dense row-major `float` array of R*C elements
//   (element (r, c) at index r*C + c). Output buffers may alias input buffers in every
//   elementwise operation; `matmul` requires `c` to alias neither `a` nor `b`.
// - Arithmetic is IEEE single precision in program order (no fast-math), so results are
//   deterministic for a given compiler and flags.
// - Nothing here allocates, throws or aborts. A descriptor that cannot be viewed as a 2-D tile
//   gives a view with `valid == false` and zero rows and columns, so loops over it do nothing;
//   kernels should check `valid`.
//
// This library is the CPU stand-in for the PTO-ISA tile instructions (TLOAD / TSTORE / TADD /
// TMATMUL / row reductions) and the target of the project's `ptoas` later.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

// The tensor.h of this build's generation (the first on the include path).
#include <tensor.h>

namespace pto_tile {

// ---------------------------------------------------------------------------------------------
// Element conversion
// ---------------------------------------------------------------------------------------------

/// Converts IEEE binary16 bits to float (exact: every half value is a float).
inline float fp16_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1Fu;
    const uint32_t mant = h & 0x3FFu;
    uint32_t bits;
    if (exp == 0x1Fu) {
        bits = sign | 0x7F800000u | (mant << 13);  // infinity or NaN (payload kept)
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (mant << 13);  // normal: rebias 15 -> 127
    } else if (mant == 0) {
        bits = sign;  // signed zero
    } else {
        // Subnormal: mant * 2^-24, exactly representable as a float.
        const float v = (float)mant * 5.9604644775390625e-8f;
        return sign != 0 ? -v : v;
    }
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
}

/// Converts a float to IEEE binary16 bits, rounding to nearest, ties to even. Values beyond
/// the half range become infinity; NaN stays NaN (quiet).
inline uint16_t float_to_fp16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t absx = x & 0x7FFFFFFFu;
    if (absx >= 0x7F800000u) {  // infinity or NaN
        if (absx == 0x7F800000u) return (uint16_t)(sign | 0x7C00u);
        return (uint16_t)(sign | 0x7E00u | ((absx >> 13) & 0x1FFu));
    }
    const int32_t e = (int32_t)(absx >> 23) - 127;  // unbiased exponent
    if (e > 15) return (uint16_t)(sign | 0x7C00u);  // overflow
    if (e >= -14) {
        // Normal half. Dropping 13 mantissa bits; a carry may run into the exponent, which is
        // the correct result (up to infinity).
        const uint32_t mant = absx & 0x7FFFFFu;
        uint32_t h = ((uint32_t)(e + 15) << 10) | (mant >> 13);
        const uint32_t rem = mant & 0x1FFFu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0)) h += 1;
        return (uint16_t)(sign | h);
    }
    if (e < -25) return sign;  // below half the smallest subnormal: rounds to zero
    // Subnormal half: round(value / 2^-24) with value = sig * 2^(e-23), i.e. sig >> -(e+1).
    const uint32_t sig = (absx & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = (uint32_t)(-(e + 1));  // 14 ..= 24
    uint32_t q = sig >> shift;
    const uint32_t rem = sig & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u) != 0)) q += 1;  // may become the smallest normal
    return (uint16_t)(sign | q);
}

/// Converts bfloat16 bits to float (exact).
inline float bf16_to_float(uint16_t b) {
    const uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
}

/// Converts a float to bfloat16 bits, rounding to nearest, ties to even; NaN stays NaN (quiet).
inline uint16_t float_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((x >> 16) | 0x0040u);
    x += 0x7FFFu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/// Whether `dt` is an element type the tile library converts (FLOAT32, FLOAT16, BFLOAT16).
inline bool is_supported(DataType dt) {
    return dt == DataType::FLOAT32 || dt == DataType::FLOAT16 || dt == DataType::BFLOAT16;
}

/// Reads one element of type `dt` at `p` as a float (0 for an unsupported type).
inline float load_element(DataType dt, const void* p) {
    switch (dt) {
    case DataType::FLOAT32: {
        float v;
        memcpy(&v, p, sizeof(v));
        return v;
    }
    case DataType::FLOAT16: {
        uint16_t h;
        memcpy(&h, p, sizeof(h));
        return fp16_to_float(h);
    }
    case DataType::BFLOAT16: {
        uint16_t b;
        memcpy(&b, p, sizeof(b));
        return bf16_to_float(b);
    }
    default:
        return 0.0f;
    }
}

/// Writes `v` as one element of type `dt` at `p` (nothing for an unsupported type).
inline void store_element(DataType dt, void* p, float v) {
    switch (dt) {
    case DataType::FLOAT32:
        memcpy(p, &v, sizeof(v));
        break;
    case DataType::FLOAT16: {
        const uint16_t h = float_to_fp16(v);
        memcpy(p, &h, sizeof(h));
        break;
    }
    case DataType::BFLOAT16: {
        const uint16_t b = float_to_bf16(v);
        memcpy(p, &b, sizeof(b));
        break;
    }
    default:
        break;
    }
}

// ---------------------------------------------------------------------------------------------
// Strided 2-D views
// ---------------------------------------------------------------------------------------------

/// A 2-D strided window into a tensor buffer: `rows` x `cols` elements of type `dtype`, element
/// (r, c) at `base + (r * row_stride + c * col_stride) * elem_size`. Strides are in elements
/// and may be anything (non-contiguous and transposed views work).
struct TileView {
    uint8_t* base;        ///< address of element (0, 0)
    DataType dtype;       ///< element type
    uint32_t elem_size;   ///< bytes per element
    uint32_t rows;        ///< number of rows
    uint32_t cols;        ///< number of columns
    uint64_t row_stride;  ///< elements between consecutive rows
    uint64_t col_stride;  ///< elements between consecutive columns
    bool valid;           ///< false when the descriptor could not be viewed (rows = cols = 0)

    /// Number of elements in the view.
    uint64_t numel() const { return (uint64_t)rows * cols; }
    /// Address of element (r, c); no bounds check.
    void* at(uint32_t r, uint32_t c) const {
        return base + ((uint64_t)r * row_stride + (uint64_t)c * col_stride) * elem_size;
    }
    /// Element (r, c) as a float; no bounds check.
    float get(uint32_t r, uint32_t c) const { return load_element(dtype, at(r, c)); }
    /// Stores `v` into element (r, c); no bounds check.
    void set(uint32_t r, uint32_t c, float v) const { store_element(dtype, at(r, c), v); }
    /// The window of `nrows` x `ncols` elements starting at (row0, col0). A window that does
    /// not fit inside this view is returned invalid (empty).
    TileView sub(uint32_t row0, uint32_t col0, uint32_t nrows, uint32_t ncols) const {
        TileView v = *this;
        if (!valid || (uint64_t)row0 + nrows > rows || (uint64_t)col0 + ncols > cols) {
            v.valid = false;
            v.rows = 0;
            v.cols = 0;
            return v;
        }
        v.base = (uint8_t*)at(row0, col0);
        v.rows = nrows;
        v.cols = ncols;
        return v;
    }
};

/// An invalid (empty) view.
inline TileView invalid_view() {
    TileView v;
    v.base = nullptr;
    v.dtype = DataType::FLOAT32;
    v.elem_size = 4;
    v.rows = 0;
    v.cols = 0;
    v.row_stride = 0;
    v.col_stride = 0;
    v.valid = false;
    return v;
}

/// Views a tensor descriptor as a 2-D tile: columns are the last dimension, rows are all leading
/// dimensions folded together. Folding needs the leading dimensions to be laid out as one
/// strided dimension (dimensions of size 1 are ignored), which holds for any view of a
/// row-major tensor that takes whole ranges of the inner leading dimensions, e.g. `[1, H, D]`
/// of a `[B, H, D]` tensor or `[64, 64]` of a `[256, 256]` one. A 1-D tensor is one row; a
/// 0-D tensor is 1 x 1. Returns an invalid view for a null descriptor, an unsupported element
/// type, more than MAX_TENSOR_DIMS dimensions, more than 2^32-1 rows or columns, or leading
/// dimensions that do not fold.
inline TileView tile_view(const simpler::tmr::Tensor* t) {
    if (t == nullptr || t->ndims > MAX_TENSOR_DIMS || !is_supported(t->dtype)) return invalid_view();
    TileView v = invalid_view();
    v.dtype = t->dtype;
    v.elem_size = get_element_size(t->dtype);
    v.base = reinterpret_cast<uint8_t*>(t->buffer.addr) + t->start_offset * v.elem_size;
    const uint32_t nd = t->ndims;
    for (uint32_t i = 0; i < nd; ++i) {
        if (t->shapes[i] == 0) {  // an empty tensor: a valid view with no elements
            v.valid = true;
            return v;
        }
    }
    uint64_t cols = 1;
    uint64_t col_stride = 1;
    if (nd >= 1) {
        cols = t->shapes[nd - 1];
        col_stride = t->strides[nd - 1];
    }
    uint64_t rows = 1;
    uint64_t row_stride = 0;
    for (int32_t i = (int32_t)nd - 2; i >= 0; --i) {
        const uint64_t s = t->shapes[i];
        if (s == 1) continue;
        if (rows == 1) {
            row_stride = t->strides[i];
        } else if ((uint64_t)t->strides[i] != row_stride * rows) {
            return invalid_view();  // leading dimensions do not fold into one
        }
        rows *= s;
    }
    if (rows > 0xFFFFFFFFull || cols > 0xFFFFFFFFull) return invalid_view();
    if (row_stride == 0) row_stride = cols * col_stride;
    v.rows = (uint32_t)rows;
    v.cols = (uint32_t)cols;
    v.row_stride = row_stride;
    v.col_stride = col_stride;
    v.valid = true;
    return v;
}

/// Same as `tile_view(const Tensor*)`.
inline TileView tile_view(const simpler::tmr::Tensor& t) { return tile_view(&t); }

/// Copies the view into `dst`, a dense row-major rows x cols float buffer, converting each
/// element to float.
inline void load(const TileView& src, float* dst) {
    if (!src.valid) return;
    if (src.dtype == DataType::FLOAT32 && src.col_stride == 1) {
        for (uint32_t r = 0; r < src.rows; ++r) {
            memcpy(dst + (uint64_t)r * src.cols, src.at(r, 0), (size_t)src.cols * sizeof(float));
        }
        return;
    }
    for (uint32_t r = 0; r < src.rows; ++r) {
        for (uint32_t c = 0; c < src.cols; ++c) dst[(uint64_t)r * src.cols + c] = src.get(r, c);
    }
}

/// Copies `src`, a dense row-major rows x cols float buffer, into the view, converting each
/// element to the view's type (round to nearest even for fp16 / bf16).
inline void store(const float* src, const TileView& dst) {
    if (!dst.valid) return;
    if (dst.dtype == DataType::FLOAT32 && dst.col_stride == 1) {
        for (uint32_t r = 0; r < dst.rows; ++r) {
            memcpy(dst.at(r, 0), src + (uint64_t)r * dst.cols, (size_t)dst.cols * sizeof(float));
        }
        return;
    }
    for (uint32_t r = 0; r < dst.rows; ++r) {
        for (uint32_t c = 0; c < dst.cols; ++c) dst.set(r, c, src[(uint64_t)r * dst.cols + c]);
    }
}

// ---------------------------------------------------------------------------------------------
// Operations on local tiles
// ---------------------------------------------------------------------------------------------

/// `matmul` flag: add the product to `c` instead of overwriting it.
constexpr uint32_t MATMUL_ACCUMULATE = 1u;
/// `matmul` flag: `b` holds B transposed, i.e. an N x K tile, and the product is A @ b^T.
constexpr uint32_t MATMUL_B_TRANSPOSED = 2u;

/// C[M, N] = A[M, K] @ B[K, N] (or `+=` with MATMUL_ACCUMULATE). With MATMUL_B_TRANSPOSED, `b`
/// is an N x K tile and the product is A @ b^T. Each output element is accumulated in float
/// over k in increasing order. `c` must not alias `a` or `b`.
inline void matmul(const float* a, const float* b, float* c, uint32_t m, uint32_t n, uint32_t k,
                   uint32_t flags = 0) {
    const bool accumulate = (flags & MATMUL_ACCUMULATE) != 0;
    if ((flags & MATMUL_B_TRANSPOSED) != 0) {
        for (uint32_t i = 0; i < m; ++i) {
            const float* arow = a + (uint64_t)i * k;
            for (uint32_t j = 0; j < n; ++j) {
                const float* brow = b + (uint64_t)j * k;
                float acc = accumulate ? c[(uint64_t)i * n + j] : 0.0f;
                for (uint32_t p = 0; p < k; ++p) acc += arow[p] * brow[p];
                c[(uint64_t)i * n + j] = acc;
            }
        }
        return;
    }
    for (uint32_t i = 0; i < m; ++i) {
        float* crow = c + (uint64_t)i * n;
        if (!accumulate) {
            for (uint32_t j = 0; j < n; ++j) crow[j] = 0.0f;
        }
        const float* arow = a + (uint64_t)i * k;
        // i-p-j order: streams rows of B; same per-element summation order as above.
        for (uint32_t p = 0; p < k; ++p) {
            const float av = arow[p];
            const float* brow = b + (uint64_t)p * n;
            for (uint32_t j = 0; j < n; ++j) crow[j] += av * brow[j];
        }
    }
}

/// out[i] = a[i] + b[i] for i < n.
inline void add(const float* a, const float* b, float* out, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

/// out[i] = a[i] - b[i] for i < n.
inline void sub(const float* a, const float* b, float* out, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) out[i] = a[i] - b[i];
}

/// out[i] = a[i] * b[i] for i < n.
inline void mul(const float* a, const float* b, float* out, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) out[i] = a[i] * b[i];
}

/// out[i] = max(a[i], b[i]) for i < n (NaN-propagating only through `a`).
inline void maximum(const float* a, const float* b, float* out, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) out[i] = b[i] > a[i] ? b[i] : a[i];
}

/// out[i] = a[i] * s for i < n.
inline void scale(const float* a, float s, float* out, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) out[i] = a[i] * s;
}

/// out[i] = exp(a[i]) for i < n (exp(-inf) = 0).
inline void exp(const float* a, float* out, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) out[i] = ::expf(a[i]);
}

/// out[i] = v for i < n.
inline void fill(float* out, uint64_t n, float v) {
    for (uint64_t i = 0; i < n; ++i) out[i] = v;
}

/// out[r] = max over c of a[r, c] for a rows x cols tile (-inf for an empty row).
inline void row_max(const float* a, uint32_t rows, uint32_t cols, float* out) {
    for (uint32_t r = 0; r < rows; ++r) {
        const float* row = a + (uint64_t)r * cols;
        float m = -INFINITY;
        for (uint32_t c = 0; c < cols; ++c) m = row[c] > m ? row[c] : m;
        out[r] = m;
    }
}

/// out[r] = sum over c of a[r, c] for a rows x cols tile, accumulated in increasing c.
inline void row_sum(const float* a, uint32_t rows, uint32_t cols, float* out) {
    for (uint32_t r = 0; r < rows; ++r) {
        const float* row = a + (uint64_t)r * cols;
        float s = 0.0f;
        for (uint32_t c = 0; c < cols; ++c) s += row[c];
        out[r] = s;
    }
}

/// out[r, c] = a[r, c] - v[r]: subtracts a per-row value (row broadcast).
inline void row_sub(const float* a, const float* v, float* out, uint32_t rows, uint32_t cols) {
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t c = 0; c < cols; ++c) out[(uint64_t)r * cols + c] = a[(uint64_t)r * cols + c] - v[r];
    }
}

/// out[r, c] = a[r, c] * v[r]: multiplies by a per-row value (row broadcast).
inline void row_mul(const float* a, const float* v, float* out, uint32_t rows, uint32_t cols) {
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t c = 0; c < cols; ++c) out[(uint64_t)r * cols + c] = a[(uint64_t)r * cols + c] * v[r];
    }
}

/// out[r, c] = a[r, c] / v[r]: divides by a per-row value (row broadcast).
inline void row_div(const float* a, const float* v, float* out, uint32_t rows, uint32_t cols) {
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t c = 0; c < cols; ++c) out[(uint64_t)r * cols + c] = a[(uint64_t)r * cols + c] / v[r];
    }
}

}  // namespace pto_tile
