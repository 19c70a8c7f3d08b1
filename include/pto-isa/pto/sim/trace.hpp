// pto/sim/trace.hpp: recording the instruction trace for the timing model (pto_sim_trace.h).
//
// Off unless the runtime points `PtoSimContext::trace` at a buffer (`--timing predicted`):
// every hook starts with one predictable branch on the thread's trace pointer. When on, the
// instruction families record one event each (opcode, element types, valid shape, the
// on-chip byte ranges of their operands, GM bytes); `tile_data`, which nearly every
// instruction calls, records any other instruction by name, so an instruction without a
// model still shows up (the task is then reported "unmodelled", naming it).
#pragma once

#include <cstring>

#include "pto/sim/context.hpp"
#include "pto_kernel_sync.h"

namespace pto {
namespace sim {

/// True while the running subtask records a trace.
inline bool tracing() { return __builtin_expect(pto_sim_tls_trace != nullptr, 0); }

/// The trace element-type code of `T`.
template <class T>
constexpr uint8_t trace_dtype() {
    if (std::is_same<T, float>::value) return PTO_SIM_DT_F32;
    if (std::is_same<T, half>::value) return PTO_SIM_DT_F16;
    if (std::is_same<T, bfloat16_t>::value) return PTO_SIM_DT_BF16;
    if (std::is_same<T, int8_t>::value) return PTO_SIM_DT_I8;
    if (std::is_same<T, int16_t>::value) return PTO_SIM_DT_I16;
    if (std::is_same<T, int32_t>::value) return PTO_SIM_DT_I32;
    if (std::is_same<T, int64_t>::value) return PTO_SIM_DT_I64;
    if (std::is_same<T, uint8_t>::value) return PTO_SIM_DT_U8;
    if (std::is_same<T, uint16_t>::value) return PTO_SIM_DT_U16;
    if (std::is_same<T, uint32_t>::value) return PTO_SIM_DT_U32;
    if (std::is_same<T, uint64_t>::value) return PTO_SIM_DT_U64;
    if (sizeof(T) == 1) return PTO_SIM_DT_F8;
    return PTO_SIM_DT_UNKNOWN;
}

/// The opcode id of an instruction name (PTO_SIM_OP_OTHER when the model has none).
inline uint16_t trace_op_id(const char* name) {
#define PTO_SIM_TRACE_NAME_ITEM(n) #n,
    static const char* const names[] = {PTO_SIM_TRACE_OPS(PTO_SIM_TRACE_NAME_ITEM)};
#undef PTO_SIM_TRACE_NAME_ITEM
    for (uint16_t i = 1; i < PTO_SIM_OP_COUNT; ++i) {
        if (std::strcmp(names[i], name) == 0) return i;
    }
    return PTO_SIM_OP_OTHER;
}

/// A fresh event at the end of the trace, or null when the buffer is full (counted).
inline PtoSimTraceEvent* trace_slot() {
    PtoSimTrace* t = pto_sim_tls_trace;
    if (t->len >= t->capacity && t->flush != nullptr) t->flush(t);
    PtoSimTraceEvent* e = t->len < t->capacity ? &t->events[t->len] : nullptr;
    ++t->len;
    if (e != nullptr) {
        *e = PtoSimTraceEvent{};
        e->loc[0] = e->loc[1] = e->loc[2] = PTO_SIM_TRACE_NO_BUFFER;
    }
    return e;
}

/// Sets operand `i` of `e` to the bytes of `tile` in its on-chip buffer.
template <class TileT>
inline void trace_operand(PtoSimTraceEvent& e, int i, const TileT& tile) {
    const int buf = buffer_index(TileT::Loc);
    PtoSimContext* ctx = tls_context;
    if (buf < 0 || ctx == nullptr || tile.data_ == nullptr) return;
    const uint8_t* base = ctx->memory[buf].base;
    const uint8_t* p = reinterpret_cast<const uint8_t*>(tile.data_);
    e.loc[i] = static_cast<uint8_t>(buf);
    e.off[i] = base != nullptr && p >= base ? static_cast<uint32_t>(p - base) : 0;
    e.len[i] = static_cast<uint32_t>(static_cast<size_t>(TileT::Rows) * TileT::Cols * sizeof(typename TileT::DType));
}

/// Records instruction `op` writing `dst` from `src0` (and `src1`) over `rows x cols`.
template <class D, class S0, class S1 = D>
inline void trace_tiles(const char* op, const D* dst, const S0* src0, const S1* src1, size_t rows, size_t cols,
                        size_t k = 0) {
    PtoSimTraceEvent* e = trace_slot();
    if (e == nullptr) return;
    e->op = trace_op_id(op);
    e->name = op;
    e->kind = PTO_SIM_TRACE_INSTR;
    if (dst != nullptr) {
        e->dtype = trace_dtype<typename D::DType>();
        trace_operand(*e, 0, *dst);
    }
    if (src0 != nullptr) {
        e->src_dtype = trace_dtype<typename S0::DType>();
        if (dst == nullptr) e->dtype = e->src_dtype;
        trace_operand(*e, 1, *src0);
    }
    if (src1 != nullptr) trace_operand(*e, 2, *src1);
    e->rows = static_cast<uint32_t>(rows);
    e->cols = static_cast<uint32_t>(cols);
    e->k = static_cast<uint32_t>(k);
}

/// Records a GM transfer: TLOAD (`to_tile`) or TSTORE of `tile`, `bytes` of GM.
template <class TileT>
inline void trace_gm(const char* op, const TileT& tile, bool to_tile, size_t rows, size_t cols, uint64_t bytes) {
    PtoSimTraceEvent* e = trace_slot();
    if (e == nullptr) return;
    e->op = trace_op_id(op);
    e->name = op;
    e->kind = PTO_SIM_TRACE_INSTR;
    e->dtype = e->src_dtype = trace_dtype<typename TileT::DType>();
    trace_operand(*e, to_tile ? 0 : 1, tile);
    e->rows = static_cast<uint32_t>(rows);
    e->cols = static_cast<uint32_t>(cols);
    e->gm_bytes = bytes;
}

/// Called by `tile_data`: records an instruction no family recorded (by name), unless the
/// last event is already this instruction.
inline void trace_seen(const char* op) {
    // Views and debug output take no device time.
    for (const char* free_op : {"TRESHAPE", "TSUBVIEW", "TPRINT", "TASSIGN"}) {
        if (std::strcmp(op, free_op) == 0) return;
    }
    PtoSimTrace* t = pto_sim_tls_trace;
    if (t->len > 0 && t->len <= t->capacity) {
        const PtoSimTraceEvent& last = t->events[t->len - 1];
        if (last.kind == PTO_SIM_TRACE_INSTR && last.name != nullptr &&
            (last.name == op || std::strcmp(last.name, op) == 0)) {
            return;
        }
    }
    PtoSimTraceEvent* e = trace_slot();
    if (e == nullptr) return;
    e->op = trace_op_id(op);
    e->name = op;
    e->kind = PTO_SIM_TRACE_INSTR;
}

} // namespace sim
} // namespace pto
