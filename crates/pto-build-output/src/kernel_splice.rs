//! The kernel wrapper's contract with ptoas: where a kernel `.cpp` holds ptoas's body
//! (between [`PTOAS_BODY_BEGIN`] and [`PTOAS_BODY_END`]), how raw ptoas output becomes that
//! body ([`preprocess_ptoas_output`]), how a body goes in ([`splice_body`]), which functions a
//! body defines ([`aicore_functions`]) and which `--pto-level` a `.pto` asks for
//! ([`pto_level`]). Pure functions over bytes: running ptoas is `pto_toolchain::pto_rebuild`'s
//! job, and the DSL's codegen writes its wrappers with the same splice.

/// The line that opens the ptoas body region of a kernel wrapper.
pub const PTOAS_BODY_BEGIN: &str = "// --- ptoas-generated code ---";

/// The line that closes the ptoas body region (the kernel entry follows).
pub const PTOAS_BODY_END: &str = "// --- Kernel entry point ---";

/// The `--pto-level` for a `.pto` text: `level3` when some line has
/// `pto.alloc_tile` followed on the same line by `addr`, optional spaces or
/// tabs, and `=` (an explicitly placed tile); otherwise `level2`.
pub fn pto_level(pto_text: &str) -> &'static str {
    let explicit = pto_text.lines().any(|line| {
        line.find("pto.alloc_tile").is_some_and(|at| {
            let rest = &line[at..];
            rest.match_indices("addr").any(|(i, m)| {
                rest[i + m.len()..]
                    .trim_start_matches([' ', '\t'])
                    .starts_with('=')
            })
        })
    });
    if explicit {
        "level3"
    } else {
        "level2"
    }
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Python's `\s` on ASCII: space, `\t`, `\n`, `\r`, `\x0b`, `\x0c`.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// An identifier in code (not in a comment or a literal).
struct Ident {
    start: usize,
    end: usize,
}

