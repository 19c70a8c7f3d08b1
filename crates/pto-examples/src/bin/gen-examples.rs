//! `gen-examples [--out DIR]`: writes the example build directories (default: the workspace's
//! `examples/`). Re-running produces byte-identical files.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};

const USAGE: &str = "usage: gen-examples [--out DIR]\n\n\
Writes the example build directories (vector_add, bgemm, their Simpler 2026-09\n\
twins vector_add_2026_09 and bgemm_2026_09, paged_attention, paged_attn_bf16,\n\
softmax, mixed_pipe) into DIR\n\
(default: the workspace's examples/ directory).";

/// `<workspace>/examples`: this crate lives in `<workspace>/crates/pto-examples`.
fn default_out_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest.ancestors().nth(2).unwrap_or(manifest);
    workspace.join("examples")
}

/// What the command line asks for.
enum Command {
    Help,
    Generate(PathBuf),
}

fn parse_args() -> Result<Command> {
    let mut out = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy().into_owned();
        match text.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--out" => match args.next() {
                Some(dir) => out = Some(PathBuf::from(dir)),
                None => bail!("--out needs a directory"),
            },
            _ => match text.strip_prefix("--out=") {
                Some(dir) if !dir.is_empty() => out = Some(PathBuf::from(dir)),
                _ => bail!("unexpected argument {text:?}"),
            },
        }
    }
    Ok(Command::Generate(out.unwrap_or_else(default_out_dir)))
}

fn generate(out_dir: &Path) -> Result<()> {
    let written = pto_examples::generate(out_dir)
        .with_context(|| format!("generating the examples into {}", out_dir.display()))?;
    for path in &written {
        println!("{}", path.display());
    }
    eprintln!(
        "gen-examples: wrote {} files into {}",
        written.len(),
        out_dir.display()
    );
    Ok(())
}

/// The error and its causes, skipping a cause whose text the message already includes.
fn render_chain(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

fn main() -> ExitCode {
    match parse_args() {
        Ok(Command::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Command::Generate(dir)) => match generate(&dir) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("gen-examples: error: {}", render_chain(&e));
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("gen-examples: {e}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
