//! Swimlane level-4 records of the worker loop: stamp order along a chain (a hop handed
//! over by the worker's own completion reuses that phase's end reading as its dispatch)
//! and the ready-queue depth sampled once per 64 readings.

use pto_runtime::dfx::SchedPhaseKind;
use pto_runtime::{ArgDirection, RunReport};

use crate::common::{config, f32_arg, run_body};

fn run_level4(name: &str, body: &str, n_workers: usize) -> RunReport {
    let mut cfg = config();
    cfg.n_workers = Some(n_workers);
    cfg.dfx.swimlane = 4;
    let mut x = vec![0f32; 8];
    let mut args = vec![f32_arg(ArgDirection::InOut, &[8], &mut x)];
    run_body(name, body, &mut args, &cfg).unwrap()
}

/// Every task of the chain is dispatched after its predecessor finished, and each
/// worker's phases tile its records: a dispatch phase from the subtask's dispatch to its
/// start, a complete phase from its finish.
#[test]
fn chain_hops_keep_their_order() {
    const N: usize = 400;
    let body = format!(
        "    ChipTensor x = orch_args.tensor(0).ref();\n    for (int i = 0; i < {N}; ++i) {{ CoreTaskArgs p; p.add_inout(x); rt_submit_aiv_task(0, p); }}\n"
    );
    let report = run_level4("swimlane_chain_order", &body, 1);
    let mut subtasks: Vec<_> = report
        .dfx
        .workers
        .iter()
        .flat_map(|w| w.subtasks.iter().copied())
        .collect();
    assert_eq!(subtasks.len(), N);
    subtasks.sort_by_key(|s| s.task);
    for s in &subtasks {
        assert!(
            s.dispatch_ns <= s.start_ns && s.start_ns <= s.end_ns && s.end_ns <= s.finish_ns,
            "{s:?}"
        );
    }
    for hop in subtasks.windows(2) {
        assert!(
            hop[1].dispatch_ns >= hop[0].finish_ns,
            "dispatched before its predecessor finished: {hop:?}"
        );
    }
    for w in &report.dfx.workers {
        let mut by_start = w.subtasks.clone();
        by_start.sort_by_key(|s| s.start_ns);
        assert_eq!(w.phases.len(), 2 * by_start.len());
        for (s, pair) in by_start.iter().zip(w.phases.chunks(2)) {
            assert_eq!(pair[0].kind, SchedPhaseKind::Dispatch);
            assert_eq!(
                (pair[0].start_ns, pair[0].end_ns),
                (s.dispatch_ns, s.start_ns)
            );
            assert_eq!(pair[1].kind, SchedPhaseKind::Complete);
            assert_eq!(pair[1].start_ns, s.finish_ns);
            assert!(pair[1].end_ns >= pair[1].start_ns);
        }
    }
}

/// A worker's depth readings (two per task: the dispatch phase's start, the complete
/// phase's end) change only where a new sample is taken, every 64th reading; with a
/// queue that fills and drains the samples differ.
#[test]
fn ready_queue_depth_is_sampled_every_64_readings() {
    const N: usize = 3000;
    let body = format!(
        "    for (int i = 0; i < {N}; ++i) {{ CoreTaskArgs p; rt_submit_aiv_task(0, p); }}\n"
    );
    let report = run_level4("swimlane_depth_samples", &body, 1);
    let mut distinct = std::collections::BTreeSet::new();
    for w in &report.dfx.workers {
        let readings: Vec<[i16; 3]> = w
            .phases
            .chunks(2)
            .flat_map(|pair| [pair[0].shared_at_start, pair[1].shared_at_end])
            .collect();
        for (k, pair) in readings.windows(2).enumerate() {
            let depth = |d: [i16; 3]| d.iter().copied().max().unwrap();
            if (k + 1) % 64 != 0 {
                assert_eq!(
                    depth(pair[0]),
                    depth(pair[1]),
                    "reading {} took a new sample",
                    k + 1
                );
            }
            distinct.insert(depth(pair[1]));
        }
    }
    assert!(distinct.len() > 1, "the queue never moved: {distinct:?}");
}
