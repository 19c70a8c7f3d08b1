//! Which Simpler generation a build directory's C++ sources are written against, and the
//! error for a source set that mixes the two.
//!
//! Two generations of Simpler's orchestration API compile against our headers:
//! 2026-08 (Simpler 6ebaf77: `pto_orchestration_api.h`, `PTO2*` names, the 128-byte
//! `ChipTensor` in orchestrations and kernels) and 2026-09 (`orchestration_api.h`,
//! `SIMPLER_SCOPE`, `TaskId`, `simpler::tmr::Tensor` / `Tensor` / `TaskTensor`, a 72-byte
//! boundary `ChipTensor`). Both are spellings over one runtime ABI; what differs per
//! generation is which include root comes first ([`Generation::include_subdirs`]), so a
//! kernel's `#include "tensor.h"` gets the descriptor names it expects.
//!
//! [`detect_generation`] reads every source of a build (orchestration and kernels): the
//! orchestration headers a file includes decide it; a file that includes none is decided by
//! the names it uses (PyPTO stamps the includes into generated orchestrations, so an
//! unstamped file has only names); a file with names of both generations and a
//! `__has_include` probe is portable and decides nothing. Comments and string literals are
//! ignored. Sources with no evidence either way are 2026-08, the generation every earlier
//! build directory has.

use std::path::{Path, PathBuf};

use crate::headers;

/// A generation of Simpler's orchestration API.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Generation {
    /// Simpler 6ebaf77 (2026-08-22): `pto_orchestration_api.h`.
    #[default]
    Simpler2026_08,
    /// Simpler after #1974 / #2044 / #2197 (2026-09): `orchestration_api.h`.
    Simpler2026_09,
}

impl Generation {
    /// `2026-08` or `2026-09`.
    pub fn label(self) -> &'static str {
        match self {
            Generation::Simpler2026_08 => "2026-08",
            Generation::Simpler2026_09 => "2026-09",
        }
    }

    /// The orchestration API header of this generation.
    pub fn api_header(self) -> &'static str {
        match self {
            Generation::Simpler2026_08 => "pto_orchestration_api.h",
            Generation::Simpler2026_09 => "orchestration_api.h",
        }
    }

    /// The runtime include roots of this generation, in `-I` order (relative to the
    /// materialized headers): the 2026-09 root shadows the 2026-08 one's spellings.
    pub fn include_subdirs(self) -> &'static [&'static str] {
        match self {
            Generation::Simpler2026_08 => &[headers::RUNTIME_INCLUDE],
            Generation::Simpler2026_09 => {
                &[headers::RUNTIME_INCLUDE_2026_09, headers::RUNTIME_INCLUDE]
            }
        }
    }
}

/// Where a source shows its generation: `file:line` and the include or name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// The source file.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// The header included (`#include "orchestration_api.h"`) or the name used (`PTO2TaskId`).
    pub marker: String,
}

impl std::fmt::Display for Evidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.marker)
    }
}

