//! The distributed kernel operations (`pld.*` in a kernel) as `.pto`: the comm context is a
//! `!pto.ptr<i64>` parameter (the domain's `CommContext`, reference `pypto-l3.md` §2.3), the
//! rank and rank count its slot 2 (`rankId` low, `rankNum` high 32 bits), and a peer's copy
//! of a window tensor is this rank's pointer moved by `windowsIn[peer] - windowsIn[rankId]`
//! (slots 4 + i), in elements (§2.4). Remote loads and stores go through a view of that
//! pointer; signals are `pto.comm.tnotify` / `pto.comm.twait` on a 1x1 partition.

use super::{partition_type, perr, tile_buf, view_type, Emitter, Val, ViewVal};
use crate::error::CompileError;
use crate::ir::{Call, Expr, Span, Var};
use crate::types::{DataType, Type};

/// The suffix of the hidden comm-context parameter the front end adds after the parameters
/// for each `pld.DistributedTensor` parameter `<name>`: `<name>__ctx`.
pub const CTX_SUFFIX: &str = "__ctx";

/// Whether `v` is the comm-context parameter of a window tensor.
pub fn is_ctx_param(v: &Var) -> bool {
    crate::passes::ssa::base_name(v.name()).ends_with(CTX_SUFFIX)
}

/// `u64` slot of `CommContext` holding `rankId` (low half) and `rankNum` (high half).
const RANK_SLOT: i64 = 2;
/// `u64` slot of `windowsIn[0]`.
const WINDOWS_SLOT: i64 = 4;

