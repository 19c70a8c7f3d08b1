//! The destination-passing tile ops and the cross-core pipe ops.
//!
//! Most tile ops lower by one rule, `pto.tX ins(a, b, ...) outs(d)` → `TX(d, a, b, ...)`
//! (dots become underscores: `pto.tmatmul.acc` → `TMATMUL_ACC`). The table [`TILE_OPS`]
//! lists the ops lowered that way and the attributes each accepts; the special cases are
//! loads and stores (a view operand becomes its GlobalTensor; attributes become `TSTORE`
//! template arguments), `tcvt` (rounding and saturation mode arguments), `tci`, the
//! mask-pattern `tgather`, `tcolsum`'s `isBinary` and the template-argument forms of
//! `tmov`, `tmatmul` and `tcmp`. An op or attribute outside the table is an error.

use super::{invalid, unsupported, FnLower, Pipe};
use crate::cpp::Stmt;
use crate::error::DiagResult;
use crate::ir::{find_attr, Attr, NamedAttr, Op, ValueId};
use crate::types::{Dim, Layout, ScalarType, Type};

/// Attributes that only tune the device implementation (precision algorithms); the CPU
/// results do not depend on them.
const IGNORED_ATTRS: [&str; 3] = ["precision", "algorithm", "mode_hint"];

/// Whether ptoas lowers the tile instruction `name` (`tadd`, `tmatmul.acc`, ...; without the
/// `pto.` prefix): an op of `TILE_OPS`, or `treshape` (a view of a tile's bytes). Callers
/// that emit `.pto` (the DSL's codegen) check their op tables against it.
pub fn lowers_tile_op(name: &str) -> bool {
    name == "treshape" || TILE_OPS.iter().any(|(n, _)| *n == name)
}

/// The scalar queries of the running block (`pto.get_block_idx`, ...; without the `pto.`
/// prefix), which the parser reads and the lowering turns into the kernel-side call given
/// here.
pub const QUERY_OPS: &[(&str, &str)] = &[
    ("get_block_idx", "get_block_idx"),
    ("get_block_num", "get_block_num"),
    ("get_subblock_idx", "get_subblockid"),
    ("get_subblock_num", "get_subblockdim"),
];

/// Whether `name` (without the `pto.` prefix) is one of the [`QUERY_OPS`].
pub fn is_query_op(name: &str) -> bool {
    QUERY_OPS.iter().any(|(n, _)| *n == name)
}

/// The C++ the lowering emits for the `.pto` op `name` (without the `pto.` prefix): the
/// PTO-ISA instruction of a tile op (`tmatmul.acc` → `TMATMUL_ACC`), the kernel-side call of
/// a query (`get_block_idx`); empty for an empty name.
pub fn cpp_instruction(name: &str) -> String {
    match QUERY_OPS.iter().find(|(n, _)| *n == name) {
        Some((_, call)) => (*call).to_string(),
        None => cpp_name(name),
    }
}

/// The instructions of the tile-op table (`TILE_OPS`) that our PTO-ISA header
/// (`include/pto-isa`) cannot run: those it does not define, and those it declares unsupported
/// (a kernel using one fails to compile with a message naming it). A unit test reads the header and keeps both exact.
pub const HEADER_LACKS: (&[&str], &[&str]) = (
    &["TADDC", "TADDSC", "TSUBC", "TSUBSC", "TREM", "TREMS"],
    &[
        "TPRELU", "TSEL", "TSELS", "TCMP", "TCMPS", "TPARTADD", "TPARTMAX", "TPARTMIN", "TPARTMUL",
    ],
);

