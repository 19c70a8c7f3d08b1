//! `args_dump.json` + `args.bin`: golden layout, payloads, round trips, damage.

use std::path::Path;

use pto_dfx::args_bin::{self, ArgsBin, ArgsBinWriter, BinSpan, PayloadError, StridedView};
use pto_dfx::args_dump::{
    self, ArgEntry, ArgKind, ArgRecord, ArgRecordOf, ArgRole, ArgsDumpManifest, ArgsDumpManifestOf,
    BinFormat, DumpStage, ScalarValue,
};
use pto_dfx::{DataType, TaskId};

use crate::common::*;

fn tensor(task: u64, arg_index: u32, role: ArgRole, stage: DumpStage) -> ArgRecord {
    ArgRecord {
        task_id: TaskId(task),
        func_id: vec![0],
        arg_index,
        role,
        stage,
        kind: ArgKind::Tensor,
        dtype: "FLOAT32".into(),
        value: None,
        is_contiguous: true,
        shape: vec![2, 2],
        strides: vec![2, 1],
        start_offset: 0,
        numel: 4,
        arg_index_ambiguous: false,
        bin_offset: 0,
        bin_size: 16,
        truncated: false,
        overwritten: false,
    }
}

fn scalar(arg_index: u32, dtype: &str, value: ScalarValue) -> ArgRecord {
    ArgRecord {
        kind: ArgKind::Scalar,
        dtype: dtype.into(),
        value: Some(value),
        shape: vec![],
        strides: vec![],
        numel: 1,
        bin_size: 0,
        ..tensor(0, arg_index, ArgRole::Input, DumpStage::BeforeDispatch)
    }
}

