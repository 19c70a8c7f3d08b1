//! Golden validation: tolerances from `golden.py` and element-wise comparison.
//!
//! `golden.py` is Python that the Python layer runs; the Rust side only needs
//! its tolerances. [`read_tolerances`] reads the module-level literal
//! assignments `RTOL = 1e-05` / `ATOL = ...` (an annotation such as
//! `RTOL: float = 1e-05` is fine; the last assignment wins, as in Python),
//! without running the file. A missing one defaults to 1e-5, as
//! `getattr(module, "RTOL", 1e-5)` does. Anything other than a non-negative
//! number literal on the line is an error naming the line. Assignments
//! nested in blocks (indented) are not module-level literals and are
//! ignored; text inside triple-quoted strings is skipped.
//!
//! Bounded work: a `golden.py` longer than [`MAX_GOLDEN_PY_BYTES`] is refused
//! before it is read ([`GoldenError::TooLarge`]), and a tolerance value
//! longer than [`MAX_TOLERANCE_TEXT`] characters is rejected before it is
//! parsed (a number literal is a few characters).
//!
//! [`compare`] checks `|actual - expected| <= atol + rtol * |expected|` per
//! element in `f64`, for every dtype (integers and bools included). Equal
//! values (including equal infinities) always match; NaN never matches, as
//! `torch.allclose(..., equal_nan=False)`. [`Comparison::report`] renders the
//! harness's mismatch report.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::dtype::DType;
use crate::npy::{NpyArray, NpyError};
use crate::pyrepr::repr_float;
use crate::pysyntax::{self, ExprKind};

/// The tolerance used when `golden.py` sets none.
pub const DEFAULT_TOLERANCE: f64 = 1e-5;

/// The longest `golden.py` [`read_tolerances`] takes (16 MiB; a golden.py
/// is code, and large data belongs in `.npy` files).
pub const MAX_GOLDEN_PY_BYTES: u64 = 16 << 20;

/// The longest right-hand side of an `RTOL` / `ATOL` assignment, in
/// characters, that is parsed (`1e-05` is 5).
pub const MAX_TOLERANCE_TEXT: usize = 1000;

/// How many mismatches a [`Comparison`] keeps and reports.
pub const MAX_REPORTED_MISMATCHES: usize = 20;

/// Relative and absolute tolerance of a comparison.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerances {
    /// Relative tolerance (`RTOL`).
    pub rtol: f64,
    /// Absolute tolerance (`ATOL`).
    pub atol: f64,
}

impl Tolerances {
    /// Tolerances after checking both are finite and non-negative (the message names the
    /// field: `rtol must be a finite number >= 0, got -1.0`).
    pub fn checked(rtol: f64, atol: f64) -> Result<Tolerances, String> {
        for (name, v) in [("rtol", rtol), ("atol", atol)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{name} must be a finite number >= 0, got {v:?}"));
            }
        }
        Ok(Tolerances { rtol, atol })
    }
}

impl Default for Tolerances {
    /// 1e-5 for both, PyPTO's defaults.
    fn default() -> Self {
        Tolerances {
            rtol: DEFAULT_TOLERANCE,
            atol: DEFAULT_TOLERANCE,
        }
    }
}

/// Reading tolerances or comparing arrays failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GoldenError {
    /// `golden.py` could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// `golden.py` is longer than [`MAX_GOLDEN_PY_BYTES`].
    #[error("{}: the file is {len} bytes, more than the {} read for its RTOL/ATOL; keep golden.py to code and load large data from .npy files", path.display(), crate::fs::human_size(*limit))]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its length (at least).
        len: u64,
        /// The limit.
        limit: u64,
    },
    /// `golden.py` is not valid UTF-8.
    #[error("{}: the file is not valid UTF-8 text; save golden.py as UTF-8", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
    },
    /// `RTOL` / `ATOL` is assigned something other than a number literal.
    #[error("{}:{line}: {name} must be a non-negative number literal such as `{name} = 1e-05`, found `{found}`; {detail}", path.display())]
    NotALiteral {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// `RTOL` or `ATOL`.
        name: &'static str,
        /// The right-hand side as written.
        found: String,
        /// Why it was rejected.
        detail: String,
    },
    /// The arrays have different shapes.
    #[error("shape mismatch: actual {actual:?}, golden {expected:?}; the output must have the golden's shape")]
    ShapeMismatch {
        /// The actual shape.
        actual: Vec<usize>,
        /// The golden shape.
        expected: Vec<usize>,
    },
    /// The arrays have different element types.
    #[error("dtype mismatch: actual {actual}, golden {expected}; the output must have the golden's dtype")]
    DTypeMismatch {
        /// The actual dtype.
        actual: DType,
        /// The golden dtype.
        expected: DType,
    },
    /// An array's data does not match its shape.
    #[error(transparent)]
    Array(#[from] NpyError),
}

