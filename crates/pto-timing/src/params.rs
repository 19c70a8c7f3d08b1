//! Parameters of the latency model: the per-instruction vector formulas (a CSV table) and the
//! architecture constants (clock, bandwidths, cube and vector throughput).

use std::collections::HashMap;
use std::path::Path;

use crate::error::ParamError;
use crate::op::{DType, Op};

/// The embedded a2a3 vector formula table (`params/a2a3_vector.csv`).
pub const A2A3_VECTOR_CSV: &str = include_str!("../params/a2a3_vector.csv");
/// How errors name the embedded table.
pub const EMBEDDED_NAME: &str = "<embedded params/a2a3_vector.csv>";

/// `cycles = slope * rows * cols + bias` for one (op, dtype, cols) key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Formula {
    /// Cycles per element.
    pub slope: f64,
    /// Fixed cycles.
    pub bias: f64,
}

impl Formula {
    /// The formula's cycles for a `rows x cols` region, rounded to the nearest cycle.
    pub fn cycles(self, rows: u64, cols: u64) -> u64 {
        let v = self.slope * rows as f64 * cols as f64 + self.bias;
        if v <= 0.0 {
            0
        } else {
            v.round() as u64
        }
    }
}

/// The dtype column of a formula row: one type or `any`.
type DtypeKey = Option<DType>;
/// The cols column: a column count or `*` (any).
type ColsKey = Option<u32>;

/// The vector formula table.
#[derive(Clone, Debug, Default)]
pub struct FormulaTable {
    rows: HashMap<(Op, DtypeKey, ColsKey), Formula>,
}

impl FormulaTable {
    /// The embedded a2a3 table.
    pub fn a2a3() -> FormulaTable {
        // The embedded file is checked by a unit test; an error here is a build defect.
        FormulaTable::parse(A2A3_VECTOR_CSV, EMBEDDED_NAME).unwrap_or_default()
    }

    /// Reads a table from `path`.
    pub fn load(path: &Path) -> Result<FormulaTable, ParamError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ParamError::Io {
            file: file.clone(),
            source,
        })?;
        FormulaTable::parse(&text, &file)
    }

    /// Parses `op,dtype,cols,slope,bias` rows (a header row, blank lines and `#` comments
    /// are skipped); errors name `file` and the line.
    pub fn parse(text: &str, file: &str) -> Result<FormulaTable, ParamError> {
        let mut rows = HashMap::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with("op,") {
                continue;
            }
            let err = |message: String| ParamError::Parse {
                file: file.to_string(),
                line: i + 1,
                message,
            };
            let (key, formula) = parse_row(line).map_err(err)?;
            if rows.insert(key, formula).is_some() {
                return Err(err(format!("duplicate row for {line:?}")));
            }
        }
        Ok(FormulaTable { rows })
    }

    /// The formula for `op` over `dtype` tiles of `cols` valid columns: the exact row, else
    /// the row for any column count, else the `any`-dtype rows likewise.
    pub fn lookup(&self, op: Op, dtype: DType, cols: u32) -> Option<Formula> {
        self.lookup_row(op, dtype, cols).map(|(f, _)| f)
    }

    /// [`FormulaTable::lookup`], and whether the row found is an `any`-dtype one.
    pub fn lookup_row(&self, op: Op, dtype: DType, cols: u32) -> Option<(Formula, bool)> {
        [
            (Some(dtype), Some(cols)),
            (Some(dtype), None),
            (None, Some(cols)),
            (None, None),
        ]
        .into_iter()
        .find_map(|(d, c)| self.rows.get(&(op, d, c)).map(|f| (*f, d.is_none())))
    }

    /// Rows in the table.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

fn parse_row(line: &str) -> Result<((Op, DtypeKey, ColsKey), Formula), String> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    let [op, dtype, cols, slope, bias] = fields[..] else {
        return Err(format!("{} fields, expected 5", fields.len()));
    };
    let op = Op::from_name(op).ok_or_else(|| format!("unknown instruction {op:?}"))?;
    let dtype = match dtype {
        "any" => None,
        d => Some(DType::from_name(d).ok_or_else(|| format!("unknown dtype {d:?}"))?),
    };
    let cols = match cols {
        "*" => None,
        c => Some(
            c.parse::<u32>()
                .map_err(|_| format!("cols {c:?} is not a column count or `*`"))?,
        ),
    };
    let number = |what: &str, s: &str| {
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("{what} {s:?} is not a finite number"))
    };
    let formula = Formula {
        slope: number("slope", slope)?,
        bias: number("bias", bias)?,
    };
    Ok(((op, dtype, cols), formula))
}

/// Where data moves: the transfer paths with their own bandwidth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// GM → UB (TLOAD into a Vec tile).
    GmToUb,
    /// GM → L1 (TLOAD into a Mat tile).
    GmToL1,
    /// UB → GM (TSTORE of a Vec tile).
    UbToGm,
    /// L1 → GM.
    L1ToGm,
    /// UB → UB (vector-side copies).
    UbToUb,
    /// L0C → GM (TSTORE of an Acc tile, fixpipe).
    L0cToGm,
    /// L0C → L1 / UB (TMOV of an Acc tile, fixpipe).
    L0cToL1,
    /// L1 → L0A (TEXTRACT / TMOV into a Left tile).
    L1ToL0a,
    /// L1 → L0B (into a Right tile).
    L1ToL0b,
    /// L1 → bias table.
    L1ToBt,
    /// L1 → fixpipe buffer.
    L1ToFb,
}

