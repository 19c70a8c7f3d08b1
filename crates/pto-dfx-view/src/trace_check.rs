//! A checker for Chrome trace-event JSON: the rules a trace must keep for
//! Perfetto to show it as written.
//!
//! [`check`] returns every violation it finds (an empty list means the
//! trace is well-formed):
//!
//! - the document is `{"traceEvents": [...]}` and every event has a `ph`;
//! - `ts` is a finite number ≥ 0 on every timed event; an `X` slice has a
//!   finite `dur` ≥ 0 (Perfetto skips an `X` without one);
//! - slices on one `(pid, tid)` nest: two slices either do not overlap or
//!   one contains the other (Perfetto drops partly overlapping `X` events);
//! - every flow (`s` / `f` sharing `id`, `cat` and `name`) has both ends,
//!   each inside a slice (`ts ≤ t ≤ ts + dur`) on its own `(pid, tid)`, the
//!   `f` carrying `"bp": "e"`, the start not after the end;
//! - every pid has a `process_name` and every `(pid, tid)` that carries a
//!   slice, flow or instant has a `thread_name` (`ph: "M"`, `args.name`);
//! - counter (`C`) events carry only numeric `args`.
//!
//! Times are compared in nanoseconds rounded from the µs values, as
//! Perfetto's importer converts them, so a trace whose slices only touch is
//! not flagged by a floating-point rounding error.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

/// What the checker counted in a trace that passed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceCounts {
    /// `X` slices.
    pub slices: usize,
    /// Complete flows (an `s` and its `f`).
    pub flows: usize,
    /// `C` samples.
    pub counters: usize,
    /// `M` metadata events.
    pub metadata: usize,
}

fn ns(v: f64) -> i64 {
    (v * 1000.0).round() as i64
}

fn int_of(v: Option<&Value>) -> Option<i64> {
    v.and_then(|x| x.as_i64().or_else(|| x.as_u64().map(|u| u as i64)))
}

/// Per (pid, tid): (start ns, end ns, event index).
type Slices = HashMap<(i64, i64), Vec<(i64, i64, usize)>>;
/// A flow end: (event index, pid, tid, ns).
type End = (usize, i64, i64, i64);
/// Per (id, cat, name): the `s` and `f` ends.
type Flows = BTreeMap<(String, String, String), (Vec<End>, Vec<End>)>;

/// What one pass over the events collects.
#[derive(Default)]
struct Scan {
    errors: Vec<String>,
    counts: TraceCounts,
    process_named: BTreeSet<i64>,
    thread_named: BTreeSet<(i64, i64)>,
    pids_used: BTreeSet<i64>,
    threads_used: BTreeSet<(i64, i64)>,
    slices: Slices,
    flows: Flows,
}

/// Checks a parsed trace; `Err` holds every violation (at most 50, then a count).
pub fn check(trace: &Value) -> Result<TraceCounts, Vec<String>> {
    let Some(events) = trace.get("traceEvents").and_then(Value::as_array) else {
        return Err(vec![String::from(
            "the document has no `traceEvents` array",
        )]);
    };
    let mut scan = Scan::default();
    for (i, e) in events.iter().enumerate() {
        scan.event(i, e);
    }
    scan.check_nesting();
    scan.check_flows();
    scan.check_names();
    let Scan {
        mut errors, counts, ..
    } = scan;
    if errors.is_empty() {
        Ok(counts)
    } else {
        let n = errors.len();
        errors.truncate(50);
        if n > 50 {
            errors.push(format!("... and {} more", n - 50));
        }
        Err(errors)
    }
}

impl Scan {
    /// Event `i`: its `ph` and `ts`, then what its kind carries.
    fn event(&mut self, i: usize, e: &Value) {
        let Some(ph) = e.get("ph").and_then(Value::as_str) else {
            self.errors.push(format!("traceEvents[{i}] has no `ph`"));
            return;
        };
        let pid = int_of(e.get("pid"));
        let tid = int_of(e.get("tid"));
        let ts = e.get("ts").and_then(Value::as_f64);
        let timed = matches!(
            ph,
            "X" | "B" | "E" | "s" | "t" | "f" | "i" | "I" | "C" | "b" | "e" | "n"
        );
        if timed {
            match ts {
                Some(t) if t.is_finite() && t >= 0.0 => {}
                _ => self.errors.push(format!(
                    "traceEvents[{i}] ({ph}) has ts {:?}; expected a finite number >= 0",
                    e.get("ts")
                )),
            }
        }
        if let Some(p) = pid {
            if ph != "M" {
                self.pids_used.insert(p);
            }
        }
        match ph {
            "M" => self.metadata(i, e, pid, tid),
            "X" => self.slice(i, e, pid, tid, ts),
            "s" | "f" => self.flow_end(i, e, ph, pid, tid, ts),
            "C" => {
                self.counts.counters += 1;
                match e.get("args").and_then(Value::as_object) {
                    Some(args) if args.values().all(Value::is_number) && !args.is_empty() => {}
                    _ => self.errors.push(format!(
                        "traceEvents[{i}] (C {:?}) needs numeric args",
                        e.get("name")
                    )),
                }
            }
            "i" | "I" | "B" | "E" => {
                if let (Some(p), Some(t)) = (pid, tid) {
                    self.threads_used.insert((p, t));
                }
            }
            _ => {}
        }
    }

