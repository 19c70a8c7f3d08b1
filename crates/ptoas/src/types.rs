//! PTO-AS types: scalars, `!pto.ptr`, tensor and partition views, `!pto.tile_buf`, pipes and
//! GM memrefs, with their `.pto` spelling (for the canonical printer) and their C++ spelling
//! over the PTO-ISA header.

use std::fmt;

/// The target architecture (`--pto-arch`): decides default Left layouts and memory sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// Ascend 910B / A2 / A3 (`a3`; every `pto.target_arch` but `a5`).
    A3,
    /// Ascend 950 (`a5`).
    A5,
}

impl Arch {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Arch::A3 => "a3",
            Arch::A5 => "a5",
        }
    }

    /// Bytes of on-chip memory `loc` has on this architecture (the sizes the simulator gives
    /// each core: a2a3 UB 192 KiB, L1 512 KiB, L0A/L0B 64 KiB, L0C 128 KiB; a5 UB and L0C
    /// 256 KiB).
    pub fn capacity(self, loc: TileLoc) -> u64 {
        const KIB: u64 = 1024;
        match (self, loc) {
            (Arch::A3, TileLoc::Vec) => 192 * KIB,
            (Arch::A5, TileLoc::Vec) => 256 * KIB,
            (_, TileLoc::Mat) => 512 * KIB,
            (_, TileLoc::Left) | (_, TileLoc::Right) => 64 * KIB,
            (Arch::A3, TileLoc::Acc) => 128 * KIB,
            (Arch::A5, TileLoc::Acc) => 256 * KIB,
            (_, TileLoc::Bias) => KIB,
            (_, TileLoc::Scaling) => 4 * KIB,
        }
    }
}

/// A scalar (element) type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// `i1`.
    I1,
    /// `i8` / `si8`.
    I8,
    /// `i16` / `si16`.
    I16,
    /// `i32` / `si32`.
    I32,
    /// `i64` / `si64`.
    I64,
    /// `ui8`.
    U8,
    /// `ui16`.
    U16,
    /// `ui32`.
    U32,
    /// `ui64`.
    U64,
    /// `index` (64-bit signed in the generated C++).
    Index,
    /// `f16`.
    F16,
    /// `bf16`.
    BF16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

impl ScalarType {
    /// Parses a builtin scalar type name.
    pub fn from_name(name: &str) -> Option<ScalarType> {
        Some(match name {
            "i1" => ScalarType::I1,
            "i8" | "si8" => ScalarType::I8,
            "i16" | "si16" => ScalarType::I16,
            "i32" | "si32" => ScalarType::I32,
            "i64" | "si64" => ScalarType::I64,
            "ui8" => ScalarType::U8,
            "ui16" => ScalarType::U16,
            "ui32" => ScalarType::U32,
            "ui64" => ScalarType::U64,
            "index" => ScalarType::Index,
            "f16" => ScalarType::F16,
            "bf16" => ScalarType::BF16,
            "f32" => ScalarType::F32,
            "f64" => ScalarType::F64,
            _ => return None,
        })
    }

