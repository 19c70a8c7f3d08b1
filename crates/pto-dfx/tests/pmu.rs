//! `pmu.csv`: golden layout, counter tables, host counters, damage.

use std::borrow::Cow;
use std::path::Path;

use pto_dfx::pmu::{
    self, a2a3_counter_names, a5_counter_names, Column, PmuEventType, PmuRow, RowShape,
};
use pto_dfx::{CoreType, ReadErrorKind, TaskId, WriteErrorKind};

use crate::common::*;

/// The row of the reference example (§5.3): a2a3, event type 2.
fn example_row() -> PmuRow {
    let values = [1024, 0, 512, 0, 256, 128, 3, 448];
    PmuRow {
        thread_id: 2,
        core_id: 5,
        task_id: TaskId(0x0000_0002_0000_0a00),
        func_id: 0,
        core_type: CoreType::Aiv,
        pmu_total_cycles: 18432,
        counters: a2a3_counter_names(PmuEventType::PipeUtilization)
            .iter()
            .zip(values)
            .map(|(n, v)| (Cow::Borrowed(*n), v))
            .collect(),
        event_type: 2,
    }
}

fn host_row(task: u32, values: [u64; 5]) -> PmuRow {
    let names = [
        "task_clock_ns",
        "context_switches",
        "page_faults",
        "instructions",
        "cycles",
    ];
    PmuRow {
        thread_id: 0,
        core_id: task,
        task_id: TaskId::new(0, task),
        func_id: u32::MAX,
        core_type: CoreType::Aic,
        pmu_total_cycles: values[4],
        counters: names
            .iter()
            .zip(values)
            .map(|(n, v)| (Cow::Borrowed(*n), v))
            .collect(),
        event_type: 0,
    }
}

/// `n` host rows, task `t` with first counter `t`.
fn host_rows(n: u32) -> Vec<PmuRow> {
    (0..n)
        .map(|t| host_row(t, [u64::from(t), 1, 2, 3, 4]))
        .collect()
}

/// The counter names of `row`, in column order.
fn counter_names(row: &PmuRow) -> Vec<&str> {
    row.counters.iter().map(|(n, _)| n.as_ref()).collect()
}

#[test]
fn golden_example_reads_and_renders_byte_exact() {
    let loaded = pmu::read(&data(pmu::FILE_NAME)).unwrap();
    assert_eq!(loaded.problems, vec![]);
    assert_eq!(loaded.value.rows, vec![example_row()]);
    assert_eq!(
        loaded.value.counter_names,
        a2a3_counter_names(PmuEventType::PipeUtilization)
    );
    assert_eq!(
        pmu::render(&[example_row()]).unwrap(),
        golden_text(pmu::FILE_NAME)
    );
    let header = pmu::render_header(a2a3_counter_names(PmuEventType::PipeUtilization));
    assert!(golden_text(pmu::FILE_NAME).starts_with(&header));
}

#[test]
fn counter_tables() {
    assert_eq!(
        a2a3_counter_names(PmuEventType::ResourceConflict),
        [
            "bankgroup_stall_cycles",
            "bank_stall_cycles",
            "vec_resc_conflict_cycles"
        ]
    );
    // a5 lists icache_req before icache_miss; a2a3 the other way round.
    let a5 = a5_counter_names(PmuEventType::PipeUtilization);
    assert_eq!(&a5[6..8], ["icache_req", "icache_miss"]);
    let a2a3 = a2a3_counter_names(PmuEventType::PipeUtilization);
    assert_eq!(&a2a3[6..8], ["icache_miss", "icache_req"]);
    let sizes: Vec<usize> = [1, 2, 4, 5, 6, 7, 8]
        .iter()
        .map(|&n| a2a3_counter_names(PmuEventType::from_number(n).unwrap()).len())
        .collect();
    assert_eq!(sizes, vec![7, 8, 8, 6, 3, 8, 6]);
    assert_eq!(PmuEventType::from_number(3), None);
    assert_eq!(
        PmuEventType::resolve(3),
        Some(PmuEventType::PipeUtilization)
    );
    assert_eq!(PmuEventType::resolve(0), None);
    assert_eq!(PmuEventType::resolve(4), Some(PmuEventType::Memory));
}

