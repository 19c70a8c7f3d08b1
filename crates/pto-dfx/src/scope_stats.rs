//! `scope_stats/scope_stats.jsonl`: ring-resource usage per scope.
//!
//! NDJSON, every line ending in `\n`, keys separated by `", "`. Line 1 is
//! the metadata (version 6: heap values are monotonic cumulative bytes; the
//! capacity arrays always have 4 entries, one per ring). Every later line is
//! a `begin` or `end` record of one `PTO2_SCOPE`, oldest first; each scope,
//! the executor's root scope at depth 0 included, writes both.
//!
//! [`read`] needs a readable metadata line (an error names the line and
//! key); a damaged record line, such as a last line cut short, is skipped
//! with a [`Problem`]. Capacity arrays of another length (the documented
//! example shows 2) are padded with 0 or cut to 4, with a problem.
//!
//! Generations ([`DfxSchema`], told apart by [`detect`]): 2026-08 starts
//! the metadata with `"version": 6`; 2026-09 has no `version` and appends
//! `run_epoch` and `buf_seq` to every record. Either generation's extra keys
//! in the other's file are harmless and read; a key of neither is read past
//! with one [`Problem`] naming it.
//!
//! The report's derived metrics per begin/end pair are [`ScopeResource::metrics`],
//! [`ScopeResource::risk`] and [`ScopeStatsMeta::capacity`]; [`pair_scopes`]
//! finds the pairs.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::atomic::atomic_write;
use crate::error::{Loaded, Problem, ReadError, ReadErrorKind, WriteError};
use crate::json::{self, Issue, Node, Out};
use crate::schema::{self, DfxSchema};

/// The directory under the output prefix.
pub const DIR_NAME: &str = "scope_stats";
/// The file name inside [`DIR_NAME`].
pub const FILE_NAME: &str = "scope_stats.jsonl";
/// The version this crate writes.
pub const VERSION: u32 = 6;
/// Entries in every capacity array (`PTO2_SCOPE_STATS_MAX_RING_DEPTH`).
pub const MAX_RING_DEPTH: usize = 4;

/// The whole file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeStatsFile {
    /// Line 1.
    pub meta: ScopeStatsMeta,
    /// Lines 2.., in emission order.
    pub records: Vec<ScopeRecord>,
}

/// The metadata line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeStatsMeta {
    /// `version`: 6 (5 had wrapping heap offsets); `None` in a 2026-09 file,
    /// which has no version (its heap values are those of version 6).
    pub version: Option<u32>,
    /// `fatal`: the fatal-error hook latched.
    pub fatal: bool,
    /// `dropped`: records dropped on the device.
    pub dropped: u32,
    /// `total`: records attempted (written + dropped).
    pub total: u32,
    /// `task_window_max`, per ring.
    pub task_window_max: [i32; MAX_RING_DEPTH],
    /// `heap_max` in bytes, per ring.
    pub heap_max: [u64; MAX_RING_DEPTH],
    /// `dep_pool_max`, per ring.
    pub dep_pool_max: [i32; MAX_RING_DEPTH],
    /// `tensormap_max`: global TensorMap capacity.
    pub tensormap_max: i32,
}

/// `phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScopePhase {
    /// `"begin"`.
    Begin,
    /// `"end"`.
    End,
}

impl ScopePhase {
    /// The name written in `phase`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Begin => "begin",
            Self::End => "end",
        }
    }

    /// The phase named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "begin" => Some(Self::Begin),
            "end" => Some(Self::End),
            _ => None,
        }
    }
}

/// One record line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeRecord {
    /// `site`: `<source basename, at most 31 chars>:<line>`.
    pub site: String,
    /// `phase`.
    pub phase: ScopePhase,
    /// `depth`: scope nesting depth (0 = root).
    pub depth: i32,
    /// `ring`: `min(depth, 3)`.
    pub ring: i32,
    /// `task_window_start`: the ring's oldest live task.
    pub task_window_start: i32,
    /// `task_window_end`: the ring's next task id.
    pub task_window_end: i32,
    /// `heap_start`: reclaim frontier, cumulative bytes.
    pub heap_start: u64,
    /// `heap_end`: allocation frontier, cumulative bytes.
    pub heap_end: u64,
    /// `dep_pool_start`: dependency-pool tail.
    pub dep_pool_start: i32,
    /// `dep_pool_end`: dependency-pool top.
    pub dep_pool_end: i32,
    /// `tensormap`: live TensorMap entries (global).
    pub tensormap: i32,
    /// `run_epoch` (2026-09): the run of the process that wrote the record.
    pub run_epoch: Option<u64>,
    /// `buf_seq` (2026-09): the sequence number of the record buffer it came in.
    pub buf_seq: Option<u32>,
}

