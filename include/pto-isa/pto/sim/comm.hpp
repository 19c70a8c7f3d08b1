// pto/sim/comm.hpp: the distributed instructions of pto::comm — TPUT / TGET (GM -> GM through a
// staging tile), TNOTIFY (set or add a 32-bit signal), TWAIT (block until signals compare true),
// TTEST (the same comparison, once), the root-side collectives TBROADCAST / TREDUCE over a
// ParallelGroup — plus the Signal and group types they take.
//
// On an L3 run every chip is a process and a comm domain's windows are one shared mapping
// (include/pto/pto_comm_sim.h, docs/L3.md). A kernel computes a peer's address itself, as on the
// device: `local + (windowsIn[peer] - windowsIn[rankId])` of its CommContext. Plain loads,
// stores and atomics on that address reach the peer, so these instructions are element copies
// and atomics on the views the kernel passes. The runtime adds the domain's windows to the GM
// ranges of every subtask, so a view over any window passes the same bounds check as TLOAD /
// TSTORE, and a view outside every window and tensor is a fault naming its bytes.
//
// Ordering: TNOTIFY is a release (the data a kernel wrote before it, TPUT's included, is
// visible to whoever sees the signal), TWAIT and TTEST are acquires. TWAIT blocks with the
// pipes' backoff, publishes the signal in ctx->waiting_on and gives up when the run stops, so a
// signal that never arrives ends in the scheduler timeout naming the kernel and the signal.
#pragma once

#include "pto/sim/memory.hpp"

namespace pto {
namespace comm {

/// One 32-bit signal: a 1-element int32 GlobalTensor (`comm::Signal sig(ptr)`).
using Signal = GlobalTensor<int32_t, Shape<1, 1, 1, 1, 1>, Stride<1, 1, 1, 1, 1>, Layout::ND>;

/// Any GlobalTensor used as a signal (an alias, for kernels that spell it this way).
template <typename Element_, typename Shape_, typename Stride_, Layout Layout_ = Layout::ND>
using GlobalSignal = GlobalTensor<Element_, Shape_, Stride_, Layout_>;

/// A `Rows x Cols` grid of signals; the row stride is `Cols` (dense) or given.
template <int Rows, int Cols>
struct Signal2D : public GlobalTensor<int32_t, Shape<1, 1, 1, Rows, Cols>, Stride<1, 1, 1, DYNAMIC, 1>, Layout::ND> {
    /// The GlobalTensor this is.
    using Base = GlobalTensor<int32_t, Shape<1, 1, 1, Rows, Cols>, Stride<1, 1, 1, DYNAMIC, 1>, Layout::ND>;
    /// A dense grid at `ptr`.
    Signal2D(int32_t* ptr) : Base(ptr, typename Base::Shape(), typename Base::Stride(Cols)) {}
    /// A grid at `ptr` whose rows are `row_stride` signals apart (a view into a wider grid).
    Signal2D(int32_t* ptr, int row_stride)
        : Base(ptr, typename Base::Shape(), typename Base::Stride(row_stride)) {}
};

/// The operator of TREDUCE.
enum class ReduceOp : uint8_t { Sum = 0, Max = 1, Min = 2 };

/// The GlobalTensors of a collective, one per rank of the group (usually views of each rank's
/// window as seen from this rank), and the index of the root within them.
template <typename GlobalData>
struct ParallelGroup {
    using value_type = GlobalData; ///< the views' type
    GlobalData* tensors = nullptr; ///< `nranks` views (an array the caller owns)
    int nranks = 0;                ///< ranks in the group
    int rootIdx = -1;              ///< the root's index in `tensors` (the caller, for TBROADCAST / TREDUCE)

