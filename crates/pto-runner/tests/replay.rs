use std::path::PathBuf;

use pto_build_output::{write_npy, ArgDirection, DType, NpyArray};
use pto_runner::{replay, ErrorKind, ReplayOptions, RunConfig};

use crate::fixture::scale_add;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replay")
}

fn validate() -> ReplayOptions {
    ReplayOptions {
        validate: true,
        recompile: true,
        rebuild_from_pto: true,
    }
}

fn err_text(dir: &std::path::Path) -> (ErrorKind, String) {
    match replay(dir, &RunConfig::new(None).unwrap(), &validate()) {
        Ok(_) => panic!("replay of {} should fail", dir.display()),
        Err(e) => (e.kind(), e.to_string()),
    }
}

#[test]
fn replay_validates_and_writes_actual_outputs() {
    let dir = scale_add(&root(), "ok");
    for platform in ["a2a3sim", "a5sim", "cpu"] {
        let outcome = replay(&dir, &RunConfig::new(Some(platform)).unwrap(), &validate()).unwrap();
        assert!(outcome.passed(), "{platform}");
        assert_eq!(outcome.report.n_tasks, 1);
        assert_eq!(outcome.checks.len(), 1);
        assert!(dir.join("data/actual/c.npy").exists());
    }
}

#[test]
fn golden_mismatch_is_reported_not_an_error() {
    let dir = scale_add(&root(), "mismatch");
    let wrong = NpyArray::from_f64(DType::Float32, &[64], &[1.0; 64]).unwrap();
    write_npy(&dir.join("data/out/c.npy"), &wrong).unwrap();
    let outcome = replay(&dir, &RunConfig::new(None).unwrap(), &validate()).unwrap();
    assert!(!outcome.passed());
    let report = outcome.checks[0].comparison.report("c");
    assert!(
        report.starts_with("Output 'c' does not match golden.\nMismatched elements:"),
        "{report}"
    );
}

#[test]
fn missing_directory_and_markers() {
    let (kind, msg) = err_text(&root().join("does_not_exist"));
    assert_eq!(kind, ErrorKind::NotFound);
    assert!(msg.contains("does_not_exist"), "{msg}");
    let empty = root().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (kind, msg) = err_text(&empty);
    assert_eq!(kind, ErrorKind::NotFound);
    assert!(msg.contains("is not a build_output directory (missing kernel_config.py and orchestration/host_orch.py)"), "{msg}");
}

#[test]
fn malformed_kernel_config_names_the_line() {
    let dir = scale_add(&root(), "bad_config");
    let path = dir.join("kernel_config.py");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}\nimport os\n")).unwrap();
    let (_, msg) = err_text(&dir);
    assert!(
        msg.contains("kernel_config.py") && msg.contains("line"),
        "{msg}"
    );
}

#[test]
fn missing_input_and_golden_name_the_file() {
    let dir = scale_add(&root(), "missing_input");
    std::fs::remove_file(dir.join("data/in/b.npy")).unwrap();
    let (kind, msg) = err_text(&dir);
    assert_eq!(kind, ErrorKind::NotFound);
    assert!(
        msg.contains("data/in/b.npy") && msg.contains("missing input for parameter 'b'"),
        "{msg}"
    );

    let dir = scale_add(&root(), "missing_golden");
    std::fs::remove_file(dir.join("data/out/c.npy")).unwrap();
    let (_, msg) = err_text(&dir);
    assert!(
        msg.contains("data/out/c.npy") && msg.contains("no golden data for output 'c'"),
        "{msg}"
    );
}

#[test]
fn shape_and_dtype_mismatch_name_the_parameter() {
    let dir = scale_add(&root(), "bad_shape");
    write_npy(
        &dir.join("data/in/a.npy"),
        &NpyArray::from_f64(DType::Float32, &[32], &[0.0; 32]).unwrap(),
    )
    .unwrap();
    let (_, msg) = err_text(&dir);
    assert!(
        msg.contains("parameter 'a' expects fp32 [64]") && msg.contains("[32]"),
        "{msg}"
    );

    let dir = scale_add(&root(), "bad_dtype");
    write_npy(
        &dir.join("data/in/b.npy"),
        &NpyArray::from_f64(DType::Int32, &[64], &[0.0; 64]).unwrap(),
    )
    .unwrap();
    let (_, msg) = err_text(&dir);
    assert!(
        msg.contains("parameter 'b' expects fp32") && msg.contains("int32"),
        "{msg}"
    );
}

