//! The precompiled PTO-ISA header, with the real g++: built at the second kernel compile of
//! a flag set, used from the third, and the object identical to the plain compile's.

use std::path::{Path, PathBuf};

use pto_toolchain::{CompileUnit, CoreKind, Toolchain, UnitKind};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A kernel shaped as PyPTO writes them: standard includes and qualifier fallbacks first.
fn kernel(dir: &Path, name: &str, value: i32) -> std::io::Result<PathBuf> {
    let path = dir.join(format!("{name}.cpp"));
    let text = format!(
        "// Kernel Function: {name}\n#include <cstdint>\n\n#ifndef __gm__\n#define __gm__\n#endif\n\n\
         #include <pto/pto-inst.hpp>\n\nusing namespace pto;\n\n\
         extern \"C\" __aicore__ void kernel_entry(__gm__ int64_t *args) {{\n  \
         args[0] = {value} + static_cast<int64_t>(sizeof(bfloat16_t));\n}}\n"
    );
    std::fs::write(&path, text)?;
    Ok(path)
}

/// A `g++` that logs each command line to `log` before running the real one.
fn logging_gxx(dir: &Path, log: &Path) -> std::io::Result<PathBuf> {
    let path = dir.join("g++");
    let script = format!(
        "#!/bin/sh\necho \"$@\" >> '{}'\nexec g++ \"$@\"\n",
        log.display()
    );
    std::fs::write(&path, script)?;
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(path)
}

fn precompiled(include_dir: &Path) -> Vec<PathBuf> {
    let dir = include_dir.join("pto/pto-inst.hpp.gch");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// A logging toolchain over cache `<dir>/a` in which two AIV kernels were compiled (the
/// second built the precompiled header), and its command log.
fn cache_with_pch(dir: &Path) -> Result<(Toolchain, PathBuf), Box<dyn std::error::Error>> {
    let log = dir.join("commands.log");
    let tc = Toolchain::with_compiler(logging_gxx(dir, &log)?, &dir.join("a"))?;
    tc.compile(&aiv(kernel(dir, "k1", 1)?))?;
    assert!(
        precompiled(&tc.isa_include_dir()).is_empty(),
        "built at the first compile"
    );
    tc.compile(&aiv(kernel(dir, "k2", 2)?))?;
    let built = precompiled(&tc.isa_include_dir());
    assert_eq!(built.len(), 1, "{built:?}");
    assert!(built[0]
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("aiv-")));
    std::fs::write(&log, "")?;
    Ok((tc, log))
}

fn aiv(source: PathBuf) -> CompileUnit {
    CompileUnit::new(source, UnitKind::Kernel(CoreKind::Aiv))
}

#[test]
fn the_header_is_precompiled_once_and_changes_no_object() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (tc, log) = cache_with_pch(dir.path())?;
    let third = tc.compile(&aiv(kernel(dir.path(), "k3", 3)?))?;
    let commands = std::fs::read_to_string(&log)?;
    assert!(
        commands
            .lines()
            .any(|l| l.contains("-include") && l.contains("k3.cpp")),
        "{commands}"
    );

    // The same kernel in a fresh cache compiles without a precompiled header (its first
    // compile there): same key (same dependencies), same bytes.
    let plain_tc = Toolchain::with_compiler("g++", &dir.path().join("b"))?;
    let plain = plain_tc.compile(&aiv(kernel(dir.path(), "k3", 3)?))?;
    assert!(precompiled(&plain_tc.isa_include_dir()).is_empty());
    assert_eq!(third.key, plain.key);
    let relative = |deps: &[PathBuf], root: &Path| -> Vec<PathBuf> {
        deps.iter()
            .map(|d| d.strip_prefix(root).unwrap_or(d).to_path_buf())
            .collect()
    };
    assert_eq!(
        relative(&third.deps, &dir.path().join("a")),
        relative(&plain.deps, &dir.path().join("b"))
    );
    assert_eq!(
        std::fs::read(&third.so_path)?,
        std::fs::read(&plain.so_path)?
    );
    Ok(())
}

#[test]
fn a_kernel_defining_macros_first_never_uses_it() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (tc, log) = cache_with_pch(dir.path())?;
    let own = dir.path().join("own.cpp");
    let text = std::fs::read_to_string(kernel(dir.path(), "k4", 4)?)?;
    std::fs::write(&own, format!("#define PTO_OWN_SETTING 1\n{text}"))?;
    tc.compile(&aiv(own))?;
    let commands = std::fs::read_to_string(&log)?;
    assert!(!commands.contains("-include"), "{commands}");
    Ok(())
}