impl ScopeRecord {
    /// The ring as an index into the capacity arrays, if in 0..4.
    pub fn ring_index(&self) -> Option<usize> {
        usize::try_from(self.ring)
            .ok()
            .filter(|r| *r < MAX_RING_DEPTH)
    }
}

/// The `site` text for a scope opened at `line` of `source_file`: the
/// file's basename cut to 31 bytes (Simpler keeps it in a `char[32]`), a
/// colon and the line.
pub fn format_site(source_file: &str, line: u32) -> String {
    let base = source_file
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(source_file);
    let mut end = base.len().min(31);
    while !base.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}:{line}", &base[..end])
}

/// A resource the report tracks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScopeResource {
    /// The per-ring task window.
    TaskWindow,
    /// The per-ring heap (bytes; the report shows MiB).
    Heap,
    /// The per-ring dependency-list pool.
    DepPool,
    /// The global TensorMap.
    Tensormap,
}

/// The three metrics of a per-ring resource over one scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingMetrics {
    /// "High water": `end.X_end − begin.X_start`.
    pub scope_high_water: i64,
    /// "Live at exit": `end.X_end − end.X_start`.
    pub real_occupancy: i64,
    /// "Alloc per scope": `end.X_end − begin.X_end`.
    pub scope_alloc: i64,
}

impl ScopeResource {
    /// All four, in report order.
    pub const ALL: [Self; 4] = [Self::TaskWindow, Self::Heap, Self::DepPool, Self::Tensormap];

    /// `(X_start, X_end)` of a record; for the TensorMap both are `tensormap`.
    pub fn start_end(self, r: &ScopeRecord) -> (i64, i64) {
        let wide = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        match self {
            Self::TaskWindow => (i64::from(r.task_window_start), i64::from(r.task_window_end)),
            Self::Heap => (wide(r.heap_start), wide(r.heap_end)),
            Self::DepPool => (i64::from(r.dep_pool_start), i64::from(r.dep_pool_end)),
            Self::Tensormap => (i64::from(r.tensormap), i64::from(r.tensormap)),
        }
    }

    /// The metrics over the scope `begin`..`end`; `None` for the TensorMap,
    /// which has only [`ScopeResource::risk`] (`end.tensormap`).
    pub fn metrics(self, begin: &ScopeRecord, end: &ScopeRecord) -> Option<RingMetrics> {
        if self == Self::Tensormap {
            return None;
        }
        let (begin_start, begin_end) = self.start_end(begin);
        let (end_start, end_end) = self.start_end(end);
        Some(RingMetrics {
            scope_high_water: end_end.saturating_sub(begin_start),
            real_occupancy: end_end.saturating_sub(end_start),
            scope_alloc: end_end.saturating_sub(begin_end),
        })
    }

    /// The value compared against capacity: `scope_high_water` for the ring
    /// resources, `real_occupancy = end.tensormap` for the TensorMap.
    pub fn risk(self, begin: &ScopeRecord, end: &ScopeRecord) -> i64 {
        match self.metrics(begin, end) {
            Some(m) => m.scope_high_water,
            None => i64::from(end.tensormap),
        }
    }
}

impl ScopeStatsMeta {
    /// The version-6 metadata with these capacities.
    pub fn new(
        task_window_max: [i32; MAX_RING_DEPTH],
        heap_max: [u64; MAX_RING_DEPTH],
        dep_pool_max: [i32; MAX_RING_DEPTH],
        tensormap_max: i32,
    ) -> Self {
        Self {
            version: Some(VERSION),
            fatal: false,
            dropped: 0,
            total: 0,
            task_window_max,
            heap_max,
            dep_pool_max,
            tensormap_max,
        }
    }

    /// The capacity of `resource` in ring `ring` (`tensormap_max` for the
    /// TensorMap, whatever the ring); `None` for a ring outside 0..4.
    pub fn capacity(&self, resource: ScopeResource, ring: usize) -> Option<i64> {
        match resource {
            ScopeResource::TaskWindow => self.task_window_max.get(ring).map(|&v| i64::from(v)),
            ScopeResource::Heap => self
                .heap_max
                .get(ring)
                .map(|&v| i64::try_from(v).unwrap_or(i64::MAX)),
            ScopeResource::DepPool => self.dep_pool_max.get(ring).map(|&v| i64::from(v)),
            ScopeResource::Tensormap => Some(i64::from(self.tensormap_max)),
        }
    }
}