/// An `.npy` whose header declares another shape than `compiled_meta.json` was read in
/// full first (an 8 GiB sparse file: 52 s, 8.4 GB, and an allocation error that did not
/// name the file): the header is checked first, and the error names the file.
#[test]
fn a_tensor_file_of_the_wrong_shape_is_refused_from_its_header() {
    let dir = scale_add(&root(), "huge_input");
    let path = dir.join("data/in/a.npy");
    let mut header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648,), }".to_vec();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(&header);
    std::fs::write(&path, &bytes).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(bytes.len() as u64 + (8u64 << 30)).unwrap();
    drop(f);
    let start = std::time::Instant::now();
    let (_, msg) = err_text(&dir);
    std::fs::remove_file(&path).unwrap();
    assert!(
        msg.contains(&format!(
            "{}: parameter 'a' expects fp32 [64] but the file holds fp32 [2147483648]",
            path.display()
        )),
        "{msg}"
    );
    assert!(
        start.elapsed() < std::time::Duration::from_secs(30),
        "{msg}"
    );
}

/// An orchestration that forgets its submit, against an all-zero golden, reported
/// `c: PASS`: the check is flagged `untouched`, with a warning naming the output; an output
/// the run wrote is not.
#[test]
fn an_output_no_task_wrote_is_flagged_even_when_it_passes() {
    let orch = r#"#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs&) {}
"#;
    let dir = crate::fixture::with_orchestration(&root(), "no_submit", orch);
    write_npy(
        &dir.join("data/out/c.npy"),
        &NpyArray::from_f64(DType::Float32, &[64], &[0.0; 64]).unwrap(),
    )
    .unwrap();
    let outcome = replay(&dir, &RunConfig::new(None).unwrap(), &validate()).unwrap();
    assert!(outcome.passed());
    let check = &outcome.checks[0];
    assert!(check.untouched);
    assert_eq!(
        check.untouched_warning().unwrap(),
        "warning: output 'c' is all zeros after the run, as it started, and so is its golden: the comparison passes whether or not any task wrote it; check that the orchestration submits a task writing 'c'"
    );
    let dir = scale_add(&root(), "written");
    let outcome = replay(&dir, &RunConfig::new(None).unwrap(), &validate()).unwrap();
    assert!(!outcome.checks[0].untouched);
}

/// Missing inputs were reported only after the compile (78 s for a large kernel): they
/// are bound first. Here the kernel would not even compile.
#[test]
fn a_missing_input_is_reported_before_the_compile() {
    let dir = scale_add(&root(), "missing_before_compile");
    std::fs::remove_file(dir.join("data/in/a.npy")).unwrap();
    std::fs::write(
        dir.join("kernels/aiv/kernel_scale_add.cpp"),
        "this is not C++ and would fail to compile\n",
    )
    .unwrap();
    let (_, msg) = err_text(&dir);
    assert!(msg.contains("missing input for parameter 'a'"), "{msg}");
}

/// `__outputs__ = ['zz']` (not an output) was ignored silently by `pto replay --validate`.
#[test]
fn an_unknown_name_in_outputs_is_an_error() {
    let dir = scale_add(&root(), "unknown_output");
    std::fs::write(
        dir.join("golden.py"),
        "__outputs__ = ['zz']\nRTOL = 1e-05\n",
    )
    .unwrap();
    let (_, msg) = err_text(&dir);
    assert!(
        msg.contains("golden.py")
            && msg.contains("__outputs__ names [\"zz\"], which are not outputs of the program (its outputs: [\"c\"]); fix __outputs__"),
        "{msg}"
    );
    std::fs::write(dir.join("golden.py"), "__outputs__ = ['c']\nRTOL = 1e-05\n").unwrap();
    assert!(replay(&dir, &RunConfig::new(None).unwrap(), &validate())
        .unwrap()
        .passed());
}