#[test]
fn host_counters_write_their_own_header_and_round_trip() {
    let rows = vec![
        host_row(0, [1500, 0, 2, 90_000, 120_000]),
        host_row(1, [2500, 1, 0, u64::from(u32::MAX) + 1, 5]),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dfx").join(pmu::FILE_NAME);
    pmu::write(&path, &rows).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        "thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles,task_clock_ns,context_switches,page_faults,instructions,cycles,event_type\n\
         0,0,0x0000000000000000,4294967295,0,120000,1500,0,2,90000,120000,0\n\
         0,1,0x0000000000000001,4294967295,0,5,2500,1,0,4294967296,5,0\n"
    );
    let loaded = pmu::read(&path).unwrap();
    assert_eq!(loaded.problems, vec![]);
    assert_eq!(loaded.value.rows, rows);
}

#[test]
fn no_rows_write_a_header_without_counters() {
    assert_eq!(
        pmu::render(&[]).unwrap(),
        "thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles,event_type\n"
    );
    let loaded = pmu::parse(pmu::render(&[]).unwrap().as_bytes(), Path::new("p.csv")).unwrap();
    assert_eq!(loaded.value, pmu::PmuFile::default());
}

#[test]
fn rows_with_other_counters_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(pmu::FILE_NAME);
    let err = pmu::write(&path, &[example_row(), host_row(1, [0; 5])]).unwrap_err();
    assert!(matches!(
        &err.kind,
        WriteErrorKind::InvalidRecord(r) if r.key == "rows[1].counters"
    ));
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "cannot write {}: `rows[1].counters` are [",
            path.display()
        )),
        "{text}"
    );
    assert!(!path.exists());

    let mut bad = example_row();
    bad.counters[0].0 = Cow::Borrowed("a,b");
    let err = pmu::render(&[bad]).unwrap_err();
    assert_eq!(err.key, "rows[0].counters[0]");
}

#[test]
fn rows_pushed_one_at_a_time_render_as_the_slice_does() {
    let rows = host_rows(3);
    let names = counter_names(&rows[0]);
    // One row refilled for each line, as a writer of many rows does.
    let mut csv = pmu::PmuCsv::new(&names, 0).unwrap();
    let mut row = host_row(0, [0; 5]);
    for want in &rows {
        row.core_id = want.core_id;
        row.task_id = want.task_id;
        row.pmu_total_cycles = want.pmu_total_cycles;
        row.counters.clear();
        row.counters.extend(want.counters.iter().cloned());
        csv.push(&row).unwrap();
    }
    assert_eq!(csv.finish(), pmu::render(&rows).unwrap());

    // A row with other counters is refused by its index; a bad name up front.
    let mut csv = pmu::PmuCsv::new(&names, 2).unwrap();
    csv.push(&rows[0]).unwrap();
    let err = csv.push(&example_row()).unwrap_err();
    assert_eq!(err.key, "rows[1].counters");
    let err = pmu::PmuCsv::new(&["ok", ""], 1).err().unwrap();
    assert_eq!(err.key, "rows[0].counters[1]");
}

#[test]
fn rows_pushed_as_values_render_as_the_named_rows_do() {
    let rows = host_rows(3);
    let names = counter_names(&rows[0]);
    // The values in the header's column order, from a row without names.
    let mut csv = pmu::PmuCsv::new(&names, 0).unwrap();
    let mut values = Vec::new();
    for want in &rows {
        let mut row = want.clone();
        row.counters.clear();
        values.clear();
        values.extend(want.counters.iter().map(|(_, v)| *v));
        csv.push_values(&row, &values).unwrap();
    }
    assert_eq!(csv.finish(), pmu::render(&rows).unwrap());

    // One value too few is refused by the row's index.
    let mut csv = pmu::PmuCsv::new(&names, 2).unwrap();
    csv.push(&rows[0]).unwrap();
    let err = csv.push_values(&rows[1], &values[1..]).unwrap_err();
    assert_eq!(err.key, "rows[1].counters");
    assert!(
        err.reason.contains("values but the header has"),
        "{}",
        err.reason
    );
}

