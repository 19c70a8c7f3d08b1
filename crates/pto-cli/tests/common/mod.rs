//! Helpers shared by the CLI test binaries: copies of the bundled examples and output text.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

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
