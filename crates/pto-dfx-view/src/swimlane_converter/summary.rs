//! The converter's stdout table: Simpler's "Task Statistics by Function".
//!
//! One row per func_id (ascending) with the count of subtask rows and the
//! averages of Exec (`end − start`), Latency (`finish − dispatch`), Exec %
//! (Σ exec / Σ latency), Head OH (`start − dispatch`), Tail OH
//! (`finish − end`), Prop (`receive − dispatch`) and Local
//! (`start − receive`), then Simpler's `TOTAL` row (the row count, Σ exec
//! and Σ latency, not averages), `Total Test Time` (latest finish −
//! earliest dispatch) and the exec-versus-latency summary. At level 1 there
//! are no AICPU times: the latency columns show `-` and `AICore Observed
//! Span` (latest end − earliest *receive*) replaces the test time. The
//! layout, widths and two-decimal precision are Simpler's.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::names::KernelNames;
use crate::perf::{Ns, Timeline};

/// One row of the per-kernel table (sums in ns; signed, as Simpler's are).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelRow {
    /// The func_id (−1 when unresolved).
    pub func_id: i64,
    /// Its name or `func_<n>_<letters>`.
    pub name: String,
    /// Subtask rows.
    pub count: u64,
    /// Σ (end − start).
    pub exec: i128,
    /// Σ (finish − dispatch) over rows with AICPU times.
    pub latency: i128,
    /// Σ (start − dispatch) over the same rows.
    pub head: i128,
    /// Σ (finish − end) over the same rows.
    pub tail: i128,
    /// Σ (receive − dispatch) over the same rows.
    pub prop: i128,
    /// Rows with AICPU times (the divisor of head, tail and prop).
    pub n_timed: u64,
    /// Σ (start − receive) over all rows.
    pub local: i128,
}

/// The converter's stdout table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSummary {
    /// The file's `chip_swimlane_level`.
    pub level: u8,
    /// One row per func_id, ascending.
    pub rows: Vec<KernelRow>,
    /// Earliest dispatch and latest finish (level ≥ 2, when any row has them).
    pub dispatch_span: Option<(Ns, Ns)>,
    /// Earliest receive and latest end over all rows.
    pub aicore_span: Option<(Ns, Ns)>,
}

impl KernelSummary {
    /// The table of `t`, each row's func_id from `func` (one per task row).
    pub(super) fn build(t: &Timeline, func: &[Option<i32>], names: &KernelNames) -> Self {
        let level = t.level.number();
        let has_aicpu = level >= 2;
        let mut rows: BTreeMap<i64, KernelRow> = BTreeMap::new();
        let mut dispatch_span: Option<(Ns, Ns)> = None;
        let mut aicore_span: Option<(Ns, Ns)> = None;
        for (i, task) in t.tasks.iter().enumerate() {
            let func_id = func.get(i).copied().flatten().map_or(-1, i64::from);
            let row = rows.entry(func_id).or_insert_with(|| KernelRow {
                func_id,
                ..KernelRow::default()
            });
            let (start, end, receive) = (
                i128::from(task.start),
                i128::from(task.end),
                i128::from(task.receive),
            );
            row.count += 1;
            row.exec += end - start;
            row.local += start - receive;
            aicore_span = Some(match aicore_span {
                None => (task.receive, task.end),
                Some((lo, hi)) => (lo.min(task.receive), hi.max(task.end)),
            });
            if !has_aicpu {
                continue;
            }
            if let (Some(d), Some(f)) = (task.dispatch, task.finish) {
                let (d, f) = (i128::from(d), i128::from(f));
                row.n_timed += 1;
                row.latency += f - d;
                row.head += start - d;
                row.tail += f - end;
                row.prop += receive - d;
                dispatch_span = Some(match dispatch_span {
                    None => (d as Ns, f as Ns),
                    Some((lo, hi)) => (lo.min(d as Ns), hi.max(f as Ns)),
                });
            }
        }
        let rows = rows
            .into_values()
            .map(|mut r| {
                r.name = names.label(r.func_id);
                r
            })
            .collect();
        Self {
            level,
            rows,
            dispatch_span,
            aicore_span,
        }
    }