/// The tile ops lowered by the generic rule, with the attributes each accepts.
pub(crate) const TILE_OPS: &[(&str, &[&str])] = &[
    ("tabs", &[]),
    ("tadd", &[]),
    ("tadds", &[]),
    ("taddc", &[]),
    ("taddsc", &[]),
    ("tand", &[]),
    ("tands", &[]),
    ("tor", &[]),
    ("tors", &[]),
    ("txor", &[]),
    ("txors", &[]),
    ("tnot", &[]),
    ("tshl", &[]),
    ("tshr", &[]),
    ("tshls", &[]),
    ("tshrs", &[]),
    ("tsub", &[]),
    ("tsubs", &[]),
    ("tsubc", &[]),
    ("tsubsc", &[]),
    ("tmul", &[]),
    ("tmuls", &[]),
    ("tdiv", &[]),
    ("tdivs", &[]),
    ("tmax", &[]),
    ("tmaxs", &[]),
    ("tmin", &[]),
    ("tmins", &[]),
    ("trem", &[]),
    ("trems", &[]),
    ("texp", &[]),
    ("tlog", &[]),
    ("tsqrt", &[]),
    ("trsqrt", &[]),
    ("trecip", &[]),
    ("tneg", &[]),
    ("trelu", &[]),
    ("tlrelu", &[]),
    ("tprelu", &[]),
    ("texpands", &[]),
    ("tfillpad", &[]),
    ("tfillpad_expand", &[]),
    ("tfillpad_inplace", &[]),
    ("trowsum", &[]),
    ("trowmax", &[]),
    ("trowmin", &[]),
    ("trowprod", &[]),
    ("tcolsum", &["isBinary"]),
    ("tcolmax", &[]),
    ("tcolmin", &[]),
    ("tcolprod", &[]),
    ("trowexpand", &[]),
    ("trowexpandadd", &[]),
    ("trowexpandsub", &[]),
    ("trowexpandmul", &[]),
    ("trowexpanddiv", &[]),
    ("trowexpandmax", &[]),
    ("trowexpandmin", &[]),
    ("trowexpandexpdif", &[]),
    ("tcolexpand", &[]),
    ("tcolexpandadd", &[]),
    ("tcolexpandsub", &[]),
    ("tcolexpandmul", &[]),
    ("tcolexpanddiv", &[]),
    ("tcolexpandmax", &[]),
    ("tcolexpandmin", &[]),
    ("tcolexpandexpdif", &[]),
    ("tmatmul", &["accPhase"]),
    ("tmatmul.acc", &["accPhase"]),
    ("tmatmul.bias", &[]),
    ("tgemv", &["accPhase"]),
    ("tgemv.acc", &["accPhase"]),
    ("tgemv.bias", &[]),
    ("tmov", &["reluPreMode", "accToVecMode"]),
    ("textract", &[]),
    ("tinsert", &[]),
    ("ttrans", &[]),
    ("tconcat", &[]),
    ("tsort32", &[]),
    ("tgather", &["maskPattern"]),
    ("tmrgsort", &[]),
    ("tprint", &[]),
    ("tsel", &[]),
    ("tsels", &[]),
    ("tcmp", &["cmpMode"]),
    ("tcmps", &["cmpMode"]),
    ("tpartadd", &[]),
    ("tpartmax", &[]),
    ("tpartmin", &[]),
    ("tpartmul", &[]),
    ("tcvt", &["rmode", "sat_mode"]),
    ("tci", &["descending"]),
    ("tload", &["layout"]),
    ("tprefetch", &["layout"]),
    (
        "tstore",
        &["atomicType", "stPhase", "reluPreMode", "layout"],
    ),
];

fn cpp_name(name: &str) -> String {
    name.to_ascii_uppercase().replace('.', "_")
}

/// `X::Y` for a PTO enum attribute, mapping the IR mnemonic to the C++ enumerator.
fn enum_token(attr: &Attr, kind: &str) -> Option<String> {
    let v = attr.pto_value()?;
    Some(match kind {
        "round_mode" => format!(
            "RoundMode::{}",
            match v {
                "NONE" | "CAST_NONE" => "CAST_NONE",
                "RINT" | "CAST_RINT" => "CAST_RINT",
                "ROUND" | "CAST_ROUND" => "CAST_ROUND",
                "FLOOR" | "CAST_FLOOR" => "CAST_FLOOR",
                "CEIL" | "CAST_CEIL" => "CAST_CEIL",
                "TRUNC" | "CAST_TRUNC" => "CAST_TRUNC",
                "ODD" | "CAST_ODD" => "CAST_ODD",
                _ => return None,
            }
        ),
        "saturation_mode" => format!(
            "SaturationMode::{}",
            match v {
                "ON" | "on" => "ON",
                "OFF" | "off" => "OFF",
                _ => return None,
            }
        ),
        "atomic_type" => format!(
            "AtomicType::{}",
            match v {
                "atomic_none" => "AtomicNone",
                "atomic_add" => "AtomicAdd",
                _ => return None,
            }
        ),
        "st_phase" | "acc_phase" => format!(
            "{}::{}",
            if kind == "st_phase" {
                "STPhase"
            } else {
                "AccPhase"
            },
            match v {
                "unspecified" => "Unspecified",
                "partial" => "Partial",
                "final" => "Final",
                _ => return None,
            }
        ),
        "relu_pre_mode" => format!(
            "ReluPreMode::{}",
            match v {
                "no_relu" => "NoRelu",
                "normal_relu" => "NormalRelu",
                "scalar_relu" => "ScalarRelu",
                "vector_relu" => "VectorRelu",
                _ => return None,
            }
        ),
        "acc_to_vec_mode" => format!(
            "AccToVecMode::{}",
            match v {
                "single_mode_vec0" => "SingleModeVec0",
                "single_mode_vec1" => "SingleModeVec1",
                "dual_mode_split_m" => "DualModeSplitM",
                "dual_mode_split_n" => "DualModeSplitN",
                _ => return None,
            }
        ),
        "mask_pattern" => {
            if !matches!(
                v,
                "P0101" | "P1010" | "P0001" | "P0010" | "P0100" | "P1000" | "P1111"
            ) {
                return None;
            }
            format!("MaskPattern::{v}")
        }
        "cmp" => format!("CmpMode::{}", v.to_ascii_uppercase()),
        "notify_op" => format!(
            "pto::comm::NotifyOp::{}",
            match v {
                "set" => "Set",
                "atomic_add" => "AtomicAdd",
                _ => return None,
            }
        ),
        "wait_cmp" => {
            if !matches!(v, "eq" | "ne" | "gt" | "ge" | "lt" | "le") {
                return None;
            }
            format!("pto::comm::WaitCmp::{}", v.to_ascii_uppercase())
        }
        _ => return None,
    })
}

