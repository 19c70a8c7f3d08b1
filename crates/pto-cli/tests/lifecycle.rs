//! The edit-and-rerun loop (seed 002): binary cache, `.pto` splice, layouts, bench.

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{copy_dir, text};

fn example(name: &str, as_name: &str) -> PathBuf {
    common::example("lifecycle", name, as_name)
}

fn pto_in(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pto"));
    c.args(args)
        .env_remove("PTOAS_ROOT")
        .env_remove("PYPTO_REBUILD_FROM_PTO");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn pto(args: &[&str]) -> Output {
    pto_in(args, &[])
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Turns vector_add's `c = a + b` into `c = a - b` (between the sentinels).
fn edit_kernel_to_subtract(dir: &Path) {
    let k = dir.join("kernels/aiv/kernel_add.cpp");
    let src = std::fs::read_to_string(&k).unwrap();
    assert!(src.contains("pto_tile::add(a_buf, b_buf, a_buf, n);"));
    std::fs::write(
        &k,
        src.replace(
            "pto_tile::add(a_buf, b_buf, a_buf, n);",
            "pto_tile::sub(a_buf, b_buf, a_buf, n);",
        ),
    )
    .unwrap();
}

#[test]
fn an_edited_kernel_cpp_is_rebuilt_with_and_without_no_recompile() {
    let dir = example("vector_add", "edit_cpp");
    assert_eq!(
        pto(&["replay", s(&dir), "--validate"]).status.code(),
        Some(0)
    );
    edit_kernel_to_subtract(&dir);
    for extra in [&[][..], &["--no-recompile"][..]] {
        let mut args = vec!["replay", s(&dir), "--validate"];
        args.extend_from_slice(extra);
        let o = pto(&args);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{extra:?}: the edit must be seen: {}",
            text(&o)
        );
    }
}

#[test]
fn an_edited_header_is_seen_even_with_no_recompile() {
    let dir = example("vector_add", "edit_header");
    let k = dir.join("kernels/aiv/kernel_add.cpp");
    let src = std::fs::read_to_string(&k).unwrap();
    std::fs::write(
        &k,
        src.replace(
            "#include \"pto_tile.h\"",
            "#include \"pto_tile.h\"\n#include \"sign.h\"",
        )
        .replace(
            "pto_tile::add(a_buf, b_buf, a_buf, n);",
            "for (uint32_t i = 0; i < n; ++i) a_buf[i] += SIGN * b_buf[i];",
        ),
    )
    .unwrap();
    let header = dir.join("kernels/aiv/sign.h");
    std::fs::write(&header, "#pragma once\nstatic const float SIGN = 1.0f;\n").unwrap();
    let o = pto(&["replay", s(&dir), "--validate"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    std::fs::write(&header, "#pragma once\nstatic const float SIGN = -1.0f;\n").unwrap();
    let o = pto(&["replay", s(&dir), "--validate", "--no-recompile"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "the header edit must be seen: {}",
        text(&o)
    );
}

#[test]
fn a_truncated_binary_is_rebuilt_not_loaded() {
    let dir = example("vector_add", "truncated_so");
    assert_eq!(pto(&["replay", s(&dir)]).status.code(), Some(0));
    let so = dir.join("kernels/aiv/kernel_add.so");
    let bytes = std::fs::read(&so).unwrap();
    std::fs::write(&so, &bytes[..100]).unwrap();
    let o = pto(&["replay", s(&dir), "--validate", "--no-recompile"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        std::fs::metadata(&so).unwrap().len() > 100,
        "the binary was rebuilt"
    );
    if dir.join("cache/binary_context.json").exists() {
        assert!(
            text(&o).contains("differs from the one this build compiled"),
            "{}",
            text(&o)
        );
    }
}

#[test]
fn no_recompile_reuses_binaries_only_with_a_matching_stamp() {
    let dir = example("bgemm", "stamp");
    let o = pto(&["replay", s(&dir)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let so = dir.join("kernels/aic/kernel_matmul.so");
    let before = std::fs::metadata(&so).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let stamp = dir.join("cache/binary_context.json");
    let o = pto(&["replay", s(&dir), "--no-recompile", "--validate"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let after = std::fs::metadata(&so).unwrap().modified().unwrap();
    if stamp.exists() {
        // A build from a git checkout (clean, or dirty with the hash of its state) has an
        // identity: matching stamp, binaries reused.
        assert_eq!(before, after, "binaries must be reused");
        // A stamp from another runtime commit forces a rebuild.
        let text = std::fs::read_to_string(&stamp).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let old = v["runtime_revision"].as_str().unwrap().to_string();
        std::fs::write(
            &stamp,
            text.replace(&old, "0.0.0+0000000000000000000000000000000000000000"),
        )
        .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(
            pto(&["replay", s(&dir), "--no-recompile"]).status.code(),
            Some(0)
        );
        assert_ne!(
            after,
            std::fs::metadata(&so).unwrap().modified().unwrap(),
            "a foreign stamp must force a rebuild"
        );
    } else {
        // Built outside a git checkout: no identity, never trust the cache, always rebuild.
        assert_ne!(before, after, "without an identity every replay rebuilds");
    }
}

#[test]
fn invalidate_cache_removes_binaries_but_not_sources() {
    let dir = example("vector_add", "invalidate");
    assert_eq!(pto(&["replay", s(&dir)]).status.code(), Some(0));
    assert!(dir.join("kernels/aiv/kernel_add.so").exists());
    let o = pto(&["invalidate-cache", s(&dir)]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        text(&o).contains("[cpp->.so] invalidated 2 cached binary file(s); cpp will rebuild"),
        "{}",
        text(&o)
    );
    assert!(!dir.join("kernels/aiv/kernel_add.so").exists());
    assert!(dir.join("kernels/aiv/kernel_add.cpp").exists());
    let o = pto(&["invalidate-cache", s(&dir)]);
    assert!(
        text(&o).contains("[cpp->.so] no cached binaries to invalidate"),
        "{}",
        text(&o)
    );
}

/// A translator standing in for ptoas: copies the `.pto` (which holds C++ text) to `-o`.
fn fake_ptoas(root: &Path) -> PathBuf {
    let bin = root.join("ptoas-root");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("ptoas");
    std::fs::write(&script, "#!/bin/sh\ncp \"$1\" \"$3\"\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// Gives vector_add a `ptoas/kernel_add.pto` whose body subtracts, with an older raw cpp.
fn add_pto_unit(dir: &Path) {
    let k = std::fs::read_to_string(dir.join("kernels/aiv/kernel_add.cpp")).unwrap();
    let body = k
        .split("// --- ptoas-generated code ---\n")
        .nth(1)
        .unwrap()
        .split("// --- Kernel entry point ---")
        .next()
        .unwrap();
    std::fs::create_dir_all(dir.join("ptoas")).unwrap();
    std::fs::write(dir.join("ptoas/kernel_add.cpp"), body).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let pto = body
        .replace("static __aicore__ void", "AICORE void")
        .replace("pto_tile::add(", "pto_tile::sub(");
    std::fs::write(dir.join("ptoas/kernel_add.pto"), pto).unwrap();
}

#[test]
fn an_edited_pto_is_spliced_then_rebuilt() {
    let dir = example("vector_add", "pto_splice");
    add_pto_unit(&dir);
    let kernel = dir.join("kernels/aiv/kernel_add.cpp");
    // Keep a hand edit outside the sentinels: it must survive the splice.
    let k = std::fs::read_to_string(&kernel).unwrap();
    std::fs::write(&kernel, format!("// my note\n{k}")).unwrap();
    let root = fake_ptoas(dir.parent().unwrap());
    let o = pto_in(
        &["replay", s(&dir), "--validate"],
        &[("PTOAS_ROOT", s(&root))],
    );
    let t = text(&o);
    assert!(
        t.contains("[pto->cpp] regenerating from ptoas/kernel_add.pto"),
        "{t}"
    );
    assert!(
        t.contains("[pto->cpp]   spliced -> kernels/aiv/kernel_add.cpp"),
        "{t}"
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "a - b no longer matches the golden a + b: {t}"
    );
    let k = std::fs::read_to_string(&kernel).unwrap();
    assert!(
        k.starts_with("// my note\n") && k.contains("pto_tile::sub("),
        "{k}"
    );
    // Nothing changed since: no splice the second time.
    let o = pto_in(&["replay", s(&dir)], &[("PTOAS_ROOT", s(&root))]);
    assert!(
        text(&o).contains("[pto->cpp] no .pto changes detected"),
        "{}",
        text(&o)
    );
}

#[test]
fn pto_rebuild_opt_outs_and_missing_ptoas() {
    let dir = example("vector_add", "pto_optout");
    add_pto_unit(&dir);
    let root = fake_ptoas(dir.parent().unwrap());
    let o = pto_in(
        &["replay", s(&dir), "--validate", "--no-rebuild-from-pto"],
        &[("PTOAS_ROOT", s(&root))],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("[pto->cpp] skipped (rebuild_from_pto=False)"),
        "{}",
        text(&o)
    );
    let o = pto_in(
        &["replay", s(&dir), "--validate"],
        &[("PTOAS_ROOT", s(&root)), ("PYPTO_REBUILD_FROM_PTO", "No")],
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(
        text(&o).contains("[pto->cpp] skipped (PYPTO_REBUILD_FROM_PTO=0)"),
        "{}",
        text(&o)
    );
    // Without a ptoas anywhere the bundled translator runs (PyPTO would skip); this
    // fixture's .pto holds C++, so it fails with a located error instead.
    let o = pto_in(
        &["replay", s(&dir), "--validate"],
        &[("PATH", "/usr/bin:/bin")],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains(
            "[pto->cpp] using the bundled ptoas translator (no ptoas on PTOAS_ROOT or PATH)"
        ) && t.contains("kernel_add.pto:2:1: expected end of input"),
        "{t}"
    );
}

#[test]
fn missing_sentinels_is_the_seed_error() {
    let dir = example("vector_add", "no_sentinels");
    add_pto_unit(&dir);
    let kernel = dir.join("kernels/aiv/kernel_add.cpp");
    let k = std::fs::read_to_string(&kernel)
        .unwrap()
        .replace("// --- Kernel entry point ---\n", "");
    std::fs::write(&kernel, k).unwrap();
    let root = fake_ptoas(dir.parent().unwrap());
    let o = pto_in(&["replay", s(&dir)], &[("PTOAS_ROOT", s(&root))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("cannot splice — missing or out-of-order ptoas sentinels. This build_output predates the .pto rebuild feature; recompile via ir.compile() to refresh."),
        "{}",
        text(&o)
    );
}

#[test]
fn layouts_stale_next_levels_and_multi_orch_parents() {
    // A stale next_levels/ from an older multi-orch build does not change a single-orch build.
    let dir = example("vector_add", "stale_next");
    let snapshot = dir.parent().unwrap().join("snapshot");
    copy_dir(&dir, &snapshot);
    copy_dir(&snapshot, &dir.join("next_levels").join("old"));
    let o = pto(&["replay", s(&dir), "--validate"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    // A multi-orch parent names its sub-builds.
    let parent = dir.parent().unwrap().join("parent");
    copy_dir(&snapshot, &parent.join("next_levels").join("vector_add"));
    let o = pto(&["replay", s(&parent)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("L2 orchestrations") && text(&o).contains("vector_add"),
        "{}",
        text(&o)
    );
    let o = pto(&[
        "replay",
        s(&parent.join("next_levels/vector_add")),
        "--validate",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn concurrent_replays_of_one_directory_serialize() {
    let dir = example("bgemm", "concurrent");
    // Three replays at once: the directory lock serializes their builds.
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let d = dir.clone();
            std::thread::spawn(move || {
                Command::new(env!("CARGO_BIN_EXE_pto"))
                    .args(["replay", d.to_str().unwrap(), "--validate"])
                    .output()
                    .unwrap()
            })
        })
        .collect();
    for h in handles {
        let o = h.join().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    }
    let units = std::fs::read_to_string(dir.join("cache/units.json")).unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(&units).is_ok());
    assert!(
        dir.join("kernels/aic/kernel_matmul.so").exists()
            && dir.join("kernels/aiv/kernel_add.so").exists()
    );
}

#[test]
fn bench_prints_stable_statistics() {
    let dir = example("bgemm", "bench");
    let o = pto(&["bench", s(&dir), "--rounds", "5", "--warmup", "1", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rounds"], 5);
    assert_eq!(v["device_wall_us"]["samples"].as_array().unwrap().len(), 5);
    assert!(v["device_wall_us"]["min"].as_f64().unwrap() > 0.0);
    let o = pto(&["bench", s(&dir), "--rounds", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("rounds must be positive, got 0"),
        "{}",
        text(&o)
    );
}
