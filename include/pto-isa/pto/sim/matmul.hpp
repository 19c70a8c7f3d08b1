// pto/sim/matmul.hpp: TMATMUL, TMATMUL_ACC, TMATMUL_BIAS (and the TGEMV aliases).
//
// M = left.valid_row, K = left.valid_col, N = right.valid_col. Operand pairs: bf16 x bf16,
// f16 x f16 and f32 x f32 into f32 (each product accumulated with a fused multiply-add in k
// order, from zero), i8 x i8 into i32. TMATMUL_ACC adds the accumulator's previous value to
// the sum, TMATMUL_BIAS adds bias(0, j). The operands are converted once per instruction into
// row-major float (or int32) scratch; on x86-64 CPUs with AVX2 and FMA the f32 kernel runs
// eight columns per instruction (bit-identical to the scalar fma chain).
#pragma once

#include "pto/sim/reduce.hpp"

namespace pto {
namespace sim {

/// Per-thread scratch of the matmul (grows to the largest tiles seen, then stays).
struct MatmulScratch {
    std::vector<float> a, b, c;     ///< float operands and result
    std::vector<int32_t> ia, ib, ic; ///< int8 operands widened, int32 result
};
/// This thread's matmul scratch.
inline MatmulScratch& matmul_scratch() {
    static thread_local MatmulScratch s;
    return s;
}

/// c[M x N] = sum_k a[i][k] * b[k][j] with fma in k order, scalar (portable) version.
inline void gemm_f32_scalar(const float* a, const float* b, float* c, size_t m, size_t n, size_t k) {
    for (size_t i = 0; i < m; ++i) {
        float* crow = c + i * n;
        for (size_t j = 0; j < n; ++j) crow[j] = 0.0f;
        for (size_t kk = 0; kk < k; ++kk) {
            const float x = a[i * k + kk];
            const float* brow = b + kk * n;
            for (size_t j = 0; j < n; ++j) crow[j] = std::fma(x, brow[j], crow[j]);
        }
    }
}

#if defined(__x86_64__)
/// Eight floats (unaligned loads and stores allowed).
typedef float v8f __attribute__((vector_size(32), aligned(4)));

/// As gemm_f32_scalar, with AVX2/FMA: 4 rows x 16 columns of accumulators in registers.
__attribute__((target("avx2,fma"))) inline void gemm_f32_avx2(const float* a, const float* b, float* c, size_t m,
                                                               size_t n, size_t k) {
    size_t i = 0;
    for (; i + 4 <= m; i += 4) {
        size_t j = 0;
        for (; j + 16 <= n; j += 16) {
            v8f c00 = {}, c01 = {}, c10 = {}, c11 = {}, c20 = {}, c21 = {}, c30 = {}, c31 = {};
            const float* a0 = a + i * k;
            const float* a1 = a0 + k;
            const float* a2 = a1 + k;
            const float* a3 = a2 + k;
            const float* bp = b + j;
            for (size_t kk = 0; kk < k; ++kk, bp += n) {
                const v8f b0 = *reinterpret_cast<const v8f*>(bp);
                const v8f b1 = *reinterpret_cast<const v8f*>(bp + 8);
                v8f x = v8f{} + a0[kk];
                c00 = __builtin_ia32_vfmaddps256(x, b0, c00);
                c01 = __builtin_ia32_vfmaddps256(x, b1, c01);
                x = v8f{} + a1[kk];
                c10 = __builtin_ia32_vfmaddps256(x, b0, c10);
                c11 = __builtin_ia32_vfmaddps256(x, b1, c11);
                x = v8f{} + a2[kk];
                c20 = __builtin_ia32_vfmaddps256(x, b0, c20);
                c21 = __builtin_ia32_vfmaddps256(x, b1, c21);
                x = v8f{} + a3[kk];
                c30 = __builtin_ia32_vfmaddps256(x, b0, c30);
                c31 = __builtin_ia32_vfmaddps256(x, b1, c31);
            }
            float* cp = c + i * n + j;
            *reinterpret_cast<v8f*>(cp) = c00;
            *reinterpret_cast<v8f*>(cp + 8) = c01;
            *reinterpret_cast<v8f*>(cp + n) = c10;
            *reinterpret_cast<v8f*>(cp + n + 8) = c11;
            *reinterpret_cast<v8f*>(cp + 2 * n) = c20;
            *reinterpret_cast<v8f*>(cp + 2 * n + 8) = c21;
            *reinterpret_cast<v8f*>(cp + 3 * n) = c30;
            *reinterpret_cast<v8f*>(cp + 3 * n + 8) = c31;
        }
        for (; j < n; ++j) {
            for (size_t r = i; r < i + 4; ++r) {
                float s = 0.0f;
                for (size_t kk = 0; kk < k; ++kk) s = __builtin_fmaf(a[r * k + kk], b[kk * n + j], s);
                c[r * n + j] = s;
            }
        }
    }
    for (; i < m; ++i) {
        size_t j = 0;
        for (; j + 8 <= n; j += 8) {
            v8f acc = {};
            for (size_t kk = 0; kk < k; ++kk) {
                acc = __builtin_ia32_vfmaddps256(v8f{} + a[i * k + kk], *reinterpret_cast<const v8f*>(b + kk * n + j), acc);
            }
            *reinterpret_cast<v8f*>(c + i * n + j) = acc;
        }
        for (; j < n; ++j) {
            float s = 0.0f;
            for (size_t kk = 0; kk < k; ++kk) s = __builtin_fmaf(a[i * k + kk], b[kk * n + j], s);
            c[i * n + j] = s;
        }
    }
}

/// True when this CPU has AVX2 and FMA.
inline bool cpu_has_avx2_fma() {
    static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return has;
}
#endif

/// c = a * b (float, fma in k order): the fastest kernel this CPU runs.
inline void gemm_f32(const float* a, const float* b, float* c, size_t m, size_t n, size_t k) {
#if defined(__x86_64__)
    if (cpu_has_avx2_fma()) {
        gemm_f32_avx2(a, b, c, m, n, k);
        return;
    }
#endif
    gemm_f32_scalar(a, b, c, m, n, k);
}

/// c = a * b over int32.
inline void gemm_i32(const int32_t* a, const int32_t* b, int32_t* c, size_t m, size_t n, size_t k) {
    for (size_t i = 0; i < m; ++i) {
        int32_t* crow = c + i * n;
        for (size_t j = 0; j < n; ++j) crow[j] = 0;
        for (size_t kk = 0; kk < k; ++kk) {
            const int32_t x = a[i * k + kk];
            const int32_t* brow = b + kk * n;
            for (size_t j = 0; j < n; ++j) {
                crow[j] = static_cast<int32_t>(static_cast<uint32_t>(crow[j]) +
                                               static_cast<uint32_t>(x) * static_cast<uint32_t>(brow[j]));
            }
        }
    }
}

/// Copies the `rows x cols` top-left region of `tile` into the row-major matrix `dst`
/// (leading dimension `ld`), converting each element to `D`. Walks the tile in contiguous
/// runs of its storage (rows for row-major layouts and blocks with a row-major inside,
/// columns otherwise) instead of computing every element's offset.
template <class D, class TileT>
inline void tile_to_matrix(const TileT& tile, const typename TileT::DType* src, size_t rows, size_t cols, D* dst,
                           size_t ld) {
    if constexpr (TileT::isBoxedLayout ? TileT::isInnerRowMajor : TileT::isRowMajor) {
        constexpr size_t run = TileT::isBoxedLayout ? TileT::InnerCols : TileT::Cols;
        for (size_t r = 0; r < rows; ++r) {
            for (size_t c0 = 0; c0 < cols; c0 += run) {
                const typename TileT::DType* p = src + tile.ElementOffset(r, c0);
                const size_t n = std::min(run, cols - c0);
                D* q = dst + r * ld + c0;
                for (size_t i = 0; i < n; ++i) q[i] = static_cast<D>(p[i]);
            }
        }
    } else {
        constexpr size_t run = TileT::isBoxedLayout ? TileT::InnerRows : TileT::Rows;
        for (size_t c = 0; c < cols; ++c) {
            for (size_t r0 = 0; r0 < rows; r0 += run) {
                const typename TileT::DType* p = src + tile.ElementOffset(r0, c);
                const size_t n = std::min(run, rows - r0);
                D* q = dst + r0 * ld + c;
                for (size_t i = 0; i < n; ++i) q[i * ld] = static_cast<D>(p[i]);
            }
        }
    }
}

/// The inverse of tile_to_matrix: writes `f(r, c, value)` of the row-major matrix `src` into
/// the `rows x cols` top-left region of `tile`.
template <class TileT, class S, class F>
inline void matrix_to_tile(TileT& tile, typename TileT::DType* dst, size_t rows, size_t cols, const S* src, size_t ld,
                           F f) {
    if constexpr (TileT::isBoxedLayout ? TileT::isInnerRowMajor : TileT::isRowMajor) {
        constexpr size_t run = TileT::isBoxedLayout ? TileT::InnerCols : TileT::Cols;
        for (size_t r = 0; r < rows; ++r) {
            for (size_t c0 = 0; c0 < cols; c0 += run) {
                typename TileT::DType* p = dst + tile.ElementOffset(r, c0);
                const size_t n = std::min(run, cols - c0);
                const S* q = src + r * ld + c0;
                for (size_t i = 0; i < n; ++i) p[i] = f(r, c0 + i, q[i]);
            }
        }
    } else {
        constexpr size_t run = TileT::isBoxedLayout ? TileT::InnerRows : TileT::Rows;
        for (size_t c = 0; c < cols; ++c) {
            for (size_t r0 = 0; r0 < rows; r0 += run) {
                typename TileT::DType* p = dst + tile.ElementOffset(r0, c);
                const size_t n = std::min(run, rows - r0);
                const S* q = src + r0 * ld + c;
                for (size_t i = 0; i < n; ++i) p[i] = f(r0 + i, c, q[i * ld]);
            }
        }
    }
}

/// The checks every matmul form shares.
template <class Acc, class L, class R>
constexpr void check_matmul_types() {
    using A = typename L::DType;
    using B = typename R::DType;
    using C = typename Acc::DType;
    static_assert(Acc::Loc == TileType::Acc && L::Loc == TileType::Left && R::Loc == TileType::Right,
                  "TMATMUL(acc, left, right): the tiles must be Acc (L0C), Left (L0A) and Right (L0B)");
    static_assert((std::is_same<A, bfloat16_t>::value && std::is_same<B, bfloat16_t>::value && std::is_same<C, float>::value) ||
                      (std::is_same<A, half>::value && std::is_same<B, half>::value && std::is_same<C, float>::value) ||
                      (std::is_same<A, float>::value && std::is_same<B, float>::value && std::is_same<C, float>::value) ||
                      (std::is_same<A, int8_t>::value && std::is_same<B, int8_t>::value && std::is_same<C, int32_t>::value),
                  "TMATMUL: supported operand pairs are bf16 x bf16 -> f32, f16 x f16 -> f32, f32 x f32 -> f32 and "
                  "i8 x i8 -> i32 (docs/PTO_ISA.md)");
    static_assert(L::isBoxedLayout && L::isInnerRowMajor,
                  "TMATMUL: the Left tile must be Zz (a2a3) or Nz (a5): SLayout::RowMajor");
    static_assert(R::isBoxedLayout && R::isRowMajor && R::isInnerColMajor,
                  "TMATMUL: the Right tile must be Zn (BLayout::RowMajor, SLayout::ColMajor)");
    static_assert(Acc::isBoxedLayout && !Acc::isRowMajor && Acc::isInnerRowMajor,
                  "TMATMUL: the Acc tile must be Nz (BLayout::ColMajor, SLayout::RowMajor)");
}

/// out = [in +] left * right [+ bias].
template <class Acc, class L, class R, class Bias>
inline void matmul(Acc& out, const Acc* in, L& left, R& right, Bias* bias, const char* op) {
    check_matmul_types<Acc, L, R>();
    if (tracing()) trace_tiles(op, &out, &left, &right, vrows(left), vcols(right), vcols(left));
    using A = typename L::DType;
    using B = typename R::DType;
    using C = typename Acc::DType;
    C* o = tile_data(out, op);
    const A* pa = tile_data(left, op);
    const B* pb = tile_data(right, op);
    const C* pin = in != nullptr ? tile_data(*in, op) : nullptr;
    const size_t m = vrows(left), k = vcols(left), n = vcols(right);
    if (m > static_cast<size_t>(Acc::Rows) || n > static_cast<size_t>(Acc::Cols) || k > static_cast<size_t>(R::Rows)) {
        fatal(std::string(op) + ": M x K x N = " + std::to_string(m) + " x " + std::to_string(k) + " x " +
              std::to_string(n) + " does not fit " + tile_name(out) + " and " + tile_name(right));
    }
    MatmulScratch& s = matmul_scratch();
    if constexpr (std::is_same<C, float>::value) {
        s.a.resize(m * k);
        s.b.resize(k * n);
        s.c.resize(m * n);
        tile_to_matrix(left, pa, m, k, s.a.data(), k);
        tile_to_matrix(right, pb, k, n, s.b.data(), n);
        gemm_f32(s.a.data(), s.b.data(), s.c.data(), m, n, k);
        if (bias != nullptr) {
            for (size_t j = 0; j < n; ++j) {
                const float bj = static_cast<float>(bias->data_[bias->ElementOffset(0, j)]);
                for (size_t i = 0; i < m; ++i) s.c[i * n + j] += bj;
            }
        }
        if (pin != nullptr) {
            matrix_to_tile(out, o, m, n, s.c.data(), n,
                           [&](size_t i, size_t j, float v) { return pin[in->ElementOffset(i, j)] + v; });
        } else {
            matrix_to_tile(out, o, m, n, s.c.data(), n, [](size_t, size_t, float v) { return v; });
        }
    } else {
        s.ia.resize(m * k);
        s.ib.resize(k * n);
        s.ic.resize(m * n);
        tile_to_matrix(left, pa, m, k, s.ia.data(), k);
        tile_to_matrix(right, pb, k, n, s.ib.data(), n);
        gemm_i32(s.ia.data(), s.ib.data(), s.ic.data(), m, n, k);
        matrix_to_tile(out, o, m, n, s.ic.data(), n, [&](size_t i, size_t j, int32_t v) {
            uint32_t u = static_cast<uint32_t>(v);
            if (pin != nullptr) u += static_cast<uint32_t>(pin[in->ElementOffset(i, j)]);
            if (bias != nullptr) u += static_cast<uint32_t>(bias->data_[bias->ElementOffset(0, j)]);
            return static_cast<int32_t>(u);
        });
    }
}

/// A stand-in bias type for matmuls without bias.
struct NoBias {
    float* data_ = nullptr; ///< unused
    /// Unused.
    size_t ElementOffset(size_t, size_t) const { return 0; }
};

} // namespace sim

/// acc = left * right.
template <typename TileRes, typename TileLeft, typename TileRight>
PTO_INST RecordEvent TMATMUL(TileRes& cMatrix, TileLeft& aMatrix, TileRight& bMatrix) {
    sim::matmul<TileRes, TileLeft, TileRight, sim::NoBias>(cMatrix, nullptr, aMatrix, bMatrix, nullptr, "TMATMUL");
    return {};
}

/// TMATMUL with a unit-flag phase (no effect on the CPU).
template <AccPhase Phase, typename TileRes, typename TileLeft, typename TileRight>
PTO_INST RecordEvent TMATMUL(TileRes& cMatrix, TileLeft& aMatrix, TileRight& bMatrix) {
    return TMATMUL(cMatrix, aMatrix, bMatrix);
}

/// out = in + left * right.
template <typename TileRes, typename TileLeft, typename TileRight>
PTO_INST RecordEvent TMATMUL_ACC(TileRes& cOutMatrix, TileRes& cInMatrix, TileLeft& aMatrix, TileRight& bMatrix) {
    sim::matmul<TileRes, TileLeft, TileRight, sim::NoBias>(cOutMatrix, &cInMatrix, aMatrix, bMatrix, nullptr,
                                                           "TMATMUL_ACC");
    return {};
}

/// TMATMUL_ACC with a unit-flag phase (no effect on the CPU).
template <AccPhase Phase, typename TileRes, typename TileLeft, typename TileRight>
PTO_INST RecordEvent TMATMUL_ACC(TileRes& cOutMatrix, TileRes& cInMatrix, TileLeft& aMatrix, TileRight& bMatrix) {
    return TMATMUL_ACC(cOutMatrix, cInMatrix, aMatrix, bMatrix);
}

/// acc += left * right (one accumulator).
template <AccPhase Phase = AccPhase::Unspecified, typename TileRes, typename TileLeft, typename TileRight>
PTO_INST RecordEvent TMATMUL_ACC(TileRes& cMatrix, TileLeft& aMatrix, TileRight& bMatrix) {
    return TMATMUL_ACC(cMatrix, cMatrix, aMatrix, bMatrix);
}

/// acc = left * right + bias(0, j).
template <typename TileRes, typename TileLeft, typename TileRight, typename TileBias>
PTO_INST RecordEvent TMATMUL_BIAS(TileRes& cMatrix, TileLeft& aMatrix, TileRight& bMatrix, TileBias& biasData) {
    static_assert(is_tile_data_v<TileBias> && TileBias::Loc == TileType::Bias && TileBias::Rows == 1 &&
                      std::is_same<typename TileBias::DType, typename TileRes::DType>::value,
                  "TMATMUL_BIAS: the bias must be a one-row Bias tile of the accumulator's element type");
    sim::tile_data(biasData, "TMATMUL_BIAS");
    if (sim::vcols(bMatrix) > static_cast<size_t>(TileBias::Cols)) {
        sim::fatal("TMATMUL_BIAS: " + sim::tile_name(biasData) + " is narrower than N");
    }
    sim::matmul<TileRes, TileLeft, TileRight, TileBias>(cMatrix, nullptr, aMatrix, bMatrix, &biasData, "TMATMUL_BIAS");
    return {};
}

/// TMATMUL_BIAS with a unit-flag phase (no effect on the CPU).
template <AccPhase Phase, typename TileRes, typename TileLeft, typename TileRight, typename TileBias>
PTO_INST RecordEvent TMATMUL_BIAS(TileRes& cMatrix, TileLeft& aMatrix, TileRight& bMatrix, TileBias& biasData) {
    return TMATMUL_BIAS(cMatrix, aMatrix, bMatrix, biasData);
}

/// Matrix-vector product: the same as TMATMUL.
template <typename TileRes, typename TileLeft, typename TileRight>
PTO_INST RecordEvent TGEMV(TileRes& cMatrix, TileLeft& aMatrix, TileRight& bMatrix) {
    return TMATMUL(cMatrix, aMatrix, bMatrix);
}
/// Matrix-vector product with accumulation: the same as TMATMUL_ACC.
template <typename TileRes, typename TileLeft, typename TileRight>
PTO_INST RecordEvent TGEMV_ACC(TileRes& cOutMatrix, TileRes& cInMatrix, TileLeft& aMatrix, TileRight& bMatrix) {
    return TMATMUL_ACC(cOutMatrix, cInMatrix, aMatrix, bMatrix);
}
/// Matrix-vector product with bias: the same as TMATMUL_BIAS.
template <typename TileRes, typename TileLeft, typename TileRight, typename TileBias>
PTO_INST RecordEvent TGEMV_BIAS(TileRes& cMatrix, TileLeft& aMatrix, TileRight& bMatrix, TileBias& biasData) {
    return TMATMUL_BIAS(cMatrix, aMatrix, bMatrix, biasData);
}

/// MX (micro-scaled) matmul: not supported.
template <typename... Tiles>
PTO_INST RecordEvent TMATMUL_MX(Tiles&... tiles) {
    static_assert(sim::always_false<Tiles...>, "TMATMUL_MX: MX (micro-scaled fp8/fp4) matmul is not supported (docs/PTO_ISA.md)");
    ((void)tiles, ...);
    return {};
}
/// MX matrix-vector product: not supported.
template <typename... Tiles>
PTO_INST RecordEvent TGEMV_MX(Tiles&... tiles) {
    static_assert(sim::always_false<Tiles...>, "TGEMV_MX: MX (micro-scaled fp8/fp4) matmul is not supported (docs/PTO_ISA.md)");
    ((void)tiles, ...);
    return {};
}

} // namespace pto