impl Emitter<'_> {
    fn ctx_ptr(&self, e: &Expr, span: &Span) -> Result<String, CompileError> {
        match e.as_var().and_then(|v| self.values.get(&v.id())) {
            Some(Val::Scalar {
                name,
                dtype: DataType::UInt64,
            }) => Ok(name.clone()),
            _ => Err(perr(
                span,
                "expected the comm context of a pld.DistributedTensor parameter".into(),
                "Write ctx = pld.get_comm_ctx(window_param).",
            )),
        }
    }

    /// `rankId` (or with `high`, `rankNum`) as an `index`.
    fn rank_field(&mut self, ctx: &str, high: bool, span: &Span) -> String {
        let slot = self.index_const(RANK_SLOT);
        let pair = self.name_for("rank_pair");
        self.line(
            &format!("{pair} = pto.load_scalar {ctx}[{slot}] : !pto.ptr<i64> -> i64"),
            span,
        );
        let word = if high {
            let c32 = self.int_const(32, DataType::Int64);
            let w = self.name_for("rank_hi");
            self.line(&format!("{w} = arith.shrui {pair}, {c32} : i64"), span);
            w
        } else {
            pair
        };
        let w32 = self.name_for("rank_i32");
        self.line(&format!("{w32} = arith.trunci {word} : i64 to i32"), span);
        let idx = self.name_for(if high { "nranks" } else { "rank" });
        self.line(
            &format!("{idx} = arith.index_cast {w32} : i32 to index"),
            span,
        );
        idx
    }

    /// `windowsIn[i]` for the `index` value `i`.
    fn window_base(&mut self, ctx: &str, i: &str, span: &Span) -> String {
        let c = self.index_const(WINDOWS_SLOT);
        let slot = self.name_for("win_slot");
        self.line(&format!("{slot} = arith.addi {c}, {i} : index"), span);
        let base = self.name_for("win_base");
        self.line(
            &format!("{base} = pto.load_scalar {ctx}[{slot}] : !pto.ptr<i64> -> i64"),
            span,
        );
        base
    }

    /// The view of `peer`'s copy of the window tensor `src`.
    fn peer_view(
        &mut self,
        src: &ViewVal,
        ctx: &str,
        peer: &Expr,
        span: &Span,
    ) -> Result<ViewVal, CompileError> {
        if !src.base.is_empty() || src.tensor.is_dynamic() {
            return Err(perr(
                span,
                "a remote access needs the whole window tensor parameter".into(),
                "Pass the pld.DistributedTensor parameter itself (offsets= selects the region).",
            ));
        }
        let me = self.rank_field(ctx, false, span);
        let local = self.window_base(ctx, &me, span);
        let (p, _) = self.scalar(peer, Some(DataType::Index), span)?;
        let remote = self.window_base(ctx, &p, span);
        let bytes = self.name_for("peer_bytes");
        self.line(
            &format!("{bytes} = arith.subi {remote}, {local} : i64"),
            span,
        );
        let size = self.int_const(src.tensor.dtype.size_bytes() as i64, DataType::Int64);
        let elems = self.name_for("peer_elems");
        self.line(
            &format!("{elems} = arith.divsi {bytes}, {size} : i64"),
            span,
        );
        let delta = self.name_for("peer_delta");
        self.line(
            &format!("{delta} = arith.index_cast {elems} : i64 to index"),
            span,
        );
        let ptr_ty = format!("!pto.ptr<{}>", src.tensor.dtype.pto_name());
        let ptr = self.name_for("peer_ptr");
        self.line(
            &format!(
                "{ptr} = pto.addptr {}, {delta} : {ptr_ty} -> {ptr_ty}",
                src.ptr
            ),
            span,
        );
        let (r, c) = super::fold_2d(&src.tensor.shape);
        let (rn, cn, one) = (
            self.index_const(r),
            self.index_const(c),
            self.index_const(1),
        );
        let name = self.name_for("peer_view");
        self.line(
            &format!(
                "{name} = pto.make_tensor_view {ptr}, shape = [{rn}, {cn}], strides = [{cn}, {one}] {{layout = #pto.layout<nd>}} : {}",
                view_type(&src.tensor)
            ),
            span,
        );
        Ok(ViewVal {
            name,
            ptr,
            tensor: src.tensor.clone(),
            root: src.root,
            base: Vec::new(),
        })
    }

    /// A 1x1 partition of the INT32 signal view `sig` at `offsets`.
    fn signal_cell(
        &mut self,
        sig: &ViewVal,
        offsets: &Expr,
        span: &Span,
    ) -> Result<String, CompileError> {
        if sig.tensor.dtype != DataType::Int32 {
            return Err(perr(
                span,
                format!(
                    "a signal must be an INT32 window tensor, got {}",
                    Type::Tensor(sig.tensor.clone()).describe()
                ),
                "Declare the signal pld.DistributedTensor[[n, 1], pl.INT32].",
            ));
        }
        let ones = vec![1; sig.tensor.shape.len()];
        Ok(self.partition(sig, offsets, &ones, span)?.0)
    }

    /// A `dist.*` operation of a kernel.
    pub(super) fn dist_op(
        &mut self,
        target: Option<&Var>,
        c: &Call,
        span: &Span,
    ) -> Result<(), CompileError> {
        let op = c.op_name().unwrap_or("");
        let bind_scalar = |this: &mut Self, name: String| {
            if let Some(t) = target {
                this.values.insert(
                    t.id(),
                    Val::Scalar {
                        name,
                        dtype: DataType::Index,
                    },
                );
            }
        };
        match op {
            "dist.rank" | "dist.nranks" => {
                let ctx = self.ctx_ptr(&c.args[0], span)?;
                let v = self.rank_field(&ctx, op == "dist.nranks", span);
                bind_scalar(self, v);
            }
            "dist.remote_load" => {
                let src = self.view(&c.args[0], span)?;
                let ctx = self.ctx_ptr(&c.args[3], span)?;
                let peer = self.peer_view(&src, &ctx, &c.args[1], span)?;
                let Type::Tile(ty) = c.ty.clone() else {
                    return Err(perr(span, "remote_load makes a tile".into(), ""));
                };
                let sizes = c.kwargs.ints("shape").unwrap_or(&[]).to_vec();
                let t = self.alloc(&target.map_or("recv".into(), |v| v.name().to_string()), &ty, span);
                let (pv, region) = self.partition(&peer, &c.args[2], &sizes, span)?;
                self.line(
                    &format!(
                        "pto.tload ins({pv} : {}) outs({t} : {})",
                        partition_type(&region, ty.dtype),
                        tile_buf(&ty)
                    ),
                    span,
                );
                if let Some(v) = target {
                    self.values.insert(v.id(), Val::Tile { name: t, ty });
                }
            }
            "dist.remote_store" => {
                let (tile, ty) = self.tile(&c.args[0], span)?;
                let dst = self.view(&c.args[1], span)?;
                let ctx = self.ctx_ptr(&c.args[4], span)?;
                let peer = self.peer_view(&dst, &ctx, &c.args[2], span)?;
                let sizes = crate::ops::store_region(dst.tensor.shape.len(), ty.rows, ty.cols);
                let (pv, region) = self.partition(&peer, &c.args[3], &sizes, span)?;
                self.line(
                    &format!(
                        "pto.tstore ins({tile} : {}) outs({pv} : {})",
                        tile_buf(&ty),
                        partition_type(&region, dst.tensor.dtype)
                    ),
                    span,
                );
                if let Some(v) = target {
                    self.values.insert(v.id(), Val::View(dst));
                }
            }
            "dist.notify" => self.notify(c, span)?,
            "dist.put" | "dist.get" => self.copy(op == "dist.put", c, span)?,
            "dist.wait" => {
                let sig = self.view(&c.args[0], span)?;
                let cell = self.signal_cell(&sig, &c.args[1], span)?;
                let (v, _) = self.scalar(&c.args[2], Some(DataType::Int32), span)?;
                let cmp = c.kwargs.str("cmp").unwrap_or("ge").to_string();
                self.line("pto.cmo.cacheinvalid all #pto.address_space<gm>", span);
                self.line(
                    &format!(
                        "pto.comm.twait({cell}, {v} : {}, i32) {{cmp = #pto<wait_cmp {cmp}>}}",
                        partition_type(&[1, 1], DataType::Int32)
                    ),
                    span,
                );
                self.line("pto.cmo.cacheinvalid all #pto.address_space<gm>", span);
            }
            other => {
                return Err(perr(
                    span,
                    format!("the operation '{other}' has no kernel codegen"),
                    "Distributed kernel operations: pld.rank, pld.nranks, pld.tile.remote_load / remote_store, pld.system.notify / wait, pld.tensor.barrier.",
                ))
            }
        }
        Ok(())
    }

    /// `pld.tensor.put` (this rank's `src` into `peer`'s `dst`) or `pld.tensor.get`
    /// (`peer`'s `src` into this rank's `dst`): a GM-to-GM copy staged through a Vec tile.
    fn copy(&mut self, put: bool, c: &Call, span: &Span) -> Result<(), CompileError> {
        let dst = self.view(&c.args[0], span)?;
        let src = self.view(&c.args[2], span)?;
        let ctx = self.ctx_ptr(&c.args[3], span)?;
        let (dst, src) = if put {
            (self.peer_view(&dst, &ctx, &c.args[1], span)?, src)
        } else {
            let peer = self.peer_view(&src, &ctx, &c.args[1], span)?;
            (dst, peer)
        };
        let shape = dst.tensor.shape.clone();
        let zeros = Expr::List(vec![Expr::index(0); shape.len()]);
        let (pd, region) = self.partition(&dst, &zeros, &shape, span)?;
        let (ps, _) = self.partition(&src, &zeros, &shape, span)?;
        let stage_ty = crate::types::TileType {
            rows: region[0],
            cols: region[1],
            dtype: dst.tensor.dtype,
            memory: crate::types::MemorySpace::Vec,
        };
        let stage = self.alloc("stage", &stage_ty, span);
        let pt = partition_type(&region, dst.tensor.dtype);
        let tb = tile_buf(&stage_ty);
        let (name, attr) = if put {
            let atomic = c.kwargs.str("atomic").unwrap_or("atomic_none").to_string();
            (
                "tput",
                format!(" {{atomicType = #pto<atomic_type {atomic}>}}"),
            )
        } else {
            ("tget", String::new())
        };
        self.line("pto.barrier <PIPE_ALL>", span);
        self.line(
            &format!("pto.comm.{name}({pd}, {ps}, buf({stage}) : {pt}, {pt}, {tb}){attr}"),
            span,
        );
        self.line("pto.barrier <PIPE_ALL>", span);
        Ok(())
    }

    /// `pld.system.notify`: set or add `value` in `peer`'s signal cell, after this rank's
    /// writes are visible.
    fn notify(&mut self, c: &Call, span: &Span) -> Result<(), CompileError> {
        let sig = self.view(&c.args[0], span)?;
        let ctx = self.ctx_ptr(&c.args[4], span)?;
        let peer = self.peer_view(&sig, &ctx, &c.args[1], span)?;
        let cell = self.signal_cell(&peer, &c.args[2], span)?;
        let (v, _) = self.scalar(&c.args[3], Some(DataType::Int32), span)?;
        let kind = c.kwargs.str("op").unwrap_or("atomic_add").to_string();
        self.line("pto.barrier <PIPE_ALL>", span);
        self.line("pto.fence.barrier_all #pto.fence_scope<gm>", span);
        self.line(
            &format!(
                "pto.comm.tnotify({cell}, {v} : {}, i32) {{notifyOp = #pto<notify_op {kind}>}}",
                partition_type(&[1, 1], DataType::Int32)
            ),
            span,
        );
        Ok(())
    }
}
