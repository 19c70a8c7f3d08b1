//! Both Simpler orchestration generations through `pto replay`: a 2026-09 build directory
//! replays and validates, orchestrations of our own over the API surface of Simpler's
//! 2026-09 examples compile and run, a 2026-08 orchestration runs a kernel written as
//! PyPTO's 2026-09 codegen writes kernels (same argument bytes), and a build directory that
//! mixes the generations is an error naming both headers.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::text;

fn example(name: &str, as_name: &str) -> PathBuf {
    common::example("generations", name, as_name)
}

fn replay(dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pto"))
        .args(["replay", dir.to_str().unwrap(), "--validate"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn source(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/generations")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn bundled(rel: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn assert_passes(dir: &Path) {
    let o = replay(dir);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("c: PASS (16384/16384 elements matched)"), "{t}");
}

/// Replaces the orchestration of a copy of vector_add_2026_09 (and, when `entry` is given,
/// the entry and config symbols in kernel_config.py).
fn with_orchestration(as_name: &str, orch: &str, entry: Option<(&str, &str)>) -> PathBuf {
    let dir = example("vector_add_2026_09", as_name);
    std::fs::write(dir.join("orchestration/vector_add_2026_09.cpp"), orch).unwrap();
    if let Some((function, config)) = entry {
        let kc = dir.join("kernel_config.py");
        let text = std::fs::read_to_string(&kc).unwrap().replace(
            "\"function_name\": \"aicpu_orchestration_entry\",",
            &format!("\"function_name\": \"{function}\",\n\t\"config_name\": \"{config}\","),
        );
        std::fs::write(&kc, text).unwrap();
    }
    dir
}

#[test]
fn a_2026_09_build_directory_replays_and_validates() {
    assert_passes(&example("vector_add_2026_09", "twin"));
}

#[test]
fn our_orchestration_over_the_prefetch_example_surface_runs() {
    let dir = with_orchestration(
        "copy_style",
        &source("copy_style_orch.cpp"),
        Some(("add_orchestration", "add_orchestration_config")),
    );
    assert_passes(&dir);
}

#[test]
fn our_orchestration_over_the_decode_example_surface_runs() {
    let dir = with_orchestration("decode_style", &source("decode_style_orch.cpp"), None);
    assert_passes(&dir);
}

#[test]
fn a_2026_08_orchestration_runs_a_kernel_in_pypto_2026_09_shape() {
    // Kernels reading `__gm__ Tensor*` name no generation: the 128 bytes are the same.
    let dir = example("vector_add", "old_orch_new_kernel");
    std::fs::write(
        dir.join("kernels/aiv/kernel_add.cpp"),
        bundled("vector_add_2026_09/kernels/aiv/kernel_add.cpp"),
    )
    .unwrap();
    assert_passes(&dir);
}

#[test]
fn mixed_generations_are_an_error_naming_both_headers() {
    // A 2026-09 orchestration with a 2026-08 kernel (ChipTensor*, which is 72 bytes in 2026-09).
    let dir = example("vector_add_2026_09", "mixed_kernel");
    std::fs::write(
        dir.join("kernels/aiv/kernel_add.cpp"),
        bundled("vector_add/kernels/aiv/kernel_add.cpp"),
    )
    .unwrap();
    let o = replay(&dir);
    let t = text(&o);
    assert_ne!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("mix Simpler's two orchestration generations")
            && t.contains("2026-08 (pto_orchestration_api.h): ")
            && t.contains("2026-09 (orchestration_api.h): "),
        "{t}"
    );
    assert!(
        t.contains("kernel_add.cpp:") && t.contains(": ChipTensor"),
        "{t}"
    );
    assert!(
        t.contains("vector_add_2026_09.cpp:13: #include \"orchestration_api.h\""),
        "{t}"
    );
    assert!(!dir.join("data/actual").exists(), "nothing ran");

    // A 2026-08 orchestration in a build whose kernel speaks 2026-09 (TaskTensor).
    let dir = example("vector_add", "mixed_orch");
    let kernel = bundled("vector_add_2026_09/kernels/aiv/kernel_add.cpp")
        .replace("__gm__ Tensor *", "__gm__ TaskTensor *");
    std::fs::write(dir.join("kernels/aiv/kernel_add.cpp"), kernel).unwrap();
    let o = replay(&dir);
    let t = text(&o);
    assert_ne!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("vector_add.cpp:12: #include \"pto_orchestration_api.h\"")
            && t.contains("kernel_add.cpp:")
            && t.contains(": TaskTensor"),
        "{t}"
    );
}

/// The first key of the JSON object in `path`.
fn first_key(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v.as_object().unwrap().keys().next().unwrap().clone()
}

#[test]
fn each_generation_writes_its_own_diagnostics_unless_asked_otherwise() {
    let run = |dir: &Path, extra: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_pto"))
            .args(["replay", dir.to_str().unwrap(), "--dep-gen"])
            .args(extra)
            .env("NO_COLOR", "1")
            .env_remove("PTO_DFX_SCHEMA")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        first_key(&dir.join("dfx_outputs/deps.json"))
    };
    let new = example("vector_add_2026_09", "dfx_new");
    assert_eq!(
        run(&new, &[]),
        "runtime",
        "a 2026-09 build writes 2026-09 files"
    );
    assert_ne!(
        run(&new, &["--dfx-schema", "2026-08"]),
        "runtime",
        "unless asked"
    );
    let old = common::example("generations", "vector_add", "dfx_old");
    assert_ne!(
        run(&old, &[]),
        "runtime",
        "a 2026-08 build writes 2026-08 files"
    );
    assert_eq!(run(&old, &["--dfx-schema", "2026-09"]), "runtime");
}
