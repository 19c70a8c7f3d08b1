//! The typed IR the parser builds and the passes read: a module of functions, each with an
//! arena of SSA values (handles, never names), blocks of ops, and typed attributes.
//!
//! Ops with a special syntax have their own [`OpKind`] variant; the ~100 destination-passing
//! tile ops share [`OpKind::Tile`] (`pto.OP ins(...) outs(...) {attrs}`), whose lowering is
//! table-driven (see `lower::ops`).

use crate::source::Span;
use crate::types::{ScalarType, TileLoc, Type};

/// A handle on an SSA value of a function (index into [`Func::values`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId(pub u32);

impl ValueId {
    /// The index into the function's value arena.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One SSA value: its source name (without `%`) and type.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueInfo {
    /// The name as written (`arg0`, `c0_i64`, `3`); results of a multi-result op are
    /// `name#i`.
    pub name: String,
    /// The type.
    pub ty: Type,
}

/// A typed attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    /// An integer, with its type when written (`5 : i32`).
    Int(i64, Option<ScalarType>),
    /// A float literal, with its type when written.
    Float(f64, Option<ScalarType>),
    /// `true` / `false`.
    Bool(bool),
    /// A string.
    Str(String),
    /// A name with no value (`{nosplit}`, `pto.entry`).
    Unit,
    /// `@symbol`.
    Symbol(String),
    /// A PTO enum: `#pto.KIND<VALUE>` (`dotted`), `#pto<KIND VALUE>`, or `<VALUE>` where the
    /// kind is implied by the position (sync ops).
    Pto {
        /// The attribute kind (`layout`, `round_mode`, `kernel_kind`, `pipe`, ...); empty for
        /// the bare `<VALUE>` form.
        kind: String,
        /// The value mnemonic.
        value: String,
        /// Spelled `#pto.KIND<VALUE>` (else `#pto<KIND VALUE>`).
        dotted: bool,
    },
    /// `[a, b, ...]`.
    Array(Vec<Attr>),
    /// A type used as an attribute.
    Type(Type),
}

impl Attr {
    /// The integer value, if this is an integer (or a bool).
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Attr::Int(v, _) => Some(*v),
            Attr::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }

    /// The PTO enum value, if this is a PTO enum attribute.
    pub fn pto_value(&self) -> Option<&str> {
        match self {
            Attr::Pto { value, .. } => Some(value),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Attr::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// `name = value` in an attribute dictionary.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedAttr {
    /// The key.
    pub name: String,
    /// The value.
    pub value: Attr,
}

/// Looks `name` up in an attribute list.
pub fn find_attr<'a>(attrs: &'a [NamedAttr], name: &str) -> Option<&'a Attr> {
    attrs.iter().find(|a| a.name == name).map(|a| &a.value)
}

/// A block: optional arguments (used by `scf.while`'s `do` region) and ops.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Block {
    /// Block arguments.
    pub args: Vec<ValueId>,
    /// The ops, in order.
    pub ops: Vec<Op>,
}

/// An operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    /// Results.
    pub results: Vec<ValueId>,
    /// What it is.
    pub kind: OpKind,
    /// Where it was written (from the start of the op name or its results).
    pub span: Span,
}

/// Integer and float binary arithmetic (`arith.*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `addi`.
    AddI,
    /// `subi`.
    SubI,
    /// `muli`.
    MulI,
    /// `divsi`.
    DivSI,
    /// `divui`.
    DivUI,
    /// `remsi`.
    RemSI,
    /// `remui`.
    RemUI,
    /// `ceildivsi`.
    CeilDivSI,
    /// `ceildivui`.
    CeilDivUI,
    /// `floordivsi`.
    FloorDivSI,
    /// `minsi`.
    MinSI,
    /// `maxsi`.
    MaxSI,
    /// `minui`.
    MinUI,
    /// `maxui`.
    MaxUI,
    /// `andi`.
    AndI,
    /// `ori`.
    OrI,
    /// `xori`.
    XorI,
    /// `shli`.
    ShLI,
    /// `shrsi`.
    ShRSI,
    /// `shrui`.
    ShRUI,
    /// `addf`.
    AddF,
    /// `subf`.
    SubF,
    /// `mulf`.
    MulF,
    /// `divf`.
    DivF,
    /// `remf`.
    RemF,
    /// `maximumf`.
    MaximumF,
    /// `minimumf`.
    MinimumF,
    /// `maxnumf`.
    MaxNumF,
    /// `minnumf`.
    MinNumF,
}

