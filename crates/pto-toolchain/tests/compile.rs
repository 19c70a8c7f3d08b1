//! End-to-end tests with the real system C++ compiler and file system.

use std::path::{Path, PathBuf};
use std::process::Command;

use pto_toolchain::{CompileUnit, CoreKind, Toolchain, ToolchainError, UnitKind};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn write(path: &Path, text: &str) -> std::io::Result<PathBuf> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)?;
    Ok(path.to_path_buf())
}

/// A fresh cache root plus a toolchain using it.
fn setup() -> Result<(tempfile::TempDir, Toolchain), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let tc = Toolchain::discover(&dir.path().join("cache"))?;
    Ok((dir, tc))
}

/// Whether `nm -D` lists `symbol` as defined in `so` (true if `nm` is unavailable).
fn exports(so: &Path, symbol: &str) -> bool {
    match Command::new("nm")
        .arg("-D")
        .arg("--defined-only")
        .arg(so)
        .output()
    {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.split_whitespace().last() == Some(symbol)),
        _ => true,
    }
}

#[test]
fn compiles_and_hits_cache() -> TestResult {
    let (dir, tc) = setup()?;
    let src = write(
        &dir.path().join("k.cpp"),
        "extern \"C\" int f() { return 7; }\n",
    )?;
    let unit = CompileUnit::new(&src, UnitKind::Orchestration);

    let first = tc.compile(&unit)?;
    assert!(!first.cache_hit);
    assert!(first.so_path.is_file());
    assert!(first.so_path.starts_with(tc.objects_dir()));
    assert_eq!(
        first.so_path.file_stem().and_then(|s| s.to_str()),
        Some(first.key.as_str())
    );
    assert!(exports(&first.so_path, "f"));

    let second = tc.compile(&unit)?;
    assert!(second.cache_hit);
    assert_eq!(second.so_path, first.so_path);
    assert_eq!(second.key, first.key);

    // A new toolchain instance (as in a new process) also hits.
    let tc2 = Toolchain::discover(tc.cache_root())?;
    assert!(tc2.compile(&unit)?.cache_hit);
    Ok(())
}

#[test]
fn edited_source_misses_and_reverting_hits() -> TestResult {
    let (dir, tc) = setup()?;
    let src = write(
        &dir.path().join("k.cpp"),
        "extern \"C\" int f() { return 7; }\n",
    )?;
    let unit = CompileUnit::new(&src, UnitKind::Kernel(CoreKind::Aiv));
    let v1 = tc.compile(&unit)?;

    write(&src, "extern \"C\" int f() { return 8; }\n")?;
    let v2 = tc.compile(&unit)?;
    assert!(!v2.cache_hit);
    assert_ne!(v2.key, v1.key);
    assert_ne!(v2.so_path, v1.so_path);
    assert!(v1.so_path.is_file() && v2.so_path.is_file());

    write(&src, "extern \"C\" int f() { return 7; }\n")?;
    let v3 = tc.compile(&unit)?;
    assert!(v3.cache_hit);
    assert_eq!(v3.key, v1.key);
    Ok(())
}

#[test]
fn header_edits_are_never_stale() -> TestResult {
    let (dir, tc) = setup()?;
    let inc = dir.path().join("inc");
    let header = write(&inc.join("cfg.h"), "#define VALUE 1\n")?;
    let src = write(
        &dir.path().join("src/k.cpp"),
        "#include \"cfg.h\"\nextern \"C\" int f() { return VALUE; }\n",
    )?;
    let unit = CompileUnit::new(&src, UnitKind::Kernel(CoreKind::Aic)).with_include_dir(&inc);

    let v1 = tc.compile(&unit)?;
    assert!(!v1.cache_hit);
    assert!(tc.compile(&unit)?.cache_hit);

    write(&header, "#define VALUE 2\n")?;
    let v2 = tc.compile(&unit)?;
    assert!(
        !v2.cache_hit,
        "edited header must not be served from the cache"
    );
    assert_ne!(v2.key, v1.key);
    assert!(tc.compile(&unit)?.cache_hit);

    write(&header, "#define VALUE 1\n")?;
    let v3 = tc.compile(&unit)?;
    assert!(
        v3.cache_hit,
        "restored header should hit the earlier object"
    );
    assert_eq!(v3.key, v1.key);

    // Deleting the header: the compile must fail, not hit.
    std::fs::remove_file(&header)?;
    assert!(matches!(
        tc.compile(&unit),
        Err(ToolchainError::Compile { .. })
    ));
    Ok(())
}

