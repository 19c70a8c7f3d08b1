//! Code-base invariants checked as tests: module docs, no `should_panic`/`ignore`, and the
//! layering of crates (docs/ARCHITECTURE.md).

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_source_module_starts_with_a_doc_comment() {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .flatten()
    {
        rust_files(&krate.path().join("src"), &mut files);
    }
    assert!(files.len() > 20);
    let missing: Vec<_> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            !first.starts_with("//!")
        })
        .collect();
    assert!(
        missing.is_empty(),
        "modules without a `//!` doc comment: {missing:?}"
    );
}

#[test]
fn no_should_panic_or_ignored_tests() {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .flatten()
    {
        rust_files(&krate.path(), &mut files);
    }
    let (should, ignore) = ("#[should_", "#[ignore");
    let bad: Vec<_> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            text.contains(&format!("{should}panic"))
                || text.contains(&format!("{ignore}]"))
                || text.contains(&format!("{ignore} ="))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "tests must check an Err, not panic or be skipped: {bad:?}"
    );
}

/// The workspace crates a crate's Cargo.toml names: in any section, or (`library_only`) in
/// `[dependencies]` alone, what its library links rather than what its tests use.
fn workspace_deps(krate: &str, library_only: bool) -> Vec<String> {
    let text =
        std::fs::read_to_string(workspace().join("crates").join(krate).join("Cargo.toml")).unwrap();
    let mut in_section = !library_only;
    let mut deps = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_section = !library_only || line == "[dependencies]";
            continue;
        }
        let name = line.split(['=', '.']).next().unwrap_or("").trim();
        if in_section && (name.starts_with("pto-") || name == "ptoas") && name != krate {
            deps.push(name.to_string());
        }
    }
    deps
}

fn internal_deps(krate: &str) -> Vec<String> {
    workspace_deps(krate, false)
}

fn library_deps(krate: &str) -> Vec<String> {
    workspace_deps(krate, true)
}

#[test]
fn compiler_crates_stand_alone() {
    // ptoas and the PTO-ISA header are leaves: usable without the runtime or each other
    // (pto-base, below every layer, is allowed; it depends on nothing of the project).
    for krate in ["ptoas", "pto-isa"] {
        let deps: Vec<String> = library_deps(krate)
            .into_iter()
            .filter(|d| d != "pto-base")
            .collect();
        assert_eq!(deps, Vec::<String>::new(), "{krate}");
    }
    assert_eq!(internal_deps("pto-base"), Vec::<String>::new(), "pto-base");
    // The DSL's IR and codegen write build directories; they never run them.
    let mut ir = library_deps("pto-ir");
    ir.sort();
    assert_eq!(ir, ["pto-build-output", "ptoas"], "pto-ir");
}

#[test]
fn crate_layering_holds() {
    let check = |krate: &str, forbidden: &[&str]| {
        let deps = internal_deps(krate);
        for f in forbidden {
            assert!(
                !deps.iter().any(|d| d == f),
                "{krate} must not depend on {f} (deps: {deps:?})"
            );
        }
    };
    // Viewers need only files.
    check(
        "pto-dfx",
        &[
            "pto-runtime",
            "pto-runner",
            "pto-toolchain",
            "pto-cli",
            "pto-python",
        ],
    );
    // The chip knows nothing of build directories, front ends or Python.
    check(
        "pto-runtime",
        &[
            "pto-runner",
            "pto-cli",
            "pto-python",
            "pto-build-output",
            "pto-dfx",
        ],
    );
    // The build directory's contract runs nothing: ptoas runs from pto-toolchain.
    check(
        "pto-build-output",
        &[
            "pto-runtime",
            "pto-runner",
            "pto-cli",
            "pto-python",
            "pto-toolchain",
            "ptoas",
        ],
    );
    check(
        "pto-toolchain",
        &["pto-runtime", "pto-runner", "pto-cli", "pto-python"],
    );
    check("pto-runner", &["pto-cli", "pto-python"]);
    // Only the CLI knows clap.
    for krate in [
        "pto-runtime",
        "pto-runner",
        "pto-dfx",
        "pto-toolchain",
        "pto-build-output",
    ] {
        let text =
            std::fs::read_to_string(workspace().join("crates").join(krate).join("Cargo.toml"))
                .unwrap();
        assert!(
            !text.lines().any(|l| l.starts_with("clap")),
            "{krate} must not use clap"
        );
        assert!(
            !text.lines().any(|l| l.starts_with("pyo3")),
            "{krate} must not use pyo3"
        );
    }
}

#[test]
fn the_shared_helpers_have_one_copy() {
    // pto-base owns these (docs/ARCHITECTURE.md): a second definition, or a temporary named
    // `<stem>.<pid>.tmp` (two writers in one process would share it), is a new copy.
    let mut files = Vec::new();
    for krate in std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .flatten()
        .filter(|k| k.file_name() != "pto-base")
    {
        rust_files(&krate.path().join("src"), &mut files);
    }
    let patterns = [
        "fn human_size(",
        "fn read_limited(",
        "fn sync_before_rename(",
        concat!("with_extension(format!(\"{}.", "tmp\""),
        // Simpler's element-type table (pto_base::dtype): a second match arm naming a code's
        // upper-case name is a second table.
        "=> \"BFLOAT16\"",
    ];
    let copies: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            patterns
                .iter()
                .filter(|p| text.contains(*p))
                .map(|p| format!("{}: {p}", f.display()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(copies.is_empty(), "use pto_base instead: {copies:?}");
}
