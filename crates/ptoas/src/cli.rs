//! The `ptoas` command line, as PyPTO invokes the real one: LLVM-style options (one or two
//! dashes, `--opt=value` or `--opt value`), a positional input (`-` = standard input) and
//! `-o` (default standard output). [`parse_args`] turns arguments into a [`Command`];
//! [`run`] reads, translates and writes the output atomically (temp file + rename, nothing
//! written on failure).

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind};
use crate::{Arch, Level, Options};

/// The version line `ptoas --version` prints.
pub fn version() -> String {
    format!("ptoas {} (pto-sim translator)", env!("CARGO_PKG_VERSION"))
}

/// `ptoas --help`.
pub const HELP: &str = "OVERVIEW: PTO Assembler (ptoas), the pto-sim translator: PTO-AS .pto into C++ over PTO-ISA

USAGE: ptoas [options] <input file>

OPTIONS:
  -o <filename>                 Output file (default: standard output)
  --enable-insert-sync          Accepted; on the CPU simulator sync is a no-op (explicit sync ops are kept)
  --pto-arch=<a3|a5>            Target architecture (default: the module's pto.target_arch, else a3)
  --pto-level=<level1|level2|level3>
                                Build level (default: level2); level3 needs 'addr' on every alloc_tile
  --disable-infer-layout        Keep each GM view's declared layout (ND when none)
  --emit-addptr-trace           Accepted; no effect
  --mlir-print-ir-after-all     Print the parsed IR (to stderr, or into --mlir-print-ir-tree-dir)
  --mlir-print-ir-module-scope  Accepted (the IR is always printed whole)
  --mlir-print-ir-tree-dir=<dir>
                                Write the printed IR into <dir>/ptoas/0_parse.pto instead of stderr
  --version                     Print the version
  --help                        Print this help

Errors are printed as `Error: file:line:col: message` on stderr; the exit code is 1.
";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Translate.
    Run(CliOptions),
    /// `--version`.
    Version,
    /// `--help`.
    Help,
}

/// The options of a translation run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliOptions {
    /// The input path; `-` for standard input.
    pub input: String,
    /// The output path; `-` for standard output.
    pub output: String,
    /// Translation options.
    pub options: Options,
    /// `--mlir-print-ir-after-all`.
    pub print_ir: bool,
    /// `--mlir-print-ir-tree-dir`.
    pub print_ir_dir: Option<PathBuf>,
}

fn usage(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Usage, msg)
}

/// Parses the arguments (without the program name).
pub fn parse_args(args: &[String]) -> Result<Command, Error> {
    let mut input: Option<String> = None;
    let mut output = "-".to_string();
    let mut options = Options::new();
    let mut print_ir = false;
    let mut print_ir_dir = None;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "-" || !arg.starts_with('-') {
            if input.is_some() {
                return Err(usage(format!(
                    "too many positional arguments: '{arg}' (one input file)"
                )));
            }
            input = Some(arg.clone());
            continue;
        }
        if arg == "--" {
            if let Some(rest) = args.get(i) {
                input = Some(rest.clone());
                i += 1;
            }
            continue;
        }
        let body = arg.trim_start_matches('-');
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        // `-ofile` (LLVM's prefix form of -o).
        if arg.starts_with('-')
            && !arg.starts_with("--")
            && name.len() > 1
            && name.starts_with('o')
            && inline.is_none()
            && !name.starts_with("opt")
        {
            output = name[1..].to_string();
            continue;
        }
        let mut value = |what: &str| -> Result<String, Error> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            match args.get(i) {
                Some(v) => {
                    i += 1;
                    Ok(v.clone())
                }
                None => Err(usage(format!("option '{what}' requires a value"))),
            }
        };
        match name {
            "o" => output = value("-o")?,
            "enable-insert-sync" => options.insert_sync = true,
            "disable-infer-layout" => options.infer_layout = false,
            "emit-addptr-trace" => {}
            "pto-arch" => {
                let v = value("--pto-arch")?;
                options.arch = Some(match v.to_ascii_lowercase().as_str() {
                    "a3" => Arch::A3,
                    "a5" => Arch::A5,
                    _ => {
                        return Err(usage(format!(
                            "invalid --pto-arch='{v}'. Expected 'a3' or 'a5'."
                        )))
                    }
                });
            }
            "pto-level" => {
                let v = value("--pto-level")?;
                options.level = Level::from_name(&v).ok_or_else(|| {
                    usage(format!(
                        "invalid --pto-level='{v}'. Expected 'level1', 'level2', or 'level3'."
                    ))
                })?;
            }
            "mlir-print-ir-after-all" => print_ir = true,
            "mlir-print-ir-module-scope" => {}
            "mlir-print-ir-tree-dir" => {
                print_ir_dir = Some(PathBuf::from(value("--mlir-print-ir-tree-dir")?))
            }
            "version" => return Ok(Command::Version),
            "help" | "h" => return Ok(Command::Help),
            _ => return Err(usage(format!("unknown option '{arg}' (see ptoas --help)"))),
        }
    }
    Ok(Command::Run(CliOptions {
        input: input.unwrap_or_else(|| "-".into()),
        output,
        options,
        print_ir,
        print_ir_dir,
    }))
}

fn io_err(what: String, e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io, format!("{what}: {e}"))
}

/// Writes `text` to `path` atomically ([`pto_base::fs`]: a hidden temporary
/// beside the target, then a rename).
pub fn write_atomic(path: &Path, text: &str) -> Result<(), Error> {
    pto_base::fs::write_atomic(path, text.as_bytes()).map_err(|e| {
        io_err(
            format!("cannot write {} ({})", path.display(), e.step),
            e.source,
        )
    })
}

/// Runs a translation: reads the input, translates, writes the output. The C++ text goes
/// to `-o` (or is returned for standard output); nothing is written when it fails.
pub fn run(cli: &CliOptions) -> Result<Option<String>, Error> {
    let (text, file) = if cli.input == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| io_err("Could not open input file".into(), e))?;
        (s, "<stdin>".to_string())
    } else {
        let bytes =
            std::fs::read(&cli.input).map_err(|e| io_err("Could not open input file".into(), e))?;
        let s = String::from_utf8(bytes).map_err(|_| {
            Error::new(
                ErrorKind::Io,
                format!("{}: the input is not UTF-8 text", cli.input),
            )
        })?;
        (s, cli.input.clone())
    };
    if cli.print_ir || cli.print_ir_dir.is_some() {
        let arch = cli.options.arch.unwrap_or(Arch::A3);
        let module = crate::parse(&text, &file, arch)?;
        let dump = format!(
            "// -----// IR Dump After Parse (ptoas) //----- //\n{}",
            crate::printer::print_module(&module)
        );
        match &cli.print_ir_dir {
            Some(dir) => {
                let d = dir.join("ptoas");
                std::fs::create_dir_all(&d)
                    .map_err(|e| io_err(format!("cannot create {}", d.display()), e))?;
                write_atomic(&d.join("0_parse.pto"), &dump)?;
            }
            None => eprint!("{dump}"),
        }
    }
    let cpp = crate::translate(&text, &file, &cli.options)?;
    if cli.output == "-" {
        Ok(Some(cpp))
    } else {
        write_atomic(Path::new(&cli.output), &cpp)?;
        Ok(None)
    }
}