/// A matched begin/end, as indices into the records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScopePair {
    /// Index of the `begin` record.
    pub begin: usize,
    /// Index of the `end` record.
    pub end: usize,
}

/// Matches each `end` with the innermost open `begin` of the same site and
/// depth (scopes nest). Pairs come in `end` order; unmatched records are
/// problems keyed `records[i]`.
pub fn pair_scopes(records: &[ScopeRecord]) -> (Vec<ScopePair>, Vec<Problem>) {
    // The open begins (record indices) as a stack, and for each (site, depth)
    // the stack positions holding it, innermost last: finding the match is
    // O(1) instead of a scan of the stack, so unmatched ends cannot make the
    // pairing quadratic.
    let mut open: Vec<usize> = Vec::new();
    let mut open_by_key: HashMap<(&str, i32), Vec<usize>> = HashMap::new();
    let mut pairs = Vec::new();
    let mut problems = Vec::new();
    for (i, r) in records.iter().enumerate() {
        match r.phase {
            ScopePhase::Begin => {
                open_by_key
                    .entry((r.site.as_str(), r.depth))
                    .or_default()
                    .push(open.len());
                open.push(i);
            }
            ScopePhase::End => {
                let found = open_by_key
                    .get(&(r.site.as_str(), r.depth))
                    .and_then(|positions| positions.last().copied());
                match found {
                    Some(pos) => {
                        // Everything above `pos` is the innermost of its key: pop it there.
                        for &unclosed in &open[pos..] {
                            let u = &records[unclosed];
                            if let Some(positions) =
                                open_by_key.get_mut(&(u.site.as_str(), u.depth))
                            {
                                positions.pop();
                            }
                        }
                        for &unclosed in &open[pos + 1..] {
                            problems.push(Problem::new(
                                format!("records[{unclosed}]"),
                                format!("begin at {} closed by no end", records[unclosed].site),
                            ));
                        }
                        pairs.push(ScopePair {
                            begin: open[pos],
                            end: i,
                        });
                        open.truncate(pos);
                    }
                    None => problems.push(Problem::new(
                        format!("records[{i}]"),
                        format!(
                            "end at {} (depth {}) has no matching begin",
                            r.site, r.depth
                        ),
                    )),
                }
            }
        }
    }
    for unclosed in open {
        problems.push(Problem::new(
            format!("records[{unclosed}]"),
            format!("begin at {} closed by no end", records[unclosed].site),
        ));
    }
    (pairs, problems)
}

// ---------------------------------------------------------------- writer

/// The metadata line (with its `\n`).
pub fn render_meta(m: &ScopeStatsMeta) -> String {
    let mut out = Out::with_capacity(256);
    out.s("{");
    if let Some(v) = m.version {
        out.s("\"version\": ").u(u64::from(v)).s(", ");
    }
    out.s("\"fatal\": ")
        .b(m.fatal)
        .s(", \"dropped\": ")
        .u(u64::from(m.dropped))
        .s(", \"total\": ")
        .u(u64::from(m.total))
        .s(", \"task_window_max\": ")
        .list(&m.task_window_max, ", ")
        .s(", \"heap_max\": ")
        .list(&m.heap_max, ", ")
        .s(", \"dep_pool_max\": ")
        .list(&m.dep_pool_max, ", ")
        .s(", \"tensormap_max\": ")
        .i(i64::from(m.tensormap_max))
        .s("}\n");
    out.into_string()
}

/// One record line (with its `\n`).
pub fn render_record(r: &ScopeRecord) -> String {
    let mut out = Out::with_capacity(256);
    out.s("{\"site\": ")
        .q(&r.site)
        .s(", \"phase\": ")
        .q(r.phase.as_str())
        .s(", \"depth\": ")
        .i(i64::from(r.depth))
        .s(", \"ring\": ")
        .i(i64::from(r.ring))
        .s(", \"task_window_start\": ")
        .i(i64::from(r.task_window_start))
        .s(", \"task_window_end\": ")
        .i(i64::from(r.task_window_end))
        .s(", \"heap_start\": ")
        .u(r.heap_start)
        .s(", \"heap_end\": ")
        .u(r.heap_end)
        .s(", \"dep_pool_start\": ")
        .i(i64::from(r.dep_pool_start))
        .s(", \"dep_pool_end\": ")
        .i(i64::from(r.dep_pool_end))
        .s(", \"tensormap\": ")
        .i(i64::from(r.tensormap));
    if let Some(epoch) = r.run_epoch {
        out.s(", \"run_epoch\": ").u(epoch);
    }
    if let Some(seq) = r.buf_seq {
        out.s(", \"buf_seq\": ").u(u64::from(seq));
    }
    out.s("}\n");
    out.into_string()
}

