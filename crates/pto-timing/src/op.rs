//! Opcodes, element types and pipes of the instruction trace (`include/pto/pto_sim_trace.h`).

/// Declares [`Op`] in the header's id order, with its names.
macro_rules! ops {
    ($($name:ident),* $(,)?) => {
        /// An opcode of the trace; the discriminant is the header's `PtoSimTraceOp` id.
        #[allow(clippy::upper_case_acronyms, non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u16)]
        pub enum Op {
            $(
                #[doc = concat!("`", stringify!($name), "`")]
                $name,
            )*
        }
        /// Every opcode name in id order (as the header spells them).
        pub const OP_NAMES: &[&str] = &[$(stringify!($name)),*];
        /// Every opcode in id order.
        const ALL_OPS: &[Op] = &[$(Op::$name),*];
    };
}

ops!(
    OTHER,
    TLOAD,
    TSTORE,
    TPREFETCH,
    TMOV,
    TEXTRACT,
    TINSERT,
    TTRANS,
    TFILLPAD,
    TMATMUL,
    TMATMUL_ACC,
    TMATMUL_BIAS,
    TGEMV,
    TGEMV_ACC,
    TGEMV_BIAS,
    TADD,
    TSUB,
    TMUL,
    TDIV,
    TMAX,
    TMIN,
    TAND,
    TOR,
    TXOR,
    TSHL,
    TSHR,
    TADDS,
    TSUBS,
    TMULS,
    TDIVS,
    TMAXS,
    TMINS,
    TANDS,
    TORS,
    TXORS,
    TSHLS,
    TSHRS,
    TLRELU,
    TEXP,
    TLOG,
    TSQRT,
    TRSQRT,
    TRECIP,
    TABS,
    TNEG,
    TRELU,
    TNOT,
    TEXPANDS,
    TCVT,
    TROWSUM,
    TROWMAX,
    TROWMIN,
    TROWPROD,
    TCOLSUM,
    TCOLMAX,
    TCOLMIN,
    TCOLPROD,
    TROWEXPAND,
    TROWEXPANDADD,
    TROWEXPANDSUB,
    TROWEXPANDMUL,
    TROWEXPANDDIV,
    TROWEXPANDMAX,
    TROWEXPANDMIN,
    TCOLEXPAND,
    TCOLEXPANDADD,
    TCOLEXPANDSUB,
    TCOLEXPANDMUL,
    TCOLEXPANDDIV,
    TCOLEXPANDMAX,
    TCOLEXPANDMIN,
    TPUSH,
    TPOP,
    TFREE,
);

impl Op {
    /// The opcode with header id `id`.
    pub fn from_id(id: u16) -> Option<Op> {
        ALL_OPS.get(id as usize).copied()
    }

    /// The opcode named `name` (as the header and the parameter files spell it).
    pub fn from_name(name: &str) -> Option<Op> {
        OP_NAMES.iter().position(|n| *n == name).map(|i| ALL_OPS[i])
    }

    /// The name.
    pub fn name(self) -> &'static str {
        OP_NAMES[self as usize]
    }
}

/// An element type of the trace (`PtoSimTraceDType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 16-bit float.
    F16,
    /// bfloat16.
    Bf16,
    /// 8-bit signed integer.
    I8,
    /// 16-bit signed integer.
    I16,
    /// 32-bit signed integer.
    I32,
    /// 64-bit signed integer.
    I64,
    /// 8-bit unsigned integer.
    U8,
    /// 16-bit unsigned integer.
    U16,
    /// 32-bit unsigned integer.
    U32,
    /// 64-bit unsigned integer.
    U64,
    /// An 8-bit float.
    F8,
}

impl DType {
    /// The type with header code `code` (0 = unknown).
    pub fn from_code(code: u8) -> Option<DType> {
        use DType::*;
        [F32, F16, Bf16, I8, I16, I32, I64, U8, U16, U32, U64, F8]
            .get((code as usize).checked_sub(1)?)
            .copied()
    }

    /// Bytes per element.
    pub fn size(self) -> u64 {
        use DType::*;
        match self {
            I8 | U8 | F8 => 1,
            F16 | Bf16 | I16 | U16 => 2,
            F32 | I32 | U32 => 4,
            I64 | U64 => 8,
        }
    }

