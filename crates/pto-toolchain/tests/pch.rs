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

/// A `g++` that logs each command line to `log` before running the real one; with
/// `refuse_headers`, it fails every header precompile (`-x c++-header`).
fn logging_gxx(dir: &Path, log: &Path, refuse_headers: bool) -> std::io::Result<PathBuf> {
    let path = dir.join("g++");
    let refuse = if refuse_headers {
        "case \"$*\" in *c++-header*) exit 1;; esac\n"
    } else {
        ""
    };
    let script = format!(
        "#!/bin/sh\necho \"$@\" >> '{}'\n{refuse}exec g++ \"$@\"\n",
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
    let tc = Toolchain::with_compiler(logging_gxx(dir, &log, false)?, &dir.join("a"))?;
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

#[test]
fn a_header_that_does_not_precompile_is_tried_once_and_kernels_still_compile() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("commands.log");
    let gxx = logging_gxx(dir.path(), &log, true)?;
    let tc = Toolchain::with_compiler(gxx, &dir.path().join("a"))?;
    for k in 1..=4 {
        let object = tc.compile(&aiv(kernel(dir.path(), &format!("k{k}"), k)?))?;
        assert!(object.so_path.is_file());
    }
    assert!(precompiled(&tc.isa_include_dir()).is_empty());
    let commands = std::fs::read_to_string(&log)?;
    let tries = commands
        .lines()
        .filter(|l| l.contains("c++-header"))
        .count();
    assert_eq!(tries, 1, "{commands}");
    assert!(!commands.contains("-include"), "{commands}");
    Ok(())
}

#[test]
fn a_killed_runs_precompile_temporary_is_swept_and_markers_are_kept() -> TestResult {
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("a");
    let tc = Toolchain::with_compiler("g++", &cache)?;
    let include_root = tc
        .include_dir()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let state = include_root.join("pch-state");
    std::fs::create_dir_all(&state)?;
    let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    let mut files = Vec::new();
    for name in [
        "tmp-1-0-0.gch",
        "tmp-2-0-0.gch",
        "aiv-0123456789abcdef.seen",
    ] {
        let path = state.join(name);
        std::fs::File::create(&path)?.set_modified(two_hours_ago)?;
        files.push(path);
    }
    std::fs::File::create(state.join("tmp-3-0-0.gch"))?;
    Toolchain::with_compiler("g++", &cache)?;
    assert!(
        !files[0].exists() && !files[1].exists(),
        "old temporaries swept"
    );
    assert!(files[2].exists(), "a marker stays");
    assert!(
        state.join("tmp-3-0-0.gch").exists(),
        "a young temporary may be in use"
    );
    Ok(())
}
