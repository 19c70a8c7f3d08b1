//! `.pt` read throughput against `.npy` read throughput on one 256 MiB tensor
//! (see docs/PERFORMANCE.md).
//!
//! ```sh
//! cargo bench -p pto-build-output --bench pt_read
//! PTO_BENCH_MB=64 PTO_BENCH_ROUNDS=11 cargo bench -p pto-build-output --bench pt_read
//! ```
//!
//! One fp32 tensor of `PTO_BENCH_MB` MiB (default 256) is written once as
//! `t.npy` (`write_npy`) and `t.pt` (`write_pt`, laid out as `torch.save`
//! lays it out) in a temporary directory. Each round reads both files whole
//! with `read_npy` and `read_pt` (the readers replay and bench use), in
//! alternating order so drift on a shared machine hits both; the page
//! cache is warm (one untimed read of each first), so this measures the
//! readers, not the disk. Prints the median and best time and throughput
//! of each and the ratio `.pt` / `.npy` of the medians (the goal is 1.5 or
//! less).

use std::time::{Duration, Instant};

use pto_build_output::{read_npy, read_pt, write_npy, write_pt, DType, NpyArray};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run small then.
    let quick = !std::env::args().any(|a| a == "--bench");
    let mb = if quick {
        1
    } else {
        env_usize("PTO_BENCH_MB", 256)
    };
    let rounds = if quick {
        1
    } else {
        env_usize("PTO_BENCH_ROUNDS", 7)
    };
    let n = mb * (1 << 20) / 4;
    let mut data = Vec::with_capacity(n * 4);
    for i in 0..n {
        data.extend_from_slice(&((i % 1000) as f32 * 0.25).to_le_bytes());
    }
    let array = NpyArray::new(DType::Float32, vec![n / 1024, 1024], data)?;
    let dir = tempfile::tempdir()?;
    let npy = dir.path().join("t.npy");
    let pt = dir.path().join("t.pt");
    write_npy(&npy, &array)?;
    write_pt(&pt, &array)?;
    drop(array);
    // Warm the page cache and check both read the same tensor.
    if read_npy(&npy)? != read_pt(&pt)? {
        return Err("the .npy and .pt files read differently".into());
    }
    let (mut t_npy, mut t_pt) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        let mut time_npy = || -> Result<(), Box<dyn std::error::Error>> {
            let t = Instant::now();
            let a = read_npy(&npy)?;
            t_npy.push(t.elapsed());
            std::hint::black_box(a);
            Ok(())
        };
        let mut time_pt = || -> Result<(), Box<dyn std::error::Error>> {
            let t = Instant::now();
            let a = read_pt(&pt)?;
            t_pt.push(t.elapsed());
            std::hint::black_box(a);
            Ok(())
        };
        if r % 2 == 0 {
            time_npy()?;
            time_pt()?;
        } else {
            time_pt()?;
            time_npy()?;
        }
    }
    let (best_npy, best_pt) = (t_npy.iter().min().copied(), t_pt.iter().min().copied());
    let (med_npy, med_pt) = (median(&mut t_npy), median(&mut t_pt));
    let gbs = |d: Duration| mb as f64 / 1024.0 / d.as_secs_f64();
    println!("pt_read: one fp32 tensor of {mb} MiB, {rounds} interleaved rounds, warm page cache");
    for (name, med, best) in [
        (".npy read_npy", med_npy, best_npy),
        (".pt  read_pt ", med_pt, best_pt),
    ] {
        let best = best.unwrap_or(med);
        println!(
            "  {name}: median {:8.1} ms ({:5.2} GiB/s), best {:8.1} ms ({:5.2} GiB/s)",
            med.as_secs_f64() * 1e3,
            gbs(med),
            best.as_secs_f64() * 1e3,
            gbs(best)
        );
    }
    println!(
        "  ratio .pt / .npy (medians): {:.2}x (goal: at most 1.5x)",
        med_pt.as_secs_f64() / med_npy.as_secs_f64()
    );
    Ok(())
}