/// A tile op being lowered: the op, its name (without `pto.`), operands and attributes.
#[derive(Clone, Copy)]
struct TileCall<'o> {
    op: &'o Op,
    name: &'o str,
    ins: &'o [ValueId],
    outs: &'o [ValueId],
    attrs: &'o [NamedAttr],
}

/// `{layout = #pto.layout<..>}` on a load or store: the layout a GM memref operand takes
/// (a view already has one, which must agree).
fn tile_layout(c: &TileCall) -> DiagResult<Option<Layout>> {
    let (op, name) = (c.op, c.name);
    match find_attr(c.attrs, "layout") {
        None => Ok(None),
        Some(Attr::Pto { kind, value, .. }) if kind == "layout" => {
            Ok(Some(Layout::from_name(value).ok_or_else(|| {
                invalid(op.span, format!("'pto.{name}': unknown layout '{value}'"))
            })?))
        }
        Some(_) => Err(invalid(
            op.span,
            format!("'pto.{name}': 'layout' takes #pto.layout<nd|dn|nz>"),
        )),
    }
}

/// `TCOLSUM`, with the `isBinary` flag (which needs a tmp tile) when given.
fn tcolsum_line(c: &TileCall, args: &[String]) -> DiagResult<String> {
    let (op, ins) = (c.op, c.ins);
    Ok(match find_attr(c.attrs, "isBinary") {
        Some(Attr::Bool(b)) if ins.len() == 2 => format!("TCOLSUM({}, {b});", args.join(", ")),
        Some(_) if ins.len() != 2 => {
            return Err(invalid(
                op.span,
                "'pto.tcolsum' with 'isBinary' needs a tmp tile",
            ))
        }
        Some(_) => return Err(invalid(op.span, "'pto.tcolsum': 'isBinary' must be a bool")),
        None => format!("TCOLSUM({});", args.join(", ")),
    })
}