/// Detection failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GenerationError {
    /// The sources mix both generations.
    #[error(
        "the sources mix Simpler's two orchestration generations, which one build cannot compile together:\n  \
         2026-08 (pto_orchestration_api.h): {old}\n  \
         2026-09 (orchestration_api.h): {new}\n\
         Port the 2026-08 sources to orchestration_api.h's names (ChipTensor -> Tensor, PTO2TaskId -> TaskId, \
         PTO2_SCOPE -> SIMPLER_SCOPE, ...; docs/COMPATIBILITY.md lists them), or keep every source on \
         pto_orchestration_api.h"
    )]
    Mixed {
        /// The first 2026-08 evidence.
        old: Evidence,
        /// The first 2026-09 evidence.
        new: Evidence,
    },
    /// A source could not be read.
    #[error("cannot read source `{}` to detect its Simpler generation: {source}", path.display())]
    Read {
        /// The source.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// The generation of a build's sources (orchestration and kernels, in any order): 2026-09
/// when any source shows it, else 2026-08; an error naming both headers (and the first
/// file, line and marker of each) when the sources show both.
pub fn detect_generation(sources: &[&Path]) -> Result<Generation, GenerationError> {
    let mut old: Option<Evidence> = None;
    let mut new: Option<Evidence> = None;
    for path in sources {
        let text = std::fs::read(path).map_err(|source| GenerationError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let (o, n) = file_evidence(&String::from_utf8_lossy(&text));
        let at = |(line, marker): (usize, String)| Evidence {
            file: path.to_path_buf(),
            line,
            marker,
        };
        old = old.or(o.map(at));
        new = new.or(n.map(at));
    }
    match (old, new) {
        (Some(old), Some(new)) => Err(GenerationError::Mixed { old, new }),
        (_, Some(_)) => Ok(Generation::Simpler2026_09),
        _ => Ok(Generation::Simpler2026_08),
    }
}

/// Orchestration headers only one generation has.
const INCLUDES_2026_08: &[&str] = &[
    "pto_orchestration_api.h",
    "pto_arg_with_deps.h",
    "pto_types.h",
    "pto_runtime2_types.h",
    "pto_submit_types.h",
    "pto_task_id.h",
];
const INCLUDES_2026_09: &[&str] = &[
    "orchestration_api.h",
    "arg_with_deps.h",
    "runtime_types.h",
    "runtime_status.h",
    "submit_types.h",
    "dispatch_payload.h",
    "tensormap_and_ringbuffer/tensor.h",
    "tensormap_and_ringbuffer/task_id.h",
    "tensormap_and_ringbuffer/entry_args.h",
];
/// Names only one generation has (a trailing `*` matches a prefix; `scalar<` is the typed
/// entry-scalar read).
const NAMES_2026_08: &[&str] = &[
    "ChipTensor",
    "PTO2TaskId",
    "PTO2ScopeMode",
    "PTO2ScopeGuard",
    "PTO2_SCOPE",
    "PTO2_SCOPE_GUARD",
    "PTO2OrchestrationConfig",
    "PTO2Runtime",
    "PTO2LaunchSpec",
    "PTO2_EXT_PARAMS_COUNT",
    "PTO2_ERROR_*",
    "set_initial_value",
];
const NAMES_2026_09: &[&str] = &[
    "TaskTensor",
    "TaskId",
    "ScopeMode",
    "ScopeGuard",
    "SIMPLER_SCOPE",
    "SIMPLER_SCOPE_GUARD",
    "OrchestrationConfig",
    "RuntimeContext",
    "LaunchSpec",
    "EXT_PARAMS_COUNT",
    "SIMPLER_ERROR_*",
    "simpler",
    "scalar<",
];

type Found = Option<(usize, String)>;

/// The first 2026-08 and 2026-09 evidence of one file.
fn file_evidence(text: &str) -> (Found, Found) {
    let tokens = tokenize(text);
    let first = |want: &dyn Fn(&Token) -> Option<String>| {
        tokens.iter().find_map(|t| want(t).map(|m| (t.line, m)))
    };
    let include = |list: &'static [&'static str]| {
        move |t: &Token| {
            (t.include && list.contains(&t.text.as_str()))
                .then(|| format!("#include \"{}\"", t.text))
        }
    };
    let (old, new) = (
        first(&include(INCLUDES_2026_08)),
        first(&include(INCLUDES_2026_09)),
    );
    if old.is_some() || new.is_some() {
        return (old, new);
    }
    let name = |list: &'static [&'static str]| {
        move |t: &Token| {
            (!t.include && list.iter().any(|n| name_matches(n, t))).then(|| t.text.clone())
        }
    };
    let (old, new) = (first(&name(NAMES_2026_08)), first(&name(NAMES_2026_09)));
    let portable = tokens
        .iter()
        .any(|t| !t.include && t.text == "__has_include");
    if old.is_some() && new.is_some() && portable {
        return (None, None);
    }
    (old, new)
}

fn name_matches(pattern: &str, t: &Token) -> bool {
    if let Some(prefix) = pattern.strip_suffix('*') {
        t.text.starts_with(prefix)
    } else if let Some(word) = pattern.strip_suffix('<') {
        t.text == word && t.before_angle
    } else {
        t.text == pattern
    }
}

