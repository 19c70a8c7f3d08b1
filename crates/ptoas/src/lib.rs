//! ptoas, as a library: our own translator of PTO-AS `.pto` text (the MLIR subset PyPTO
//! emits) into C++ over the project's PTO-ISA header (`include/pto-isa/pto/pto-inst.hpp`).
//!
//! The pipeline, one module per step:
//!
//! 1. [`lexer`] and [`parser`]: text into the typed [`ir`] (values are arena handles,
//!    attributes are typed); errors carry `file:line:col` and an underlined excerpt.
//! 2. [`verify`]: the rules the real ptoas checks before its passes (level 3 needs `addr` on
//!    every `alloc_tile`, levels 1–2 refuse it), operand shapes of the special ops.
//! 3. [`analysis`]: constants folded through `arith`, so static extents become template
//!    arguments.
//! 4. [`layout`]: ND / DN inference for GM views (skippable, `--disable-infer-layout`).
//! 5. [`plan`]: level-2 memory planning (liveness-based first fit per memory) and the
//!    placement of reserved pipe buffers.
//! 6. [`lower`]: IR into a small C++ syntax tree ([`cpp`]), in ptoas's new output form, and
//!    [`cpp`]'s printer.
//!
//! A key design decision: the output is shaped exactly like the real ptoas's (helpers,
//! `__global__ AICORE void name(...)`, `v1..vN`, `// pto: %name` comments, `#if
//! defined(__DAV_VEC__)` guards, `ptoas_auto_sync_tail` ending), so PyPTO's own
//! post-processing and our `.pto` splice work on it unchanged; only what the CPU does not
//! need (sync insertion, A5 buffer-id tokens) is left out, and everything else that cannot be
//! lowered is an error, never dropped.
//!
//! [`translate`] runs the whole pipeline; [`cli`] holds the command line of the `ptoas`
//! binary.

pub mod analysis;
pub mod cli;
pub mod cpp;
pub mod error;
pub mod ir;
pub mod layout;
pub mod lexer;
pub mod lower;
pub mod parser;
pub mod plan;
pub mod printer;
pub mod source;
pub mod types;
pub mod verify;

pub use error::{Error, ErrorKind};
pub use types::Arch;

use source::SourceFile;

/// The build level (`--pto-level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// `level1` (treated as level 2: tiles are planned).
    Level1,
    /// `level2`: no `addr` on `alloc_tile`; ptoas plans memory.
    Level2,
    /// `level3`: every `alloc_tile` has `addr`.
    Level3,
}

impl Level {
    /// Parses `level1|level2|level3` (any case).
    pub fn from_name(s: &str) -> Option<Level> {
        match s.to_ascii_lowercase().as_str() {
            "level1" => Some(Level::Level1),
            "level2" => Some(Level::Level2),
            "level3" => Some(Level::Level3),
            _ => None,
        }
    }
}

/// What to translate for: the options of a ptoas run that affect the output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// `--pto-arch`; `None` takes the module's `pto.target_arch` (anything but `a5` is a3).
    pub arch: Option<Arch>,
    /// `--pto-level`.
    pub level: Level,
    /// `--disable-infer-layout`: keep each view's declared layout (ND when none).
    pub infer_layout: bool,
    /// `--enable-insert-sync`: accepted; on the CPU sync is a no-op, so nothing is inserted
    /// (explicit `pto.set_flag` / `wait_flag` / `barrier` ops are always emitted).
    pub insert_sync: bool,
}

impl Options {
    /// The defaults of the real ptoas: level 2, arch from the module, inference on.
    pub fn new() -> Options {
        Options {
            arch: None,
            level: Level::Level2,
            infer_layout: true,
            insert_sync: false,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options::new()
    }
}

/// The architecture of a run: the option, else the module's `pto.target_arch`.
pub fn effective_arch(options: &Options, module: &ir::Module) -> Arch {
    options.arch.unwrap_or_else(|| match module.target_arch() {
        Some(a) if a.eq_ignore_ascii_case("a5") => Arch::A5,
        _ => Arch::A3,
    })
}

/// Parses `text` (named `file` in messages) into the IR.
pub fn parse(text: &str, file: &str, arch: Arch) -> Result<ir::Module, Error> {
    check_input_size(text, file)?;
    let src = SourceFile::new(file, text);
    parser::parse(text, arch).map_err(|d| d.into_error(&src))
}

/// The largest `.pto` text translated unless `PTOAS_MAX_INPUT_BYTES` says otherwise: 16 MiB.
/// PyPTO's kernels are a few hundred KiB at most; translating costs about 25 bytes of
/// memory and 1 s per 1 MiB of input, so a runaway or hostile input stops here instead of
/// taking seconds per megabyte and gigabytes of memory.
pub const MAX_INPUT_BYTES: usize = 16 << 20;

/// The input limit in force: `PTOAS_MAX_INPUT_BYTES` (a byte count) when set and valid,
/// else [`MAX_INPUT_BYTES`].
pub fn max_input_bytes() -> usize {
    std::env::var("PTOAS_MAX_INPUT_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(MAX_INPUT_BYTES)
}

/// Refuses an input larger than [`max_input_bytes`], naming the file, its size and the fix.
fn check_input_size(text: &str, file: &str) -> Result<(), Error> {
    let limit = max_input_bytes();
    if text.len() <= limit {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::Usage,
        format!(
            "{file}: the input is {} bytes, more than the {limit}-byte limit on one .pto file (PyPTO's kernels are far smaller); split the module, or raise the limit with PTOAS_MAX_INPUT_BYTES=<bytes>",
            text.len()
        ),
    ))
}

/// Translates `.pto` text into C++ (the whole ptoas pipeline).
pub fn translate(text: &str, file: &str, options: &Options) -> Result<String, Error> {
    check_input_size(text, file)?;
    let src = SourceFile::new(file, text);
    let hint = options.arch.unwrap_or(Arch::A3);
    let mut module = parser::parse(text, hint).map_err(|d| d.into_error(&src))?;
    let arch = effective_arch(options, &module);
    if options.arch.is_none() && arch != hint {
        // The positional tile_buf form's Left defaults depend on the arch: parse again.
        module = parser::parse(text, arch).map_err(|d| d.into_error(&src))?;
    }
    verify::verify(&module, options.level).map_err(|d| d.into_error(&src))?;
    let unit = lower::lower(&module, arch, options).map_err(|d| d.into_error(&src))?;
    Ok(unit.print())
}
