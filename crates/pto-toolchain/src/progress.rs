//! Compiles announced on stderr, so that a long build never looks like a hang.
//!
//! Off unless a front end turns it on with [`set_progress`]: library callers, the Python
//! module and tests print nothing. `pto` turns it on: a line as each unit starts compiling
//! when stderr is a terminal ([`Progress::EachUnit`]), and otherwise a line only for a unit
//! still compiling after [`SLOW_COMPILE`] ([`Progress::Slow`]), so logs of quick builds
//! stay as they were. `PTO_COMPILE_PROGRESS` overrides the choice (`off`, `each`, or a
//! number of seconds). Cache hits compile nothing and print nothing.

use std::io::Write as _;
use std::sync::mpsc;
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::toolchain::{CompileUnit, CoreKind, UnitKind};

/// The environment variable that overrides the front end's choice.
pub const PROGRESS_ENV: &str = "PTO_COMPILE_PROGRESS";

/// After how long [`Progress::Slow`] names a unit by default.
pub const SLOW_COMPILE: Duration = Duration::from_secs(10);

/// How compiles are announced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Progress {
    /// Nothing (the default).
    Off,
    /// A line as each unit starts compiling.
    EachUnit,
    /// A line for a unit still compiling after this long.
    Slow(Duration),
}

impl Progress {
    /// `PTO_COMPILE_PROGRESS` when it is set (`off`, `each`, or seconds), else `default`.
    /// A value that is none of those is named in the error.
    pub fn from_env_or(default: Progress) -> Result<Progress, String> {
        match std::env::var(PROGRESS_ENV) {
            Ok(v) => Progress::parse(&v),
            Err(_) => Ok(default),
        }
    }

    fn parse(value: &str) -> Result<Progress, String> {
        match value.trim() {
            "off" => Ok(Progress::Off),
            "each" => Ok(Progress::EachUnit),
            v => v
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| Progress::Slow(Duration::from_secs_f64(s)))
                .ok_or_else(|| {
                    format!("{PROGRESS_ENV}={value:?}: expected `off`, `each` or seconds >= 0")
                }),
        }
    }
}

static MODE: Mutex<Progress> = Mutex::new(Progress::Off);

/// Sets how this process announces compiles (see the module docs).
pub fn set_progress(progress: Progress) {
    *MODE.lock().unwrap_or_else(|e| e.into_inner()) = progress;
}

fn mode() -> Progress {
    *MODE.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a unit is, for the line.
fn kind_label(kind: UnitKind) -> &'static str {
    match kind {
        UnitKind::Orchestration => "orchestration",
        UnitKind::Kernel(CoreKind::Aic) => "AIC kernel",
        UnitKind::Kernel(CoreKind::Aiv) => "AIV kernel",
    }
}

/// The line announcing `unit`; `after` is how long it has compiled so far, if it is late.
fn line(unit: &CompileUnit, after: Option<Duration>) -> String {
    let what = format!("{} ({})", unit.source.display(), kind_label(unit.kind));
    match after {
        None => format!("pto: compiling {what}"),
        Some(d) => format!("pto: still compiling {what} after {} s", d.as_secs_f64()),
    }
}

/// Announces one compile for as long as it lives (see [`announce`]).
pub(crate) struct Notice {
    done: Option<mpsc::Sender<()>>,
    watcher: Option<JoinHandle<()>>,
}

impl Drop for Notice {
    fn drop(&mut self) {
        // Dropping the sender wakes the watcher, which then prints nothing.
        drop(self.done.take());
        if let Some(w) = self.watcher.take() {
            let _ = w.join();
        }
    }
}

/// Starts announcing the compile of `unit` on stderr, as the process's mode says.
pub(crate) fn announce(unit: &CompileUnit) -> Notice {
    announce_to(unit, mode(), || Box::new(std::io::stderr()))
}

/// [`announce`] with the mode and the sink given (the tests' entry).
fn announce_to(
    unit: &CompileUnit,
    progress: Progress,
    sink: impl FnOnce() -> Box<dyn std::io::Write + Send> + Send + 'static,
) -> Notice {
    let quiet = Notice {
        done: None,
        watcher: None,
    };
    match progress {
        Progress::Off => quiet,
        Progress::EachUnit => {
            let _ = writeln!(sink(), "{}", line(unit, None));
            quiet
        }
        Progress::Slow(after) => {
            let (done, wait) = mpsc::channel::<()>();
            let text = line(unit, Some(after));
            let watcher = std::thread::spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(after) {
                    let _ = writeln!(sink(), "{text}");
                }
            });
            Notice {
                done: Some(done),
                watcher: Some(watcher),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A sink the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn unit() -> CompileUnit {
        CompileUnit::new("kernels/aiv/add.cpp", UnitKind::Kernel(CoreKind::Aiv))
    }

    fn run(progress: Progress, hold: Duration) -> String {
        let out = Shared::default();
        let sink = out.clone();
        let notice = announce_to(&unit(), progress, move || Box::new(sink));
        std::thread::sleep(hold);
        drop(notice);
        out.text()
    }

    #[test]
    fn each_unit_names_the_unit_at_once() {
        assert_eq!(
            run(Progress::EachUnit, Duration::ZERO),
            "pto: compiling kernels/aiv/add.cpp (AIV kernel)\n"
        );
        assert_eq!(run(Progress::Off, Duration::ZERO), "");
    }

    #[test]
    fn slow_names_only_a_unit_that_outlasts_the_threshold() {
        assert_eq!(
            run(Progress::Slow(Duration::from_secs(60)), Duration::ZERO),
            ""
        );
        assert_eq!(
            run(
                Progress::Slow(Duration::from_millis(10)),
                Duration::from_millis(300)
            ),
            "pto: still compiling kernels/aiv/add.cpp (AIV kernel) after 0.01 s\n"
        );
    }

    #[test]
    fn the_override_is_parsed_or_named() {
        assert_eq!(Progress::parse("off"), Ok(Progress::Off));
        assert_eq!(Progress::parse(" each "), Ok(Progress::EachUnit));
        assert_eq!(
            Progress::parse("2.5"),
            Ok(Progress::Slow(Duration::from_millis(2500)))
        );
        for bad in ["", "-1", "soon", "inf"] {
            let e = Progress::parse(bad).unwrap_err();
            assert!(e.contains(PROGRESS_ENV) && e.contains("each"), "{e}");
        }
    }
}