/// An identifier, or the header name of an `#include` directive.
#[derive(Debug)]
struct Token {
    line: usize,
    text: String,
    include: bool,
    /// An identifier directly followed by `<` (template arguments).
    before_angle: bool,
}

/// The identifiers and included header names of C++ source text; comments and the contents
/// of string and character literals are skipped.
fn tokenize(text: &str) -> Vec<Token> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0usize, 1usize);
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                line_start = true;
                i += 1;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    line += (b[i] == b'\n') as usize;
                    i += 1;
                }
                i += 2;
                continue;
            }
            b'#' if line_start => {
                if let Some((name, end)) = include_directive(b, i) {
                    out.push(Token {
                        line,
                        text: name,
                        include: true,
                        before_angle: false,
                    });
                    i = end;
                    continue;
                }
                i += 1;
            }
            b'"' | b'\'' => i = skip_literal(b, i, &mut line),
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let word = &text[start..i];
                // A raw string literal's prefix: skip the literal as a whole.
                if word.ends_with('R') && b.get(i) == Some(&b'"') {
                    i = skip_raw_literal(b, i, &mut line);
                } else {
                    let before_angle = b.get(i) == Some(&b'<');
                    out.push(Token {
                        line,
                        text: word.to_string(),
                        include: false,
                        before_angle,
                    });
                }
            }
            c if c.is_ascii_digit() => {
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'.'
                        || b[i] == b'\'')
                {
                    i += 1;
                }
            }
            _ => i += 1,
        }
        line_start = line_start && (c == b' ' || c == b'\t');
    }
    out
}

/// `#  include "name"` / `<name>` at `i` (the `#`): the name and the index after it.
fn include_directive(b: &[u8], mut i: usize) -> Option<(String, usize)> {
    i += 1;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    if !b[i..].starts_with(b"include") {
        return None;
    }
    i += "include".len();
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    let close = match b.get(i)? {
        b'"' => b'"',
        b'<' => b'>',
        _ => return None,
    };
    let start = i + 1;
    let len = b[start..].iter().position(|&c| c == close || c == b'\n')?;
    let name = String::from_utf8_lossy(&b[start..start + len]).into_owned();
    Some((name, start + len + 1))
}

/// Skips a `"..."` or `'...'` literal starting at `i`; returns the index after it.
fn skip_literal(b: &[u8], mut i: usize, line: &mut usize) -> usize {
    let quote = b[i];
    i += 1;
    while i < b.len() && b[i] != quote {
        if b[i] == b'\\' {
            i += 1;
        }
        if i < b.len() && b[i] == b'\n' {
            *line += 1;
        }
        i += 1;
    }
    i + 1
}