#[test]
fn nested_header_edits_are_detected() -> TestResult {
    let (dir, tc) = setup()?;
    write(&dir.path().join("a.h"), "#include \"b.h\"\n")?;
    let b = write(&dir.path().join("b.h"), "#define VALUE 1\n")?;
    let src = write(
        &dir.path().join("k.cpp"),
        "#include \"a.h\"\nextern \"C\" int f() { return VALUE; }\n",
    )?;
    let unit = CompileUnit::new(&src, UnitKind::Orchestration);
    let v1 = tc.compile(&unit)?;
    write(&b, "#define VALUE 3\n")?;
    let v2 = tc.compile(&unit)?;
    assert!(!v2.cache_hit);
    assert_ne!(v1.key, v2.key);
    Ok(())
}

#[test]
fn identical_sources_share_objects_but_not_sibling_headers() -> TestResult {
    let (dir, tc) = setup()?;
    let text = "#include \"cfg.h\"\nextern \"C\" int f() { return VALUE; }\n";
    let a = write(&dir.path().join("a/k.cpp"), text)?;
    let b = write(&dir.path().join("b/k.cpp"), text)?;
    let c = write(&dir.path().join("c/k.cpp"), text)?;
    write(&dir.path().join("a/cfg.h"), "#define VALUE 1\n")?;
    write(&dir.path().join("b/cfg.h"), "#define VALUE 1\n")?;
    write(&dir.path().join("c/cfg.h"), "#define VALUE 2\n")?;

    let ka = tc.compile(&CompileUnit::new(&a, UnitKind::Orchestration))?;
    let kb = tc.compile(&CompileUnit::new(&b, UnitKind::Orchestration))?;
    let kc = tc.compile(&CompileUnit::new(&c, UnitKind::Orchestration))?;
    assert_eq!(
        ka.key, kb.key,
        "same content and same headers share one object"
    );
    assert_eq!(ka.so_path, kb.so_path);
    assert_ne!(
        ka.key, kc.key,
        "a different sibling header must not be served stale"
    );
    Ok(())
}

#[test]
fn keys_are_stable_across_cache_roots() -> TestResult {
    let (dir, tc1) = setup()?;
    let tc2 = Toolchain::discover(&dir.path().join("other-cache"))?;
    let src = write(
        &dir.path().join("k.cpp"),
        "extern \"C\" int f() { return 1; }\n",
    )?;
    let unit = CompileUnit::new(&src, UnitKind::Orchestration);
    let o1 = tc1.compile(&unit)?;
    let o2 = tc2.compile(&unit)?;
    assert!(!o2.cache_hit);
    assert_eq!(o1.key, o2.key);
    assert_ne!(o1.so_path, o2.so_path);
    Ok(())
}

#[test]
fn compile_error_reports_compiler_message() -> TestResult {
    let (dir, tc) = setup()?;
    let src = write(
        &dir.path().join("broken.cpp"),
        "extern \"C\" int f() { return undeclared_identifier_xyz; }\n",
    )?;
    let err = tc
        .compile(&CompileUnit::new(&src, UnitKind::Orchestration))
        .err();
    let Some(err @ ToolchainError::Compile { .. }) = err else {
        panic!("expected a compile error, got {err:?}");
    };
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("failed to compile `{}`:\n", src.display())),
        "{text}"
    );
    assert!(text.contains("undeclared_identifier_xyz"), "{text}");
    assert!(text.contains("broken.cpp"), "{text}");

    // Nothing was cached: fixing the file compiles it.
    write(&src, "extern \"C\" int f() { return 0; }\n")?;
    assert!(
        !tc.compile(&CompileUnit::new(&src, UnitKind::Orchestration))?
            .cache_hit
    );
    Ok(())
}