    /// A `process_name` / `thread_name` event names its pid or thread.
    fn metadata(&mut self, i: usize, e: &Value, pid: Option<i64>, tid: Option<i64>) {
        self.counts.metadata += 1;
        let name = e.get("name").and_then(Value::as_str).unwrap_or("");
        let has_name = e
            .get("args")
            .and_then(|a| a.get("name"))
            .and_then(Value::as_str)
            .is_some();
        match (name, pid, tid) {
            ("process_name", Some(p), _) if has_name => {
                self.process_named.insert(p);
            }
            ("thread_name", Some(p), Some(t)) if has_name => {
                self.thread_named.insert((p, t));
            }
            ("process_name" | "thread_name", _, _) => self.errors.push(format!(
                "traceEvents[{i}] ({name}) lacks pid/tid or args.name"
            )),
            _ => {}
        }
    }

    /// An `X` slice on its track.
    fn slice(&mut self, i: usize, e: &Value, pid: Option<i64>, tid: Option<i64>, ts: Option<f64>) {
        self.counts.slices += 1;
        let dur = e.get("dur").and_then(Value::as_f64);
        let (Some(p), Some(t), Some(start)) = (pid, tid, ts) else {
            self.errors
                .push(format!("traceEvents[{i}] (X) lacks pid, tid or ts"));
            return;
        };
        match dur {
            Some(d) if d.is_finite() && d >= 0.0 => {
                self.threads_used.insert((p, t));
                let s = ns(start);
                self.slices
                    .entry((p, t))
                    .or_default()
                    .push((s, s + ns(d), i));
            }
            _ => self.errors.push(format!(
                "traceEvents[{i}] (X {:?}) has dur {:?}; expected a finite number >= 0",
                e.get("name"),
                e.get("dur")
            )),
        }
    }

    /// An `s` or `f` flow end, under its (id, cat, name).
    fn flow_end(
        &mut self,
        i: usize,
        e: &Value,
        ph: &str,
        pid: Option<i64>,
        tid: Option<i64>,
        ts: Option<f64>,
    ) {
        let (Some(p), Some(t), Some(at)) = (pid, tid, ts) else {
            self.errors
                .push(format!("traceEvents[{i}] ({ph}) lacks pid, tid or ts"));
            return;
        };
        self.threads_used.insert((p, t));
        if ph == "f" && e.get("bp").and_then(Value::as_str) != Some("e") {
            self.errors
                .push(format!("traceEvents[{i}] (f) lacks \"bp\": \"e\""));
        }
        let key = (
            e.get("id").map(Value::to_string).unwrap_or_default(),
            e.get("cat")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            e.get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        );
        let entry = self.flows.entry(key).or_default();
        let end = (i, p, t, ns(at));
        if ph == "s" {
            entry.0.push(end);
        } else {
            entry.1.push(end);
        }
    }

    /// Slices on one track nest (sorts each track by start, longest first).
    fn check_nesting(&mut self) {
        for ((pid, tid), list) in &mut self.slices {
            list.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            let mut stack: Vec<(i64, usize)> = Vec::new();
            for &(start, end, i) in list.iter() {
                while stack.last().is_some_and(|&(e, _)| e <= start) {
                    stack.pop();
                }
                if let Some(&(outer_end, j)) = stack.last() {
                    if end > outer_end {
                        self.errors.push(format!(
                            "slices traceEvents[{j}] and traceEvents[{i}] partly overlap on pid {pid} tid {tid}"
                        ));
                        continue;
                    }
                }
                stack.push((end, i));
            }
        }
    }

