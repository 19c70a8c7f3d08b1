//! L3 (several chips) costs through the real engine and chip processes (`pto __chip-worker`):
//! the host -> chip dispatch round trip, dispatches per second with empty kernels on 4
//! chips, and the builtin allreduce's bandwidth over the comm windows next to `memcpy` on
//! this machine — side by side, as ratios. `cargo bench -p pto-cli --bench l3_dispatch`;
//! results go to docs/PERFORMANCE.md.
//!
//! Knobs (environment): `PTO_BENCH_PLATFORM` (default `cpu`), `PTO_BENCH_ROUNDS` (7),
//! `PTO_BENCH_DISPATCHES` (2000 per chip for the throughput), `PTO_BENCH_MIB` (16: bytes of
//! each rank's allreduce buffer).

use std::path::Path;
use std::time::{Duration, Instant};

use pto_runner::l3::{comm, ChipProgram, Engine, Tag, TensorArg};
use pto_runner::RunConfig;

const ALLREDUCE: &str = "builtin.tensor.allreduce__sum__fp32";

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn best(v: &[Duration]) -> Duration {
    v.iter().copied().min().unwrap_or_default()
}

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn gbs(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e9
}

fn start(platform: &str, chips: usize, programs: &[(&str, &Path)]) -> Engine {
    let p = pto_runner::config::parse_platform(platform).expect("platform");
    let compiled = programs
        .iter()
        .map(|(n, d)| ChipProgram::compile(n, d, p).expect("compile the chip program"))
        .collect();
    let ids: Vec<i64> = (0..chips as i64).collect();
    Engine::start(p, &ids, compiled).expect("start the chips")
}

/// One dispatch of the empty program at a time on one chip: submit, wait, repeat.
fn round_trip(platform: &str, dir: &Path, rounds: usize, config: &RunConfig) -> Vec<Duration> {
    let mut e = start(platform, 1, &[("empty", dir)]);
    let n = 200;
    let mut per = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..n {
            e.submit("empty", 0, &[], &[], &[], config, None)
                .expect("submit");
            e.drain().expect("drain");
        }
        per.push(t.elapsed() / n as u32);
    }
    e.close(false);
    per
}

/// The same empty program run in this process by the L2 runtime (no chip process, no
/// control channel): what a dispatch costs before any transport.
fn in_process(platform: &str, dir: &Path, rounds: usize, config: &RunConfig) -> Vec<Duration> {
    let p = pto_runner::config::parse_platform(platform).expect("platform");
    let build = pto_runner::build::load_sub_build(dir, p).expect("load the empty program");
    let scratch = std::env::temp_dir();
    let n = 200;
    let mut per = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..n {
            build
                .execute_args(&mut [], config, &scratch)
                .expect("run the empty program");
        }
        per.push(t.elapsed() / n as u32);
    }
    per
}

/// `per_chip` independent empty dispatches on each of 4 chips, submitted round-robin.
fn throughput(
    platform: &str,
    dir: &Path,
    rounds: usize,
    per_chip: usize,
    config: &RunConfig,
) -> Vec<f64> {
    let chips = 4;
    let mut e = start(platform, chips, &[("empty", dir)]);
    let mut rates = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..per_chip {
            for w in 0..chips {
                e.submit("empty", w, &[], &[], &[], config, None)
                    .expect("submit");
            }
        }
        e.drain().expect("drain");
        rates.push((per_chip * chips) as f64 / t.elapsed().as_secs_f64());
    }
    e.close(false);
    rates
}

/// One builtin allreduce of `bytes` per rank over `ranks` chips (a round: one dispatch per
/// rank, then wait), `rounds` times.
fn allreduce(
    platform: &str,
    dir: &Path,
    ranks: usize,
    bytes: usize,
    rounds: usize,
    config: &RunConfig,
) -> Vec<Duration> {
    let mut e = start(platform, ranks, &[(ALLREDUCE, dir)]);
    let signal = 64 * 4;
    let window = bytes + signal;
    let workers: Vec<usize> = (0..ranks).collect();
    let (region, members) = e
        .allocate_domain(&workers, window)
        .expect("allocate the comm domain");
    let mut per = Vec::new();
    for round in 0..=rounds {
        let t = Instant::now();
        for (r, &(ctx, _)) in members.iter().enumerate() {
            let base = (comm::HEADER_BYTES + r * window) as u64;
            let tensors = [
                TensorArg {
                    region,
                    offset: base,
                    shape: vec![(bytes / 4) as u64],
                    dtype: 0,
                    tag: Tag::InOut,
                },
                TensorArg {
                    region,
                    offset: base + bytes as u64,
                    shape: vec![ranks as u64, 1],
                    dtype: 2,
                    tag: Tag::InOut,
                },
            ];
            e.submit(
                ALLREDUCE,
                r,
                &tensors,
                &[ranks as u64, ctx, 4],
                &[],
                config,
                None,
            )
            .expect("submit the allreduce");
        }
        e.drain().expect("drain");
        // Round 0 is the warm-up (first touch of the windows and the kernels' buffers).
        if round > 0 {
            per.push(t.elapsed());
        }
    }
    e.close(false);
    per
}

