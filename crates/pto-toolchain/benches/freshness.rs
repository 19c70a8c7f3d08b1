//! What the warm-process identity check costs beside the `--no-recompile` check it rides
//! on: `ProgramIdentity::compute` (the loaded objects' bytes, hashed once per process, plus
//! `kernel_config.py` and `compiled_meta.json`) and `UnitsRecord::still_current` (every source, header and
//! installed binary hashed), on the bundled bgemm example's files, side by side in one run.
//! `cargo bench -p pto-toolchain --bench freshness`; results go to docs/PERFORMANCE.md.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pto_toolchain::freshness::{ProgramIdentity, UnitsRecord};
use pto_toolchain::{CompileUnit, CoreKind, UnitKind};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The median over 15 rounds of `n` calls of `f`, per call.
fn per_call(n: u32, mut f: impl FnMut()) -> Duration {
    let rounds: Vec<Duration> = (0..15)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                f();
            }
            t.elapsed() / n
        })
        .collect();
    median(rounds)
}

fn main() {
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/bgemm");
    let tmp = std::env::temp_dir().join(format!("pto-freshness-bench-{}", std::process::id()));
    std::fs::create_dir_all(tmp.join("cache")).expect("mkdir");
    let sources: Vec<PathBuf> = ["orchestration", "kernels/aic", "kernels/aiv"]
        .iter()
        .flat_map(|d| std::fs::read_dir(example.join(d)).into_iter().flatten())
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    // A stand-in binary per unit, of a realistic size (an -O2 kernel .so is ~100 KiB).
    let binaries: Vec<PathBuf> = (0..sources.len())
        .map(|i| {
            let p = tmp.join(format!("unit{i}.so"));
            std::fs::write(&p, vec![0x5a_u8; 100 << 10]).expect("write");
            p
        })
        .collect();
    let units: Vec<CompileUnit> = sources
        .iter()
        .map(|s| CompileUnit::new(s, UnitKind::Kernel(CoreKind::Aiv)))
        .collect();
    let mut record = UnitsRecord::for_units(&units);
    for s in &sources {
        record.add_input(s).expect("hash source");
    }
    for b in &binaries {
        record.add_binary(b).expect("hash binary");
    }
    record.save(&tmp).expect("save");
    let objects: Vec<&Path> = binaries.iter().map(PathBuf::as_path).collect();
    let (kc, meta) = (
        example.join("kernel_config.py"),
        example.join("compiled_meta.json"),
    );

    let units_check = per_call(200, || {
        let r = UnitsRecord::load(&tmp).expect("load");
        assert!(r.still_current(&units, &binaries));
    });
    // The first identity of a process hashes each object; later ones find them memoised.
    let first: Vec<Duration> = (0..15)
        .map(|round| {
            let fresh: Vec<PathBuf> = binaries
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let p = tmp.join(format!("fresh{round}-{i}.so"));
                    std::fs::copy(b, &p).expect("copy");
                    p
                })
                .collect();
            let paths: Vec<&Path> = fresh.iter().map(PathBuf::as_path).collect();
            let t = Instant::now();
            std::hint::black_box(ProgramIdentity::compute("a2a3sim", &paths, &[&kc, &meta]));
            t.elapsed()
        })
        .collect();
    let first = median(first);
    let identity = per_call(2000, || {
        std::hint::black_box(ProgramIdentity::compute("a2a3sim", &objects, &[&kc, &meta]));
    });
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let ratio = |d: Duration| d.as_secs_f64() / units_check.as_secs_f64();
    println!(
        "bgemm ({} units): --no-recompile check {:.1} us; program identity: first {:.1} us ({:.3}x), memoised {:.1} us ({:.3}x)",
        units.len(),
        us(units_check),
        us(first),
        ratio(first),
        us(identity),
        ratio(identity)
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
