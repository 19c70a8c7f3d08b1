//! Types of the IR: element types ([`DataType`]), memories ([`MemorySpace`]), value types
//! ([`Type`]), function kinds ([`FunctionType`]), parameter directions and scope levels, with
//! their DSL spellings (`pl.FP32`, `pl.Mem.Left`, ...) and their spellings in the generated
//! files (`.pto` element types, C++ types, the runtime's `DataType::` names).

use std::fmt;

use pto_base::dtype::{ElementType, Kind};

/// An element type (PyPTO's `DataType`, written `pl.FP32`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `pl.BOOL`.
    Bool,
    /// `pl.INT8`.
    Int8,
    /// `pl.INT16`.
    Int16,
    /// `pl.INT32`.
    Int32,
    /// `pl.INT64`.
    Int64,
    /// `pl.UINT8`.
    UInt8,
    /// `pl.UINT16`.
    UInt16,
    /// `pl.UINT32`.
    UInt32,
    /// `pl.UINT64`.
    UInt64,
    /// `pl.FP16`.
    Fp16,
    /// `pl.BF16`.
    Bf16,
    /// `pl.FP32`.
    Fp32,
    /// `pl.INDEX`: an integer index (64-bit).
    Index,
}

/// Every data type, in the order the DSL documents them.
pub const ALL_DATA_TYPES: [DataType; 13] = [
    DataType::Bool,
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::UInt8,
    DataType::UInt16,
    DataType::UInt32,
    DataType::UInt64,
    DataType::Fp16,
    DataType::Bf16,
    DataType::Fp32,
    DataType::Index,
];

impl DataType {
    /// The DSL constant name without `pl.` (`FP32`, `BF16`, `INDEX`, ...).
    pub fn pl_name(self) -> &'static str {
        match self {
            DataType::Bool => "BOOL",
            DataType::Int8 => "INT8",
            DataType::Int16 => "INT16",
            DataType::Int32 => "INT32",
            DataType::Int64 => "INT64",
            DataType::UInt8 => "UINT8",
            DataType::UInt16 => "UINT16",
            DataType::UInt32 => "UINT32",
            DataType::UInt64 => "UINT64",
            DataType::Fp16 => "FP16",
            DataType::Bf16 => "BF16",
            DataType::Fp32 => "FP32",
            DataType::Index => "INDEX",
        }
    }

    /// The type named `pl.<name>` (`FP32`, ...).
    pub fn from_pl_name(name: &str) -> Option<DataType> {
        ALL_DATA_TYPES.into_iter().find(|d| d.pl_name() == name)
    }

    /// The type's row of the one table of element types
    /// ([`pto_base::dtype::ELEMENT_TYPES`]), where every spelling below comes from.
    pub fn element_type(self) -> &'static ElementType {
        ElementType::from_member(self.pl_name())
            .expect("every IR data type has a row (types::tests::data_types_are_rows_of_the_table)")
    }

    /// PyPTO's `str(DataType)`, the spelling of `compiled_meta.json` (`fp32`, `bfloat16`).
    pub fn pypto_str(self) -> &'static str {
        self.element_type().name
    }

    /// The `.pto` (MLIR) element type: `f32`, `bf16`, `i32`, `index`, ...
    pub fn pto_name(self) -> &'static str {
        self.element_type()
            .pto_name
            .expect("every IR data type has a .pto name (types::tests)")
    }

    /// The C++ type of one element (kernel wrappers, orchestration scalars).
    pub fn cpp_type(self) -> &'static str {
        self.element_type()
            .c_type
            .expect("every IR data type has a C++ type (types::tests)")
    }

    /// The runtime's element type of a tensor of this type, `None` for `INDEX`.
    pub fn runtime_type(self) -> Option<pto_base::dtype::DataType> {
        self.element_type().simpler
    }

    /// The runtime's `DataType::` enumerator (`TensorCreateInfo`), `None` for `INDEX`.
    pub fn runtime_enum(self) -> Option<String> {
        self.runtime_type()
            .map(|d| format!("DataType::{}", d.name()))
    }

    /// Bytes per element.
    pub fn size_bytes(self) -> u64 {
        self.element_type().size_bytes()
    }

    /// A floating-point type.
    pub fn is_float(self) -> bool {
        self.element_type().kind == Kind::Float
    }

    /// An integer type (`INDEX` included, `BOOL` excluded).
    pub fn is_int(self) -> bool {
        matches!(self.element_type().kind, Kind::Int | Kind::UInt)
    }

    /// A signed integer type (`INDEX` included).
    pub fn is_signed_int(self) -> bool {
        self.element_type().kind == Kind::Int
    }

    /// The host element type of a tensor of this type, when hosts can hold one (`None` for
    /// `INDEX`, which the runtime does not carry as a tensor type).
    pub fn host_dtype(self) -> Option<pto_build_output::DType> {
        let code = self.runtime_type()?.code();
        pto_build_output::DType::from_runtime_code(u8::try_from(code).ok()?).ok()
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pl.{}", self.pl_name())
    }
}

