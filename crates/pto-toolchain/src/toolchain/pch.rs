//! The PTO-ISA header precompiled once per compiler, flag set and header set (gcc only).
//!
//! Parsing `<pto/pto-inst.hpp>` is about a fifth of a PTO-ISA kernel's compile; gcc can load
//! it precompiled instead. A kernel gets `-include <header>` (so the header comes first, as
//! gcc requires of a precompiled header) only when everything its source has before its own
//! `#include <pto/pto-inst.hpp>` cannot change what the header means: comments, standard
//! library includes, conditionals, and the `__gm__` / `__aicore__` fallbacks, which the
//! header defines the same way ([`prefix_allows_forced_include`]). The object is byte for
//! byte the one the plain compile makes (tested), so cache keys ignore the route.
//!
//! The precompiled files live in the content-addressed include directory, beside the header
//! in gcc's directory form (`pto-inst.hpp.gch/<kind>-<flags hash>.gch`): gcc considers each
//! file there and uses one only if it is valid for the compile at hand, else it reads the
//! header as usual. A file is built at the second kernel compile of its flag set in a cache
//! (the first leaves a marker), so a one-kernel cache never pays the build; building it
//! costs about one header parse and a half per core kind, paid back after a few compiles.
//! Every failure here only means "no precompiled header": the compile goes on without one.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{CoreKind, Toolchain, UnitKind};
use crate::fsutil::{self, TempPath};
use pto_base::hash::KeyHasher;

/// The precompiled header, as kernels include it.
const HEADER: &str = "pto/pto-inst.hpp";

/// A build lock older than this belongs to a process that died while building.
const STALE_LOCK: Duration = Duration::from_secs(600);

/// Standard C headers a kernel may include before the PTO-ISA header (C++ standard headers
/// are recognised by having no `.` in their name).
const C_HEADERS: &[&str] = &[
    "assert.h", "float.h", "limits.h", "math.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h",
    "string.h",
];

/// The arguments that make the compile of `content` (a kernel of `kind`, compiled with
/// `flags`) read the precompiled PTO-ISA header, building that header first when this is
/// the second compile of its flag set; empty when no precompiled header applies.
pub(super) fn args(
    tc: &Toolchain,
    kind: UnitKind,
    content: &[u8],
    flags: &[OsString],
) -> Vec<OsString> {
    let UnitKind::Kernel(core) = kind else {
        return Vec::new();
    };
    // clang reads gcc's flags differently, and a launcher (`ccache g++`) would have to be
    // told about precompiled headers: both compile as before.
    if !tc.gcc_flags || !tc.compiler_args.is_empty() || !prefix_allows_forced_include(content) {
        return Vec::new();
    }
    let header = tc.isa_include_dir().join(HEADER);
    let store = PchStore::new(tc, core, flags);
    if !store.pch.is_file() && !store.ensure(tc, &header, flags) {
        return Vec::new();
    }
    // The header turns off `-Wattributes` with a pragma, which a precompiled header does not
    // carry over; the flag keeps the compiler's output as it was.
    vec!["-include".into(), header.into(), "-Wno-attributes".into()]
}

/// The directory of the markers and temporaries under the include root `include_root`.
pub(super) fn state_dir(include_root: &Path) -> PathBuf {
    include_root.join("pch-state")
}

/// The prefix of a precompiled header being written (in [`state_dir`]).
const TEMPORARY: &str = "tmp-";

/// Whether a file name in [`state_dir`] is a precompiled header being written (the sweep
/// removes those a killed run left).
pub(super) fn is_temporary(name: &str) -> bool {
    name.starts_with(TEMPORARY)
}

/// Where one flag set's precompiled header and its markers live.
struct PchStore {
    /// The precompiled header, inside gcc's `.gch` directory.
    pch: PathBuf,
    /// Markers and temporaries, outside the `.gch` directory so that gcc never reads them.
    state: PathBuf,
    /// `<kind>-<flags hash>`.
    name: String,
}

