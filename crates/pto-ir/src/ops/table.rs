//! The table of builtin operations ([`OPS`]): one row per operation with everything the
//! other layers derive from it — the IR name, where it may appear, its kind (and for the
//! elementwise kinds the element type it needs and the function the interpreter applies),
//! the DSL spellings (`pl.add`), and the `.pto` op it lowers to (from which the C++
//! instruction follows by ptoas's rule, [`OpInfo::cpp`]). The front end reads it through
//! the native module (`_native.ops()`); docs/ARCHITECTURE.md has the recipe for adding an op.

use crate::ir::BinOp;

/// Where an operation may appear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpLevel {
    /// In kernels and `pl.at` scopes (tiles).
    Tile,
    /// In orchestrations (tensors).
    Tensor,
}

/// The element types an elementwise operation accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elems {
    /// Every numeric element type.
    Any,
    /// Floating-point tiles only (`pl.exp`).
    Float,
    /// Integer tiles only (`pl.and_`).
    Int,
}

impl Elems {
    /// The name `_native.ops()` gives the rule (`any`, `float`, `int`).
    pub fn name(self) -> &'static str {
        match self {
            Elems::Any => "any",
            Elems::Float => "float",
            Elems::Int => "int",
        }
    }
}

/// An element function of two operands (`x + y`).
pub type BinaryFn = fn(f64, f64) -> f64;

/// What kind of operation a row is; the elementwise and reduction kinds carry the element
/// function the interpreter applies, so an operation cannot be added without its semantics.
#[derive(Clone, Copy, Debug)]
pub enum OpKind {
    /// Elementwise tile ⊙ tile (same shape and dtype).
    Binary {
        /// The tile ⊙ scalar form (`tile.adds` for `tile.add`).
        scalar: &'static str,
        /// The IR operator of the scalar ⊙ scalar form (`pl.add(1, 2)` is `+`), if any.
        infix: Option<BinOp>,
        /// The element types accepted.
        elems: Elems,
        /// The element function.
        f: BinaryFn,
    },
    /// Elementwise tile ⊙ scalar: the scalar form of the [`OpKind::Binary`] row naming it,
    /// whose element types and function it shares.
    Scalar,
    /// Elementwise of one tile.
    Unary {
        /// The element types accepted.
        elems: Elems,
        /// The element function.
        f: fn(f64) -> f64,
    },
    /// A reduction of each row (`by_row`) or each column to one value.
    Reduce {
        /// Rows (`[r, c]` → `[r, 1]`) or columns (`[r, c]` → `[1, c]`).
        by_row: bool,
        /// The value of an empty reduction.
        init: f64,
        /// The combining function.
        f: BinaryFn,
    },
    /// A per-row (`by_row`) or per-column vector combined with every element of a tile.
    Expand {
        /// A `[r, 1]` vector (rows) or a `[1, c]` vector (columns).
        by_row: bool,
        /// The element function of (tile element, vector element).
        f: BinaryFn,
    },
    /// Anything else: memory, layout, matmul, queries and tensor operations, each with its
    /// own typing and lowering.
    Other,
}

impl OpKind {
    /// The name `_native.ops()` gives the kind.
    pub fn name(&self) -> &'static str {
        match self {
            OpKind::Binary { .. } => "binary",
            OpKind::Scalar => "scalar",
            OpKind::Unary { .. } => "unary",
            OpKind::Reduce { .. } => "reduce",
            OpKind::Expand { .. } => "expand",
            OpKind::Other => "other",
        }
    }
}

