//! Property tests of the `kernel_config.py` reader and of the Python-literal
//! parser under it, on random inputs, without the fuzzer.
//!
//! A deterministic generator (xorshift, fixed seeds) builds random configs
//! (names and paths with quotes, backslashes, control and non-ASCII
//! characters; extreme ints; paths under and outside the build directory)
//! and random literal expressions. Properties: the writer's text reads back
//! to the same config; a rendered expression (random spacing, line breaks
//! inside brackets, trailing commas) parses to the same tree; and random
//! edits of valid files never make the readers panic, and every rejection
//! points at a line and column inside the text. `PTO_PROPTEST_CASES` raises
//! the number of cases (default 300 per property).

use std::path::{Path, PathBuf};

use super::*;
use crate::pysyntax::{self, ExprKind};

fn cases() -> u64 {
    std::env::var("PTO_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    fn next(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound.max(1)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.next(items.len() as u64) as usize]
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.next(one_in) == 0
    }
}

const CHARS: [char; 22] = [
    'a', 'Z', '_', '0', '9', ' ', '\'', '"', '\\', '\n', '\t', '\r', '\u{7}', '\u{7f}', 'é', '中',
    '😀', '#', '/', '{', ']', ':',
];

fn text(rng: &mut Rng, max: u64) -> String {
    (0..rng.next(max + 1)).map(|_| *rng.pick(&CHARS)).collect()
}

/// A path segment: non-empty, no `/` or NUL, not `.` or `..`.
fn segment(rng: &mut Rng) -> String {
    loop {
        let s: String = text(rng, 8).chars().filter(|&c| c != '/').collect();
        if !s.is_empty() && s != "." && s != ".." {
            return s;
        }
    }
}

fn path(rng: &mut Rng, root: &Path) -> PathBuf {
    let mut p = if rng.chance(3) {
        PathBuf::from("/src")
    } else {
        root.to_path_buf()
    };
    for _ in 0..1 + rng.next(4) {
        p.push(segment(rng));
    }
    p
}

const DIRS: [ArgDirection; 4] = [
    ArgDirection::Scalar,
    ArgDirection::In,
    ArgDirection::Out,
    ArgDirection::InOut,
];

fn signature(rng: &mut Rng) -> Option<Vec<ArgDirection>> {
    // An empty signature is written like an absent one.
    (!rng.chance(3)).then(|| (0..1 + rng.next(5)).map(|_| *rng.pick(&DIRS)).collect())
}

const INTS: [i64; 7] = [0, 1, 2, -1, 4, i64::MAX, i64::MIN];
const FUNC_IDS: [i32; 6] = [0, 1, 2, 7, 1000, i32::MAX];

fn config(rng: &mut Rng, root: &Path) -> KernelConfig {
    let mut func_ids: Vec<i32> = FUNC_IDS.iter().copied().filter(|_| rng.chance(2)).collect();
    func_ids.sort_unstable();
    KernelConfig {
        runtime: RuntimeConfig {
            runtime: text(rng, 12),
            aicpu_thread_num: *rng.pick(&INTS),
            enable_sdma: rng.chance(2),
        },
        orchestration: OrchestrationConfig {
            source: path(rng, root),
            function_name: text(rng, 12),
            config_name: rng.chance(2).then(|| text(rng, 8)),
            signature: signature(rng),
        },
        kernels: func_ids
            .into_iter()
            .map(|func_id| KernelEntry {
                func_id,
                name: text(rng, 10),
                source: path(rng, root),
                core_type: *rng.pick(&[CoreType::Aic, CoreType::Aiv]),
                signature: signature(rng),
                extra_include_dirs: (0..rng.next(3)).map(|_| path(rng, root)).collect(),
                external: rng.chance(3),
            })
            .collect(),
    }
}