    /// An empty group.
    constexpr ParallelGroup() = default;
    /// A group over `tensorArray[0 .. size)` rooted at `root`.
    constexpr ParallelGroup(GlobalData* tensorArray, int size, int root)
        : tensors(tensorArray), nranks(size), rootIdx(root) {}
    /// Same as the constructor.
    static constexpr ParallelGroup Create(GlobalData* tensorArray, int size, int root) {
        return ParallelGroup(tensorArray, size, root);
    }
    /// The root's index.
    constexpr int GetRootIdx() const { return rootIdx; }
    /// Ranks in the group.
    constexpr int GetSize() const { return nranks; }
    /// True for a group of no ranks.
    constexpr bool empty() const { return nranks == 0; }
    /// Rank `r`'s view; an index outside the group is a fault.
    GlobalData& operator[](int r) {
        if (r < 0 || r >= nranks || tensors == nullptr) {
            sim::fatal("pto::comm::ParallelGroup: rank " + std::to_string(r) + " outside a group of " +
                       std::to_string(nranks));
        }
        return tensors[r];
    }
};

/// True for ParallelGroup types.
template <class T>
struct is_parallel_group : std::false_type {};
/// True for ParallelGroup types.
template <class G>
struct is_parallel_group<ParallelGroup<G>> : std::true_type {};

/// True for Signal2D types.
template <class T>
struct is_signal2d : std::false_type {};
/// True for Signal2D types.
template <int R, int C>
struct is_signal2d<Signal2D<R, C>> : std::true_type {};

} // namespace comm

namespace sim {

/// True for the views pto::comm takes: GlobalTensors and the Signal2D grids derived from them.
template <class T>
inline constexpr bool is_comm_view_v = is_global_data_v<T> || comm::is_signal2d<std::remove_cv_t<T>>::value;

/// Name of a WaitCmp, as an operator.
constexpr const char* wait_cmp_name(comm::WaitCmp cmp) {
    switch (cmp) {
    case comm::WaitCmp::EQ: return "==";
    case comm::WaitCmp::NE: return "!=";
    case comm::WaitCmp::GT: return ">";
    case comm::WaitCmp::GE: return ">=";
    case comm::WaitCmp::LT: return "<";
    case comm::WaitCmp::LE: return "<=";
    default: return "?";
    }
}

/// `v cmp value`; an unknown comparison is a fault.
inline bool wait_cmp_holds(int32_t v, int32_t value, comm::WaitCmp cmp, const char* op) {
    switch (cmp) {
    case comm::WaitCmp::EQ: return v == value;
    case comm::WaitCmp::NE: return v != value;
    case comm::WaitCmp::GT: return v > value;
    case comm::WaitCmp::GE: return v >= value;
    case comm::WaitCmp::LT: return v < value;
    case comm::WaitCmp::LE: return v <= value;
    default: break;
    }
    fatal(std::string(op) + ": unknown WaitCmp " + std::to_string(static_cast<int>(cmp)));
}

/// Calls `f(element_offset)` for every element of `g` (five nested loops, innermost last).
template <class GT, class F>
inline void for_each_element(const GT& g, F&& f) {
    int64_t n[5], s[5];
    for (int d = 0; d < 5; ++d) {
        n[d] = g.GetShape(d);
        s[d] = g.GetStride(d);
    }
    for (int64_t i0 = 0; i0 < n[0]; ++i0)
        for (int64_t i1 = 0; i1 < n[1]; ++i1)
            for (int64_t i2 = 0; i2 < n[2]; ++i2)
                for (int64_t i3 = 0; i3 < n[3]; ++i3)
                    for (int64_t i4 = 0; i4 < n[4]; ++i4)
                        f(i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3] + i4 * s[4]);
}

/// Checks a signal view: int32 elements, a non-null pointer, 4-byte aligned, inside GM.
template <class GS>
inline void check_signal(const GS& sig, const char* op) {
    static_assert(is_comm_view_v<GS>, "pto::comm signal operands are GlobalTensors (comm::Signal, comm::Signal2D)");
    static_assert(std::is_same<typename GS::RawDType, int32_t>::value,
                  "pto::comm signals are int32_t GlobalTensors (docs/PTO_ISA.md)");
    for (int d = 0; d < 5; ++d) {
        if (sig.GetShape(d) < 0) fatal(std::string(op) + ": signal " + gt_name(sig) + " has a negative extent");
    }
    if ((reinterpret_cast<uintptr_t>(sig.data()) & 3u) != 0) {
        fatal(std::string(op) + ": signal " + gt_name(sig) + " is not 4-byte aligned");
    }
    check_view(sig, op);
}

/// True when every signal of `sig` compares true (acquire loads).
template <class GS>
inline bool signals_hold(const GS& sig, int32_t value, comm::WaitCmp cmp, const char* op) {
    bool all = true;
    int32_t* base = sig.data();
    for_each_element(sig, [&](int64_t off) {
        if (all && !wait_cmp_holds(__atomic_load_n(base + off, __ATOMIC_ACQUIRE), value, cmp, op)) all = false;
    });
    return all;
}

/// This thread's text for ctx->waiting_on while it blocks in TWAIT (outlives the wait; the
/// last byte is never written, so a reader always finds a terminator).
inline thread_local char tls_twait_text[256] __attribute__((visibility("hidden"))) = {};

/// TPUT / TGET: copies `src` to `dst` through `staging`, in chunks of at most the tile's rows
/// and columns (the two innermost dimensions; outer dimensions are iterated), optionally
/// adding into `dst` atomically.
template <class GD, class GSrc, class TileT>
inline void copy_through_tile(GD& dst, GSrc& src, TileT& staging, AtomicType atomic, const char* op) {
    static_assert(is_comm_view_v<GD> && is_comm_view_v<GSrc>, "pto::comm TPUT / TGET move between GlobalTensors");
    static_assert(is_tile_data_v<TileT>, "pto::comm TPUT / TGET stage through a Tile");
    using T = typename GSrc::RawDType;
    static_assert(std::is_same<T, typename GD::RawDType>::value,
                  "pto::comm TPUT / TGET: source and destination element types differ");
    static_assert(std::is_same<T, std::remove_cv_t<typename TileT::DType>>::value,
                  "pto::comm TPUT / TGET: the staging tile's element type differs from the GlobalTensors'");
    static_assert(GSrc::layout == GD::layout, "pto::comm TPUT / TGET: source and destination layouts differ");
    static_assert(TileT::Loc == TileType::Vec, "pto::comm TPUT / TGET stage through a Vec (UB) tile");
    int64_t n[5];
    for (int d = 0; d < 5; ++d) {
        n[d] = src.GetShape(d);
        if (n[d] < 0) fatal(std::string(op) + ": " + gt_name(src) + " has a negative extent");
        if (dst.GetShape(d) != n[d]) {
            fatal(std::string(op) + ": the destination " + gt_name(dst) + " and the source " + gt_name(src) +
                  " have different shapes");
        }
    }
    if (atomic != AtomicType::AtomicNone && atomic != AtomicType::AtomicAdd) {
        fatal(std::string(op) + ": unknown AtomicType " + std::to_string(static_cast<int>(atomic)));
    }
    if (src.data() == nullptr) fatal(std::string(op) + ": the source " + gt_name(src) + " has a null data pointer");
    if (dst.data() == nullptr) fatal(std::string(op) + ": the destination " + gt_name(dst) + " has a null data pointer");
    check_view(src, op);
    check_view(dst, op);
    T* buf = tile_data(staging, op);
    const int64_t chunk_rows = TileT::Rows, chunk_cols = TileT::Cols;
    const T* s = src.data();
    T* dd = dst.data();
    for (int64_t i0 = 0; i0 < n[0]; ++i0)
        for (int64_t i1 = 0; i1 < n[1]; ++i1)
            for (int64_t i2 = 0; i2 < n[2]; ++i2) {
                const int64_t so = i0 * src.GetStride(0) + i1 * src.GetStride(1) + i2 * src.GetStride(2);
                const int64_t d0 = i0 * dst.GetStride(0) + i1 * dst.GetStride(1) + i2 * dst.GetStride(2);
                for (int64_t r0 = 0; r0 < n[3]; r0 += chunk_rows)
                    for (int64_t c0 = 0; c0 < n[4]; c0 += chunk_cols) {
                        const int64_t rows = std::min(chunk_rows, n[3] - r0);
                        const int64_t cols = std::min(chunk_cols, n[4] - c0);
                        // GM -> staging tile (its physical layout, as TLOAD would place it).
                        for (int64_t r = 0; r < rows; ++r)
                            for (int64_t c = 0; c < cols; ++c)
                                buf[staging.ElementOffset(r, c)] =
                                    s[so + (r0 + r) * src.GetStride(3) + (c0 + c) * src.GetStride(4)];
                        // Staging tile -> GM.
                        for (int64_t r = 0; r < rows; ++r)
                            for (int64_t c = 0; c < cols; ++c) {
                                T* p = dd + d0 + (r0 + r) * dst.GetStride(3) + (c0 + c) * dst.GetStride(4);
                                const T v = buf[staging.ElementOffset(r, c)];
                                if (atomic == AtomicType::AtomicAdd) {
                                    atomic_add(p, v);
                                } else {
                                    *p = v;
                                }
                            }
                    }
            }
}

/// Checks a collective's group: a non-empty array, the root inside it.
template <class Group>
inline void check_group(Group& g, const char* op) {
    static_assert(comm::is_parallel_group<std::remove_cv_t<Group>>::value,
                  "pto::comm collectives take a comm::ParallelGroup");
    if (g.tensors == nullptr || g.nranks <= 0) {
        fatal(std::string(op) + ": the ParallelGroup has no tensors (" + std::to_string(g.nranks) + " ranks)");
    }
    if (g.rootIdx < 0 || g.rootIdx >= g.nranks) {
        fatal(std::string(op) + ": the ParallelGroup's root " + std::to_string(g.rootIdx) + " is outside its " +
              std::to_string(g.nranks) + " ranks");
    }
}

/// `a op b` in the element type (16-bit floats through float, as a vector unit rounds).
template <class T>
inline T reduce2(T a, T b, comm::ReduceOp op) {
    if constexpr (std::is_integral<T>::value || std::is_same<T, float>::value || std::is_same<T, double>::value) {
        switch (op) {
        case comm::ReduceOp::Sum: return static_cast<T>(a + b);
        case comm::ReduceOp::Max: return a < b ? b : a;
        default: return b < a ? b : a;
        }
    } else {
        const float x = static_cast<float>(a), y = static_cast<float>(b);
        switch (op) {
        case comm::ReduceOp::Sum: return T(x + y);
        case comm::ReduceOp::Max: return x < y ? b : a;
        default: return y < x ? b : a;
        }
    }
}

/// TREDUCE: `dst` = the element-wise `op` over every view of `g`, chunk by chunk through the
/// accumulator and receive tiles.
template <class Group, class GD, class TileT>
inline void reduce_group(Group& g, GD& dst, TileT& acc, TileT& recv, comm::ReduceOp op, const char* name) {
    check_group(g, name);
    using GS = typename std::remove_cv_t<Group>::value_type;
    using T = typename GD::RawDType;
    static_assert(std::is_same<typename GS::RawDType, T>::value,
                  "pto::comm::TREDUCE: the group's element type differs from the destination's");
    static_assert(std::is_same<std::remove_cv_t<typename TileT::DType>, T>::value,
                  "pto::comm::TREDUCE: the tiles' element type differs from the destination's");
    static_assert(TileT::Loc == TileType::Vec, "pto::comm::TREDUCE stages through Vec (UB) tiles");
    if (op != comm::ReduceOp::Sum && op != comm::ReduceOp::Max && op != comm::ReduceOp::Min) {
        fatal(std::string(name) + ": unknown ReduceOp " + std::to_string(static_cast<int>(op)));
    }
    int64_t n[5];
    for (int d = 0; d < 5; ++d) {
        n[d] = dst.GetShape(d);
        if (n[d] < 0) fatal(std::string(name) + ": " + gt_name(dst) + " has a negative extent");
    }
    check_view(dst, name);
    for (int r = 0; r < g.nranks; ++r) {
        for (int d = 0; d < 5; ++d) {
            if (g.tensors[r].GetShape(d) != n[d]) {
                fatal(std::string(name) + ": rank " + std::to_string(r) + "'s " + gt_name(g.tensors[r]) +
                      " and the destination " + gt_name(dst) + " have different shapes");
            }
        }
        check_view(g.tensors[r], name);
    }
    T* a = tile_data(acc, name);
    T* b = tile_data(recv, name);
    const int64_t chunk_rows = TileT::Rows, chunk_cols = TileT::Cols;
    auto offset = [](const auto& v, int64_t i0, int64_t i1, int64_t i2, int64_t r, int64_t c) {
        return i0 * v.GetStride(0) + i1 * v.GetStride(1) + i2 * v.GetStride(2) + r * v.GetStride(3) +
               c * v.GetStride(4);
    };
    for (int64_t i0 = 0; i0 < n[0]; ++i0)
        for (int64_t i1 = 0; i1 < n[1]; ++i1)
            for (int64_t i2 = 0; i2 < n[2]; ++i2)
                for (int64_t r0 = 0; r0 < n[3]; r0 += chunk_rows)
                    for (int64_t c0 = 0; c0 < n[4]; c0 += chunk_cols) {
                        const int64_t rows = std::min(chunk_rows, n[3] - r0);
                        const int64_t cols = std::min(chunk_cols, n[4] - c0);
                        for (int rank = 0; rank < g.nranks; ++rank) {
                            const GS& v = g.tensors[rank];
                            T* into = rank == 0 ? a : b;
                            for (int64_t r = 0; r < rows; ++r)
                                for (int64_t c = 0; c < cols; ++c)
                                    into[acc.ElementOffset(r, c)] = v.data()[offset(v, i0, i1, i2, r0 + r, c0 + c)];
                            if (rank == 0) continue;
                            for (int64_t r = 0; r < rows; ++r)
                                for (int64_t c = 0; c < cols; ++c) {
                                    const size_t k = acc.ElementOffset(r, c);
                                    a[k] = reduce2(a[k], b[k], op);
                                }
                        }
                        for (int64_t r = 0; r < rows; ++r)
                            for (int64_t c = 0; c < cols; ++c)
                                dst.data()[offset(dst, i0, i1, i2, r0 + r, c0 + c)] = a[acc.ElementOffset(r, c)];
                    }
}

} // namespace sim

