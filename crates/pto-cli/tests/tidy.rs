//! Code-base invariants checked as tests: module docs, no `should_panic`/`ignore`, the
//! layering of crates (docs/ARCHITECTURE.md), no library function over 150 lines without
//! a listed reason, and no hand-written list of the diagnostics switches or of the element
//! types outside the listed files.

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
    let mut ir: Vec<String> = library_deps("pto-ir")
        .into_iter()
        .filter(|d| d != "pto-base")
        .collect();
    ir.sort();
    assert_eq!(ir, ["pto-build-output", "ptoas"], "pto-ir");
}

/// The workspace crates named in backticks in `text` (`` `pto-base` ``), in order.
fn backticked_crates(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| w.starts_with("pto-") || *w == "ptoas")
        .map(str::to_string)
        .collect()
}

/// docs/ARCHITECTURE.md's sections `### `crates/<name>`` and, for each, the crates its
/// `Depends on:` line lists and those its `Tests also:` part lists.
fn architecture_sections(doc: &str) -> Vec<(String, Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    for section in doc.split("\n### `crates/").skip(1) {
        let name = section.split('`').next().unwrap_or("").to_string();
        let body = section.split("\n## ").next().unwrap_or("");
        let line = body
            .lines()
            .find(|l| l.starts_with("Depends on: "))
            .unwrap_or("");
        let (lib, tests) = line.split_once(" Tests also: ").unwrap_or((line, ""));
        out.push((name, backticked_crates(lib), backticked_crates(tests)));
    }
    out
}

