//! `pmu.csv`: per-task performance counters.
//!
//! Comma-separated, no spaces, `\n` line ends. Header:
//! `thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles,<counters...>,event_type`.
//! `task_id` is `0x%016x`, `func_id` a `uint32` (an unknown −1 prints as
//! 4294967295), `core_type` 0 (AIC) or 1 (AIV). The counter columns are the
//! named slots of the event type, in slot order ([`a2a3_counter_names`],
//! [`a5_counter_names`]); Simpler's rows are not sorted.
//!
//! A [`PmuRow`] carries its counters as `(name, value)` pairs, so any set
//! can be written, including host counters of our own (`task_clock_ns`,
//! `context_switches`, `page_faults`, `instructions`, `cycles`); the header
//! takes its counter columns from the first row and every row must match.
//! Values are `u64` (Simpler's device counters are `uint32`).
//!
//! [`read`] takes the counter columns from the header, between
//! `pmu_total_cycles` and `event_type`. A row with the wrong number of fields
//! or an unparsable value is skipped with a [`Problem`]; `func_id` −1 reads
//! as 4294967295 and a decimal `task_id` is accepted.

use std::borrow::Cow;
use std::path::Path;

use crate::core_type::CoreType;
use crate::error::{InvalidRecord, Loaded, Problem, ReadError, ReadErrorKind, WriteError};
use crate::json::{self, Out};
use crate::task_id::{parse_task_id, TaskId};

/// The file name under the output prefix.
pub const FILE_NAME: &str = "pmu.csv";

/// The columns before the counters.
pub const LEADING_COLUMNS: [&str; 6] = [
    "thread_id",
    "core_id",
    "task_id",
    "func_id",
    "core_type",
    "pmu_total_cycles",
];

/// The column after the counters.
pub const TRAILING_COLUMN: &str = "event_type";

/// `PmuEventType` (there is no 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PmuEventType {
    /// 1.
    ArithmeticUtilization = 1,
    /// 2, the default.
    PipeUtilization = 2,
    /// 4.
    Memory = 4,
    /// 5.
    MemoryL0 = 5,
    /// 6.
    ResourceConflict = 6,
    /// 7.
    MemoryUb = 7,
    /// 8.
    L2Cache = 8,
}

impl PmuEventType {
    /// The type with number `n`.
    pub fn from_number(n: u32) -> Option<Self> {
        match n {
            1 => Some(Self::ArithmeticUtilization),
            2 => Some(Self::PipeUtilization),
            4 => Some(Self::Memory),
            5 => Some(Self::MemoryL0),
            6 => Some(Self::ResourceConflict),
            7 => Some(Self::MemoryUb),
            8 => Some(Self::L2Cache),
            _ => None,
        }
    }

    /// The number written in `event_type`.
    pub const fn number(self) -> u32 {
        self as u32
    }

    /// Simpler's resolution of a requested type: an invalid non-zero value
    /// falls back to [`PmuEventType::PipeUtilization`]; 0 means off.
    pub fn resolve(requested: u32) -> Option<Self> {
        match requested {
            0 => None,
            n => Some(Self::from_number(n).unwrap_or(Self::PipeUtilization)),
        }
    }
}

/// The a2a3 (DAV_2201) counter columns of an event type, in slot order.
pub fn a2a3_counter_names(event: PmuEventType) -> &'static [&'static str] {
    match event {
        PmuEventType::ArithmeticUtilization => &[
            "cube_fp16_exec",
            "cube_int8_exec",
            "vec_fp32_exec",
            "vec_fp16_128lane_exec",
            "vec_fp16_64lane_exec",
            "vec_int32_exec",
            "vec_misc_exec",
        ],
        PmuEventType::PipeUtilization => &[
            "vec_busy_cycles",
            "cube_busy_cycles",
            "scalar_busy_cycles",
            "mte1_busy_cycles",
            "mte2_busy_cycles",
            "mte3_busy_cycles",
            "icache_miss",
            "icache_req",
        ],
        PmuEventType::Memory => &[
            "ub_read_req",
            "ub_write_req",
            "l1_read_req",
            "l1_write_req",
            "l2_read_req",
            "l2_write_req",
            "main_read_req",
            "main_write_req",
        ],
        PmuEventType::MemoryL0 => &[
            "l0a_read_req",
            "l0a_write_req",
            "l0b_read_req",
            "l0b_write_req",
            "l0c_read_req",
            "l0c_write_req",
        ],
        PmuEventType::ResourceConflict => &[
            "bankgroup_stall_cycles",
            "bank_stall_cycles",
            "vec_resc_conflict_cycles",
        ],
        PmuEventType::MemoryUb => &[
            "ub_read_bw_mte",
            "l2_write_bw",
            "main_mem_write_bw",
            "ub_write_bw_mte",
            "ub_read_bw_vector",
            "ub_write_bw_vector",
            "ub_read_bw_scalar",
            "ub_write_bw_scalar",
        ],
        PmuEventType::L2Cache => &[
            "write_cache_hit",
            "write_cache_miss_allocate",
            "r0_read_cache_hit",
            "r0_read_cache_miss_allocate",
            "r1_read_cache_hit",
            "r1_read_cache_miss_allocate",
        ],
    }
}