/// The file's exact bytes.
pub fn render(file: &ScopeStatsFile) -> String {
    let mut text = render_meta(&file.meta);
    for r in &file.records {
        text.push_str(&render_record(r));
    }
    text
}

/// Writes `file` to `path` (normally `<prefix>/scope_stats/scope_stats.jsonl`) atomically.
pub fn write(path: &Path, file: &ScopeStatsFile) -> Result<(), WriteError> {
    atomic_write(path, render(file).as_bytes())
}

// ---------------------------------------------------------------- reader

impl ScopeStatsFile {
    /// The generation the file follows: 2026-08 exactly when the metadata has a `version`.
    pub fn schema(&self) -> DfxSchema {
        if self.meta.version.is_some() {
            DfxSchema::V2026_08
        } else {
            DfxSchema::V2026_09
        }
    }

    /// The file as `schema` writes it: 2026-08 with `version` 6 and no
    /// `run_epoch` / `buf_seq`; 2026-09 without `version`, every record with
    /// `run_epoch` `epoch` and `buf_seq` 0 unless it has its own.
    pub fn with_schema(mut self, schema: DfxSchema, epoch: u64) -> Self {
        let newer = schema.is_newer();
        self.meta.version = (!newer).then_some(self.meta.version.unwrap_or(VERSION));
        for r in &mut self.records {
            r.run_epoch = newer.then(|| r.run_epoch.unwrap_or(epoch));
            r.buf_seq = newer.then(|| r.buf_seq.unwrap_or(0));
        }
        self
    }
}

/// The generation of a `scope_stats.jsonl` from its content: 2026-08 when
/// its metadata line (the first that is not blank) has a `version` key, else
/// 2026-09.
pub fn detect(bytes: &[u8]) -> DfxSchema {
    let first = bytes
        .split(|&b| b == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace));
    let has_version = first
        .and_then(|l| serde_json::from_slice::<Value>(l).ok())
        .is_some_and(|v| v.get("version").is_some());
    if has_version {
        DfxSchema::V2026_08
    } else {
        DfxSchema::V2026_09
    }
}

const META_KEYS: [&str; 12] = [
    "version",
    "fatal",
    "dropped",
    "total",
    "task_window_max",
    "heap_max",
    "dep_pool_max",
    "tensormap_max",
    // 2026-09 background-session keys, not modelled.
    "collection_verdict",
    "counts_unknown",
    "host_received_records",
    "host_retained_records",
];

const RECORD_KEYS: [&str; 13] = [
    "site",
    "phase",
    "depth",
    "ring",
    "task_window_start",
    "task_window_end",
    "heap_start",
    "heap_end",
    "dep_pool_start",
    "dep_pool_end",
    "tensormap",
    "run_epoch",
    "buf_seq",
];

/// Reads the file at `path`.
pub fn read(path: &Path) -> Result<Loaded<ScopeStatsFile>, ReadError> {
    parse(&json::read_file(path)?, path)
}

/// Parses file content; `path` only names the file in messages.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Loaded<ScopeStatsFile>, ReadError> {
    let mut lines = bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix(b"\r").unwrap_or(l)))
        .filter(|(_, l)| !l.iter().all(u8::is_ascii_whitespace));
    let Some((meta_line_no, meta_line)) = lines.next() else {
        return Err(ReadError::new(
            path,
            ReadErrorKind::Empty {
                expected: "a metadata line (starting with {\"version\" or, in the 2026-09 generation, {\"fatal\")",
            },
        ));
    };
    let mut problems = Vec::new();
    let meta_value: Value =
        serde_json::from_slice(meta_line).map_err(|e| json::json_error(path, e))?;
    let meta = parse_meta(&Node::line(&meta_value, meta_line_no), &mut problems)
        .map_err(|e| e.into_read_error(path))?;

    let mut records = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for (line_no, line) in lines {
        let value: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                let what = if e.classify() == serde_json::error::Category::Eof {
                    "truncated"
                } else {
                    "invalid"
                };
                problems.push(Problem::new(
                    format!("line {line_no}"),
                    format!("{what} JSON ({e}); skipped the line"),
                ));
                continue;
            }
        };
        if let Some(map) = value.as_object() {
            let fresh = map
                .keys()
                .filter(|k| !RECORD_KEYS.contains(&k.as_str()) && !unknown.contains(k));
            let fresh: Vec<&String> = fresh.collect();
            let before = problems.len();
            schema::unknown_keys(
                fresh.iter().copied(),
                &RECORD_KEYS,
                &format!("line {line_no}: "),
                &mut problems,
            );
            if problems.len() > before {
                unknown.extend(fresh.into_iter().cloned());
            }
        }
        match parse_record(&Node::line(&value, line_no)) {
            Ok(r) => {
                if r.ring_index().is_none() {
                    problems.push(Problem::new(
                        format!("line {line_no}: ring"),
                        format!(
                            "is {}; expected 0..=3 (kept the record; it has no capacity)",
                            r.ring
                        ),
                    ));
                }
                records.push(r);
            }
            Err(issue) => problems.push(issue.into_problem("skipped the line")),
        }
    }
    let expected = u64::from(meta.total).saturating_sub(u64::from(meta.dropped));
    if records.len() as u64 != expected {
        problems.push(Problem::new(
            "records",
            format!(
                "{} records read but the metadata says total {} − dropped {} = {expected}",
                records.len(),
                meta.total,
                meta.dropped
            ),
        ));
    }
    Ok(Loaded {
        value: ScopeStatsFile { meta, records },
        problems,
    })
}