#[test]
fn the_architecture_lists_every_crate_and_its_dependencies() {
    let doc = std::fs::read_to_string(workspace().join("docs/ARCHITECTURE.md")).unwrap();
    let mut crates: Vec<String> = std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .flatten()
        .filter(|k| k.path().join("Cargo.toml").is_file())
        .map(|k| k.file_name().to_string_lossy().into_owned())
        .collect();
    crates.sort();
    let sections = architecture_sections(&doc);
    let mut named: Vec<String> = sections.iter().map(|(n, _, _)| n.clone()).collect();
    named.sort();
    assert_eq!(
        named, crates,
        "docs/ARCHITECTURE.md: one `### `crates/<name>`` section per crate"
    );
    let diagram = doc
        .split("## Layers and data flow")
        .nth(1)
        .and_then(|d| d.split("```").nth(1))
        .unwrap_or("");
    for krate in &crates {
        assert!(
            has_word(diagram, krate, |c| c.is_alphanumeric() || c == '-'),
            "docs/ARCHITECTURE.md's layer diagram does not name {krate}"
        );
    }
    for (krate, lib, tests) in sections {
        let sorted = |v: Vec<String>| {
            let mut v = v;
            v.sort();
            v.dedup();
            v
        };
        let want_lib = sorted(library_deps(&krate));
        let want_tests: Vec<String> = sorted(internal_deps(&krate))
            .into_iter()
            .filter(|d| !want_lib.contains(d))
            .collect();
        assert_eq!(
            (sorted(lib), sorted(tests)),
            (want_lib, want_tests),
            "docs/ARCHITECTURE.md, `crates/{krate}`: its `Depends on: ... Tests also: ...` line \
             must list the workspace crates of its Cargo.toml ([dependencies]; the others)"
        );
    }
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
    // The formats are the contract alone: no build directory, no ptoas, no viewer.
    check(
        "pto-dfx",
        &[
            "pto-runtime",
            "pto-runner",
            "pto-toolchain",
            "pto-cli",
            "pto-python",
            "pto-build-output",
            "ptoas",
            "pto-dfx-view",
        ],
    );
    // Viewers need only files.
    check(
        "pto-dfx-view",
        &[
            "pto-runtime",
            "pto-runner",
            "pto-toolchain",
            "pto-cli",
            "pto-python",
        ],
    );
    // The runner writes the formats; it links no viewer (its tests may read through one).
    assert!(
        !library_deps("pto-runner")
            .iter()
            .any(|d| d == "pto-dfx-view"),
        "pto-runner must not link pto-dfx-view"
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
        "pto-dfx-view",
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

/// Text that starts a copy of a helper `pto-base` owns (docs/ARCHITECTURE.md): a second
/// definition, or the mark of a second implementation.
const HELPER_COPY_PATTERNS: &[&str] = &[
    "fn human_size(",
    "fn read_limited(",
    "fn sync_before_rename(",
    // A temporary named `<stem>.<pid>.tmp`: two writers in one process would share it.
    concat!("with_extension(format!(\"{}.", "tmp\""),
    // Simpler's element-type table (pto_base::dtype): a second match arm naming a code's
    // upper-case name is a second table.
    "=> \"BFLOAT16\"",
    // Python's repr of strings and floats (pto_base::pyrepr).
    "fn repr_float(",
    "fn repr_str(",
    "fn py_float(",
    "fn py_shape(",
    // Hex and SHA-256 (pto_base::hash): SHA-256 used directly, or a hex encoder.
    "Sha256",
    "fn sha256_hex(",
    "fn hex(",
    concat!("{b:0", "2x}"),
    // JSON strings (pto_base::json): a `\uXXXX` escape written by hand.
    concat!("\"\\\\", "u{"),
    concat!("\"\\\\", "u00"),
    // An atomic write (pto_base::fs: write_atomic, AtomicFile, copy_atomic): a rename of a
    // file written here over its target.
    concat!("fs::", "rename("),
];

/// Files that may hold a [`HELPER_COPY_PATTERNS`] match that is not a copy: (file under
/// `crates/`, pattern, why).
#[rustfmt::skip]
const HELPER_COPY_EXCEPTIONS: &[(&str, &str, &str)] = &[
    ("pto-dfx-view/src/html.rs", concat!("\"\\\\", "u{"), "script_json: makes serde_json's output safe inside <script> (<, >, &, U+2028/9), not a string escaper"),
    ("pto-dfx/src/printable.rs", concat!("\"\\\\", "u{"), "Rust-style \\u{..} escapes of terminal text, not JSON"),
    ("pto-dfx-view/src/dump_viewer.rs", concat!("{b:0", "2x}"), "an FP8 / FP4 value shown as its bytes, 0x-prefixed (Simpler's dump_viewer), not a digest"),
    ("pto-toolchain/build.rs", "Sha256", "hashes the work tree in chunks for the dirty revision (a streaming digest; its hex is pto_base's)"),
    ("pto-toolchain/src/pto_rebuild.rs", concat!("fs::", "rename("), "moves ptoas's output, written to a pto_base temporary, over the raw cpp once spliced"),
    ("pto-toolchain/src/toolchain.rs", concat!("fs::", "rename("), "moves the compiler's output (a unique temporary it wrote) into the object cache"),
    ("pto-toolchain/src/headers.rs", concat!("fs::", "rename("), "renames a populated header directory into place (a directory, not a file)"),
    ("pto-toolchain/src/toolchain/pch.rs", concat!("fs::", "rename("), "moves the compiler's precompiled header (a unique temporary it wrote) into gcc's .gch directory"),
    ("pto-runner/src/dfx_publish.rs", concat!("fs::", "rename("), "publishes a run's staged diagnostics: moves finished files"),
    ("pto-runner/src/chip_process/l3_child.rs", concat!("fs::", "rename("), "gives a finished name map its L3 name"),
    ("pto-runtime/src/dfx.rs", concat!("fs::", "rename("), "args.bin, written at offsets from several threads into pto_base::fs::temporary_beside"),
];

/// Where `text` (the file `rel`, under `crates/`) has a copy of a helper (its `#[cfg(test)]`
/// module, where expected texts spell escapes, not counted).
fn helper_copies(rel: &str, text: &str) -> Vec<String> {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    HELPER_COPY_PATTERNS
        .iter()
        .filter(|p| text.contains(*p))
        .filter(|p| {
            !HELPER_COPY_EXCEPTIONS
                .iter()
                .any(|(f, q, _)| *f == rel && q == *p)
        })
        .map(|p| format!("{rel}: {p}"))
        .collect()
}

#[test]
fn the_shared_helpers_have_one_copy() {
    // The measure, on made-up text: a copy is found, and an exception holds only for its
    // own file and pattern.
    let sha = "let d = sha2::Sha256::digest(x);";
    assert_eq!(helper_copies("a/src/x.rs", sha), ["a/src/x.rs: Sha256"]);
    let json = concat!("write!(out, \"\\\\", "u{:04x}\", c as u32)");
    assert_eq!(helper_copies("a/src/x.rs", json).len(), 1);
    assert!(helper_copies("pto-dfx-view/src/html.rs", json).is_empty());
    let rename = concat!("std::fs::", "rename(&tmp, &dest)");
    assert_eq!(helper_copies("pto-dfx-view/src/html.rs", rename).len(), 1);
    // pto-base owns these: every library source (build scripts included) elsewhere is
    // checked.
    let root = workspace().join("crates");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .filter(|k| k.file_name() != "pto-base")
    {
        rust_files(&krate.path().join("src"), &mut files);
        files.push(krate.path().join("build.rs"));
    }
    let copies: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let rel = f
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            helper_copies(&rel, &std::fs::read_to_string(f).unwrap_or_default())
        })
        .collect();
    assert!(
        copies.is_empty(),
        "use pto_base instead (or add an exception with the reason): {copies:?}"
    );
    let unused: Vec<_> = HELPER_COPY_EXCEPTIONS
        .iter()
        .filter(|(f, p, _)| {
            !std::fs::read_to_string(root.join(f))
                .unwrap_or_default()
                .contains(p)
        })
        .map(|(f, p, _)| format!("{f}: {p}"))
        .collect();
    assert!(
        unused.is_empty(),
        "HELPER_COPY_EXCEPTIONS entries with no match (remove them): {unused:?}"
    );
}

