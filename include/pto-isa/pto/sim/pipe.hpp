// pto/sim/pipe.hpp: cross-core FIFOs: TPipe, TPUSH, TPOP, TFREE.
//
// The device moves tiles between the cube core (AIC) and the two vector cores (AIV0, AIV1) of a
// cluster through a ring of `SlotNum` slots of `SlotSize` bytes. Here the ring lives in storage
// the runtime shares between the cluster's cores for the whole run (`ctx->cluster_storage`,
// keyed like PTO-ISA: FlagID<<56 | DirType<<48 | SlotNum<<40 | LocalSlotNum<<32 | SlotSize),
// so a pipe's state survives from one task to the next on the same cluster.
//
// A slot holds one logical matrix, row-major, with its element type and extent:
//
//   * C2V (cube -> vector): the AIC pushes an Acc (or Mat) tile; its valid region is copied
//     into the slot. Each consuming AIV lane pops its window into a Vec tile: TILE_NO_SPLIT the
//     whole tile, TILE_UP_DOWN / TILE_LEFT_RIGHT the upper/lower (left/right) half: lane 1's
//     band starts after as many rows (columns) as its own tile's valid extent, one more for
//     the _ODD variants. A split slot (and a TILE_NO_SPLIT slot of an IsNoSplit pipe, which is
//     broadcast to every lane) is freed after every lane of the task has TFREEd it; a plain
//     TILE_NO_SPLIT slot is consumed by AIV0 alone (AIV1's TPOP yields a zero tile).
//   * V2C (vector -> cube): each AIV lane pushes a Vec tile into its band of the slot (split
//     modes; TILE_NO_SPLIT: AIV0 only, AIV1's push is dropped); the slot becomes visible once
//     every lane of the task has pushed; the AIC pops the whole matrix into a Mat tile, in any
//     layout (ND -> Nz conversion included).
//   * DIR_BOTH: both directions share the ring; the direction of an operation follows from
//     the tile (Acc/Mat produce C2V and Mat consumes V2C; Vec produces V2C and consumes C2V),
//     of TFREE from the core type.
//
// Consumers see slots in push order. A producer waits while all slots are busy (back-pressure),
// a consumer while its next slot is not complete. TPOP binds the consumer tile to the consumer
// buffer given to the TPipe constructor (UB for C2V, L1 for V2C), rotating over LocalSlotNum
// tile-sized entries, as the device does. Blocking waits publish what they wait for in
// `ctx->waiting_on` and give up when the run stops. The GM buffer passed to the constructor is
// not used.
#pragma once

#include "pto/sim/matmul.hpp"

namespace pto {

/// The static parameters of a pipe's ring (PTO-ISA's RingFIFO).
template <int SlotSize, int SlotNum, int LocalSlotNum>
struct RingFIFO {
    __gm__ void* GM_SLOT_BUFFER = nullptr; ///< GM ring (unused on the CPU)
    uint32_t C2V_CONSUMER_BUF = 0;         ///< UB offset of the vector consumer's buffer
    uint32_t V2C_CONSUMER_BUF = 0;         ///< L1 offset of the cube consumer's buffer
    static constexpr uint32_t SLOT_SIZE = SlotSize;          ///< bytes per slot
    static constexpr uint32_t SLOT_NUM = SlotNum;            ///< slots
    static constexpr uint32_t LOCAL_SLOT_NUM = LocalSlotNum; ///< consumer-buffer entries