#[test]
fn all_rows_pushed_at_once_on_one_thread_or_two_render_as_the_slice_does() {
    let dir = tempfile::tempdir().unwrap();
    let fill = |want: &PmuRow, row: &mut PmuRow, values: &mut Vec<u64>| {
        *row = PmuRow {
            counters: Vec::new(),
            ..want.clone()
        };
        values.clear();
        values.extend(want.counters.iter().map(|(_, v)| *v));
        0
    };
    let all_variable = |n: usize| [RowShape::new(&(0..n).map(Column::Var).collect::<Vec<_>>())];
    for n in [3, 20_000] {
        let rows = host_rows(n);
        let names = counter_names(&rows[0]);
        let shapes = all_variable(names.len());
        let path = dir.path().join(format!("pmu{n}.csv"));
        let mut csv = pmu::PmuCsv::streaming(&path, &names).unwrap();
        csv.push_all(rows.len(), rows.iter(), &shapes, fill)
            .unwrap();
        csv.commit().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text == pmu::render(&rows).unwrap(), "{n} rows");
    }
    // A row with too few values is refused by its index in the whole file, in either half.
    let rows = host_rows(20_000);
    let names = counter_names(&rows[0]);
    let shapes = all_variable(names.len());
    for bad in [7, 15_000] {
        let mut csv = pmu::PmuCsv::new(&names, 0).unwrap();
        let err = csv
            .push_all(
                rows.len(),
                rows.iter().enumerate(),
                &shapes,
                |(i, want), row, values| {
                    fill(want, row, values);
                    if i == bad {
                        values.pop();
                    }
                    0
                },
            )
            .unwrap_err();
        assert_eq!(err.key, format!("rows[{bad}].counters"));
    }
    // A shape that is not one of them is refused by the row's index; a shape whose
    // columns are not the header's, before any row.
    let mut csv = pmu::PmuCsv::new(&names, 0).unwrap();
    let err = csv
        .push_all(rows.len(), rows.iter(), &shapes, |want, row, values| {
            fill(want, row, values) + usize::from(want.task_id.raw() == 3)
        })
        .unwrap_err();
    assert_eq!(err.key, "rows[3].shape");
    let err = csv
        .push_all(rows.len(), rows.iter(), &all_variable(2), fill)
        .unwrap_err();
    assert_eq!(err.key, "shapes[0]");
}

#[test]
fn shaped_rows_render_as_rows_of_their_values_do() {
    // Shapes of constant and variable columns in every arrangement of four columns: each
    // row renders as the row whose counters are the shape's values.
    let names = ["c0", "c1", "c2", "c3"];
    let mut shapes = Vec::new();
    for code in 0..81u32 {
        let columns: Vec<Column> = (0..4)
            .map(|i| match (code / 3u32.pow(i)) % 3 {
                0 => Column::Const(0),
                1 => Column::Const(1234 + u64::from(i)),
                _ => Column::Var(((code + i) % 3) as usize),
            })
            .collect();
        shapes.push((RowShape::new(&columns), columns));
    }
    let only: Vec<RowShape> = shapes.iter().map(|(s, _)| s.clone()).collect();
    let vars = [7u64, u64::MAX, 0];
    let mut want = Vec::new();
    for (k, (_, columns)) in shapes.iter().enumerate() {
        let mut row = host_row(k as u32, [0; 5]);
        row.counters = names
            .iter()
            .zip(columns)
            .map(|(n, c)| {
                let v = match *c {
                    Column::Const(v) => v,
                    Column::Var(i) => vars[i],
                };
                (Cow::Borrowed(*n), v)
            })
            .collect();
        want.push(row);
    }
    let mut csv = pmu::PmuCsv::new(&names, want.len()).unwrap();
    csv.push_all(
        want.len(),
        want.iter().enumerate(),
        &only,
        |(k, w), row, values| {
            *row = w.clone();
            values.clear();
            values.extend_from_slice(&vars);
            k
        },
    )
    .unwrap();
    assert_eq!(csv.finish(), pmu::render(&want).unwrap());
}