/// A function no library provides fails at link time, naming the source and the function
/// (not later, at load time, naming a cache object and a mangled symbol).
#[test]
fn undefined_symbols_are_link_errors_naming_the_source() -> TestResult {
    let (dir, tc) = setup()?;
    let src = write(
        &dir.path().join("calls_missing.cpp"),
        "void missing_helper(int);\nextern \"C\" void kernel_entry(long* a) { missing_helper((int)a[0]); }\n",
    )?;
    let err = tc
        .compile(&CompileUnit::new(&src, UnitKind::Kernel(CoreKind::Aiv)))
        .err();
    let Some(err @ ToolchainError::Compile { .. }) = err else {
        panic!("expected a link error, got {err:?}");
    };
    let text = err.to_string();
    assert!(
        text.contains("calls_missing.cpp") && text.contains("missing_helper(int)"),
        "{text}"
    );
    Ok(())
}

#[test]
fn missing_source_is_named() -> TestResult {
    let (dir, tc) = setup()?;
    let missing = dir.path().join("nope.cpp");
    let err = tc
        .compile(&CompileUnit::new(&missing, UnitKind::Orchestration))
        .err();
    assert!(
        matches!(err, Some(ToolchainError::Source { .. })),
        "{err:?}"
    );
    let text = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains("nope.cpp"), "{text}");
    Ok(())
}

#[test]
fn compile_all_preserves_order() -> TestResult {
    let (dir, tc) = setup()?;
    let mut units = Vec::new();
    for i in 0..4 {
        let src = write(
            &dir.path().join(format!("k{i}.cpp")),
            &format!("extern \"C\" int f{i}() {{ return {i}; }}\n"),
        )?;
        units.push(CompileUnit::new(src, UnitKind::Kernel(CoreKind::Aiv)));
    }
    // One broken unit in the middle must not disturb the others.
    let broken = write(&dir.path().join("broken.cpp"), "int x = ;\n")?;
    units.insert(2, CompileUnit::new(&broken, UnitKind::Orchestration));

    let results = tc.compile_all(&units);
    assert_eq!(results.len(), 5);
    let mut keys = Vec::new();
    for (i, r) in results.iter().enumerate() {
        if i == 2 {
            assert!(
                matches!(r, Err(ToolchainError::Compile { source_file, .. }) if *source_file == broken)
            );
            continue;
        }
        let obj = r.as_ref().map_err(|e| e.to_string())?;
        let n = if i < 2 { i } else { i - 1 };
        assert!(!obj.cache_hit);
        assert!(
            exports(&obj.so_path, &format!("f{n}")),
            "unit {i} is not k{n}.cpp"
        );
        keys.push(obj.key.clone());
    }
    keys.dedup();
    assert_eq!(keys.len(), 4);

    let again = tc.compile_all(&units);
    for (i, r) in again.iter().enumerate() {
        if i != 2 {
            assert!(r.as_ref().map_err(|e| e.to_string())?.cache_hit);
        }
    }
    assert!(tc.compile_all(&[]).is_empty());
    Ok(())
}

