//! Tidy checks: every source module documents itself, and no test hides a
//! failure behind a panic expectation or an ignore marker.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn crate_files(sub: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join(sub), &mut files);
    files.sort();
    files
}

#[test]
fn every_module_starts_with_module_docs() {
    for path in crate_files("src").into_iter().chain(crate_files("tests")) {
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("//!"),
            "{} lacks `//!` docs",
            path.display()
        );
    }
}

#[test]
fn no_panic_expectations_or_ignored_tests() {
    let banned = [
        format!("#[{}]", "should_panic"),
        format!("#[{}]", "ignore"),
        format!("#[{}(", "ignore"),
    ];
    for path in crate_files("src").into_iter().chain(crate_files("tests")) {
        let text = std::fs::read_to_string(&path).unwrap();
        for b in &banned {
            assert!(
                !text.contains(b.as_str()),
                "{} contains {b}",
                path.display()
            );
        }
    }
}
