//! Replay lifecycle latency with the real `pto` binary on the bgemm example:
//! cold full recompile (empty compiler cache), default replay (forced invalidation, the
//! content-addressed cache serves unchanged kernels), `--no-recompile` (stamp-checked
//! reuse), and `.pto` edit → validated rerun. `cargo bench -p pto-cli --bench
//! replay_lifecycle`; results go to docs/PERFORMANCE.md. Reuse needs a trustworthy runtime
//! identity, i.e. a build of a clean checkout; the benchmark says which case it measured.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let p = e.path();
        let dest = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).expect("copy");
        }
    }
}

fn run(args: &[&str], env: &[(&str, &str)]) -> Duration {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pto"));
    c.args(args).env_remove("PTOAS_ROOT");
    for (k, v) in env {
        c.env(k, v);
    }
    let t = Instant::now();
    let o = c.output().expect("spawn pto");
    let d = t.elapsed();
    assert!(
        o.status.code() == Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    d
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let root = std::env::temp_dir().join(format!("pto-lifecycle-bench-{}", std::process::id()));
    let dir = root.join("bgemm");
    copy_dir(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/bgemm"),
        &dir,
    );
    let d = dir.to_str().expect("utf-8 path");
    let cache = root.join("cache");
    let cache_s = cache.to_str().expect("utf-8 path");
    let rounds = 7;

    let cold: Vec<_> = (0..rounds)
        .map(|i| {
            let fresh = root.join(format!("cold-cache-{i}"));
            run(
                &["replay", d, "--validate"],
                &[("PTO_CACHE_DIR", fresh.to_str().expect("utf-8"))],
            )
        })
        .collect();
    run(&["replay", d], &[("PTO_CACHE_DIR", cache_s)]);
    let warm: Vec<_> = (0..rounds)
        .map(|_| run(&["replay", d, "--validate"], &[("PTO_CACHE_DIR", cache_s)]))
        .collect();
    let reuse: Vec<_> = (0..rounds)
        .map(|_| {
            run(
                &["replay", d, "--validate", "--no-recompile"],
                &[("PTO_CACHE_DIR", cache_s)],
            )
        })
        .collect();
    let stamped = dir.join("cache/binary_context.json").exists();

    // .pto edit -> validated rerun: a translator that copies the .pto's C++ body.
    let bin = root.join("ptoas-root");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::fs::write(bin.join("ptoas"), "#!/bin/sh\ncp \"$1\" \"$3\"\n").expect("write ptoas");
    std::fs::set_permissions(bin.join("ptoas"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    let k = std::fs::read_to_string(dir.join("kernels/aiv/kernel_add.cpp")).expect("kernel");
    let body = k
        .split("// --- ptoas-generated code ---\n")
        .nth(1)
        .and_then(|b| b.split("// --- Kernel entry point ---").next())
        .expect("sentinels");
    std::fs::create_dir_all(dir.join("ptoas")).expect("mkdir");
    let pto_path = dir.join("ptoas/kernel_add.pto");
    let edits: Vec<_> = (0..rounds)
        .map(|i| {
            std::fs::write(dir.join("ptoas/kernel_add.cpp"), body).expect("raw cpp");
            std::thread::sleep(Duration::from_millis(15));
            // A semantically neutral edit that changes the source (a new comment).
            let pto = format!(
                "// edit {i}\n{}",
                body.replace("static __aicore__ void", "AICORE void")
            );
            std::fs::write(&pto_path, pto).expect("pto");
            run(
                &["replay", d, "--validate"],
                &[
                    ("PTO_CACHE_DIR", cache_s),
                    ("PTOAS_ROOT", bin.to_str().expect("utf-8")),
                ],
            )
        })
        .collect();

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let (cold, warm, reuse, edit) = (median(cold), median(warm), median(reuse), median(edits));
    println!("bgemm replay --validate, whole `pto` process, median of {rounds}:");
    println!(
        "  cold full recompile (empty compiler cache)      {:>8.1} ms",
        ms(cold)
    );
    println!(
        "  default replay (invalidate; content cache warm) {:>8.1} ms",
        ms(warm)
    );
    println!(
        "  --no-recompile ({})        {:>8.1} ms   ({:.1}x faster than cold, {:.1}x than default)",
        if stamped {
            "stamp matched, reuse "
        } else {
            "no identity, rebuilds"
        },
        ms(reuse),
        cold.as_secs_f64() / reuse.as_secs_f64(),
        warm.as_secs_f64() / reuse.as_secs_f64()
    );
    println!(
        "  .pto edit -> spliced, rebuilt, validated        {:>8.1} ms",
        ms(edit)
    );
    let _ = std::fs::remove_dir_all(&root);
}
