//! The viewers' output bytes, pinned: the converter's trace, the deps viewer's text and HTML,
//! the scope-stats page and the critical-path report with its trace copies, for fixed inputs (the golden files and seeded synthetic runs),
//! each as its length and FNV-1a 64 hash, so a refactoring that changes one byte fails here.
//!
//! A deliberate change of the output updates the pins below: the failure message prints
//! the new length and hash, and keeps the output in Cargo's test temp directory
//! (`CARGO_TARGET_TMPDIR`) to diff against the old one. The temporary directory's path,
//! where an output names it, is replaced by `<dir>` before hashing; Graphviz layouts are
//! left out (the bytes would depend on the installed Graphviz).

use std::path::Path;

use pto_dfx_view::deps_viewer::{self, DepsViewerOptions, EdgeMode, Format, LayoutChoice};
use pto_dfx_view::swimlane_converter::{self, ConvertExtras, ConvertOptions};
use pto_dfx_view::{critical_path, scope_stats_plot};

use crate::common::data;
use crate::synth;

/// `(name, length, hash)` of `output` with `dir` masked; the bytes are kept for a diff.
fn pin(name: &str, output: &Path, dir: &Path) -> (String, usize, u64) {
    let text = std::fs::read(output).unwrap();
    let text = String::from_utf8(text).unwrap();
    let masked = text.replace(&dir.display().to_string(), "<dir>");
    let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pinned-{name}"));
    std::fs::write(&keep, &masked).unwrap();
    (
        name.to_string(),
        masked.len(),
        pto_base::fnv1a64(masked.as_bytes()),
    )
}

fn check(actual: &[(String, usize, u64)], expected: &[(&str, usize, u64)]) {
    let actual: Vec<(&str, usize, u64)> = actual
        .iter()
        .map(|(n, l, h)| (n.as_str(), *l, *h))
        .collect();
    assert!(
        actual == expected,
        "output bytes changed (outputs kept as {}/pinned-<name>):\n{}",
        env!("CARGO_TARGET_TMPDIR"),
        actual
            .iter()
            .map(|(n, l, h)| format!("(\"{n}\", {l}, {h:#018x}),"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

const EVIL: &str = "</script><b>x</b>";

fn write_names(dir: &Path) {
    let evil = EVIL.replace('/', "\\/");
    std::fs::write(
        dir.join("name_map_Evil_case.json"),
        format!(
            "{{\"level\": 2, \"orchestrator_name\": \"{evil}\", \"callable_id_to_name\": {{\"0\": \"{evil}\", \"1\": \"b&amp;\"}}}}"
        ),
    )
    .unwrap();
}

fn convert(name: &str, dir: &Path, overhead: bool) -> (String, usize, u64) {
    let input = dir.join("chip_swimlane_records.json");
    let output = dir.join(format!("{name}.json"));
    swimlane_converter::convert_with(
        &ConvertOptions {
            input: &input,
            output: Some(&output),
            deps: None,
            func_names: None,
            kernel_config: None,
        },
        ConvertExtras { overhead },
    )
    .unwrap();
    pin(name, &output, dir)
}

/// A predicted-time run of two tasks and its pipe file (one subtask matches no row).
const PREDICTED: &str = r#"{
  "chip_swimlane_level": 1,
  "metadata": {"clock_freq_hz": 50000000, "num_cores": 2, "core_types": ["aic", "aiv"], "timing": "predicted"},
  "aicore_tasks": [[0, 4294967296, 1, 100, 150, 0], [1, 4294967297, 1, 150, 170, 0]],
  "aicpu_tasks": []
}"#;

const PIPES: &str = r#"{"timing": "predicted", "core_clock_hz": 1850000000, "subtasks": [
{"task": 4294967296, "core": 0, "start_cycle": 0, "cycles": 1000, "spans": [["MTE2", 0, 400], ["CUBE", 400, 900], ["FIXP", 900, 1000]]},
{"task": 4294967297, "core": 1, "start_cycle": 1000, "cycles": 400, "spans": [["VEC", 100, 300], ["WARP", 0, 1]]},
{"task": 99, "core": 1, "start_cycle": 0, "cycles": 10, "spans": [["VEC", 0, 10]]}
]}"#;

#[test]
fn swimlane_converter_output_is_pinned() {
    let mut pins = Vec::new();
    // The reference's example with its deps and name map.
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "chip_swimlane_records.json",
        "deps.json",
        "name_map_PagedAttn.json",
    ] {
        std::fs::copy(data(name), dir.path().join(name)).unwrap();
    }
    pins.push(convert("golden", dir.path(), false));
    pins.push(convert("golden-overhead", dir.path(), true));
    // Seeded synthetic runs at every level (level 4 has every flow kind and sub-lanes).
    for level in 1..=4u8 {
        let dir = tempfile::tempdir().unwrap();
        let (file, deps) = synth::generate(400, level, 7 + u64::from(level));
        pto_dfx::swimlane::write(&dir.path().join("chip_swimlane_records.json"), &file).unwrap();
        pto_dfx::deps::write(&dir.path().join("deps.json"), &deps).unwrap();
        write_names(dir.path());
        pins.push(convert(&format!("synth-l{level}"), dir.path(), level == 4));
    }
    // Predicted time with pipe tracks.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("chip_swimlane_records.json"), PREDICTED).unwrap();
    std::fs::write(dir.path().join(swimlane_converter::PIPES_FILE_NAME), PIPES).unwrap();
    pins.push(convert("predicted-pipes", dir.path(), false));
    // A host-orchestrated run (host submits and uploads before the device's records).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("chip_swimlane_records.json"),
        crate::common::golden("chip_swimlane_records_host.json"),
    )
    .unwrap();
    pins.push(convert("host", dir.path(), false));
    check(
        &pins,
        &[
            ("golden", 6603, 0x8e5171e26ab7129c),
            ("golden-overhead", 8531, 0xb5a2b397e55ce0de),
            ("synth-l1", 257559, 0x7f90b4407c62958d),
            ("synth-l2", 472911, 0x74619bf2d72aaf94),
            ("synth-l3", 1022047, 0x44e06242c72b7130),
            ("synth-l4", 1194127, 0x523c38326c502ef7),
            ("predicted-pipes", 2809, 0xac3a5d5a498458aa),
            ("host", 2591, 0x2051e2980a51628d),
        ],
    );
}

