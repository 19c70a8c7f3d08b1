//! Dependency inference, checked on the edges the orchestrator actually wired.

use pto_runtime::{ArgDirection, DepLog, EdgeSource};

use crate::common::{config, f32_arg, run_body};

/// Runs `body` with one 8×8 f32 tensor `x` (orchestration arg 0) and returns the edges as
/// `(pred_local, succ_local, source)` of ring 0 tasks.
fn edges(name: &str, body: &str) -> (DepLog, Vec<(u64, u64, &'static str)>) {
    let mut x = vec![0f32; 64];
    let mut args = [f32_arg(ArgDirection::InOut, &[8, 8], &mut x)];
    let mut cfg = config();
    cfg.record_deps = true;
    let report = match run_body(name, body, &mut args, &cfg) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    let log = report.deps.expect("deps recorded");
    let mut out: Vec<(u64, u64, &'static str)> = log
        .edges
        .iter()
        .map(|e| (e.pred.local(), e.succ.local(), e.source.name()))
        .collect();
    out.dedup();
    (log, out)
}

const PRELUDE: &str = r#"
    ChipTensor x = orch_args.tensor(0).ref();
    auto blk = [&](uint32_t r0, uint32_t c0, uint32_t rows, uint32_t cols) {
        uint32_t s[2] = {rows, cols}; uint32_t o[2] = {r0, c0}; return x.view(s, o);
    };
    auto write = [&](const ChipTensor& t) { CoreTaskArgs p; p.add_output(t); return rt_submit_aiv_task(0, p).task_id(); };
    auto inout = [&](const ChipTensor& t) { CoreTaskArgs p; p.add_inout(t); return rt_submit_aiv_task(0, p).task_id(); };
    auto read = [&](const ChipTensor& t) { CoreTaskArgs p; p.add_input(t); return rt_submit_aiv_task(0, p).task_id(); };
    (void)blk; (void)write; (void)inout; (void)read;
"#;

#[test]
fn disjoint_views_do_not_depend() {
    let body = format!("{PRELUDE} write(blk(0,0,4,8)); write(blk(4,0,4,8)); read(blk(4,0,4,8)); read(blk(0,4,8,4)); write(blk(0,0,8,4)); read(blk(0,4,8,4));");
    let (_, e) = edges("disjoint", &body);
    // t2 reads rows 4..8: only t1. t3 reads columns 4..8: both row blocks. t5 reads columns
    // 4..8 again: t4 wrote columns 0..4, disjoint.
    assert_eq!(
        e,
        [
            (1, 2, "tensormap"),
            (1, 3, "tensormap"),
            (0, 3, "tensormap"),
            (1, 5, "tensormap"),
            (0, 5, "tensormap")
        ]
    );
}

#[test]
fn covering_inout_supersedes_and_partial_overlap_depends() {
    let body = format!("{PRELUDE} write(blk(0,0,4,8)); write(blk(4,0,4,8)); inout(x); read(x); read(blk(2,2,2,2));");
    let (log, e) = edges("covered", &body);
    assert_eq!(
        e,
        [
            (1, 2, "tensormap"),
            (0, 2, "tensormap"),
            (2, 3, "tensormap"),
            (2, 4, "tensormap")
        ]
    );
    let overlaps: Vec<_> = log
        .edges
        .iter()
        .map(|e| e.overlap.map(|o| o.name()))
        .collect();
    assert_eq!(
        overlaps,
        [
            Some("covered"),
            Some("covered"),
            Some("covered"),
            Some("other")
        ]
    );
}

#[test]
fn different_strides_are_conservative() {
    let body = format!("{PRELUDE} write(blk(0,0,2,2)); read(x.transpose(0, 1).slice(0, 6, 8));");
    let (_, e) = edges("strides", &body);
    assert_eq!(e, [(0, 1, "tensormap")]);
}

#[test]
fn inout_chain_links_neighbours_only() {
    let body = format!("{PRELUDE} inout(x); inout(x); inout(x); read(x);");
    let (_, e) = edges("inout_chain", &body);
    assert_eq!(
        e,
        [
            (0, 1, "tensormap"),
            (1, 2, "tensormap"),
            (2, 3, "tensormap")
        ]
    );
}

#[test]
fn creator_edges_follow_runtime_allocated_outputs() {
    let body = format!(
        "{PRELUDE} uint32_t s[1] = {{16}}; TensorCreateInfo ci(s, 1);
        CoreTaskArgs p; p.add_output(ci); TaskOutputTensors t = rt_submit_aic_task(1, p);
        CoreTaskArgs q; q.add_input(t.get_ref(0)); rt_submit_aiv_task(0, q);
        TaskOutputTensors a = alloc_tensors(ci);
        CoreTaskArgs r; r.add_no_dep(a.get_ref(0)); rt_submit_aiv_task(0, r);"
    );
    let (log, e) = edges("creator", &body);
    assert_eq!(e, [(0, 1, "creator"), (2, 3, "creator")]);
    assert!(log.tasks[2].is_alloc);
    assert!(log.edges.iter().all(|e| e.retain));
}

#[test]
fn manual_scope_uses_explicit_deps_only() {
    // An outer task, then four tasks in a manual scope (ring 1) with explicit deps, as in
    // Simpler's dep_gen validation graph: t0→t1, t0→t2, t1→t3, t2→t3, t0→t4, t3→t4.
    let body = format!(
        "{PRELUDE} PTO2TaskId t0 = write(x);
        PTO2_SCOPE(PTO2ScopeMode::MANUAL) {{
            CoreTaskArgs a; a.add_inout(x); a.set_dependencies(&t0, 1); PTO2TaskId t1 = rt_submit_aiv_task(0, a).task_id();
            CoreTaskArgs b; b.add_inout(x); b.set_dependencies(&t0, 1); PTO2TaskId t2 = rt_submit_aiv_task(0, b).task_id();
            PTO2TaskId d3[2] = {{t1, t2}};
            CoreTaskArgs c; c.add_inout(x); c.set_dependencies(d3, 2); PTO2TaskId t3 = rt_submit_aiv_task(0, c).task_id();
            PTO2TaskId d4[2] = {{t0, t3}};
            CoreTaskArgs d; d.add_input(x); d.set_dependencies(d4, 2); rt_submit_aiv_task(0, d);
        }}"
    );
    let (log, _) = edges("manual", &body);
    let pairs: Vec<(String, String)> = log
        .pairs()
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let want = [
        ("t0", "r1t0"),
        ("r1t0", "r1t1"),
        ("t0", "r1t1"),
        ("r1t0", "r1t2"),
        ("r1t1", "r1t2"),
        ("t0", "r1t3"),
        ("r1t2", "r1t3"),
    ];
    // Expected set (order aside): the six edges of the reference graph, nothing else.
    let mut got = pairs.clone();
    got.sort();
    let mut expected: Vec<(String, String)> = vec![
        ("t0".into(), "r1t0".into()),
        ("t0".into(), "r1t1".into()),
        ("r1t0".into(), "r1t2".into()),
        ("r1t1".into(), "r1t2".into()),
        ("t0".into(), "r1t3".into()),
        ("r1t2".into(), "r1t3".into()),
    ];
    expected.sort();
    assert_eq!(got, expected, "{want:?}");
    assert!(log.edges.iter().all(|e| e.source == EdgeSource::Explicit));
    assert!(log.tasks[1..].iter().all(|t| t.manual_scope));
}

/// An explicit dependency on a task already retired wires nothing, but `deps.json` still
/// lists it, as Simpler's dep_gen replay (which never retires a producer) does.
#[test]
fn explicit_deps_on_retired_tasks_are_recorded_but_not_wired() {
    let body = format!(
        "{PRELUDE} PTO2TaskId early = PTO2TaskId::invalid();
        PTO2_SCOPE() {{ early = write(blk(0,0,1,1)); }}
        uint32_t idx[2] = {{7, 7}};
        set_tensor_data<float>(x, 2, idx, 1.0f); // waits until every task is done
        ChipTensor b = blk(7,7,1,1); CoreTaskArgs p; p.add_input(b); p.set_dependencies(&early, 1); rt_submit_aiv_task(0, p);"
    );
    let (log, e) = edges("retired", &body);
    assert_eq!(e, [(0, 0, "explicit")]);
    assert_eq!(log.edges[0].pred, log.tasks[0].id);
    assert_eq!(log.edges[0].succ, log.tasks[1].id);
    assert!(log.edges[0].wait && log.edges[0].retain);
    assert_eq!(log.tasks.len(), 2);
}

#[test]
fn manual_scopes_drop_creator_edges_and_early_resolve_is_recorded() {
    // Inside a MANUAL scope only explicit dependencies order tasks, creator edges included
    // (Simpler): the reader of A's runtime-allocated output gets no edge unless it asks.
    let body = format!(
        "{PRELUDE} PTO2_SCOPE(PTO2ScopeMode::MANUAL) {{
            uint32_t s[1] = {{4}}; TensorCreateInfo ci(s, 1);
            CoreTaskArgs a; a.add_output(ci); TaskOutputTensors t = rt_submit_aiv_task(0, a);
            CoreTaskArgs b; b.add_input(t.get_ref(0)); b.set_allow_early_resolve(); rt_submit_aiv_task(0, b);
            PTO2TaskId id = t.task_id();
            CoreTaskArgs c; c.add_input(t.get_ref(0)); c.set_dependencies(&id, 1); rt_submit_aiv_task(0, c);
        }}"
    );
    let (log, e) = edges("manual_creator", &body);
    assert_eq!(e, vec![(0, 2, "explicit")], "{e:?}");
    let early: Vec<bool> = log.tasks.iter().map(|t| t.early_dispatch).collect();
    assert_eq!(early, vec![false, true, false]);
}