fn four<T: Copy + Default>(
    n: &Node<'_, '_>,
    problems: &mut Vec<Problem>,
    item: impl FnMut(&Node<'_, '_>) -> Result<T, Issue>,
) -> Result<[T; MAX_RING_DEPTH], Issue> {
    let v = n.vec(item)?;
    if v.len() != MAX_RING_DEPTH {
        problems.push(Problem::new(
            n.key.to_string(),
            format!(
                "has {} entries; expected {MAX_RING_DEPTH}; padded with 0 or cut",
                v.len()
            ),
        ));
    }
    let mut out = [T::default(); MAX_RING_DEPTH];
    for (slot, x) in out.iter_mut().zip(v) {
        *slot = x;
    }
    Ok(out)
}

fn parse_meta(n: &Node<'_, '_>, problems: &mut Vec<Problem>) -> Result<ScopeStatsMeta, Issue> {
    schema::unknown_keys(n.object()?.keys(), &META_KEYS, "line 1: ", problems);
    Ok(ScopeStatsMeta {
        version: n.opt_field("version")?.map(|v| v.u32()).transpose()?,
        fatal: n.field("fatal")?.bool()?,
        dropped: n.field("dropped")?.u32()?,
        total: n.field("total")?.u32()?,
        task_window_max: four(&n.field("task_window_max")?, problems, |x| x.i32())?,
        heap_max: four(&n.field("heap_max")?, problems, |x| x.u64())?,
        dep_pool_max: four(&n.field("dep_pool_max")?, problems, |x| x.i32())?,
        tensormap_max: n.field("tensormap_max")?.i32()?,
    })
}

fn parse_record(n: &Node<'_, '_>) -> Result<ScopeRecord, Issue> {
    n.object()?;
    let phase_node = n.field("phase")?;
    let phase_name = phase_node.str()?;
    let phase = ScopePhase::from_name(phase_name).ok_or_else(|| {
        phase_node.invalid(format!("is {phase_name:?}; expected \"begin\" or \"end\""))
    })?;
    Ok(ScopeRecord {
        site: n.field("site")?.str()?.to_string(),
        phase,
        depth: n.field("depth")?.i32()?,
        ring: n.field("ring")?.i32()?,
        task_window_start: n.field("task_window_start")?.i32()?,
        task_window_end: n.field("task_window_end")?.i32()?,
        heap_start: n.field("heap_start")?.u64()?,
        heap_end: n.field("heap_end")?.u64()?,
        dep_pool_start: n.field("dep_pool_start")?.i32()?,
        dep_pool_end: n.field("dep_pool_end")?.i32()?,
        tensormap: n.field("tensormap")?.i32()?,
        run_epoch: n.opt_field("run_epoch")?.map(|v| v.u64()).transpose()?,
        buf_seq: n.opt_field("buf_seq")?.map(|v| v.u32()).transpose()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_use_the_basename_cut_to_31_bytes() {
        assert_eq!(format_site("/src/kernels/orch.cpp", 77), "orch.cpp:77");
        assert_eq!(format_site("C:\\src\\orch.cpp", 5), "orch.cpp:5");
        let long = format!("/x/{}.cpp", "a".repeat(40));
        assert_eq!(format_site(&long, 1), format!("{}:1", "a".repeat(31)));
        // Never splits a UTF-8 sequence.
        let wide = format!("{}é.cpp", "a".repeat(30));
        assert_eq!(format_site(&wide, 2), format!("{}:2", "a".repeat(30)));
    }
}