    /// The `.pto` spelling.
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::I1 => "i1",
            ScalarType::I8 => "i8",
            ScalarType::I16 => "i16",
            ScalarType::I32 => "i32",
            ScalarType::I64 => "i64",
            ScalarType::U8 => "ui8",
            ScalarType::U16 => "ui16",
            ScalarType::U32 => "ui32",
            ScalarType::U64 => "ui64",
            ScalarType::Index => "index",
            ScalarType::F16 => "f16",
            ScalarType::BF16 => "bf16",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }

    /// The C++ spelling.
    pub fn cpp(self) -> &'static str {
        match self {
            ScalarType::I1 => "bool",
            ScalarType::I8 => "int8_t",
            ScalarType::I16 => "int16_t",
            ScalarType::I32 => "int32_t",
            ScalarType::I64 | ScalarType::Index => "int64_t",
            ScalarType::U8 => "uint8_t",
            ScalarType::U16 => "uint16_t",
            ScalarType::U32 => "uint32_t",
            ScalarType::U64 => "uint64_t",
            ScalarType::F16 => "half",
            ScalarType::BF16 => "bfloat16_t",
            ScalarType::F32 => "float",
            ScalarType::F64 => "double",
        }
    }

    /// The unsigned C++ type of the same width (integers only; `bool` for `i1`).
    pub fn cpp_unsigned(self) -> &'static str {
        match self {
            ScalarType::I1 => "bool",
            ScalarType::I8 | ScalarType::U8 => "uint8_t",
            ScalarType::I16 | ScalarType::U16 => "uint16_t",
            ScalarType::I32 | ScalarType::U32 => "uint32_t",
            _ => "uint64_t",
        }
    }

    /// The signed C++ type of the same width (integers only).
    pub fn cpp_signed(self) -> &'static str {
        match self {
            ScalarType::I1 => "bool",
            ScalarType::I8 | ScalarType::U8 => "int8_t",
            ScalarType::I16 | ScalarType::U16 => "int16_t",
            ScalarType::I32 | ScalarType::U32 => "int32_t",
            _ => "int64_t",
        }
    }

    /// Storage bytes of one element.
    pub fn bytes(self) -> u64 {
        match self {
            ScalarType::I1 | ScalarType::I8 | ScalarType::U8 => 1,
            ScalarType::I16 | ScalarType::U16 | ScalarType::F16 | ScalarType::BF16 => 2,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            _ => 8,
        }
    }

    /// True for floating-point types.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ScalarType::F16 | ScalarType::BF16 | ScalarType::F32 | ScalarType::F64
        )
    }

    /// True for integer types (including `index` and `i1`).
    pub fn is_int(self) -> bool {
        !self.is_float()
    }

    /// True for the explicitly unsigned integer types.
    pub fn is_unsigned(self) -> bool {
        matches!(
            self,
            ScalarType::U8 | ScalarType::U16 | ScalarType::U32 | ScalarType::U64
        )
    }

    /// Width in bits.
    pub fn bits(self) -> u32 {
        match self {
            ScalarType::I1 => 1,
            other => (other.bytes() * 8) as u32,
        }
    }
}

/// A dimension: static or `?`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// A known extent.
    Static(i64),
    /// `?`: known at run time only.
    Dynamic,
}

impl Dim {
    /// The static value, if any.
    pub fn value(self) -> Option<i64> {
        match self {
            Dim::Static(v) => Some(v),
            Dim::Dynamic => None,
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Static(v) => write!(f, "{v}"),
            Dim::Dynamic => f.write_str("?"),
        }
    }
}

/// Where a tile lives (`loc=` of `!pto.tile_buf`, `#pto.address_space<...>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TileLoc {
    /// UB.
    Vec,
    /// L1.
    Mat,
    /// L0A.
    Left,
    /// L0B.
    Right,
    /// L0C.
    Acc,
    /// The bias table.
    Bias,
    /// The fixpipe scaling buffer.
    Scaling,
}

impl TileLoc {
    /// Parses a `loc` mnemonic.
    pub fn from_name(name: &str) -> Option<TileLoc> {
        Some(match name {
            "vec" | "ub" => TileLoc::Vec,
            "mat" => TileLoc::Mat,
            "left" => TileLoc::Left,
            "right" => TileLoc::Right,
            "acc" => TileLoc::Acc,
            "bias" => TileLoc::Bias,
            "scaling" => TileLoc::Scaling,
            _ => return None,
        })
    }

    /// The mnemonic.
    pub fn name(self) -> &'static str {
        match self {
            TileLoc::Vec => "vec",
            TileLoc::Mat => "mat",
            TileLoc::Left => "left",
            TileLoc::Right => "right",
            TileLoc::Acc => "acc",
            TileLoc::Bias => "bias",
            TileLoc::Scaling => "scaling",
        }
    }

    /// The memory's name in messages.
    pub fn memory_name(self) -> &'static str {
        match self {
            TileLoc::Vec => "UB",
            TileLoc::Mat => "L1",
            TileLoc::Left => "L0A",
            TileLoc::Right => "L0B",
            TileLoc::Acc => "L0C",
            TileLoc::Bias => "BIAS",
            TileLoc::Scaling => "FBUF",
        }
    }

    /// `TileType::...`.
    pub fn cpp(self) -> &'static str {
        match self {
            TileLoc::Vec => "TileType::Vec",
            TileLoc::Mat => "TileType::Mat",
            TileLoc::Left => "TileType::Left",
            TileLoc::Right => "TileType::Right",
            TileLoc::Acc => "TileType::Acc",
            TileLoc::Bias => "TileType::Bias",
            TileLoc::Scaling => "TileType::Scaling",
        }
    }

    /// The alignment level-2 planning gives tiles of this memory (bytes).
    pub fn alignment(self) -> u64 {
        match self {
            TileLoc::Vec => 32,
            TileLoc::Bias | TileLoc::Scaling => 64,
            TileLoc::Mat | TileLoc::Left | TileLoc::Right => 512,
            TileLoc::Acc => 1024,
        }
    }
}

