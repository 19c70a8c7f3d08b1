//! The `ptoas` binary: PyPTO's ptoas command line over the `ptoas` library. Every failure is
//! `Error: ...` on stderr (with the offending line underlined when it comes from the input)
//! and exit code 1.

use std::io::Write;
use std::process::ExitCode;

use ptoas::cli::{self, Command};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match real_main(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let mut stderr = std::io::stderr().lock();
            match e.downcast_ref::<ptoas::Error>() {
                Some(pe) => {
                    let _ = writeln!(stderr, "Error: {pe}");
                    if let Some(x) = pe.excerpt() {
                        let _ = writeln!(stderr, "{x}");
                    }
                }
                None => {
                    let _ = writeln!(stderr, "Error: {e:#}");
                }
            }
            ExitCode::from(1)
        }
    }
}

fn real_main(args: &[String]) -> anyhow::Result<()> {
    match cli::parse_args(args)? {
        Command::Version => println!("{}", cli::version()),
        Command::Help => print!("{}", cli::HELP),
        Command::Run(opts) => {
            if let Some(cpp) = cli::run(&opts)? {
                let mut out = std::io::stdout().lock();
                if let Err(e) = out.write_all(cpp.as_bytes()).and_then(|_| out.flush()) {
                    if e.kind() != std::io::ErrorKind::BrokenPipe {
                        return Err(anyhow::Error::new(e).context("cannot write the output"));
                    }
                }
            }
        }
    }
    Ok(())
}