/// The a5 (DAV_3510) counter columns of an event type, in slot order
/// (unnamed slots dropped). Note `icache_req` before `icache_miss`, unlike a2a3.
pub fn a5_counter_names(event: PmuEventType) -> &'static [&'static str] {
    match event {
        PmuEventType::ArithmeticUtilization => &["cube_fp_instr_busy", "cube_int_instr_busy"],
        PmuEventType::PipeUtilization => &[
            "pmu_idc_aic_vec_busy_o",
            "cube_instr_busy",
            "scalar_instr_busy",
            "mte1_instr_busy",
            "mte2_instr_busy",
            "mte3_instr_busy",
            "icache_req",
            "icache_miss",
            "pmu_fix_instr_busy",
        ],
        PmuEventType::Memory => &[
            "bif_sc_pmu_read_main_instr_core",
            "bif_sc_pmu_write_main_instr_core",
            "pmu_aiv_ext_rd_ub_instr",
            "ub_pmu_vec_rd_ub_acc",
            "pmu_aiv_ext_wr_ub_instr",
            "ub_pmu_vec_wr_ub_acc",
            "pmu_rd_l1_instr",
            "pmu_wr_l1_instr",
        ],
        PmuEventType::MemoryL0 => &[
            "cube_sc_pmu_read_l0a_instr",
            "pmu_wr_l0a_instr",
            "cube_sc_pmu_read_l0b_instr",
            "pmu_wr_l0b_instr",
            "fixp_rd_l0c_instr",
            "cube_sc_pmu_read_l0c_instr",
            "cube_sc_pmu_write_l0c_instr",
        ],
        PmuEventType::ResourceConflict => &[
            "stu_pmu_wctl_ub_cflt",
            "ldu_pmu_ib_ub_cflt",
            "pmu_idc_aic_vec_instr_vf_busy_o",
            "idu_pmu_ins_iss_cnt",
        ],
        PmuEventType::MemoryUb => &[
            "pmu_rd_acc_ub_instr_p",
            "pmu_wr_acc_ub_instr_p",
            "pmu_fix_wr_ub_instr",
            "mte_sc_pmu_write_acc_ub_instr_0",
            "mte_sc_pmu_read_acc_ub_instr_0",
            "ub_pmu_vec_rd_ub_acc",
            "ub_pmu_vec_wr_ub_acc",
        ],
        PmuEventType::L2Cache => &[
            "bif_sc_pmu_ar_close_l2_hit_core",
            "bif_sc_pmu_ar_close_l2_miss_core",
            "bif_sc_pmu_ar_close_l2_victim_core",
            "bif_sc_pmu_aw_close_l2_hit_core",
            "bif_sc_pmu_aw_close_l2_miss_core",
            "bif_sc_pmu_aw_close_l2_victim_core",
        ],
    }
}

/// A counter name: static for known columns (no per-row allocation), owned
/// when read from a file.
pub type CounterName = Cow<'static, str>;

/// One row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmuRow {
    /// `thread_id`: the AICPU thread that carried the buffer.
    pub thread_id: i32,
    /// `core_id`: logical AICore index.
    pub core_id: u32,
    /// `task_id`.
    pub task_id: TaskId,
    /// `func_id` (uint32).
    pub func_id: u32,
    /// `core_type`.
    pub core_type: CoreType,
    /// `pmu_total_cycles`.
    pub pmu_total_cycles: u64,
    /// The counter columns, in column order.
    pub counters: Vec<(CounterName, u64)>,
    /// `event_type`: the resolved event type (any number, so host counter
    /// sets can use their own).
    pub event_type: u32,
}