    /// The table as text, in Simpler's layout.
    pub fn render(&self) -> String {
        let has_aicpu = self.level >= 2;
        let us = |ns: i128| ns as f64 / 1000.0;
        let avg = |sum: i128, n: u64| if n == 0 { 0.0 } else { us(sum) / n as f64 };
        let description = match self.level {
            1 => "AICore timing only",
            2 => "AICore + AICPU timing",
            3 => "AICore + AICPU timing + scheduler phases",
            _ => "full collection with orchestrator phases",
        };
        let mut out = String::new();
        let rule = |c: char, n: usize| c.to_string().repeat(n);
        let _ = writeln!(out, "\n{}", rule('=', 140));
        let _ = writeln!(out, "Task Statistics by Function");
        let _ = writeln!(
            out,
            "  Source chip_swimlane_level: {} ({description}; recorded in chip_swimlane_records.json)",
            self.level
        );
        let _ = writeln!(
            out,
            "  Exec = kernel time on AICore; Latency = dispatch->finish (incl. head OH + Exec + tail OH)"
        );
        let _ = writeln!(
            out,
            "  Head OH split (v3): Prop = NoC propagation (dispatch_ts\u{2192}AICore receive); Local = dcci+ack (receive\u{2192}start)"
        );
        let _ = writeln!(out, "{}", rule('=', 140));
        let _ = writeln!(
            out,
            "{:<8} {:<12} {:>5}   {:>12}  {:>15}  {:>6}   {:>15}  {:>15}  {:>12}  {:>13}",
            "Func_ID",
            "Func_Name",
            "Count",
            "Avg Exec(us)",
            "Avg Latency(us)",
            "Exec%",
            "Avg Head OH(us)",
            "Avg Tail OH(us)",
            "Avg Prop(us)",
            "Avg Local(us)"
        );
        let _ = writeln!(out, "{}", rule('-', 140));
        let (mut total_count, mut total_exec, mut total_latency) = (0u64, 0i128, 0i128);
        for r in &self.rows {
            total_count += r.count;
            total_exec += r.exec;
            total_latency += r.latency;
            let dash = |w: usize| format!("{:>w$}", "-");
            let (latency, ratio, head, tail) = if has_aicpu {
                let ratio = if r.latency > 0 {
                    r.exec as f64 / r.latency as f64 * 100.0
                } else {
                    0.0
                };
                (
                    format!("{:>15.2}", avg(r.latency, r.count)),
                    format!("{:>6}", format!("{ratio:.1}%")),
                    format!("{:>15.2}", avg(r.head, r.n_timed)),
                    format!("{:>15.2}", avg(r.tail, r.n_timed)),
                )
            } else {
                (dash(15), dash(6), dash(15), dash(15))
            };
            let prop = if has_aicpu && r.n_timed > 0 {
                format!("{:>12.2}", avg(r.prop, r.n_timed))
            } else {
                dash(12)
            };
            let _ = writeln!(
                out,
                "{:<8} {:<12} {:>5}   {:>12.2}  {latency}  {ratio}   {head}  {tail}  {prop}  {:>13.2}",
                r.func_id,
                r.name,
                r.count,
                avg(r.exec, r.count),
                avg(r.local, r.count),
            );
        }
        let _ = writeln!(out, "{}", rule('-', 140));
        let latency = if has_aicpu {
            format!("{:.2}", us(total_latency))
        } else {
            String::from("-")
        };
        let _ = writeln!(
            out,
            "{:<21} {:>5}   {:>12.2}  {:>15}",
            "TOTAL",
            total_count,
            us(total_exec),
            latency
        );
        match (has_aicpu, self.dispatch_span, self.aicore_span) {
            (true, Some((lo, hi)), _) => {
                let _ = writeln!(
                    out,
                    "\nTotal Test Time: {:.2} us (from earliest dispatch to latest finish)",
                    us(i128::from(hi) - i128::from(lo))
                );
            }
            (false, _, Some((lo, hi))) if self.level == 1 => {
                let _ = writeln!(
                    out,
                    "\nAICore Observed Span: {:.2} us (from earliest AICore receive to latest AICore end)",
                    us(i128::from(hi) - i128::from(lo))
                );
            }
            _ => {}
        }
        if has_aicpu && total_count > 0 && total_latency > 0 {
            let _ = writeln!(out, "\n--- Task execution vs Scheduler overhead ---");
            let _ = writeln!(
                out,
                "  Per-task (all):  Avg Exec = {:.2} us,  Avg Latency (dispatch->finish) = {:.2} us,  Exec/Latency = {:.2}%",
                us(total_exec) / total_count as f64,
                us(total_latency) / total_count as f64,
                total_exec as f64 / total_latency as f64 * 100.0
            );
            let _ = writeln!(
                out,
                "  (Latency = dispatch\u{2192}finish; Exec = AICore kernel time per task)"
            );
        }
        let _ = writeln!(out, "{}", rule('=', 110));
        out
    }
}
