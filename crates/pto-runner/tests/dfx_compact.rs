//! `--dfx-format compact`: the JSON that `pto dfx-export` produces from a run's compact files
//! is byte-identical to the JSON mode's, for the same in-memory report; and two real runs,
//! one per format, publish only their own form.

use std::path::{Path, PathBuf};

use pto_runner::config::DfxFormat;
use pto_runner::{replay, DfxOptions, ReplayOptions, RunConfig};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dfx_compact")
}

/// A copy of the bundled paged-attention build (AIC and AIV kernels, runtime-allocated
/// intermediates, TensorMap edges with overlap and producer views).
fn paged_attention(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/paged_attention");
    let dir = root().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&src, &dir);
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            if e.file_name() != "dfx_outputs" {
                copy_dir(&e.path(), &target);
            }
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

fn config(format: DfxFormat) -> RunConfig {
    let mut config = RunConfig::new(None).unwrap();
    config.in_process = true;
    config.dfx = DfxOptions {
        chip_swimlane: 4,
        dep_gen: true,
        ..Default::default()
    };
    config.dfx_format = format;
    config
}

const OPTIONS: ReplayOptions = ReplayOptions {
    validate: true,
    recompile: true,
    rebuild_from_pto: true,
};

#[test]
fn the_export_of_a_compact_run_is_byte_identical_to_the_json_mode() {
    let dir = paged_attention("same_report");
    let config = config(DfxFormat::Json);
    let outcome = replay(&dir, &config, &OPTIONS).unwrap();
    let report = &outcome.report;
    assert!(report.deps.is_some());
    let chip = config.chip_config(Some(&dir)).unwrap();
    let names = std::collections::BTreeMap::new();
    let write_as = |format, stamp, out: &Path| {
        pto_runner::dfx_output::write_artifacts(
            out,
            &config.dfx,
            format,
            stamp,
            report,
            &chip,
            &names,
            None,
            "x",
        )
        .unwrap()
    };
    let write =
        |format, out: &Path| write_as(format, pto_runner::dfx_output::RunStamp::default(), out);
    let (json, compact) = (dir.join("same_json"), dir.join("same_compact"));
    for d in [&json, &compact] {
        let _ = std::fs::remove_dir_all(d);
    }
    let json_summary = write(DfxFormat::Json, &json);
    let compact_summary = write(DfxFormat::Compact, &compact);
    assert!(compact_summary
        .hints
        .iter()
        .any(|h| h.starts_with("pto dfx-export ")));
    assert!(!json_summary
        .hints
        .iter()
        .any(|h| h.starts_with("pto dfx-export ")));
    assert!(compact.join("chip_swimlane_records.bin").is_file());
    assert!(compact.join("deps.bin").is_file());
    assert!(!compact.join("deps.json").exists());

    let exported = pto_dfx_view::dfx_export::export(&compact, None).unwrap();
    assert_eq!(exported.written.len(), 2);
    for name in ["chip_swimlane_records.json", "deps.json"] {
        let a = std::fs::read(json.join(name)).unwrap();
        let b = std::fs::read(compact.join(name)).unwrap();
        assert!(a.len() > 1000, "{name}: {} bytes", a.len());
        assert!(
            a == b,
            "{name} differs between the JSON mode and the export"
        );
    }
    // A 2026-09 run: the compact files carry its generation and epoch, so the export
    // still equals what the JSON mode writes.
    let stamp = pto_runner::dfx_output::RunStamp {
        schema: pto_dfx::DfxSchema::V2026_09,
        run_epoch: 7,
    };
    let (json09, compact09) = (dir.join("same_json_09"), dir.join("same_compact_09"));
    for d in [&json09, &compact09] {
        let _ = std::fs::remove_dir_all(d);
    }
    write_as(DfxFormat::Json, stamp, &json09);
    write_as(DfxFormat::Compact, stamp, &compact09);
    pto_dfx_view::dfx_export::export(&compact09, None).unwrap();
    for name in ["chip_swimlane_records.json", "deps.json"] {
        let a = std::fs::read(json09.join(name)).unwrap();
        let b = std::fs::read(compact09.join(name)).unwrap();
        assert!(
            a == b,
            "{name} (2026-09) differs between the JSON mode and the export"
        );
        assert!(
            String::from_utf8_lossy(&b).contains("\"runtime\""),
            "{name}: not 2026-09"
        );
    }
    // A predicted-time run: the compact header says so, and the export writes the JSON
    // mode's `metadata.timing`.
    let mut predicted_chip = chip.clone();
    predicted_chip.dfx.predicted_timing = true;
    let (json_p, compact_p) = (dir.join("same_json_p"), dir.join("same_compact_p"));
    for (format, out) in [(DfxFormat::Json, &json_p), (DfxFormat::Compact, &compact_p)] {
        let _ = std::fs::remove_dir_all(out);
        pto_runner::dfx_output::write_artifacts(
            out,
            &config.dfx,
            format,
            pto_runner::dfx_output::RunStamp::default(),
            report,
            &predicted_chip,
            &names,
            None,
            "x",
        )
        .unwrap();
    }
    pto_dfx_view::dfx_export::export(&compact_p, None).unwrap();
    let name = "chip_swimlane_records.json";
    let (a, b) = (
        std::fs::read(json_p.join(name)).unwrap(),
        std::fs::read(compact_p.join(name)).unwrap(),
    );
    assert!(
        a == b,
        "the predicted swimlane differs between the JSON mode and the export"
    );
    assert!(String::from_utf8_lossy(&b).contains("\"timing\": \"predicted\""));
    // The deps viewer shows the same graph from either form (all but the source line).
    let view = |input: &str, output: &str| {
        use pto_dfx_view::deps_viewer::{self, DepsViewerOptions, EdgeMode, Format, LayoutChoice};
        let out = compact.join(output);
        deps_viewer::view(&DepsViewerOptions {
            input: &compact.join(input),
            output: Some(&out),
            format: Format::Text,
            layout: LayoutChoice::Builtin,
            func_names: None,
            edge_mode: EdgeMode::Full,
        })
        .unwrap();
        let text = std::fs::read_to_string(out).unwrap();
        text.lines()
            .filter(|l| !l.contains("source_deps_json"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        view("deps.bin", "from_bin.txt"),
        view("deps.json", "from_json.txt")
    );
    // The compact files are a fraction of the JSON.
    let size = |p: PathBuf| std::fs::metadata(p).unwrap().len();
    assert!(
        size(compact.join("chip_swimlane_records.bin")) * 2
            < size(json.join("chip_swimlane_records.json"))
    );
    assert!(size(compact.join("deps.bin")) < size(json.join("deps.json")));
}

#[test]
fn a_compact_run_publishes_only_the_compact_form_and_the_viewers_read_it() {
    let dir = paged_attention("two_runs");
    let out = dir.join("dfx_outputs");
    replay(&dir, &config(DfxFormat::Json), &OPTIONS).unwrap();
    assert!(out.join("deps.json").is_file());
    replay(&dir, &config(DfxFormat::Compact), &OPTIONS).unwrap();
    // The JSON of the first run is gone: the set holds one form.
    for (bin, json) in [
        ("chip_swimlane_records.bin", "chip_swimlane_records.json"),
        ("deps.bin", "deps.json"),
    ] {
        assert!(out.join(bin).is_file(), "{bin}");
        assert!(!out.join(json).exists(), "{json}");
    }
    let report = pto_dfx_view::critical_path::analyze(&out).unwrap();
    assert!(
        report.markdown.contains("observed critical path** (from"),
        "{}",
        report.markdown
    );
    let converted = pto_dfx_view::swimlane_converter::convert(
        &pto_dfx_view::swimlane_converter::ConvertOptions {
            input: &out.join("chip_swimlane_records.bin"),
            output: None,
            deps: None,
            func_names: None,
            kernel_config: None,
        },
    )
    .unwrap();
    assert!(converted.output.is_file());
    assert_eq!(converted.deps, Some(out.join("deps.bin")));
    assert!(converted.n_flows > 0);
}