/// An on-chip memory (PyPTO's `MemorySpace`, written `pl.Mem.Vec`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemorySpace {
    /// The vector core's unified buffer (UB).
    Vec,
    /// The cube core's L1 buffer.
    Mat,
    /// L0A: the left matmul operand.
    Left,
    /// L0B: the right matmul operand.
    Right,
    /// L0C: the matmul accumulator.
    Acc,
    /// The bias table.
    Bias,
}

/// Every memory.
pub const ALL_MEMORIES: [MemorySpace; 6] = [
    MemorySpace::Vec,
    MemorySpace::Mat,
    MemorySpace::Left,
    MemorySpace::Right,
    MemorySpace::Acc,
    MemorySpace::Bias,
];

impl MemorySpace {
    /// The member name (`Vec`, `Mat`, `Left`, `Right`, `Acc`, `Bias`).
    pub fn name(self) -> &'static str {
        match self {
            MemorySpace::Vec => "Vec",
            MemorySpace::Mat => "Mat",
            MemorySpace::Left => "Left",
            MemorySpace::Right => "Right",
            MemorySpace::Acc => "Acc",
            MemorySpace::Bias => "Bias",
        }
    }

    /// The memory with member name `name`.
    pub fn from_name(name: &str) -> Option<MemorySpace> {
        ALL_MEMORIES.into_iter().find(|m| m.name() == name)
    }

    /// The `loc=` of a `.pto` `tile_buf`.
    pub fn pto_loc(self) -> &'static str {
        match self {
            MemorySpace::Vec => "vec",
            MemorySpace::Mat => "mat",
            MemorySpace::Left => "left",
            MemorySpace::Right => "right",
            MemorySpace::Acc => "acc",
            MemorySpace::Bias => "bias",
        }
    }

    /// Whether tiles here belong to the cube core (AIC).
    pub fn is_cube(self) -> bool {
        !matches!(self, MemorySpace::Vec)
    }

    /// Capacity in bytes on a2a3 (UB 192 KiB, L1 512 KiB, L0A/L0B 64 KiB, L0C 128 KiB).
    pub fn capacity_bytes(self) -> u64 {
        match self {
            MemorySpace::Vec => 192 << 10,
            MemorySpace::Mat => 512 << 10,
            MemorySpace::Left | MemorySpace::Right => 64 << 10,
            MemorySpace::Acc => 128 << 10,
            MemorySpace::Bias => 1 << 10,
        }
    }
}

impl fmt::Display for MemorySpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pl.Mem.{}", self.name())
    }
}

/// A dimension known only at run time (`pl.dynamic(...)`, or a size computed from scalars
/// the orchestration reads): the operation that makes such a tensor carries the value.
pub const DYNAMIC_DIM: i64 = -1;

/// A global-memory tensor type: `pl.Tensor[[d0, d1], dtype]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    /// The dimensions: positive, or [`DYNAMIC_DIM`] for one known only at run time.
    pub shape: Vec<i64>,
    /// The element type.
    pub dtype: DataType,
}