/// The whole file as read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PmuFile {
    /// The counter columns named by the header.
    pub counter_names: Vec<String>,
    /// The rows, in file order.
    pub rows: Vec<PmuRow>,
}

// ---------------------------------------------------------------- writer

/// The header line (with its `\n`) for these counter columns.
pub fn render_header(counter_names: &[&str]) -> String {
    let mut out = Out::default();
    for c in LEADING_COLUMNS {
        out.s(c).s(",");
    }
    for c in counter_names {
        out.s(c).s(",");
    }
    out.s(TRAILING_COLUMN).s("\n");
    out.into_string()
}

/// One data line (with its `\n`).
pub fn render_row(row: &PmuRow) -> String {
    let mut out = Out::with_capacity(ROW_BYTES + COUNTER_BYTES * row.counters.len());
    push_row(&mut out, row);
    out.into_string()
}

/// Room reserved per row: the fixed columns, and per counter.
const ROW_BYTES: usize = 64;
const COUNTER_BYTES: usize = 12;

fn push_row(out: &mut Out, row: &PmuRow) {
    push_fields(out, row, row.counters.iter().map(|(_, v)| *v));
}

/// A data line of `row`'s fields before and after its counters, with `counters` as the
/// counter values.
fn push_fields(out: &mut Out, row: &PmuRow, counters: impl Iterator<Item = u64>) {
    push_leading(out, row);
    for v in counters {
        out.u(v).s(",");
    }
    push_trailing(out, row);
}

/// The fields before the counters, each with its comma.
fn push_leading(out: &mut Out, row: &PmuRow) {
    out.i(i64::from(row.thread_id))
        .s(",")
        .u(u64::from(row.core_id))
        .s(",")
        .hex16(row.task_id.raw())
        .s(",")
        .u(u64::from(row.func_id))
        .s(",")
        .u(u64::from(row.core_type.code()))
        .s(",")
        .u(row.pmu_total_cycles)
        .s(",");
}

/// The field after the counters and the line end.
fn push_trailing(out: &mut Out, row: &PmuRow) {
    out.u(u64::from(row.event_type)).s("\n");
}

/// Where a counter column's value comes from in a [`RowShape`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    /// The same value in every row of the shape.
    Const(u64),
    /// The row's variable value at this index.
    Var(usize),
}

/// The counter columns of a family of rows: which are constant and which come from each
/// row's variable values. A writer whose columns are mostly constant (a simulated chip's
/// modelled counters: one busy column per core type, the rest 0) renders each run of
/// constant columns as one piece of text made once, instead of a number per column per
/// row ([`PmuCsv::push_all`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowShape {
    /// Text of the constant columns before each variable (commas included), and the
    /// variable's index.
    pieces: Vec<(String, usize)>,
    /// Text after the last variable (its comma, the constant columns after it).
    tail: String,
    /// The variable values a row needs: one more than the largest index.
    needs: usize,
    /// Counter columns.
    columns: usize,
}

impl RowShape {
    /// The shape of counter columns `columns`, in column order.
    pub fn new(columns: &[Column]) -> Self {
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut needs = 0;
        for c in columns {
            match *c {
                Column::Const(v) => {
                    pto_base::json::push_u64(&mut text, v);
                    text.push(',');
                }
                Column::Var(i) => {
                    pieces.push((std::mem::take(&mut text), i));
                    text.push(',');
                    needs = needs.max(i + 1);
                }
            }
        }
        RowShape {
            pieces,
            tail: text,
            needs,
            columns: columns.len(),
        }
    }

    /// A data line of `row`'s fields (its `counters` not read) with the shape's counters,
    /// the variable ones from `vars` (at least [`RowShape::needs`](Self) of them: checked
    /// by the caller).
    fn push(&self, out: &mut Out, row: &PmuRow, vars: &[u64]) {
        push_leading(out, row);
        for (text, i) in &self.pieces {
            out.s(text).u(vars[*i]);
        }
        out.s(&self.tail);
        push_trailing(out, row);
    }
}

/// The header's counter columns of `rows`: the first row's counter names (none without
/// rows).
fn header_names(rows: &[PmuRow]) -> Vec<&str> {
    rows.first()
        .map(|r| r.counters.iter().map(|(n, _)| n.as_ref()).collect())
        .unwrap_or_default()
}

