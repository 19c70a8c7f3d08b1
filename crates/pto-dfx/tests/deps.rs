//! `deps.json`: golden layout, tensor ids, round trips, damage.

use std::path::Path;

use pto_dfx::deps::{
    self, format_task_display, tensor_id, ArgDirection, DepFlags, DepsArg, DepsEdge, DepsFile,
    DepsTask, DepsTensor, EdgeSource, Overlap, ProducerView, ScopeMode, TensorView,
};
use pto_dfx::TaskId;

use crate::common::*;

const TENSOR: u64 = 13_451_765_318_376_212_391;

fn view(id: u64, shape: Vec<u32>, start: u64, strides: Vec<u32>) -> TensorView {
    TensorView {
        tensor_id: id,
        dtype: "FLOAT32".into(),
        shape,
        start_offset: start,
        strides,
    }
}

/// The records of the reference example (§3.3).
fn example() -> DepsFile {
    DepsFile {
        runtime: None,
        tasks: vec![
            DepsTask {
                task_id: TaskId(0),
                scope: ScopeMode::Auto,
                early_dispatch: false,
                kernel_ids: vec![-1, -1, -1],
                block_num: 1,
                args: vec![],
            },
            DepsTask {
                task_id: TaskId::new(1, 0),
                scope: ScopeMode::Auto,
                early_dispatch: false,
                kernel_ids: vec![7, -1, -1],
                block_num: 4,
                args: vec![DepsArg {
                    idx: 0,
                    direction: ArgDirection::Input,
                    tensor: Some(view(TENSOR, vec![16384], 0, vec![1])),
                }],
            },
        ],
        tensors: vec![DepsTensor {
            tensor_id: TENSOR,
            buffer_addr: 29_204_938_752,
            version: 0,
            dtype: "FLOAT32".into(),
            buffer_numel: 16384,
        }],
        edges: vec![DepsEdge {
            pred: TaskId(0),
            succ: TaskId::new(1, 0),
            arg: 0,
            source: EdgeSource::Creator,
            flags: DepFlags::WAIT_RETAIN,
            overlap: None,
            consumer: Some(view(TENSOR, vec![16384], 0, vec![1])),
            producer: None,
        }],
    }
}

/// Every optional part: manual scope, early dispatch, tensor-less args,
/// explicit and TensorMap edges, 64-bit values above 2^53.
fn rich() -> DepsFile {
    DepsFile {
        runtime: None,
        tasks: vec![DepsTask {
            task_id: TaskId::new(2, 5),
            scope: ScopeMode::Manual,
            early_dispatch: true,
            kernel_ids: vec![-1, 3, 4],
            block_num: 2,
            args: vec![
                DepsArg {
                    idx: 0,
                    direction: ArgDirection::Output,
                    tensor: None,
                },
                DepsArg {
                    idx: 1,
                    direction: ArgDirection::OutputExisting,
                    tensor: Some(view(u64::MAX, vec![4, 8], 1 << 60, vec![16, 1])),
                },
            ],
        }],
        tensors: vec![],
        edges: vec![
            DepsEdge {
                pred: TaskId(1),
                succ: TaskId::new(2, 5),
                arg: -1,
                source: EdgeSource::Explicit,
                flags: DepFlags::WAIT_RETAIN,
                overlap: None,
                consumer: None,
                producer: None,
            },
            DepsEdge {
                pred: TaskId(3),
                succ: TaskId::new(2, 5),
                arg: 1,
                source: EdgeSource::Tensormap,
                flags: DepFlags::WAIT,
                overlap: Some(Overlap::NoOverlap),
                consumer: Some(view(9, vec![4, 8], 16, vec![16, 1])),
                producer: Some(ProducerView {
                    shape: vec![8, 8],
                    start_offset: 0,
                    strides: vec![16, 1],
                }),
            },
        ],
    }
}

const RICH_TEXT: &str = concat!(
    r#"{"tasks":[{"task_id":"8589934597","scope":"manual","early_dispatch":true,"kernel_ids":[-1,3,4],"block_num":2,"args":["#,
    r#"{"idx":0,"type":"OUTPUT"},"#,
    r#"{"idx":1,"type":"OUTPUT_EXISTING","tensor_id":"18446744073709551615","dtype":"FLOAT32","shape":[4,8],"start_offset":"1152921504606846976","strides":[16,1]}]}],"#,
    r#""tensors":[],"edges":["#,
    r#"{"pred":"1","succ":"8589934597","arg":-1,"source":"explicit","flags":["wait","retain"]},"#,
    r#"{"pred":"3","succ":"8589934597","arg":1,"source":"tensormap","flags":["wait"],"overlap":"no_overlap","#,
    r#""tensor_id":"9","consumer_dtype":"FLOAT32","consumer_shape":[4,8],"consumer_start_offset":"16","consumer_strides":[16,1],"#,
    r#""producer_shape":[8,8],"producer_start_offset":"0","producer_strides":[16,1]}]}"#,
    "\n"
);

#[test]
fn golden_example_reads_and_renders_byte_exact() {
    let loaded = deps::read(&data(deps::FILE_NAME)).unwrap();
    assert_eq!(loaded.problems, vec![]);
    assert_eq!(loaded.value, example());
    assert_eq!(deps::render(&example()), golden_text(deps::FILE_NAME));
}

#[test]
fn every_optional_part_renders_in_key_order_and_round_trips() {
    assert_eq!(deps::render(&rich()), RICH_TEXT);
    let loaded = deps::parse(RICH_TEXT.as_bytes(), Path::new("deps.json")).unwrap();
    assert_eq!(loaded.problems, vec![]);
    assert_eq!(loaded.value, rich());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out").join(deps::FILE_NAME);
    deps::write(&path, &rich()).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), RICH_TEXT);
    assert_eq!(deps::read(&path).unwrap().value, rich());
}