    /// The three buffers.
    RingFIFO(__gm__ void* gm, uint32_t c2v, uint32_t v2c) : GM_SLOT_BUFFER(gm), C2V_CONSUMER_BUF(c2v), V2C_CONSUMER_BUF(v2c) {}
};

namespace sim {

/// Direction of one transfer.
enum PipeDir : int { kC2V = 0, kV2C = 1 };

/// State of a slot.
enum SlotState : uint8_t { kFree = 0, kFilling = 1, kReady = 2 };

/// Bookkeeping of one slot.
struct SlotMeta {
    uint64_t seq;         ///< push order within its direction
    uint32_t rows, cols;  ///< extent of the stored matrix
    uint16_t dtype;       ///< type_code of the elements
    uint16_t esize;       ///< element bytes
    uint8_t state;        ///< SlotState
    uint8_t dir;          ///< PipeDir
    uint8_t producers;    ///< producer lanes that must push (V2C split: the task's AIV lanes)
    uint8_t pushed;       ///< mask of producer lanes that pushed
    uint8_t consumers;    ///< consumer lanes that must free (set by the first TPOP)
    uint8_t claimed;      ///< mask of consumer lanes that popped
    uint8_t freed;        ///< consumer lanes that freed
    uint8_t pad;          ///< unused
};

/// Shared state of one pipe: lives in cluster storage, built once by the first core.
template <uint32_t SlotSize, uint32_t SlotNum>
struct PipeState {
    SpinLock mu;                    ///< guards everything below
    uint64_t next_seq[2];           ///< next push sequence per direction
    uint32_t cursor;                ///< where the next slot search starts
    SlotMeta meta[SlotNum];         ///< slots
    uint8_t popped[2][2][SlotNum];  ///< per direction and lane: popped, not yet freed (FIFO)
    uint32_t npopped[2][2];         ///< entries in `popped`
    char wait_text[4][192];         ///< texts for ctx->waiting_on: push C2V/V2C, pop C2V/V2C
    alignas(64) uint8_t data[SlotNum][SlotSize]; ///< slot payloads
};

/// The storage block handed out by the runtime: an init word, then the state.
template <uint32_t SlotSize, uint32_t SlotNum>
struct PipeStorage {
    uint32_t init;                                                 ///< 0 new, 1 building, 2 ready
    alignas(64) unsigned char payload[sizeof(PipeState<SlotSize, SlotNum>)]; ///< the PipeState
};

/// Name of a direction mask.
inline const char* dir_type_name(uint8_t dir) {
    switch (dir & 7) {
    case DIR_C2V: return "DIR_C2V";
    case DIR_V2C: return "DIR_V2C";
    case DIR_BOTH: return "DIR_BOTH";
    default: return "DIR_?";
    }
}

} // namespace sim

/// A cross-core FIFO handle: `TPipe<FlagID, DirType, SlotSize, SlotNum, LocalSlotNum,
/// IsNoSplit, EnUnitFlag>(gm_slot_buffer, c2v_consumer_buf, v2c_consumer_buf)`.
template <uint8_t FlagID, uint8_t DirType, uint32_t SlotSize, uint32_t SlotNum, uint32_t LocalSlotNum = 2,
          bool IsNoSplit = false, bool EnUnitFlag = false>
struct TPipe {
    static constexpr uint8_t DIR_TYPE = DirType & 7;                          ///< direction mask
    static constexpr bool is_c2v = (DIR_TYPE & DIR_C2V) == DIR_C2V;            ///< carries cube -> vector
    static constexpr bool is_v2c = (DIR_TYPE & DIR_V2C) == DIR_V2C;            ///< carries vector -> cube
    static constexpr bool is_both = is_c2v && is_v2c;                          ///< both directions
    static constexpr bool is_no_split = IsNoSplit;                             ///< NO_SPLIT broadcasts
    using RingFiFo = RingFIFO<SlotSize, SlotNum, LocalSlotNum>;                ///< ring parameters
    /// Bytes of one slot's payload. SlotSize is what one consumer buffer holds: a cube -> vector
    /// slot carries a copy per AIV lane (a split tile's two halves, each up to SlotSize), so it
    /// is twice SlotSize on pipes that carry that direction, as in PTO-ISA.
    static constexpr uint32_t kSlotBytes = SlotSize * (is_c2v ? 2u : 1u);
    using State = sim::PipeState<kSlotBytes, SlotNum>;                         ///< shared state
    using Storage = sim::PipeStorage<kSlotBytes, SlotNum>;                     ///< storage block
    /// The cluster-storage key.
    static constexpr uint64_t kKey = (static_cast<uint64_t>(FlagID) << 56) | (static_cast<uint64_t>(DirType) << 48) |
                                     (static_cast<uint64_t>(SlotNum) << 40) |
                                     (static_cast<uint64_t>(LocalSlotNum) << 32) | static_cast<uint64_t>(SlotSize);