#[test]
fn written_configs_read_back_equal() {
    let root = Path::new("/b");
    let file = Path::new("/b/kernel_config.py");
    let mut rng = Rng::new(0x6b63_0001);
    for case in 0..cases() {
        let config = config(&mut rng, root);
        let text = config.to_python_source(root, file).unwrap();
        let back = KernelConfig::parse(&text, root, file)
            .unwrap_or_else(|e| panic!("case {case}: {e}\n{text}"));
        assert_eq!(back, config, "case {case}\n{text}");
        let names = parse_name_map(&text, root, file).unwrap();
        assert_eq!(names.names, config.name_map(), "case {case}");
        assert!(names.skipped.is_empty(), "case {case}");
    }
}

/// A random literal expression and the compact form `show` gives its parse.
fn expr(rng: &mut Rng, depth: u32) -> (String, String) {
    let leaf = depth == 0 || rng.chance(3);
    let sp = |rng: &mut Rng| {
        if rng.chance(2) {
            ""
        } else {
            *rng.pick(&[" ", "  ", "\t", "\n", " \n\t", "  # c\n"])
        }
    };
    if leaf {
        return match rng.next(6) {
            0 => {
                let i = *rng.pick(&INTS);
                (i.to_string(), format!("i{i}"))
            }
            1 => {
                let x = *rng.pick(&[0.5, 1e-5, 1e300, 3.25, 0.0]);
                (format!("{x:e}"), format!("f{x:e}"))
            }
            2 => {
                let s = text(rng, 6);
                (crate::pyrepr::repr_str(&s), format!("{s:?}"))
            }
            3 => {
                let (t, b) = *rng.pick(&[("True", "true"), ("False", "false"), ("None", "None")]);
                (t.to_string(), b.to_string())
            }
            4 => ("_D.IN".to_string(), "_D.IN".to_string()),
            _ => {
                let segs: Vec<String> = (0..rng.next(3)).map(|_| segment(rng)).collect();
                let text = segs
                    .iter()
                    .map(|s| format!(" / {}", crate::pyrepr::double_quoted(s)))
                    .collect::<String>();
                let shown = segs
                    .iter()
                    .fold("_ROOT_DIR".to_string(), |acc, s| format!("({acc} / {s:?})"));
                (format!("str(_ROOT_DIR{text})"), format!("str<{shown}>"))
            }
        };
    }
    let n = rng.next(4);
    let items: Vec<(String, String)> = (0..n).map(|_| expr(rng, depth - 1)).collect();
    let trailing = if n > 0 && rng.chance(2) { "," } else { "" };
    match rng.next(3) {
        0 => {
            let text: Vec<String> = items
                .iter()
                .map(|(t, _)| format!("{}{t}{}", sp(rng), sp(rng)))
                .collect();
            let shown: Vec<&str> = items.iter().map(|(_, s)| s.as_str()).collect();
            (
                format!("[{}{trailing}]", text.join(",")),
                format!("[{}]", shown.join(" ")),
            )
        }
        1 => {
            // A one-element tuple needs its comma.
            let trailing = if n == 1 { "," } else { trailing };
            let text: Vec<String> = items
                .iter()
                .map(|(t, _)| format!("{}{t}{}", sp(rng), sp(rng)))
                .collect();
            let shown: Vec<&str> = items.iter().map(|(_, s)| s.as_str()).collect();
            (
                format!("({}{trailing})", text.join(",")),
                format!("({})", shown.join(" ")),
            )
        }
        _ => {
            let keys: Vec<String> = (0..n).map(|i| format!("k{i}{}", text(rng, 3))).collect();
            let text: Vec<String> = keys
                .iter()
                .zip(&items)
                .map(|(k, (t, _))| {
                    format!(
                        "{}{}{}:{}{t}",
                        sp(rng),
                        crate::pyrepr::repr_str(k),
                        sp(rng),
                        sp(rng)
                    )
                })
                .collect();
            let shown: Vec<String> = keys
                .iter()
                .zip(&items)
                .map(|(k, (_, s))| format!("{k:?}:{s}"))
                .collect();
            (
                format!("{{{}{trailing}}}", text.join(",")),
                format!("{{{}}}", shown.join(" ")),
            )
        }
    }
}