/// One builtin operation.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// The IR name (`tile.add`).
    pub name: &'static str,
    /// Where it may appear.
    pub level: OpLevel,
    /// Whether kernel code (a kernel body or a `pl.at` scope) may use it: every tile
    /// operation, and the tensor operations that address a kernel's tensor parameter (a
    /// window of it, an element read or written in GM).
    pub in_kernels: bool,
    /// Its kind.
    pub kind: OpKind,
    /// The `pl.X` spellings that reach it (`["add"]`); empty when only `pl.tile.X` /
    /// `pl.tensor.X` (the IR name) reaches it.
    pub dsl: &'static [&'static str],
    /// The `.pto` operation it becomes (`pto.tadd`); empty for tensor operations.
    pub pto: &'static str,
    /// For a tile operation PyPTO also spells `pl.tile.X(...)` with its unified signature
    /// (`pl.tile.load(tensor, offsets, shapes)`), the keyword the IR printer always writes
    /// for it (the operation's typing requires it: `ops::tests`). The parser reads a
    /// `pl.tile.X(...)` call of one of the row's spellings without that keyword, or of a
    /// spelling that is no IR name (`pl.tile.create_tile`), as the unified signature.
    pub printer_keyword: Option<&'static str>,
}

impl OpInfo {
    /// The C++ PTO-ISA instruction of a tile operation (`TADD`), by ptoas's lowering rule;
    /// empty for tensor operations.
    pub fn cpp(&self) -> String {
        ptoas::lower::cpp_instruction(self.pto.trim_start_matches("pto."))
    }
}

const fn tile(name: &'static str, dsl: &'static [&'static str], pto: &'static str) -> OpInfo {
    OpInfo {
        name,
        level: OpLevel::Tile,
        in_kernels: true,
        kind: OpKind::Other,
        dsl,
        pto,
        printer_keyword: None,
    }
}

/// A tile operation whose `pl.tile.X` spelling is PyPTO's unified signature too, told from
/// the printer's by `keyword` (see [`OpInfo::printer_keyword`]).
const fn unified(
    name: &'static str,
    dsl: &'static [&'static str],
    pto: &'static str,
    keyword: &'static str,
) -> OpInfo {
    OpInfo {
        printer_keyword: Some(keyword),
        ..tile(name, dsl, pto)
    }
}