    static_assert(SlotNum >= 1 && SlotNum <= 64, "TPipe: SlotNum must be in [1, 64]");
    static_assert(SlotSize >= 1, "TPipe: SlotSize must be positive");
    static_assert(LocalSlotNum >= 1, "TPipe: LocalSlotNum must be positive");
    static_assert((DirType & DIR_V2C_CTRL) == 0, "TPipe: DIR_V2C_CTRL (control pipes) is not supported (docs/PTO_ISA.md)");
    static_assert(is_c2v || is_v2c, "TPipe: DirType must be DIR_C2V, DIR_V2C or DIR_BOTH");

    /// The producer / consumer endpoint of a handle. Device kernels set an entry offset (the
    /// byte offset of their AIV lane's part of a slot) where the hardware's sub-block register
    /// reads 0 under some MIX dispatchers; here the lane comes from the task's sub-block id, so
    /// the offset is recorded and does not move the data (as in PTO-ISA's CPU simulation).
    struct Endpoint {
        int entryOffset = 0; ///< the last offset set
        /// Records the lane's entry offset (bytes); TPUSH / TPOP place lanes by sub-block id.
        void setEntryOffset(int offset) { entryOffset = offset; }
        /// PTO-ISA's consumer spells it this way too.
        void setentryOffset(int offset) { entryOffset = offset; }
        /// The last offset set.
        int getEntryOffset() const { return entryOffset; }
    };

    RingFiFo fifo;          ///< the buffers given to the constructor
    uint32_t pops = 0;      ///< TPOPs through this handle (consumer-buffer rotation)
    State* state = nullptr; ///< the cluster's shared state
    Endpoint prod;          ///< producer endpoint (`pipe.prod.setEntryOffset(n)`)
    Endpoint cons;          ///< consumer endpoint (`pipe.cons.setEntryOffset(n)`)

    /// A handle on the cluster's pipe; the GM buffer is unused on the CPU.
    TPipe(__gm__ void* gmSlotBuffer, uint32_t c2vConsumerBuf, uint32_t v2cConsumerBuf)
        : fifo(gmSlotBuffer, c2vConsumerBuf, v2cConsumerBuf), state(acquire()) {}