/// The longest a function in library code may be, in lines (issue 25).
const MAX_FN_LINES: usize = 150;

/// Functions allowed past [`MAX_FN_LINES`]: (file under `crates/`, function name, why).
#[rustfmt::skip]
const LONG_FN_ALLOWLIST: &[(&str, &str, &str)] = &[
    // A data table: one row per kernel of docs/TIMING.md's validation table.
    ("pto-timing/src/validation.rs", "kernels", "a data table (docs/TIMING.md's rows)"),
];

/// If `line` starts a function (`^\s*(pub(\(crate\)|\(super\))? )?(async )?(const )?(unsafe )?fn `),
/// its name.
fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    for prefix in ["pub(crate) ", "pub(super) ", "pub "] {
        if let Some(r) = rest.strip_prefix(prefix) {
            rest = r;
            break;
        }
    }
    for prefix in ["async ", "const ", "unsafe "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The leading whitespace of `line`.
fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The functions of `text` longer than `max` lines, as (name, first line, length).
///
/// The measure is deliberately simple: a function runs from the line that starts it
/// ([`fn_name`]) to the first later line that is its indentation followed by `}`; one
/// without a body (a signature ending in `;` before any line ending in `{`) is skipped.
/// A `#[cfg(test)]` module (the attribute, then `mod name {`, to the `}` at the module's
/// indentation) is test code and skipped.
fn long_functions(text: &str, max: usize) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let closes = |from: usize, ind: &str| {
        (from..lines.len()).find(|&j| lines[j].trim_end().strip_prefix(ind) == Some("}"))
    };
    let mut long = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim() == "#[cfg(test)]" {
            let next = lines.get(i + 1).copied().unwrap_or("");
            if next.trim_start().starts_with("mod ") && next.trim_end().ends_with('{') {
                i = closes(i + 2, indent(next)).unwrap_or(lines.len()) + 1;
                continue;
            }
        }
        if let Some(name) = fn_name(line) {
            let body = (i..lines.len())
                .find(|&j| {
                    let t = lines[j].trim_end();
                    t.ends_with('{') || t.ends_with(';') || t.ends_with('}')
                })
                .filter(|&j| !lines[j].trim_end().ends_with(';'));
            if let Some(end) = body.and_then(|j| {
                if lines[j].trim_end().ends_with('}') && j == i {
                    Some(j)
                } else {
                    closes(j + 1, indent(line))
                }
            }) {
                let n = end - i + 1;
                if n > max {
                    long.push((name.to_string(), i + 1, n));
                }
            }
        }
        i += 1;
    }
    long
}