/// Block layout of a tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BLayout {
    /// `row_major`.
    RowMajor,
    /// `col_major`.
    ColMajor,
}

/// Inner (fractal) layout of a tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SLayout {
    /// `none_box`: plain row/column major.
    NoneBox,
    /// `row_major` boxes.
    RowMajor,
    /// `col_major` boxes.
    ColMajor,
}

/// What TFILLPAD writes outside the valid region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PadValue {
    /// `null` / 0.
    Null,
    /// `zero` / 1.
    Zero,
    /// `max` / 2.
    Max,
    /// `min` / 3.
    Min,
}

/// Compact mode of a tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactMode {
    /// `null` / 0.
    Null,
    /// `normal` / 1.
    Normal,
    /// `row_plus_one` / 2.
    RowPlusOne,
}

impl BLayout {
    /// Parses the mnemonic.
    pub fn from_name(s: &str) -> Option<BLayout> {
        match s {
            "row_major" => Some(BLayout::RowMajor),
            "col_major" => Some(BLayout::ColMajor),
            _ => None,
        }
    }
    /// The mnemonic.
    pub fn name(self) -> &'static str {
        match self {
            BLayout::RowMajor => "row_major",
            BLayout::ColMajor => "col_major",
        }
    }
    /// `BLayout::...`.
    pub fn cpp(self) -> &'static str {
        match self {
            BLayout::RowMajor => "BLayout::RowMajor",
            BLayout::ColMajor => "BLayout::ColMajor",
        }
    }
}

impl SLayout {
    /// Parses the mnemonic.
    pub fn from_name(s: &str) -> Option<SLayout> {
        match s {
            "none_box" => Some(SLayout::NoneBox),
            "row_major" => Some(SLayout::RowMajor),
            "col_major" => Some(SLayout::ColMajor),
            _ => None,
        }
    }
    /// The mnemonic.
    pub fn name(self) -> &'static str {
        match self {
            SLayout::NoneBox => "none_box",
            SLayout::RowMajor => "row_major",
            SLayout::ColMajor => "col_major",
        }
    }
    /// `SLayout::...`.
    pub fn cpp(self) -> &'static str {
        match self {
            SLayout::NoneBox => "SLayout::NoneBox",
            SLayout::RowMajor => "SLayout::RowMajor",
            SLayout::ColMajor => "SLayout::ColMajor",
        }
    }
}

impl PadValue {
    /// Parses a mnemonic or its integer code.
    pub fn from_name(s: &str) -> Option<PadValue> {
        match s {
            "null" | "0" => Some(PadValue::Null),
            "zero" | "1" => Some(PadValue::Zero),
            "max" | "2" => Some(PadValue::Max),
            "min" | "3" => Some(PadValue::Min),
            _ => None,
        }
    }
    /// The integer code (`pad=N`).
    pub fn code(self) -> u8 {
        self as u8
    }
    /// `PadValue::...`.
    pub fn cpp(self) -> &'static str {
        match self {
            PadValue::Null => "PadValue::Null",
            PadValue::Zero => "PadValue::Zero",
            PadValue::Max => "PadValue::Max",
            PadValue::Min => "PadValue::Min",
        }
    }
}

impl CompactMode {
    /// Parses a mnemonic or its integer code.
    pub fn from_name(s: &str) -> Option<CompactMode> {
        match s {
            "null" | "0" => Some(CompactMode::Null),
            "normal" | "1" => Some(CompactMode::Normal),
            "row_plus_one" | "2" => Some(CompactMode::RowPlusOne),
            _ => None,
        }
    }
    /// The integer code (`compact=N`).
    pub fn code(self) -> u8 {
        self as u8
    }
    /// `CompactMode::...`.
    pub fn cpp(self) -> &'static str {
        match self {
            CompactMode::Null => "CompactMode::Null",
            CompactMode::Normal => "CompactMode::Normal",
            CompactMode::RowPlusOne => "CompactMode::RowPlusOne",
        }
    }
}

