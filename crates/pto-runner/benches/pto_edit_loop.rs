//! Latency of the `.pto` edit loop on the bundled `paged_attn_bf16` example: edit
//! `ptoas/softmax_prepare.pto`, then the steps `pto replay DIR --validate` runs, each timed:
//! `.pto` → cpp (the bundled translator and the splice), C++ compile (invalidation, then the
//! build with the content cache serving the unchanged units), the run, and the golden
//! comparison; then the same edit through one `replay_with` call, end to end.
//!
//! `cargo bench -p pto-runner --bench pto_edit_loop` (`PTO_BENCH_ROUNDS`, default 5). Each
//! edit renames an SSA value (semantically neutral, but the kernel's C++ changes through its
//! `// pto:` comment), so every round pays one real compile, as a real edit does, and the
//! golden must still pass. No ptoas is looked up: `PTOAS_ROOT` and `PATH` entries with a
//! `ptoas` are removed, so the bundled translator runs. Results go to docs/PERFORMANCE.md.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use pto_build_output::{compare, read_npy, read_tolerances, ParamDirection};
use pto_runner::inputs::{bind_inputs, BoundParam};
use pto_runner::lifecycle::{invalidate_binary_cache, rebuild_kernel_cpp_from_pto};
use pto_runner::{load_for, replay_with, ReplayOptions, RunConfig};

const UNIT: &str = "ptoas/softmax_prepare.pto";
const STAMP: &str = "ptoas/softmax_prepare.cpp";

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let dest = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).expect("copy");
        }
    }
}

fn set_mtime(path: &Path, at: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(at))
        .expect("set mtime");
}

/// Writes `pristine` with `%scaled` renamed to `%scaled_<tag>` as the unit, newer than its
/// stamp.
fn edit(dir: &Path, pristine: &str, tag: &str) {
    let edited = pristine
        .replace("%scaled ", &format!("%scaled_{tag} "))
        .replace("%scaled,", &format!("%scaled_{tag},"));
    assert!(
        edited.matches(&format!("%scaled_{tag}")).count() >= 3,
        "edit applies"
    );
    set_mtime(&dir.join(STAMP), SystemTime::now() - Duration::from_secs(2));
    std::fs::write(dir.join(UNIT), edited).expect("write .pto");
}

/// Compares every output with `data/out/<name>.npy`, as replay's validation does.
fn validate(dir: &Path, params: &[BoundParam]) -> bool {
    let tol = read_tolerances(&dir.join("golden.py")).expect("tolerances");
    params.iter().all(|p| match p {
        BoundParam::Tensor {
            name,
            direction,
            array,
        } if *direction != ParamDirection::In => {
            let golden =
                read_npy(&dir.join("data/out").join(format!("{name}.npy"))).expect("golden");
            compare(array, &golden, tol).expect("compare").passed()
        }
        _ => true,
    })
}

fn stats(v: &[Duration]) -> (f64, f64) {
    let mut ms: Vec<f64> = v.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    (ms[0], ms[ms.len() / 2])
}

fn main() {
    // No ptoas anywhere: the bundled translator, as on a machine without one.
    std::env::remove_var("PTOAS_ROOT");
    std::env::remove_var("PYPTO_REBUILD_FROM_PTO");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| !d.join("ptoas").exists())
        .collect();
    std::env::set_var("PATH", std::env::join_paths(dirs).expect("PATH"));

    let rounds: usize = std::env::var("PTO_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let root = std::env::temp_dir().join(format!("pto-edit-loop-bench-{}", std::process::id()));
    let dir = root.join("paged_attn_bf16");
    copy_dir(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/paged_attn_bf16"),
        &dir,
    );
    let pristine = std::fs::read_to_string(dir.join(UNIT)).expect("unit");
    let config = RunConfig::new(None).expect("config");
    let platform = config.platform();
    let options = ReplayOptions {
        validate: true,
        recompile: true,
        rebuild_from_pto: true,
    };
    // Warm the content cache with the unchanged units, as an earlier replay would have.
    let o = replay_with(&dir, &config, &options, &mut |_| {}).expect("first replay");
    assert!(o.passed(), "the bundled example passes");

    let run_id = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let (mut splice, mut build, mut run, mut check, mut steps, mut whole) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut compiled = Vec::new();
    for r in 0..rounds {
        edit(&dir, &pristine, &format!("{run_id}_{r}_a"));
        let t0 = Instant::now();
        let touched = rebuild_kernel_cpp_from_pto(&dir, true, &mut |_| {}).expect("rebuild");
        assert_eq!(touched, ["kernels/aiv/softmax_prepare.cpp"]);
        let t1 = Instant::now();
        invalidate_binary_cache(&dir).expect("invalidate");
        let b = load_for(&dir, Some(platform)).expect("compile");
        compiled.push(b.compile.n_units - b.compile.n_cached);
        let t2 = Instant::now();
        let mut params = bind_inputs(&dir, &b.meta).expect("inputs");
        b.execute_with(&mut params, &config, &mut |_| {})
            .expect("run");
        let t3 = Instant::now();
        assert!(
            validate(&dir, &params),
            "a neutral edit still matches the golden"
        );
        let t4 = Instant::now();
        splice.push(t1 - t0);
        build.push(t2 - t1);
        run.push(t3 - t2);
        check.push(t4 - t3);
        steps.push(t4 - t0);
        drop(b);

        edit(&dir, &pristine, &format!("{run_id}_{r}_b"));
        let t = Instant::now();
        let o = replay_with(&dir, &config, &options, &mut |_| {}).expect("replay");
        whole.push(t.elapsed());
        assert!(o.passed() && o.compile.n_units - o.compile.n_cached == 1);
    }
    println!(
        "paged_attn_bf16: edit ptoas/softmax_prepare.pto -> validated rerun on {}, {rounds} rounds (ms)",
        platform.name()
    );
    println!("  {:<46} {:>10} {:>10}", "step", "min", "median");
    for (name, v) in [
        (".pto -> cpp (bundled ptoas, splice)", &splice),
        ("C++ compile (edited kernel; rest from cache)", &build),
        ("run (bind inputs, chip, copy back)", &run),
        ("validate (compare with data/out)", &check),
        ("sum of the steps", &steps),
        ("whole replay_with(--validate)", &whole),
    ] {
        let (min, med) = stats(v);
        println!("  {name:<46} {min:>10.1} {med:>10.1}");
    }
    println!("  units compiled per edit: {compiled:?}");
    let _ = std::fs::remove_dir_all(&root);
}