#[test]
fn library_functions_are_at_most_150_lines() {
    // The measure itself, on a made-up file: a 152-line function counts (signature and
    // closing brace included), a bodiless signature and a `#[cfg(test)]` module do not.
    let body = "    let x = 1;\n".repeat(150);
    let sample = format!(
        "trait T {{\n    fn f(&self);\n}}\npub(crate) fn long() {{\n{body}}}\nfn short() {{}}\n\
         #[cfg(test)]\nmod tests {{\n    fn in_test() {{\n{body}    }}\n}}\n"
    );
    assert_eq!(
        long_functions(&sample, MAX_FN_LINES),
        [("long".to_string(), 4, 152)]
    );
    // Library code: `crates/*/src/**/*.rs`, without `tests.rs`, `tests/` directories and
    // `#[cfg(test)]` modules.
    let crates = workspace().join("crates");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(&crates).unwrap().flatten() {
        rust_files(&krate.path().join("src"), &mut files);
    }
    files.retain(|f| {
        f.file_name().is_some_and(|n| n != "tests.rs")
            && !f.components().any(|c| c.as_os_str() == "tests")
    });
    files.sort();
    assert!(files.len() > 20);
    let mut too_long = Vec::new();
    let mut allowed_seen = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&crates)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(f).unwrap();
        for (name, line, n) in long_functions(&text, MAX_FN_LINES) {
            if LONG_FN_ALLOWLIST
                .iter()
                .any(|(p, fn_, _)| *p == rel && *fn_ == name)
            {
                allowed_seen.push((rel.clone(), name));
            } else {
                too_long.push(format!("{rel}:{line}: fn {name} has {n} lines"));
            }
        }
    }
    let stale: Vec<_> = LONG_FN_ALLOWLIST
        .iter()
        .filter(|(p, name, _)| !allowed_seen.iter().any(|(q, m)| q == p && m == name))
        .map(|(p, name, _)| format!("{p}: fn {name}"))
        .collect();
    assert!(
        too_long.is_empty(),
        "functions over {MAX_FN_LINES} lines: split them along their seams, or add them to \
         LONG_FN_ALLOWLIST with the reason they must be one piece:\n{}",
        too_long.join("\n")
    );
    assert!(
        stale.is_empty(),
        "LONG_FN_ALLOWLIST entries no longer over {MAX_FN_LINES} lines (remove them): {stale:?}"
    );
}

/// Files that may spell several diagnostics switches out by hand (repository path, what the
/// list is and the test that ties it to `pto_runner::dfx_switches::DFX_SWITCHES`). Every
/// other list is made from the table (docs/ARCHITECTURE.md, "Adding a diagnostics switch").
#[rustfmt::skip]
const SWITCH_LIST_ALLOWLIST: &[(&str, &str)] = &[
    ("crates/pto-runner/src/config.rs", "the DfxOptions fields and their runtime counterparts: dfx_switches::tests::the_table_covers_every_diagnostics_field, tests/dfx.rs each_switch_alone_writes_its_artifact"),
    ("crates/pto-runner/src/dfx_output.rs", "one writer per artifact: tests/dfx.rs each_switch_alone_writes_its_artifact"),
    ("crates/pto-runtime/src/dfx.rs", "the chip's own DfxConfig: tests/dfx.rs each_switch_alone_writes_its_artifact"),
    ("crates/pto-build-output/src/run_script.rs", "the flags of PyPTO's debug/run.py (both forms): python/tests/test_run_script.py"),
    ("python/pypto/_native.pyi", "RunOptions' getters: test_dfx_switches.py test_each_switch_reaches_the_native_options_alone, mypy.stubtest"),
    ("python/pypto/runtime/device_runner.py", "PyPTO's execute_on_device signature: test_dfx_switches.py test_the_dataclasses_declare_every_switch"),
    ("python/pypto/runtime/runner.py", "RunConfig / DfxOptions fields and PyPTO 2026-08's positional order: test_dfx_switches.py"),
    ("python/pypto/runtime/_simpler_compat/_task_interface.py", "Simpler's CallConfig fields: test_dfx_switches.py test_the_dataclasses_declare_every_switch"),
    ("python/pypto/testing/pytest_plugin.py", "PyPTO's pytest flags: python/tests/test_pytest_plugin.py"),
];

/// Whether `text` has `word` with no identifier character on either side.
fn has_word(text: &str, word: &str, continues: impl Fn(char) -> bool) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_') && !after.is_some_and(&continues)
    })
}

/// How many switches `text` names: by Python keyword, field name or `pto` flag.
fn switches_named(text: &str) -> usize {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let flag = |c: char| c.is_alphanumeric() || c == '-';
    pto_runner::dfx_switches::DFX_SWITCHES
        .iter()
        .filter(|s| {
            text.contains(s.python_keyword)
                || has_word(text, s.name, ident)
                || has_word(text, &format!("--{}", s.cli_flag), flag)
        })
        .count()
}