namespace comm {

/// Broadcast from the root (the caller): every view of `g` = `src`, staged through `staging`
/// (the root's own view too, unless it is `src` itself).
template <typename ParallelGroupType, typename GlobalSrcData, typename TileData, typename... WaitEvents,
          std::enable_if_t<is_tile_data_v<TileData>, int> = 0>
PTO_INST RecordEvent TBROADCAST(ParallelGroupType& g, GlobalSrcData& src, TileData& staging, WaitEvents&... events) {
    ((void)events, ...);
    const char* name = "pto::comm::TBROADCAST";
    sim::check_group(g, name);
    for (int r = 0; r < g.nranks; ++r) {
        if (g.tensors[r].data() != src.data()) sim::copy_through_tile(g.tensors[r], src, staging, AtomicType::AtomicNone, name);
    }
    return {};
}

/// TBROADCAST with two staging tiles (ping-pong on the device; one tile here).
template <typename ParallelGroupType, typename GlobalSrcData, typename TileData, typename... WaitEvents,
          std::enable_if_t<is_tile_data_v<TileData>, int> = 0>
PTO_INST RecordEvent TBROADCAST(ParallelGroupType& g, GlobalSrcData& src, TileData& ping, TileData& pong,
                                WaitEvents&... events) {
    (void)sim::tile_data(pong, "pto::comm::TBROADCAST");
    return TBROADCAST(g, src, ping, events...);
}

/// Reduction at the root (the caller): `dst` = `op` over every view of `g`, element-wise,
/// through the accumulator and receive tiles.
template <typename ParallelGroupType, typename GlobalDstData, typename TileData, typename... WaitEvents,
          std::enable_if_t<is_tile_data_v<TileData>, int> = 0>
PTO_INST RecordEvent TREDUCE(ParallelGroupType& g, GlobalDstData& dst, TileData& acc, TileData& recv, ReduceOp op,
                             WaitEvents&... events) {
    ((void)events, ...);
    sim::reduce_group(g, dst, acc, recv, op, "pto::comm::TREDUCE");
    return {};
}

/// TREDUCE with ping-pong receive tiles (one receive tile here).
template <typename ParallelGroupType, typename GlobalDstData, typename TileData, typename... WaitEvents,
          std::enable_if_t<is_tile_data_v<TileData>, int> = 0>
PTO_INST RecordEvent TREDUCE(ParallelGroupType& g, GlobalDstData& dst, TileData& acc, TileData& ping, TileData& pong,
                             ReduceOp op, WaitEvents&... events) {
    ((void)events, ...);
    (void)sim::tile_data(pong, "pto::comm::TREDUCE");
    sim::reduce_group(g, dst, acc, ping, op, "pto::comm::TREDUCE");
    return {};
}

/// Remote write: `dst` (usually a peer's window) = `src`, staged through `staging` (a UB tile)
/// in chunks of its size; `atomicType` AtomicAdd adds into `dst` instead.
template <AtomicType atomicType = AtomicType::AtomicNone, typename GlobalDstData, typename GlobalSrcData,
          typename TileData, typename... WaitEvents,
          std::enable_if_t<is_tile_data_v<TileData>, int> = 0>
PTO_INST RecordEvent TPUT(GlobalDstData& dst, GlobalSrcData& src, TileData& staging, WaitEvents&... events) {
    ((void)events, ...);
    sim::copy_through_tile(dst, src, staging, atomicType, "pto::comm::TPUT");
    return {};
}

/// TPUT with two staging tiles (ping-pong on the device; one copy here).
template <AtomicType atomicType = AtomicType::AtomicNone, typename GlobalDstData, typename GlobalSrcData,
          typename TileData, typename... WaitEvents,
          std::enable_if_t<is_tile_data_v<TileData>, int> = 0>
PTO_INST RecordEvent TPUT(GlobalDstData& dst, GlobalSrcData& src, TileData& ping, TileData& pong,
                          WaitEvents&... events) {
    ((void)events, ...);
    (void)sim::tile_data(pong, "pto::comm::TPUT");
    sim::copy_through_tile(dst, src, ping, atomicType, "pto::comm::TPUT");
    return {};
}

/// TPUT with the atomic type chosen at run time.
template <typename GlobalDstData, typename GlobalSrcData, typename TileData, typename... WaitEvents,
          std::enable_if_t<is_tile_data_v<TileData>, int> = 0>
PTO_INST RecordEvent TPUT(GlobalDstData& dst, GlobalSrcData& src, TileData& staging, AtomicType atomicType,
                          WaitEvents&... events) {
    ((void)events, ...);
    sim::copy_through_tile(dst, src, staging, atomicType, "pto::comm::TPUT");
    return {};
}

/// Remote read: `dst` (local) = `src` (usually a peer's window), staged through `staging`.
template <typename GlobalDstData, typename GlobalSrcData, typename TileData, typename... WaitEvents,
          std::enable_if_t<is_tile_data_v<TileData>, int> = 0>
PTO_INST RecordEvent TGET(GlobalDstData& dst, GlobalSrcData& src, TileData& staging, WaitEvents&... events) {
    ((void)events, ...);
    sim::copy_through_tile(dst, src, staging, AtomicType::AtomicNone, "pto::comm::TGET");
    return {};
}

/// TGET with two staging tiles (ping-pong on the device; one copy here).
template <typename GlobalDstData, typename GlobalSrcData, typename TileData, typename... WaitEvents,
          std::enable_if_t<is_tile_data_v<TileData>, int> = 0>
PTO_INST RecordEvent TGET(GlobalDstData& dst, GlobalSrcData& src, TileData& ping, TileData& pong,
                          WaitEvents&... events) {
    ((void)events, ...);
    (void)sim::tile_data(pong, "pto::comm::TGET");
    sim::copy_through_tile(dst, src, ping, AtomicType::AtomicNone, "pto::comm::TGET");
    return {};
}

/// Sets (`NotifyOp::Set`) or atomically adds `value` to (`NotifyOp::AtomicAdd`) every signal of
/// `signal` (usually a peer's), with release ordering: everything this kernel wrote before is
/// visible to a TWAIT / TTEST that sees the new value.
template <typename GlobalSignalData, typename... WaitEvents>
PTO_INST void TNOTIFY(GlobalSignalData& signal, int32_t value, NotifyOp op, WaitEvents&... events) {
    ((void)events, ...);
    const char* name = "pto::comm::TNOTIFY";
    sim::check_signal(signal, name);
    if (op != NotifyOp::Set && op != NotifyOp::AtomicAdd) {
        sim::fatal(std::string(name) + ": unknown NotifyOp " + std::to_string(static_cast<int>(op)));
    }
    int32_t* base = signal.data();
    sim::for_each_element(signal, [&](int64_t off) {
        if (op == NotifyOp::Set) {
            __atomic_store_n(base + off, value, __ATOMIC_RELEASE);
        } else {
            __atomic_fetch_add(base + off, value, __ATOMIC_RELEASE);
        }
    });
}

/// True when every signal of `signal` satisfies `signal cmp value` now (acquire; never blocks).
template <typename GlobalSignalData, typename... WaitEvents>
PTO_INST bool TTEST(GlobalSignalData& signal, int32_t value, WaitCmp cmp, WaitEvents&... events) {
    ((void)events, ...);
    sim::check_signal(signal, "pto::comm::TTEST");
    return sim::signals_hold(signal, value, cmp, "pto::comm::TTEST");
}

/// Blocks until every signal of `signal` satisfies `signal cmp value` (acquire). While it
/// blocks, the core reports the signal in the scheduler's timeout message; when the run stops
/// (a timeout, another core's fault) the kernel unwinds.
template <typename GlobalSignalData, typename... WaitEvents>
PTO_INST void TWAIT(GlobalSignalData& signal, int32_t value, WaitCmp cmp, WaitEvents&... events) {
    ((void)events, ...);
    const char* name = "pto::comm::TWAIT";
    sim::check_signal(signal, name);
    if (sim::signals_hold(signal, value, cmp, name)) {
        return;
    }
    char* text = sim::tls_twait_text;
    sim::set_waiting(nullptr);
    const std::string what = std::string(name) + " on signal " + sim::gt_name(signal) + " until every value " +
                             sim::wait_cmp_name(cmp) + " " + std::to_string(value) + " (first value " +
                             std::to_string(__atomic_load_n(signal.data(), __ATOMIC_ACQUIRE)) + " when it began)";
    std::snprintf(text, sizeof sim::tls_twait_text - 1, "%s", what.c_str());
    sim::set_waiting(text);
    sim::Backoff b;
    while (!sim::signals_hold(signal, value, cmp, name)) {
        if (sim::stop_requested()) {
            sim::set_waiting(nullptr);
            throw sim::StopUnwind{};
        }
        b.pause();
    }
    sim::set_waiting(nullptr);
}

} // namespace comm
} // namespace pto
