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
            v8f acc[4][2] = {};
            const float* a0 = a + i * k;
            for (size_t kk = 0; kk < k; ++kk) {
                const v8f b0 = *reinterpret_cast<const v8f*>(b + kk * n + j);
                const v8f b1 = *reinterpret_cast<const v8f*>(b + kk * n + j + 8);
                for (int r = 0; r < 4; ++r) {
                    const v8f x = v8f{} + a0[r * k + kk];
                    acc[r][0] = __builtin_ia32_vfmaddps256(x, b0, acc[r][0]);
                    acc[r][1] = __builtin_ia32_vfmaddps256(x, b1, acc[r][1]);
                }
            }
            for (int r = 0; r < 4; ++r) {
                *reinterpret_cast<v8f*>(c + (i + r) * n + j) = acc[r][0];
                *reinterpret_cast<v8f*>(c + (i + r) * n + j + 8) = acc[r][1];
            }
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
        for (size_t i = 0; i < m; ++i)
            for (size_t kk = 0; kk < k; ++kk) s.a[i * k + kk] = static_cast<float>(pa[left.ElementOffset(i, kk)]);
        for (size_t kk = 0; kk < k; ++kk)
            for (size_t j = 0; j < n; ++j) s.b[kk * n + j] = static_cast<float>(pb[right.ElementOffset(kk, j)]);
        gemm_f32(s.a.data(), s.b.data(), s.c.data(), m, n, k);
        for (size_t j = 0; j < n; ++j) {
            const float bj = bias != nullptr ? static_cast<float>(bias->data_[bias->ElementOffset(0, j)]) : 0.0f;
            for (size_t i = 0; i < m; ++i) {
                const size_t off = out.ElementOffset(i, j);
                float v = s.c[i * n + j];
                if (pin != nullptr) v = pin[in->ElementOffset(i, j)] + v;
                if (bias != nullptr) v = v + bj;
                o[off] = v;
            }
        }
    } else {
        s.ia.resize(m * k);
        s.ib.resize(k * n);
        s.ic.resize(m * n);
        for (size_t i = 0; i < m; ++i)
            for (size_t kk = 0; kk < k; ++kk) s.ia[i * k + kk] = pa[left.ElementOffset(i, kk)];
        for (size_t kk = 0; kk < k; ++kk)
            for (size_t j = 0; j < n; ++j) s.ib[kk * n + j] = pb[right.ElementOffset(kk, j)];
        gemm_i32(s.ia.data(), s.ib.data(), s.ic.data(), m, n, k);
        for (size_t j = 0; j < n; ++j) {
            const int32_t bj = bias != nullptr ? bias->data_[bias->ElementOffset(0, j)] : 0;
            for (size_t i = 0; i < m; ++i) {
                uint32_t v = static_cast<uint32_t>(s.ic[i * n + j]);
                if (pin != nullptr) v += static_cast<uint32_t>(pin[in->ElementOffset(i, j)]);
                v += static_cast<uint32_t>(bj);
                o[out.ElementOffset(i, j)] = static_cast<int32_t>(v);
            }
        }
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