/// The whole file: the header from the first row's counter names (none
/// without rows), then the rows. Fails, naming the row, if a row's counter
/// names differ from the first row's or a counter name is not a plain CSV field.
pub fn render(rows: &[PmuRow]) -> Result<String, InvalidRecord> {
    let names = header_names(rows);
    let mut csv = PmuCsv::new(&names, rows.len())?;
    for row in rows {
        csv.push(row)?;
    }
    Ok(csv.finish())
}

/// A PMU file rendered one row at a time: what [`render`] makes of a slice, for a writer
/// that makes its rows on the fly (one [`PmuRow`] refilled for each is enough), so that
/// neither the rows nor a line of each are allocated. Kept in memory ([`PmuCsv::new`],
/// [`PmuCsv::finish`]) or streamed to its file ([`PmuCsv::streaming`],
/// [`PmuCsv::commit`]); rows rendered apart, on another thread, join it by
/// [`PmuCsv::append`].
pub struct PmuCsv {
    out: Out,
    names: Vec<String>,
    rows: usize,
}

impl PmuCsv {
    /// Starts the file with the header of counter columns `names`, with room for `rows`
    /// rows. Fails on a name that is not a plain CSV field (the key names it as the first
    /// row's counter, as [`render`] takes the header from the first row).
    pub fn new(names: &[&str], rows: usize) -> Result<Self, InvalidRecord> {
        check_names(names)?;
        let header = render_header(names);
        let out = Out::with_capacity(
            header.len() + rows.saturating_mul(ROW_BYTES + COUNTER_BYTES * names.len()),
        );
        Ok(Self::begin(out, &header, names))
    }

    /// [`PmuCsv::new`] streamed to `path`: written as it grows into a temporary beside
    /// it, renamed over it by [`PmuCsv::commit`] (dropped uncommitted, `path` is
    /// untouched). A bad name fails before anything is written.
    pub fn streaming(path: &Path, names: &[&str]) -> Result<Self, WriteError> {
        check_names(names).map_err(|e| WriteError::invalid(path, e))?;
        let header = render_header(names);
        Ok(Self::begin(Out::streaming(path)?, &header, names))
    }

    fn begin(mut out: Out, header: &str, names: &[&str]) -> Self {
        out.s(header);
        Self {
            out,
            names: names.iter().map(|n| n.to_string()).collect(),
            rows: 0,
        }
    }

    /// Appends `row`. Fails, naming the row by its index, if its counter names are not
    /// the header's.
    pub fn push(&mut self, row: &PmuRow) -> Result<(), InvalidRecord> {
        let same = row.counters.len() == self.names.len()
            && row
                .counters
                .iter()
                .zip(&self.names)
                .all(|((n, _), m)| n == m);
        if !same {
            let got: Vec<&str> = row.counters.iter().map(|(n, _)| n.as_ref()).collect();
            return Err(InvalidRecord {
                key: format!("rows[{}].counters", self.rows),
                reason: format!(
                    "are {got:?} but the header (from rows[0]) has {:?}",
                    self.names
                ),
            });
        }
        push_row(&mut self.out, row);
        self.rows += 1;
        Ok(())
    }

    /// Appends a row of `row`'s fields with `values` as its counters, in the header's
    /// column order (`row.counters` is not read: a writer whose values come from the
    /// header's columns has no names to check row by row). Fails, naming the row, if
    /// there are not as many values as columns.
    pub fn push_values(&mut self, row: &PmuRow, values: &[u64]) -> Result<(), InvalidRecord> {
        if values.len() != self.names.len() {
            return Err(InvalidRecord {
                key: format!("rows[{}].counters", self.rows),
                reason: format!(
                    "are {} values but the header has {} columns {:?}",
                    values.len(),
                    self.names.len(),
                    self.names
                ),
            });
        }
        push_fields(&mut self.out, row, values.iter().copied());
        self.rows += 1;
        Ok(())
    }

