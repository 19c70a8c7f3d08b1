//! Synchronization and cache maintenance: flags between pipes, barriers, the data-cache
//! invalidation and the GM fence.

use super::{invalid, unsupported, FnLower};
use crate::cpp::Stmt;
use crate::error::DiagResult;
use crate::ir::{Attr, Op, ValueId};

impl FnLower<'_> {
    /// `pto.set_flag` / `wait_flag` (and the event spellings): a flag between two pipes.
    pub(super) fn flag(
        &self,
        op: &Op,
        name: &str,
        src: &Attr,
        dst: &Attr,
        event: &Attr,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let call = if name == "set_flag" || name == "record_event" {
            "set_flag"
        } else {
            "wait_flag"
        };
        let s = pipe_token(src).ok_or_else(|| invalid(span, "unknown pipe or op type"))?;
        let d = pipe_token(dst).ok_or_else(|| invalid(span, "unknown pipe or op type"))?;
        let e = match event.pto_value() {
            Some(v) if v.starts_with("EVENT_ID") => v.to_string(),
            _ => return Err(invalid(span, "expected an event id <EVENT_IDn>")),
        };
        out.push(Stmt::Line(format!("{call}({s}, {d}, {e});")));
        Ok(())
    }

    /// `pto.barrier` / `pto.barrier_sync`: `pipe_barrier`.
    pub(super) fn barrier(&self, op: &Op, pipe: &Attr, out: &mut Vec<Stmt>) -> DiagResult<()> {
        let span = op.span;
        let p = pipe_token(pipe).ok_or_else(|| invalid(span, "unknown pipe or op type"))?;
        out.push(Stmt::Line(format!("pipe_barrier({p});")));
        Ok(())
    }

    /// `pto.cmo.cacheinvalid`: one GM cache line, or the whole data cache.
    pub(super) fn cache_invalid(
        &mut self,
        op: &Op,
        target: Option<ValueId>,
        space: Option<&Attr>,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        match target {
            Some(t) => {
                let ptr = self.gm_address(t, span)?;
                out.push(Stmt::Line(format!("PTOAS__DCCI_SINGLE_CACHE_LINE({ptr});")));
            }
            None => {
                let space = space.and_then(|a| match a {
                    Attr::Pto { kind, value, .. } if kind == "address_space" => {
                        Some(value.as_str())
                    }
                    _ => None,
                });
                if space != Some("gm") {
                    return Err(invalid(
                        span,
                        "'pto.cmo.cacheinvalid all' takes #pto.address_space<gm> (the data cache holds GM lines only)",
                    ));
                }
                out.push(Stmt::Line(
                    "dcci((__gm__ void*)0, cache_line_t::ENTIRE_DATA_CACHE);".into(),
                ));
            }
        }
        Ok(())
    }

    /// `pto.fence.barrier_all`: a DDR barrier (GM scope only).
    pub(super) fn fence(&self, op: &Op, scope: &Attr, out: &mut Vec<Stmt>) -> DiagResult<()> {
        let span = op.span;
        match scope {
            Attr::Pto { kind, value, .. } if kind == "fence_scope" && value == "gm" => {
                out.push(Stmt::Line("dsb(DSB_DDR);".into()));
            }
            _ => {
                return Err(unsupported(
                    span,
                    "'pto.fence.barrier_all' supports the scope #pto.fence_scope<gm> only",
                ))
            }
        }
        Ok(())
    }
}

/// `PIPE_X` for a pipe attribute, or the pipe of a sync op type.
fn pipe_token(a: &Attr) -> Option<String> {
    let v = a.pto_value()?;
    if v.starts_with("PIPE_") {
        return Some(v.to_string());
    }
    Some(
        match v {
            "TLOAD" | "EVENT_LOAD_FROM_GM" => "PIPE_MTE2",
            "TSTORE_ACC" | "EVENT_STORE_FROM_ACC" | "TMOV_V2M" | "EVENT_MOVE_VEC_TO_MAT" => {
                "PIPE_FIX"
            }
            "TSTORE_VEC" | "EVENT_STORE_FROM_VEC" => "PIPE_MTE3",
            "TMOV_M2L"
            | "TMOV_M2S"
            | "TMOV_M2B"
            | "TMOV_M2V"
            | "EVENT_MOVE_MAT_TO_LEFT"
            | "EVENT_MOVE_MAT_TO_SCALAR"
            | "EVENT_MOVE_MAT_TO_BIAS"
            | "EVENT_MOVE_MAT_TO_VEC" => "PIPE_MTE1",
            "TMATMUL" | "EVENT_COMPUTE_MATMUL" => "PIPE_M",
            "TVEC" | "TVECWAIT_EVENT" | "EVENT_COMPUTE_VEC" | "EVENT_VEC_WAITPOINT" => "PIPE_V",
            _ => return None,
        }
        .to_string(),
    )
}
