//! The crate's layering (docs/ARCHITECTURE.md, `crates/pto-ir`): the compiler depends on
//! `pto-build-output` and `ptoas` only among the workspace crates, besides `pto-base`, below
//! every layer (the runner is a dev-dependency of the tests), and knows no PyO3 or clap.

#[test]
fn the_compiler_depends_only_on_the_build_writers_and_ptoas() {
    let manifest = include_str!("../Cargo.toml");
    let mut section = String::new();
    let mut deps = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
            continue;
        }
        if section == "[dependencies]" {
            if let Some(name) = line.split(['=', '.', ' ']).next().filter(|n| !n.is_empty()) {
                deps.push(name.to_string());
            }
        }
    }
    let internal: Vec<&String> = deps
        .iter()
        .filter(|d| d.starts_with("pto") && *d != "pto-ir")
        .collect();
    assert_eq!(
        internal,
        ["pto-base", "pto-build-output", "ptoas"],
        "dependencies: {deps:?}"
    );
    for foreign in ["pyo3", "clap", "pto-runner", "pto-runtime", "pto-python"] {
        assert!(
            !deps.iter().any(|d| d == foreign),
            "pto-ir must not depend on {foreign}"
        );
    }
}