impl BinOp {
    /// All binary ops with their `arith.` names.
    pub const ALL: [(BinOp, &'static str); 29] = [
        (BinOp::AddI, "addi"),
        (BinOp::SubI, "subi"),
        (BinOp::MulI, "muli"),
        (BinOp::DivSI, "divsi"),
        (BinOp::DivUI, "divui"),
        (BinOp::RemSI, "remsi"),
        (BinOp::RemUI, "remui"),
        (BinOp::CeilDivSI, "ceildivsi"),
        (BinOp::CeilDivUI, "ceildivui"),
        (BinOp::FloorDivSI, "floordivsi"),
        (BinOp::MinSI, "minsi"),
        (BinOp::MaxSI, "maxsi"),
        (BinOp::MinUI, "minui"),
        (BinOp::MaxUI, "maxui"),
        (BinOp::AndI, "andi"),
        (BinOp::OrI, "ori"),
        (BinOp::XorI, "xori"),
        (BinOp::ShLI, "shli"),
        (BinOp::ShRSI, "shrsi"),
        (BinOp::ShRUI, "shrui"),
        (BinOp::AddF, "addf"),
        (BinOp::SubF, "subf"),
        (BinOp::MulF, "mulf"),
        (BinOp::DivF, "divf"),
        (BinOp::RemF, "remf"),
        (BinOp::MaximumF, "maximumf"),
        (BinOp::MinimumF, "minimumf"),
        (BinOp::MaxNumF, "maxnumf"),
        (BinOp::MinNumF, "minnumf"),
    ];

    /// The `arith.` name.
    pub fn name(self) -> &'static str {
        BinOp::ALL
            .iter()
            .find(|(op, _)| *op == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
    }

    /// True for the float ops.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            BinOp::AddF
                | BinOp::SubF
                | BinOp::MulF
                | BinOp::DivF
                | BinOp::RemF
                | BinOp::MaximumF
                | BinOp::MinimumF
                | BinOp::MaxNumF
                | BinOp::MinNumF
        )
    }
}

/// Conversions (`arith.index_cast`, `extsi`, `sitofp`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastOp {
    /// `index_cast`.
    IndexCast,
    /// `index_castui`.
    IndexCastUI,
    /// `extsi`.
    ExtSI,
    /// `extui`.
    ExtUI,
    /// `trunci`.
    TruncI,
    /// `sitofp`.
    SIToFP,
    /// `uitofp`.
    UIToFP,
    /// `fptosi`.
    FPToSI,
    /// `fptoui`.
    FPToUI,
    /// `extf`.
    ExtF,
    /// `truncf`.
    TruncF,
    /// `bitcast`.
    Bitcast,
}

impl CastOp {
    /// All casts with their `arith.` names.
    pub const ALL: [(CastOp, &'static str); 12] = [
        (CastOp::IndexCast, "index_cast"),
        (CastOp::IndexCastUI, "index_castui"),
        (CastOp::ExtSI, "extsi"),
        (CastOp::ExtUI, "extui"),
        (CastOp::TruncI, "trunci"),
        (CastOp::SIToFP, "sitofp"),
        (CastOp::UIToFP, "uitofp"),
        (CastOp::FPToSI, "fptosi"),
        (CastOp::FPToUI, "fptoui"),
        (CastOp::ExtF, "extf"),
        (CastOp::TruncF, "truncf"),
        (CastOp::Bitcast, "bitcast"),
    ];

    /// The `arith.` name.
    pub fn name(self) -> &'static str {
        CastOp::ALL
            .iter()
            .find(|(op, _)| *op == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
    }
}

/// A literal of `arith.constant`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    /// An integer (bools are 0/1).
    Int(i64),
    /// A float, with the raw bits when written in hex (`0x7F800000`).
    Float(f64),
}

/// Which core a frontend pipe op belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The cube core (`aic_initialize_pipe`, `tpush_to_aiv`, `tpop_from_aiv`, `tfree_from_aiv`).
    Cube,
    /// The vector core (`aiv_initialize_pipe`, `tpush_to_aic`, `tpop_from_aic`, `tfree_from_aic`).
    Vector,
}

/// Kernel kind (`#pto.kernel_kind<...>`, `pto.section.*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelKind {
    /// Vector (AIV) code: `#if defined(__DAV_VEC__)`.
    Vector,
    /// Cube (AIC) code: `#if defined(__DAV_CUBE__)`.
    Cube,
}

