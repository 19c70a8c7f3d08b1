// pto_sim_trace.h: the instruction trace a PTO-ISA kernel records for the timing model.
//
// When the runtime runs with predicted timing (`--timing predicted`), it points
// `PtoSimContext::trace` at a per-thread `PtoSimTrace` before each subtask. The PTO-ISA header
// then appends one `PtoSimTraceEvent` per instruction (opcode, element type, valid shape, the
// on-chip operands it reads and writes, the GM bytes it moves) and per sync instruction
// (`set_flag`, `wait_flag`, `pipe_barrier`). With the pointer null (the default) every
// instruction pays one predictable branch and records nothing.
//
// The Rust side (`crates/pto-timing`) schedules the trace on the core's pipes. The opcode
// list below is the single source of the ids: `pto-timing`'s `Op` enum is checked against it
// by a unit test that reads this file.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// clang-format off
/// Every opcode the trace names, in id order (0-based). `OTHER` is an instruction the
/// timing model has no parameters for; the event's `name` says which.
#define PTO_SIM_TRACE_OPS(X)                                                                  \
    X(OTHER) X(TLOAD) X(TSTORE) X(TPREFETCH) X(TMOV) X(TEXTRACT) X(TINSERT) X(TTRANS)           \
    X(TFILLPAD) X(TMATMUL) X(TMATMUL_ACC) X(TMATMUL_BIAS) X(TGEMV) X(TGEMV_ACC) X(TGEMV_BIAS)    \
    X(TADD) X(TSUB) X(TMUL) X(TDIV) X(TMAX) X(TMIN) X(TAND) X(TOR) X(TXOR) X(TSHL) X(TSHR)      \
    X(TADDS) X(TSUBS) X(TMULS) X(TDIVS) X(TMAXS) X(TMINS) X(TANDS) X(TORS) X(TXORS) X(TSHLS)    \
    X(TSHRS) X(TLRELU) X(TEXP) X(TLOG) X(TSQRT) X(TRSQRT) X(TRECIP) X(TABS) X(TNEG) X(TRELU)    \
    X(TNOT) X(TEXPANDS) X(TCVT) X(TROWSUM) X(TROWMAX) X(TROWMIN) X(TROWPROD) X(TCOLSUM)         \
    X(TCOLMAX) X(TCOLMIN) X(TCOLPROD) X(TROWEXPAND) X(TROWEXPANDADD) X(TROWEXPANDSUB)           \
    X(TROWEXPANDMUL) X(TROWEXPANDDIV) X(TROWEXPANDMAX) X(TROWEXPANDMIN) X(TCOLEXPAND)           \
    X(TCOLEXPANDADD) X(TCOLEXPANDSUB) X(TCOLEXPANDMUL) X(TCOLEXPANDDIV) X(TCOLEXPANDMAX)        \
    X(TCOLEXPANDMIN) X(TPUSH) X(TPOP) X(TFREE)
// clang-format on

#define PTO_SIM_TRACE_ENUM_ITEM(name) PTO_SIM_OP_##name,
/// Opcode ids of `PtoSimTraceEvent::op`.
enum PtoSimTraceOp { PTO_SIM_TRACE_OPS(PTO_SIM_TRACE_ENUM_ITEM) PTO_SIM_OP_COUNT };
#undef PTO_SIM_TRACE_ENUM_ITEM

/// What an event is.
enum PtoSimTraceKind {
    PTO_SIM_TRACE_INSTR = 0,     ///< an instruction (`op`, shape, operands)
    PTO_SIM_TRACE_SET_FLAG = 1,  ///< set_flag(pipe[0] -> pipe[1], event `rows`)
    PTO_SIM_TRACE_WAIT_FLAG = 2, ///< wait_flag(pipe[0] -> pipe[1], event `rows`)
    PTO_SIM_TRACE_BARRIER = 3,   ///< pipe_barrier(pipe[0])
};

/// Element types of `PtoSimTraceEvent::dtype` (0 = unknown).
enum PtoSimTraceDType {
    PTO_SIM_DT_UNKNOWN = 0,
    PTO_SIM_DT_F32 = 1,
    PTO_SIM_DT_F16 = 2,
    PTO_SIM_DT_BF16 = 3,
    PTO_SIM_DT_I8 = 4,
    PTO_SIM_DT_I16 = 5,
    PTO_SIM_DT_I32 = 6,
    PTO_SIM_DT_I64 = 7,
    PTO_SIM_DT_U8 = 8,
    PTO_SIM_DT_U16 = 9,
    PTO_SIM_DT_U32 = 10,
    PTO_SIM_DT_U64 = 11,
    PTO_SIM_DT_F8 = 12,
};

/// `loc` of an operand that is not on chip (GM) or absent.
#define PTO_SIM_TRACE_NO_BUFFER 0xFF

/// One traced instruction or sync event (64 bytes).
typedef struct PtoSimTraceEvent {
    uint16_t op;        ///< PtoSimTraceOp (instructions)
    uint8_t kind;       ///< PtoSimTraceKind
    uint8_t dtype;      ///< PtoSimTraceDType of the destination (the source for TSTORE / TPUSH)
    uint8_t loc[3];     ///< on-chip buffer (PtoSimBuffer) of dst, src0, src1; sync: pipe_t of src, dst
    uint8_t src_dtype;  ///< PtoSimTraceDType of the first source (TCVT, TMATMUL inputs)
    uint32_t rows;      ///< valid rows (M of a matmul); sync: the event id
    uint32_t cols;      ///< valid columns (N of a matmul)
    uint32_t k;         ///< K of a matmul, else 0
    uint32_t off[3];    ///< byte offset of each operand in its buffer
    uint32_t len[3];    ///< bytes of each operand in its buffer (0: absent)
    uint32_t reserved;  ///< zero
    uint64_t gm_bytes;  ///< GM bytes moved (TLOAD / TSTORE / TPREFETCH), else 0
    const char* name;   ///< the instruction's name as the header spells it (static storage)
} PtoSimTraceEvent;

/// A per-thread trace buffer the runtime owns. The header appends; when the buffer is full it
/// calls `flush` (the runtime consumes the events and sets `len` to 0), so a trace of any
/// length streams through a fixed buffer. Without `flush`, `len` counts past `capacity`.
typedef struct PtoSimTrace {
    PtoSimTraceEvent* events; ///< `capacity` slots
    uint32_t capacity;        ///< slots
    uint32_t len;             ///< events in `events` (past `capacity`: lost)
    void (*flush)(struct PtoSimTrace* trace); ///< consumes `events[0..len)`, resets `len`
    void* owner;              ///< the runtime's, for `flush`
} PtoSimTrace;

#ifdef __cplusplus
}  // extern "C"
static_assert(sizeof(PtoSimTraceEvent) == 64, "PtoSimTraceEvent layout");
static_assert(sizeof(PtoSimTrace) == 32, "PtoSimTrace layout");
#endif