/// Reads `RTOL` / `ATOL` from the `golden.py` at `golden_py`.
pub fn read_tolerances(golden_py: &Path) -> Result<Tolerances, GoldenError> {
    parse_tolerances(&read_golden_text(golden_py)?, golden_py)
}

/// The names `golden.py` lists in `__outputs__`, when it assigns a literal list (or tuple)
/// of strings on one line at module level, as the generated files do (the last such
/// assignment wins); `None` when it does not (then nothing can be checked without running
/// it).
pub fn read_declared_outputs(golden_py: &Path) -> Result<Option<Vec<String>>, GoldenError> {
    Ok(parse_declared_outputs(&read_golden_text(golden_py)?))
}

/// [`read_declared_outputs`] on `golden.py` text.
pub fn parse_declared_outputs(text: &str) -> Option<Vec<String>> {
    let mut found = None;
    let mut in_triple: Option<char> = None;
    for line in text.lines() {
        let starts_in_code = in_triple.is_none();
        track_triple_quotes(line, &mut in_triple);
        if !starts_in_code {
            continue;
        }
        let Some(rest) = line.strip_prefix("__outputs__") else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(value) = rest.strip_prefix('=').filter(|v| !v.starts_with('=')) else {
            continue;
        };
        if value.trim().chars().count() > MAX_TOLERANCE_TEXT * 64 {
            found = None;
            continue;
        }
        found = match pysyntax::parse_single_expr(value).map(|e| e.kind) {
            Ok(ExprKind::List(items) | ExprKind::Tuple(items)) => items
                .into_iter()
                .map(|e| match e.kind {
                    ExprKind::Str(s) => Some(s),
                    _ => None,
                })
                .collect(),
            _ => None,
        };
    }
    found
}

fn read_golden_text(golden_py: &Path) -> Result<String, GoldenError> {
    use crate::fs::LimitedReadError;
    let bytes = crate::fs::read_limited(golden_py, MAX_GOLDEN_PY_BYTES).map_err(|e| match e {
        LimitedReadError::Io(source) => GoldenError::Read {
            path: golden_py.to_path_buf(),
            source,
        },
        LimitedReadError::TooLarge { len } => GoldenError::TooLarge {
            path: golden_py.to_path_buf(),
            len,
            limit: MAX_GOLDEN_PY_BYTES,
        },
    })?;
    String::from_utf8(bytes).map_err(|_| GoldenError::NotUtf8 {
        path: golden_py.to_path_buf(),
    })
}

/// Reads `RTOL` / `ATOL` from `golden.py` text; `file_for_errors` names it.
pub fn parse_tolerances(text: &str, file_for_errors: &Path) -> Result<Tolerances, GoldenError> {
    let mut tol = Tolerances::default();
    let mut in_triple: Option<char> = None;
    for (idx, line) in text.lines().enumerate() {
        let starts_in_code = in_triple.is_none();
        track_triple_quotes(line, &mut in_triple);
        if !starts_in_code {
            continue;
        }
        for name in ["RTOL", "ATOL"] {
            if let Some(value) = tolerance_assignment(line, name, idx + 1, file_for_errors)? {
                match name {
                    "RTOL" => tol.rtol = value,
                    _ => tol.atol = value,
                }
            }
        }
    }
    Ok(tol)
}