/// The manifest of the reference example (§4.4).
fn example() -> ArgsDumpManifest {
    ArgsDumpManifest {
        run_dir: "args_dump".into(),
        bin_format: BinFormat::logical_contiguous_le(),
        dump_args_level: 2,
        total_args: 2,
        before_dispatch: 2,
        after_completion: 0,
        input_args: 2,
        output_args: 0,
        inout_args: 0,
        truncated_args: 0,
        dropped_records: 0,
        dropped_overwrite: 0,
        bin_file: Some("args.bin".into()),
        args: vec![
            tensor(0, 0, ArgRole::Input, DumpStage::BeforeDispatch),
            scalar(3, "FLOAT32", ScalarValue::F32(1.5)),
        ],
    }
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn golden_example_reads_and_renders_byte_exact() {
    let loaded = args_dump::read(&data("args_dump.json")).unwrap();
    assert_eq!(loaded.problems, vec![]);
    assert_eq!(loaded.value, example());
    assert_eq!(args_dump::render(&example()), golden_text("args_dump.json"));
}

#[test]
fn a_large_manifest_is_written_streamed_and_read_back_in_order() {
    // Past the size at which the entries render in two halves on two threads.
    let mut m = example();
    m.args = (0..20_000u64)
        .map(|k| {
            let mut a = tensor(k, (k % 3) as u32, ArgRole::Input, DumpStage::BeforeDispatch);
            a.bin_offset = 16 * k;
            a
        })
        .collect();
    m.total_args = m.args.len() as u64;
    m.before_dispatch = m.total_args;
    m.input_args = m.total_args;
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join(args_dump::DIR_NAME)
        .join(args_dump::MANIFEST_FILE_NAME);
    args_dump::write(&path, &m).unwrap();
    assert!(std::fs::read_to_string(&path).unwrap() == args_dump::render(&m));
    let loaded = args_dump::read(&path).unwrap();
    assert_eq!(loaded.problems, vec![]);
    assert_eq!(loaded.value, m);

    // The same entries borrowed, with 32-bit dimensions as the runtime has them, and in
    // another order (the manifest sorts them): the same bytes.
    let dims: Vec<(Vec<u32>, Vec<u32>)> = m
        .args
        .iter()
        .map(|a| {
            let narrow = |v: &[u64]| v.iter().map(|&d| d as u32).collect::<Vec<u32>>();
            (narrow(&a.shape), narrow(&a.strides))
        })
        .collect();
    let borrowed: Vec<ArgEntry<'_, u32>> = m
        .args
        .iter()
        .zip(&dims)
        .rev()
        .map(|(a, (shape, strides))| ArgRecordOf {
            func_id: &a.func_id[..],
            dtype: &a.dtype[..],
            shape: &shape[..],
            strides: &strides[..],
            task_id: a.task_id,
            arg_index: a.arg_index,
            role: a.role,
            stage: a.stage,
            kind: a.kind,
            value: a.value,
            is_contiguous: a.is_contiguous,
            start_offset: a.start_offset,
            numel: a.numel,
            arg_index_ambiguous: a.arg_index_ambiguous,
            bin_offset: a.bin_offset,
            bin_size: a.bin_size,
            truncated: a.truncated,
            overwritten: a.overwritten,
        })
        .collect();
    let from_borrowed = ArgsDumpManifestOf::new(
        m.dump_args_level,
        m.bin_file.clone(),
        borrowed,
        m.dropped_records,
        m.dropped_overwrite,
    );
    let path = dir.path().join("borrowed.json");
    args_dump::write(&path, &from_borrowed).unwrap();
    assert!(std::fs::read_to_string(&path).unwrap() == args_dump::render(&m));
}

#[test]
fn golden_payloads_slice_by_offset_and_size() {
    let manifest = args_dump::read(&data("args_dump.json")).unwrap().value;
    let bin = ArgsBin::read(&data("args.bin")).unwrap();
    assert_eq!(
        bin.payload(&manifest.args[0]).unwrap(),
        f32_bytes(&[1.0, 2.0, 3.0, 4.0])
    );
    assert_eq!(bin.payload(&manifest.args[1]).unwrap(), b"");
    assert_eq!(bin.check(&manifest.args), vec![]);
    assert_eq!(manifest.args[0].data_type(), Some(DataType::Float32));
}

#[test]
fn runtime_style_write_gathers_views_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let dump_dir = dir.path().join(args_dump::DIR_NAME);

    // A 4x4 row-major f32 matrix holding 0..16; dump its transposed 2x3
    // top-left corner and its second row.
    let storage = f32_bytes(&(0..16).map(|v| v as f32).collect::<Vec<_>>());
    let corner = StridedView {
        elem_size: 4,
        shape: &[2, 3],
        strides: &[1, 4],
        start_offset: 0,
    };
    let row = StridedView {
        elem_size: 4,
        shape: &[4],
        strides: &[1],
        start_offset: 4,
    };
    assert!(!corner.is_row_major());
    assert!(row.is_row_major());

    let mut bin = ArgsBinWriter::create(&dump_dir.join(args_dump::BIN_FILE_NAME)).unwrap();
    // Collection order: the output after completion first, then the input.
    let out_span = bin.append(&row.gather(&storage).unwrap()).unwrap();
    let in_span = bin.append(&corner.gather(&storage).unwrap()).unwrap();
    assert_eq!(bin.append(&[]).unwrap(), BinSpan { offset: 0, size: 0 });
    assert_eq!(
        out_span,
        BinSpan {
            offset: 0,
            size: 16
        }
    );
    assert_eq!(
        in_span,
        BinSpan {
            offset: 16,
            size: 24
        }
    );
    assert_eq!(bin.len(), 40);
    bin.finish().unwrap();

    let mut output = tensor(7, 1, ArgRole::Output, DumpStage::AfterCompletion);
    output.shape = vec![4];
    output.strides = vec![1];
    output.start_offset = 4;
    output.bin_offset = out_span.offset;
    output.bin_size = out_span.size;
    let mut input = tensor(7, 0, ArgRole::Input, DumpStage::BeforeDispatch);
    input.is_contiguous = false;
    input.shape = vec![2, 3];
    input.strides = vec![1, 4];
    input.numel = 6;
    input.bin_offset = in_span.offset;
    input.bin_size = in_span.size;
    input.arg_index_ambiguous = true;
    let count = scalar(2, "INT32", ScalarValue::I64(-3));

    let manifest =
        ArgsDumpManifest::new(3, Some("args.bin".into()), vec![output, count, input], 1, 2);
    // Sorted: task 0 first, then task 7 before-dispatch, then after-completion.
    let order: Vec<(u64, u32)> = manifest
        .args
        .iter()
        .map(|a| (a.task_id.raw(), a.arg_index))
        .collect();
    assert_eq!(order, vec![(0, 2), (7, 0), (7, 1)]);
    assert_eq!(
        (
            manifest.total_args,
            manifest.before_dispatch,
            manifest.after_completion,
            manifest.input_args,
            manifest.output_args,
            manifest.inout_args,
            manifest.truncated_args,
            manifest.dropped_records,
            manifest.dropped_overwrite,
        ),
        (3, 2, 1, 2, 1, 0, 0, 1, 2)
    );

    let manifest_path = dump_dir.join(args_dump::MANIFEST_FILE_NAME);
    args_dump::write(&manifest_path, &manifest).unwrap();
    let text = std::fs::read_to_string(&manifest_path).unwrap();
    assert!(text.contains(
        r#"{"task_id": "0x0000000000000007", "func_id": [0], "arg_index": 0, "role": "input", "stage": "before_dispatch", "kind": "tensor", "dtype": "FLOAT32", "is_contiguous": false, "shape": [2, 3], "strides": [1, 4], "start_offset": 0, "numel": 6, "arg_index_ambiguous": true, "bin_offset": 16, "bin_size": 24, "truncated": false, "overwritten": false}"#
    ), "{text}");
    let loaded = args_dump::read(&manifest_path).unwrap();
    assert_eq!(loaded.problems, vec![]);
    assert_eq!(loaded.value, manifest);

    let bin = ArgsBin::read(&dump_dir.join("args.bin")).unwrap();
    let payload = bin.payload(&loaded.value.args[1]).unwrap();
    assert_eq!(payload, f32_bytes(&[0.0, 4.0, 8.0, 1.0, 5.0, 9.0]));
    let payload = bin.payload(&loaded.value.args[2]).unwrap();
    assert_eq!(payload, f32_bytes(&[4.0, 5.0, 6.0, 7.0]));
    assert_eq!(
        args_bin::gather_logical(&storage, 4, &[2], &[4], 3).unwrap(),
        f32_bytes(&[3.0, 7.0])
    );
}

