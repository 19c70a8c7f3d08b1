//! Property tests of the two big readers (`chip_swimlane_records.json`,
//! `deps.json`) on random inputs, without the fuzzer.
//!
//! A deterministic generator (the `synth` files with random sizes, levels
//! and extreme field values) checks that writer and careful reader are
//! inverses and that the viewers' fast pass reads a clean file the same;
//! random edits of those files (cut, duplicated or deleted spans, inserted
//! JSON tokens and bytes) check that no reader panics and that whenever the
//! fast pass accepts a file, the careful reader accepts it too, finds no
//! damage and reads the same records. `PTO_PROPTEST_CASES` raises the
//! number of cases (default 200 per property).

use std::path::Path;

use pto_dfx::deps::{self, DepsFile};
use pto_dfx::deps_scan;
use pto_dfx::swimlane::{self, SwimlaneFile};
use pto_dfx::TaskId;
use pto_dfx_view::load::{self, TaskGraph};

use crate::synth::{generate, Lcg};

fn cases() -> u64 {
    std::env::var("PTO_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

/// Values at the edges of what the formats carry.
const EXTREME_U64: [u64; 7] = [
    0,
    1,
    0xffff_ffff,
    1 << 32,
    (1 << 53) + 1,
    i64::MAX as u64,
    u64::MAX,
];

fn extreme(rng: &mut Lcg) -> u64 {
    EXTREME_U64[rng.next(EXTREME_U64.len() as u64) as usize]
}

/// A random well-formed pair, with some fields pushed to extremes.
fn random_files(rng: &mut Lcg) -> (SwimlaneFile, DepsFile) {
    let n = rng.next(40) as usize;
    let level = 1 + rng.next(4) as u8;
    let (mut sw, mut dp) = generate(n, level, rng.next(u64::MAX));
    for row in &mut sw.aicore_tasks {
        if rng.next(4) == 0 {
            row.start_cycles = extreme(rng);
            row.end_cycles = extreme(rng);
            row.task_token = TaskId(extreme(rng));
        }
    }
    for row in &mut sw.aicpu_tasks {
        if rng.next(4) == 0 {
            row.dispatch_cycles = extreme(rng);
            row.finish_cycles = extreme(rng);
        }
    }
    if rng.next(3) == 0 {
        sw.metadata.clock_freq_hz = extreme(rng).max(1);
    }
    for t in &mut dp.tasks {
        if rng.next(4) == 0 {
            t.task_id = TaskId(extreme(rng));
            t.block_num = extreme(rng) as u32;
            t.kernel_ids = vec![-1, i32::MAX, 0];
        }
    }
    for e in &mut dp.edges {
        if rng.next(4) == 0 {
            e.pred = TaskId(extreme(rng));
            e.arg = extreme(rng) as i32;
        }
    }
    (sw, dp)
}

#[test]
fn writers_and_readers_are_inverses_and_the_fast_pass_agrees() {
    let mut rng = Lcg::new(0x5eed_0001);
    let path = Path::new("x.json");
    for case in 0..cases() {
        let (sw, dp) = random_files(&mut rng);
        let text = swimlane::render(&sw);
        let careful = swimlane::parse(text.as_bytes(), path).unwrap();
        assert!(
            careful.problems.is_empty(),
            "case {case}: {:?}",
            careful.problems
        );
        assert_eq!(careful.value, sw, "case {case}");
        assert_eq!(
            load::fast_swimlane(text.as_bytes()),
            Some(sw),
            "case {case}"
        );

        let text = deps::render(&dp);
        let careful = deps::parse(text.as_bytes(), path).unwrap();
        assert!(
            careful.problems.is_empty(),
            "case {case}: {:?}",
            careful.problems
        );
        assert_eq!(careful.value, dp, "case {case}");
        assert_eq!(
            load::fast_graph(text.as_bytes()),
            Some(TaskGraph::from_deps(&dp)),
            "case {case}"
        );
        match deps_scan::scan_bytes(text.as_bytes(), deps_scan::Detail::Full) {
            deps_scan::Scanned::Read(scan) => assert_eq!(scan.to_file(), dp, "case {case}"),
            deps_scan::Scanned::Declined => panic!("case {case}: a rendered file was declined"),
        }
    }
}

/// Tokens an edit inserts: JSON structure, numbers at the edges, names the
/// readers look for, and bytes that are not JSON (or not UTF-8).
const TOKENS: [&[u8]; 24] = [
    b"[",
    b"]",
    b"{",
    b"}",
    b",",
    b":",
    b"\"",
    b"\\",
    b"null",
    b"true",
    b"-1",
    b"1e400",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"0.5",
    b"\"aic\"",
    b"\"tasks\"",
    b"\"metadata\"",
    b"\"kernel_ids\"",
    b"[[[[[[[[",
    b"]]]]]]]]",
    b"\xff",
    b"\xc3",
    b"\n",
];

fn mutate(rng: &mut Lcg, text: &[u8]) -> Vec<u8> {
    let mut out = text.to_vec();
    for _ in 0..1 + rng.next(4) {
        let len = out.len() as u64;
        let at = rng.next(len + 1) as usize;
        match rng.next(4) {
            0 => {
                let end = (at + 1 + rng.next(16) as usize).min(out.len());
                out.drain(at..end);
            }
            1 => {
                let end = (at + 1 + rng.next(64) as usize).min(out.len());
                let span = out[at..end].to_vec();
                out.splice(at..at, span);
            }
            2 => {
                let token = TOKENS[rng.next(TOKENS.len() as u64) as usize];
                out.splice(at..at, token.iter().copied());
            }
            _ => out.truncate(at),
        }
    }
    out
}

#[test]
fn edited_files_never_panic_and_the_fast_pass_never_overrules_the_careful_reader() {
    let mut rng = Lcg::new(0x5eed_0002);
    let path = Path::new("x.json");
    let (mut accepted, mut rejected) = (0, 0);
    for case in 0..cases() * 5 {
        let (sw, dp) = random_files(&mut rng);

        let text = mutate(&mut rng, swimlane::render(&sw).as_bytes());
        let careful = swimlane::parse(&text, path);
        if let Some(fast) = load::fast_swimlane(&text) {
            let careful = careful.as_ref().unwrap_or_else(|e| {
                panic!("case {case}: fast pass accepted what the careful reader rejects: {e}")
            });
            assert!(
                careful.problems.is_empty(),
                "case {case}: {:?}",
                careful.problems
            );
            assert_eq!(fast, careful.value, "case {case}");
        }
        match careful {
            Ok(loaded) => {
                accepted += 1;
                let _ = pto_dfx_view::perf::join(&loaded.value, path);
            }
            Err(e) => {
                rejected += 1;
                assert!(e.to_string().starts_with("cannot read x.json: "), "{e}");
            }
        }

        let text = mutate(&mut rng, deps::render(&dp).as_bytes());
        let careful = deps::parse(&text, path);
        if let Some(fast) = load::fast_graph(&text) {
            let careful = careful.as_ref().unwrap_or_else(|e| {
                panic!("case {case}: fast pass accepted what the careful reader rejects: {e}")
            });
            assert!(
                careful.problems.is_empty(),
                "case {case}: fast pass accepted a damaged file: {:?}",
                careful.problems
            );
            assert_eq!(fast, TaskGraph::from_deps(&careful.value), "case {case}");
        }
        if let deps_scan::Scanned::Read(scan) =
            deps_scan::scan_bytes(&text, deps_scan::Detail::Full)
        {
            let careful = careful.as_ref().unwrap_or_else(|e| {
                panic!("case {case}: full scan accepted what the careful reader rejects: {e}")
            });
            assert!(careful.problems.is_empty(), "case {case}");
            assert_eq!(scan.to_file(), careful.value, "case {case}");
        }
        if let Ok(loaded) = careful {
            let _ = loaded.value.check_consistency();
        }
    }
    // The edits make both kinds of input.
    assert!(
        accepted > 0 && rejected > 0,
        "{accepted} accepted, {rejected} rejected"
    );
}
