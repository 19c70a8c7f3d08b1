//! Embeds the repository's `examples/` build directories into the library, so `pto demo`
//! works from any directory with nothing but the binary and a C++ compiler.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        // Outputs of earlier runs are not part of an example.
        if name.starts_with('.')
            || name == "dfx_outputs"
            || name == "actual"
            || name == "cache"
            || name.ends_with(".so")
        {
            continue;
        }
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let examples = manifest.join("../../examples");
    println!("cargo:rerun-if-changed={}", examples.display());
    let mut files = Vec::new();
    walk(&examples, &mut files);
    let mut src = String::from("/// Every file of `examples/`: (path relative to it, bytes).\npub static EXAMPLE_FILES: &[(&str, &[u8])] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f
            .strip_prefix(&examples)
            .expect("under examples")
            .to_string_lossy()
            .replace('\\', "/");
        let abs = f.canonicalize().expect("canonical path");
        writeln!(
            src,
            "    ({rel:?}, include_bytes!({:?})),",
            abs.to_string_lossy()
        )
        .expect("write to string");
    }
    src.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("examples.rs");
    std::fs::write(out, src).expect("write examples.rs");
}