/// `!pto.tile_buf<...>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileBufType {
    /// Memory.
    pub loc: TileLoc,
    /// Element type.
    pub dtype: ScalarType,
    /// Physical rows.
    pub rows: i64,
    /// Physical columns.
    pub cols: i64,
    /// Valid rows.
    pub v_row: Dim,
    /// Valid columns.
    pub v_col: Dim,
    /// Block layout.
    pub blayout: BLayout,
    /// Inner layout.
    pub slayout: SLayout,
    /// Fractal bytes.
    pub fractal: i64,
    /// Pad value.
    pub pad: PadValue,
    /// Compact mode.
    pub compact: CompactMode,
}

impl TileBufType {
    /// The layout defaults ptoas gives a tile of `loc` when the type does not spell them
    /// (blayout, slayout, fractal).
    pub fn defaults(loc: TileLoc, arch: Arch) -> (BLayout, SLayout, i64) {
        match loc {
            TileLoc::Acc => (BLayout::ColMajor, SLayout::RowMajor, 1024),
            TileLoc::Right => (BLayout::RowMajor, SLayout::ColMajor, 512),
            TileLoc::Left if arch == Arch::A3 => (BLayout::RowMajor, SLayout::RowMajor, 512),
            TileLoc::Left | TileLoc::Mat => (BLayout::ColMajor, SLayout::RowMajor, 512),
            TileLoc::Vec | TileLoc::Bias | TileLoc::Scaling => {
                (BLayout::RowMajor, SLayout::NoneBox, 512)
            }
        }
    }

    /// Bytes the tile spans (`rows * cols * sizeof(dtype)`), if it fits in a `u64`.
    pub fn bytes(&self) -> Option<u64> {
        let r = u64::try_from(self.rows).ok()?;
        let c = u64::try_from(self.cols).ok()?;
        r.checked_mul(c)?.checked_mul(self.dtype.bytes())
    }

    /// True when either valid dimension is `?`.
    pub fn is_dynamic(&self) -> bool {
        self.v_row == Dim::Dynamic || self.v_col == Dim::Dynamic
    }

    /// The C++ `Tile<...>` type (11 template parameters).
    pub fn cpp(&self) -> String {
        let vr = self.v_row.value().unwrap_or(-1);
        let vc = self.v_col.value().unwrap_or(-1);
        format!(
            "Tile<{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}>",
            self.loc.cpp(),
            self.dtype.cpp(),
            self.rows,
            self.cols,
            self.blayout.cpp(),
            vr,
            vc,
            self.slayout.cpp(),
            self.fractal,
            self.pad.cpp(),
            self.compact.cpp()
        )
    }

    /// A short description for messages: `vec 16x256xf32`.
    pub fn describe(&self) -> String {
        format!(
            "{} {}x{}x{}",
            self.loc.name(),
            self.rows,
            self.cols,
            self.dtype.name()
        )
    }
}

impl fmt::Display for TileBufType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "!pto.tile_buf<loc={}, dtype={}, rows={}, cols={}, v_row={}, v_col={}, blayout={}, slayout={}, fractal={}, pad={}",
            self.loc.name(),
            self.dtype.name(),
            self.rows,
            self.cols,
            self.v_row,
            self.v_col,
            self.blayout.name(),
            self.slayout.name(),
            self.fractal,
            self.pad.code()
        )?;
        if self.compact != CompactMode::Null {
            write!(f, ", compact={}", self.compact.code())?;
        }
        f.write_str(">")
    }
}

/// A GM tensor layout (`#pto.layout<...>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Row major.
    Nd,
    /// Column major.
    Dn,
    /// Fractal.
    Nz,
}

impl Layout {
    /// Parses the mnemonic.
    pub fn from_name(s: &str) -> Option<Layout> {
        match s {
            "nd" | "ND" => Some(Layout::Nd),
            "dn" | "DN" => Some(Layout::Dn),
            "nz" | "NZ" => Some(Layout::Nz),
            _ => None,
        }
    }
    /// The mnemonic.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Nd => "nd",
            Layout::Dn => "dn",
            Layout::Nz => "nz",
        }
    }
    /// `pto::Layout::...`.
    pub fn cpp(self) -> &'static str {
        match self {
            Layout::Nd => "pto::Layout::ND",
            Layout::Dn => "pto::Layout::DN",
            Layout::Nz => "pto::Layout::NZ",
        }
    }
}

