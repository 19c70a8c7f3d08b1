//! Validation against PTO-ISA's own a2a3 cost model (docs/TIMING.md, "Validation").
//!
//! Each kernel is an instruction sequence; `theirs` is the sum of the cycles PTO-ISA's cost
//! model gives each instruction of the same sequence (their `__COSTMODEL` build of the
//! headers, instruction-level backend, `GetLastPtoInstrCycles` after every instruction; the
//! single-instruction kernels are their own `tests/costmodel/st` cases). `ours` is the sum of
//! [`Model::latency`] over the same instructions (both are serial sums: the per-pipe overlap
//! of a real kernel is a scheduling question, not a latency one).

use crate::event::{Instr, Operand, BUF_L0A, BUF_L0B, BUF_L0C, BUF_UB};
use crate::latency::Model;
use crate::op::{DType, Op};

/// One instruction of a validation kernel: op, destination and source element types, rows,
/// cols, K (matmul) and the buffers it moves between (loads: GM bytes).
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// Opcode.
    pub op: Op,
    /// Destination element type.
    pub dtype: DType,
    /// Source element type.
    pub src_dtype: DType,
    /// Valid rows (M).
    pub rows: u32,
    /// Valid columns (N).
    pub cols: u32,
    /// K of a matmul.
    pub k: u32,
}

impl Step {
    const fn new(op: Op, dtype: DType, rows: u32, cols: u32) -> Step {
        Step {
            op,
            dtype,
            src_dtype: dtype,
            rows,
            cols,
            k: 0,
        }
    }

    const fn mm(a: DType, m: u32, k: u32, n: u32) -> Step {
        Step {
            op: Op::TMATMUL,
            dtype: DType::F32,
            src_dtype: a,
            rows: m,
            cols: n,
            k,
        }
    }

    const fn cvt(to: DType, from: DType, rows: u32, cols: u32) -> Step {
        Step {
            op: Op::TCVT,
            dtype: to,
            src_dtype: from,
            rows,
            cols,
            k: 0,
        }
    }

    /// The instruction as the trace records it.
    pub fn instr(&self) -> Instr {
        let bytes = |d: DType, r: u32, c: u32| r * c * d.size() as u32;
        let ub = |len: u32| Operand {
            buffer: BUF_UB,
            offset: 0,
            len,
        };
        let on = |buffer: u8, len: u32| Operand {
            buffer,
            offset: 0,
            len,
        };
        let (dst, src, gm) = match self.op {
            Op::TMATMUL => (
                Some(on(BUF_L0C, bytes(self.dtype, self.rows, self.cols))),
                [
                    Some(on(BUF_L0A, bytes(self.src_dtype, self.rows, self.k))),
                    Some(on(BUF_L0B, bytes(self.src_dtype, self.k, self.cols))),
                ],
                0,
            ),
            Op::TLOAD => {
                let n = bytes(self.dtype, self.rows, self.cols);
                (Some(ub(n)), [None, None], u64::from(n))
            }
            _ => {
                let n = bytes(self.dtype, self.rows, self.cols);
                let s = bytes(self.src_dtype, self.rows, self.cols);
                (Some(ub(n)), [Some(ub(s)), Some(ub(s))], 0)
            }
        };
        Instr {
            op: self.op,
            dtype: Some(self.dtype),
            src_dtype: Some(self.src_dtype),
            rows: self.rows,
            cols: self.cols,
            k: self.k,
            dst,
            src,
            gm_bytes: gm,
        }
    }
}

/// A validation kernel: its name, instructions and PTO-ISA's cycles for them.
pub struct Kernel {
    /// Name (docs/TIMING.md's table).
    pub name: &'static str,
    /// The instruction sequence.
    pub steps: Vec<Step>,
    /// PTO-ISA's cost model, per instruction.
    pub theirs: Vec<u64>,
    /// The device cycles PTO-ISA's tests publish for it, where they do.
    pub device: Option<u64>,
}