impl PchStore {
    fn new(tc: &Toolchain, core: CoreKind, flags: &[OsString]) -> PchStore {
        let mut h = KeyHasher::new("pto-pch-v1");
        h.field(tc.compiler.as_os_str().as_encoded_bytes());
        h.field(tc.compiler_identity.as_bytes());
        for f in flags {
            h.field(f.as_encoded_bytes());
        }
        let kind = match core {
            CoreKind::Aic => "aic",
            CoreKind::Aiv => "aiv",
        };
        let name = format!("{kind}-{}", &h.finish()[..16]);
        let isa = tc.isa_include_dir();
        PchStore {
            pch: isa
                .join(format!("{HEADER}.gch"))
                .join(format!("{name}.gch")),
            state: state_dir(&tc.include_root),
            name,
        }
    }

    /// Builds the precompiled header if this is not the first compile of its flag set and
    /// no other compile is building it; true when it exists afterwards.
    fn ensure(&self, tc: &Toolchain, header: &Path, flags: &[OsString]) -> bool {
        let marker = |ext: &str| self.state.join(format!("{}.{ext}", self.name));
        if fsutil::create_dir_all(&self.state).is_err() || marker("failed").exists() {
            return false;
        }
        if !marker("seen").exists() {
            let _ = std::fs::write(marker("seen"), b"");
            return false;
        }
        let Some(_lock) = BuildLock::take(marker("lock")) else {
            return false;
        };
        if self.pch.is_file() {
            return true;
        }
        let built = self.build(tc, header, flags);
        if !built {
            let _ = std::fs::write(marker("failed"), b"");
        }
        built
    }

    fn build(&self, tc: &Toolchain, header: &Path, flags: &[OsString]) -> bool {
        let Some(dir) = self.pch.parent() else {
            return false;
        };
        if fsutil::create_dir_all(dir).is_err() {
            return false;
        }
        let tmp = TempPath::new(self.state.join(fsutil::unique_name(TEMPORARY, ".gch")));
        let mut args: Vec<OsString> = flags
            .iter()
            .filter(|f| *f != "-shared" && !f.as_encoded_bytes().starts_with(b"-Wl,"))
            .cloned()
            .collect();
        args.extend([
            "-x".into(),
            "c++-header".into(),
            header.into(),
            "-o".into(),
            tmp.path().into(),
        ]);
        tracing::info!(pch = %self.name, "precompiling {HEADER}");
        match tc.run(&args) {
            Ok(out) if out.status.success() => std::fs::rename(tmp.path(), &self.pch).is_ok(),
            Ok(out) => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                tracing::debug!(pch = %self.name, "precompiling failed:\n{stderr}");
                false
            }
            Err(_) => false,
        }
    }
}

/// An exclusive claim on building one precompiled header, released on drop.
struct BuildLock(PathBuf);

impl BuildLock {
    fn take(path: PathBuf) -> Option<BuildLock> {
        for _ in 0..2 {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(_) => return Some(BuildLock(path)),
                Err(_) if fsutil::older_than(&path, STALE_LOCK) => {
                    let _ = std::fs::remove_file(&path);
                }
                Err(_) => return None,
            }
        }
        None
    }
}

impl Drop for BuildLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Whether everything `source` has before its `#include <pto/pto-inst.hpp>` leaves the
/// header's meaning unchanged when the header is included first instead: blank lines,
/// comments, `#include` of standard headers, conditionals, `#pragma once`, and
/// definitions of `__gm__` / `__aicore__` (the header defines both empty when they are
/// undefined, as PyPTO's kernels do). False when the source does not include the header.
pub(crate) fn prefix_allows_forced_include(source: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(source) else {
        return false;
    };
    let mut in_comment = false;
    for line in text.lines() {
        let code = strip_comments(line, &mut in_comment);
        let code = code.trim();
        if code.is_empty() {
            continue;
        }
        match directive(code) {
            Some(("include", target)) if is_isa_header(target) => return true,
            Some(("include", target)) if is_standard_header(target) => {}
            Some(("ifndef" | "ifdef" | "if" | "elif" | "else" | "endif", _)) => {}
            Some(("pragma", "once")) => {}
            Some(("define", rest)) if is_qualifier_fallback(rest) => {}
            _ => return false,
        }
    }
    false
}

