//! The `ptoas` binary as PyPTO runs it: options in both spellings, files and standard
//! streams, exit codes and `Error: ...` messages, nothing written on failure.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::common::{data, scratch};

fn ptoas(args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ptoas"));
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Some(s) = stdin {
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    } else {
        drop(child.stdin.take());
    }
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn write(dir: &std::path::Path, name: &str, content: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn pypto_invocation_writes_the_output_file() {
    let dir = scratch("cli_basic");
    let input = write(&dir, "vadd.pto", &data("vadd.pto"));
    let out = dir.join("vadd.cpp");
    let _ = std::fs::remove_file(&out);
    let o = ptoas(
        &[
            &input,
            "-o",
            out.to_str().unwrap(),
            "--enable-insert-sync",
            "--pto-level=level2",
        ],
        None,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "");
    assert_eq!(text(&o.stderr), "");
    let cpp = std::fs::read_to_string(&out).unwrap();
    assert!(cpp.starts_with("#include \"pto/pto-inst.hpp\"\nusing namespace pto;\n"));
    assert!(cpp.contains("__global__ AICORE void vadd("));
    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".ptoas-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn standard_streams_and_option_spellings() {
    let vadd = data("vadd.pto");
    let a = ptoas(&["-"], Some(&vadd));
    assert!(a.status.success(), "{}", text(&a.stderr));
    let b = ptoas(
        &["--pto-arch", "a5", "-pto-level", "level2", "-"],
        Some(&vadd),
    );
    let c = ptoas(&["--pto-arch=A5", "--pto-level=LEVEL2"], Some(&vadd));
    assert!(b.status.success() && c.status.success());
    assert_eq!(b.stdout, c.stdout);
    assert_eq!(
        text(&a.stdout),
        text(&b.stdout),
        "a3 and a5 lower vadd alike"
    );
    let l3 = ptoas(&["--pto-level", "level3", "-"], Some(&data("softmax.pto")));
    assert!(l3.status.success(), "{}", text(&l3.stderr));
}

#[test]
fn version_and_help() {
    let o = ptoas(&["--version"], None);
    assert!(o.status.success());
    assert_eq!(
        text(&o.stdout),
        format!("ptoas {} (pto-sim translator)\n", env!("CARGO_PKG_VERSION"))
    );
    let h = ptoas(&["--help"], None);
    assert!(text(&h.stdout).contains("--pto-level=<level1|level2|level3>"));
}

#[test]
fn bad_options_exit_1_with_error_lines() {
    for (args, want) in [
        (
            vec!["--pto-arch=a7"],
            "Error: invalid --pto-arch='a7'. Expected 'a3' or 'a5'.\n",
        ),
        (
            vec!["--pto-level", "level4"],
            "Error: invalid --pto-level='level4'. Expected 'level1', 'level2', or 'level3'.\n",
        ),
        (
            vec!["--frobnicate"],
            "Error: unknown option '--frobnicate' (see ptoas --help)\n",
        ),
        (vec!["-o"], "Error: option '-o' requires a value\n"),
        (
            vec!["a.pto", "b.pto"],
            "Error: too many positional arguments: 'b.pto' (one input file)\n",
        ),
    ] {
        let o = ptoas(&args, Some(""));
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(text(&o.stderr), want, "{args:?}");
        assert_eq!(text(&o.stdout), "");
    }
    let o = ptoas(&["/nonexistent/x.pto"], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).starts_with("Error: Could not open input file: "),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_failed_translation_leaves_the_output_untouched() {
    let dir = scratch("cli_fail");
    // vadd has no addr: level 3 refuses it.
    let input = write(&dir, "vadd.pto", &data("vadd.pto"));
    let out = write(&dir, "vadd.cpp", "previous contents\n");
    let o = ptoas(&[&input, "-o", &out, "--pto-level=level3"], None);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "Error: {input}:14:5: 'pto.alloc_tile' op requires 'addr' operand when --pto-level=level3\n"
        )),
        "{err}"
    );
    assert!(
        err.contains("\n      %ta = pto.alloc_tile"),
        "the line is shown: {err}"
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "previous contents\n"
    );
}

#[test]
fn the_arch_defaults_to_the_modules_target() {
    let too_big = data("too_big.pto");
    let a5 = too_big.replace("module {", "module attributes {pto.target_arch = \"a5\"} {");
    assert!(
        ptoas(&["-"], Some(&a5)).status.success(),
        "256 KiB UB on a5"
    );
    let o = ptoas(&["--pto-arch", "a3", "-"], Some(&a5));
    assert_eq!(o.status.code(), Some(1), "the option wins");
    assert!(text(&o.stderr).contains("does not fit in UB: 192 KiB on a3"));
    let a2a3 = too_big.replace(
        "module {",
        "module attributes {pto.target_arch = \"a2a3\"} {",
    );
    assert_eq!(
        ptoas(&["-"], Some(&a2a3)).status.code(),
        Some(1),
        "anything but a5 is a3"
    );
}

#[test]
fn ir_printing_flags_are_accepted() {
    let dir = scratch("cli_ir");
    let tree = dir.join("tree");
    let _ = std::fs::remove_dir_all(&tree);
    let vadd = data("vadd.pto");
    let flag = format!("--mlir-print-ir-tree-dir={}", tree.display());
    let o = ptoas(
        &[
            "--mlir-print-ir-after-all",
            "--mlir-print-ir-module-scope",
            &flag,
            "-",
        ],
        Some(&vadd),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let dump = std::fs::read_to_string(tree.join("ptoas/0_parse.pto")).unwrap();
    assert!(dump.starts_with("// -----// IR Dump After Parse (ptoas) //----- //\nmodule"));
    // The dump is itself valid input.
    let body = dump.split_once('\n').unwrap().1;
    assert!(ptoas::parse(body, "dump.pto", ptoas::Arch::A3).is_ok());
    let o = ptoas(&["--mlir-print-ir-after-all", "-"], Some(&vadd));
    assert!(text(&o.stderr).contains("IR Dump After Parse"));
    assert!(text(&o.stdout).contains("AICORE void vadd("));
}