/// The first lines of the stretches of `text` where six consecutive lines name three or
/// more switches (Rust's `#[cfg(test)]` modules not counted).
fn switch_lists(text: &str) -> Vec<usize> {
    lists_in(text, |window| switches_named(window) >= 3)
}

/// The first lines of the stretches of `text` where a window of six consecutive lines is
/// a `list` (Rust's `#[cfg(test)]` modules not counted).
fn lists_in(text: &str, list: impl Fn(&str) -> bool) -> Vec<usize> {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    let lines: Vec<&str> = text.lines().collect();
    let mut starts = Vec::new();
    let mut inside = false;
    for i in 0..lines.len() {
        let listed = list(&lines[i..(i + 6).min(lines.len())].join("\n"));
        if listed && !inside {
            starts.push(i + 1);
        }
        inside = listed;
    }
    starts
}

/// The files of `roots` (under the workspace: `crates/*/src` when `crates`, and the
/// directories given, with their extensions) where `lists` finds a list, checked against
/// `allowlist` (named `allowlist_name` in the messages): a list outside it fails with
/// `fix`, and an entry whose file has no list any more is stale.
fn check_listed_once(
    roots: &[(&str, &[&str])],
    allowlist: &[(&str, &str)],
    allowlist_name: &str,
    fix: &str,
    lists: impl Fn(&str) -> Vec<usize>,
) {
    let root = workspace();
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        source_files(&krate.path().join("src"), &["rs"], &mut files);
    }
    for (dir, exts) in roots {
        source_files(&root.join(dir), exts, &mut files);
    }
    files.retain(|f| f.file_name().is_some_and(|n| n != "tests.rs"));
    files.sort();
    let mut found = Vec::new();
    let mut allowed_seen = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let starts = lists(&std::fs::read_to_string(f).unwrap_or_default());
        if starts.is_empty() {
            continue;
        }
        if allowlist.iter().any(|(p, _)| *p == rel) {
            allowed_seen.push(rel);
        } else {
            found.push(format!("{rel}:{}", starts[0]));
        }
    }
    assert!(
        found.is_empty(),
        "{fix}, or add the file to {allowlist_name} with the test that ties it to the \
         table:\n{}",
        found.join("\n")
    );
    let stale: Vec<_> = allowlist
        .iter()
        .filter(|(p, _)| !allowed_seen.iter().any(|q| q == p))
        .map(|(p, _)| *p)
        .collect();
    assert!(
        stale.is_empty(),
        "{allowlist_name} entries with no list (remove them): {stale:?}"
    );
}

fn source_files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != "tests") {
            source_files(&p, exts, out);
        } else if p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)) {
            out.push(p);
        }
    }
}

#[test]
fn the_diagnostics_switches_are_listed_once() {
    // The measure, on made-up text: three switches within six lines are a list (reported
    // at the window's first line), two are not, nor are longer names that contain one.
    assert_eq!(
        switch_lists("enable_pmu\nx.dep_gen\n\n\n\n`--scope-stats`\n"),
        [1]
    );
    assert!(switch_lists("enable_pmu\nx.dep_gen\n\n\n\n\n`--scope-stats`\n").is_empty());
    assert!(switch_lists("pmu_rows\ndump_args_level\n--swimlane-level\ndep_gen\n").is_empty());
    check_listed_once(
        &[("python/pypto", &["py", "pyi"]), ("include", &["h", "hpp"])],
        SWITCH_LIST_ALLOWLIST,
        "SWITCH_LIST_ALLOWLIST",
        "the diagnostics switches spelled out by hand: make the list from \
         pto_runner::dfx_switches::DFX_SWITCHES (Python: pypto.runtime._dfx_switches)",
        switch_lists,
    );
}