/// A TensorMap writer that retired before its reader was submitted still gives the reader
/// its edge in the log (Simpler's replay never retires a producer), though nothing is
/// wired to it.
#[test]
fn tensormap_edges_to_retired_writers_are_recorded() {
    let body = format!(
        "{PRELUDE} PTO2_SCOPE() {{ write(blk(0,0,2,8)); }}
        uint32_t idx[2] = {{7, 7}};
        set_tensor_data<float>(x, 2, idx, 1.0f); // waits until every task is done
        read(blk(1,0,1,8));"
    );
    let (log, e) = edges("retired_writer", &body);
    assert_eq!(e, [(0, 0, "tensormap")], "{e:?}");
    assert_eq!(log.edges[0].pred, log.tasks[0].id);
    assert_eq!(log.edges[0].succ, log.tasks[1].id);
    assert_eq!(
        log.edges[0].overlap,
        Some(pto_runtime::tensor_map::Overlap::Other)
    );
}

/// The same program gives the same edges whatever the timing: run many times with the
/// cores kept busy by spinning threads, so that writers retire at different moments
/// relative to the submits that read their regions.
#[test]
fn recorded_edges_do_not_depend_on_timing() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let body = format!(
        "{PRELUDE} for (uint32_t i = 0; i < 48; ++i) {{
            PTO2_SCOPE() {{ write(blk(i % 8, 0, 1, 8)); }}
            PTO2_SCOPE() {{ read(blk((i * 3) % 8, 0, 1, 8)); inout(blk(i % 8, 0, 1, 8)); }}
            if (i % 5 == 0) {{ PTO2_SCOPE() {{ read(blk(0, 0, 8, 8)); }} }}
        }}"
    );
    let stop = AtomicBool::new(false);
    let runs: Vec<Vec<String>> = std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
        }
        let runs = (0..20)
            .map(|_| {
                let (log, _) = edges("timing", &body);
                log.edges
                    .iter()
                    .map(|e| format!("{}->{} {} {:?}", e.pred, e.succ, e.source.name(), e.overlap))
                    .collect()
            })
            .collect();
        stop.store(true, Ordering::Relaxed);
        runs
    });
    // Every reader of a row sees every earlier writer of it not yet superseded by an INOUT.
    assert!(runs[0].len() > 48 * 2, "{}", runs[0].len());
    for (k, r) in runs.iter().enumerate() {
        assert_eq!(r, &runs[0], "run {k} differs from run 0");
    }
}