    /// The name the parameter files use (`fp32`, `fp16`, `bf16`, `int8`, ...).
    pub fn name(self) -> &'static str {
        use DType::*;
        match self {
            F32 => "fp32",
            F16 => "fp16",
            Bf16 => "bf16",
            I8 => "int8",
            I16 => "int16",
            I32 => "int32",
            I64 => "int64",
            U8 => "uint8",
            U16 => "uint16",
            U32 => "uint32",
            U64 => "uint64",
            F8 => "fp8",
        }
    }

    /// The type a parameter file names `name`.
    pub fn from_name(name: &str) -> Option<DType> {
        use DType::*;
        [F32, F16, Bf16, I8, I16, I32, I64, U8, U16, U32, U64, F8]
            .into_iter()
            .find(|d| d.name() == name)
    }
}

/// A pipe of an AI core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pipe {
    /// GM → L1 / UB (loads).
    Mte2,
    /// L1 → L0A / L0B (on-chip moves on the cube side).
    Mte1,
    /// The cube unit (matmul).
    Cube,
    /// The vector unit.
    Vec,
    /// L0C → GM / L1 / UB (fixpipe).
    Fixp,
    /// UB → GM / L1 (stores).
    Mte3,
    /// The scalar unit (issue, TPUSH / TPOP bookkeeping).
    Scalar,
}

/// Number of pipes.
pub const N_PIPES: usize = 7;

impl Pipe {
    /// Every pipe, in index order (the order of per-pipe arrays and of `pmu.csv` columns).
    pub const ALL: [Pipe; N_PIPES] = [
        Pipe::Mte2,
        Pipe::Mte1,
        Pipe::Cube,
        Pipe::Vec,
        Pipe::Fixp,
        Pipe::Mte3,
        Pipe::Scalar,
    ];

    /// Index into per-pipe arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// `MTE2`, `MTE1`, `CUBE`, `VEC`, `FIXP`, `MTE3`, `SCALAR`.
    pub fn name(self) -> &'static str {
        ["MTE2", "MTE1", "CUBE", "VEC", "FIXP", "MTE3", "SCALAR"][self as usize]
    }

    /// The pipe a `pipe_t` id names (`pto_kernel_sync.h`); `None` for `PIPE_ALL` and
    /// pipes this model does not have.
    pub fn from_pipe_t(id: u8) -> Option<Pipe> {
        match id {
            0 => Some(Pipe::Scalar),
            1 | 9 => Some(Pipe::Vec),
            2 => Some(Pipe::Cube),
            3 => Some(Pipe::Mte1),
            4 => Some(Pipe::Mte2),
            5 => Some(Pipe::Mte3),
            10 => Some(Pipe::Fixp),
            _ => None,
        }
    }
}

/// `pipe_t` id of `PIPE_ALL`.
pub const PIPE_ALL: u8 = 6;

#[cfg(test)]
mod tests {
    use super::*;

    /// The ids here are the header's: same names in the same order.
    #[test]
    fn opcode_list_matches_the_header() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../include/pto/pto_sim_trace.h"
        );
        let text = std::fs::read_to_string(path).expect("read pto_sim_trace.h");
        let start = text.find("#define PTO_SIM_TRACE_OPS(X)").expect("op list");
        let end = start
            + text[start..]
                .find("// clang-format on")
                .expect("end of list");
        let names: Vec<&str> = text[start..end]
            .split("X(")
            .skip(1) // the text before the first item
            .map(|s| s.split(')').next().unwrap_or(""))
            .collect();
        assert_eq!(names, OP_NAMES);
    }

    /// The trace's element types (the header's own codes) are the one table's, by name
    /// (PyPTO's, or an alias) and size; `fp8` names any 8-bit float, which the table splits.
    #[test]
    fn dtypes_agree_with_the_element_type_table() {
        use pto_base::dtype::ElementType;
        for code in 1..=12 {
            let d = DType::from_code(code).unwrap();
            assert_eq!(DType::from_name(d.name()), Some(d));
            if d == DType::F8 {
                continue;
            }
            let t = ElementType::from_name(d.name()).unwrap_or_else(|| panic!("{d:?}"));
            assert_eq!(d.size(), t.size_bytes(), "{d:?}");
        }
        assert_eq!(DType::from_code(13), None);
    }

    #[test]
    fn names_and_ids_round_trip() {
        for (i, n) in OP_NAMES.iter().enumerate() {
            let op = Op::from_name(n).unwrap();
            assert_eq!(op as usize, i);
            assert_eq!(Op::from_id(i as u16), Some(op));
        }
        assert_eq!(Op::from_id(OP_NAMES.len() as u16), None);
        assert_eq!(DType::from_code(1), Some(DType::F32));
        assert_eq!(DType::from_code(0), None);
        assert_eq!(DType::from_name("bf16"), Some(DType::Bf16));
    }
}
