//! The verifier: rules checked before any lowering, with ptoas's own words where it has
//! them (the level / `addr` rules), so a bad input fails the same way it does upstream.

use std::collections::HashSet;

use crate::error::{Diag, DiagResult, ErrorKind};
use crate::ir::{find_attr, walk, Func, Module, Op, OpKind, ValueId};
use crate::types::{Dim, Type};
use crate::Level;

/// Names the generated C++ cannot use for a function: keywords and the header's own names.
const RESERVED: [&str; 24] = [
    "auto",
    "bool",
    "break",
    "case",
    "char",
    "class",
    "const",
    "default",
    "do",
    "double",
    "else",
    "float",
    "for",
    "if",
    "int",
    "kernel_entry",
    "namespace",
    "return",
    "static",
    "struct",
    "switch",
    "template",
    "void",
    "while",
];

fn is_int(t: &Type) -> bool {
    t.scalar().is_some_and(|s| s.is_int())
}

fn invalid(op: &Op, msg: String) -> Diag {
    Diag::at(ErrorKind::Invalid, op.span, msg)
}

/// Checks `module` for a run at `level`.
pub fn verify(module: &Module, level: Level) -> DiagResult<()> {
    let mut names = HashSet::new();
    for f in &module.funcs {
        let ident = f
            .name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && f.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident
            || RESERVED.contains(&f.name.as_str())
            || f.name.starts_with("v")
                && f.name[1..].chars().all(|c| c.is_ascii_digit())
                && f.name.len() > 1
        {
            return Err(Diag::at(
                ErrorKind::Unsupported,
                f.span,
                format!(
                    "function name '@{}' cannot be a C++ function name (use letters, digits and '_', not a keyword or vN)",
                    f.name
                ),
            ));
        }
        if !names.insert(f.name.as_str()) {
            return Err(Diag::at(
                ErrorKind::Invalid,
                f.span,
                format!("redefinition of function '@{}'", f.name),
            ));
        }
    }
    // PTO entry functions (marked `pto.entry` / `hacc.entry`, or the module's only function
    // definition) are kernels: they return nothing.
    let definitions = module.funcs.iter().filter(|f| f.body.is_some()).count();
    for f in &module.funcs {
        let marked = ["pto.entry", "hacc.entry"]
            .iter()
            .any(|a| find_attr(&f.attrs, a).is_some());
        let entry = f.body.is_some() && (marked || definitions == 1);
        if entry && !f.results.is_empty() {
            return Err(Diag::at(
                ErrorKind::Invalid,
                f.span,
                format!(
                    "'func.func' op PTO entry functions must return void ('@{}' returns {})",
                    f.name,
                    f.results
                        .iter()
                        .map(|t| t.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    for f in &module.funcs {
        let Some(body) = &f.body else { continue };
        let mut res = Ok(());
        walk(body, &mut |op| {
            if res.is_ok() {
                res = verify_op(module, f, op, level);
            }
        });
        res?;
    }
    Ok(())
}

/// Checks one op: a dispatch on its kind to the rule of that op (most ops have none).
fn verify_op(module: &Module, f: &Func, op: &Op, level: Level) -> DiagResult<()> {
    match &op.kind {
        OpKind::TAssign { tile, addr } => verify_tassign(f, op, *tile, *addr, level),
        OpKind::AllocTile {
            addr,
            valid_row,
            valid_col,
        } => verify_alloc_tile(f, op, *addr, [*valid_row, *valid_col], level),
        OpKind::MakeTensorView {
            ptr,
            shape,
            strides,
            ..
        } => verify_make_tensor_view(f, op, *ptr, shape, strides),
        OpKind::PartitionView {
            source,
            offsets,
            sizes,
        } => verify_partition_view(f, op, *source, offsets, sizes),
        OpKind::For { lb, ub, step, .. } => verify_for_bounds(f, op, [*lb, *ub, *step]),
        OpKind::If { cond, .. } | OpKind::Select { cond, .. } if !is_int(f.ty(*cond)) => {
            Err(invalid(
                op,
                format!("'{}' condition must be i1, got {}", op.name(), f.ty(*cond)),
            ))
        }
        OpKind::Call { callee, args } => verify_call(module, op, callee, args),
        OpKind::ImportReservedBuffer { name, peer_func } => {
            verify_import_reserved_buffer(module, op, name, peer_func)
        }
        _ => Ok(()),
    }
}

/// `pto.tassign`: level 3 only, a tile and an integer address, the tile's type back.
fn verify_tassign(f: &Func, op: &Op, tile: ValueId, addr: ValueId, level: Level) -> DiagResult<()> {
    if level != Level::Level3 {
        return Err(invalid(
            op,
            "'pto.tassign' op binds an explicit address: only supported when --pto-level=level3"
                .into(),
        ));
    }
    if f.ty(tile).tile().is_none() || !is_int(f.ty(addr)) {
        return Err(invalid(
            op,
            "'pto.tassign' takes a tile and an integer address".into(),
        ));
    }
    if op.results.first().is_some_and(|r| f.ty(*r) != f.ty(tile)) {
        return Err(invalid(
            op,
            "'pto.tassign' returns the tile's own type".into(),
        ));
    }
    Ok(())
}

/// `pto.alloc_tile`: `addr` exactly at level 3, a valid-dimension operand for each dynamic one.
fn verify_alloc_tile(
    f: &Func,
    op: &Op,
    addr: Option<ValueId>,
    valid: [Option<ValueId>; 2],
    level: Level,
) -> DiagResult<()> {
    let [valid_row, valid_col] = valid;
    match (level, addr) {
        (Level::Level3, None) => {
            return Err(invalid(
                op,
                "'pto.alloc_tile' op requires 'addr' operand when --pto-level=level3".into(),
            ))
        }
        (Level::Level1 | Level::Level2, Some(_)) => return Err(invalid(
            op,
            "'pto.alloc_tile' op unexpected 'addr' operand: only supported when --pto-level=level3"
                .into(),
        )),
        _ => {}
    }
    let Some(r) = op.results.first() else {
        return Err(invalid(op, "'pto.alloc_tile' needs a result".into()));
    };
    let Some(t) = f.ty(*r).tile() else {
        return Err(invalid(
            op,
            "'pto.alloc_tile' must produce a !pto.tile_buf".into(),
        ));
    };
    for (given, dim, what) in [
        (valid_row.is_some(), t.v_row, "valid_row"),
        (valid_col.is_some(), t.v_col, "valid_col"),
    ] {
        let dynamic = dim == Dim::Dynamic;
        if dynamic && !given {
            return Err(invalid(
                    op,
                    format!("'pto.alloc_tile' op needs a '{what}' operand for a dynamic ('?') valid dimension"),
                ));
        }
        if !dynamic && given {
            return Err(invalid(
                    op,
                    format!("'pto.alloc_tile' op takes no '{what}' operand: the type's valid dimension is static"),
                ));
        }
    }
    if let Some(a) = addr {
        if !is_int(f.ty(a)) {
            return Err(invalid(
                op,
                "'pto.alloc_tile' op 'addr' must be an integer (i64)".into(),
            ));
        }
    }
    Ok(())
}

/// `pto.make_tensor_view`: a pointer base and one shape and stride operand per dimension (rank 1 to 5).
fn verify_make_tensor_view(
    f: &Func,
    op: &Op,
    ptr: ValueId,
    shape: &[ValueId],
    strides: &[ValueId],
) -> DiagResult<()> {
    let name = op.name();
    if !matches!(f.ty(ptr), Type::Ptr { .. } | Type::MemRef { .. }) {
        return Err(invalid(
            op,
            format!("'{name}' needs a !pto.ptr base, got {}", f.ty(ptr)),
        ));
    }
    let rank = match op.results.first().map(|r| f.ty(*r)) {
        Some(Type::TensorView { shape, .. }) => shape.len(),
        _ => {
            return Err(invalid(
                op,
                format!("'{name}' must produce a !pto.tensor_view"),
            ))
        }
    };
    if shape.len() != rank || strides.len() != rank {
        return Err(invalid(
            op,
            format!(
                "'{name}' has {} shape and {} stride operands for a rank-{rank} view",
                shape.len(),
                strides.len()
            ),
        ));
    }
    if rank == 0 || rank > 5 {
        return Err(invalid(
            op,
            format!("'{name}': views of rank {rank} are not supported (1 to 5)"),
        ));
    }
    Ok(())
}

/// `pto.partition_view`: one offset and size per dimension of its source, a view of that rank back.
fn verify_partition_view(
    f: &Func,
    op: &Op,
    source: ValueId,
    offsets: &[ValueId],
    sizes: &[ValueId],
) -> DiagResult<()> {
    let name = op.name();
    let rank = match f.ty(source) {
        Type::TensorView { shape, .. } | Type::PartitionView { shape, .. } => shape.len(),
        other => {
            return Err(invalid(
                op,
                format!("'{name}' needs a tensor or partition view, got {other}"),
            ))
        }
    };
    if offsets.len() != rank || sizes.len() != rank {
        return Err(invalid(
            op,
            format!(
                "'{name}' has {} offsets and {} sizes for a rank-{rank} view",
                offsets.len(),
                sizes.len()
            ),
        ));
    }
    match op.results.first().map(|r| f.ty(*r)) {
        Some(Type::PartitionView { shape, .. }) if shape.len() == rank => {}
        _ => {
            return Err(invalid(
                op,
                format!("'{name}' must produce a rank-{rank} !pto.partition_tensor_view"),
            ))
        }
    }
    Ok(())
}

/// `scf.for`: integer bounds and step.
fn verify_for_bounds(f: &Func, op: &Op, bounds: [ValueId; 3]) -> DiagResult<()> {
    for v in bounds {
        if !is_int(f.ty(v)) {
            return Err(invalid(
                op,
                format!("'scf.for' bounds must be integers, got {}", f.ty(v)),
            ));
        }
    }
    Ok(())
}

/// `func.call`: a defined callee taking as many arguments as passed.
fn verify_call(module: &Module, op: &Op, callee: &str, args: &[ValueId]) -> DiagResult<()> {
    let Some(target) = module.func(callee) else {
        return Err(invalid(
            op,
            format!("call to undefined function '@{callee}'"),
        ));
    };
    if target.args.len() != args.len() {
        return Err(invalid(
            op,
            format!(
                "'@{callee}' takes {} argument(s), the call passes {}",
                target.args.len(),
                args.len()
            ),
        ));
    }
    Ok(())
}

/// `pto.import_reserved_buffer`: the peer function exists and reserves the buffer.
fn verify_import_reserved_buffer(
    module: &Module,
    op: &Op,
    bname: &str,
    peer_func: &str,
) -> DiagResult<()> {
    let Some(peer) = module.func(peer_func) else {
        return Err(invalid(
            op,
            format!("'pto.import_reserved_buffer' names unknown peer function '@{peer_func}'"),
        ));
    };
    let mut found = false;
    if let Some(b) = &peer.body {
        walk(b, &mut |o| {
            if matches!(&o.kind, OpKind::ReserveBuffer { name, .. } if name == bname) {
                found = true;
            }
        });
    }
    if !found {
        return Err(invalid(
            op,
            format!(
                "'pto.import_reserved_buffer': '@{peer_func}' reserves no buffer named \"{bname}\""
            ),
        ));
    }
    Ok(())
}
