//! `name_map_<label>.json`: golden layout, flat form, damage.

use std::path::Path;

use pto_dfx::name_map::{self, NameMap};

use crate::common::*;

const GOLDEN: &str = "name_map_PagedAttn.json";

fn example() -> NameMap {
    NameMap {
        level: Some(2),
        orchestrator_name: Some("PagedAttn".into()),
        callable_id_to_name: ["QK", "SF", "PV", "UP"]
            .iter()
            .enumerate()
            .map(|(i, n)| (i.to_string(), n.to_string()))
            .collect(),
    }
}

#[test]
fn golden_example_reads_and_renders_byte_exact() {
    let loaded = name_map::read(&data(GOLDEN)).unwrap();
    assert_eq!(loaded.problems, vec![]);
    assert_eq!(loaded.value, example());
    assert_eq!(name_map::render(&example()), golden_text(GOLDEN));
    assert_eq!(example().name_for(2), Some("PV"));
    assert_eq!(example().name_for(9), None);
}

#[test]
fn matches_python_json_dump_indent_2() {
    // json.dump({"level": 2, "orchestrator_name": None,
    //            "callable_id_to_name": {"0": "matmul"}}, f, indent=2)
    let map = NameMap {
        level: Some(2),
        orchestrator_name: None,
        callable_id_to_name: vec![("0".into(), "matmul".into())],
    };
    let expected = "{\n  \"level\": 2,\n  \"orchestrator_name\": null,\n  \"callable_id_to_name\": {\n    \"0\": \"matmul\"\n  }\n}";
    assert_eq!(name_map::render(&map), expected);

    // An empty mapping omits the key; non-ASCII is escaped.
    let orch_only = NameMap {
        level: Some(3),
        orchestrator_name: Some("héllo".into()),
        callable_id_to_name: vec![],
    };
    assert_eq!(
        name_map::render(&orch_only),
        "{\n  \"level\": 3,\n  \"orchestrator_name\": \"h\\u00e9llo\"\n}"
    );
}

#[test]
fn write_then_read_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let label = name_map::label_for("TestDemo", "case 1");
    assert_eq!(label, "TestDemo_case_1");
    let path = name_map::path_for(dir.path(), &label);
    assert_eq!(path, dir.path().join("name_map_TestDemo_case_1.json"));
    let map = NameMap {
        level: Some(3),
        orchestrator_name: Some("orch \"main\"".into()),
        callable_id_to_name: vec![
            ("1".into(), "callable_1".into()),
            ("0".into(), "ünï".into()),
        ],
    };
    name_map::write(&path, &map).unwrap();
    let loaded = name_map::read(&path).unwrap();
    assert_eq!(loaded.problems, vec![]);
    assert_eq!(loaded.value, map);
}

#[test]
fn flat_maps_and_damaged_entries() {
    let loaded =
        name_map::parse(br#"{"0": "QK", "1": 5, "7": "PV"}"#, Path::new("m.json")).unwrap();
    assert_eq!(
        loaded.value,
        NameMap {
            level: None,
            orchestrator_name: None,
            callable_id_to_name: vec![("0".into(), "QK".into()), ("7".into(), "PV".into())],
        }
    );
    assert_eq!(problem_keys(&loaded.problems), vec!["1"]);

    let loaded = name_map::parse(
        br#"{"orchestrator_name": 3, "callable_id_to_name": {"0": null}}"#,
        Path::new("m.json"),
    )
    .unwrap();
    assert_eq!(
        problem_keys(&loaded.problems),
        vec!["level", "orchestrator_name", "callable_id_to_name.0"]
    );
    assert_eq!(
        loaded.problems[2].to_string(),
        "`callable_id_to_name.0`: should be a string, found null; skipped it"
    );
}

#[test]
fn malformed_files_are_errors_naming_the_file() {
    let p = Path::new("/o/name_map_x.json");
    let golden = golden(GOLDEN);
    assert_truncated(&name_map::parse(&golden[..40], p).unwrap_err(), p);
    let err = name_map::parse(b"[]", p).unwrap_err();
    assert_wrong_type(&err, p, "(root)");
}
