//! What you see is what ran: in one process, run a build through a warm chip process, edit a
//! source (the kernel, a header it includes, `kernel_config.py`), run
//! again, and the second run executes the edit — through `replay` with and without
//! `recompile`, and through a fresh `load_for` — never the program the warm process loaded
//! first.

mod common;

use std::path::Path;
use std::sync::Mutex;

use pto_runner::{build::load_for, inputs::bind_inputs, BoundParam, ReplayOptions, RunConfig};

/// The chip-process pool is per process: the tests of this file take turns.
static SERIAL: Mutex<()> = Mutex::new(());

const KERNEL: &str = "kernels/aiv/kernel_add.cpp";

/// Runs in chip processes (`pto __chip-worker`), as `pto` and `pypto` do.
fn isolate() {
    pto_runner::chip_process::set_worker_command(vec![
        env!("CARGO_BIN_EXE_pto").to_string(),
        "__chip-worker".to_string(),
    ]);
}

fn f32s(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn tensor<'a>(params: &'a [BoundParam], name: &str) -> &'a [u8] {
    params
        .iter()
        .find_map(|p| match p {
            BoundParam::Tensor { name: n, array, .. } if n == name => Some(&array.data[..]),
            _ => None,
        })
        .unwrap()
}

/// `c` after one replay of `dir`, and whether `a + b` (rather than `a - b`) came out.
fn replay_sum(dir: &Path, recompile: bool) -> bool {
    let options = ReplayOptions {
        validate: false,
        recompile,
        rebuild_from_pto: false,
    };
    let config = RunConfig::new(None).unwrap();
    assert!(!config.in_process, "the test needs a chip process");
    let out = pto_runner::replay(dir, &config, &options).unwrap();
    sum_or_difference(&out.params)
}

/// Whether `c == a + b` (true) or `c == a - b` (false); panics on anything else.
fn sum_or_difference(params: &[BoundParam]) -> bool {
    let (a, b, c) = (
        f32s(tensor(params, "a")),
        f32s(tensor(params, "b")),
        f32s(tensor(params, "c")),
    );
    let sum = a.iter().zip(&b).zip(&c).all(|((a, b), c)| a + b == *c);
    let diff = a.iter().zip(&b).zip(&c).all(|((a, b), c)| a - b == *c);
    assert!(sum != diff, "c is neither a + b nor a - b");
    sum
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} has no `{from}`", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn a_kernel_edit_runs_in_the_warm_chip_process_with_and_without_recompile() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    isolate();
    let dir = common::example("stale_edit", "vector_add", "kernel");
    assert!(replay_sum(&dir, true), "the unedited kernel adds");
    edit(&dir.join(KERNEL), "pto_tile::add(", "pto_tile::sub(");
    assert!(
        !replay_sum(&dir, true),
        "replay after the edit runs the edit"
    );
    edit(&dir.join(KERNEL), "pto_tile::sub(", "pto_tile::add(");
    assert!(
        replay_sum(&dir, false),
        "replay(recompile=False) sees the edited source too (units.json)"
    );
}

#[test]
fn a_fresh_load_after_an_edit_runs_the_edit() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    isolate();
    let dir = common::example("stale_edit", "vector_add", "load");
    let config = RunConfig::new(None).unwrap();
    let run = |dir: &Path| {
        let build = load_for(dir, None).unwrap();
        let mut params = bind_inputs(dir, &build.meta).unwrap();
        build
            .execute_with(&mut params, &config, &mut |_| {})
            .unwrap();
        sum_or_difference(&params)
    };
    let first = load_for(&dir, None).unwrap();
    assert!(run(&dir));
    edit(&dir.join(KERNEL), "pto_tile::add(", "pto_tile::sub(");
    assert!(!run(&dir), "a fresh load runs the edited kernel");
    // The build loaded before the edit still runs the program it loaded, in a chip process
    // of its own identity, and the edited one after it runs the edit again.
    let mut params = bind_inputs(&dir, &first.meta).unwrap();
    first
        .execute_with(&mut params, &config, &mut |_| {})
        .unwrap();
    assert!(
        sum_or_difference(&params),
        "the earlier load keeps its own program"
    );
    assert!(!run(&dir));
}

#[test]
fn header_and_config_edits_reach_the_warm_chip_process() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    isolate();
    let dir = common::example("stale_edit", "vector_add", "others");
    assert!(replay_sum(&dir, false));
    // A header the kernel includes, next to it: the kernel's add becomes a subtraction.
    std::fs::write(
        dir.join("kernels/aiv/flip.h"),
        "#pragma once\n#define PTO_FLIP_ADD sub\n",
    )
    .unwrap();
    edit(
        &dir.join(KERNEL),
        "#include \"pto_tile.h\"",
        "#include \"pto_tile.h\"\n#include \"flip.h\"",
    );
    edit(
        &dir.join(KERNEL),
        "pto_tile::add(",
        "pto_tile::PTO_FLIP_ADD(",
    );
    assert!(!replay_sum(&dir, false), "the header's subtraction runs");
    std::fs::write(
        dir.join("kernels/aiv/flip.h"),
        "#pragma once\n#define PTO_FLIP_ADD add\n",
    )
    .unwrap();
    assert!(
        replay_sum(&dir, false),
        "an edit of the included header alone runs"
    );
    // kernel_config.py: an edit that changes nothing the program does still reloads (its
    // identity changed) and the run is right.
    let kc = dir.join("kernel_config.py");
    let text = std::fs::read_to_string(&kc).unwrap();
    std::fs::write(&kc, format!("{text}\n# edited\n")).unwrap();
    assert!(replay_sum(&dir, false));
}