    /// Appends one row per record of `records` (`n` of them): `fill` makes a row's fields
    /// and its variable values in scratch kept across rows, and returns the index in
    /// `shapes` of the row's counter columns ([`RowShape`]). From a few thousand rows on,
    /// the second half is rendered on a helper thread while this one renders the first (as
    /// the JSON writers' large sections are). Fails, naming the shape, when a shape's
    /// columns are not the header's, and naming the row, when its shape is not one of
    /// `shapes` or it has fewer values than its shape uses.
    pub fn push_all<R, I>(
        &mut self,
        n: usize,
        records: I,
        shapes: &[RowShape],
        fill: impl Fn(R, &mut PmuRow, &mut Vec<u64>) -> usize + Sync,
    ) -> Result<(), InvalidRecord>
    where
        I: Iterator<Item = R> + Clone + Send + Sync,
    {
        if let Some(j) = shapes.iter().position(|s| s.columns != self.names.len()) {
            return Err(InvalidRecord {
                key: format!("shapes[{j}]"),
                reason: format!(
                    "has {} counter columns but the header has {}",
                    shapes[j].columns,
                    self.names.len()
                ),
            });
        }
        let render = |csv: &mut PmuCsv, records: &mut dyn Iterator<Item = R>| {
            let mut row = PmuRow {
                thread_id: 0,
                core_id: 0,
                task_id: TaskId(0),
                func_id: 0,
                core_type: CoreType::Aic,
                pmu_total_cycles: 0,
                counters: Vec::new(),
                event_type: 0,
            };
            let mut values = Vec::with_capacity(csv.names.len());
            for r in records {
                let k = fill(r, &mut row, &mut values);
                csv.push_shaped(&row, shapes, k, &values)?;
            }
            Ok(())
        };
        let half = json::split_point(n);
        if half == n {
            return render(self, &mut records.clone());
        }
        let names: Vec<String> = self.names.clone();
        let first = self.rows + half;
        let render_rest = || {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let mut rest = PmuCsv::continuation(&names, n - half, first);
            render(&mut rest, &mut records.clone().skip(half)).map(|()| rest)
        };
        let (head, rest) = json::beside(
            || render(self, &mut records.clone().take(half)),
            render_rest,
        );
        head?;
        self.append(rest?);
        Ok(())
    }

    /// Appends a row of `row`'s fields with the counters of `shapes[k]` and its variable
    /// values `vars`.
    fn push_shaped(
        &mut self,
        row: &PmuRow,
        shapes: &[RowShape],
        k: usize,
        vars: &[u64],
    ) -> Result<(), InvalidRecord> {
        let Some(shape) = shapes.get(k) else {
            return Err(InvalidRecord {
                key: format!("rows[{}].shape", self.rows),
                reason: format!("is {k} but there are {} shapes", shapes.len()),
            });
        };
        if vars.len() < shape.needs {
            return Err(InvalidRecord {
                key: format!("rows[{}].counters", self.rows),
                reason: format!(
                    "are {} values but the row's shape uses {}",
                    vars.len(),
                    shape.needs
                ),
            });
        }
        shape.push(&mut self.out, row, vars);
        self.rows += 1;
        Ok(())
    }

    /// Rows `first_row..` of a file that a [`PmuCsv::new`] or [`PmuCsv::streaming`] with
    /// the same `names` begins, with room for `rows` of them: rendered apart (on another
    /// thread) and then [appended](PmuCsv::append) to it. Row errors name their index in
    /// the whole file.
    pub fn continuation(names: &[&str], rows: usize, first_row: usize) -> Self {
        Self {
            out: Out::with_capacity(rows.saturating_mul(ROW_BYTES + COUNTER_BYTES * names.len())),
            names: names.iter().map(|n| n.to_string()).collect(),
            rows: first_row,
        }
    }

    /// Appends the rows of `rest`, a [`PmuCsv::continuation`] that starts at this file's
    /// next row.
    pub fn append(&mut self, rest: PmuCsv) {
        debug_assert!(rest.rows >= self.rows, "a continuation of rows after these");
        self.out.append(rest.out.buf);
        self.rows = rest.rows;
    }

    /// The file's text (of a [`PmuCsv::new`]).
    pub fn finish(self) -> String {
        self.out.into_string()
    }

    /// Writes the rest of a [`PmuCsv::streaming`] file and renames it over its path; the
    /// first write error instead, if any (the path untouched).
    pub fn commit(self) -> Result<(), WriteError> {
        self.out.finish()
    }
}

/// A header name that is not a plain CSV field is an error naming it as the first row's
/// counter (as [`render`] takes the header from the first row).
fn check_names(names: &[&str]) -> Result<(), InvalidRecord> {
    for (i, name) in names.iter().enumerate() {
        if name.is_empty() || name.contains([',', '\n', '\r', '"']) {
            return Err(InvalidRecord {
                key: format!("rows[0].counters[{i}]"),
                reason: format!("has name {name:?}; a counter name must be non-empty with no comma, quote or line break"),
            });
        }
    }
    Ok(())
}