/// What an op is.
#[derive(Clone, Debug, PartialEq)]
pub enum OpKind {
    /// `arith.constant`.
    Constant {
        /// The value.
        value: Literal,
        /// Its type.
        ty: ScalarType,
    },
    /// Binary arithmetic.
    Binary {
        /// Which.
        op: BinOp,
        /// Left operand.
        lhs: ValueId,
        /// Right operand.
        rhs: ValueId,
    },
    /// `arith.negf`.
    NegF {
        /// Operand.
        operand: ValueId,
    },
    /// `arith.cmpi` / `arith.cmpf`.
    Cmp {
        /// True for `cmpf`.
        float: bool,
        /// Predicate mnemonic (`slt`, `eq`, `ogt`, ...).
        pred: String,
        /// Left operand.
        lhs: ValueId,
        /// Right operand.
        rhs: ValueId,
    },
    /// A conversion.
    Cast {
        /// Which.
        op: CastOp,
        /// Operand.
        operand: ValueId,
    },
    /// `arith.select`.
    Select {
        /// Condition.
        cond: ValueId,
        /// Value if true.
        on_true: ValueId,
        /// Value if false.
        on_false: ValueId,
    },
    /// `math.*` unary functions (`exp`, `log`, `sqrt`, `rsqrt`, `absf`, `absi`, ...).
    Math {
        /// Function name after `math.`.
        func: String,
        /// Operand.
        operand: ValueId,
    },
    /// `scf.for`.
    For {
        /// Lower bound.
        lb: ValueId,
        /// Upper bound (exclusive).
        ub: ValueId,
        /// Step.
        step: ValueId,
        /// The induction variable (a block argument of the body).
        iv: ValueId,
        /// Loop-carried values: (body argument, initial value).
        iter_args: Vec<(ValueId, ValueId)>,
        /// The body; ends with `scf.yield` when there are iter_args.
        body: Block,
    },
    /// `scf.if`.
    If {
        /// Condition.
        cond: ValueId,
        /// Then branch.
        then_block: Block,
        /// Else branch.
        else_block: Option<Block>,
    },
    /// `scf.while`.
    While {
        /// Initial values of the `before` region's arguments.
        inits: Vec<ValueId>,
        /// Condition region: its arguments receive the carried values; ends with
        /// `scf.condition`.
        before: Block,
        /// Body region: its arguments receive `scf.condition`'s values; ends with `scf.yield`.
        after: Block,
    },
    /// `scf.yield`.
    Yield(Vec<ValueId>),
    /// `scf.condition(%c) %args`.
    Condition {
        /// Whether to continue.
        cond: ValueId,
        /// Values forwarded to the body (or the results).
        args: Vec<ValueId>,
    },
    /// `func.call @f(...)`.
    Call {
        /// Callee.
        callee: String,
        /// Arguments.
        args: Vec<ValueId>,
    },
    /// `return` / `func.return`.
    Return(Vec<ValueId>),
    /// `pto.make_tensor_view`.
    MakeTensorView {
        /// Base pointer.
        ptr: ValueId,
        /// Shape operands.
        shape: Vec<ValueId>,
        /// Stride operands.
        strides: Vec<ValueId>,
        /// Attributes (`layout`).
        attrs: Vec<NamedAttr>,
    },
    /// `pto.partition_view`.
    PartitionView {
        /// The tensor (or partition) view.
        source: ValueId,
        /// Offsets.
        offsets: Vec<ValueId>,
        /// Sizes.
        sizes: Vec<ValueId>,
    },
    /// `pto.get_tensor_view_dim` / `pto.get_tensor_view_stride`.
    ViewQuery {
        /// True for the stride query.
        stride: bool,
        /// The view.
        view: ValueId,
        /// The dimension.
        dim: ValueId,
    },
    /// `pto.alloc_tile`.
    AllocTile {
        /// `addr = %x` (level 3).
        addr: Option<ValueId>,
        /// `valid_row = %r`.
        valid_row: Option<ValueId>,
        /// `valid_col = %c`.
        valid_col: Option<ValueId>,
    },
    /// `pto.subview %src[%i, %j] sizes [r, c] [valid [%vr, %vc]]`.
    SubView {
        /// Parent tile.
        source: ValueId,
        /// Offsets.
        offsets: Vec<ValueId>,
        /// Static sizes.
        sizes: Vec<i64>,
        /// Explicit valid extent.
        valid: Option<(ValueId, ValueId)>,
    },
    /// `pto.treshape` / `pto.bitcast`: a new tile type over the same bytes.
    Reinterpret {
        /// True for `pto.bitcast` (element type change).
        bitcast: bool,
        /// Source tile.
        source: ValueId,
    },
    /// `pto.tassign %tile, %addr`: binds the tile to the local-memory address `%addr` (level
    /// 3); the result is the same tile.
    TAssign {
        /// The tile.
        tile: ValueId,
        /// The address (an integer).
        addr: ValueId,
    },
    /// `pto.set_validshape`.
    SetValidShape {
        /// The tile.
        tile: ValueId,
        /// Valid rows.
        rows: ValueId,
        /// Valid columns.
        cols: ValueId,
    },
    /// `pto.addptr`.
    AddPtr {
        /// Base.
        ptr: ValueId,
        /// Element offset.
        offset: ValueId,
    },
    /// `pto.load_scalar %p[%i]`.
    LoadScalar {
        /// Pointer.
        ptr: ValueId,
        /// Element offset.
        offset: ValueId,
    },
    /// `pto.store_scalar %v, %p[%i]`.
    StoreScalar {
        /// Value.
        value: ValueId,
        /// Pointer.
        ptr: ValueId,
        /// Element offset.
        offset: ValueId,
    },
    /// A destination-passing tile op: `pto.NAME ins(...) outs(...) {attrs}`.
    Tile {
        /// The op name after `pto.` (`tadd`, `tmatmul.acc`, ...).
        name: String,
        /// Inputs.
        ins: Vec<ValueId>,
        /// Outputs.
        outs: Vec<ValueId>,
        /// Attributes (from inside `ins(...)` and after `outs(...)`).
        attrs: Vec<NamedAttr>,
        /// The attributes were written inside `ins(...)` (tcvt, tci, tcmp style).
        attrs_in_ins: bool,
    },
    /// `pto.reserve_buffer {name, size, location, auto[, base]} -> i32`.
    ReserveBuffer {
        /// Buffer name.
        name: String,
        /// Bytes.
        size: i64,
        /// Memory.
        location: TileLoc,
        /// Let the compiler place it.
        auto_alloc: bool,
        /// Explicit base address.
        base: Option<i64>,
    },
    /// `pto.import_reserved_buffer {name, peer_func} -> i32`.
    ImportReservedBuffer {
        /// Buffer name in the peer.
        name: String,
        /// The function that reserves it.
        peer_func: String,
    },
    /// `pto.aic_initialize_pipe` / `pto.aiv_initialize_pipe`.
    InitializePipe {
        /// Which core.
        side: Side,
        /// Attributes (`id`, `dir_mask`, `slot_size`, `slot_num`, `local_slot_num`, `nosplit`).
        attrs: Vec<NamedAttr>,
        /// `gm_slot_buffer`.
        gm_slot_buffer: Option<ValueId>,
        /// `c2v_consumer_buf`.
        c2v_consumer_buf: ValueId,
        /// `v2c_consumer_buf`.
        v2c_consumer_buf: ValueId,
    },
    /// `pto.tpush_to_aiv` / `pto.tpush_to_aic`.
    TPush {
        /// Which core pushes.
        side: Side,
        /// The tile.
        tile: ValueId,
        /// Attributes (`split`, `id`).
        attrs: Vec<NamedAttr>,
    },
    /// `pto.tpop_from_aic` / `pto.tpop_from_aiv` (one result: the tile).
    TPop {
        /// Which core pops.
        side: Side,
        /// Optional valid extent `(%vr, %vc)`.
        valid: Option<(ValueId, ValueId)>,
        /// Attributes (`split`, `id`).
        attrs: Vec<NamedAttr>,
    },
    /// `pto.tfree_from_aic` / `pto.tfree_from_aiv`.
    TFree {
        /// Which core frees.
        side: Side,
        /// Attributes (`split`, `id`).
        attrs: Vec<NamedAttr>,
    },
    /// `pto.set_flag` / `pto.wait_flag` / `pto.record_event` / `pto.wait_event`.
    Flag {
        /// The op name after `pto.`.
        name: String,
        /// Source pipe (or op type).
        src: Attr,
        /// Destination pipe (or op type).
        dst: Attr,
        /// Event id.
        event: Attr,
    },
    /// `pto.barrier <PIPE>` / `pto.barrier_sync [op]`.
    Barrier {
        /// The op name after `pto.`.
        name: String,
        /// The pipe or op type.
        pipe: Attr,
    },
    /// `pto.cmo.cacheinvalid`: cache maintenance on GM. `%x single_cache_line : T`
    /// invalidates the data-cache line holding the first element of `%x` (a `!pto.ptr`, a
    /// view or a GM memref); `all #pto.address_space<gm>` the whole data cache.
    CacheInvalid {
        /// The addressed value; `None` for the `all` form.
        target: Option<ValueId>,
        /// The address space of the `all` form (`#pto.address_space<gm>`).
        space: Option<Attr>,
    },
    /// `pto.fence.barrier_all #pto.fence_scope<S>`: a memory fence over scope `S`.
    Fence {
        /// The scope attribute (`#pto.fence_scope<gm>`).
        scope: Attr,
    },
    /// `pto.comm.tnotify` / `pto.comm.twait (%signal, %value : T, i32) {attrs}`: set or add a
    /// 32-bit GM signal / block until it compares true.
    Signal {
        /// The op name after `pto.` (`comm.tnotify`, `comm.twait`).
        name: String,
        /// The signal view (`i32` elements).
        signal: ValueId,
        /// The value notified or compared with.
        value: ValueId,
        /// Attributes (`notifyOp`, `cmp`).
        attrs: Vec<NamedAttr>,
    },
    /// `pto.comm.tput` / `pto.comm.tget (%dst, %src, buf(%stage[, %stage2]) : ...) {attrs}`:
    /// a GM-to-GM copy (to or from a peer's window) staged through UB tiles.
    CommCopy {
        /// The op name after `pto.` (`comm.tput`, `comm.tget`).
        name: String,
        /// Destination view.
        dst: ValueId,
        /// Source view.
        src: ValueId,
        /// Staging tiles (one, or two for ping-pong).
        stages: Vec<ValueId>,
        /// Attributes (`atomicType` of a put).
        attrs: Vec<NamedAttr>,
    },
    /// `pto.section.cube` / `pto.section.vector`.
    Section {
        /// Which core.
        kind: KernelKind,
        /// The body.
        body: Block,
    },
    /// `pto.get_block_idx` and friends (the op name after `pto.`).
    Query {
        /// The op name after `pto.`.
        name: String,
    },
}