fn deps_view(name: &str, dir: &Path, format: Format, edge_mode: EdgeMode) -> (String, usize, u64) {
    let output = dir.join(name);
    deps_viewer::view(&DepsViewerOptions {
        input: &dir.join("deps.json"),
        output: Some(&output),
        format,
        layout: LayoutChoice::Builtin,
        func_names: None,
        edge_mode,
    })
    .unwrap();
    pin(name, &output, dir)
}

#[test]
fn deps_viewer_output_is_pinned() {
    let mut pins = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(data("deps.json"), dir.path().join("deps.json")).unwrap();
    std::fs::copy(
        data("name_map_PagedAttn.json"),
        dir.path().join("name_map_PagedAttn.json"),
    )
    .unwrap();
    pins.push(deps_view(
        "golden.html",
        dir.path(),
        Format::Html,
        EdgeMode::Full,
    ));
    pins.push(deps_view(
        "golden.txt",
        dir.path(),
        Format::Text,
        EdgeMode::Full,
    ));
    // A synthetic graph with a measured swimlane beside it, in every edge mode.
    let dir = tempfile::tempdir().unwrap();
    let (file, deps) = synth::generate(150, 4, 3);
    pto_dfx::swimlane::write(&dir.path().join("chip_swimlane_records.json"), &file).unwrap();
    pto_dfx::deps::write(&dir.path().join("deps.json"), &deps).unwrap();
    write_names(dir.path());
    for (tag, mode) in [
        ("full", EdgeMode::Full),
        ("reduced", EdgeMode::Reduced),
        ("omitted", EdgeMode::Omitted),
        ("reduced-dataflow", EdgeMode::ReducedDataflow),
        ("omitted-dataflow", EdgeMode::OmittedDataflow),
    ] {
        pins.push(deps_view(
            &format!("synth-{tag}.html"),
            dir.path(),
            Format::Html,
            mode,
        ));
        pins.push(deps_view(
            &format!("synth-{tag}.txt"),
            dir.path(),
            Format::Text,
            mode,
        ));
    }
    check(
        &pins,
        &[
            ("golden.html", 10747, 0xe20c036e31c17797),
            ("golden.txt", 530, 0x1c5c36deeef25a58),
            ("synth-full.html", 132386, 0xdd8b7712bea95e8e),
            ("synth-full.txt", 45435, 0x36703c9f1e96224f),
            ("synth-reduced.html", 130514, 0x6640aef8bcc3547c),
            ("synth-reduced.txt", 41502, 0xc7fbe879be2ff80f),
            ("synth-omitted.html", 126701, 0x6b211f5941e494d8),
            ("synth-omitted.txt", 35637, 0x74cd1c6d04b79d88),
            ("synth-reduced-dataflow.html", 130514, 0x6640aef8bcc3547c),
            ("synth-reduced-dataflow.txt", 41502, 0xc7fbe879be2ff80f),
            ("synth-omitted-dataflow.html", 126701, 0x6b211f5941e494d8),
            ("synth-omitted-dataflow.txt", 35637, 0x74cd1c6d04b79d88),
        ],
    );
}