impl FnLower<'_> {
    /// An attribute of `attrs` as a C++ enumerator of `kind`.
    fn enum_attr(
        &self,
        op: &Op,
        attrs: &[NamedAttr],
        name: &str,
        kind: &str,
    ) -> DiagResult<Option<String>> {
        match find_attr(attrs, name) {
            None => Ok(None),
            Some(a) => enum_token(a, kind).map(Some).ok_or_else(|| {
                invalid(
                    op.span,
                    format!("'{}': bad value for attribute '{name}'", op.name()),
                )
            }),
        }
    }

    /// The C++ argument for operand `v` and its C++ type (a view becomes its GlobalTensor).
    fn operand(
        &mut self,
        v: ValueId,
        op: &Op,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<(String, String)> {
        match self.f.ty(v) {
            Type::TensorView { .. } | Type::PartitionView { .. } | Type::MemRef { .. } => {
                let view = self.view_of(v, op.span)?;
                match &view.gt {
                    Some(g) => Ok(g.clone()),
                    None => Ok(self.global_tensor(&view, &[v], out)),
                }
            }
            _ => Ok((self.expr(v, op.span)?, self.cpp_type(v, op.span)?)),
        }
    }

    /// `pto.comm.tnotify` / `pto.comm.twait` → `pto::comm::TNOTIFY(sig, v, NotifyOp::X)` /
    /// `pto::comm::TWAIT(sig, v, WaitCmp::X)` on the signal view's GlobalTensor.
    pub(super) fn signal_op(
        &mut self,
        op: &Op,
        name: &str,
        signal: ValueId,
        value: ValueId,
        attrs: &[NamedAttr],
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let (key, kind) = if name == "comm.tnotify" {
            ("notifyOp", "notify_op")
        } else {
            ("cmp", "wait_cmp")
        };
        self.only_attrs(op, attrs, &[key])?;
        let Some(e) = self.enum_attr(op, attrs, key, kind)? else {
            return Err(invalid(
                op.span,
                format!("'pto.{name}' needs the attribute '{key}'"),
            ));
        };
        let view = self.view_of(signal, op.span)?;
        if view.elem != ScalarType::I32 {
            return Err(invalid(
                op.span,
                format!(
                    "'pto.{name}': a signal is a view of i32, %{} holds {}",
                    self.f.name_of(signal),
                    view.elem.name()
                ),
            ));
        }
        let (gt, _) = self.operand(signal, op, out)?;
        let v = self.expr(value, op.span)?;
        out.push(Stmt::Line(format!(
            "pto::comm::{}({gt}, (int32_t) {v}, {e});",
            cpp_name(&name["comm.".len()..])
        )));
        Ok(())
    }

    /// `pto.comm.tput` / `pto.comm.tget` → `pto::comm::TPUT[<AtomicType::X>](dst, src, stage
    /// [, stage2])` / `pto::comm::TGET(dst, src, stage[, stage2])`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn comm_copy(
        &mut self,
        op: &Op,
        name: &str,
        dst: ValueId,
        src: ValueId,
        stages: &[ValueId],
        attrs: &[NamedAttr],
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let put = name == "comm.tput";
        self.only_attrs(op, attrs, if put { &["atomicType"] } else { &[] })?;
        if stages.len() > 2 {
            return Err(invalid(
                op.span,
                format!("'pto.{name}' stages through one or two tiles"),
            ));
        }
        for t in stages {
            if self.f.ty(*t).tile().is_none() {
                return Err(invalid(
                    op.span,
                    format!(
                        "'pto.{name}': the staging operand %{} is not a tile",
                        self.f.name_of(*t)
                    ),
                ));
            }
        }
        let atomic = self.enum_attr(op, attrs, "atomicType", "atomic_type")?;
        let (d, _) = self.operand(dst, op, out)?;
        let (s, _) = self.operand(src, op, out)?;
        let mut args = vec![d, s];
        for t in stages {
            args.push(self.expr(*t, op.span)?);
        }
        let tmpl = match atomic {
            Some(a) if a != "AtomicType::AtomicNone" => format!("<{a}>"),
            _ => String::new(),
        };
        out.push(Stmt::Line(format!(
            "pto::comm::{}{tmpl}({});",
            if put { "TPUT" } else { "TGET" },
            args.join(", ")
        )));
        Ok(())
    }

    /// Refuses attributes other than `allowed` (and the ignored precision hints).
    fn only_attrs(&self, op: &Op, attrs: &[NamedAttr], allowed: &[&str]) -> DiagResult<()> {
        for a in attrs {
            if !allowed.contains(&a.name.as_str()) && !IGNORED_ATTRS.contains(&a.name.as_str()) {
                return Err(unsupported(
                    op.span,
                    format!("'{}': unsupported attribute '{}'", op.name(), a.name),
                ));
            }
        }
        Ok(())
    }

    /// `pto.tX ins(...) outs(...)`: the operands checked against the op's row of
    /// [`TILE_OPS`], the views made `GlobalTensor`s, then one line of C++.
    pub(super) fn tile_op(
        &mut self,
        op: &Op,
        name: &str,
        ins: &[ValueId],
        outs: &[ValueId],
        attrs: &[NamedAttr],
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let c = TileCall {
            op,
            name,
            ins,
            outs,
            attrs,
        };
        self.check_tile_operands(&c)?;
        let layout = tile_layout(&c)?;
        let (args, arg_types) = self.tile_args(&c, layout, out)?;
        let line = self.tile_line(&c, &args, &arg_types, out)?;
        out.push(Stmt::Line(line));
        Ok(())
    }

    /// Refuses a tile op outside [`TILE_OPS`], an attribute its row does not list, a GM view
    /// outside loads and stores, a pipe, and the wrong number of inputs or outputs.
    fn check_tile_operands(&self, c: &TileCall) -> DiagResult<()> {
        let TileCall {
            op,
            name,
            ins,
            outs,
            attrs,
        } = *c;
        let Some((_, allowed)) = TILE_OPS.iter().find(|(n, _)| *n == name) else {
            return Err(unsupported(
                op.span,
                format!("unsupported op 'pto.{name}' (docs/PTOAS.md lists the supported ops)"),
            ));
        };
        for a in attrs {
            if !allowed.contains(&a.name.as_str()) && !IGNORED_ATTRS.contains(&a.name.as_str()) {
                return Err(unsupported(
                    op.span,
                    format!("'pto.{name}': unsupported attribute '{}'", a.name),
                ));
            }
        }
        let view_op = matches!(name, "tload" | "tprefetch" | "tstore");
        for v in ins.iter().chain(outs) {
            let is_view = matches!(
                self.f.ty(*v),
                Type::TensorView { .. } | Type::PartitionView { .. } | Type::MemRef { .. }
            );
            if is_view && !view_op {
                return Err(invalid(
                    op.span,
                    format!("'pto.{name}' takes tiles and scalars; %{} is a GM view (load it with pto.tload)", self.f.name_of(*v)),
                ));
            }
            if matches!(self.f.ty(*v), Type::Pipe) {
                return Err(invalid(op.span, format!("'pto.{name}' cannot take a pipe")));
            }
        }
        if ins.is_empty() {
            return Err(invalid(
                op.span,
                format!("'pto.{name}' needs its inputs in ins(...)"),
            ));
        }
        let expected_outs = usize::from(name != "tprint");
        if outs.len() != expected_outs {
            return Err(invalid(
                op.span,
                format!(
                    "'pto.{name}' needs {expected_outs} output(s) in outs(...), got {}",
                    outs.len()
                ),
            ));
        }
        Ok(())
    }

    /// The C++ arguments (outputs first) and their C++ types; a GM memref takes the op's
    /// layout, a view must already have it.
    fn tile_args(
        &mut self,
        c: &TileCall,
        layout: Option<Layout>,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<(Vec<String>, Vec<String>)> {
        let (op, name) = (c.op, c.name);
        let mut args = Vec::new();
        let mut arg_types = Vec::new();
        for v in c.outs.iter().chain(c.ins) {
            let (a, t) = match (layout, self.f.ty(*v)) {
                (Some(l), Type::MemRef { .. }) => {
                    let mut view = self.view_of(*v, op.span)?;
                    view.layout = l;
                    self.global_tensor(&view, &[*v], out)
                }
                (Some(l), Type::TensorView { .. } | Type::PartitionView { .. }) => {
                    let view = self.view_of(*v, op.span)?;
                    if view.layout != l {
                        return Err(invalid(
                            op.span,
                            format!(
                                "'pto.{name}': layout {} disagrees with the layout {} of %{}",
                                l.name(),
                                view.layout.name(),
                                self.f.name_of(*v)
                            ),
                        ));
                    }
                    self.operand(*v, op, out)?
                }
                _ => self.operand(*v, op, out)?,
            };
            args.push(a);
            arg_types.push(t);
        }
        Ok((args, arg_types))
    }

    /// The C++ line of a tile op: `TX(d, a, b, ...)` by the general rule, or the op's
    /// special form (template arguments, mode arguments, the load and store shapes).
    fn tile_line(
        &mut self,
        c: &TileCall,
        args: &[String],
        arg_types: &[String],
        out: &mut Vec<Stmt>,
    ) -> DiagResult<String> {
        let TileCall {
            op,
            name,
            ins,
            attrs,
            ..
        } = *c;
        let call = cpp_name(name);
        Ok(match name {
            "tload" | "tprefetch" => {
                if ins.len() != 1 {
                    return Err(invalid(op.span, format!("'pto.{name}' loads one view")));
                }
                format!("{call}({}, {});", args[0], args[1])
            }
            "tstore" => self.tstore_line(c, args, arg_types)?,
            "tcvt" => self.tcvt_line(c, args, out)?,
            "tci" => self.tci_line(c, args)?,
            "tgather" if find_attr(attrs, "maskPattern").is_some() => self.tgather_line(c, args)?,
            "tcolsum" => tcolsum_line(c, args)?,
            "tmov" => self.tmov_line(c, args)?,
            "tmatmul" | "tmatmul.acc" | "tgemv" | "tgemv.acc" => {
                match self.enum_attr(op, attrs, "accPhase", "acc_phase")? {
                    Some(p) if !p.ends_with("Unspecified") => {
                        format!("{call}<{p}>({});", args.join(", "))
                    }
                    _ => format!("{call}({});", args.join(", ")),
                }
            }
            "tcmp" | "tcmps" => {
                let mode = self
                    .enum_attr(op, attrs, "cmpMode", "cmp")?
                    .unwrap_or_else(|| "CmpMode::EQ".into());
                format!("{call}({}, {mode});", args.join(", "))
            }
            _ => format!("{call}({});", args.join(", ")),
        })
    }

    /// `TSTORE`: the phase, atomic and relu attributes become template arguments.
    fn tstore_line(
        &self,
        c: &TileCall,
        args: &[String],
        arg_types: &[String],
    ) -> DiagResult<String> {
        let TileCall { op, ins, attrs, .. } = *c;
        if ins.is_empty() || ins.len() > 2 {
            return Err(invalid(
                op.span,
                "'pto.tstore' stores one tile (and an optional pre-quant scalar)",
            ));
        }
        let phase = self.enum_attr(op, attrs, "stPhase", "st_phase")?;
        let atomic = self.enum_attr(op, attrs, "atomicType", "atomic_type")?;
        let relu = self.enum_attr(op, attrs, "reluPreMode", "relu_pre_mode")?;
        let tile_ty = arg_types[1].clone();
        let gt_ty = arg_types[0].clone();
        let mut tmpl = Vec::new();
        if let Some(p) = &phase {
            tmpl.push(p.clone());
        }
        if atomic.is_some() || relu.is_some() {
            tmpl.push(tile_ty);
            tmpl.push(gt_ty);
            tmpl.push(atomic.unwrap_or_else(|| "AtomicType::AtomicNone".into()));
            if let Some(r) = relu {
                tmpl.push(r);
            }
        } else if phase.is_some() {
            tmpl.push(tile_ty);
            tmpl.push(gt_ty);
        }
        let t = if tmpl.is_empty() {
            String::new()
        } else {
            format!("<{}>", tmpl.join(", "))
        };
        Ok(format!("TSTORE{t}({});", args.join(", ")))
    }

    /// `TCVT`: the rounding and saturation modes as variables passed after the operands.
    fn tcvt_line(
        &mut self,
        c: &TileCall,
        args: &[String],
        out: &mut Vec<Stmt>,
    ) -> DiagResult<String> {
        let TileCall { op, attrs, .. } = *c;
        let rmode = self
            .enum_attr(op, attrs, "rmode", "round_mode")?
            .unwrap_or_else(|| "RoundMode::CAST_RINT".into());
        let sat = self
            .enum_attr(op, attrs, "sat_mode", "saturation_mode")?
            .unwrap_or_else(|| "SaturationMode::OFF".into());
        let rv = self.fresh();
        let sv = self.fresh();
        out.push(Stmt::Line(format!("RoundMode {rv} = {rmode};")));
        out.push(Stmt::Line(format!("SaturationMode {sv} = {sat};")));
        Ok(format!("TCVT({}, {rv}, {sv});", args.join(", ")))
    }

    /// `TCI<tile, scalar, descending>`: an index sequence from the start value.
    fn tci_line(&self, c: &TileCall, args: &[String]) -> DiagResult<String> {
        let TileCall {
            op,
            ins,
            outs,
            attrs,
            ..
        } = *c;
        if ins.len() != 1 {
            return Err(invalid(op.span, "'pto.tci' takes the start value"));
        }
        let desc = match find_attr(attrs, "descending") {
            None => false,
            Some(Attr::Bool(b)) => *b,
            Some(Attr::Unit) => true,
            Some(_) => return Err(invalid(op.span, "'pto.tci': 'descending' must be a bool")),
        };
        let tile_ty = self.cpp_type(outs[0], op.span)?;
        let s_ty = self.cpp_type(ins[0], op.span)?;
        Ok(format!(
            "TCI<{tile_ty}, {s_ty}, {}>({}, {});",
            u8::from(desc),
            args[0],
            args[1]
        ))
    }

    /// `TGATHER<dst, src, pattern>`: the mask-pattern form (one source).
    fn tgather_line(&self, c: &TileCall, args: &[String]) -> DiagResult<String> {
        let TileCall {
            op,
            ins,
            outs,
            attrs,
            ..
        } = *c;
        let mp = self
            .enum_attr(op, attrs, "maskPattern", "mask_pattern")?
            .unwrap_or_default();
        if ins.len() != 1 {
            return Err(invalid(
                op.span,
                "'pto.tgather' with a mask pattern takes one source",
            ));
        }
        let d = self.cpp_type(outs[0], op.span)?;
        let s = self.cpp_type(ins[0], op.span)?;
        Ok(format!(
            "TGATHER<{d}, {s}, {mp}>({}, {});",
            args[0], args[1]
        ))
    }

    /// `TMOV`, with `TMOV<dst, src, [acc-to-vec mode,] relu mode>` when either mode is given.
    fn tmov_line(&self, c: &TileCall, args: &[String]) -> DiagResult<String> {
        let TileCall {
            op,
            ins,
            outs,
            attrs,
            ..
        } = *c;
        let relu = self.enum_attr(op, attrs, "reluPreMode", "relu_pre_mode")?;
        let a2v = self.enum_attr(op, attrs, "accToVecMode", "acc_to_vec_mode")?;
        if relu.is_none() && a2v.is_none() {
            return Ok(format!("TMOV({});", args.join(", ")));
        }
        let d = self.cpp_type(outs[0], op.span)?;
        let s = self.cpp_type(ins[0], op.span)?;
        let mut tmpl = vec![d, s];
        tmpl.extend(a2v);
        tmpl.push(relu.unwrap_or_else(|| "ReluPreMode::NoRelu".into()));
        Ok(format!("TMOV<{}>({});", tmpl.join(", "), args.join(", ")))
    }

    /// `pto.tpush_to_aiv` / `_aic`: `TPUSH` into the function's pipe.
    pub(super) fn tpush(
        &mut self,
        op: &Op,
        tile: ValueId,
        attrs: &[NamedAttr],
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let (pipe, split) = self.pipe_for(op, attrs)?;
        let t = self.expr(tile, span)?;
        let tt = self.cpp_type(tile, span)?;
        out.push(Stmt::Line(format!(
            "TPUSH<{}, {tt}, {split}>({}, {t});",
            pipe.ty, pipe.var
        )));
        Ok(())
    }

    /// `pto.tpop_from_aic` / `_aiv`: a tile declared and filled by `TPOP`.
    pub(super) fn tpop(
        &mut self,
        op: &Op,
        valid: Option<(ValueId, ValueId)>,
        attrs: &[NamedAttr],
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let f = self.f;
        let r0 = op.results.first().copied();
        let Some(r) = r0 else { return Ok(()) };
        let (pipe, split) = self.pipe_for(op, attrs)?;
        let (vr, vc) = match valid {
            Some((a, b)) => (Some(a), Some(b)),
            None => (None, None),
        };
        let Some(tt) = f.ty(r).tile().cloned() else {
            return Err(invalid(span, "a pop produces a !pto.tile_buf"));
        };
        if vr.is_some() && (tt.v_row != Dim::Dynamic || tt.v_col != Dim::Dynamic) {
            return Err(invalid(
                span,
                format!(
                    "'{}' op expects tile result to have dynamic validShape (?, ?) when valid_row/valid_col operands are provided",
                    op.name()
                ),
            ));
        }
        self.tile_decl(r, vr, vc, span, out)?;
        let t = self.expr(r, span)?;
        out.push(Stmt::Line(format!(
            "TPOP<{}, {}, {split}>({}, {t});",
            pipe.ty,
            tt.cpp(),
            pipe.var
        )));
        Ok(())
    }

    /// `pto.tfree_from_aic` / `_aiv`: `TFREE` of the oldest popped slot.
    pub(super) fn tfree(
        &mut self,
        op: &Op,
        attrs: &[NamedAttr],
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let (pipe, split) = self.pipe_for(op, attrs)?;
        out.push(Stmt::Line(format!(
            "TFREE<{}, {split}>({});",
            pipe.ty, pipe.var
        )));
        Ok(())
    }

    /// `auto vN = TPipe<id, Direction::..., slot_size, slot_num, local_slot_num, nosplit>(gm,
    /// c2v, v2c);`
    pub(super) fn init_pipe(
        &mut self,
        op: &Op,
        attrs: &[NamedAttr],
        gm: Option<ValueId>,
        c2v: ValueId,
        v2c: ValueId,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let int = |k: &str| find_attr(attrs, k).and_then(Attr::as_int);
        let id = int("id").unwrap_or(0);
        let Some(dir) = int("dir_mask") else {
            return Err(invalid(
                op.span,
                format!("'{}' needs 'dir_mask'", op.name()),
            ));
        };
        let dir_tok = match dir {
            1 => "Direction::DIR_C2V",
            2 => "Direction::DIR_V2C",
            3 => "Direction::DIR_BOTH",
            _ => {
                return Err(invalid(
                    op.span,
                    format!("'{}': dir_mask must be 1, 2 or 3, got {dir}", op.name()),
                ))
            }
        };
        let Some(slot_size) = int("slot_size").filter(|s| *s > 0) else {
            return Err(invalid(
                op.span,
                format!("'{}' needs a positive 'slot_size'", op.name()),
            ));
        };
        let slot_num = int("slot_num").unwrap_or(if dir == 3 { 4 } else { 8 });
        let local = int("local_slot_num").unwrap_or(slot_num);
        if !(1..=64).contains(&slot_num) || !(1..=64).contains(&local) {
            return Err(invalid(
                op.span,
                "slot_num and local_slot_num must be in [1, 64]",
            ));
        }
        if !(0..=255).contains(&id) {
            return Err(invalid(
                op.span,
                format!("pipe id {id} must be in [0, 255]"),
            ));
        }
        let nosplit = match find_attr(attrs, "nosplit") {
            None | Some(Attr::Bool(false)) => false,
            Some(_) => true,
        };
        if self.pipes.contains_key(&id) {
            return Err(invalid(
                op.span,
                format!("requires unique initialize_pipe id in function (duplicate id = {id})"),
            ));
        }
        let ty = format!("TPipe<{id}, {dir_tok}, {slot_size}, {slot_num}, {local}, {nosplit}>");
        let gm_e = match gm {
            None => "nullptr".to_string(),
            Some(g) => {
                let e = self.expr(g, op.span)?;
                match self.f.ty(g) {
                    Type::Ptr { .. } | Type::MemRef { .. } => format!("(__gm__ void*) {e}"),
                    _ => format!("(__gm__ void*) (uintptr_t) {e}"),
                }
            }
        };
        let c = self.expr(c2v, op.span)?;
        let v = self.expr(v2c, op.span)?;
        let var = self.fresh();
        out.push(Stmt::Comment(format!("pto: {}", op.name())));
        out.push(Stmt::Line(format!(
            "auto {var} = {ty}({gm_e}, (uint32_t) {c}, (uint32_t) {v});"
        )));
        self.pipes.insert(id, Pipe { var, ty });
        Ok(())
    }

    /// The pipe an op with `{split, id}` uses, and its `TileSplitAxis::...`.
    pub(super) fn pipe_for(&self, op: &Op, attrs: &[NamedAttr]) -> DiagResult<(Pipe, String)> {
        let id = find_attr(attrs, "id").and_then(Attr::as_int).unwrap_or(0);
        let Some(pipe) = self.pipes.get(&id) else {
            return Err(invalid(
                op.span,
                format!("'{}' requires matching frontend initialize_pipe(id = {id}) in the same function", op.name()),
            ));
        };
        let split = find_attr(attrs, "split")
            .and_then(Attr::as_int)
            .unwrap_or(0);
        let tok = match split {
            0 => "TileSplitAxis::TILE_NO_SPLIT",
            1 => "TileSplitAxis::TILE_UP_DOWN",
            2 => "TileSplitAxis::TILE_LEFT_RIGHT",
            3 => "TileSplitAxis::TILE_UP_DOWN_ODD",
            4 => "TileSplitAxis::TILE_LEFT_RIGHT_ODD",
            _ => {
                return Err(invalid(
                    op.span,
                    format!("'{}': split must be 0 to 4, got {split}", op.name()),
                ))
            }
        };
        Ok((pipe.clone(), tok.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The instructions the PTO-ISA header defines (`PTO_INST R NAME(` or a `PTO_SIM_*(NAME,`
    /// macro), and those it declares unsupported.
    fn header_instructions() -> (Vec<String>, Vec<String>) {
        let mut defined = Vec::new();
        let mut refused = Vec::new();
        let headers = pto_toolchain::embedded_headers();
        for (_, bytes) in headers.iter().filter(|(p, _)| p.starts_with("pto-isa/")) {
            let text = String::from_utf8_lossy(bytes);
            for line in text.lines().map(str::trim_start) {
                let name_at = |rest: &str, end: char| {
                    let n: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    rest[n.len()..].starts_with(end).then_some(n)
                };
                if let Some(rest) = line.strip_prefix("PTO_SIM_UNSUPPORTED(") {
                    refused.extend(name_at(rest, ','));
                } else if let Some(rest) = line.strip_prefix("PTO_SIM_") {
                    let after = rest.split_once('(').map_or("", |(_, r)| r);
                    defined.extend(name_at(after, ','));
                } else if let Some(rest) = line.strip_prefix("PTO_INST ") {
                    let after = rest.split_once(' ').map_or("", |(_, r)| r);
                    defined.extend(name_at(after, '('));
                }
            }
        }
        (defined, refused)
    }

    #[test]
    fn every_lowered_tile_op_is_in_the_header_or_listed() {
        let (defined, refused) = header_instructions();
        let has = |list: &[String], c: &str| list.iter().any(|d| d == c);
        let mut missing = Vec::new();
        let mut unsupported = Vec::new();
        for (name, _) in TILE_OPS {
            let c = cpp_instruction(name);
            if has(&refused, &c) {
                unsupported.push(c);
            } else if !has(&defined, &c) {
                missing.push(c);
            }
        }
        assert!(has(&defined, &cpp_instruction("treshape")));
        assert_eq!(
            missing, HEADER_LACKS.0,
            "ops ptoas lowers, the header lacks"
        );
        assert_eq!(unsupported, HEADER_LACKS.1, "ops the header refuses");
    }

    #[test]
    fn cpp_instructions_follow_the_lowering_rule() {
        assert_eq!(cpp_instruction("tmatmul.acc"), "TMATMUL_ACC");
        assert_eq!(cpp_instruction("tadd"), "TADD");
        assert_eq!(cpp_instruction("get_subblock_idx"), "get_subblockid");
        assert!(is_query_op("get_block_num") && !is_query_op("tadd"));
    }
}