/// The compact rendering of a parsed expression (as the generator shows it).
fn show(e: &pysyntax::Expr) -> String {
    let list = |items: &[pysyntax::Expr]| items.iter().map(show).collect::<Vec<_>>().join(" ");
    match &e.kind {
        ExprKind::None => "None".into(),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Int(i) => format!("i{i}"),
        ExprKind::Float(x) => format!("f{x:e}"),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::List(items) => format!("[{}]", list(items)),
        ExprKind::Tuple(items) => format!("({})", list(items)),
        ExprKind::Dict(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|(k, v)| format!("{}:{}", show(k), show(v)))
                .collect();
            format!("{{{}}}", parts.join(" "))
        }
        ExprKind::Name(n) => n.clone(),
        ExprKind::Attr(v, a) => format!("{}.{a}", show(v)),
        ExprKind::Call(f, args) => format!("{}<{}>", show(f), list(args)),
        ExprKind::Div(l, r) => format!("({} / {})", show(l), show(r)),
    }
}

#[test]
fn rendered_literals_parse_to_the_same_tree() {
    let mut rng = Rng::new(0x6b63_0002);
    for case in 0..cases() * 3 {
        let (text, shown) = expr(&mut rng, 5);
        let parsed = pysyntax::parse_single_expr(&text)
            .unwrap_or_else(|e| panic!("case {case}: {} at {:?}\n{text}", e.message, e.pos));
        assert_eq!(show(&parsed), shown, "case {case}\n{text}");
    }
}

const TOKENS: [&str; 26] = [
    "[",
    "]",
    "(",
    ")",
    "{",
    "}",
    "'",
    "\"",
    "\\",
    "#",
    "\n",
    "-",
    "/",
    ".",
    ",",
    ":",
    "=",
    "0x",
    "1e",
    "_D.IN",
    "str(",
    "\t",
    "\r",
    "é",
    "999999999999999999999999999999999999999999",
    "([{",
];

#[test]
fn edited_files_never_panic_and_errors_point_inside_the_text() {
    let root = Path::new("/b");
    let file = Path::new("/b/kernel_config.py");
    let mut rng = Rng::new(0x6b63_0003);
    let (mut ok, mut rejected) = (0, 0);
    for case in 0..cases() * 5 {
        let mut text = config(&mut rng, root).to_python_source(root, file).unwrap();
        for _ in 0..1 + rng.next(3) {
            let mut at = rng.next(text.len() as u64 + 1) as usize;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            match rng.next(3) {
                0 => {
                    let mut end = (at + 1 + rng.next(12) as usize).min(text.len());
                    while !text.is_char_boundary(end) {
                        end += 1;
                    }
                    text.replace_range(at..end, "");
                }
                1 => {
                    let token = *rng.pick(&TOKENS);
                    text.insert_str(at, token);
                }
                _ => {
                    let mut end = (at + 1 + rng.next(40) as usize).min(text.len());
                    while !text.is_char_boundary(end) {
                        end += 1;
                    }
                    let span = text[at..end].to_string();
                    text.insert_str(at, &span);
                }
            }
        }
        let _ = parse_name_map(&text, root, file);
        match KernelConfig::parse(&text, root, file) {
            Ok(_) => ok += 1,
            Err(KernelConfigError::Invalid { line, col, .. }) => {
                rejected += 1;
                // Lines as Python (and the tokenizer) count them: `\r\n` and `\r` end lines too.
                let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
                let lines: Vec<&str> = normalized.split('\n').collect();
                assert!(
                    line >= 1 && line <= lines.len(),
                    "case {case}: line {line}\n{text}"
                );
                let width = lines[line - 1].chars().count();
                assert!(
                    col >= 1 && col <= width + 1,
                    "case {case}: {line}:{col}\n{text}"
                );
            }
            Err(KernelConfigError::Missing { .. }) => rejected += 1,
            Err(other) => panic!("case {case}: {other}"),
        }
    }
    assert!(ok > 0 && rejected > 0, "{ok} read, {rejected} rejected");
}