const fn tensor(name: &'static str, dsl: &'static [&'static str]) -> OpInfo {
    OpInfo {
        name,
        level: OpLevel::Tensor,
        in_kernels: false,
        kind: OpKind::Other,
        dsl,
        pto: "",
        printer_keyword: None,
    }
}

/// A tensor operation kernel code may use too (see [`OpInfo::in_kernels`]).
const fn kernel_tensor(name: &'static str, dsl: &'static [&'static str]) -> OpInfo {
    OpInfo {
        in_kernels: true,
        ..tensor(name, dsl)
    }
}

const fn ew(
    name: &'static str,
    kind: OpKind,
    dsl: &'static [&'static str],
    pto: &'static str,
) -> OpInfo {
    OpInfo {
        name,
        level: OpLevel::Tile,
        in_kernels: true,
        kind,
        dsl,
        pto,
        printer_keyword: None,
    }
}

const fn binary(scalar: &'static str, infix: Option<BinOp>, elems: Elems, f: BinaryFn) -> OpKind {
    OpKind::Binary {
        scalar,
        infix,
        elems,
        f,
    }
}

const fn unary(elems: Elems, f: fn(f64) -> f64) -> OpKind {
    OpKind::Unary { elems, f }
}

const fn reduce(by_row: bool, init: f64, f: BinaryFn) -> OpKind {
    OpKind::Reduce { by_row, init, f }
}

const fn expand(by_row: bool, f: BinaryFn) -> OpKind {
    OpKind::Expand { by_row, f }
}

/// Bitwise and of two integer elements (exact in `f64` up to 2^53).
fn bit_and(x: f64, y: f64) -> f64 {
    ((x as i64) & (y as i64)) as f64
}

/// Every builtin operation.
#[rustfmt::skip]
pub const OPS: &[OpInfo] = &[
    unified("tile.load", &["load"], "pto.tload", "shapes"),
    tile("tile.store", &["store"], "pto.tstore"),
    ew("tile.add", binary("tile.adds", Some(BinOp::Add), Elems::Any, |x, y| x + y), &["add"], "pto.tadd"),
    ew("tile.sub", binary("tile.subs", Some(BinOp::Sub), Elems::Any, |x, y| x - y), &["sub"], "pto.tsub"),
    ew("tile.mul", binary("tile.muls", Some(BinOp::Mul), Elems::Any, |x, y| x * y), &["mul"], "pto.tmul"),
    ew("tile.div", binary("tile.divs", Some(BinOp::Div), Elems::Any, |x, y| x / y), &["div"], "pto.tdiv"),
    ew("tile.maximum", binary("tile.maxs", Some(BinOp::Max), Elems::Any, f64::max), &["maximum"], "pto.tmax"),
    ew("tile.minimum", binary("tile.mins", Some(BinOp::Min), Elems::Any, f64::min), &["minimum"], "pto.tmin"),
    ew("tile.and", binary("tile.ands", None, Elems::Int, bit_and), &["and_"], "pto.tand"),
    ew("tile.adds", OpKind::Scalar, &["adds"], "pto.tadds"),
    ew("tile.subs", OpKind::Scalar, &["subs"], "pto.tsubs"),
    ew("tile.muls", OpKind::Scalar, &["muls"], "pto.tmuls"),
    ew("tile.divs", OpKind::Scalar, &["divs"], "pto.tdivs"),
    ew("tile.maxs", OpKind::Scalar, &["maxs"], "pto.tmaxs"),
    ew("tile.mins", OpKind::Scalar, &["mins"], "pto.tmins"),
    ew("tile.ands", OpKind::Scalar, &["ands"], "pto.tands"),
    ew("tile.exp", unary(Elems::Float, f64::exp), &["exp"], "pto.texp"),
    ew("tile.log", unary(Elems::Float, f64::ln), &["log"], "pto.tlog"),
    ew("tile.sqrt", unary(Elems::Float, f64::sqrt), &["sqrt"], "pto.tsqrt"),
    ew("tile.rsqrt", unary(Elems::Float, |x| 1.0 / x.sqrt()), &["rsqrt"], "pto.trsqrt"),
    ew("tile.recip", unary(Elems::Float, |x| 1.0 / x), &["recip"], "pto.trecip"),
    ew("tile.neg", unary(Elems::Any, |x| -x), &["neg"], "pto.tneg"),
    ew("tile.abs", unary(Elems::Any, f64::abs), &["abs"], "pto.tabs"),
    ew("tile.relu", unary(Elems::Any, |x| x.max(0.0)), &["relu"], "pto.trelu"),
    unified("tile.cast", &["cast"], "pto.tcvt", "dtype"),
    ew("tile.row_max", reduce(true, f64::NEG_INFINITY, f64::max), &["row_max"], "pto.trowmax"),
    ew("tile.row_sum", reduce(true, 0.0, |x, y| x + y), &["row_sum"], "pto.trowsum"),
    ew("tile.row_min", reduce(true, f64::INFINITY, f64::min), &["row_min"], "pto.trowmin"),
    ew("tile.col_max", reduce(false, f64::NEG_INFINITY, f64::max), &["col_max"], "pto.tcolmax"),
    ew("tile.col_sum", reduce(false, 0.0, |x, y| x + y), &["col_sum"], "pto.tcolsum"),
    ew("tile.col_min", reduce(false, f64::INFINITY, f64::min), &["col_min"], "pto.tcolmin"),
    ew("tile.row_expand", expand(true, |_, v| v), &["row_expand"], "pto.trowexpand"),
    ew("tile.row_expand_add", expand(true, |x, v| x + v), &["row_expand_add"], "pto.trowexpandadd"),
    ew("tile.row_expand_sub", expand(true, |x, v| x - v), &["row_expand_sub"], "pto.trowexpandsub"),
    ew("tile.row_expand_mul", expand(true, |x, v| x * v), &["row_expand_mul"], "pto.trowexpandmul"),
    ew("tile.row_expand_div", expand(true, |x, v| x / v), &["row_expand_div"], "pto.trowexpanddiv"),
    ew("tile.col_expand", expand(false, |_, v| v), &["col_expand"], "pto.tcolexpand"),
    ew("tile.col_expand_add", expand(false, |x, v| x + v), &["col_expand_add"], "pto.tcolexpandadd"),
    ew("tile.col_expand_sub", expand(false, |x, v| x - v), &["col_expand_sub"], "pto.tcolexpandsub"),
    ew("tile.col_expand_mul", expand(false, |x, v| x * v), &["col_expand_mul"], "pto.tcolexpandmul"),
    ew("tile.col_expand_div", expand(false, |x, v| x / v), &["col_expand_div"], "pto.tcolexpanddiv"),
    tile("tile.matmul", &["matmul"], "pto.tmatmul"),
    tile("tile.matmul_acc", &["matmul_acc"], "pto.tmatmul.acc"),
    unified("tile.move", &["move"], "pto.tmov", "target_memory"),
    unified("tile.full", &["full", "create_tile"], "pto.texpands", "shape"),
    tile("tile.expands", &["expands"], "pto.texpands"),
    tile("tile.concat", &["concat"], "pto.tconcat"),
    tile("tile.reshape", &[], "pto.treshape"),
    tile("tile.transpose", &["transpose"], "pto.ttrans"),
    tile("tile.assemble", &[], "pto.tinsert"),
    tile("tile.slice", &[], "pto.textract"),
    tile("tile.fillpad", &["fillpad"], "pto.tfillpad"),
    tile("tile.transpose_view", &[], "pto.treshape"),
    tile("tile.get_block_idx", &[], "pto.get_block_idx"),
    tile("tile.get_block_num", &[], "pto.get_block_num"),
    // Issue 26 (auto-tiled matmuls): a cube scratch tile of unspecified contents, made by the
    // front end's auto-tiler (no DSL spelling of its own).
    tile("tile.alloc", &[], "pto.alloc_tile"),
    tensor("tensor.create", &["create_tensor", "create"]),
    kernel_tensor("tensor.slice", &["slice"]),
    tensor("tensor.reshape", &["reshape"]),
    kernel_tensor("tensor.read", &["read"]),
    kernel_tensor("tensor.write", &["write"]),
    tensor("tensor.assemble", &["assemble"]),
    tensor("tensor.dim", &[]),
    tensor("array.create", &[]),
    tensor("array.get_element", &[]),
    tensor("array.update_element", &[]),
    tensor("system.task_dummy", &[]),
    // Distributed (HOST-level) operations, spelled `pld.*`: type rules in `crate::dist`.
    tensor("dist.world_size", &[]),
    tensor("dist.alloc_window_buffer", &[]),
    tensor("dist.window", &[]),
    tensor("dist.slice", &[]),
    tensor("dist.device_ctx", &[]),
    tensor("dist.rank", &[]),
    tensor("dist.nranks", &[]),
    tensor("dist.remote_load", &[]),
    tensor("dist.remote_store", &[]),
    tensor("dist.notify", &[]),
    tensor("dist.wait", &[]),
    tensor("dist.put", &[]),
    tensor("dist.get", &[]),
];

/// The operation named `name`.
pub fn op_info(name: &str) -> Option<&'static OpInfo> {
    OPS.iter().find(|o| o.name == name)
}

/// The binary tile ops and their tile-scalar forms (`pl.add(t, 1.0)` is `tile.adds`).
pub fn tile_binary() -> impl Iterator<Item = (&'static str, &'static str)> {
    OPS.iter().filter_map(|o| match o.kind {
        OpKind::Binary { scalar, .. } => Some((o.name, scalar)),
        _ => None,
    })
}

/// The row whose kind is [`OpKind::Binary`] with `scalar` as its tile-scalar form.
pub fn binary_of_scalar(scalar: &str) -> Option<&'static OpInfo> {
    OPS.iter()
        .find(|o| matches!(o.kind, OpKind::Binary { scalar: s, .. } if s == scalar))
}
