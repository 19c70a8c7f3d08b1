//! Benchmark (not a test): elements per second of TADD, TEXP and TROWMAX, and GFLOP/s of
//! TMATMUL (bf16 and f32), of our PTO-ISA header against plain C++ loops doing the same work
//! on this machine.
//!
//! `cargo bench -p pto-isa` compiles `benches/isa_bench.cpp` with the system C++ compiler
//! (`-O2 -std=c++17 -D__CPU_SIM -D__DAV_VEC__`, the kernels' defines) against the headers the
//! toolchain materializes, runs it and prints the rates side by side. The goal is a ratio of
//! at least 0.5 (within 2x of the plain loop).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    if let Err(e) = run() {
        eprintln!("isa bench: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/isa-bench");
    std::fs::create_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
    let tc =
        pto_toolchain::Toolchain::discover(&target.join("cache")).map_err(|e| e.to_string())?;
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/isa_bench.cpp");
    let exe = target.join("isa_bench");
    let out = Command::new(tc.compiler())
        .args(["-O2", "-std=c++17", "-D__CPU_SIM", "-D__DAV_VEC__"])
        .arg(format!("-I{}", tc.include_dir().display()))
        .arg(format!("-I{}", tc.isa_include_dir().display()))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", tc.compiler().display()))?;
    if !out.status.success() {
        return Err(format!(
            "compiling the benchmark failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let run = Command::new(&exe)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if !run.status.success() {
        return Err(format!(
            "the benchmark failed:\n{}",
            String::from_utf8_lossy(&run.stderr)
        ));
    }
    println!(
        "{:<28} {:>10} {:>14} {:>14} {:>8}",
        "case", "unit", "header", "plain C++", "ratio"
    );
    for line in String::from_utf8_lossy(&run.stdout).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [name, unit, header, plain] = f[..] {
            let (h, p): (f64, f64) = (
                header.parse().map_err(|_| format!("bad line {line:?}"))?,
                plain.parse().map_err(|_| format!("bad line {line:?}"))?,
            );
            println!("{name:<28} {unit:>10} {h:>14.1} {p:>14.1} {:>8.2}", h / p);
        }
    }
    Ok(())
}