/// Function visibility.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visibility {
    /// A kernel entry (`__global__ AICORE void`).
    Public,
    /// `func.func private`: a helper (`static AICORE`).
    Private,
}

/// A `func.func`.
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    /// The symbol name (without `@`).
    pub name: String,
    /// Visibility.
    pub visibility: Visibility,
    /// Arguments (values of the arena).
    pub args: Vec<ValueId>,
    /// Result types.
    pub results: Vec<Type>,
    /// `attributes {...}`.
    pub attrs: Vec<NamedAttr>,
    /// The body; `None` for a declaration.
    pub body: Option<Block>,
    /// Every value of the function.
    pub values: Vec<ValueInfo>,
    /// Where `func.func` was written.
    pub span: Span,
}

impl Func {
    /// The type of `v`.
    pub fn ty(&self, v: ValueId) -> &Type {
        &self.values[v.index()].ty
    }

    /// The source name of `v` (without `%`).
    pub fn name_of(&self, v: ValueId) -> &str {
        &self.values[v.index()].name
    }

    /// The function's kernel kind attribute, if any.
    pub fn kernel_kind(&self) -> Option<KernelKind> {
        match find_attr(&self.attrs, "pto.kernel_kind")?.pto_value()? {
            "vector" => Some(KernelKind::Vector),
            "cube" => Some(KernelKind::Cube),
            _ => None,
        }
    }
}

