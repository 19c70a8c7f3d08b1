//! The parser fuzz: thousands of mutants of the sample files (byte and token edits,
//! truncations, spliced lines) and randomly assembled ops through the whole translator.
//! The property: it never panics, and every failure is an error with a location.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::common::data;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: [&str; 40] = [
    "%",
    "%x",
    "@",
    "!",
    "#",
    "^bb0:",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    ",",
    ":",
    "=",
    "->",
    "?",
    "-",
    "0x",
    "9999999999999999999999",
    "1.5e+",
    "\"",
    "\\",
    "//",
    "loc(",
    "x",
    "!pto.tile_buf<",
    "#pto<round_mode ",
    "scf.for",
    "scf.yield",
    "pto.tadd ins(",
    "outs(",
    "arith.constant",
    "func.func @g()",
    "module {",
    "rows=0",
    "v_row=?",
    "\u{e9}",
];

/// `default` cases, or `PTOAS_FUZZ_CASES` for a longer local run.
fn cases(default: usize) -> usize {
    std::env::var("PTOAS_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn mutate(src: &str, rng: &mut Rng) -> String {
    let mut s: Vec<char> = src.chars().collect();
    for _ in 0..1 + rng.below(4) {
        if s.is_empty() {
            break;
        }
        let at = rng.below(s.len());
        match rng.below(6) {
            0 => {
                let n = 1 + rng.below(8);
                s.drain(at..(at + n).min(s.len()));
            }
            1 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                for (i, c) in t.chars().enumerate() {
                    s.insert(at + i, c);
                }
            }
            2 => s.truncate(at),
            3 => {
                let b = rng.below(s.len());
                s.swap(at, b);
            }
            4 => {
                // Duplicate a line.
                let text: String = s.iter().collect();
                let lines: Vec<&str> = text.lines().collect();
                let l = lines[rng.below(lines.len())].to_string();
                for (i, c) in l.chars().chain(std::iter::once('\n')).enumerate() {
                    s.insert(at + i, c);
                }
            }
            _ => {
                let digit = char::from(b'0' + rng.below(10) as u8);
                s[at] = digit;
            }
        }
    }
    s.into_iter().collect()
}

fn check(text: &str, what: &str) {
    let mut options = ptoas::Options::new();
    if text.contains("addr = ") {
        options.level = ptoas::Level::Level3;
    }
    let r = catch_unwind(AssertUnwindSafe(|| {
        ptoas::translate(text, "fuzz.pto", &options)
    }));
    match r {
        Err(_) => panic!("{what}: the translator panicked on:\n{text}"),
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            let loc = e
                .location()
                .unwrap_or_else(|| panic!("{what}: unlocated error {e}"));
            assert_eq!(loc.file, "fuzz.pto");
            assert!(loc.line >= 1 && loc.col >= 1, "{what}: {e}");
            assert!(!e.message().is_empty());
        }
    }
}

#[test]
fn mutants_of_the_samples_never_panic_and_fail_with_locations() {
    let samples = [
        "vadd.pto",
        "softmax.pto",
        "matmul.pto",
        "ctrl.pto",
        "mix.pto",
        "grammar.pto",
        "cmo.pto",
        "comm.pto",
        "carry.pto",
        "tassign.pto",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut failures = 0usize;
    let mut total = 0usize;
    for name in samples {
        let src = data(name);
        for i in 0..cases(400) {
            let m = mutate(&src, &mut rng);
            check(&m, &format!("{name} mutant {i}"));
            total += 1;
            if ptoas::translate(&m, "fuzz.pto", &ptoas::Options::new()).is_err() {
                failures += 1;
            }
        }
    }
    // The mutations must actually exercise the error paths.
    assert!(failures > total / 2, "{failures} of {total} mutants failed");
}

#[test]
fn randomly_assembled_ops_never_panic() {
    let tiles = [
        "!pto.tile_buf<vec, 16x16xf32>",
        "!pto.tile_buf<loc=vec, dtype=f16, rows=16, cols=16, v_row=?, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=1>",
        "!pto.tile_buf<acc, 16x16xf32>",
        "!pto.tile_buf<mat, 16x16xbf16>",
    ];
    let ops = [
        "tadd", "tsub", "texp", "tmatmul", "trowsum", "tcvt", "tstore", "tload", "tmov", "tfoo",
    ];
    let mut rng = Rng(12345);
    for case in 0..cases(500) {
        let mut body = String::from("    %c0 = arith.constant 0 : index\n    %c16 = arith.constant 16 : index\n    %f = arith.constant 1.0 : f32\n");
        let mut defined: Vec<(String, &str)> = Vec::new();
        for i in 0..1 + rng.below(6) {
            let t = tiles[rng.below(tiles.len())];
            let valid = if t.contains("v_row=?") {
                " valid_row = %c16"
            } else {
                ""
            };
            body += &format!("    %t{i} = pto.alloc_tile{valid} : {t}\n");
            defined.push((format!("%t{i}"), t));
        }
        for _ in 0..rng.below(6) {
            let op = ops[rng.below(ops.len())];
            let n_in = rng.below(3);
            let mut ins = Vec::new();
            let mut tys = Vec::new();
            for _ in 0..n_in {
                if rng.below(4) == 0 {
                    ins.push("%f".to_string());
                    tys.push("f32");
                } else {
                    let (v, t) = &defined[rng.below(defined.len())];
                    ins.push(v.clone());
                    tys.push(t);
                }
            }
            let (d, dt) = &defined[rng.below(defined.len())];
            body += &format!(
                "    pto.{op} ins({} : {}) outs({d} : {dt})\n",
                ins.join(", "),
                tys.join(", ")
            );
        }
        let kind = ["vector", "cube"][rng.below(2)];
        let text = format!(
            "module {{\n  func.func @k() attributes {{pto.kernel_kind = #pto.kernel_kind<{kind}>}} {{\n{body}    return\n  }}\n}}\n"
        );
        check(&text, &format!("assembled case {case}"));
    }
}