impl TensorType {
    /// Elements in the tensor (meaningful for a static shape only).
    pub fn numel(&self) -> i64 {
        self.shape.iter().product()
    }

    /// Whether some dimension is known only at run time.
    pub fn is_dynamic(&self) -> bool {
        self.shape.contains(&DYNAMIC_DIM)
    }

    /// Whether a value of type `other` may be passed where this type is expected: the same
    /// element type and rank, every dimension equal or dynamic on either side.
    pub fn admits(&self, other: &TensorType) -> bool {
        self.dtype == other.dtype
            && self.shape.len() == other.shape.len()
            && self
                .shape
                .iter()
                .zip(&other.shape)
                .all(|(a, b)| a == b || *a == DYNAMIC_DIM || *b == DYNAMIC_DIM)
    }
}

/// An on-chip tile type: `pl.Tile[[rows, cols], dtype, pl.Mem.X]` (always two-dimensional).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TileType {
    /// Rows.
    pub rows: i64,
    /// Columns.
    pub cols: i64,
    /// The element type.
    pub dtype: DataType,
    /// The memory it lives in.
    pub memory: MemorySpace,
}

impl TileType {
    /// Bytes of the tile's storage.
    pub fn bytes(&self) -> u64 {
        (self.rows.max(0) as u64) * (self.cols.max(0) as u64) * self.dtype.size_bytes()
    }
}

/// The type of a value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// A scalar (`pl.Scalar[dtype]`).
    Scalar(DataType),
    /// A global-memory tensor.
    Tensor(TensorType),
    /// An on-chip tile.
    Tile(TileType),
    /// A task id (`Scalar[TASK_ID]`, the second result of `pl.submit`).
    TaskId,
    /// A fixed-length array of task ids or integers (`pl.Array[N, pl.TASK_ID]`,
    /// `pl.array.create(N, dtype)`): orchestration-local, updated in place.
    Array {
        /// The number of elements.
        len: i64,
        /// The element type: [`Type::TaskId`] or an integer / `BOOL` scalar.
        elem: Box<Type>,
    },
    /// A tuple (multi-result calls).
    Tuple(Vec<Type>),
    /// A list of index expressions (offsets, shapes).
    List,
    /// No value.
    Unit,
}

impl Type {
    /// A tensor type.
    pub fn tensor(shape: Vec<i64>, dtype: DataType) -> Type {
        Type::Tensor(TensorType { shape, dtype })
    }

    /// A tile type.
    pub fn tile(rows: i64, cols: i64, dtype: DataType, memory: MemorySpace) -> Type {
        Type::Tile(TileType {
            rows,
            cols,
            dtype,
            memory,
        })
    }