/// The kernels of docs/TIMING.md's validation table.
///
/// One piece on purpose: it is a data table (one row per kernel, in the document's
/// order), and its length is the rows rustfmt spreads over several lines each; split,
/// the table would no longer read against docs/TIMING.md row by row.
pub fn kernels() -> Vec<Kernel> {
    use DType::{F16, F32};
    use Op::*;
    let k = |name, steps: Vec<Step>, theirs: &[u64], device| Kernel {
        name,
        steps,
        theirs: theirs.to_vec(),
        device,
    };
    // FA step: S = Q K^T, softmax numerator, P = cvt(S), O = P V (64 queries, head 128,
    // a 128-key block).
    let fa = vec![
        Step::mm(F16, 64, 128, 128),
        Step::new(TROWMAX, F32, 64, 128),
        Step::new(TROWEXPANDSUB, F32, 64, 128),
        Step::new(TEXP, F32, 64, 128),
        Step::new(TROWSUM, F32, 64, 128),
        Step::cvt(F16, F32, 64, 128),
        Step::mm(F16, 64, 128, 128),
    ];
    let softmax = vec![
        Step::new(TROWMAX, F32, 64, 128),
        Step::new(TROWEXPANDSUB, F32, 64, 128),
        Step::new(TEXP, F32, 64, 128),
        Step::new(TROWSUM, F32, 64, 128),
        Step::new(TROWEXPANDDIV, F32, 64, 128),
    ];
    vec![
        k(
            "TADD f32 64x64",
            vec![Step::new(TADD, F32, 64, 64)],
            &[152],
            Some(160),
        ),
        k(
            "TADD f16 16x256",
            vec![Step::new(TADD, F16, 16, 256)],
            &[88],
            Some(92),
        ),
        k(
            "TMUL f32 64x64",
            vec![Step::new(TMUL, F32, 64, 64)],
            &[153],
            Some(168),
        ),
        k(
            "TMULS f32 256x16",
            vec![Step::new(TMULS, F32, 256, 16)],
            &[284],
            Some(266),
        ),
        k(
            "TADDS f32 7x448",
            vec![Step::new(TADDS, F32, 7, 448)],
            &[80],
            Some(77),
        ),
        k(
            "TEXP f32 64x64",
            vec![Step::new(TEXP, F32, 64, 64)],
            &[159],
            Some(159),
        ),
        k(
            "TEXP f16 64x64",
            vec![Step::new(TEXP, F16, 64, 64)],
            &[95],
            Some(95),
        ),
        k(
            "TDIV f32 64x64",
            vec![Step::new(TDIV, F32, 64, 64)],
            &[286],
            Some(288),
        ),
        k(
            "TDIVS f32 32x64",
            vec![Step::new(TDIVS, F32, 32, 64)],
            &[215],
            Some(205),
        ),
        k(
            "TROWSUM f32 64x64",
            vec![Step::new(TROWSUM, F32, 64, 64)],
            &[51],
            Some(492),
        ),
        k(
            "TROWMAX f32 64x64",
            vec![Step::new(TROWMAX, F32, 64, 64)],
            &[11],
            Some(480),
        ),
        k(
            "TCOLSUM f32 64x64",
            vec![Step::new(TCOLSUM, F32, 64, 64)],
            &[1188],
            Some(1263),
        ),
        k(
            "TCOLMAX f32 64x64",
            vec![Step::new(TCOLMAX, F32, 64, 64)],
            &[2589],
            Some(2589),
        ),
        k(
            "TMATMUL f16 40x50x60",
            vec![Step::mm(F16, 40, 50, 60)],
            &[54],
            Some(54),
        ),
        k(
            "TMATMUL f32 120x110x50",
            vec![Step::mm(F32, 120, 110, 50)],
            &[902],
            Some(902),
        ),
        k(
            "TMATMUL f16 128x128x128",
            vec![Step::mm(F16, 128, 128, 128)],
            &[518],
            None,
        ),
        k(
            "TLOAD f32 128x128 GM->UB",
            vec![Step::new(TLOAD, F32, 128, 128)],
            &[1119],
            Some(776),
        ),
        k(
            "binary chain f32 64x64 (TMUL, TADD, TSUB)",
            vec![
                Step::new(TMUL, F32, 64, 64),
                Step::new(TADD, F32, 64, 64),
                Step::new(TSUB, F32, 64, 64),
            ],
            &[153, 128, 128],
            None,
        ),
        k(
            "softmax rows f32 64x128",
            softmax,
            &[56, 280, 256, 72, 542],
            None,
        ),
        k(
            "flash-attention step 64x128x128",
            fa,
            &[262, 56, 280, 256, 72, 155, 262],
            None,
        ),
    ]
}

