//! The trace's records: the `repr(C)` mirror of `PtoSimTraceEvent` and its decoded form.

use std::ffi::{c_char, CStr};

use crate::op::{DType, Op};

/// `PtoSimTraceEvent` of `include/pto/pto_sim_trace.h` (64 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RawEvent {
    /// `PtoSimTraceOp`.
    pub op: u16,
    /// `PtoSimTraceKind`.
    pub kind: u8,
    /// `PtoSimTraceDType` of the destination.
    pub dtype: u8,
    /// Buffers of dst, src0, src1 (0xFF: none); sync: the pipes.
    pub loc: [u8; 3],
    /// `PtoSimTraceDType` of the first source.
    pub src_dtype: u8,
    /// Valid rows (M); sync: the event id.
    pub rows: u32,
    /// Valid columns (N).
    pub cols: u32,
    /// K of a matmul.
    pub k: u32,
    /// Byte offsets of the operands.
    pub off: [u32; 3],
    /// Byte lengths of the operands.
    pub len: [u32; 3],
    /// Zero.
    pub reserved: u32,
    /// GM bytes moved.
    pub gm_bytes: u64,
    /// The instruction's name (static storage of the kernel library), or null.
    pub name: *const c_char,
}

/// `PtoSimTrace` of `include/pto/pto_sim_trace.h`.
#[repr(C)]
#[derive(Debug)]
pub struct RawTrace {
    /// `capacity` slots.
    pub events: *mut RawEvent,
    /// Slots.
    pub capacity: u32,
    /// Events in `events` (past `capacity`: lost).
    pub len: u32,
    /// Consumes `events[0..len)` and resets `len` (called by the header when full).
    pub flush: Option<unsafe extern "C" fn(*mut RawTrace)>,
    /// The owner's state for `flush`.
    pub owner: *mut std::ffi::c_void,
}

const _: () = assert!(std::mem::size_of::<RawEvent>() == 64);
const _: () = assert!(std::mem::size_of::<RawTrace>() == 32);

/// `loc` of an absent or GM operand.
pub const NO_BUFFER: u8 = 0xFF;
/// `PTO_SIM_UB`.
pub const BUF_UB: u8 = 0;
/// `PTO_SIM_L1`.
pub const BUF_L1: u8 = 1;
/// `PTO_SIM_L0A`.
pub const BUF_L0A: u8 = 2;
/// `PTO_SIM_L0B`.
pub const BUF_L0B: u8 = 3;
/// `PTO_SIM_L0C`.
pub const BUF_L0C: u8 = 4;
/// `PTO_SIM_BIAS`.
pub const BUF_BIAS: u8 = 5;
/// `PTO_SIM_FBUF`.
pub const BUF_FBUF: u8 = 6;

/// An on-chip byte range an instruction reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    /// `PtoSimBuffer`.
    pub buffer: u8,
    /// First byte.
    pub offset: u32,
    /// Bytes.
    pub len: u32,
}

/// One traced instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instr {
    /// Opcode.
    pub op: Op,
    /// Element type of the destination (the source for stores), if known.
    pub dtype: Option<DType>,
    /// Element type of the first source, if known.
    pub src_dtype: Option<DType>,
    /// Valid rows (M).
    pub rows: u32,
    /// Valid columns (N).
    pub cols: u32,
    /// K of a matmul.
    pub k: u32,
    /// The destination, if on chip.
    pub dst: Option<Operand>,
    /// The sources on chip.
    pub src: [Option<Operand>; 2],
    /// GM bytes moved.
    pub gm_bytes: u64,
}

/// One trace event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// An instruction.
    Instr(Instr),
    /// An instruction the model has no opcode for; the name as the header spelled it.
    Other(&'static str),
    /// `set_flag(src, dst, event)` (`pipe_t` ids).
    SetFlag {
        /// Signalling pipe.
        src: u8,
        /// Waiting pipe.
        dst: u8,
        /// Event id.
        event: u32,
    },
    /// `wait_flag(src, dst, event)`.
    WaitFlag {
        /// Signalling pipe.
        src: u8,
        /// Waiting pipe.
        dst: u8,
        /// Event id.
        event: u32,
    },
    /// `pipe_barrier(pipe)`.
    Barrier {
        /// The pipe (`PIPE_ALL` = 6).
        pipe: u8,
    },
}

fn operand(raw: &RawEvent, i: usize) -> Option<Operand> {
    (raw.loc[i] != NO_BUFFER && raw.len[i] != 0).then_some(Operand {
        buffer: raw.loc[i],
        offset: raw.off[i],
        len: raw.len[i],
    })
}

impl Event {
    /// Decodes a raw event; `None` for a kind this model does not know.
    ///
    /// # Safety
    /// `raw.name` must be null or a NUL-terminated string that lives for the process (the
    /// header stores string literals of a kernel library the runtime keeps loaded).
    pub unsafe fn decode(raw: &RawEvent) -> Option<Event> {
        Some(match raw.kind {
            0 => match Op::from_id(raw.op).filter(|o| *o != Op::OTHER) {
                Some(op) => Event::Instr(Instr {
                    op,
                    dtype: DType::from_code(raw.dtype),
                    src_dtype: DType::from_code(raw.src_dtype),
                    rows: raw.rows,
                    cols: raw.cols,
                    k: raw.k,
                    dst: operand(raw, 0),
                    src: [operand(raw, 1), operand(raw, 2)],
                    gm_bytes: raw.gm_bytes,
                }),
                None => Event::Other(if raw.name.is_null() {
                    "?"
                } else {
                    // SAFETY: the caller's contract.
                    unsafe { CStr::from_ptr(raw.name) }.to_str().unwrap_or("?")
                }),
            },
            1 => Event::SetFlag {
                src: raw.loc[0],
                dst: raw.loc[1],
                event: raw.rows,
            },
            2 => Event::WaitFlag {
                src: raw.loc[0],
                dst: raw.loc[1],
                event: raw.rows,
            },
            3 => Event::Barrier { pipe: raw.loc[0] },
            _ => return None,
        })
    }
}