#[test]
fn scalar_values_render_like_simpler_and_read_back() {
    // (value, dtype, text, value read back: floats keep 6 digits)
    let cases = [
        (ScalarValue::F32(1.5), "FLOAT32", "1.5", None),
        (ScalarValue::F32(100.0), "FLOAT32", "100.0", None),
        (
            ScalarValue::F32(123_456_789.0),
            "FLOAT32",
            "1.23457e+08",
            Some(ScalarValue::F32(123_457_000.0)),
        ),
        (ScalarValue::F32(f32::INFINITY), "FLOAT32", "\"$Inf\"", None),
        (
            ScalarValue::F32(f32::NEG_INFINITY),
            "FLOAT32",
            "\"-$Inf\"",
            None,
        ),
        (ScalarValue::I64(-42), "INT32", "-42", None),
        (ScalarValue::I64(7), "INT64", "7", None),
        (
            ScalarValue::U64(4_000_000_000),
            "UINT32",
            "4000000000",
            None,
        ),
        (
            ScalarValue::U64(u64::MAX),
            "FLOAT16",
            "18446744073709551615",
            None,
        ),
        (ScalarValue::Bool(true), "BOOL", "true", None),
    ];
    for (value, dtype, text, read_back) in cases {
        let mut m = example();
        m.args = vec![scalar(0, dtype, value)];
        let rendered = args_dump::render(&m);
        let needle = format!("\"dtype\": \"{dtype}\", \"value\": {text}, \"is_contiguous\"");
        assert!(rendered.contains(&needle), "{rendered}");
        let back = args_dump::parse(rendered.as_bytes(), Path::new("a.json")).unwrap();
        assert_eq!(
            back.value.args[0].value,
            Some(read_back.unwrap_or(value)),
            "{text}"
        );
    }
    // NaN is written as null and reads back as NaN.
    let mut m = example();
    m.args = vec![scalar(0, "FLOAT32", ScalarValue::F32(f32::NAN))];
    let rendered = args_dump::render(&m);
    assert!(rendered.contains("\"value\": null,"), "{rendered}");
    let back = args_dump::parse(rendered.as_bytes(), Path::new("a.json")).unwrap();
    assert!(matches!(back.value.args[0].value, Some(ScalarValue::F32(v)) if v.is_nan()));
}

#[test]
fn level_three_without_payloads_and_empty_manifests() {
    let m = ArgsDumpManifest::new(3, None, vec![], 0, 0);
    let text = args_dump::render(&m);
    assert!(
        text.contains("  \"bin_file\": null,\n  \"args\": [\n\n  ]\n}\n"),
        "{text}"
    );
    let back = args_dump::parse(text.as_bytes(), Path::new("a.json")).unwrap();
    assert_eq!(back.problems, vec![]);
    assert_eq!(back.value, m);
}