#[test]
fn corrupt_sidecar_names_the_fix() {
    let dir = scale_add(&root(), "bad_meta");
    std::fs::write(
        dir.join("compiled_meta.json"),
        "{\"schema\": 1, \"params\": \"x\"}",
    )
    .unwrap();
    let (kind, msg) = err_text(&dir);
    assert_eq!(kind, ErrorKind::Invalid);
    assert!(
        msg.contains("'params' must be a list, got str")
            && msg.contains("recompile via ir.compile()"),
        "{msg}"
    );
}

#[test]
fn sidecar_without_kernel_config_is_pyptos_artifact_error() {
    let dir = scale_add(&root(), "no_kernel_config");
    std::fs::remove_file(dir.join("kernel_config.py")).unwrap();
    let err = match pto_runner::load(&dir) {
        Ok(_) => panic!("load must fail"),
        Err(e) => e,
    };
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let msg = err.to_string();
    assert!(
        msg.starts_with("Cannot execute PyPTO artifact")
            && msg.contains("kernel_config.py' is missing"),
        "{msg}"
    );
    std::fs::create_dir_all(dir.join("ptoas")).unwrap();
    std::fs::write(dir.join("ptoas/k.pto"), "module {}").unwrap();
    let msg = match pto_runner::load(&dir) {
        Ok(_) => panic!("load must fail"),
        Err(e) => e.to_string(),
    };
    assert!(
        msg.contains("was not generated")
            && msg.contains("Found 1 raw .pto kernel file(s)")
            && msg.contains("How to fix"),
        "{msg}"
    );
}

#[test]
fn a_malformed_graph_pass_spec_names_the_file() {
    let dir = root().join("bad_spec");
    std::fs::create_dir_all(&dir).unwrap();
    let check = |name: &str, text: &str, needle: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let msg = match pto_runner::two_pass::capture_main(&path) {
            Ok(()) => panic!("{name} must fail"),
            Err(e) => e.to_string(),
        };
        assert!(msg.contains(name) && msg.contains(needle), "{msg}");
    };
    check("truncated.json", "{\"mode\": ", "not valid JSON");
    check(
        "mode.json",
        r#"{"mode": "golden", "work_dir": "x", "dfx_dir": "y", "platform": "cpu", "args": []}"#,
        "Unknown spec mode: golden",
    );
    check(
        "keys.json",
        r#"{"mode": "argspec"}"#,
        "missing string key 'work_dir'",
    );
    let build = scale_add(&root(), "spec_build");
    let bad_kind = format!(
        r#"{{"mode": "argspec", "work_dir": "{}", "dfx_dir": "{}", "platform": "cpu", "args": [{{"kind": "pickle"}}, {{}}, {{}}, {{}}]}}"#,
        build.display(),
        dir.display()
    );
    check("kind.json", &bad_kind, "Unknown arg spec kind: pickle");
}

/// Declares the fixture's kernel an AIC kernel (kernel_config.py and the submit call).
fn declare_aic(dir: &std::path::Path) {
    let kc_path = dir.join("kernel_config.py");
    let kc = std::fs::read_to_string(&kc_path)
        .unwrap()
        .replace("\"core_type\": \"aiv\"", "\"core_type\": \"aic\"");
    std::fs::write(&kc_path, kc).unwrap();
    let orch_path = dir.join("orchestration/scale_add.cpp");
    let orch = std::fs::read_to_string(&orch_path)
        .unwrap()
        .replace("rt_submit_aiv_task", "rt_submit_aic_task");
    std::fs::write(&orch_path, orch).unwrap();
}

#[test]
fn a_kernel_guarded_for_the_other_core_type_runs_with_an_empty_body() {
    // ptoas wraps a vector body in `#if defined(__DAV_VEC__)`: declared as an AIC kernel it
    // compiles to an empty body and leaves the output untouched. Simpler runs it that way, so
    // the build is not refused (a warning names the cause); the golden check fails.
    let dir = scale_add(&root(), "wrong_guard");
    let src = dir.join("kernels/aiv/kernel_scale_add.cpp");
    let text = std::fs::read_to_string(&src)
        .unwrap()
        .replace(
            "    for (uint64_t i",
            "#if defined(__DAV_VEC__)\n    for (uint64_t i",
        )
        .replace("b->data<float>()[i];\n}", "b->data<float>()[i];\n#endif\n}");
    std::fs::write(&src, text).unwrap();
    declare_aic(&dir);
    let outcome = replay(&dir, &RunConfig::new(None).unwrap(), &validate()).unwrap();
    assert!(!outcome.passed(), "the empty body leaves c untouched");
}

