// pto/sim/memory.hpp: `TLOAD` (GM -> tile) and `TSTORE` (tile -> GM, with the Acc conversion
// and the atomic-add form).
//
// The GlobalTensor's shape drives the copy (as on the device). Its two innermost dimensions
// are the tile's rows and columns; outer dimensions are folded into rows for row-major and
// boxed tiles and into columns for column-major tiles (the DN case). Boxed (fractal) tiles
// take 2-D views only. The copied extent must fit the tile's physical shape, and the GM bytes
// the view spans must lie inside the task's tensors (when the runtime supplied them).
#pragma once

#include "pto/sim/assign.hpp"

namespace pto {
namespace sim {

/// The tile-space extent of a GM view and how outer dimensions fold.
struct GmMap {
    int64_t n[5];    ///< shape
    int64_t s[5];    ///< strides (elements)
    size_t rows;     ///< tile rows covered
    size_t cols;     ///< tile columns covered
    bool fold_rows;  ///< outer dimensions fold into rows (else into columns)
};

/// Maps `g` onto tiles of type `TileT`; faults when it does not fit the tile.
template <class TileT, class GT>
inline GmMap map_gm(const TileT& tile, const GT& g, const char* op) {
    GmMap m;
    for (int d = 0; d < 5; ++d) {
        m.n[d] = g.GetShape(d);
        m.s[d] = g.GetStride(d);
        if (m.n[d] < 0) {
            fatal(std::string(op) + ": " + gt_name(g) + " has a negative extent");
        }
    }
    const size_t outer = static_cast<size_t>(m.n[0] * m.n[1] * m.n[2]);
    m.fold_rows = TileT::isRowMajor || TileT::isBoxedLayout;
    if (TileT::isBoxedLayout && outer > 1) {
        fatal(std::string(op) + ": " + gt_name(g) + " is not 2-D; a boxed (" + layout_name<TileT>() + ") " +
              tile_name(tile) + " takes [1,1,1,rows,cols] views only");
    }
    m.rows = static_cast<size_t>(m.n[3]) * (m.fold_rows ? outer : 1);
    m.cols = static_cast<size_t>(m.n[4]) * (m.fold_rows ? 1 : outer);
    if (m.rows > static_cast<size_t>(TileT::Rows) || m.cols > static_cast<size_t>(TileT::Cols)) {
        fatal(std::string(op) + ": " + gt_name(g) + " covers " + std::to_string(m.rows) + "x" +
              std::to_string(m.cols) + " elements, more than " + tile_name(tile) + " holds");
    }
    return m;
}

/// Calls `f(r, c, gm_offset)` for every element of the view.
template <class F>
inline void for_each_gm(const GmMap& m, F&& f) {
    size_t o = 0;
    for (int64_t i0 = 0; i0 < m.n[0]; ++i0) {
        for (int64_t i1 = 0; i1 < m.n[1]; ++i1) {
            for (int64_t i2 = 0; i2 < m.n[2]; ++i2, ++o) {
                const int64_t base = i0 * m.s[0] + i1 * m.s[1] + i2 * m.s[2];
                for (int64_t r = 0; r < m.n[3]; ++r) {
                    for (int64_t c = 0; c < m.n[4]; ++c) {
                        const size_t tr = m.fold_rows ? o * static_cast<size_t>(m.n[3]) + r : static_cast<size_t>(r);
                        const size_t tc = m.fold_rows ? static_cast<size_t>(c) : o * static_cast<size_t>(m.n[4]) + c;
                        f(tr, tc, base + r * m.s[3] + c * m.s[4]);
                    }
                }
            }
        }
    }
}

/// Calls `f(tile_offset, gm_offset, count)` for each run of elements contiguous both in the
/// tile's storage and in GM (plain tiles: whole rows or columns; fractal tiles: one block
/// row or block column); returns false (and does nothing) when the view has no such runs.
template <class TileT>
inline bool for_each_gm_run(const GmMap& m, const TileT& tile, size_t& calls,
                            void (*f)(void*, size_t, int64_t, size_t), void* env) {
    calls = 0;
    if constexpr (TileT::isBoxedLayout) {
        // 2-D views only (map_gm checked): runs along a block's rows (inner RowMajor, GM rows
        // contiguous) or along its columns (inner ColMajor, GM columns contiguous).
        if (TileT::isInnerRowMajor && m.s[4] == 1) {
            for (int64_t r = 0; r < m.n[3]; ++r) {
                for (int64_t c0 = 0; c0 < m.n[4]; c0 += TileT::InnerCols) {
                    const size_t n = static_cast<size_t>(std::min<int64_t>(TileT::InnerCols, m.n[4] - c0));
                    f(env, tile.ElementOffset(static_cast<size_t>(r), static_cast<size_t>(c0)), r * m.s[3] + c0, n);
                    ++calls;
                }
            }
            return true;
        }
        if (TileT::isInnerColMajor && m.s[3] == 1) {
            for (int64_t c = 0; c < m.n[4]; ++c) {
                for (int64_t r0 = 0; r0 < m.n[3]; r0 += TileT::InnerRows) {
                    const size_t n = static_cast<size_t>(std::min<int64_t>(TileT::InnerRows, m.n[3] - r0));
                    f(env, tile.ElementOffset(static_cast<size_t>(r0), static_cast<size_t>(c)), c * m.s[4] + r0, n);
                    ++calls;
                }
            }
            return true;
        }
        return false;
    } else {
        if (TileT::isRowMajor ? m.s[4] != 1 : m.s[3] != 1) return false;
        size_t o = 0;
        for (int64_t i0 = 0; i0 < m.n[0]; ++i0) {
            for (int64_t i1 = 0; i1 < m.n[1]; ++i1) {
                for (int64_t i2 = 0; i2 < m.n[2]; ++i2, ++o) {
                    const int64_t base = i0 * m.s[0] + i1 * m.s[1] + i2 * m.s[2];
                    if (TileT::isRowMajor) {
                        for (int64_t r = 0; r < m.n[3]; ++r) {
                            const size_t tr = o * static_cast<size_t>(m.n[3]) + r;
                            f(env, tr * TileT::Cols, base + r * m.s[3], static_cast<size_t>(m.n[4]));
                            ++calls;
                        }
                    } else {
                        for (int64_t c = 0; c < m.n[4]; ++c) {
                            const size_t tc = o * static_cast<size_t>(m.n[4]) + c;
                            f(env, tc * TileT::Rows, base + c * m.s[4], static_cast<size_t>(m.n[3]));
                            ++calls;
                        }
                    }
                }
            }
        }
        return true;
    }
}

/// Checks the GM bytes a view spans.
template <class GT>
inline void check_view(const GT& g, const char* op) {
    if (g.data() == nullptr) {
        fatal(std::string(op) + ": " + gt_name(g) + " has a null data pointer");
    }
    uint64_t lo = 0, hi = 0;
    gt_span(g, lo, hi);
    check_gm(lo, hi, [&] { return std::string(op) + " of " + gt_name(g); });
}

/// Fills every element of `tile` with `v`.
template <class TileT>
inline void fill_tile(TileT& tile, typename TileT::DType v) {
    typename TileT::DType* d = tile.data_;
    for (int i = 0; i < TileT::Numel; ++i) d[i] = v;
}

/// Atomically replaces `*p` by `next(old)` for any element type of 1 to 8 bytes (a
/// compare-and-swap loop on its bits); `next` returns `false` to leave `*p` as it is.
template <class T, class Next>
inline void atomic_update(T* p, Next next) {
    using U = typename uint_of_size<sizeof(T)>::type;
    U* word = reinterpret_cast<U*>(p);
    U old_bits = __atomic_load_n(word, __ATOMIC_RELAXED);
    for (;;) {
        T old_value;
        std::memcpy(&old_value, &old_bits, sizeof(T));
        T new_value;
        if (!next(old_value, new_value)) {
            return;
        }
        U new_bits;
        std::memcpy(&new_bits, &new_value, sizeof(T));
        if (__atomic_compare_exchange_n(word, &old_bits, new_bits, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            return;
        }
    }
}

/// Atomically adds `v` to `*p` (float, half, bfloat16_t and integers of 1 to 8 bytes).
template <class T>
inline void atomic_add(T* p, T v) {
    if constexpr (std::is_integral<T>::value) {
        __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
    } else {
        atomic_update(p, [v](T old_value, T& sum) {
            sum = from_calc<T>(static_cast<calc_t<T>>(old_value) + static_cast<calc_t<T>>(v));
            return true;
        });
    }
}

/// ReLU on an element (identity for unsigned types).
template <class T>
inline T relu(T v) {
    if constexpr (std::is_unsigned<T>::value) {
        return v;
    } else {
        return static_cast<calc_t<T>>(v) > static_cast<calc_t<T>>(0) ? v : static_cast<T>(0);
    }
}

/// True when a tile of element `S` in memory `L` can be stored or moved as element `D`:
/// equal types, or the fixpipe conversions of an accumulator (f32 -> f32/f16/bf16,
/// i32 -> i32).
template <TileType L, class S, class D>
inline constexpr bool acc_convertible =
    std::is_same<S, D>::value ||
    (L == TileType::Acc && std::is_same<S, float>::value &&
     (std::is_same<D, half>::value || std::is_same<D, bfloat16_t>::value));

} // namespace sim

/// Loads a GM view into a tile (Vec or Mat); ND and DN views; ND/DN -> Nz/Zn for boxed tiles.
template <typename TileData, typename GlobalData>
PTO_INST RecordEvent TLOAD(TileData& dst, GlobalData& src) {
    static_assert(is_tile_data_v<TileData> && is_global_data_v<GlobalData>, "TLOAD(tile, global_tensor)");
    using T = typename TileData::DType;
    using G = typename GlobalData::RawDType;
    static_assert(TileData::Loc == TileType::Vec || TileData::Loc == TileType::Mat,
                  "TLOAD: only Vec and Mat tiles load from GM (docs/PTO_ISA.md)");
    static_assert(sizeof(T) == sizeof(G),
                  "TLOAD copies bits: the tile and the GlobalTensor need the same element size (convert with TCVT)");
    static_assert(GlobalData::layout == Layout::ND || GlobalData::layout == Layout::DN,
                  "TLOAD: only ND and DN GlobalTensors are supported (NZ and convolution layouts are not, see "
                  "docs/PTO_ISA.md)");
    if (sim::tracing()) {
        sim::trace_gm("TLOAD", dst, true, sim::vrows(dst), sim::vcols(dst),
                      static_cast<uint64_t>(sim::vrows(dst)) * sim::vcols(dst) * sizeof(T));
    }
    T* d = sim::tile_data(dst, "TLOAD");
    const sim::GmMap m = sim::map_gm(dst, src, "TLOAD");
    sim::check_view(src, "TLOAD");
    if constexpr (TileData::PadVal != PadValue::Null) {
        sim::fill_tile(dst, sim::pad_value<T>(TileData::PadVal));
    }
    using U = typename sim::uint_of_size<sizeof(T)>::type;
    U* du = reinterpret_cast<U*>(d);
    const U* su = reinterpret_cast<const U*>(src.data());
    struct Env {
        U* d;
        const U* s;
    } env{du, su};
    size_t calls = 0;
    const bool done = sim::for_each_gm_run(
        m, dst, calls,
        [](void* e, size_t toff, int64_t goff, size_t count) {
            Env* ev = static_cast<Env*>(e);
            std::memcpy(ev->d + toff, ev->s + goff, count * sizeof(U));
        },
        &env);
    if (!done) {
        sim::for_each_gm(m, [&](size_t r, size_t c, int64_t goff) { du[dst.ElementOffset(r, c)] = su[goff]; });
    }
    return {};
}

namespace sim {

/// The body of every TSTORE form.
template <AtomicType Atomic, ReluPreMode Relu, class TileT, class GT>
inline void store_tile(GT& dst, TileT& src) {
    using S = typename TileT::DType;
    using D = typename GT::RawDType;
    static_assert(TileT::Loc == TileType::Vec || TileT::Loc == TileType::Mat || TileT::Loc == TileType::Acc,
                  "TSTORE: only Vec, Mat and Acc tiles store to GM (docs/PTO_ISA.md)");
    static_assert(GT::layout == Layout::ND || GT::layout == Layout::DN,
                  "TSTORE: only ND and DN GlobalTensors are supported (NZ and convolution layouts are not, see "
                  "docs/PTO_ISA.md)");
    static_assert(acc_convertible<TileT::Loc, S, D> || (TileT::Loc != TileType::Acc && sizeof(S) == sizeof(D) &&
                                                        Atomic == AtomicType::AtomicNone && Relu == ReluPreMode::NoRelu),
                  "TSTORE: unsupported element types: Acc stores f32 -> f32/f16/bf16 and i32 -> i32; Vec and Mat "
                  "store bits to a GlobalTensor of the same element size (docs/PTO_ISA.md)");
    static_assert(Atomic == AtomicType::AtomicNone || is_float_like<D> || std::is_integral<D>::value,
                  "TSTORE<AtomicAdd>: the GlobalTensor must hold float, half, bfloat16_t or an integer type");
    if (tracing()) {
        trace_gm("TSTORE", src, false, vrows(src), vcols(src),
                 static_cast<uint64_t>(vrows(src)) * vcols(src) * sizeof(D));
    }
    const S* s = tile_data(src, "TSTORE");
    const GmMap m = map_gm(src, dst, "TSTORE");
    check_view(dst, "TSTORE");
    D* g = dst.data();
    const bool atomic = Atomic == AtomicType::AtomicAdd || tls_atomic_add;
    if constexpr (std::is_same<S, D>::value && Relu == ReluPreMode::NoRelu) {
        if (!atomic) {
            struct Env {
                D* g;
                const S* s;
            } env{g, s};
            size_t calls = 0;
            if (for_each_gm_run(
                    m, src, calls,
                    [](void* e, size_t toff, int64_t goff, size_t count) {
                        Env* ev = static_cast<Env*>(e);
                        std::memcpy(ev->g + goff, ev->s + toff, count * sizeof(D));
                    },
                    &env)) {
                return;
            }
        }
    }
    if constexpr (acc_convertible<TileT::Loc, S, D>) {
        for_each_gm(m, [&](size_t r, size_t c, int64_t goff) {
            S v = s[src.ElementOffset(r, c)];
            if constexpr (Relu == ReluPreMode::NormalRelu) v = relu(v);
            const D out = std::is_same<S, D>::value ? static_cast<D>(v) : convert<D>(v, RoundMode::CAST_RINT,
                                                                                     SaturationMode::OFF);
            if (atomic) {
                atomic_add(g + goff, out);
            } else {
                g[goff] = out;
            }
        });
    } else {
        if (atomic) {
            fatal("TSTORE: atomic accumulation (set_atomic_add) needs the tile and the GlobalTensor to have the "
                  "same element type, not " +
                  std::string(type_name<S>()) + " and " + type_name<D>());
        }
        for_each_gm(m, [&](size_t r, size_t c, int64_t goff) { std::memcpy(g + goff, s + src.ElementOffset(r, c), sizeof(D)); });
    }
}

} // namespace sim

/// Stores a tile (Vec, Mat, or Acc with f32 -> f32/f16/bf16 conversion) to a GM view.
template <typename TileData, typename GlobalData>
PTO_INST RecordEvent TSTORE(GlobalData& dst, TileData& src) {
    static_assert(is_tile_data_v<TileData> && is_global_data_v<GlobalData>, "TSTORE(global_tensor, tile)");
    sim::store_tile<AtomicType::AtomicNone, ReluPreMode::NoRelu>(dst, src);
    return {};
}

/// TSTORE with an atomic mode: `AtomicAdd` adds into GM atomically (safe across blocks).
template <typename TileData, typename GlobalData, AtomicType atomicType>
PTO_INST RecordEvent TSTORE(GlobalData& dst, TileData& src) {
    sim::store_tile<atomicType, ReluPreMode::NoRelu>(dst, src);
    return {};
}

/// TSTORE with an atomic mode and a ReLU pre-mode.
template <typename TileData, typename GlobalData, AtomicType atomicType, ReluPreMode reluPreMode>
PTO_INST RecordEvent TSTORE(GlobalData& dst, TileData& src) {
    sim::store_tile<atomicType, reluPreMode>(dst, src);
    return {};
}

/// TSTORE with a unit-flag phase (no effect on the CPU).
template <STPhase Phase, typename TileData, typename GlobalData>
PTO_INST RecordEvent TSTORE(GlobalData& dst, TileData& src) {
    sim::store_tile<AtomicType::AtomicNone, ReluPreMode::NoRelu>(dst, src);
    return {};
}

/// TSTORE with a unit-flag phase and an atomic mode.
template <STPhase Phase, typename TileData, typename GlobalData, AtomicType atomicType>
PTO_INST RecordEvent TSTORE(GlobalData& dst, TileData& src) {
    sim::store_tile<atomicType, ReluPreMode::NoRelu>(dst, src);
    return {};
}

/// TSTORE with a fixpipe quantisation scalar: not supported.
template <typename TileData, typename GlobalData>
PTO_INST RecordEvent TSTORE(GlobalData& dst, TileData& src, uint64_t preQuantScalar) {
    static_assert(sim::always_false<TileData>,
                  "TSTORE(dst, src, preQuantScalar): fixpipe quantisation is not supported (docs/PTO_ISA.md)");
    (void)dst, (void)src, (void)preQuantScalar;
    return {};
}

/// TSTORE_FP (fixpipe quantisation through a Scaling tile): not supported.
template <typename TileData, typename GlobalData, typename FpTileData>
PTO_INST RecordEvent TSTORE_FP(GlobalData& dst, TileData& src, FpTileData& fp) {
    static_assert(sim::always_false<TileData>, "TSTORE_FP: fixpipe quantisation is not supported (docs/PTO_ISA.md)");
    (void)dst, (void)src, (void)fp;
    return {};
}

/// Prefetch hint (GM -> cache): no effect on the CPU.
template <typename TileData, typename GlobalData>
PTO_INST RecordEvent TPREFETCH(TileData& dst, GlobalData& src) {
    static_assert(is_global_data_v<GlobalData>, "TPREFETCH(tile, global_tensor)");
    (void)dst, (void)src;
    return {};
}

} // namespace pto