/// `memcpy` of `bytes` (a fresh-buffer copy, as a rank reads its peers' windows).
fn memcpy_bw(bytes: usize, rounds: usize) -> Vec<Duration> {
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    let mut per = Vec::new();
    for _ in 0..rounds + 1 {
        let t = Instant::now();
        dst.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&dst);
        per.push(t.elapsed());
    }
    per.remove(0);
    per
}

fn main() {
    let platform = std::env::var("PTO_BENCH_PLATFORM").unwrap_or_else(|_| "cpu".to_string());
    let rounds = env_usize("PTO_BENCH_ROUNDS", 7).max(1);
    let per_chip = env_usize("PTO_BENCH_DISPATCHES", 2000).max(1);
    let bytes = env_usize("PTO_BENCH_MIB", 16).max(1) << 20;
    // The chip processes are this build's `pto __chip-worker`.
    std::env::set_var(
        "PTO_CHIP_WORKER_COMMAND",
        format!("{} __chip-worker", env!("CARGO_BIN_EXE_pto")),
    );
    let root = std::env::temp_dir().join(format!("pto-l3-bench-{}", std::process::id()));
    let empty = root.join("empty");
    pto_examples::l3_examples::empty_program("empty")
        .write(&empty)
        .expect("write the empty program");
    let ar = root.join(ALLREDUCE);
    pto_examples::l3_collectives::sub_build(ALLREDUCE)
        .expect("render the allreduce")
        .write(&ar)
        .expect("write the allreduce");
    let config = RunConfig::new(Some(&platform)).expect("run config");

    println!("platform {platform}, {rounds} rounds, best (median)");
    let local = in_process(&platform, &empty, rounds, &config);
    println!(
        "in-process L2 run of the empty program: {:.1} us ({:.1} us)",
        best(&local).as_secs_f64() * 1e6,
        median(&local).as_secs_f64() * 1e6
    );
    let rt = round_trip(&platform, &empty, rounds, &config);
    println!(
        "dispatch round trip, 1 chip, empty kernel: {:.1} us ({:.1} us) = {:.2} x the in-process run",
        best(&rt).as_secs_f64() * 1e6,
        median(&rt).as_secs_f64() * 1e6,
        best(&rt).as_secs_f64() / best(&local).as_secs_f64().max(1e-12)
    );
    let mut rates = throughput(&platform, &empty, rounds, per_chip, &config);
    rates.sort_by(f64::total_cmp);
    println!(
        "dispatches per second, 4 chips, empty kernels ({} per chip): {:.0} ({:.0})",
        per_chip,
        rates.last().copied().unwrap_or(0.0),
        rates[rates.len() / 2]
    );
    let mc = memcpy_bw(bytes, rounds);
    let mem = gbs(bytes, best(&mc));
    println!(
        "memcpy {} MiB: {:.2} GB/s ({:.2} GB/s)",
        bytes >> 20,
        mem,
        gbs(bytes, median(&mc))
    );
    for ranks in [2, 4] {
        let per = allreduce(&platform, &ar, ranks, bytes, rounds, &config);
        let alg = gbs(bytes, best(&per));
        // Bus bandwidth (NCCL's convention): what each rank's links carry for a
        // bandwidth-optimal allreduce, 2 (n - 1) / n times the buffer.
        let bus = alg * 2.0 * (ranks as f64 - 1.0) / ranks as f64;
        println!(
            "allreduce {} MiB fp32 on {ranks} ranks: {:.2} ms ({:.2} ms), algorithm {:.2} GB/s = {:.3} x memcpy, bus {:.2} GB/s = {:.3} x memcpy",
            bytes >> 20,
            best(&per).as_secs_f64() * 1e3,
            median(&per).as_secs_f64() * 1e3,
            alg,
            alg / mem,
            bus,
            bus / mem,
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}