#[test]
fn a_kernel_with_code_for_each_core_under_alternative_guards_runs() {
    // Two kernel_entry definitions under `#if defined(__DAV_VEC__)` / `#else` (as Simpler's
    // MIX kernels write them), declared AIC: the `#else` one is the AIC kernel.
    let dir = scale_add(&root(), "alternative_guards");
    let src = dir.join("kernels/aiv/kernel_scale_add.cpp");
    let text = std::fs::read_to_string(&src).unwrap();
    let (head, entry) = text.split_once("// --- Kernel entry point ---").unwrap();
    let text = format!(
        "{head}#if defined(__DAV_VEC__)\nextern \"C\" void kernel_entry(int64_t* args) {{ (void)args; }}\n#else{entry}#endif\n"
    );
    std::fs::write(&src, text).unwrap();
    declare_aic(&dir);
    let o = replay(&dir, &RunConfig::new(None).unwrap(), &validate()).unwrap();
    assert!(o.passed());
}

#[test]
fn a_task_passing_a_prefix_of_its_kernels_signature_runs() {
    // Simpler's rule: a kernel's kernel_config.py signature may declare a whole MIX task's
    // arguments, and a task running that kernel alone passes a prefix of them (signatures are
    // informational there). The kernel reads only the three tensors the task passes.
    let dir = scale_add(&root(), "signature_prefix");
    let kc_path = dir.join("kernel_config.py");
    let mut kc = pto_build_output::KernelConfig::load(&kc_path).unwrap();
    kc.kernels[0].signature = Some(vec![
        ArgDirection::In,
        ArgDirection::In,
        ArgDirection::Out,
        ArgDirection::In,
        ArgDirection::InOut,
        ArgDirection::Out,
    ]);
    kc.write(&kc_path).unwrap();
    let outcome = replay(&dir, &RunConfig::new(None).unwrap(), &validate()).unwrap();
    assert!(outcome.passed());
}

#[test]
fn a_negative_func_id_is_refused() {
    let neg = r#"#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
    const ChipTensor& a = orch_args.tensor(0).ref();
    PTO2_SCOPE() { CoreTaskArgs p; p.add_input(a); rt_submit_aiv_task(-7, p); }
}
"#;
    let dir = crate::fixture::with_orchestration(&root(), "negative_func_id", neg);
    let (_, msg) = err_text(&dir);
    assert!(msg.contains("kernel id -7 is negative"), "{msg}");
}

/// Rewrites the fixture's data as `.pt` files (PyPTO's format) and removes the `.npy` ones.
fn to_pt(dir: &std::path::Path) {
    for sub in ["data/in", "data/out"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap().flatten() {
            let npy = e.path();
            let array = pto_build_output::read_npy(&npy).unwrap();
            pto_build_output::write_pt(&npy.with_extension("pt"), &array).unwrap();
            std::fs::remove_file(&npy).unwrap();
        }
    }
}

#[test]
fn replay_binds_and_validates_pt_data_and_writes_pt_actuals() {
    let dir = scale_add(&root(), "pt");
    to_pt(&dir);
    let outcome = replay(&dir, &RunConfig::new(None).unwrap(), &validate()).unwrap();
    assert!(outcome.passed());
    assert_eq!(
        outcome.checks[0].actual_path.as_deref(),
        Some(dir.join("data/actual/c.pt").as_path())
    );
    let actual = pto_build_output::read_pt(&dir.join("data/actual/c.pt")).unwrap();
    let golden = pto_build_output::read_pt(&dir.join("data/out/c.pt")).unwrap();
    assert_eq!(actual, golden);
    assert!(!dir.join("data/actual/c.npy").exists());

    // A wrong .pt golden is a mismatch, as with .npy.
    let wrong = NpyArray::from_f64(DType::Float32, &[64], &[1.0; 64]).unwrap();
    pto_build_output::write_pt(&dir.join("data/out/c.pt"), &wrong).unwrap();
    let outcome = replay(&dir, &RunConfig::new(None).unwrap(), &validate()).unwrap();
    assert!(!outcome.passed());
}