/// Architecture constants of one platform.
#[derive(Clone, Debug)]
pub struct Arch {
    /// Name (`a2a3`, `a5`).
    pub name: &'static str,
    /// AI core clock in Hz.
    pub core_hz: f64,
    /// Cube cores (AIC).
    pub n_aic: usize,
    /// Vector cores (AIV).
    pub n_aiv: usize,
    /// Bandwidth of each path in GiB/s.
    pub bandwidth_gibs: fn(Route) -> f64,
    /// Cycles a matmul pays before its first fractal.
    pub mad_head: u64,
    /// Bytes of one vector repeat.
    pub vec_repeat_bytes: u64,
    /// Cycles the scalar unit spends issuing one instruction.
    pub issue_cycles: u64,
    /// Cycles of the scheduler's dispatch of one task to a core (AICPU → AICore).
    pub dispatch_cycles: u64,
}

/// PTO-ISA's a2a3 bandwidth table (`include/pto/costmodel/arch_config.hpp`, `kA2A3ArchConfig`),
/// in GiB/s.
fn a2a3_bandwidth(p: Route) -> f64 {
    match p {
        Route::GmToUb => 100.9,
        Route::GmToL1 => 135.0,
        Route::UbToGm => 188.46,
        Route::L1ToGm => 32.0,
        Route::UbToUb => 1024.0,
        Route::L0cToGm => 70.0,
        Route::L0cToL1 => 128.0,
        Route::L1ToL0a => 441.0,
        Route::L1ToL0b => 220.5,
        Route::L1ToBt | Route::L1ToFb => 32.0,
    }
}

impl Arch {
    /// a2a3 (Ascend 910B-class): 24 AIC + 48 AIV at 1.85 GHz (PTO-ISA's `kMainFrequencyHz`).
    pub fn a2a3() -> Arch {
        Arch {
            name: "a2a3",
            core_hz: 1.85e9,
            n_aic: 24,
            n_aiv: 48,
            bandwidth_gibs: a2a3_bandwidth,
            // PTO-ISA's matmul formula (`formula_backend_compute.hpp`): 6 head cycles.
            mad_head: 6,
            vec_repeat_bytes: 256,
            issue_cycles: 1,
            // Our assumption (docs/TIMING.md): about 1 us of AICPU scheduling per task.
            dispatch_cycles: 1850,
        }
    }

    /// a5 (Ascend 950-class): the platform's 36 AIC + 72 AIV; per-instruction parameters
    /// are a2a3's (PTO-ISA publishes no a5 formula table for these instructions).
    pub fn a5() -> Arch {
        Arch {
            name: "a5",
            n_aic: 36,
            n_aiv: 72,
            ..Arch::a2a3()
        }
    }

    /// The architecture of a platform name (`a2a3sim`, `a2a3`, `a5sim`, `a5`, `cpu` → a2a3).
    pub fn for_platform(platform: &str) -> Arch {
        if platform.starts_with("a5") {
            Arch::a5()
        } else {
            Arch::a2a3()
        }
    }

    /// Cycles to move `bytes` over `path` (bytes / bandwidth at the core clock).
    pub fn transfer_cycles(&self, path: Route, bytes: u64) -> u64 {
        let bytes_per_s = (self.bandwidth_gibs)(path) * (1u64 << 30) as f64;
        (bytes as f64 / bytes_per_s * self.core_hz).round() as u64
    }

    /// Nanoseconds of `cycles` at the core clock.
    pub fn cycles_to_ns(&self, cycles: u64) -> f64 {
        cycles as f64 * 1e9 / self.core_hz
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_table_parses() {
        let t = FormulaTable::parse(A2A3_VECTOR_CSV, EMBEDDED_NAME).unwrap();
        assert!(t.len() > 250, "{}", t.len());
        let f = t.lookup(Op::TADDS, DType::F32, 64).unwrap();
        assert_eq!(
            f,
            Formula {
                slope: 0.0156,
                bias: 25.0
            }
        );
        // `any` rows serve every dtype and column count.
        assert!(t.lookup(Op::TEXP, DType::Bf16, 999).is_some());
        assert!(t.lookup(Op::TADDS, DType::F32, 65).is_none());
    }

    #[test]
    fn parse_errors_name_file_and_line() {
        let text = "op,dtype,cols,slope,bias\n# c\nTADD,fp32,64,0.1,2\nTADD,fp32,x,0.1,2\n";
        let e = FormulaTable::parse(text, "my.csv").unwrap_err().to_string();
        assert!(e.starts_with("my.csv:4: cols \"x\""), "{e}");
        let e = FormulaTable::parse("TFOO,fp32,1,1,1", "p.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("p.csv:1: unknown instruction \"TFOO\""), "{e}");
        let e = FormulaTable::parse("TADD,fp32,1,1", "p.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("4 fields"), "{e}");
        let e = FormulaTable::parse("TADD,fp32,1,1,1\nTADD,fp32,1,2,2", "p.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("p.csv:2: duplicate"), "{e}");
        let e = FormulaTable::parse("TADD,fp32,1,nan,1", "p.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("slope"), "{e}");
    }

    #[test]
    fn transfer_cycles_follow_bandwidth() {
        let a = Arch::a2a3();
        // 64 KiB GM -> UB at 100.9 GiB/s and 1.85 GHz: 1119 cycles.
        assert_eq!(a.transfer_cycles(Route::GmToUb, 65536), 1119);
        assert_eq!(a.transfer_cycles(Route::GmToUb, 0), 0);
        assert_eq!((Arch::a5().n_aic, Arch::a5().n_aiv), (36, 72));
    }
}
