//! The `.pto` edit loop on a bundled PTO-ISA example, as a new user runs it with no ptoas
//! installed: edit `ptoas/softmax_prepare.pto` of `paged_attn_bf16` (double the attention
//! scale), `pto replay DIR --validate`, and see the bundled translator, the splice, the
//! recompile of that one kernel and the changed result; the seed's table when the wrapper is
//! edited too; and both ways of turning the splice off.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

use common::{example, text};

const KERNEL: &str = "kernels/aiv/softmax_prepare.cpp";
const UNIT: &str = "ptoas/softmax_prepare.pto";

/// `PATH` without any directory that holds a `ptoas`, so the bundled translator runs.
fn path_without_ptoas() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| !d.join("ptoas").exists())
        .collect();
    std::env::join_paths(dirs).unwrap().into_string().unwrap()
}

/// `pto replay DIR --validate --log-level info [extra]` with no ptoas anywhere.
fn replay(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pto"));
    c.arg("replay")
        .arg(dir)
        .args(["--validate", "--log-level", "info"])
        .args(extra)
        .env_remove("PTOAS_ROOT")
        .env_remove("PYPTO_REBUILD_FROM_PTO")
        .env("PATH", path_without_ptoas())
        .env("NO_COLOR", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Sets the mtime of `path` to `at`.
fn set_mtime(path: &Path, at: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(at)
        .unwrap();
}

/// A copy of `paged_attn_bf16` whose `ptoas/<unit>.cpp` stamps are newer than their `.pto`
/// (a plain copy, like a checkout, does not keep the order the generator wrote them in).
fn fresh_copy(tag: &str) -> PathBuf {
    let dir = example("pto_loop", "paged_attn_bf16", tag);
    let now = SystemTime::now();
    for e in std::fs::read_dir(dir.join("ptoas")).unwrap().flatten() {
        let p = e.path();
        // Both in the past, so an edit made now is newer than the stamp on any file system.
        let t = if p.extension().is_some_and(|x| x == "cpp") {
            now - Duration::from_secs(5)
        } else {
            now - Duration::from_secs(10)
        };
        set_mtime(&p, t);
    }
    dir
}

/// Doubles the scale in `softmax_prepare.pto`: `tmuls` by `scale * 2.0` instead of `scale`
/// (the product is named `%scale_x2<suffix>`, which its `// pto:` comment carries into the
/// C++); written now, the `.pto` is newer than the stamps [`fresh_copy`] left.
fn double_the_scale_in_the_pto(dir: &Path, suffix: &str) {
    let path = dir.join(UNIT);
    let pto = std::fs::read_to_string(&path).unwrap();
    let edited = pto
        .replacen(
            "  %c0_i64 = arith.constant 0 : i64\n",
            &format!("  %c0_i64 = arith.constant 0 : i64\n  %cst_2 = arith.constant 2.00000000000000000e+00 : f32\n  %scale_x2{suffix} = arith.mulf %arg1, %cst_2 : f32\n"),
            1,
        )
        .replacen(
            "pto.tmuls ins(%s_padded, %arg1 :",
            &format!("pto.tmuls ins(%s_padded, %scale_x2{suffix} :"),
            1,
        );
    assert_ne!(edited, pto, "the edit must apply to the bundled .pto");
    std::fs::write(&path, edited).unwrap();
}

/// Halves the `scale` the orchestration passes (`data/in/scale.npy`, a 0-d fp32 array: its
/// last four bytes). Halving and doubling are exact, so with the doubled kernel the result
/// is the golden again, bit for bit.
fn halve_the_scale_input(dir: &Path) {
    let path = dir.join("data/in/scale.npy");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - 4;
    let v = f32::from_le_bytes(bytes[at..].try_into().unwrap());
    bytes[at..].copy_from_slice(&(v / 2.0).to_le_bytes());
    std::fs::write(&path, bytes).unwrap();
}

/// The text between the sentinels, and the text outside them.
fn split_kernel(cpp: &str) -> (String, String) {
    let (head, rest) = cpp
        .split_once("// --- ptoas-generated code ---\n")
        .expect("begin sentinel");
    let (body, tail) = rest
        .split_once("// --- Kernel entry point ---")
        .expect("end sentinel");
    (body.to_string(), format!("{head}|{tail}"))
}

#[test]
fn an_edited_pto_is_spliced_recompiled_and_changes_the_result() {
    let dir = fresh_copy("edit");
    let o = replay(&dir, &[], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "the bundled example passes: {t}");
    assert!(t.contains("[pto->cpp] no .pto changes detected"), "{t}");
    let before = std::fs::read_to_string(dir.join(KERNEL)).unwrap();

    // A name no earlier run used, so the edited kernel is new to the compiler cache too.
    let nonce = format!(
        "_{}_{}",
        std::process::id(),
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    double_the_scale_in_the_pto(&dir, &nonce);
    let o = replay(&dir, &[], &[]);
    let t = text(&o);
    for line in [
        "[pto->cpp] using the bundled ptoas translator (no ptoas on PTOAS_ROOT or PATH)\n",
        "[pto->cpp] regenerating from ptoas/softmax_prepare.pto\n",
        "[pto->cpp]   spliced -> kernels/aiv/softmax_prepare.cpp\n",
        "[pto->cpp] updated 1 kernel cpp(s)\n",
        "[cpp->.so] invalidated ",
        "  out: FAIL\n",
        "FAIL: golden mismatch",
    ] {
        assert!(t.contains(line), "missing {line:?} in:\n{t}");
    }
    assert!(!t.contains("regenerating from ptoas/qk_matmul.pto"), "{t}");
    // Only the spliced kernel is compiled again; the others come from the content cache.
    let compiled: Vec<&str> = t
        .lines()
        .filter(|l| !l.contains("still compiling"))
        .filter_map(|l| l.split_once("compiling ").map(|(_, p)| p))
        .collect();
    assert_eq!(compiled.len(), 1, "{t}");
    assert!(compiled[0].ends_with(KERNEL), "{t}");
    assert_eq!(o.status.code(), Some(1), "doubled scale, old golden: {t}");

    let after = std::fs::read_to_string(dir.join(KERNEL)).unwrap();
    let (old_body, old_wrapper) = split_kernel(&before);
    let (new_body, new_wrapper) = split_kernel(&after);
    assert_eq!(new_wrapper, old_wrapper, "the splice keeps the wrapper");
    assert_ne!(new_body, old_body);
    let marker = format!("// pto: %scale_x2{nonce}\n");
    assert!(new_body.contains(&marker), "{new_body}");
    assert_eq!(
        std::fs::read_to_string(dir.join("ptoas/softmax_prepare.cpp"))
            .unwrap()
            .matches(&marker)
            .count(),
        1,
        "the raw translation is the new stamp"
    );

    // The kernel now multiplies by exactly twice the scale it is given: half the scale in,
    // and the golden passes bit for bit; nothing is regenerated this time.
    halve_the_scale_input(&dir);
    let o = replay(&dir, &[], &[]);
    let t = text(&o);
    assert!(t.contains("[pto->cpp] no .pto changes detected"), "{t}");
    assert!(t.contains("  out: PASS"), "{t}");
    assert_eq!(o.status.code(), Some(0), "{t}");
}

/// Seed 002's table, row "both edited": the `.pto` decides the body, edits outside the
/// sentinels are kept and edits inside them are replaced.
#[test]
fn with_the_pto_and_the_wrapper_edited_the_pto_decides_the_body_and_the_wrapper_edit_stays() {
    let dir = fresh_copy("both");
    double_the_scale_in_the_pto(&dir, "");
    let kernel = dir.join(KERNEL);
    let cpp = std::fs::read_to_string(&kernel).unwrap();
    let edited = cpp
        .replacen(
            "    float scale = scale_conv.val;\n",
            "    float scale = scale_conv.val * 0.5f;  // my edit: the .pto doubles it\n",
            1,
        )
        .replacen(
            "// --- ptoas-generated code ---\n",
            "// --- ptoas-generated code ---\n// a stale body edit\n",
            1,
        )
        .replacen(
            "// Kernel Function: softmax_prepare\n",
            "// Kernel Function: softmax_prepare\n// my header note\n",
            1,
        );
    assert_eq!(edited.matches("my edit").count(), 1, "{cpp}");
    std::fs::write(&kernel, &edited).unwrap();

    let o = replay(&dir, &[], &[]);
    let t = text(&o);
    assert!(
        t.contains("[pto->cpp]   spliced -> kernels/aiv/softmax_prepare.cpp\n"),
        "{t}"
    );
    let after = std::fs::read_to_string(&kernel).unwrap();
    let (body, wrapper) = split_kernel(&after);
    let (_, edited_wrapper) = split_kernel(&edited);
    assert_eq!(
        wrapper, edited_wrapper,
        "edits outside the sentinels are kept"
    );
    assert!(after.starts_with("// Kernel Function: softmax_prepare\n// my header note\n"));
    assert!(
        !body.contains("a stale body edit"),
        "the body is regenerated"
    );
    assert!(
        body.contains("// pto: %scale_x2\n"),
        "the .pto decides the body"
    );
    // Both edits are in effect: the body doubles the scale the wrapper halved.
    assert!(t.contains("  out: PASS"), "{t}");
    assert_eq!(o.status.code(), Some(0), "{t}");
}

#[test]
fn no_rebuild_from_pto_and_the_environment_switch_turn_the_splice_off() {
    let dir = fresh_copy("off");
    double_the_scale_in_the_pto(&dir, "");
    let before = std::fs::read(dir.join(KERNEL)).unwrap();
    for (extra, env, line) in [
        (
            &["--no-rebuild-from-pto"][..],
            &[][..],
            "[pto->cpp] skipped (rebuild_from_pto=False)\n",
        ),
        (
            &[][..],
            &[("PYPTO_REBUILD_FROM_PTO", "0")][..],
            "[pto->cpp] skipped (PYPTO_REBUILD_FROM_PTO=0)\n",
        ),
    ] {
        let o = replay(&dir, extra, env);
        let t = text(&o);
        assert!(t.contains(line), "{line:?} in {t}");
        assert!(!t.contains("regenerating"), "{t}");
        assert_eq!(
            std::fs::read(dir.join(KERNEL)).unwrap(),
            before,
            "{line}: the kernel is untouched"
        );
        assert_eq!(o.status.code(), Some(0), "the old body still passes: {t}");
    }
    // Switched back on, the same edit is spliced.
    let o = replay(&dir, &[], &[]);
    let t = text(&o);
    assert!(
        t.contains("[pto->cpp] regenerating from ptoas/softmax_prepare.pto\n"),
        "{t}"
    );
    assert_eq!(o.status.code(), Some(1), "{t}");
}