#[test]
fn a_name_with_both_formats_is_an_error_naming_the_two_files() {
    let dir = scale_add(&root(), "both_in");
    let b = pto_build_output::read_npy(&dir.join("data/in/b.npy")).unwrap();
    pto_build_output::write_pt(&dir.join("data/in/b.pt"), &b).unwrap();
    let (_, msg) = err_text(&dir);
    assert!(
        msg.contains("data/in/b.pt and ")
            && msg.contains("data/in/b.npy exist")
            && msg.contains("delete one of them"),
        "{msg}"
    );

    let dir = scale_add(&root(), "both_out");
    let c = pto_build_output::read_npy(&dir.join("data/out/c.npy")).unwrap();
    pto_build_output::write_pt(&dir.join("data/out/c.pt"), &c).unwrap();
    let (_, msg) = err_text(&dir);
    assert!(
        msg.contains("data/out/c.pt and ") && msg.contains("data/out/c.npy exist"),
        "{msg}"
    );
}

#[test]
fn a_hostile_pt_input_is_refused_naming_the_file() {
    let dir = scale_add(&root(), "hostile_pt");
    std::fs::remove_file(dir.join("data/in/a.npy")).unwrap();
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../pto-build-output/tests/fixtures/pt/calls_os_system.pt"),
        dir.join("data/in/a.pt"),
    )
    .unwrap();
    let (kind, msg) = err_text(&dir);
    assert_eq!(kind, ErrorKind::Invalid);
    assert!(
        msg.contains("data/in/a.pt: the pickle refers to the global `posix.system`"),
        "{msg}"
    );
}

#[test]
fn a_run_after_its_sources_changed_says_it_used_the_loaded_program() {
    let dir = scale_add(&root(), "edited_after_load");
    let build = pto_runner::build::load_for(&dir, None).unwrap();
    let meta = pto_build_output::CompiledMeta::load(&dir).unwrap();
    let run = |lines: &mut Vec<String>| {
        let mut params = pto_runner::inputs::bind_inputs(&dir, &meta).unwrap();
        let config = RunConfig::new(None).unwrap();
        build
            .execute_with(&mut params, &config, &mut |l| lines.push(l.to_string()))
            .unwrap();
    };
    let mut before = Vec::new();
    run(&mut before);
    assert!(
        before.iter().all(|l| !l.contains("changed on disk")),
        "{before:?}"
    );
    let kernel = dir.join("kernels/aiv/kernel_scale_add.cpp");
    let text = std::fs::read_to_string(&kernel).unwrap();
    std::fs::write(&kernel, text.replace("+ s *", "- s *")).unwrap();
    let mut after = Vec::new();
    run(&mut after);
    let note = after
        .iter()
        .find(|l| l.contains("changed on disk"))
        .unwrap_or_else(|| panic!("no note in {after:?}"));
    assert!(
        note.contains("kernel_scale_add.cpp") && note.contains(build.identity.short()),
        "{note}"
    );
    let mut again = Vec::new();
    run(&mut again);
    assert!(
        again.iter().all(|l| !l.contains("changed on disk")),
        "said once: {again:?}"
    );
}

#[test]
fn directions_follow_kernel_config_and_a_different_parameter_count_is_refused() {
    // PyPTO binds by kernel_config.py's ORCHESTRATION signature: an output the sidecar calls
    // In is still copied back and validated.
    let dir = scale_add(&root(), "sidecar_direction");
    let meta = dir.join("compiled_meta.json");
    let text = std::fs::read_to_string(&meta).unwrap();
    let edited = text.replacen("\"Out\"", "\"In\"", 1);
    assert_ne!(text, edited, "the fixture's sidecar names an Out parameter");
    std::fs::write(&meta, &edited).unwrap();
    let outcome = replay(&dir, &RunConfig::new(None).unwrap(), &validate()).unwrap();
    assert!(outcome.passed());
    assert_eq!(
        outcome.checks.len(),
        1,
        "c is validated as the output it is"
    );
    // A signature with another number of tensors describes another program.
    let kc = dir.join("kernel_config.py");
    let text = std::fs::read_to_string(&kc).unwrap();
    let edited = text.replacen("_D.IN, ", "", 1);
    assert_ne!(text, edited);
    std::fs::write(&kc, edited).unwrap();
    let (_, msg) = err_text(&dir);
    assert!(
        msg.contains("tensor parameters") && msg.contains("recompile"),
        "{msg}"
    );
}
