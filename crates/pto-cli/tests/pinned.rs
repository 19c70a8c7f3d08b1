//! What a refactoring must not change, pinned (issue 25): the CLI's help texts, and the
//! artifacts of the bundled examples run with every deterministic diagnostic on.
//!
//! The help texts are files (`tests/pinned/help/<subcommand>.txt`), so a change shows as a
//! readable diff. The artifacts are pinned as length and FNV-1a 64 hash per file, for the
//! files whose bytes depend only on the program: the outputs (`data/actual/`) and the name
//! map. The others depend on the run: `deps.json` names tensors by buffer address (as
//! Simpler's does, and buffers are reused differently from run to run), the args dump and
//! the scope statistics list records in completion order, swimlane, PMU and provenance hold
//! times. Their bytes are pinned where they are made, for fixed records: `pto-dfx`'s golden
//! format files and `pto-dfx-view`'s pinned viewer outputs.
//!
//! A deliberate change: run with `PTO_UPDATE_PINNED=1` to rewrite the help files, and take
//! the new lengths and hashes of the artifacts from the failure message.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::text;

fn pto(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pto"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .output()
        .unwrap()
}

fn updating() -> bool {
    std::env::var_os("PTO_UPDATE_PINNED").is_some_and(|v| v == "1")
}

/// Every subcommand with a help text, and the top level (`""`).
const HELP: &[&str] = &[
    "",
    "replay",
    "demo",
    "bench",
    "invalidate-cache",
    "swimlane-converter",
    "deps-viewer",
    "scope-stats-plot",
    "dump-viewer",
    "critical-path",
    "dfx-export",
];

#[test]
fn help_texts_are_pinned() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pinned/help");
    let mut changed = Vec::new();
    for sub in HELP {
        let args: Vec<&str> = if sub.is_empty() {
            vec!["--help"]
        } else {
            vec![sub, "--help"]
        };
        let o = pto(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let name = if sub.is_empty() { "pto" } else { sub };
        let file = dir.join(format!("{name}.txt"));
        let actual = String::from_utf8(o.stdout).unwrap();
        if updating() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&file, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&file).unwrap_or_default();
        if actual != expected {
            changed.push(format!("--- {}\n{actual}", file.display()));
        }
    }
    assert!(
        changed.is_empty(),
        "help texts changed (PTO_UPDATE_PINNED=1 rewrites the files if intended):\n{}",
        changed.join("\n")
    );
}

/// The deterministic artifacts of a run in `dir`, as `(relative path, length, hash)`.
fn artifacts(dir: &Path) -> Vec<(String, usize, u64)> {
    let dfx = dir.join("dfx_outputs");
    let mut files: Vec<PathBuf> = Vec::new();
    for sub in [dir.join("data/actual"), dfx.clone()] {
        let mut names: Vec<PathBuf> = std::fs::read_dir(&sub)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let n = p.file_name().unwrap().to_string_lossy();
                p.is_file() && (sub != dfx || n.starts_with("name_map_"))
            })
            .collect();
        names.sort();
        files.extend(names);
    }
    files
        .iter()
        .map(|f| {
            let bytes = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let rel = f.strip_prefix(dir).unwrap().display().to_string();
            (rel, bytes.len(), pto_base::fnv1a64(&bytes))
        })
        .collect()
}

fn run_and_pin(example: &str, expected: &[(&str, usize, u64)]) {
    let dir = common::example("pinned", example, example);
    let o = pto(&[
        "replay",
        dir.to_str().unwrap(),
        "--validate",
        "--dep-gen",
        "--dump-args",
        "2",
        "--scope-stats",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let actual = artifacts(&dir);
    let expected: Vec<(String, usize, u64)> = expected
        .iter()
        .map(|(n, l, h)| (n.to_string(), *l, *h))
        .collect();
    assert!(
        actual == expected,
        "{example}: artifacts changed; the run is kept in {} to diff. New pins:\n{}",
        dir.display(),
        actual
            .iter()
            .map(|(n, l, h)| format!("        (\"{n}\", {l}, {h:#018x}),"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn vector_add_artifacts_are_pinned() {
    run_and_pin(
        "vector_add",
        &[
            ("data/actual/c.npy", 65664, 0xca7bc0ec8c0ff3fe),
            (
                "dfx_outputs/name_map_vector_add.json",
                107,
                0xeda9993a790a7f8d,
            ),
        ],
    );
}

#[test]
fn paged_attention_artifacts_are_pinned() {
    run_and_pin(
        "paged_attention",
        &[
            ("data/actual/out.npy", 32896, 0x61200261c65d3e93),
            (
                "dfx_outputs/name_map_paged_attention.json",
                187,
                0xcc8d675da5a50126,
            ),
        ],
    );
}