/// The identifiers of C++ `text` outside comments, string and character
/// literals (raw strings included) and numbers (digit separators included).
fn code_identifiers(text: &[u8]) -> Vec<Ident> {
    let mut out = Vec::new();
    let n = text.len();
    let mut i = 0;
    while i < n {
        let b = text[i];
        if b == b'/' && text.get(i + 1) == Some(&b'/') {
            while i < n && text[i] != b'\n' {
                i += 1;
            }
        } else if b == b'/' && text.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < n && !(text[i] == b'*' && text.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i = (i + 2).min(n);
        } else if b == b'"' || b == b'\'' {
            i = skip_quoted(text, i);
        } else if b.is_ascii_digit()
            || (b == b'.' && text.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            // A pp-number: digits, letters, '_', '.', digit separators and
            // exponent signs.
            i += 1;
            while i < n {
                let c = text[i];
                if is_ident_byte(c) || c == b'.' {
                    i += 1;
                } else if c == b'\'' && text.get(i + 1).is_some_and(|d| is_ident_byte(*d)) {
                    i += 2;
                } else if matches!(c, b'+' | b'-')
                    && matches!(text[i - 1], b'e' | b'E' | b'p' | b'P')
                {
                    i += 1;
                } else {
                    break;
                }
            }
        } else if is_ident_byte(b) {
            let start = i;
            while i < n && is_ident_byte(text[i]) {
                i += 1;
            }
            let ident = &text[start..i];
            if text.get(i) == Some(&b'"') && matches!(ident, b"R" | b"u8R" | b"uR" | b"UR" | b"LR")
            {
                i = skip_raw_string(text, i);
            } else {
                out.push(Ident { start, end: i });
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Skips a `"..."` or `'...'` literal starting at `i`; returns the index
/// after it (or the end of the line for an unterminated one).
fn skip_quoted(text: &[u8], i: usize) -> usize {
    let quote = text[i];
    let mut j = i + 1;
    while j < text.len() {
        match text[j] {
            b'\\' => j += 2,
            b'\n' => return j,
            c if c == quote => return j + 1,
            _ => j += 1,
        }
    }
    text.len()
}

/// Skips a raw string `"delim( ... )delim"` whose `"` is at `i`.
fn skip_raw_string(text: &[u8], i: usize) -> usize {
    let Some(open) = text[i + 1..].iter().position(|&c| c == b'(') else {
        return skip_quoted(text, i);
    };
    let delim = &text[i + 1..i + 1 + open];
    let body_start = i + 1 + open + 1;
    let mut closing = Vec::with_capacity(delim.len() + 2);
    closing.push(b')');
    closing.extend_from_slice(delim);
    closing.push(b'"');
    match find(&text[body_start..], &closing) {
        Some(at) => body_start + at + closing.len(),
        None => text.len(),
    }
}

/// One entry-function head: `[__global__ <ws>]AICORE <ws> void <ws> NAME`.
struct Head {
    /// Where the head starts (`__global__` when present, else `AICORE`).
    start: usize,
    /// Where `NAME` starts.
    name_start: usize,
    /// The function name.
    name: String,
}

/// The heads of `(?:__global__\s+)?AICORE\s+void\s+(\w+)\s*\(` in code,
/// with `AICORE` and `__global__` as whole identifiers.
fn heads(text: &[u8]) -> Vec<Head> {
    let idents = code_identifiers(text);
    let mut out = Vec::new();
    for (k, id) in idents.iter().enumerate() {
        if &text[id.start..id.end] != b"AICORE" {
            continue;
        }
        let mut p = id.end;
        let skip_spaces = |mut p: usize| {
            while p < text.len() && is_space(text[p]) {
                p += 1;
            }
            p
        };
        let q = skip_spaces(p);
        if q == p || !text[q..].starts_with(b"void") {
            continue;
        }
        p = q + 4;
        let q = skip_spaces(p);
        if q == p || q >= text.len() || !is_ident_byte(text[q]) || text[q].is_ascii_digit() {
            continue;
        }
        let name_start = q;
        let mut name_end = q;
        while name_end < text.len() && is_ident_byte(text[name_end]) {
            name_end += 1;
        }
        if text.get(skip_spaces(name_end)) != Some(&b'(') {
            continue;
        }
        let mut start = id.start;
        if let Some(prev) = k.checked_sub(1).map(|j| &idents[j]) {
            let between = &text[prev.end..id.start];
            if &text[prev.start..prev.end] == b"__global__"
                && !between.is_empty()
                && between.iter().all(|&c| is_space(c))
            {
                start = prev.start;
            }
        }
        out.push(Head {
            start,
            name_start,
            name: String::from_utf8_lossy(&text[name_start..name_end]).into_owned(),
        });
    }
    out
}

/// The entry functions of a ptoas output, in order of first appearance
/// without duplicates: the names matched by PyPTO's
/// `(?:__global__\s+)?AICORE\s+void\s+(\w+)\s*\(`. Unlike a plain regular
/// expression, matches inside comments and string literals are ignored and
/// `AICORE` must be a whole identifier (`MY_AICORE void f(` is no match).
pub fn aicore_functions(cpp: &[u8]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for head in heads(cpp) {
        if !names.contains(&head.name) {
            names.push(head.name);
        }
    }
    names
}

/// Turns raw ptoas output into the body spliced between the sentinels. The
/// exact transformation:
///
/// 1. Lines whose first non-blank characters are `#include` are dropped:
///    the wrapper's header (above the begin sentinel) owns the includes,
///    and ptoas's device headers do not exist in the simulator.
/// 2. Every entry-function head ([`aicore_functions`]) `[__global__
///    ]AICORE void NAME` becomes `static __aicore__ void NAME` (just
///    `__aicore__ void NAME` when `static` already precedes it on the same
///    line), the way the wrapper generator marks bodies: internal linkage,
///    so only `kernel_entry` is exported. The rest of the line (the
///    whitespace before `(` and the parameters) is kept.
/// 3. Leading and trailing blank lines are removed and the body ends with
///    exactly one newline (an empty output gives an empty body).
///
/// Everything else (helpers, constants, comments) is kept verbatim, and the
/// same body goes into every kernel cpp of the unit.
pub fn preprocess_ptoas_output(cpp: &[u8]) -> Vec<u8> {
    // Step 2 on the whole text, then step 1 line by line (an include line
    // never holds a head).
    let mut rewritten = Vec::with_capacity(cpp.len() + 64);
    let mut at = 0;
    for head in heads(cpp) {
        rewritten.extend_from_slice(&cpp[at..head.start]);
        let line_start = cpp[..head.start]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let before = &cpp[line_start..head.start];
        let trimmed = trim_end_spaces(before);
        let has_static = trimmed.ends_with(b"static")
            && (trimmed.len() == 6 || !is_ident_byte(trimmed[trimmed.len() - 7]));
        if !has_static {
            rewritten.extend_from_slice(b"static ");
        }
        rewritten.extend_from_slice(b"__aicore__ void ");
        at = head.name_start;
    }
    rewritten.extend_from_slice(&cpp[at..]);

    let mut lines: Vec<&[u8]> = rewritten
        .split_inclusive(|&c| c == b'\n')
        .filter(|line| !trim_start_spaces(line).starts_with(b"#include"))
        .collect();
    let blank = |line: &&[u8]| line.iter().all(|&c| is_space(c));
    while lines.first().is_some_and(blank) {
        lines.remove(0);
    }
    while lines.last().is_some_and(blank) {
        lines.pop();
    }
    let mut body: Vec<u8> = lines.concat();
    while body.last().is_some_and(|&c| c == b'\n' || c == b'\r') {
        body.pop();
    }
    if !body.is_empty() {
        body.push(b'\n');
    }
    body
}

fn trim_end_spaces(s: &[u8]) -> &[u8] {
    let end = s.iter().rposition(|&c| !is_space(c)).map_or(0, |p| p + 1);
    &s[..end]
}

fn trim_start_spaces(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&c| !is_space(c)).unwrap_or(s.len());
    &s[start..]
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Replaces the region between the sentinels of a kernel cpp with `body`:
/// everything up to and including the line of [`PTOAS_BODY_BEGIN`] (its
/// first occurrence) and everything from the first [`PTOAS_BODY_END`] after
/// it onwards are kept byte for byte. `None` when either sentinel is
/// missing or the end sentinel appears only before the begin sentinel.
pub fn splice_body(kernel_cpp: &[u8], body: &[u8]) -> Option<Vec<u8>> {
    let begin = find(kernel_cpp, PTOAS_BODY_BEGIN.as_bytes())?;
    let after_begin = begin + PTOAS_BODY_BEGIN.len();
    let end = after_begin + find(&kernel_cpp[after_begin..], PTOAS_BODY_END.as_bytes())?;
    let head_end = match kernel_cpp[after_begin..end]
        .iter()
        .position(|&c| c == b'\n')
    {
        Some(nl) => after_begin + nl + 1,
        None => after_begin,
    };
    let mut out = Vec::with_capacity(kernel_cpp.len() + body.len());
    out.extend_from_slice(&kernel_cpp[..head_end]);
    if head_end == after_begin {
        out.push(b'\n');
    }
    out.extend_from_slice(body);
    if !body.is_empty() && !body.ends_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(&kernel_cpp[end..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_detection() {
        let cases = [
            ("%t = pto.alloc_tile() {addr = 0}\n", "level3"),
            ("%t = pto.alloc_tile {addr=128 : i64}\n", "level3"),
            ("%t = pto.alloc_tile()\n%x = foo {addr = 0}\n", "level2"),
            ("%t = pto.alloc_tile()\n", "level2"),
            ("addr = 0 pto.alloc_tile\n", "level2"),
            ("", "level2"),
        ];
        for (text, level) in cases {
            assert_eq!(pto_level(text), level, "{text:?}");
        }
    }

    #[test]
    fn entry_function_names() {
        let cases: &[(&str, &[&str])] = &[
            ("AICORE void f(int a) {}", &["f"]),
            ("__global__ AICORE void g (int a);", &["g"]),
            ("__global__\n  AICORE\n void\th\n(\n)", &["h"]),
            (
                "AICORE void a() {}\n__global__ AICORE void b() {}\nAICORE void a();",
                &["a", "b"],
            ),
            ("// AICORE void commented() {}\n", &[]),
            ("/* AICORE void block() {} */", &[]),
            ("const char* s = \"AICORE void in_string(\";", &[]),
            (
                "auto r = R\"x(AICORE void in_raw()\")x\"; AICORE void after() {}",
                &["after"],
            ),
            ("int n = 1'000; AICORE void sep() {}", &["sep"]),
            ("MY_AICORE void not_me() {}", &[]),
            ("AICOREX void not_me() {}", &[]),
            ("AICORE int not_void() {}", &[]),
            ("AICOREvoid f() {}", &[]),
            ("AICORE voidf() {}", &[]),
            ("AICORE void no_paren;", &[]),
            ("AICORE void 9bad() {}", &[]),
        ];
        for (text, names) in cases {
            assert_eq!(aicore_functions(text.as_bytes()), *names, "{text:?}");
        }
    }

    #[test]
    fn preprocessing_is_the_documented_transformation() {
        let raw = "\n#include \"pto/pto-inst.hpp\"\n  #include <cstdint>\nusing T = float;\n\n\
                   // helper\nAICORE void helper(T* x) { x[0] = 1; }\n\
                   __global__ AICORE void kern (T* x) {\n    helper(x);\n}\n\
                   static AICORE void already(T* x) {}\n\n\n";
        let expected =
            "using T = float;\n\n// helper\nstatic __aicore__ void helper(T* x) { x[0] = 1; }\n\
                        static __aicore__ void kern (T* x) {\n    helper(x);\n}\n\
                        static __aicore__ void already(T* x) {}\n";
        assert_eq!(
            String::from_utf8_lossy(&preprocess_ptoas_output(raw.as_bytes())),
            expected
        );
        assert_eq!(preprocess_ptoas_output(b"\n\n#include <x>\n"), b"");
    }

    const WRAPPER_HEAD: &str = "// Kernel Function: kern\n#include \"tensor.h\"\n\n";
    const WRAPPER_TAIL: &str = "// --- Kernel entry point ---\nextern \"C\" void kernel_entry(int64_t* args) {\n    kern(nullptr);\n}\n";

    fn wrapper(body: &str) -> String {
        format!("{WRAPPER_HEAD}// --- ptoas-generated code ---\n{body}{WRAPPER_TAIL}")
    }

    #[test]
    fn splice_keeps_everything_outside_the_sentinels() {
        let old = wrapper("static __aicore__ void kern() { old(); }\n");
        let new = splice_body(
            old.as_bytes(),
            b"static __aicore__ void kern() { new(); }\n",
        );
        let expected = wrapper("static __aicore__ void kern() { new(); }\n");
        assert_eq!(new.as_deref(), Some(expected.as_bytes()));
        // Idempotent.
        let again = splice_body(
            expected.as_bytes(),
            b"static __aicore__ void kern() { new(); }\n",
        );
        assert_eq!(again.as_deref(), Some(expected.as_bytes()));
        // An empty body leaves the sentinels adjacent.
        let empty = splice_body(old.as_bytes(), b"");
        assert_eq!(empty.as_deref(), Some(wrapper("").as_bytes()));
        // CRLF and non-UTF-8 bytes outside the region survive.
        let crlf = b"\xff\r\n// --- ptoas-generated code ---\r\nold\r\n// --- Kernel entry point ---\r\n\xfe";
        assert_eq!(
            splice_body(crlf, b"new\n").as_deref(),
            Some(&b"\xff\r\n// --- ptoas-generated code ---\r\nnew\n// --- Kernel entry point ---\r\n\xfe"[..])
        );
        // Sentinels on one line.
        assert_eq!(
            splice_body(
                b"// --- ptoas-generated code ---// --- Kernel entry point ---",
                b"x\n"
            )
            .as_deref(),
            Some(&b"// --- ptoas-generated code ---\nx\n// --- Kernel entry point ---"[..])
        );
    }

    #[test]
    fn splice_rejects_missing_or_out_of_order_sentinels() {
        let cases = [
            "no sentinels at all\n".to_owned(),
            "// --- ptoas-generated code ---\nbody\n".to_owned(),
            "body\n// --- Kernel entry point ---\n".to_owned(),
            "// --- Kernel entry point ---\nx\n// --- ptoas-generated code ---\nbody\n".to_owned(),
        ];
        for text in &cases {
            assert_eq!(splice_body(text.as_bytes(), b"x\n"), None, "{text:?}");
        }
    }
}