#[test]
fn scope_stats_page_is_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("scope_stats.jsonl");
    std::fs::copy(data("scope_stats.jsonl"), &input).unwrap();
    let output = dir.path().join("scope_stats.html");
    scope_stats_plot::plot(&input, Some(&output)).unwrap();
    check(
        &[pin("scope_stats.html", &output, dir.path())],
        &[("scope_stats.html", 20592, 0x6ec52b585228e65b)],
    );
}

/// The critical-path report and its two trace copies for `dir`, pinned under `tag`.
fn critical_path(tag: &str, dir: &Path, pins: &mut Vec<(String, usize, u64)>) {
    let report = critical_path::analyze(dir).unwrap();
    pins.push(pin(&format!("{tag}.md"), &report.output, dir));
    for f in &report.cpm_files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        pins.push(pin(&format!("{tag}-{name}"), f, dir));
    }
}

#[test]
fn critical_path_output_is_pinned() {
    let mut pins = Vec::new();
    // Untimed: deps.json alone.
    // The report names the directory: a fixed name inside each temporary one.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dfx_outputs");
    std::fs::create_dir(&dir).unwrap();
    let (mut file, deps) = synth::generate(300, 4, 5);
    pto_dfx::deps::write(&dir.join("deps.json"), &deps).unwrap();
    write_names(&dir);
    critical_path("untimed", &dir, &mut pins);
    // Timed, with a merged trace beside it for the two Perfetto copies.
    pto_dfx::swimlane::write(&dir.join("chip_swimlane_records.json"), &file).unwrap();
    convert("merged_swimlane_pinned", &dir, false);
    critical_path("timed", &dir, &mut pins);
    // Predicted time with the model's clock.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dfx_outputs");
    std::fs::create_dir(&dir).unwrap();
    file.metadata.timing = Some(String::from("predicted"));
    pto_dfx::swimlane::write(&dir.join("chip_swimlane_records.json"), &file).unwrap();
    pto_dfx::deps::write(&dir.join("deps.json"), &deps).unwrap();
    std::fs::write(
        dir.join("predicted_timing.json"),
        r#"{"core_clock_hz": 1850000000}"#,
    )
    .unwrap();
    critical_path("predicted", &dir, &mut pins);
    check(
        &pins,
        &[
            ("untimed.md", 6844, 0x02a148375c44d98c),
            ("timed.md", 15837, 0x51608ab8fb3bf29b),
            ("timed-CPM_static.json", 1413488, 0x6242d1ae0934e089),
            ("timed-CPM_observed.json", 1411351, 0x375c3f9666704dfe),
            ("predicted.md", 14957, 0x1a43defc96598560),
        ],
    );
}