#[test]
fn flags_depend_on_core_kind() -> TestResult {
    let (dir, tc) = setup()?;
    let src = dir.path().join("k.cpp");
    let orch = tc.flags(&CompileUnit::new(&src, UnitKind::Orchestration));
    let aic = tc.flags(&CompileUnit::new(&src, UnitKind::Kernel(CoreKind::Aic)));
    let aiv = tc.flags(
        &CompileUnit::new(&src, UnitKind::Kernel(CoreKind::Aiv)).with_include_dir("rel/inc"),
    );

    for flags in [&orch, &aic, &aiv] {
        for f in [
            "-std=c++17",
            "-O2",
            "-fPIC",
            "-shared",
            "-pthread",
            "-D__CPU_SIM",
            "-DPTO_CPU_SIM",
        ] {
            assert!(flags.iter().any(|x| x == f), "{f} missing from {flags:?}");
        }
        assert!(flags.contains(&format!("-I{}", tc.include_dir().display())));
    }
    assert!(aic.iter().any(|f| f == "-D__DAV_CUBE__") && !aic.iter().any(|f| f == "-D__DAV_VEC__"));
    assert!(aiv.iter().any(|f| f == "-D__DAV_VEC__") && !aiv.iter().any(|f| f == "-D__DAV_CUBE__"));
    assert!(!orch.iter().any(|f| f.contains("__DAV_")));
    assert!(
        aic.contains(&"-D__aicore__=".to_string()) && aiv.contains(&"-D__aicore__=".to_string())
    );
    assert_ne!(aic, aiv);

    // Extra include dirs come after the PTO headers and are absolute.
    let last = aiv.last().cloned().unwrap_or_default();
    let extra = last
        .strip_prefix("-I")
        .map(PathBuf::from)
        .unwrap_or_default();
    assert!(extra.is_absolute() && extra.ends_with("rel/inc"), "{last}");

    // Same source, different core kind: different objects.
    write(&src, "extern \"C\" int f() { return 1; }\n")?;
    let a = tc.compile(&CompileUnit::new(&src, UnitKind::Kernel(CoreKind::Aic)))?;
    let v = tc.compile(&CompileUnit::new(&src, UnitKind::Kernel(CoreKind::Aiv)))?;
    assert!(!v.cache_hit);
    assert_ne!(a.key, v.key);
    Ok(())
}

#[test]
fn embedded_headers_are_materialized() -> TestResult {
    let (_dir, tc) = setup()?;
    assert!(tc.include_dir().is_dir());
    for (rel, contents) in pto_toolchain::embedded_headers() {
        assert_eq!(
            std::fs::read(tc.include_dir().join("..").join(rel))?,
            *contents
        );
    }
    Ok(())
}

#[test]
fn concurrent_compiles_of_the_same_unit() -> TestResult {
    let (dir, tc) = setup()?;
    let src = write(
        &dir.path().join("k.cpp"),
        "extern \"C\" int f() { return 7; }\n",
    )?;
    let units = vec![CompileUnit::new(&src, UnitKind::Orchestration); 3];
    let results = tc.compile_all(&units);
    let mut keys = Vec::new();
    for r in results {
        let obj = r?;
        assert!(obj.so_path.is_file());
        keys.push(obj.key);
    }
    keys.dedup();
    assert_eq!(keys.len(), 1);
    assert!(tc.compile(&units[0])?.cache_hit);
    // No temporary files are left behind.
    assert_eq!(std::fs::read_dir(tc.objects_dir().join("tmp"))?.count(), 0);
    Ok(())
}

#[test]
fn spawn_failure_names_the_compiler() -> TestResult {
    let dir = tempfile::tempdir()?;
    let err = Toolchain::with_compiler("pto-no-such-compiler-xyz", dir.path()).err();
    assert!(matches!(err, Some(ToolchainError::Spawn { .. })), "{err:?}");
    let text = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains("pto-no-such-compiler-xyz"), "{text}");
    assert_eq!(
        ToolchainError::NoCompiler.to_string(),
        "no C++ compiler found: install g++ (apt-get install g++) or set CXX"
    );
    Ok(())
}

#[test]
fn a_kernel_with_the_device_fallback_for_aicore_compiles() -> TestResult {
    // Kernels written for the device compiler define `__aicore__` themselves when the
    // compiler does not, before any include; on the simulator the command line defines it
    // empty, so that fallback (an attribute g++ cannot parse) is never taken.
    let (dir, tc) = setup()?;
    let src = write(
        &dir.path().join("aiv/k.cpp"),
        "#include <cstdint>\n#ifndef __aicore__\n#define __aicore__ [aicore]\n#endif\n#include \"tensor.h\"\nextern \"C\" __aicore__ void kernel_entry(int64_t* args) { (void)args; }\n",
    )?;
    let out = tc.compile(&CompileUnit::new(&src, UnitKind::Kernel(CoreKind::Aiv)))?;
    assert!(exports(&out.so_path, "kernel_entry"));
    Ok(())
}