/// Our cycles for `steps` (serial sum); `None` names the first unmodelled instruction.
pub fn ours(model: &Model, steps: &[Step]) -> Result<u64, String> {
    steps.iter().try_fold(0, |sum, s| {
        model
            .latency(&s.instr())
            .map(|(_, c)| sum + c)
            .map_err(|u| u.to_string())
    })
}

/// Row reductions: PTO-ISA's instruction-level model gives them 11-72 cycles where the
/// device cycles their own tests publish are 480-495 (TROWMAX / TROWSUM float 64x64); ours
/// follows the device, so kernel comparisons leave them out.
pub fn is_row_reduction(op: Op) -> bool {
    matches!(op, Op::TROWSUM | Op::TROWMAX | Op::TROWMIN | Op::TROWPROD)
}

/// `(ours, theirs)` summed over a kernel's instructions that are not row reductions.
pub fn compared(model: &Model, k: &Kernel) -> Result<(u64, u64), String> {
    let mut sums = (0, 0);
    for (s, &t) in k.steps.iter().zip(&k.theirs) {
        if !is_row_reduction(s.op) {
            sums.0 += ours(model, std::slice::from_ref(s))?;
            sums.1 += t;
        }
    }
    Ok(sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Within 10 % of PTO-ISA's model on every kernel (row reductions left out, see
    /// [`is_row_reduction`]) but the two documented gaps: TCOLMAX (ours is their fitted
    /// formula row, their instruction-level model and the device say 2.3x more) and
    /// back-to-back vector instructions (their model shares the vector pipe's start-up between
    /// them; ours charges it each time).
    #[test]
    fn within_ten_percent_of_pto_isa_s_model() {
        let m = Model::a2a3();
        let gaps = [
            "TCOLMAX f32 64x64",
            "binary chain f32 64x64 (TMUL, TADD, TSUB)",
        ];
        let mut checked = 0;
        for k in kernels() {
            assert_eq!(k.steps.len(), k.theirs.len(), "{}", k.name);
            let (o, t) = compared(&m, &k).unwrap();
            if t == 0 || gaps.contains(&k.name) {
                continue;
            }
            let err = (o as f64 - t as f64).abs() / t as f64;
            assert!(err <= 0.10, "{}: ours {o}, theirs {t}", k.name);
            checked += 1;
        }
        assert!(checked >= 10, "{checked} kernels");
    }

    /// A few predicted numbers of docs/TIMING.md's table, pinned.
    #[test]
    fn pinned_predictions() {
        let m = Model::a2a3();
        let all = kernels();
        let total = |name: &str| {
            let k = all.iter().find(|k| k.name == name).unwrap();
            ours(&m, &k.steps).unwrap()
        };
        assert_eq!(total("TDIV f32 64x64"), 286);
        assert_eq!(total("TMATMUL f16 128x128x128"), 518);
        assert_eq!(total("TADDS f32 7x448"), 77);
        assert_eq!(total("flash-attention step 64x128x128"), 2387);
        assert_eq!(total("softmax rows f32 64x128"), 2249);
    }
}