#[test]
fn empty_graph() {
    let text = deps::render(&DepsFile::default());
    assert_eq!(text, "{\"tasks\":[],\"tensors\":[],\"edges\":[]}\n");
}

#[test]
fn tensor_id_is_fnv1a_64_of_addr_then_version() {
    // FNV-1a 64 folded by hand over the 12 input bytes.
    fn by_hand(bytes: [u8; 12]) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
        h
    }
    // buffer_addr 0x0000_0006_ccc0_0000 = 29204938752, little-endian, then
    // version 0 as 4 little-endian bytes.
    let example = by_hand([0x00, 0x00, 0xc0, 0xcc, 0x06, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(example, TENSOR);
    assert_eq!(tensor_id(29_204_938_752, 0), TENSOR);
    // version -1 hashes as uint32 0xffffffff.
    let negative = by_hand([0x00, 0x10, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
    assert_eq!(tensor_id(0x1000, -1), negative);
    // Values cross-checked against a Python implementation.
    assert_eq!(tensor_id(0, 0), 6_082_024_272_624_116_885);
    assert_eq!(tensor_id(1, 1), 18_383_369_606_874_523_765);
    assert_eq!(negative, 5_893_050_575_565_054_273);
}

#[test]
fn consistency_checks() {
    assert_eq!(example().check_consistency(), vec![]);
    let mut file = example();
    file.tensors[0].version = 1;
    file.edges[0].consumer.as_mut().unwrap().tensor_id = 5;
    let problems = file.check_consistency();
    assert_eq!(
        problem_keys(&problems),
        vec!["tensors[0].tensor_id", "edges[0].tensor_id"]
    );
    assert_eq!(problems[1].message, "5 is not listed in tensors[]");
}

#[test]
fn task_display_forms() {
    assert_eq!(format_task_display(0), "t0");
    assert_eq!(format_task_display(4_294_967_296), "r1t0");
    assert_eq!(format_task_display(TaskId::new(3, 1025).raw()), "r3t1025");
    assert!(example().tasks[0].is_dummy());
    assert!(!example().tasks[1].is_dummy());
}

#[test]
fn lenient_values_are_accepted() {
    // Numbers instead of strings, a negative id wrapped to u64, no
    // `early_dispatch` (the documented schema), a 2-entry kernel_ids.
    let text = r#"{"tasks":[{"task_id":4294967296,"scope":"auto","kernel_ids":[1,2],"block_num":1,"args":[]}],
        "tensors":[{"tensor_id":"-1","buffer_addr":4096,"version":-1,"dtype":"INT8","buffer_numel":16}],
        "edges":[{"pred":-1,"succ":"4294967296","arg":-1,"source":"explicit","flags":[]}]}"#;
    let loaded = deps::parse(text.as_bytes(), Path::new("d.json")).unwrap();
    let file = loaded.value;
    assert_eq!(file.tasks[0].task_id, TaskId::new(1, 0));
    assert!(!file.tasks[0].early_dispatch);
    assert_eq!(file.tensors[0].tensor_id, u64::MAX);
    assert_eq!(file.tensors[0].buffer_addr, 4096);
    assert_eq!(file.edges[0].pred, TaskId(u64::MAX));
    assert_eq!(file.edges[0].flags, DepFlags::default());
    assert_eq!(problem_keys(&loaded.problems), vec!["tasks[0].kernel_ids"]);
}

#[test]
fn damaged_entries_are_skipped_with_problems() {
    let text = r#"{"tasks":[{"task_id":"0","scope":"sideways","early_dispatch":false,"kernel_ids":[-1,-1,-1],"block_num":1,"args":[]}],
        "tensors":[{"tensor_id":"12x","buffer_addr":"0","version":0,"dtype":"INT8","buffer_numel":"1"}],
        "edges":[{"pred":"0","succ":"1","arg":0,"source":"creator","flags":["wait","linger"]},
                 {"pred":"0","succ":"1","arg":0,"source":"creator","flags":["wait","retain"]},
                 {"pred":"0","arg":0,"source":"creator","flags":[]}]}"#;
    let loaded = deps::parse(text.as_bytes(), Path::new("d.json")).unwrap();
    assert!(loaded.value.tasks.is_empty());
    assert!(loaded.value.tensors.is_empty());
    assert_eq!(loaded.value.edges.len(), 1);
    assert_eq!(
        problem_keys(&loaded.problems),
        vec![
            "tasks[0].scope",
            "tensors[0].tensor_id",
            "edges[0].flags[1]",
            "edges[2].succ"
        ]
    );
    assert_eq!(
        loaded.problems[0].to_string(),
        "`tasks[0].scope`: is \"sideways\"; expected \"auto\" or \"manual\"; skipped the entry"
    );
    assert_eq!(
        loaded.problems[3].to_string(),
        "`edges[2].succ`: missing key; skipped the entry"
    );
}

#[test]
fn malformed_files_are_errors_naming_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(deps::FILE_NAME);
    let full = golden(deps::FILE_NAME);
    std::fs::write(&path, &full[..full.len() - 10]).unwrap();
    assert_truncated(&deps::read(&path).unwrap_err(), &path);

    let p = Path::new("/o/deps.json");
    let err = deps::parse(br#"{"tasks":[],"tensors":[]}"#, p).unwrap_err();
    assert_missing(&err, p, "edges");
    let err = deps::parse(br#"{"tasks":{},"tensors":[],"edges":[]}"#, p).unwrap_err();
    assert_wrong_type(&err, p, "tasks");
    assert_eq!(
        err.to_string(),
        "cannot read /o/deps.json: key `tasks` should be an array, found an object"
    );
}