/// `line` without `//` and `/* */` comments; `in_comment` carries an open block comment
/// across lines.
fn strip_comments(line: &str, in_comment: &mut bool) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    loop {
        if *in_comment {
            match rest.find("*/") {
                Some(end) => {
                    rest = &rest[end + 2..];
                    *in_comment = false;
                    out.push(' ');
                }
                None => return out,
            }
        }
        let block = rest.find("/*");
        let line_comment = rest.find("//");
        match (block, line_comment) {
            (Some(b), l) if l.is_none_or(|l| b < l) => {
                out.push_str(&rest[..b]);
                rest = &rest[b + 2..];
                *in_comment = true;
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                return out;
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// `("include", "<cstdint>")` for `#  include <cstdint>`; `None` for a line of code.
fn directive(code: &str) -> Option<(&str, &str)> {
    let body = code.strip_prefix('#')?.trim_start();
    let end = body
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(body.len());
    Some((&body[..end], body[end..].trim()))
}

fn is_isa_header(target: &str) -> bool {
    target == format!("<{HEADER}>") || target == format!("\"{HEADER}\"")
}

fn is_standard_header(target: &str) -> bool {
    let Some(name) = target.strip_prefix('<').and_then(|t| t.strip_suffix('>')) else {
        return false;
    };
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    plain || C_HEADERS.contains(&name)
}

fn is_qualifier_fallback(define: &str) -> bool {
    let mut words = define.split_whitespace();
    matches!(words.next(), Some("__gm__" | "__aicore__"))
        && words.all(|w| w == "[aicore]" || w.is_empty())
}

#[cfg(test)]
mod tests {
    use super::prefix_allows_forced_include as allows;

    const PYPTO_PREFIX: &str = "// Kernel Function: online_update\n\n#include <cstdint>\n\n\
        #ifndef __gm__\n#define __gm__\n#endif\n\n#ifndef __aicore__\n#if defined(__CPU_SIM)\n\
        #define __aicore__\n#else\n#define __aicore__ [aicore]\n#endif\n#endif\n\n\
        #include <pto/pto-inst.hpp>\n#include \"tensor.h\"\nint x;\n";

    #[test]
    fn pypto_kernel_prefix_is_accepted() {
        assert!(allows(PYPTO_PREFIX.as_bytes()));
        assert!(allows(b"/* a\n block */ #include <pto/pto-inst.hpp>\n"));
        assert!(allows(
            b"#pragma once\n#include <stdint.h>\n#include \"pto/pto-inst.hpp\"\n"
        ));
    }

    #[test]
    fn anything_that_could_change_the_header_is_refused() {
        for prefix in [
            "#define PTO_SOMETHING 1\n",
            "#include \"tensor.h\"\n",
            "#include <pto/sim/config.hpp>\n",
            "#include <my/header.h>\n",
            "int before;\n",
            "#define __gm__ __attribute__((x))\n",
            "#undef __gm__\n",
        ] {
            let source = format!("{prefix}#include <pto/pto-inst.hpp>\n");
            assert!(!allows(source.as_bytes()), "{prefix:?}");
        }
    }

    #[test]
    fn a_source_without_the_header_or_not_utf8_is_refused() {
        assert!(!allows(b"#include <cstdint>\nint main() {}\n"));
        assert!(!allows(b"\xff\xfe#include <pto/pto-inst.hpp>\n"));
        assert!(!allows(b"/* #include <pto/pto-inst.hpp> */\n"));
    }
}
