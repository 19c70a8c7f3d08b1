//! `.pt` files and real torch: the fixtures `tests/fixtures/make_pt_fixtures.py`
//! wrote with `torch.save` read as `torch.load` reads them, the hostile ones
//! fail clearly, and the files our writer makes load in torch, their pickle
//! byte for byte the one torch writes (run when
//! `PTO_PYTHON` names a Python with torch; CI sets it).

use std::path::{Path, PathBuf};
use std::process::Command;

use pto_build_output::pt::{encode_pt, ByteOrder};
use pto_build_output::{read_pt, read_tensor, write_pt, DType, NpyArray};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pt")
}

fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(fixtures().join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn torch_dtype(name: &str) -> DType {
    DType::ALL
        .into_iter()
        .find(|&d| pto_build_output::pt::torch_dtype(d) == format!("torch.{name}"))
        .unwrap_or_else(|| panic!("no DType for torch.{name}"))
}

#[test]
fn files_torch_wrote_read_as_torch_loads_them() {
    let expected = expected();
    let valid = expected["valid"].as_object().unwrap();
    assert!(valid.len() >= 20);
    for (name, want) in valid {
        let path = fixtures().join(format!("{name}.pt"));
        let got = read_pt(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            got.dtype,
            torch_dtype(want["dtype"].as_str().unwrap()),
            "{name}"
        );
        let shape: Vec<usize> = want["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(got.shape, shape, "{name}");
        let values: Vec<f64> = want["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(got.to_f64_vec(), values, "{name}");
        // The same through the format-dispatching reader.
        assert_eq!(read_tensor(&path).unwrap(), got, "{name}");
    }
    // The cases the issue names are among them.
    for name in [
        "f32_transposed",
        "f32_offset_strided",
        "bf16_3x5",
        "f32_0d",
        "i32_big_endian",
    ] {
        assert!(valid.contains_key(name), "{name}");
    }
}

#[test]
fn hostile_files_are_clear_errors_naming_the_file() {
    let expected = expected();
    let hostile = expected["hostile"].as_object().unwrap();
    assert_eq!(hostile.len(), 3);
    for (name, message) in hostile {
        let path = fixtures().join(format!("{name}.pt"));
        let err = read_pt(&path).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}: ", path.display())),
            "{name}: {err}"
        );
        assert!(err.contains(message.as_str().unwrap()), "{name}: {err}");
    }
}

/// Every dtype in both byte orders, plus a 0-d and an empty tensor.
fn our_files(dir: &Path) -> Vec<(PathBuf, NpyArray)> {
    let mut out = Vec::new();
    for d in DType::ALL {
        for (tag, shape) in [("2x3", &[2usize, 3][..]), ("0d", &[]), ("empty", &[0, 2])] {
            let n: usize = shape.iter().product();
            let values: Vec<f64> = (0..n).map(|i| i as f64 * 3.0 - 4.0).collect();
            let a = NpyArray::from_f64(d, shape, &values).unwrap();
            let little = dir.join(format!("{}_{tag}.pt", d.pypto_name()));
            write_pt(&little, &a).unwrap();
            let big = dir.join(format!("{}_{tag}_be.pt", d.pypto_name()));
            std::fs::write(&big, encode_pt(&a, ByteOrder::Big).unwrap()).unwrap();
            out.push((little, a.clone()));
            out.push((big, a));
        }
    }
    out
}

const CHECK_IN_TORCH: &str = r#"
import io, json, sys, zipfile, torch
ok = 0
for case in json.load(open(sys.argv[1])):
    t = torch.load(case["path"], weights_only=True)
    assert str(t.dtype) == case["dtype"], (case["path"], t.dtype)
    assert list(t.shape) == case["shape"], (case["path"], t.shape)
    got = t.reshape(-1).to(torch.float64).tolist()
    assert got == case["values"], (case["path"], got, case["values"])
    # Our pickle is the one torch.save writes for the same tensor, byte for byte.
    buf = io.BytesIO()
    torch.save(t.clone(), buf)
    theirs = zipfile.ZipFile(buf).read("archive/data.pkl")
    ours = zipfile.ZipFile(case["path"]).read("archive/data.pkl")
    assert ours == theirs, (case["path"], ours, theirs)
    ok += 1
print(f"torch loaded {ok} files")
"#;

#[test]
fn our_files_load_in_real_torch() {
    let dir = tempfile::tempdir().unwrap();
    let files = our_files(dir.path());
    // Our reader first (always).
    for (path, a) in &files {
        assert_eq!(&read_pt(path).unwrap(), a, "{}", path.display());
    }
    let Some(python) = std::env::var_os("PTO_PYTHON") else {
        println!("note: PTO_PYTHON is not set, so the files were not loaded in torch (CI sets it)");
        return;
    };
    // torch does not byte-swap the untyped storages of uint16/32/64 (it
    // swaps by the storage's element type, a byte there), so it misreads any
    // big-endian file of those types, its own included; ours are checked
    // little-endian only in torch (and both ways by our reader above).
    let torch_reads_right = |path: &Path, a: &NpyArray| {
        let untyped = matches!(a.dtype, DType::UInt16 | DType::UInt32 | DType::UInt64);
        !(untyped && path.to_string_lossy().ends_with("_be.pt"))
    };
    let cases: Vec<serde_json::Value> = files
        .iter()
        .filter(|(path, a)| torch_reads_right(path, a))
        .map(|(path, a)| {
            serde_json::json!({
                "path": path,
                "dtype": pto_build_output::pt::torch_dtype(a.dtype),
                "shape": a.shape,
                "values": a.to_f64_vec(),
            })
        })
        .collect();
    let list = dir.path().join("cases.json");
    std::fs::write(&list, serde_json::to_string(&cases).unwrap()).unwrap();
    let script = dir.path().join("check.py");
    std::fs::write(&script, CHECK_IN_TORCH).unwrap();
    let out = Command::new(python)
        .arg(&script)
        .arg(&list)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "torch failed on our files:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim(), format!("torch loaded {} files", cases.len()));
    assert_eq!(cases.len(), files.len() - 9);
}