/// Files that may spell several element types out by hand (repository path, what the list is
/// and the test that ties it to `pto_base::dtype`). Every other mapping between dtype
/// spellings is read from the table (Python: `pypto._dtypes`).
#[rustfmt::skip]
const DTYPE_LIST_ALLOWLIST: &[(&str, &str)] = &[
    ("crates/pto-base/src/dtype.rs", "the table itself"),
    ("crates/pto-ir/src/types.rs", "the IR's DataType variants by member name: types::tests::data_types_are_rows_of_the_table"),
    ("crates/pto-timing/src/op.rs", "the trace header's own codes and names: op::tests::dtypes_agree_with_the_element_type_table"),
    ("crates/ptoas/src/types.rs", "the .pto scalar types (f64, si8 too) and their C++: types::tests::scalar_types_agree_with_the_element_type_table"),
    ("python/pypto/__init__.py", "PyPTO's DT_* constants: test_element_types.py test_package_constants_are_the_table"),
    ("python/pypto/language/__init__.py", "pl.FP32 ... re-exported: test_element_types.py test_dsl_constants_are_the_generated_types"),
    ("python/pypto/language/_surface.py", "pl.FP32 ... for type checkers: test_element_types.py test_dsl_constants_are_the_generated_types"),
    ("python/pypto/pypto_core/datatype.py", "DataType's member annotations: test_element_types.py test_datatype_members_are_the_table"),
    ("python/pypto/runtime/_simpler_compat/_task_interface.py", "Simpler's DataType enum: test_l3.py test_data_type_members_are_the_native_element_type_table"),
];

/// Every spelling of an element type the table knows, with the type it names (an index:
/// PyPTO's rows, then Simpler's types that have none). Spellings that are ordinary words or
/// Rust's own types (`float`, `half`, the `.pto` names `i8`, `f32`, ...) are left out.
fn dtype_spellings() -> Vec<(&'static str, usize)> {
    use pto_base::dtype::{ALL, ELEMENT_TYPES};
    let mut out = Vec::new();
    for (i, t) in ELEMENT_TYPES.iter().enumerate() {
        out.extend([t.member, t.name].map(|s| (s, i)));
        out.extend(t.aliases.iter().map(|&s| (s, i)));
        out.extend(t.c_type.filter(|c| c.ends_with("_t")).map(|s| (s, i)));
        if let Some(row) = t.simpler.map(|d| d.row()) {
            out.extend(
                [Some(row.torch_name), row.numpy_attr]
                    .into_iter()
                    .flatten()
                    .map(|s| (s, i)),
            );
        }
    }
    for d in ALL {
        let i = d
            .element_type()
            .and_then(|t| ELEMENT_TYPES.iter().position(|u| u == t))
            .unwrap_or(ELEMENT_TYPES.len() + d.code() as usize);
        out.push((d.name(), i));
    }
    // A spelling two rows share (`int64_t`: INT64 and INDEX) names the first.
    let mut seen = Vec::new();
    out.retain(|&(s, _)| {
        let new = !seen.contains(&s);
        seen.push(s);
        new
    });
    out
}

/// How many element types `text` names, by any spelling of [`dtype_spellings`].
fn dtypes_named(text: &str, spellings: &[(&str, usize)]) -> usize {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut types: Vec<usize> = spellings
        .iter()
        .filter(|(s, _)| has_word(text, s, ident))
        .map(|&(_, i)| i)
        .collect();
    types.sort_unstable();
    types.dedup();
    types.len()
}

/// The first lines of the stretches of `text` where six consecutive lines name six or more
/// element types (Rust's `#[cfg(test)]` modules not counted).
fn dtype_lists(text: &str, spellings: &[(&str, usize)]) -> Vec<usize> {
    lists_in(text, |window| dtypes_named(window, spellings) >= 6)
}

#[test]
fn the_element_types_are_listed_once() {
    let spellings = dtype_spellings();
    // The measure, on made-up text: six types within six lines are a list, in any spelling
    // (`FP32` and `float32` are one type); five are not, nor are longer names.
    let six = "\"fp32\" FLOAT16 bf16\nINT8\n\n\n\nuint16 \"int64_t\"\n";
    assert_eq!(dtype_lists(six, &spellings), [1]);
    assert!(dtype_lists(
        "fp32 FLOAT32 float32\nINT8 bf16 uint16 int64_t\n",
        &spellings
    )
    .is_empty());
    assert!(dtype_lists("fp32x int8y FP16_MAX bf16s uint16z int64w\n", &spellings).is_empty());
    check_listed_once(
        &[("python/pypto", &["py", "pyi"])],
        DTYPE_LIST_ALLOWLIST,
        "DTYPE_LIST_ALLOWLIST",
        "element types spelled out by hand: read them from pto_base::dtype (Python: \
         pypto._dtypes)",
        |text| dtype_lists(text, &spellings),
    );
}