#[test]
fn documented_and_legacy_variants_are_read() {
    // Lower-case dtype and `role` before `arg_index`, no `numel` (the doc
    // example); the legacy `tensors` key; no `bin_file`.
    let text = r#"{"run_dir": "args_dump", "bin_format": {"type": "logical_contiguous", "byte_order": "little_endian"},
        "dump_args_level": 1, "total_args": 1, "before_dispatch": 1, "after_completion": 0, "input_args": 1,
        "output_args": 0, "inout_args": 0, "truncated_args": 0, "dropped_records": 0, "dropped_overwrite": 0,
        "tensors": [{"task_id": "0x0000000100000002", "func_id": [4, 5], "role": "inout", "arg_index": 1,
            "stage": "after_completion", "kind": "tensor", "dtype": "float32", "is_contiguous": true,
            "shape": [3, 5], "strides": [5, 1], "start_offset": 0, "bin_offset": 0, "bin_size": 60,
            "truncated": false, "overwritten": false}]}"#;
    let loaded = args_dump::parse(text.as_bytes(), Path::new("a.json")).unwrap();
    assert_eq!(loaded.problems, vec![]);
    let m = loaded.value;
    assert_eq!(m.bin_file.as_deref(), Some("args.bin"));
    let a = &m.args[0];
    assert_eq!(a.task_id, TaskId::new(1, 2));
    assert_eq!(a.numel, 15);
    assert_eq!(a.data_type(), Some(DataType::Float32));
    assert_eq!(
        (a.role, a.stage),
        (ArgRole::Inout, DumpStage::AfterCompletion)
    );
}

#[test]
fn damaged_entries_and_counters_are_problems() {
    let text = r#"{"dump_args_level": 2, "args": [
        {"task_id": "0x0000000000000001", "func_id": [0], "arg_index": 0, "role": "sideways", "stage": "before_dispatch", "kind": "tensor", "dtype": "INT8", "is_contiguous": true, "shape": [1], "strides": [1], "start_offset": 0, "numel": 1, "bin_offset": 0, "bin_size": 1, "truncated": false, "overwritten": false},
        {"task_id": "0x0000000000000002", "func_id": [0], "arg_index": 0, "role": "input", "stage": "before_dispatch", "kind": "tensor", "dtype": "INT8", "is_contiguous": true, "shape": [1, 2], "strides": [1], "start_offset": 0, "numel": 2, "bin_offset": 5, "bin_size": 2, "truncated": true, "overwritten": false}
    ]}"#;
    let loaded = args_dump::parse(text.as_bytes(), Path::new("a.json")).unwrap();
    let m = &loaded.value;
    assert_eq!(m.args.len(), 1);
    assert_eq!((m.total_args, m.input_args, m.truncated_args), (1, 1, 1));
    let keys = problem_keys(&loaded.problems);
    assert_eq!(
        keys,
        vec![
            "args[0].role",
            "args[1]",
            "run_dir",
            "bin_format",
            "total_args",
            "before_dispatch",
            "after_completion",
            "input_args",
            "output_args",
            "inout_args",
            "truncated_args",
            "dropped_records",
            "dropped_overwrite",
        ]
    );
    assert_eq!(
        loaded.problems[0].to_string(),
        "`args[0].role`: is \"sideways\"; expected input, output or inout; skipped the entry"
    );

    // A payload past the end of args.bin.
    let bin = ArgsBin {
        path: "args.bin".into(),
        bytes: vec![0; 6],
    };
    assert_eq!(
        bin.payload(&m.args[0]),
        Err(PayloadError::OutOfRange {
            path: "args.bin".into(),
            offset: 5,
            size: 2,
            len: 6
        })
    );
    let problems = bin.check(&m.args);
    assert_eq!(problem_keys(&problems), vec!["args[0]"]);
    assert_eq!(
        problems[0].message,
        "bin_offset 5 + bin_size 2 is past the end of args.bin (6 bytes)"
    );
}

#[test]
fn malformed_manifests_are_errors_naming_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("args_dump.json");
    let full = golden("args_dump.json");
    std::fs::write(&path, &full[..300]).unwrap();
    assert_truncated(&args_dump::read(&path).unwrap_err(), &path);

    let p = Path::new("/o/args_dump/args_dump.json");
    let err = args_dump::parse(br#"{"dump_args_level": 1}"#, p).unwrap_err();
    assert_missing(&err, p, "args");
    let err = args_dump::parse(br#"{"args": []}"#, p).unwrap_err();
    assert_missing(&err, p, "dump_args_level");
    let err = args_dump::parse(br#"{"args": [], "dump_args_level": "two"}"#, p).unwrap_err();
    assert_wrong_type(&err, p, "dump_args_level");
    let err = args_dump::parse(br#"{"args": 3, "dump_args_level": 1}"#, p).unwrap_err();
    assert_wrong_type(&err, p, "args");

    let err = ArgsBin::read(&dir.path().join("args.bin")).unwrap_err();
    assert_names(&err, &dir.path().join("args.bin"), None);
}