    /// Every flow has one start and one finish, each inside a slice on its track, and does
    /// not go back in time (after [`Scan::check_nesting`] sorted the tracks).
    fn check_flows(&mut self) {
        let slices = &self.slices;
        let inside = |p: i64, t: i64, at: i64| -> bool {
            slices.get(&(p, t)).is_some_and(|list| {
                // Sorted by start; any slice with start <= at <= end.
                let idx = list.partition_point(|s| s.0 <= at);
                list[..idx].iter().rev().any(|s| s.1 >= at)
            })
        };
        for ((id, cat, name), (starts, finishes)) in &self.flows {
            if starts.len() != 1 || finishes.len() != 1 {
                self.errors.push(format!(
                    "flow id {id} ({cat}/{name}) has {} start(s) and {} finish(es); expected one each",
                    starts.len(),
                    finishes.len()
                ));
                continue;
            }
            self.counts.flows += 1;
            let (si, sp, st, sat) = starts[0];
            let (fi, fp, ft, fat) = finishes[0];
            if !inside(sp, st, sat) {
                self.errors.push(format!(
                    "flow start traceEvents[{si}] ({name}) is in no slice on pid {sp} tid {st}"
                ));
            }
            if !inside(fp, ft, fat) {
                self.errors.push(format!(
                    "flow finish traceEvents[{fi}] ({name}) is in no slice on pid {fp} tid {ft}"
                ));
            }
            if sat > fat {
                self.errors.push(format!(
                    "flow id {id} ({name}) goes back in time ({sat} ns → {fat} ns)"
                ));
            }
        }
    }

    /// Every pid used has a `process_name`, every thread used a `thread_name`.
    fn check_names(&mut self) {
        for p in &self.pids_used {
            if !self.process_named.contains(p) {
                self.errors.push(format!("pid {p} has no process_name"));
            }
        }
        for (p, t) in &self.threads_used {
            if !self.thread_named.contains(&(*p, *t)) {
                self.errors
                    .push(format!("pid {p} tid {t} has no thread_name"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta() -> Vec<Value> {
        vec![
            json!({"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "P"}}),
            json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "T"}}),
        ]
    }

    fn run(extra: Vec<Value>) -> Result<TraceCounts, Vec<String>> {
        let mut events = meta();
        events.extend(extra);
        check(&json!({ "traceEvents": events }))
    }

    #[test]
    fn accepts_nesting_touching_and_flows_inside() {
        let counts = run(vec![
            json!({"ph": "X", "pid": 1, "tid": 2, "ts": 0.0, "dur": 2.0, "name": "a"}),
            json!({"ph": "X", "pid": 1, "tid": 2, "ts": 0.5, "dur": 1.0, "name": "b"}),
            json!({"ph": "X", "pid": 1, "tid": 2, "ts": 2.0, "dur": 1.0, "name": "c"}),
            json!({"ph": "s", "pid": 1, "tid": 2, "ts": 1.9, "id": 1, "cat": "flow", "name": "d"}),
            json!({"ph": "f", "pid": 1, "tid": 2, "ts": 2.1, "id": 1, "cat": "flow", "name": "d", "bp": "e"}),
            json!({"ph": "C", "pid": 1, "tid": 2, "ts": 0.0, "name": "q", "args": {"AIC": 1}}),
        ])
        .unwrap();
        assert_eq!(counts.slices, 3);
        assert_eq!(counts.flows, 1);
        assert_eq!(counts.counters, 1);
    }

    #[test]
    fn reports_each_kind_of_violation() {
        let errors = run(vec![
            json!({"ph": "X", "pid": 1, "tid": 2, "ts": 0.0, "dur": 2.0}),
            json!({"ph": "X", "pid": 1, "tid": 2, "ts": 1.0, "dur": 2.0}),
            json!({"ph": "X", "pid": 1, "tid": 3, "ts": -1.0, "dur": 1.0}),
            json!({"ph": "X", "pid": 9, "tid": 2, "ts": 0.0}),
            json!({"ph": "s", "pid": 1, "tid": 2, "ts": 5.0, "id": 1, "cat": "flow", "name": "d"}),
            json!({"ph": "f", "pid": 1, "tid": 2, "ts": 0.5, "id": 1, "cat": "flow", "name": "d"}),
            json!({"ph": "s", "pid": 1, "tid": 2, "ts": 0.5, "id": 2, "cat": "flow", "name": "d"}),
            json!({"ph": "C", "pid": 1, "tid": 2, "ts": 0.0, "name": "q", "args": {"AIC": "x"}}),
        ])
        .unwrap_err();
        let all = errors.join("\n");
        for needle in [
            "partly overlap",
            "expected a finite number >= 0",
            "has dur None",
            "is in no slice",
            "lacks \"bp\"",
            "goes back in time",
            "1 start(s) and 0 finish(es)",
            "needs numeric args",
            "pid 9 has no process_name",
            "pid 1 tid 3 has no thread_name",
        ] {
            assert!(all.contains(needle), "missing {needle:?} in\n{all}");
        }
    }
}