#[test]
fn a_streamed_file_with_a_continuation_appended_is_the_rendered_file() {
    let rows = host_rows(5);
    let names = counter_names(&rows[0]);
    // The first rows streamed to the file, the rest rendered apart and appended.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pmu.csv");
    let mut csv = pmu::PmuCsv::streaming(&path, &names).unwrap();
    for row in &rows[..2] {
        csv.push(row).unwrap();
    }
    let mut rest = pmu::PmuCsv::continuation(&names, 3, 2);
    for row in &rows[2..] {
        rest.push(row).unwrap();
    }
    csv.append(rest);
    assert!(!path.exists(), "invisible until committed");
    csv.commit().unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        pmu::render(&rows).unwrap()
    );

    // A bad name fails before anything is written.
    let bad = dir.path().join("bad.csv");
    let err = pmu::PmuCsv::streaming(&bad, &["ok", "a,b"]).err().unwrap();
    assert!(err.to_string().contains("rows[0].counters[1]"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    // A continuation names a bad row by its index in the whole file.
    let mut rest = pmu::PmuCsv::continuation(&names, 2, 7);
    rest.push(&rows[0]).unwrap();
    let err = rest.push(&example_row()).unwrap_err();
    assert_eq!(err.key, "rows[8].counters");
}

#[test]
fn damaged_rows_are_skipped_with_problems() {
    let text = "thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles,cycles,event_type\r\n\
                1,2,0x0000000000000003,-1,1,10,11,2\r\n\
                1,2,0x00000000000000zz,0,1,10,11,2\r\n\
                1,2,3\r\n\
                1,2,7,0,2,10,11,2\r\n\
                \r\n\
                -1,4,4294967296,5,0,20,21,4\r\n";
    let loaded = pmu::parse(text.as_bytes(), Path::new("pmu.csv")).unwrap();
    let rows = &loaded.value.rows;
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].func_id, u32::MAX);
    assert_eq!(rows[0].counters, vec![(Cow::Borrowed("cycles"), 11)]);
    assert_eq!(
        (rows[1].thread_id, rows[1].task_id),
        (-1, TaskId::new(1, 0))
    );
    assert_eq!(
        problem_keys(&loaded.problems),
        vec!["line 3", "line 4", "line 5"]
    );
    assert_eq!(
        loaded.problems[0].to_string(),
        "`line 3`: column task_id is \"0x00000000000000zz\"; expected 0x and 16 hex digits; skipped the row"
    );
    assert_eq!(
        loaded.problems[1].message,
        "has 3 fields; the header has 8; skipped the row"
    );
}

#[test]
fn bad_headers_are_errors_naming_file_and_column() {
    let p = Path::new("/o/pmu.csv");
    let err = pmu::parse(b"", p).unwrap_err();
    assert_names(&err, p, None);
    assert!(matches!(err.kind, ReadErrorKind::Empty { .. }));

    let err = pmu::parse(b"thread_id,core_id,func_id\n", p).unwrap_err();
    assert_names(&err, p, Some("task_id"));
    assert_eq!(
        err.to_string(),
        "cannot read /o/pmu.csv: the header lacks column `task_id`"
    );

    let err = pmu::parse(
        b"thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles,cycles\n",
        p,
    )
    .unwrap_err();
    assert_names(&err, p, Some("event_type"));
}

/// Rows pushed as values give the text `format!` gives, at the extremes of every field and
/// with none to 40 counters.
#[test]
fn rows_render_as_format_does_with_few_or_many_counters() {
    for n in [0usize, 1, 8, 17, 18, 40] {
        let names: Vec<String> = (0..n).map(|k| format!("c{k}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let values: Vec<u64> = (0..n as u64)
            .map(|k| [0, 9, 10, 99, u64::MAX, 1 << 40][k as usize % 6])
            .collect();
        let mut want = format!(
            "thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles,{}",
            refs.iter().map(|r| format!("{r},")).collect::<String>()
        );
        want.push_str("event_type\n");
        let mut csv = pmu::PmuCsv::new(&refs, 2).unwrap();
        for (thread_id, total, task) in [(i32::MIN, u64::MAX, u64::MAX), (7, 0, 0xa)] {
            let row = PmuRow {
                thread_id,
                core_id: u32::MAX,
                task_id: TaskId(task),
                func_id: 10,
                core_type: CoreType::Aiv,
                pmu_total_cycles: total,
                counters: Vec::new(),
                event_type: u32::MAX,
            };
            csv.push_values(&row, &values).unwrap();
            let counters: String = values.iter().map(|v| format!("{v},")).collect();
            want.push_str(&format!(
                "{thread_id},{},0x{task:016x},10,1,{total},{counters}{}\n",
                u32::MAX,
                u32::MAX
            ));
        }
        assert_eq!(csv.finish(), want, "{n} counters");
    }
}