/// Skips a raw string literal `"delim( ... )delim"` starting at the quote `i`.
fn skip_raw_literal(b: &[u8], i: usize, line: &mut usize) -> usize {
    let Some(open) = b[i..].iter().position(|&c| c == b'(') else {
        return i + 1;
    };
    let mut close = vec![b')'];
    close.extend_from_slice(&b[i + 1..i + open]);
    close.push(b'"');
    let body = i + open + 1;
    let end = b[body..]
        .windows(close.len())
        .position(|w| w == close.as_slice())
        .map_or(b.len(), |p| body + p + close.len());
    *line += b[i..end].iter().filter(|&&c| c == b'\n').count();
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen_of(files: &[(&str, &str)]) -> Result<Generation, GenerationError> {
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<PathBuf> = files
            .iter()
            .map(|(name, text)| {
                let p = dir.path().join(name);
                std::fs::write(&p, text).unwrap();
                p
            })
            .collect();
        let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        detect_generation(&refs)
    }

    const OLD_ORCH: &str = "#include \"pto_orchestration_api.h\"\nextern \"C\" void e(const ChipTaskArgs& a) { PTO2_SCOPE() {} }\n";
    const NEW_ORCH: &str = "// was: #include \"pto_orchestration_api.h\" with ChipTensor\n#include \"orchestration_api.h\"\nextern \"C\" void e(const ChipTaskArgs& a) { SIMPLER_SCOPE() {} }\n";
    const NEUTRAL_KERNEL: &str = "#include \"tensor.h\"\nextern \"C\" void kernel_entry(__gm__ int64_t* args) { auto* t = reinterpret_cast<__gm__ Tensor*>(args[0]); }\n";

    #[test]
    fn includes_decide_and_comments_do_not_count() {
        assert_eq!(
            gen_of(&[("o.cpp", OLD_ORCH), ("k.cpp", NEUTRAL_KERNEL)]).unwrap(),
            Generation::Simpler2026_08
        );
        assert_eq!(
            gen_of(&[("o.cpp", NEW_ORCH), ("k.cpp", NEUTRAL_KERNEL)]).unwrap(),
            Generation::Simpler2026_09
        );
        assert_eq!(
            gen_of(&[("k.cpp", NEUTRAL_KERNEL)]).unwrap(),
            Generation::Simpler2026_08
        );
    }

    #[test]
    fn names_decide_a_file_without_includes() {
        let stamped_away = "extern \"C\" void e(const ChipTaskArgs& a) { const Tensor& x = a.tensor(0).ref(); int n = a.scalar<int32_t>(0); }\n";
        assert_eq!(
            gen_of(&[("o.cpp", stamped_away)]).unwrap(),
            Generation::Simpler2026_09
        );
        let old_names =
            "void f() { PTO2TaskId t = PTO2TaskId::invalid(); const char* s = \"TaskId\"; }\n";
        assert_eq!(
            gen_of(&[("o.cpp", old_names)]).unwrap(),
            Generation::Simpler2026_08
        );
    }

    #[test]
    fn a_portable_kernel_probe_decides_nothing() {
        let probe = "#if __has_include(\"tensormap_and_ringbuffer/tensor.h\")\nusing Arg = TaskTensor;\n#else\nusing Arg = ChipTensor;\n#endif\n";
        assert_eq!(
            gen_of(&[("o.cpp", NEW_ORCH), ("k.cpp", probe)]).unwrap(),
            Generation::Simpler2026_09
        );
        assert_eq!(
            gen_of(&[("o.cpp", OLD_ORCH), ("k.cpp", probe)]).unwrap(),
            Generation::Simpler2026_08
        );
    }

    #[test]
    fn mixing_names_both_headers_files_and_lines() {
        let old_kernel =
            "#include \"tensor.h\"\n\nvoid k(int64_t* args) { auto* t = (ChipTensor*)args[0]; }\n";
        let err = gen_of(&[("orch.cpp", NEW_ORCH), ("kern.cpp", old_kernel)]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("pto_orchestration_api.h") && text.contains("orchestration_api.h)"),
            "{text}"
        );
        assert!(text.contains("kern.cpp:3: ChipTensor"), "{text}");
        assert!(
            text.contains("orch.cpp:2: #include \"orchestration_api.h\""),
            "{text}"
        );
        let both = "#include \"pto_orchestration_api.h\"\n#include \"orchestration_api.h\"\n";
        let text = gen_of(&[("o.cpp", both)]).unwrap_err().to_string();
        assert!(
            text.contains("o.cpp:1: #include \"pto_orchestration_api.h\""),
            "{text}"
        );
        assert!(
            text.contains("o.cpp:2: #include \"orchestration_api.h\""),
            "{text}"
        );
    }

    #[test]
    fn literals_raw_strings_and_block_comments_are_skipped() {
        let text = "/* SIMPLER_SCOPE\n */ const char* a = R\"x(TaskId)x\"; char c = '\\''; PTO2TaskId t;\n";
        let (old, new) = file_evidence(text);
        assert_eq!(old, Some((2, "PTO2TaskId".to_string())));
        assert_eq!(new, None);
    }

    #[test]
    fn an_unreadable_source_is_an_error_naming_it() {
        let err = detect_generation(&[Path::new("/nonexistent/o.cpp")]).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/o.cpp"), "{err}");
    }
}