/// Updates `in_triple` (the quote char of an open `"""`/`'''` string) over
/// one line, skipping comments and one-line strings.
fn track_triple_quotes(line: &str, in_triple: &mut Option<char>) {
    let chars: Vec<char> = line.chars().collect();
    let triple_at = |i: usize, q: char| {
        chars
            .get(i..i + 3)
            .is_some_and(|s| s.iter().all(|&c| c == q))
    };
    let mut i = 0;
    while i < chars.len() {
        if let Some(q) = *in_triple {
            if chars[i] == '\\' {
                i += 2;
            } else if triple_at(i, q) {
                *in_triple = None;
                i += 3;
            } else {
                i += 1;
            }
            continue;
        }
        match chars[i] {
            '#' => return,
            q @ ('"' | '\'') if triple_at(i, q) => {
                *in_triple = Some(q);
                i += 3;
            }
            q @ ('"' | '\'') => {
                i += 1;
                while i < chars.len() && chars[i] != q {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
}

/// The value of `NAME = <literal>` when `line` assigns `name` at module
/// level; `None` when the line does not assign it.
fn tolerance_assignment(
    line: &str,
    name: &'static str,
    line_no: usize,
    file: &Path,
) -> Result<Option<f64>, GoldenError> {
    let Some(rest) = line.strip_prefix(name) else {
        return Ok(None);
    };
    if rest.starts_with(|c: char| c == '_' || c.is_alphanumeric()) {
        return Ok(None); // A longer name such as `RTOL_FP16`.
    }
    let fail = |found: &str, detail: &str| GoldenError::NotALiteral {
        path: file.to_path_buf(),
        line: line_no,
        name,
        found: found.trim().to_string(),
        detail: detail.to_string(),
    };
    let rest = rest.trim_start();
    let after_annotation = match rest.strip_prefix(':') {
        Some(annotated) => match annotated.split_once('=') {
            Some((_, value)) => value,
            None => return Ok(None), // A bare annotation assigns nothing.
        },
        None => match rest.strip_prefix('=') {
            Some(value) if !value.starts_with('=') => value,
            Some(_) => return Ok(None), // `RTOL == x` compares.
            None => {
                const AUGMENTED: [&str; 13] = [
                    "+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=", ">>=",
                    "<<=",
                ];
                if rest.starts_with(',') || AUGMENTED.iter().any(|op| rest.starts_with(op)) {
                    return Err(fail(
                        line,
                        "only a plain `NAME = <number>` assignment is supported",
                    ));
                }
                return Ok(None);
            }
        },
    };
    let chars = after_annotation.trim().chars().count();
    if chars > MAX_TOLERANCE_TEXT {
        return Err(GoldenError::NotALiteral {
            path: file.to_path_buf(),
            line: line_no,
            name,
            found: after_annotation.trim().chars().take(40).collect::<String>() + "...",
            detail: format!(
                "the value is {chars} characters long, more than the {MAX_TOLERANCE_TEXT} a number literal may have"
            ),
        });
    }
    let expr = pysyntax::parse_single_expr(after_annotation).map_err(|e| {
        fail(
            after_annotation,
            &format!("{} at column {}", e.message, e.pos.col),
        )
    })?;
    let value = match expr.kind {
        ExprKind::Float(x) => x,
        // Tolerances are small; an integer literal converts exactly enough.
        ExprKind::Int(i) => i as f64,
        _ => {
            return Err(fail(
                after_annotation,
                &format!("found {}", expr.describe()),
            ))
        }
    };
    if !(value.is_finite() && value >= 0.0) {
        return Err(fail(after_annotation, "tolerances must be finite and >= 0"));
    }
    Ok(Some(value))
}

/// One element that did not match.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// The element's index, one entry per dimension.
    pub index: Vec<usize>,
    /// The actual value.
    pub actual: f64,
    /// The golden value.
    pub expected: f64,
}

/// The result of comparing an output with its golden.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Elements compared.
    pub n_total: usize,
    /// Elements outside the tolerance.
    pub n_mismatch: usize,
    /// The largest `|actual - expected|` over all elements (NaN differences
    /// ignored; 0 for no elements).
    pub max_abs_diff: f64,
    /// The first mismatches in C order, at most [`MAX_REPORTED_MISMATCHES`].
    pub first: Vec<Mismatch>,
    /// The tolerances used.
    pub tolerances: Tolerances,
}

impl Comparison {
    /// True when every element matched.
    pub fn passed(&self) -> bool {
        self.n_mismatch == 0
    }

    /// The report for output `name`, in the harness's words on a mismatch:
    ///
    /// ```text
    /// Output 'c' does not match golden.
    /// Mismatched elements: 2/6
    /// rtol=1e-05, atol=1e-05
    /// First 2 mismatches:
    ///   [0, 1]: actual=1.5, expected=2.0, diff=0.5
    ///   [1, 2]: actual=nan, expected=0.0, diff=nan
    /// ```
    pub fn report(&self, name: &str) -> String {
        let tol = format!(
            "rtol={}, atol={}",
            repr_float(self.tolerances.rtol),
            repr_float(self.tolerances.atol)
        );
        let name = crate::pyrepr::repr_str(name);
        if self.passed() {
            return format!(
                "Output {name} matches golden ({} elements, {tol})",
                self.n_total
            );
        }
        let mut out = format!(
            "Output {name} does not match golden.\nMismatched elements: {}/{}\n{tol}\nFirst {} mismatches:",
            self.n_mismatch,
            self.n_total,
            self.first.len()
        );
        for m in &self.first {
            let index: Vec<String> = m.index.iter().map(usize::to_string).collect();
            // Writing into a String cannot fail.
            let _ = write!(
                out,
                "\n  [{}]: actual={}, expected={}, diff={}",
                index.join(", "),
                repr_float(m.actual),
                repr_float(m.expected),
                repr_float((m.actual - m.expected).abs())
            );
        }
        out
    }
}

/// The multi-dimensional C-order index of flat element `flat`.
fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for (slot, &dim) in index.iter_mut().zip(shape).rev() {
        if dim > 0 {
            *slot = flat % dim;
            flat /= dim;
        }
    }
    index
}

/// NumPy's `isclose(actual, expected, rtol, atol, equal_nan=False)` for one element:
/// `|a - e| <= atol + rtol * |e|` for finite values; an infinity matches only the same
/// infinity (so a golden `inf` never accepts a finite result); NaN matches nothing.
pub fn isclose(actual: f64, expected: f64, tol: Tolerances) -> bool {
    if actual.is_nan() || expected.is_nan() {
        return false;
    }
    if actual.is_infinite() || expected.is_infinite() {
        return actual == expected;
    }
    (actual - expected).abs() <= tol.atol + tol.rtol * expected.abs()
}

/// Compares `actual` with the golden `expected` element by element ([`isclose`]).
pub fn compare(
    actual: &NpyArray,
    expected: &NpyArray,
    tol: Tolerances,
) -> Result<Comparison, GoldenError> {
    if actual.shape != expected.shape {
        return Err(GoldenError::ShapeMismatch {
            actual: actual.shape.clone(),
            expected: expected.shape.clone(),
        });
    }
    if actual.dtype != expected.dtype {
        return Err(GoldenError::DTypeMismatch {
            actual: actual.dtype,
            expected: expected.dtype,
        });
    }
    actual.check_data_len()?;
    expected.check_data_len()?;
    let size = actual.dtype.elem_size();
    let mut cmp = Comparison {
        n_total: actual.numel(),
        n_mismatch: 0,
        max_abs_diff: 0.0,
        first: Vec::new(),
        tolerances: tol,
    };
    let pairs = actual
        .data
        .chunks_exact(size)
        .zip(expected.data.chunks_exact(size));
    for (i, (a, e)) in pairs.enumerate() {
        let (Some(a), Some(e)) = (actual.dtype.decode_f64(a), expected.dtype.decode_f64(e)) else {
            continue;
        };
        let diff = (a - e).abs();
        if diff > cmp.max_abs_diff {
            cmp.max_abs_diff = diff;
        }
        let close = isclose(a, e, tol);
        if !close {
            cmp.n_mismatch += 1;
            if cmp.first.len() < MAX_REPORTED_MISMATCHES {
                cmp.first.push(Mismatch {
                    index: unravel(i, &actual.shape),
                    actual: a,
                    expected: e,
                });
            }
        }
    }
    Ok(cmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_tol(text: &str, expected: Result<(f64, f64), &str>) {
        let res = parse_tolerances(text, Path::new("/b/golden.py"))
            .map(|t| (t.rtol, t.atol))
            .map_err(|e| e.to_string());
        assert_eq!(res, expected.map_err(str::to_string), "text:\n{text}");
    }

    /// Hostile tolerance lines: a value longer than a literal can be is
    /// rejected unparsed, deep nesting within the length is a located error,
    /// and an oversized or non-UTF-8 golden.py is refused naming the file.
    #[test]
    fn hostile_golden_files_are_bounded() {
        let long = format!("RTOL = {}1{}\n", "(".repeat(100_000), ")".repeat(100_000));
        check_tol(
            &long,
            Err("/b/golden.py:1: RTOL must be a non-negative number literal such as `RTOL = 1e-05`, found `((((((((((((((((((((((((((((((((((((((((...`; the value is 200001 characters long, more than the 1000 a number literal may have"),
        );
        let deep = format!("ATOL = {}1e-3{}\n", "(".repeat(400), ")".repeat(400));
        let err = parse_tolerances(&deep, Path::new("/b/golden.py"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("/b/golden.py:1: ATOL must be a non-negative number literal")
                && err.ends_with("the expression nests more than 100 levels deep (brackets, signs, `.`, calls and `/` all count); the files ir.compile() writes nest at most 4 at column 102"),
            "{err}"
        );

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("golden.py");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_GOLDEN_PY_BYTES + 1).unwrap();
        assert_eq!(
            read_tolerances(&path).unwrap_err().to_string(),
            format!(
                "{}: the file is 16777217 bytes, more than the 16 MiB read for its RTOL/ATOL; keep golden.py to code and load large data from .npy files",
                path.display()
            )
        );
        std::fs::write(&path, b"RTOL = 1e-3 # \xff\n").unwrap();
        assert_eq!(
            read_tolerances(&path).unwrap_err().to_string(),
            format!(
                "{}: the file is not valid UTF-8 text; save golden.py as UTF-8",
                path.display()
            )
        );
    }

    #[test]
    fn reads_module_level_literals() {
        check_tol(
            "__outputs__ = ['out']\nRTOL = 1e-03\nATOL = 0.5\n",
            Ok((1e-3, 0.5)),
        );
        check_tol("import torch\n", Ok((1e-5, 1e-5)));
        check_tol("RTOL = 2  # loose\nRTOL: float = 1e-4\n", Ok((1e-4, 1e-5)));
        assert_eq!(
            parse_declared_outputs("__outputs__ = ['c', \"d\"]\nRTOL = 1e-3\n"),
            Some(vec!["c".to_string(), "d".to_string()])
        );
        assert_eq!(parse_declared_outputs("__outputs__ = names()\n"), None);
        assert_eq!(parse_declared_outputs("x = 1\n"), None);
        assert_eq!(
            parse_declared_outputs(
                "\"\"\"\n__outputs__ = ['doc']\n\"\"\"\n__outputs__ = ('zz',)\n"
            ),
            Some(vec!["zz".to_string()])
        );
        check_tol(
            "def f():\n    RTOL = 'x'\nRTOL_FP16 = x\nATOL == 3\nATOL: float\nRTOL != 2\nATOL >= 1\n",
            Ok((1e-5, 1e-5)),
        );
        check_tol(
            "\"\"\"\nRTOL = not code\n\"\"\"\nATOL = 1e-2\n",
            Ok((1e-5, 1e-2)),
        );
        check_tol("x = '''a''' # '''\nRTOL = 3e-3", Ok((3e-3, 1e-5)));
    }

    #[test]
    fn non_literals_name_the_line() {
        check_tol(
            "import torch\nRTOL = 1e-3 * 2\n",
            Err("/b/golden.py:2: RTOL must be a non-negative number literal such as `RTOL = 1e-05`, found `1e-3 * 2`; unexpected character '*' at column 7"),
        );
        check_tol(
            "ATOL = BASE\n",
            Err("/b/golden.py:1: ATOL must be a non-negative number literal such as `ATOL = 1e-05`, found `BASE`; found name `BASE`"),
        );
        check_tol(
            "ATOL = -1e-3\n",
            Err("/b/golden.py:1: ATOL must be a non-negative number literal such as `ATOL = 1e-05`, found `-1e-3`; tolerances must be finite and >= 0"),
        );
        check_tol(
            "RTOL, ATOL = 1e-3, 1e-3\n",
            Err("/b/golden.py:1: RTOL must be a non-negative number literal such as `RTOL = 1e-05`, found `RTOL, ATOL = 1e-3, 1e-3`; only a plain `NAME = <number>` assignment is supported"),
        );
        check_tol(
            "RTOL *= 2\n",
            Err("/b/golden.py:1: RTOL must be a non-negative number literal such as `RTOL = 1e-05`, found `RTOL *= 2`; only a plain `NAME = <number>` assignment is supported"),
        );
    }

    #[test]
    fn reads_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("golden.py");
        std::fs::write(&path, "RTOL = 1e-05\nATOL = 1e-05\n").unwrap();
        assert_eq!(read_tolerances(&path).unwrap(), Tolerances::default());
        let err = read_tolerances(&dir.path().join("nope.py")).unwrap_err();
        assert!(err.to_string().starts_with("cannot read "), "{err}");
    }

    fn f32s(shape: &[usize], values: &[f64]) -> NpyArray {
        NpyArray::from_f64(DType::Float32, shape, values).unwrap()
    }

    /// Mismatch count, max abs diff, and the first mismatches (index, actual, expected).
    type Expected<'a> = (usize, f64, &'a [(Vec<usize>, f64, f64)]);

    fn check_compare(actual: &[f64], expected: &[f64], tol: (f64, f64), want: Expected<'_>) {
        let shape = [2, actual.len() / 2];
        let tol = Tolerances {
            rtol: tol.0,
            atol: tol.1,
        };
        let cmp = compare(&f32s(&shape, actual), &f32s(&shape, expected), tol).unwrap();
        let first: Vec<(Vec<usize>, f64, f64)> = cmp
            .first
            .iter()
            .map(|m| (m.index.clone(), m.actual, m.expected))
            .collect();
        assert_eq!((cmp.n_mismatch, cmp.max_abs_diff, first.as_slice()), want);
        assert_eq!(cmp.n_total, actual.len());
    }

    #[test]
    fn element_wise_tolerance() {
        let inf = f64::INFINITY;
        check_compare(&[1.0, 2.0], &[1.0, 2.0], (0.0, 0.0), (0, 0.0, &[]));
        check_compare(&[1.0, 2.5], &[1.0, 2.0], (0.0, 0.5), (0, 0.5, &[]));
        check_compare(&[1.0, 2.5], &[1.0, 2.0], (0.25, 0.0), (0, 0.5, &[]));
        check_compare(
            &[1.0, 2.5],
            &[1.0, 2.0],
            (0.1, 0.1),
            (1, 0.5, &[(vec![1, 0], 2.5, 2.0)]),
        );
        check_compare(&[inf, 0.0], &[inf, 0.0], (0.0, 0.0), (0, 0.0, &[]));
        check_compare(
            &[0.0, 0.0, 0.0, 5.0],
            &[0.0, 1.0, 0.0, 1.0],
            (0.0, 0.5),
            (2, 4.0, &[(vec![0, 1], 0.0, 1.0), (vec![1, 1], 5.0, 1.0)]),
        );
    }

    #[test]
    fn integer_and_bool_dtypes_use_the_same_formula() {
        let a = NpyArray::from_f64(DType::Int32, &[3], &[1.0, 5.0, 7.0]).unwrap();
        let e = NpyArray::from_f64(DType::Int32, &[3], &[1.0, 6.0, 7.0]).unwrap();
        assert_eq!(
            compare(
                &a,
                &e,
                Tolerances {
                    rtol: 0.0,
                    atol: 0.0
                }
            )
            .unwrap()
            .n_mismatch,
            1
        );
        assert_eq!(
            compare(
                &a,
                &e,
                Tolerances {
                    rtol: 0.0,
                    atol: 1.0
                }
            )
            .unwrap()
            .n_mismatch,
            0
        );
        let a = NpyArray::from_f64(DType::Bool, &[2], &[1.0, 0.0]).unwrap();
        let e = NpyArray::from_f64(DType::Bool, &[2], &[1.0, 1.0]).unwrap();
        assert_eq!(
            compare(&a, &e, Tolerances::default()).unwrap().n_mismatch,
            1
        );
    }

    #[test]
    fn tolerances_are_checked() {
        assert!(Tolerances::checked(0.0, 1e-3).is_ok());
        assert_eq!(
            Tolerances::checked(-1.0, 0.0).unwrap_err(),
            "rtol must be a finite number >= 0, got -1.0"
        );
        assert!(Tolerances::checked(0.0, f64::NAN)
            .unwrap_err()
            .starts_with("atol must be"));
        assert!(Tolerances::checked(f64::INFINITY, 0.0).is_err());
    }

    #[test]
    fn infinities_match_only_themselves() {
        let tol = Tolerances {
            rtol: 1.0,
            atol: 1.0,
        };
        let e = f32s(
            &[4],
            &[f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, 3.0],
        );
        let a = f32s(&[4], &[f64::INFINITY, f64::INFINITY, 1e30, f64::INFINITY]);
        let cmp = compare(&a, &e, tol).unwrap();
        assert_eq!(cmp.n_mismatch, 3, "only +inf == +inf matches: {cmp:?}");
        let idx: Vec<Vec<usize>> = cmp.first.iter().map(|m| m.index.clone()).collect();
        assert_eq!(idx, vec![vec![1], vec![2], vec![3]]);
        assert!(isclose(f64::NEG_INFINITY, f64::NEG_INFINITY, tol));
        assert!(!isclose(1e300, f64::INFINITY, tol));
        assert!(!isclose(f64::NAN, f64::NAN, tol));
        assert!(isclose(1.5, 2.0, tol));
    }

    #[test]
    fn nan_never_matches() {
        let a = f32s(&[2], &[f64::NAN, 1.0]);
        let cmp = compare(
            &a,
            &a.clone(),
            Tolerances {
                rtol: 1.0,
                atol: 1.0,
            },
        )
        .unwrap();
        assert_eq!(cmp.n_mismatch, 1);
        assert_eq!(cmp.first[0].index, vec![0]);
        assert!(cmp.first[0].actual.is_nan() && cmp.first[0].expected.is_nan());
        assert_eq!(cmp.max_abs_diff, 0.0);
    }

    #[test]
    fn shape_dtype_and_length_are_checked() {
        let a = f32s(&[2, 1], &[1.0, 2.0]);
        let err = compare(&a, &f32s(&[1, 2], &[1.0, 2.0]), Tolerances::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "shape mismatch: actual [2, 1], golden [1, 2]; the output must have the golden's shape"
        );
        let e = NpyArray::from_f64(DType::Float16, &[2, 1], &[1.0, 2.0]).unwrap();
        let err = compare(&a, &e, Tolerances::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "dtype mismatch: actual fp32, golden fp16; the output must have the golden's dtype"
        );
        let broken = NpyArray {
            data: vec![0; 3],
            ..a.clone()
        };
        let err = compare(&a, &broken, Tolerances::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "array data has 3 bytes but shape [2, 1] of fp32 needs 8"
        );
    }

    #[test]
    fn report_text() {
        let a = f32s(&[2, 3], &[1.0, 1.5, 3.0, 4.0, 5.0, f64::NAN]);
        let e = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 0.0]);
        let cmp = compare(&a, &e, Tolerances::default()).unwrap();
        assert_eq!(
            cmp.report("c"),
            "Output 'c' does not match golden.\nMismatched elements: 2/6\nrtol=1e-05, atol=1e-05\nFirst 2 mismatches:\n  [0, 1]: actual=1.5, expected=2.0, diff=0.5\n  [1, 2]: actual=nan, expected=0.0, diff=nan"
        );
        let ok = compare(&e, &e, Tolerances::default()).unwrap();
        assert_eq!(
            ok.report("c"),
            "Output 'c' matches golden (6 elements, rtol=1e-05, atol=1e-05)"
        );
        let many = compare(
            &f32s(&[50], &[1.0; 50]),
            &f32s(&[50], &[0.0; 50]),
            Tolerances::default(),
        )
        .unwrap();
        assert_eq!(many.first.len(), MAX_REPORTED_MISMATCHES);
        assert!(many.report("out").contains(
            "Mismatched elements: 50/50\nrtol=1e-05, atol=1e-05\nFirst 20 mismatches:\n"
        ));
    }

    #[test]
    fn unravel_c_order() {
        assert_eq!(unravel(5, &[2, 3]), vec![1, 2]);
        assert_eq!(unravel(0, &[]), Vec::<usize>::new());
        assert_eq!(unravel(7, &[2, 2, 2]), vec![1, 1, 1]);
    }
}