    /// Short description for messages: `pipe flag 0 DIR_C2V (8 slots x 1024 B)`.
    static std::string describe() {
        return "pipe flag " + std::to_string(FlagID) + " " + sim::dir_type_name(DirType) + " (" +
               std::to_string(SlotNum) + " slots x " + std::to_string(SlotSize) + " B)";
    }

private:
    static State* acquire() {
        PtoSimContext& ctx = sim::context("TPipe");
        if (ctx.cluster_storage == nullptr) {
            sim::fatal("TPipe: the runtime provides no cluster storage for cross-core pipes");
        }
        void* raw = ctx.cluster_storage(&ctx, kKey, sizeof(Storage));
        if (raw == nullptr) {
            sim::fatal("TPipe: the runtime refused cluster storage for " + describe() +
                       " (another pipe uses the same key with another size)");
        }
        Storage* st = static_cast<Storage*>(raw);
        uint32_t expected = 0;
        if (__atomic_compare_exchange_n(&st->init, &expected, 1u, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            State* s = new (st->payload) State();
            s->mu.word = 0;
            s->next_seq[0] = s->next_seq[1] = 0;
            s->cursor = 0;
            std::memset(s->meta, 0, sizeof s->meta);
            std::memset(s->npopped, 0, sizeof s->npopped);
            const std::string d = describe();
            const char* fmt[4] = {"TPUSH on %s: waiting for the AIV cores to free a slot",
                                  "TPUSH on %s: waiting for the AIC core to free a slot",
                                  "TPOP on %s: waiting for the AIC core to push",
                                  "TPOP on %s: waiting for the AIV cores to push"};
            for (int i = 0; i < 4; ++i) std::snprintf(s->wait_text[i], sizeof s->wait_text[i], fmt[i], d.c_str());
            __atomic_store_n(&st->init, 2u, __ATOMIC_RELEASE);
            return s;
        }
        while (__atomic_load_n(&st->init, __ATOMIC_ACQUIRE) != 2u) {
            if (sim::stop_requested()) throw sim::StopUnwind{};
            sched_yield();
        }
        return std::launder(reinterpret_cast<State*>(st->payload));
    }
};

/// True for TPipe types.
template <class T>
struct is_tpipe : std::false_type {};
/// True for TPipe types.
template <uint8_t F, uint8_t D, uint32_t S, uint32_t N, uint32_t L, bool NS, bool U>
struct is_tpipe<TPipe<F, D, S, N, L, NS, U>> : std::true_type {};

namespace sim {

/// 0 for a lane's first band, else where lane 1's band starts given its extent `e1`.
inline size_t band_start(int lane, size_t e1, bool odd) { return lane == 0 ? 0 : e1 + (odd ? 1 : 0); }

/// True for the split modes.
constexpr bool is_split(TileSplitAxis s) { return s != TILE_NO_SPLIT; }
/// True for the row-split modes.
constexpr bool splits_rows(TileSplitAxis s) { return s == TILE_UP_DOWN || s == TILE_UP_DOWN_ODD; }
/// True for the column-split modes.
constexpr bool splits_cols(TileSplitAxis s) { return s == TILE_LEFT_RIGHT || s == TILE_LEFT_RIGHT_ODD; }
/// True for the _ODD modes.
constexpr bool is_odd_split(TileSplitAxis s) { return s == TILE_UP_DOWN_ODD || s == TILE_LEFT_RIGHT_ODD; }

/// The AIV lanes of the executing core's task (1 or 2).
inline int task_lanes(const PtoSimContext& ctx) { return ctx.subblock_dim >= 2 ? 2 : 1; }

/// The oldest slot of `dir` that `lane` has not claimed (Filling or Ready), or -1.
template <class State>
inline int next_consumable(State& s, uint32_t nslots, int dir, int lane) {
    int best = -1;
    for (uint32_t i = 0; i < nslots; ++i) {
        const SlotMeta& m = s.meta[i];
        if (m.state == kFree || m.dir != dir || (m.claimed & (1u << lane)) != 0) continue;
        if (best < 0 || m.seq < s.meta[best].seq) best = static_cast<int>(i);
    }
    return best;
}

/// The oldest Filling V2C slot that `lane` has not pushed into, or -1.
template <class State>
inline int joinable_v2c(State& s, uint32_t nslots, int lane) {
    int best = -1;
    for (uint32_t i = 0; i < nslots; ++i) {
        const SlotMeta& m = s.meta[i];
        if (m.state != kFilling || m.dir != kV2C || (m.pushed & (1u << lane)) != 0) continue;
        if (best < 0 || m.seq < s.meta[best].seq) best = static_cast<int>(i);
    }
    return best;
}

/// A free slot, searching from the cursor, or -1.
template <class State>
inline int free_slot(State& s, uint32_t nslots) {
    for (uint32_t k = 0; k < nslots; ++k) {
        const uint32_t i = (s.cursor + k) % nslots;
        if (s.meta[i].state == kFree) return static_cast<int>(i);
    }
    return -1;
}

/// The body of TPUSH.
template <class Pipe, class TileT, TileSplitAxis Split>
inline void pipe_push(Pipe& pipe, TileT& tile) {
    using T = typename TileT::DType;
    constexpr bool vec_producer = TileT::Loc == TileType::Vec;
    static_assert(TileT::Loc == TileType::Vec || TileT::Loc == TileType::Acc || TileT::Loc == TileType::Mat,
                  "TPUSH: the produced tile must be Acc or Mat (cube -> vector) or Vec (vector -> cube); Ctrl tiles "
                  "are not supported (docs/PTO_ISA.md)");
    static_assert(vec_producer ? Pipe::is_v2c : Pipe::is_c2v,
                  "TPUSH: a Vec tile travels vector -> cube (the pipe needs DIR_V2C or DIR_BOTH), an Acc/Mat tile "
                  "cube -> vector (DIR_C2V or DIR_BOTH)");
    constexpr int dir = vec_producer ? kV2C : kC2V;
    PtoSimContext& ctx = context("TPUSH");
    const int lane = vec_producer ? (ctx.subblock_id != 0 ? 1 : 0) : 0;
    if (vec_producer && !is_split(Split) && lane != 0) {
        return; // TILE_NO_SPLIT: only AIV0 produces
    }
    const T* src = tile_data(tile, "TPUSH");
    const size_t vr = vrows(tile), vc = vcols(tile);
    // Extent of the slot matrix and this lane's band in it.
    size_t rows = TileT::Rows, cols = TileT::Cols;
    size_t r0 = 0, c0 = 0;
    if (vec_producer) {
        if (splits_rows(Split)) {
            rows = 2 * static_cast<size_t>(TileT::Rows);
            r0 = band_start(lane, vr, is_odd_split(Split));
        }
        if (splits_cols(Split)) {
            cols = 2 * static_cast<size_t>(TileT::Cols);
            c0 = band_start(lane, vc, is_odd_split(Split));
        }
    }
    // SlotSize bounds what one consumer receives: the whole tile, or with a split axis on a
    // cube -> vector push, each AIV lane's half (the larger one for an odd split).
    size_t per_consumer = rows * cols * sizeof(T);
    if (!vec_producer && splits_rows(Split)) per_consumer = (rows + 1) / 2 * cols * sizeof(T);
    if (!vec_producer && splits_cols(Split)) per_consumer = rows * ((cols + 1) / 2) * sizeof(T);
    if (per_consumer > Pipe::RingFiFo::SLOT_SIZE) {
        fatal("TPUSH on " + Pipe::describe() + ": " + tile_name(tile) + " needs " + std::to_string(per_consumer) +
              " bytes per slot" + (per_consumer == rows * cols * sizeof(T) ? "" : " (per AIV lane)"));
    }
    auto& s = *pipe.state;
    LockGuard guard(s.mu);
    // A split V2C push joins the oldest slot the other lane opened and this lane has not
    // filled yet; otherwise it opens a free slot (waiting while none is free).
    int slot = -1;
    bool join = false;
    wait_until(
        s.mu,
        [&] {
            if (vec_producer && is_split(Split)) {
                slot = joinable_v2c(s, Pipe::RingFiFo::SLOT_NUM, lane);
                if (slot >= 0) return join = true;
            }
            return (slot = free_slot(s, Pipe::RingFiFo::SLOT_NUM)) >= 0;
        },
        s.wait_text[dir == kC2V ? 0 : 1]);
    if (!join) {
        SlotMeta& m = s.meta[slot];
        m.seq = s.next_seq[dir]++;
        m.rows = static_cast<uint32_t>(rows);
        m.cols = static_cast<uint32_t>(cols);
        m.dtype = type_code<T>();
        m.esize = sizeof(T);
        m.state = kFilling;
        m.dir = static_cast<uint8_t>(dir);
        m.producers = static_cast<uint8_t>(vec_producer && is_split(Split) ? task_lanes(ctx) : 1);
        m.pushed = 0;
        m.consumers = 0;
        m.claimed = 0;
        m.freed = 0;
        s.cursor = (static_cast<uint32_t>(slot) + 1) % Pipe::RingFiFo::SLOT_NUM;
        std::memset(s.data[slot], 0, rows * cols * sizeof(T));
    } else {
        const SlotMeta& m = s.meta[slot];
        if (m.rows != rows || m.cols != cols || m.dtype != type_code<T>()) {
            fatal("TPUSH on " + Pipe::describe() + ": the two AIV lanes push different tiles into one slot (" +
                  tile_name(tile) + ")");
        }
    }
    SlotMeta& m = s.meta[slot];
    if (r0 + vr > rows || c0 + vc > cols) {
        fatal("TPUSH on " + Pipe::describe() + ": lane " + std::to_string(lane) + "'s band of " + tile_name(tile) +
              " leaves the slot");
    }
    T* dst = reinterpret_cast<T*>(s.data[slot]);
    for_each_rc<TileT>(vr, vc, [&](size_t r, size_t c) { dst[(r0 + r) * cols + c0 + c] = src[tile.ElementOffset(r, c)]; });
    m.pushed |= static_cast<uint8_t>(1u << lane);
    if (__builtin_popcount(m.pushed) >= m.producers) {
        m.state = kReady;
    }
}

/// The body of TPOP.
template <class Pipe, class TileT, TileSplitAxis Split>
inline void pipe_pop(Pipe& pipe, TileT& tile) {
    using T = typename TileT::DType;
    constexpr bool vec_consumer = TileT::Loc == TileType::Vec;
    static_assert(TileT::Loc == TileType::Vec || TileT::Loc == TileType::Mat,
                  "TPOP: the consumer tile must be Vec (cube -> vector) or Mat (vector -> cube); Ctrl tiles are not "
                  "supported (docs/PTO_ISA.md)");
    static_assert(vec_consumer ? Pipe::is_c2v : Pipe::is_v2c,
                  "TPOP: a Vec tile is popped from a DIR_C2V / DIR_BOTH pipe, a Mat tile from DIR_V2C / DIR_BOTH");
    constexpr int dir = vec_consumer ? kC2V : kV2C;
    PtoSimContext& ctx = context("TPOP");
    const int lane = vec_consumer ? (ctx.subblock_id != 0 ? 1 : 0) : 0;
    // Bind the tile to the next entry of the consumer buffer.
    const uint32_t base = vec_consumer ? pipe.fifo.C2V_CONSUMER_BUF : pipe.fifo.V2C_CONSUMER_BUF;
    assign_tile(tile, static_cast<uint64_t>(base) + (pipe.pops % Pipe::RingFiFo::LOCAL_SLOT_NUM) * TileT::Bytes);
    ++pipe.pops;
    T* d = tile.data_;
    const size_t vr = vrows(tile), vc = vcols(tile);
    if (vec_consumer && !is_split(Split) && !Pipe::is_no_split && lane != 0) {
        for_each_rc<TileT>(vr, vc, [&](size_t r, size_t c) { d[tile.ElementOffset(r, c)] = static_cast<T>(0); });
        return; // TILE_NO_SPLIT without IsNoSplit: only AIV0 consumes
    }
    auto& s = *pipe.state;
    LockGuard guard(s.mu);
    int slot = -1;
    wait_until(
        s.mu,
        [&] {
            slot = next_consumable(s, Pipe::RingFiFo::SLOT_NUM, dir, lane);
            return slot >= 0 && s.meta[slot].state == kReady;
        },
        s.wait_text[dir == kC2V ? 2 : 3]);
    SlotMeta& m = s.meta[slot];
    if (m.dtype != type_code<T>()) {
        fatal("TPOP on " + Pipe::describe() + ": the slot holds " + type_code_name(m.dtype) + " elements, the consumer " +
              tile_name(tile) + " expects " + type_name<T>());
    }
    if (m.consumers == 0) {
        const bool shared = vec_consumer && (is_split(Split) || Pipe::is_no_split);
        m.consumers = static_cast<uint8_t>(shared ? task_lanes(ctx) : 1);
    }
    m.claimed |= static_cast<uint8_t>(1u << lane);
    s.popped[dir][lane][s.npopped[dir][lane]++] = static_cast<uint8_t>(slot);
    size_t r0 = 0, c0 = 0;
    if (vec_consumer && splits_rows(Split)) r0 = band_start(lane, vr, is_odd_split(Split));
    if (vec_consumer && splits_cols(Split)) c0 = band_start(lane, vc, is_odd_split(Split));
    if (r0 + vr > m.rows || c0 + vc > m.cols) {
        fatal("TPOP on " + Pipe::describe() + ": lane " + std::to_string(lane) + " pops " + tile_name(tile) +
              " at (" + std::to_string(r0) + ", " + std::to_string(c0) + ") from a slot of " + std::to_string(m.rows) +
              "x" + std::to_string(m.cols) + " elements");
    }
    const T* src = reinterpret_cast<const T*>(s.data[slot]);
    const size_t cols = m.cols;
    for_each_rc<TileT>(vr, vc, [&](size_t r, size_t c) { d[tile.ElementOffset(r, c)] = src[(r0 + r) * cols + c0 + c]; });
}

/// The body of TFREE.
template <class Pipe, TileSplitAxis Split>
inline void pipe_free(Pipe& pipe) {
    PtoSimContext& ctx = context("TFREE");
    const bool on_aic = ctx.core_type == PTO_SIM_CORE_AIC;
    const int dir = on_aic ? kV2C : kC2V;
    if ((dir == kC2V && !Pipe::is_c2v) || (dir == kV2C && !Pipe::is_v2c)) {
        fatal("TFREE on " + Pipe::describe() + ": the " + (on_aic ? "AIC" : "AIV") + " core consumes nothing from it");
    }
    const int lane = on_aic ? 0 : (ctx.subblock_id != 0 ? 1 : 0);
    if (dir == kC2V && !is_split(Split) && !Pipe::is_no_split && lane != 0) {
        return; // AIV1 did not consume a TILE_NO_SPLIT slot
    }
    auto& s = *pipe.state;
    LockGuard guard(s.mu);
    uint32_t& n = s.npopped[dir][lane];
    if (n == 0) {
        fatal("TFREE on " + Pipe::describe() + ": no slot was popped (TFREE without a matching TPOP)");
    }
    const int slot = s.popped[dir][lane][0];
    std::memmove(&s.popped[dir][lane][0], &s.popped[dir][lane][1], n - 1);
    --n;
    SlotMeta& m = s.meta[slot];
    if (++m.freed >= m.consumers) {
        m.state = kFree;
    }
}

} // namespace sim

/// Pushes a tile into a pipe (Acc/Mat on the AIC: cube -> vector; Vec on an AIV: vector -> cube).
template <typename Pipe, typename TileProd, TileSplitAxis Split>
PTO_INST RecordEvent TPUSH(Pipe& pipe, TileProd& tile) {
    static_assert(is_tpipe<Pipe>::value, "TPUSH<Pipe, Tile, Split>(pipe, tile): the first argument must be a TPipe");
    static_assert(is_tile_data_v<TileProd>,
                  "TPUSH of a GlobalTensor slot (TALLOC form) is not supported (docs/PTO_ISA.md)");
    sim::pipe_push<Pipe, TileProd, Split>(pipe, tile);
    return {};
}

/// TPUSH with the arguments reversed (TILE_NO_SPLIT).
template <typename TileProd, typename Pipe, std::enable_if_t<is_tpipe<Pipe>::value, int> = 0>
PTO_INST RecordEvent TPUSH(TileProd& tile, Pipe& pipe) {
    sim::pipe_push<Pipe, TileProd, TILE_NO_SPLIT>(pipe, tile);
    return {};
}

/// Pops the next tile of a pipe into `tile` (bound to the consumer buffer).
template <typename Pipe, typename TileCons, TileSplitAxis Split>
PTO_INST RecordEvent TPOP(Pipe& pipe, TileCons& tile) {
    static_assert(is_tpipe<Pipe>::value, "TPOP<Pipe, Tile, Split>(pipe, tile): the first argument must be a TPipe");
    static_assert(is_tile_data_v<TileCons>,
                  "TPOP into a GlobalTensor slot view is not supported (docs/PTO_ISA.md)");
    sim::pipe_pop<Pipe, TileCons, Split>(pipe, tile);
    return {};
}

/// TPOP with the arguments reversed (TILE_NO_SPLIT).
template <typename TileCons, typename Pipe, std::enable_if_t<is_tpipe<Pipe>::value, int> = 0>
PTO_INST RecordEvent TPOP(TileCons& tile, Pipe& pipe) {
    sim::pipe_pop<Pipe, TileCons, TILE_NO_SPLIT>(pipe, tile);
    return {};
}

/// TPOP with an explicit sub-block id: not supported.
template <typename Pipe, typename TileCons, TileSplitAxis Split>
PTO_INST RecordEvent TPOP(Pipe& pipe, TileCons& tile, int32_t subBlockId) {
    static_assert(sim::always_false<Pipe>, "TPOP with an explicit sub-block id is not supported (docs/PTO_ISA.md)");
    (void)pipe, (void)tile, (void)subBlockId;
    return {};
}

/// Releases the slot this core popped first and has not released yet.
template <typename Pipe, TileSplitAxis Split>
PTO_INST RecordEvent TFREE(Pipe& pipe) {
    static_assert(is_tpipe<Pipe>::value, "TFREE<Pipe, Split>(pipe): the argument must be a TPipe");
    sim::pipe_free<Pipe, Split>(pipe);
    return {};
}

/// TFREE without a split mode (TILE_NO_SPLIT).
template <typename Pipe>
PTO_INST RecordEvent TFREE(Pipe& pipe) {
    static_assert(is_tpipe<Pipe>::value, "TFREE(pipe): the argument must be a TPipe");
    sim::pipe_free<Pipe, TILE_NO_SPLIT>(pipe);
    return {};
}

/// TALLOC (GM slot views): not supported.
template <typename Pipe, typename GlobalData, TileSplitAxis Split>
PTO_INST RecordEvent TALLOC(Pipe& pipe, GlobalData& gmTensor) {
    static_assert(sim::always_false<Pipe>, "TALLOC (GM slot views of a TPipe) is not supported (docs/PTO_ISA.md)");
    (void)pipe, (void)gmTensor;
    return {};
}

} // namespace pto
