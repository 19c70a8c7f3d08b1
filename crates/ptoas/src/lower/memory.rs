//! GM views (compile-time records until a `partition_view` makes a `GlobalTensor`), tile
//! declarations and views of tiles, pointer access and reserved buffers.

use super::{invalid, unsupported, DimE, FnLower, View};
use crate::cpp::Stmt;
use crate::error::DiagResult;
use crate::ir::{Op, ValueId};
use crate::types::{Dim, Layout, Type};

impl FnLower<'_> {
    /// `pto.make_tensor_view`: a compile-time [`View`] (no C++).
    pub(super) fn make_tensor_view(
        &mut self,
        op: &Op,
        ptr: ValueId,
        shape: &[ValueId],
        strides: &[ValueId],
    ) -> DiagResult<()> {
        let span = op.span;
        let f = self.f;
        let r0 = op.results.first().copied();
        let Some(r) = r0 else { return Ok(()) };
        let base = self.expr(ptr, span)?;
        let (type_shape, elem) = match f.ty(r) {
            Type::TensorView { shape, elem, .. } => (shape.clone(), *elem),
            other => return Err(invalid(span, format!("make_tensor_view produces {other}"))),
        };
        let mut dims = Vec::new();
        for (i, v) in shape.iter().enumerate() {
            dims.push(self.dim_of(*v, type_shape.get(i).copied(), span)?);
        }
        let mut st = Vec::new();
        for v in strides {
            st.push(self.dim_of(*v, None, span)?);
        }
        self.views.insert(
            r,
            View {
                base,
                elem,
                shape: dims,
                strides: st,
                offset: Vec::new(),
                layout: self.layouts.get(&r).copied().unwrap_or(Layout::Nd),
                gt: None,
            },
        );
        Ok(())
    }

    /// `pto.partition_view`: the view moved by its offsets, materialized as a `GlobalTensor`.
    pub(super) fn partition_view(
        &mut self,
        op: &Op,
        source: ValueId,
        offsets: &[ValueId],
        sizes: &[ValueId],
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let f = self.f;
        let r0 = op.results.first().copied();
        let Some(r) = r0 else { return Ok(()) };
        let mut view = self.view_of(source, span)?;
        let type_shape = match f.ty(r) {
            Type::PartitionView { shape, .. } => shape.clone(),
            _ => Vec::new(),
        };
        for (i, o) in offsets.iter().enumerate() {
            let stride = view.strides.get(i).cloned().unwrap_or(DimE::S(1));
            match (self.consts.get(*o), &stride) {
                (Some(0), _) | (_, DimE::S(0)) => {}
                (Some(k), DimE::S(s)) => view.offset.push(match k.checked_mul(*s) {
                    Some(p) => p.to_string(),
                    None => format!("{k} * {s}"),
                }),
                _ => {
                    let oe = self.expr(*o, span)?;
                    view.offset.push(match &stride {
                        DimE::S(1) => oe,
                        s => format!("{oe} * {}", s.text()),
                    });
                }
            }
        }
        let mut dims = Vec::new();
        for (i, v) in sizes.iter().enumerate() {
            dims.push(self.dim_of(*v, type_shape.get(i).copied(), span)?);
        }
        view.shape = dims;
        view.layout = self.layouts.get(&r).copied().unwrap_or(view.layout);
        view.gt = None;
        let gt = self.global_tensor(&view, &[r], out);
        view.gt = Some(gt);
        self.views.insert(r, view);
        Ok(())
    }

    /// `pto.get_tensor_view_dim` / `_stride`: an extent or stride of a view.
    pub(super) fn view_query(
        &mut self,
        op: &Op,
        stride: bool,
        view: ValueId,
        dim: ValueId,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let r0 = op.results.first().copied();
        let Some(r) = r0 else { return Ok(()) };
        let v = self.view_of(view, span)?;
        let Some(d) = self.consts.get(dim) else {
            return Err(unsupported(
                span,
                "the dimension of a view query must be a constant",
            ));
        };
        let list = if stride { &v.strides } else { &v.shape };
        let Some(e) = usize::try_from(d).ok().and_then(|d| list.get(d)) else {
            return Err(invalid(span, format!("dimension {d} is out of range")));
        };
        self.declare(out, r, "int64_t", e.text(), false);
        Ok(())
    }

    /// `pto.alloc_tile`: a `Tile<...>` declaration bound to its planned or given address.
    pub(super) fn alloc_tile(
        &mut self,
        op: &Op,
        addr: Option<ValueId>,
        valid_row: Option<ValueId>,
        valid_col: Option<ValueId>,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let r0 = op.results.first().copied();
        let Some(r) = r0 else { return Ok(()) };
        let address = match addr {
            Some(a) => format!("(uint64_t) {}", self.expr(a, span)?),
            None => match self.plan.tiles.get(&(self.fi, r)) {
                Some(a) => a.to_string(),
                None => return Err(invalid(span, "tile has no planned address")),
            },
        };
        self.tile_decl(r, valid_row, valid_col, span, out)?;
        let tile = self.expr(r, span)?;
        let av = self.fresh();
        out.push(self.comment(&[r]));
        out.push(Stmt::Line(format!("uint64_t {av} = {address};")));
        out.push(Stmt::Line(format!("TASSIGN({tile}, {av});")));
        Ok(())
    }

    /// `pto.subview`: a tile over a window of its source, with the parent's pitch.
    pub(super) fn subview(
        &mut self,
        op: &Op,
        source: ValueId,
        offsets: &[ValueId],
        sizes: &[i64],
        valid: Option<(ValueId, ValueId)>,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let f = self.f;
        let r0 = op.results.first().copied();
        let Some(r) = r0 else { return Ok(()) };
        let (Some(st), Some(rt)) = (f.ty(source).tile().cloned(), f.ty(r).tile().cloned()) else {
            return Err(invalid(span, "pto.subview works on tiles"));
        };
        if offsets.len() != 2 || sizes.len() != 2 {
            return Err(invalid(span, "pto.subview needs two offsets and two sizes"));
        }
        if sizes[0] > st.rows || sizes[1] > st.cols || sizes[0] <= 0 || sizes[1] <= 0 {
            return Err(invalid(
                span,
                "pto.subview sizes must lie inside the source tile",
            ));
        }
        // The view keeps the parent's physical shape (its pitch); its valid shape is
        // the window.
        let mut vt = rt.clone();
        vt.rows = st.rows;
        vt.cols = st.cols;
        vt.blayout = st.blayout;
        vt.slayout = st.slayout;
        vt.fractal = st.fractal;
        let name = self.fresh();
        let ty = vt.cpp();
        out.push(self.comment(&[r]));
        let ctor = match (vt.v_row, vt.v_col, valid) {
            (Dim::Dynamic, Dim::Dynamic, Some((vr, vc))) => {
                format!(
                    " = {ty}({}, {})",
                    self.expr(vr, span)?,
                    self.expr(vc, span)?
                )
            }
            (Dim::Dynamic, Dim::Dynamic, None) => {
                format!(" = {ty}({}, {})", sizes[0], sizes[1])
            }
            (Dim::Dynamic, _, v) => format!(
                " = {ty}({})",
                match v {
                    Some((vr, _)) => self.expr(vr, span)?,
                    None => sizes[0].to_string(),
                }
            ),
            (_, Dim::Dynamic, v) => format!(
                " = {ty}({})",
                match v {
                    Some((_, vc)) => self.expr(vc, span)?,
                    None => sizes[1].to_string(),
                }
            ),
            _ => String::new(),
        };
        out.push(Stmt::Line(format!("{ty} {name}{ctor};")));
        let src = self.expr(source, span)?;
        let i = self.offset_expr(offsets[0], span)?;
        let j = self.offset_expr(offsets[1], span)?;
        let off = match st.blayout {
            crate::types::BLayout::RowMajor => format!("{i} * {} + {j}", st.cols),
            crate::types::BLayout::ColMajor => format!("{j} * {} + {i}", st.rows),
        };
        out.push(Stmt::Line(format!(
            "TASSIGN({name}, {src}.data() + ({off}));"
        )));
        self.names.insert(r, name);
        Ok(())
    }

    /// `pto.treshape` / `pto.bitcast`: the source tile's bytes under another tile type.
    pub(super) fn reinterpret(
        &mut self,
        op: &Op,
        bitcast: bool,
        source: ValueId,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let f = self.f;
        let r0 = op.results.first().copied();
        let Some(r) = r0 else { return Ok(()) };
        let (Some(st), Some(rt)) = (f.ty(source).tile(), f.ty(r).tile()) else {
            return Err(invalid(span, format!("'{}' works on tiles", op.name())));
        };
        if st.loc != rt.loc {
            return Err(invalid(
                span,
                format!("'{}' cannot change the tile's memory", op.name()),
            ));
        }
        let src = self.expr(source, span)?;
        let name = self.fresh();
        let ty = rt.cpp();
        out.push(self.comment(&[r]));
        out.push(Stmt::Line(format!("{ty} {name};")));
        if bitcast || st.dtype != rt.dtype {
            out.push(Stmt::Line(format!(
                "TASSIGN({name}, reinterpret_cast<uint64_t>({src}.data()));"
            )));
        } else {
            out.push(Stmt::Line(format!("TRESHAPE({name}, {src});")));
        }
        self.names.insert(r, name);
        Ok(())
    }

    /// `pto.tassign`: binds a tile to an explicit address.
    pub(super) fn tassign(
        &mut self,
        op: &Op,
        tile: ValueId,
        addr: ValueId,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let r0 = op.results.first().copied();
        let t = self.expr(tile, span)?;
        let a = self.expr(addr, span)?;
        out.push(Stmt::Line(format!("TASSIGN({t}, (uint64_t) {a});")));
        if let Some(r) = r0 {
            self.names.insert(r, t);
        }
        Ok(())
    }

    /// `pto.set_validshape`: a dynamic tile's valid rows and columns.
    pub(super) fn set_valid_shape(
        &mut self,
        op: &Op,
        tile: ValueId,
        rows: ValueId,
        cols: ValueId,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let f = self.f;
        let t = self.expr(tile, span)?;
        let Some(tt) = f.ty(tile).tile() else {
            return Err(invalid(span, "pto.set_validshape works on tiles"));
        };
        if tt.v_row != Dim::Dynamic || tt.v_col != Dim::Dynamic {
            return Err(invalid(
                span,
                "pto.set_validshape needs a tile with dynamic valid rows and columns (v_row=?, v_col=?)",
            ));
        }
        let r = self.expr(rows, span)?;
        let c = self.expr(cols, span)?;
        out.push(Stmt::Line(format!("{t}.SetValidShape({r}, {c});")));
        Ok(())
    }

    /// `pto.addptr`: pointer arithmetic.
    pub(super) fn add_ptr(
        &mut self,
        op: &Op,
        ptr: ValueId,
        offset: ValueId,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        self.declare_through_ptr(op, ptr, offset, out, |p, o| format!("{p} + {o}"))
    }

    /// `pto.load_scalar`: one element read through a pointer.
    pub(super) fn load_scalar(
        &mut self,
        op: &Op,
        ptr: ValueId,
        offset: ValueId,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        self.declare_through_ptr(op, ptr, offset, out, |p, o| format!("{p}[{o}]"))
    }

    /// Declares `op`'s result (if it has one) as `render(pointer, offset)`.
    fn declare_through_ptr(
        &mut self,
        op: &Op,
        ptr: ValueId,
        offset: ValueId,
        out: &mut Vec<Stmt>,
        render: impl Fn(&str, &str) -> String,
    ) -> DiagResult<()> {
        let span = op.span;
        let Some(r) = op.results.first().copied() else {
            return Ok(());
        };
        let p = self.expr(ptr, span)?;
        let o = self.expr(offset, span)?;
        let ty = self.cpp_type(r, span)?;
        self.declare(out, r, &ty, render(&p, &o), false);
        Ok(())
    }

    /// `pto.store_scalar`: one element written through a pointer.
    pub(super) fn store_scalar(
        &mut self,
        op: &Op,
        value: ValueId,
        ptr: ValueId,
        offset: ValueId,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let v = self.expr(value, span)?;
        let p = self.expr(ptr, span)?;
        let o = self.expr(offset, span)?;
        out.push(Stmt::Line(format!("{p}[{o}] = {v};")));
        Ok(())
    }

    /// `pto.reserve_buffer`: the planned address of this function's buffer `name`.
    pub(super) fn reserve_buffer(
        &mut self,
        op: &Op,
        name: &str,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let f = self.f;
        let r0 = op.results.first().copied();
        let Some(r) = r0 else { return Ok(()) };
        let key = (f.name.clone(), name.to_string());
        let Some(addr) = self.plan.reserved.get(&key) else {
            return Err(invalid(
                span,
                format!("reserved buffer \"{name}\" was not placed"),
            ));
        };
        let ty = self.cpp_type(r, span)?;
        self.declare(out, r, &ty, addr.to_string(), true);
        Ok(())
    }

    /// `pto.import_reserved_buffer`: the planned address of a peer function's buffer.
    pub(super) fn import_reserved_buffer(
        &mut self,
        op: &Op,
        name: &str,
        peer_func: &str,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let r0 = op.results.first().copied();
        let Some(r) = r0 else { return Ok(()) };
        let key = (peer_func.to_string(), name.to_string());
        let Some(addr) = self.plan.reserved.get(&key) else {
            return Err(invalid(
                span,
                format!("'@{peer_func}' reserves no buffer named \"{name}\""),
            ));
        };
        let ty = self.cpp_type(r, span)?;
        self.declare(out, r, &ty, addr.to_string(), true);
        Ok(())
    }
}