/// A PTO-AS type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    /// A scalar.
    Scalar(ScalarType),
    /// `!pto.ptr<T[, gm|ub]>`.
    Ptr {
        /// Pointee.
        elem: ScalarType,
        /// True for `ub` pointers.
        ub: bool,
    },
    /// `!pto.tensor_view<...>`.
    TensorView {
        /// Shape.
        shape: Vec<Dim>,
        /// Element type.
        elem: ScalarType,
        /// Optional layout parameter.
        layout: Option<Layout>,
    },
    /// `!pto.partition_tensor_view<...>`.
    PartitionView {
        /// Shape.
        shape: Vec<Dim>,
        /// Element type.
        elem: ScalarType,
        /// Optional layout parameter.
        layout: Option<Layout>,
    },
    /// `!pto.tile_buf<...>`.
    TileBuf(TileBufType),
    /// `!pto.pipe`.
    Pipe,
    /// `memref<...xT[, #pto.address_space<gm>]>`: a GM buffer (passed as a pointer).
    MemRef {
        /// Shape.
        shape: Vec<Dim>,
        /// Element type.
        elem: ScalarType,
    },
}

impl Type {
    /// The scalar type, if this is one.
    pub fn scalar(&self) -> Option<ScalarType> {
        match self {
            Type::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    /// The tile type, if this is one.
    pub fn tile(&self) -> Option<&TileBufType> {
        match self {
            Type::TileBuf(t) => Some(t),
            _ => None,
        }
    }

    /// The C++ type of a value of this type, when it has one.
    pub fn cpp(&self) -> Option<String> {
        Some(match self {
            Type::Scalar(s) => s.cpp().to_string(),
            Type::Ptr { elem, ub } => {
                format!(
                    "{} {}*",
                    if *ub { "__ubuf__" } else { "__gm__" },
                    elem.cpp()
                )
            }
            Type::MemRef { elem, .. } => format!("__gm__ {}*", elem.cpp()),
            Type::TileBuf(t) => t.cpp(),
            Type::Pipe | Type::TensorView { .. } | Type::PartitionView { .. } => return None,
        })
    }
}

fn write_shape(f: &mut fmt::Formatter<'_>, shape: &[Dim], elem: ScalarType) -> fmt::Result {
    for d in shape {
        write!(f, "{d}x")?;
    }
    f.write_str(elem.name())
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(s) => f.write_str(s.name()),
            Type::Ptr { elem, ub } => {
                if *ub {
                    write!(f, "!pto.ptr<{}, ub>", elem.name())
                } else {
                    write!(f, "!pto.ptr<{}>", elem.name())
                }
            }
            Type::TensorView {
                shape,
                elem,
                layout,
            }
            | Type::PartitionView {
                shape,
                elem,
                layout,
            } => {
                let kw = if matches!(self, Type::TensorView { .. }) {
                    "tensor_view"
                } else {
                    "partition_tensor_view"
                };
                write!(f, "!pto.{kw}<")?;
                write_shape(f, shape, *elem)?;
                if let Some(l) = layout {
                    write!(f, ", #pto.layout<{}>", l.name())?;
                }
                f.write_str(">")
            }
            Type::TileBuf(t) => t.fmt(f),
            Type::Pipe => f.write_str("!pto.pipe"),
            Type::MemRef { shape, elem } => {
                f.write_str("memref<")?;
                write_shape(f, shape, *elem)?;
                f.write_str(", #pto.address_space<gm>>")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ScalarType;
    use pto_base::dtype::{Kind, ELEMENT_TYPES};

    /// Every element type the compiler generates (`pto_name`) parses here with the one
    /// table's C++ type, width and kind: the `.pto` spellings are one set.
    #[test]
    fn scalar_types_agree_with_the_element_type_table() {
        for t in ELEMENT_TYPES.iter().filter(|t| t.pto_name.is_some()) {
            let name = t.pto_name.unwrap_or_default();
            let s = ScalarType::from_name(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(s.name(), name);
            assert_eq!(Some(s.cpp()), t.c_type, "{name}");
            assert_eq!(s.bytes() * 8, u64::from(t.bits), "{name}");
            assert_eq!(s.is_float(), t.kind == Kind::Float, "{name}");
            assert_eq!(s.is_unsigned(), t.kind == Kind::UInt, "{name}");
        }
    }
}
