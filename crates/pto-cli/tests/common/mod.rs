//! Helpers shared by the CLI test binaries: copies of the bundled examples and output text.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Everything the process printed (stdout, then stderr).
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Copies a directory tree.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let dest = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// A fresh scratch directory `<target tmp>/<group>/<name>`.
pub fn scratch(group: &str, name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A private copy of the bundled example `name` under `<group>/<as_name>/`.
pub fn example(group: &str, name: &str, as_name: &str) -> PathBuf {
    let dst = scratch(group, as_name).join(name);
    copy_dir(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(name),
        &dst,
    );
    dst
}

/// The interpreter with the pypto package and torch that L3 builds need (`PTO_PYTHON`, else
/// the checkout's `target/venv-py/bin/python`, which `.ci/run` builds before the Rust tests);
/// fails with the fix when there is none.
pub fn pypto_python() -> String {
    let candidate = std::env::var("PTO_PYTHON")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/venv-py/bin/python")
                .display()
                .to_string()
        });
    let probe = Command::new(&candidate)
        .args(["-c", "import torch, pypto.runtime.distributed_runner"])
        .output();
    match probe {
        Ok(o) if o.status.success() => candidate,
        other => panic!(
            "the L3 tests need a Python with the pypto package and torch: `{candidate}` cannot import them ({}). Build it as .ci/run does (python3 -m venv target/venv-py; target/venv-py/bin/pip install maturin numpy torch; target/venv-py/bin/pip install --no-build-isolation .) or set PTO_PYTHON",
            match other {
                Ok(o) => String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("").to_string(),
                Err(e) => e.to_string(),
            }
        ),
    }
}

/// The row of `name` in `pto demo`'s table (its first column is exactly `name`).
pub fn demo_row<'a>(table: &'a str, name: &str) -> Option<&'a str> {
    table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
}