/// A `module`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Module {
    /// `module attributes {...}`.
    pub attrs: Vec<NamedAttr>,
    /// The functions, in source order.
    pub funcs: Vec<Func>,
}

impl Module {
    /// The function named `name`.
    pub fn func(&self, name: &str) -> Option<&Func> {
        self.funcs.iter().find(|f| f.name == name)
    }

    /// `pto.target_arch`, if given.
    pub fn target_arch(&self) -> Option<&str> {
        find_attr(&self.attrs, "pto.target_arch")?.as_str()
    }
}

/// Calls `f` on every op of `block`, nested regions included, in pre-order.
pub fn walk<'a>(block: &'a Block, f: &mut dyn FnMut(&'a Op)) {
    for op in &block.ops {
        f(op);
        for b in op.blocks() {
            walk(b, f);
        }
    }
}

impl Op {
    /// The op's nested blocks.
    pub fn blocks(&self) -> Vec<&Block> {
        match &self.kind {
            OpKind::For { body, .. } | OpKind::Section { body, .. } => vec![body],
            OpKind::If {
                then_block,
                else_block,
                ..
            } => {
                let mut v = vec![then_block];
                if let Some(e) = else_block {
                    v.push(e);
                }
                v
            }
            OpKind::While { before, after, .. } => vec![before, after],
            _ => Vec::new(),
        }
    }