    /// The tensor type, if this is one.
    pub fn as_tensor(&self) -> Option<&TensorType> {
        match self {
            Type::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// The tile type, if this is one.
    pub fn as_tile(&self) -> Option<&TileType> {
        match self {
            Type::Tile(t) => Some(t),
            _ => None,
        }
    }

    /// The scalar element type, if this is a scalar.
    pub fn as_scalar(&self) -> Option<DataType> {
        match self {
            Type::Scalar(d) => Some(*d),
            _ => None,
        }
    }

    /// An array of `len` elements of `elem` ([`Type::TaskId`] or an integer / `BOOL`
    /// scalar); `None` for another element type.
    pub fn array(len: i64, elem: Type) -> Option<Type> {
        let ok = match &elem {
            Type::TaskId => true,
            Type::Scalar(d) => d.is_int() || *d == DataType::Bool,
            _ => false,
        };
        (ok && len > 0).then(|| Type::Array {
            len,
            elem: Box::new(elem),
        })
    }

    /// The length and element type of an array.
    pub fn as_array(&self) -> Option<(i64, &Type)> {
        match self {
            Type::Array { len, elem } => Some((*len, elem)),
            _ => None,
        }
    }

    /// The DSL name of an array element type: `pl.TASK_ID`, `pl.INT32`, ...
    fn element_name(&self) -> String {
        match self {
            Type::TaskId => "pl.TASK_ID".to_string(),
            Type::Scalar(d) => d.to_string(),
            other => other.annotation(),
        }
    }

    /// A tensor.
    pub fn is_tensor(&self) -> bool {
        matches!(self, Type::Tensor(_))
    }

    /// The DSL annotation of this type (`pl.Tensor[[16, 16], pl.FP32]`, ...).
    pub fn annotation(&self) -> String {
        match self {
            Type::Scalar(d) => format!("pl.Scalar[{d}]"),
            Type::Tensor(t) => format!("pl.Tensor[{}, {}]", shape_text(&t.shape), t.dtype),
            Type::Tile(t) => {
                let shape = shape_text(&[t.rows, t.cols]);
                if t.memory == MemorySpace::Vec {
                    format!("pl.Tile[{shape}, {}]", t.dtype)
                } else {
                    format!("pl.Tile[{shape}, {}, {}]", t.dtype, t.memory)
                }
            }
            Type::TaskId => "pl.Scalar[pl.TASK_ID]".to_string(),
            Type::Array { len, elem } => format!("pl.Array[{len}, {}]", elem.element_name()),
            Type::Tuple(items) => format!(
                "pl.Tuple[{}]",
                items
                    .iter()
                    .map(Type::annotation)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Type::List => "list".to_string(),
            Type::Unit => "None".to_string(),
        }
    }

    /// A short description for messages (`Tensor[[16, 16], FP32]`, `Scalar[INT32]`).
    pub fn describe(&self) -> String {
        self.annotation().replace("pl.", "")
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.annotation())
    }
}

/// `[d0, d1, ...]` (a dynamic dimension as `pl.dynamic("dyn")`).
pub fn shape_text(shape: &[i64]) -> String {
    format!(
        "[{}]",
        shape
            .iter()
            .map(|&d| {
                if d == DYNAMIC_DIM {
                    "pl.dynamic(\"dyn\")".to_string()
                } else {
                    d.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// What a function is (PyPTO's `FunctionType`, written `pl.FunctionType.X`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FunctionType {
    /// Unspecified; promoted to `Orchestration` when it outlines a scope.
    Opaque,
    /// The host / AICPU control plane that submits kernel tasks.
    Orchestration,
    /// An AICore kernel not yet specialised to a core type.
    InCore,
    /// A cube-core kernel.
    Aic,
    /// A vector-core kernel.
    Aiv,
    /// A co-scheduled AIC + AIV group (a mixed kernel).
    Group,
    /// An SPMD dispatch wrapper.
    Spmd,
    /// Spliced into every caller by `InlineFunctions`, then deleted.
    Inline,
    /// A recordable orchestration fragment.
    Graph,
}

/// Every function type, in PyPTO's value order.
pub const ALL_FUNCTION_TYPES: [FunctionType; 9] = [
    FunctionType::Opaque,
    FunctionType::Orchestration,
    FunctionType::InCore,
    FunctionType::Aic,
    FunctionType::Aiv,
    FunctionType::Group,
    FunctionType::Spmd,
    FunctionType::Inline,
    FunctionType::Graph,
];

impl FunctionType {
    /// The member name (`Orchestration`, `AIV`, ...).
    pub fn name(self) -> &'static str {
        match self {
            FunctionType::Opaque => "Opaque",
            FunctionType::Orchestration => "Orchestration",
            FunctionType::InCore => "InCore",
            FunctionType::Aic => "AIC",
            FunctionType::Aiv => "AIV",
            FunctionType::Group => "Group",
            FunctionType::Spmd => "Spmd",
            FunctionType::Inline => "Inline",
            FunctionType::Graph => "Graph",
        }
    }

    /// The type with member name `name`.
    pub fn from_name(name: &str) -> Option<FunctionType> {
        ALL_FUNCTION_TYPES.into_iter().find(|t| t.name() == name)
    }

    /// A kernel that runs on an AICore (InCore, AIC, AIV, Group).
    pub fn is_kernel(self) -> bool {
        matches!(
            self,
            FunctionType::InCore | FunctionType::Aic | FunctionType::Aiv | FunctionType::Group
        )
    }
}

/// How a function parameter is passed (PyPTO's `ParamDirection`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamDirection {
    /// Read only (`pl.Tensor[...]`, scalars).
    In,
    /// Write only (`pl.Out[...]`).
    Out,
    /// Read and written (`pl.InOut[...]`).
    InOut,
}

impl ParamDirection {
    /// `In`, `Out` or `InOut`.
    pub fn name(self) -> &'static str {
        match self {
            ParamDirection::In => "In",
            ParamDirection::Out => "Out",
            ParamDirection::InOut => "InOut",
        }
    }

    /// The direction named `name`.
    pub fn from_name(name: &str) -> Option<ParamDirection> {
        match name {
            "In" => Some(ParamDirection::In),
            "Out" => Some(ParamDirection::Out),
            "InOut" => Some(ParamDirection::InOut),
            _ => None,
        }
    }
}

/// The hierarchy level of a `pl.at(level=...)` scope (PyPTO's `Level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// One AICore group: the scope is outlined into an InCore kernel.
    CoreGroup,
    /// A whole chip.
    Chip,
    /// The host.
    Host,
}

impl Level {
    /// The member name (`CORE_GROUP`, `CHIP`, `HOST`).
    pub fn name(self) -> &'static str {
        match self {
            Level::CoreGroup => "CORE_GROUP",
            Level::Chip => "CHIP",
            Level::Host => "HOST",
        }
    }

    /// The level named `name`.
    pub fn from_name(name: &str) -> Option<Level> {
        [Level::CoreGroup, Level::Chip, Level::Host]
            .into_iter()
            .find(|l| l.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The IR's types are the rows of the one table that generated code can hold (a C++
    /// type and a `.pto` name), each once.
    #[test]
    fn data_types_are_rows_of_the_table() {
        use pto_base::dtype::ELEMENT_TYPES;
        let rows: Vec<&str> = ELEMENT_TYPES
            .iter()
            .filter(|t| t.c_type.is_some())
            .map(|t| t.member)
            .collect();
        let mut ours: Vec<&str> = ALL_DATA_TYPES.iter().map(|d| d.pl_name()).collect();
        assert_eq!(ours.len(), rows.len());
        ours.sort_unstable();
        let mut sorted = rows.clone();
        sorted.sort_unstable();
        assert_eq!(ours, sorted);
        for d in ALL_DATA_TYPES {
            assert!(!d.pto_name().is_empty() && !d.cpp_type().is_empty(), "{d}");
            assert_eq!(d.size_bytes() * 8, u64::from(d.element_type().bits), "{d}");
        }
        assert_eq!(DataType::Bf16.runtime_enum().unwrap(), "DataType::BFLOAT16");
        assert_eq!(DataType::Index.runtime_enum(), None);
        assert_eq!(DataType::Index.cpp_type(), "int64_t");
        assert_eq!(DataType::Index.host_dtype(), None);
        assert!(DataType::Index.is_signed_int() && !DataType::Bool.is_int());
        assert!(DataType::UInt8.is_int() && !DataType::UInt8.is_signed_int());
        assert!(DataType::Bf16.is_float() && DataType::Bf16.host_dtype().is_some());
    }

    #[test]
    fn names_round_trip() {
        for d in ALL_DATA_TYPES {
            assert_eq!(DataType::from_pl_name(d.pl_name()), Some(d));
            if d != DataType::Index {
                assert!(pto_build_output::dtype::is_known_pypto_dtype(d.pypto_str()));
            }
        }
        for m in ALL_MEMORIES {
            assert_eq!(MemorySpace::from_name(m.name()), Some(m));
        }
        for t in ALL_FUNCTION_TYPES {
            assert_eq!(FunctionType::from_name(t.name()), Some(t));
        }
        assert_eq!(
            Type::tensor(vec![16, 16], DataType::Fp32).annotation(),
            "pl.Tensor[[16, 16], pl.FP32]"
        );
        assert_eq!(
            Type::tile(16, 32, DataType::Bf16, MemorySpace::Left).annotation(),
            "pl.Tile[[16, 32], pl.BF16, pl.Mem.Left]"
        );
    }
}