/// Writes `rows` to `path` atomically, streamed (the bytes of [`render`]).
pub fn write(path: &Path, rows: &[PmuRow]) -> Result<(), WriteError> {
    let names = header_names(rows);
    let mut csv = PmuCsv::streaming(path, &names)?;
    for row in rows {
        csv.push(row).map_err(|e| WriteError::invalid(path, e))?;
    }
    csv.commit()
}

// ---------------------------------------------------------------- reader

/// Reads the file at `path`.
pub fn read(path: &Path) -> Result<Loaded<PmuFile>, ReadError> {
    parse(&json::read_file(path)?, path)
}

/// Parses file content; `path` only names the file in messages.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Loaded<PmuFile>, ReadError> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)));
    let header = match lines.next() {
        Some((_, h)) if !h.trim().is_empty() => h,
        _ => {
            return Err(ReadError::new(
                path,
                ReadErrorKind::Empty {
                    expected: "a header line starting with thread_id,core_id,task_id",
                },
            ))
        }
    };
    let columns: Vec<&str> = header.split(',').map(str::trim).collect();
    for (i, want) in LEADING_COLUMNS.iter().enumerate() {
        if columns.get(i) != Some(want) {
            return Err(ReadError::new(
                path,
                ReadErrorKind::MissingColumn {
                    key: (*want).to_string(),
                },
            ));
        }
    }
    if columns.len() < LEADING_COLUMNS.len() + 1 || columns.last() != Some(&TRAILING_COLUMN) {
        return Err(ReadError::new(
            path,
            ReadErrorKind::MissingColumn {
                key: TRAILING_COLUMN.to_string(),
            },
        ));
    }
    let counter_names: Vec<String> = columns[LEADING_COLUMNS.len()..columns.len() - 1]
        .iter()
        .map(|s| s.to_string())
        .collect();

    let mut rows = Vec::new();
    let mut problems = Vec::new();
    for (line_no, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        match parse_row(line, &columns, &counter_names) {
            Ok(row) => rows.push(row),
            Err(message) => problems.push(Problem::new(
                format!("line {line_no}"),
                format!("{message}; skipped the row"),
            )),
        }
    }
    Ok(Loaded {
        value: PmuFile {
            counter_names,
            rows,
        },
        problems,
    })
}

fn parse_row(line: &str, columns: &[&str], counter_names: &[String]) -> Result<PmuRow, String> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    if fields.len() != columns.len() {
        return Err(format!(
            "has {} fields; the header has {}",
            fields.len(),
            columns.len()
        ));
    }
    let bad = |col: usize, what: &str| {
        format!(
            "column {} is {:?}; expected {what}",
            columns[col], fields[col]
        )
    };
    let uint = |col: usize| {
        fields[col]
            .parse::<u64>()
            .map_err(|_| bad(col, "an unsigned integer"))
    };
    let thread_id = fields[0].parse::<i32>().map_err(|_| bad(0, "an integer"))?;
    let core_id = u32::try_from(uint(1)?).map_err(|_| bad(1, "a 32-bit value"))?;
    let task_id = parse_task_id(fields[2]).ok_or_else(|| bad(2, "0x and 16 hex digits"))?;
    let func_id = match fields[3].parse::<i64>() {
        Ok(-1) => u32::MAX,
        Ok(v) => u32::try_from(v).map_err(|_| bad(3, "a uint32"))?,
        Err(_) => return Err(bad(3, "a uint32")),
    };
    let core_type = uint(4)
        .ok()
        .and_then(CoreType::from_code)
        .ok_or_else(|| bad(4, "0 (AIC) or 1 (AIV)"))?;
    let pmu_total_cycles = uint(5)?;
    let mut counters = Vec::with_capacity(counter_names.len());
    for (k, name) in counter_names.iter().enumerate() {
        counters.push((Cow::Owned(name.clone()), uint(LEADING_COLUMNS.len() + k)?));
    }
    let last = columns.len() - 1;
    let event_type = u32::try_from(uint(last)?).map_err(|_| bad(last, "a 32-bit value"))?;
    Ok(PmuRow {
        thread_id,
        core_id,
        task_id: TaskId(task_id),
        func_id,
        core_type,
        pmu_total_cycles,
        counters,
        event_type,
    })
}