    /// The op's name as written in `.pto` (`arith.addi`, `pto.tadd`, ...).
    pub fn name(&self) -> String {
        match &self.kind {
            OpKind::Constant { .. } => "arith.constant".into(),
            OpKind::Binary { op, .. } => format!("arith.{}", op.name()),
            OpKind::NegF { .. } => "arith.negf".into(),
            OpKind::Cmp { float, .. } => if *float { "arith.cmpf" } else { "arith.cmpi" }.into(),
            OpKind::Cast { op, .. } => format!("arith.{}", op.name()),
            OpKind::Select { .. } => "arith.select".into(),
            OpKind::Math { func, .. } => format!("math.{func}"),
            OpKind::For { .. } => "scf.for".into(),
            OpKind::If { .. } => "scf.if".into(),
            OpKind::While { .. } => "scf.while".into(),
            OpKind::Yield(_) => "scf.yield".into(),
            OpKind::Condition { .. } => "scf.condition".into(),
            OpKind::Call { .. } => "func.call".into(),
            OpKind::Return(_) => "return".into(),
            OpKind::MakeTensorView { .. } => "pto.make_tensor_view".into(),
            OpKind::PartitionView { .. } => "pto.partition_view".into(),
            OpKind::ViewQuery { stride, .. } => if *stride {
                "pto.get_tensor_view_stride"
            } else {
                "pto.get_tensor_view_dim"
            }
            .into(),
            OpKind::AllocTile { .. } => "pto.alloc_tile".into(),
            OpKind::SubView { .. } => "pto.subview".into(),
            OpKind::Reinterpret { bitcast, .. } => if *bitcast {
                "pto.bitcast"
            } else {
                "pto.treshape"
            }
            .into(),
            OpKind::SetValidShape { .. } => "pto.set_validshape".into(),
            OpKind::TAssign { .. } => "pto.tassign".into(),
            OpKind::AddPtr { .. } => "pto.addptr".into(),
            OpKind::LoadScalar { .. } => "pto.load_scalar".into(),
            OpKind::StoreScalar { .. } => "pto.store_scalar".into(),
            OpKind::Tile { name, .. } => format!("pto.{name}"),
            OpKind::ReserveBuffer { .. } => "pto.reserve_buffer".into(),
            OpKind::ImportReservedBuffer { .. } => "pto.import_reserved_buffer".into(),
            OpKind::InitializePipe { side, .. } => match side {
                Side::Cube => "pto.aic_initialize_pipe".into(),
                Side::Vector => "pto.aiv_initialize_pipe".into(),
            },
            OpKind::TPush { side, .. } => match side {
                Side::Cube => "pto.tpush_to_aiv".into(),
                Side::Vector => "pto.tpush_to_aic".into(),
            },
            OpKind::TPop { side, .. } => match side {
                Side::Cube => "pto.tpop_from_aiv".into(),
                Side::Vector => "pto.tpop_from_aic".into(),
            },
            OpKind::TFree { side, .. } => match side {
                Side::Cube => "pto.tfree_from_aiv".into(),
                Side::Vector => "pto.tfree_from_aic".into(),
            },
            OpKind::CacheInvalid { .. } => "pto.cmo.cacheinvalid".into(),
            OpKind::Signal { name, .. } | OpKind::CommCopy { name, .. } => format!("pto.{name}"),
            OpKind::Fence { .. } => "pto.fence.barrier_all".into(),
            OpKind::Flag { name, .. } | OpKind::Barrier { name, .. } | OpKind::Query { name } => {
                format!("pto.{name}")
            }
            OpKind::Section { kind, .. } => match kind {
                KernelKind::Cube => "pto.section.cube".into(),
                KernelKind::Vector => "pto.section.vector".into(),
            },
        }
    }
}
