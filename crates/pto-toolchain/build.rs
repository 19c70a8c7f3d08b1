//! Embeds the workspace's `include/pto/` headers into the crate.
//!
//! Walks `<workspace>/include/pto` recursively and generates
//! `$OUT_DIR/embedded_headers.rs`, a sorted static table of
//! `(relative path, include_bytes!(absolute path))`. Hidden files (names
//! starting with `.`, e.g. editor swap files) are skipped. A missing
//! directory yields an empty table (and, because the watched path does not
//! exist, cargo re-runs this script until it appears).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    if let Err(e) = run() {
        // A build script reports failure by panicking / exiting non-zero.
        eprintln!("pto-toolchain build.rs: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let manifest_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR not set")?;
    let out_dir = std::env::var_os("OUT_DIR").ok_or("OUT_DIR not set")?;
    let include_root = PathBuf::from(manifest_dir).join("../../include/pto");
    let include_root = include_root.canonicalize().unwrap_or(include_root);

    println!("cargo:rerun-if-changed={}", include_root.display());
    println!("cargo:rerun-if-changed=build.rs");

    let mut files = Vec::new();
    if include_root.is_dir() {
        walk(&include_root, &include_root, &mut files)?;
    }
    files.sort();

    let mut code = String::new();
    code.push_str(
        "/// Headers embedded from `include/pto/`: `(relative path, contents)`, sorted by path.\n",
    );
    code.push_str("pub(crate) static EMBEDDED_HEADERS: &[(&str, &[u8])] = &[\n");
    for (rel, abs) in &files {
        let abs = abs
            .to_str()
            .ok_or_else(|| format!("non-UTF-8 header path {}", abs.display()))?;
        println!("cargo:rerun-if-changed={abs}");
        writeln!(code, "    ({rel:?}, include_bytes!({abs:?})),").map_err(|e| e.to_string())?;
    }
    code.push_str("];\n");

    let dest = Path::new(&out_dir).join("embedded_headers.rs");
    std::fs::write(&dest, code).map_err(|e| format!("writing {}: {e}", dest.display()))
}

/// Collects `(relative path with '/' separators, absolute path)` for every
/// regular file under `dir`.
fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("reading {}: {e}", dir.display()))?;
        let path = entry.path();
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        // Follow symlinks: embed what the compiler would see.
        let meta = std::fs::metadata(&path).map_err(|e| format!("stat {}: {e}", path.display()))?;
        if meta.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            walk(root, &path, out)?;
        } else if meta.is_file() {
            let rel = path
                .strip_prefix(root)
                .map_err(|e| e.to_string())?
                .components()
                .map(|c| {
                    c.as_os_str()
                        .to_str()
                        .map(str::to_owned)
                        .ok_or_else(|| format!("non-UTF-8 header path {}", path.display()))
                })
                .collect::<Result<Vec<_>, _>>()?
                .join("/");
            out.push((rel, path));
        }
    }
    Ok(())
}
