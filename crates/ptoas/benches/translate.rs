//! Translation throughput: lines of `.pto` per second on large generated modules, for the
//! parser alone and for the whole translator (parse, verify, plan, lower, print), at level 3
//! (addresses given) and level 2 (every tile planned). Run with
//! `cargo bench -p ptoas --bench translate`; `PTOAS_BENCH_LINES` sets the size (default
//! 50 000 lines).

use std::hint::black_box;
use std::time::{Duration, Instant};

const TILE: &str = "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=16, v_col=64, blayout=row_major, slayout=none_box, fractal=512, pad=0>";

/// A vector kernel of about `lines` lines: blocks of view, load, arithmetic, loop and store
/// ops, as PyPTO writes them (with trailing locations).
fn generate(lines: usize, level3: bool) -> String {
    let mut s = String::from(
        "module attributes {pto.target_arch = \"a2a3\"} {\n  func.func @big(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %n: index) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n",
    );
    s += "    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n    %c16 = arith.constant 16 : index\n    %c64 = arith.constant 64 : index\n    %a0 = arith.constant 0 : i64\n    %a1 = arith.constant 4096 : i64\n    %f = arith.constant 1.00000000000000000e+00 : f32\n";
    s += "    %xv = pto.make_tensor_view %x, shape = [%n, %c64], strides = [%c64, %c1] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>\n";
    s += "    %yv = pto.make_tensor_view %y, shape = [%n, %c64], strides = [%c64, %c1] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>\n";
    let mut i = 0usize;
    let mut n = s.lines().count();
    while n < lines.saturating_sub(3) {
        let (aa, ab) = if level3 {
            (" addr = %a0", " addr = %a1")
        } else {
            ("", "")
        };
        s += &format!(
            "    %o{i} = arith.muli %c16, %c{} : index loc(\"big.py\":{i}:4)\n",
            if i.is_multiple_of(2) { "1" } else { "0" }
        );
        s += &format!("    %p{i} = pto.partition_view %xv, offsets = [%o{i}, %c0], sizes = [%c16, %c64] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x64xf32> loc(\"big.py\":{i}:8)\n");
        s += &format!("    %t{i} = pto.alloc_tile{aa} : {TILE} loc(\"big.py\":{i}:12)\n");
        s += &format!("    pto.tload ins(%p{i} : !pto.partition_tensor_view<16x64xf32>) outs(%t{i} : {TILE}) loc(\"big.py\":{i}:16)\n");
        s += &format!("    %u{i} = pto.alloc_tile{ab} : {TILE}\n");
        s += &format!("    scf.for %k{i} = %c0 to %c16 step %c1 {{\n      pto.tadds ins(%t{i}, %f : {TILE}, f32) outs(%u{i} : {TILE})\n      pto.texp ins(%u{i} : {TILE}) outs(%u{i} : {TILE})\n    }}\n");
        s += &format!("    %q{i} = pto.partition_view %yv, offsets = [%o{i}, %c0], sizes = [%c16, %c64] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x64xf32>\n");
        s += &format!("    pto.tstore ins(%u{i} : {TILE}) outs(%q{i} : !pto.partition_tensor_view<16x64xf32>)\n");
        n += 11;
        i += 1;
    }
    s += "    return\n  }\n}\n";
    s
}

fn time(mut f: impl FnMut(), reps: usize) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed());
    }
    best
}

fn main() {
    let lines: usize = std::env::var("PTOAS_BENCH_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    for level3 in [true, false] {
        let text = generate(lines, level3);
        let n = text.lines().count();
        let mut options = ptoas::Options::new();
        options.level = if level3 {
            ptoas::Level::Level3
        } else {
            ptoas::Level::Level2
        };
        let parse = time(
            || {
                black_box(ptoas::parse(black_box(&text), "big.pto", ptoas::Arch::A3).is_ok());
            },
            5,
        );
        let mut out_len = 0;
        let full = time(
            || match ptoas::translate(black_box(&text), "big.pto", &options) {
                Ok(c) => out_len = c.len(),
                Err(e) => panic!("{e}"),
            },
            5,
        );
        let rate = |d: Duration| n as f64 / d.as_secs_f64();
        println!(
            "level{}: {n} lines ({} KiB in, {} KiB C++ out): parse {:.1} ms ({:.0} lines/s), translate {:.1} ms ({:.0} lines/s)",
            if level3 { 3 } else { 2 },
            text.len() / 1024,
            out_len / 1024,
            parse.as_secs_f64() * 1e3,
            rate(parse),
            full.as_secs_f64() * 1e3,
            rate(full),
        );
    }
}
