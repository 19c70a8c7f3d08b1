//! The `.pto` → `.cpp` splice of replay: regenerate kernel bodies from edited
//! `ptoas/<unit>.pto` files with a discovered `ptoas`, and splice them into
//! the kernel wrappers between the ptoas sentinels.
//!
//! This is PyPTO's `debug/pto_rebuild.py` contract. Replay runs it *before*
//! invalidating binaries, so the cpp → `.so` rebuild sees the new bodies:
//!
//! | what changed | what runs |
//! |---|---|
//! | only `kernels/<core>/<func>.cpp` | cpp → `.so` (this module does nothing) |
//! | only `ptoas/<unit>.pto` | pto → cpp (here) → `.so` |
//! | both | the `.pto` decides the body; edits outside the sentinels are kept |
//!
//! # Steps ([`rebuild_kernel_cpp_from_pto_with`])
//!
//! 1. `enabled == false` (`--no-rebuild-from-pto`): `[pto->cpp] skipped
//!    (rebuild_from_pto=False)`. `PYPTO_REBUILD_FROM_PTO` in `0|false|no`
//!    (case-insensitive, stripped): `[pto->cpp] skipped
//!    (PYPTO_REBUILD_FROM_PTO=0)`.
//! 2. Scan directories: the build directory and every `next_levels/*/`,
//!    each only if it has a `ptoas/` subdirectory. None: nothing, silently.
//! 3. [`find_ptoas`]: a ptoas on `PTOAS_ROOT` / `PATH` wins; without one the bundled
//!    translator (this project's `ptoas` crate, in-process) runs instead
//!    ([`RebuildOptions::bundled`]; PyPTO would skip). The first regeneration prints which:
//!    `[pto->cpp] using ptoas <path>` or `[pto->cpp] using the bundled ptoas translator (no
//!    ptoas on PTOAS_ROOT or PATH)` (an external ptoas is named in the log only, so the
//!    printed lines stay PyPTO's). With `bundled == false` and no ptoas: `[pto->cpp]
//!    skipped: ptoas binary not found (set PTOAS_ROOT or PATH)` and no error.
//! 4. Per `ptoas/<unit>.pto` (name order): skipped when `ptoas/<unit>.cpp`
//!    exists and its mtime is not older than the `.pto`'s. Otherwise
//!    `[pto->cpp] regenerating from <rel .pto>`, then `ptoas <pto> -o <out>
//!    --enable-insert-sync --pto-level=<level>` ([`pto_level`]) with a 60 s
//!    timeout. For each entry function ([`aicore_functions`]) with a
//!    `kernels/aic/<fn>.cpp` or `kernels/aiv/<fn>.cpp`, the preprocessed
//!    output ([`preprocess_ptoas_output`]) replaces the region between the
//!    sentinels ([`splice_body`]), then `[pto->cpp]   spliced -> <rel>`.
//!    Functions without a kernel file (helpers) are skipped.
//! 5. `[pto->cpp] no .pto changes detected` or `[pto->cpp] updated N kernel
//!    cpp(s)`.
//!
//! Relative paths are relative to the build directory, with `/`
//! separators (`kernels/aiv/foo.cpp`, `next_levels/<x>/kernels/...`).
//!
//! # Failure safety
//!
//! A key design decision: `ptoas/<unit>.cpp`, the raw ptoas output, doubles
//! as the unit's build stamp (its mtime), so it must advance only when the
//! whole unit succeeded. ptoas therefore writes `ptoas/<unit>.<pid>.tmp.cpp`;
//! only after every kernel cpp has been spliced (each written atomically) is
//! it renamed to `ptoas/<unit>.cpp`. A failing ptoas, a timeout or a kernel
//! without sentinels leaves the old stamp, so the next replay retries
//! instead of silently skipping the unit. PyPTO passes `-o ptoas/<unit>.cpp`
//! directly; the command line is otherwise the same.
//!
//! This module never prints: it returns the printable lines
//! ([`RebuildReport::lines`]) and can stream them to a callback.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pto_build_output::kernel_splice::{
    aicore_functions, preprocess_ptoas_output, pto_level, splice_body,
};
use pto_build_output::layout::NEXT_LEVELS_DIR;
use pto_build_output::{write_atomic, WriteError};

/// How long one ptoas run may take.
pub const PTOAS_TIMEOUT: Duration = Duration::from_secs(60);

/// The environment variable that turns the rebuild off (`0`, `false`, `no`).
pub const REBUILD_FROM_PTO_ENV: &str = "PYPTO_REBUILD_FROM_PTO";

/// The environment variable naming the ptoas installation directory.
pub const PTOAS_ROOT_ENV: &str = "PTOAS_ROOT";

/// What went wrong while regenerating kernel cpps.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PtoRebuildError {
    /// ptoas exited with a non-zero status (PyPTO's `RuntimeError` text),
    /// or succeeded without writing its output.
    #[error("ptoas rebuild failed for {pto_name}: {stderr}")]
    PtoasFailed {
        /// The `.pto` file name, e.g. `add.pto`.
        pto_name: String,
        /// ptoas's standard error (trailing whitespace trimmed), or what was
        /// missing.
        stderr: String,
    },

    /// ptoas ran longer than the timeout and was killed.
    #[error(
        "ptoas rebuild failed for {pto_name}: timed out after {} s; check {} for what makes ptoas hang, or skip the rebuild with --no-rebuild-from-pto / PYPTO_REBUILD_FROM_PTO=0",
        timeout.as_secs_f64(),
        pto.display()
    )]
    PtoasTimeout {
        /// The `.pto` file name.
        pto_name: String,
        /// The `.pto` file.
        pto: PathBuf,
        /// The timeout that expired.
        timeout: Duration,
    },

    /// ptoas could not be started.
    #[error("cannot run ptoas `{}`: {source}; check PTOAS_ROOT or PATH", ptoas.display())]
    PtoasSpawn {
        /// The ptoas found by [`find_ptoas`].
        ptoas: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: io::Error,
    },

    /// A kernel cpp has no (or out-of-order) sentinels (PyPTO's text).
    #[error("{}: cannot splice — missing or out-of-order ptoas sentinels. This build_output predates the .pto rebuild feature; recompile via ir.compile() to refresh.", cpp.display())]
    MissingSentinels {
        /// The kernel cpp.
        cpp: PathBuf,
    },

    /// ptoas's output for a unit defines no kernel function, or none that names a kernel
    /// cpp of the build (and no `kernels/*/<unit>.cpp` exists): splicing nothing would run
    /// the old kernel as if the edit had been applied.
    #[error(
        "{pto_name}: the edited unit was not spliced into any kernel: {}; {}, or revert the edit",
        if functions.is_empty() {
            "ptoas's output defines no kernel function".to_string()
        } else {
            format!("ptoas's output defines {} and the build has no kernels/aic|aiv/<name>.cpp for them nor for the unit '{unit}'", functions.join(", "))
        },
        if functions.is_empty() {
            format!("give the unit its kernel function (the one kernels/<core>/{unit}.cpp calls)")
        } else {
            format!("name the kernel function like its kernel file (kernels/<core>/{unit}.cpp)")
        }
    )]
    NothingSpliced {
        /// The `.pto` file name.
        pto_name: String,
        /// The kernel functions ptoas's output defines.
        functions: Vec<String>,
        /// The unit (the `.pto` file's stem).
        unit: String,
    },

    /// Reading a file or listing a directory failed.
    #[error("cannot {action} {}: {source}; check that the build directory is readable", path.display())]
    Io {
        /// What was being done (`read`, `list`, `stat`, `rename`).
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },

    /// Writing a spliced kernel cpp failed.
    #[error(transparent)]
    Write(#[from] WriteError),
}

fn io_err<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> PtoRebuildError + 'a {
    move |source| PtoRebuildError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// The environment the rebuild reads, captured explicitly so it can be
/// given (tests, embedders) instead of read from the process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RebuildEnv {
    /// `PYPTO_REBUILD_FROM_PTO`.
    pub rebuild_from_pto: Option<OsString>,
    /// `PTOAS_ROOT`.
    pub ptoas_root: Option<OsString>,
    /// `PATH`.
    pub path: Option<OsString>,
}

impl RebuildEnv {
    /// The three variables of this process.
    pub fn from_process() -> Self {
        RebuildEnv {
            rebuild_from_pto: std::env::var_os(REBUILD_FROM_PTO_ENV),
            ptoas_root: std::env::var_os(PTOAS_ROOT_ENV),
            path: std::env::var_os("PATH"),
        }
    }

    /// True when `PYPTO_REBUILD_FROM_PTO` (whitespace-stripped, any case)
    /// is `0`, `false` or `no`.
    pub fn opted_out(&self) -> bool {
        self.rebuild_from_pto.as_deref().is_some_and(|v| {
            let v = v.to_string_lossy().trim().to_ascii_lowercase();
            matches!(v.as_str(), "0" | "false" | "no")
        })
    }
}

/// How to run the rebuild.
#[derive(Debug, Clone)]
pub struct RebuildOptions {
    /// False for `--no-rebuild-from-pto` / `rebuild_from_pto=False`.
    pub enabled: bool,
    /// The environment to read.
    pub env: RebuildEnv,
    /// The ptoas timeout, [`PTOAS_TIMEOUT`] normally.
    pub timeout: Duration,
    /// Fall back to the bundled translator when no ptoas is found (the default).
    pub bundled: bool,
}

impl RebuildOptions {
    /// `enabled`, this process's environment and the 60 s timeout.
    pub fn from_process(enabled: bool) -> Self {
        RebuildOptions {
            enabled,
            env: RebuildEnv::from_process(),
            timeout: PTOAS_TIMEOUT,
            bundled: true,
        }
    }
}

/// Why the rebuild did or did not scan for `.pto` changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RebuildStatus {
    /// The caller disabled it (`--no-rebuild-from-pto`).
    DisabledByCaller,
    /// `PYPTO_REBUILD_FROM_PTO` disabled it.
    DisabledByEnv,
    /// No directory has a `ptoas/` subdirectory.
    NothingToScan,
    /// ptoas was not found.
    PtoasNotFound,
    /// The `.pto` files were checked (and regenerated where newer).
    Scanned,
}

/// The outcome of a successful rebuild.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebuildReport {
    /// What happened.
    pub status: RebuildStatus,
    /// The ptoas used, when one was found.
    pub ptoas: Option<PathBuf>,
    /// The `.pto` files regenerated, relative to the build directory.
    pub regenerated: Vec<String>,
    /// The kernel cpps spliced, relative to the build directory (PyPTO's
    /// return value).
    pub touched: Vec<String>,
    /// The printable lines, in order (`[pto->cpp] ...`).
    pub lines: Vec<String>,
}

/// [`rebuild_kernel_cpp_from_pto_with`] with this process's environment,
/// the 60 s timeout and no streaming.
pub fn rebuild_kernel_cpp_from_pto(
    dir: &Path,
    enabled: bool,
) -> Result<RebuildReport, PtoRebuildError> {
    rebuild_kernel_cpp_from_pto_with(dir, &RebuildOptions::from_process(enabled), &mut |_| {})
}

/// Regenerates the kernel cpps of `dir` (and its `next_levels/*/`) from
/// every `.pto` newer than its ptoas output; see the module docs for the
/// steps. Each printable line is passed to `on_line` as soon as it is known
/// (so a front end can show progress before a slow ptoas) and collected in
/// the report. On error, the lines already passed stay valid; the error's
/// text is the line to print next.
pub fn rebuild_kernel_cpp_from_pto_with(
    dir: &Path,
    options: &RebuildOptions,
    on_line: &mut dyn FnMut(&str),
) -> Result<RebuildReport, PtoRebuildError> {
    let mut report = RebuildReport {
        status: RebuildStatus::Scanned,
        ptoas: None,
        regenerated: Vec::new(),
        touched: Vec::new(),
        lines: Vec::new(),
    };
    let mut emit = |report: &mut RebuildReport, line: String| {
        on_line(&line);
        report.lines.push(line);
    };
    if !options.enabled {
        report.status = RebuildStatus::DisabledByCaller;
        emit(
            &mut report,
            "[pto->cpp] skipped (rebuild_from_pto=False)".into(),
        );
        return Ok(report);
    }
    if options.env.opted_out() {
        report.status = RebuildStatus::DisabledByEnv;
        emit(
            &mut report,
            "[pto->cpp] skipped (PYPTO_REBUILD_FROM_PTO=0)".into(),
        );
        return Ok(report);
    }
    let scan_dirs = scan_dirs(dir)?;
    if scan_dirs.is_empty() {
        report.status = RebuildStatus::NothingToScan;
        return Ok(report);
    }
    let translator = match find_ptoas(&options.env) {
        Some(path) => Translator::External(path),
        None if options.bundled => Translator::Bundled,
        None => {
            report.status = RebuildStatus::PtoasNotFound;
            emit(
                &mut report,
                "[pto->cpp] skipped: ptoas binary not found (set PTOAS_ROOT or PATH)".into(),
            );
            return Ok(report);
        }
    };
    if let Translator::External(path) = &translator {
        report.ptoas = Some(path.clone());
    }
    let ptoas = &translator;
    let mut announced = false;
    for scan_dir in &scan_dirs {
        for pto in stale_units(scan_dir)? {
            if !announced {
                announced = true;
                match &translator {
                    // PyPTO would skip here: say what runs instead.
                    Translator::Bundled => {
                        emit(&mut report, format!("[pto->cpp] using {translator}"))
                    }
                    // PyPTO's lines stay as they are; the log names the program.
                    Translator::External(_) => tracing::info!("[pto->cpp] using {translator}"),
                }
            }
            let rel_pto = relative(dir, &pto);
            emit(
                &mut report,
                format!("[pto->cpp] regenerating from {rel_pto}"),
            );
            report.regenerated.push(rel_pto);
            for cpp in regenerate_unit(ptoas, scan_dir, &pto, options.timeout)? {
                let rel = relative(dir, &cpp);
                emit(&mut report, format!("[pto->cpp]   spliced -> {rel}"));
                report.touched.push(rel);
            }
        }
    }
    let summary = match report.touched.len() {
        0 => "[pto->cpp] no .pto changes detected".to_owned(),
        n => format!("[pto->cpp] updated {n} kernel cpp(s)"),
    };
    emit(&mut report, summary);
    Ok(report)
}

/// `dir` and its `next_levels/*/`, in that order (sub-builds by name), each
/// only when it has a `ptoas/` subdirectory.
fn scan_dirs(dir: &Path) -> Result<Vec<PathBuf>, PtoRebuildError> {
    let mut dirs = Vec::new();
    if dir.join("ptoas").is_dir() {
        dirs.push(dir.to_path_buf());
    }
    let next_levels = dir.join(NEXT_LEVELS_DIR);
    if next_levels.is_dir() {
        let mut subs = Vec::new();
        for entry in std::fs::read_dir(&next_levels).map_err(io_err("list", &next_levels))? {
            let path = entry.map_err(io_err("list", &next_levels))?.path();
            if path.join("ptoas").is_dir() {
                subs.push(path);
            }
        }
        subs.sort();
        dirs.extend(subs);
    }
    Ok(dirs)
}

/// The `ptoas/*.pto` of `scan_dir`, by name, whose `ptoas/<unit>.cpp` is
/// missing or older than the `.pto`.
fn stale_units(scan_dir: &Path) -> Result<Vec<PathBuf>, PtoRebuildError> {
    let ptoas_dir = scan_dir.join("ptoas");
    let mut ptos = Vec::new();
    for entry in std::fs::read_dir(&ptoas_dir).map_err(io_err("list", &ptoas_dir))? {
        let path = entry.map_err(io_err("list", &ptoas_dir))?.path();
        if path.extension() == Some(OsStr::new("pto")) && path.is_file() {
            ptos.push(path);
        }
    }
    ptos.sort();
    let mut stale = Vec::new();
    for pto in ptos {
        let pto_mtime = std::fs::metadata(&pto)
            .and_then(|m| m.modified())
            .map_err(io_err("stat", &pto))?;
        let cpp = pto.with_extension("cpp");
        let up_to_date = match std::fs::metadata(&cpp) {
            Ok(m) => m.modified().map_err(io_err("stat", &cpp))? >= pto_mtime,
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(io_err("stat", &cpp)(e)),
        };
        if !up_to_date {
            stale.push(pto);
        }
    }
    Ok(stale)
}

/// Runs ptoas on one unit, splices every matching kernel cpp and finally
/// moves the raw output to `ptoas/<unit>.cpp`. Returns the spliced cpps.
fn regenerate_unit(
    ptoas: &Translator,
    scan_dir: &Path,
    pto: &Path,
    timeout: Duration,
) -> Result<Vec<PathBuf>, PtoRebuildError> {
    let stem = pto
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // ptoas writes to a temporary beside the raw cpp (unique per writer, `.cpp` for an
    // external ptoas that goes by the extension), renamed over it once spliced.
    let mut tmp_out = pto_base::fs::temporary_beside(&pto.with_extension("cpp")).into_os_string();
    tmp_out.push(".cpp");
    let tmp_out = PathBuf::from(tmp_out);
    let res = (|| {
        run_ptoas(ptoas, pto, &tmp_out, timeout)?;
        let generated = std::fs::read(&tmp_out).map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                PtoRebuildError::PtoasFailed {
                    pto_name: file_name(pto),
                    stderr: format!(
                        "ptoas exited successfully but wrote no {}",
                        tmp_out.display()
                    ),
                }
            } else {
                io_err("read", &tmp_out)(e)
            }
        })?;
        let body = preprocess_ptoas_output(&generated);
        let functions = aicore_functions(&generated);
        if functions.is_empty() {
            return Err(PtoRebuildError::NothingSpliced {
                pto_name: file_name(pto),
                functions,
                unit: stem.clone(),
            });
        }
        // The kernels named like a function of the output (the seed's rule), and the
        // kernel the unit's file belongs to (`ptoas/<unit>.pto` -> `kernels/*/<unit>.cpp`).
        let mut targets: Vec<&str> = functions.iter().map(String::as_str).collect();
        if !targets.contains(&stem.as_str()) {
            targets.push(&stem);
        }
        let mut spliced = Vec::new();
        for name in targets {
            for core in ["aic", "aiv"] {
                let cpp = scan_dir
                    .join("kernels")
                    .join(core)
                    .join(format!("{name}.cpp"));
                if !cpp.is_file() {
                    continue;
                }
                let text = std::fs::read(&cpp).map_err(io_err("read", &cpp))?;
                let new_text = splice_body(&text, &body)
                    .ok_or_else(|| PtoRebuildError::MissingSentinels { cpp: cpp.clone() })?;
                if new_text != text {
                    write_atomic(&cpp, &new_text)?;
                }
                spliced.push(cpp);
            }
        }
        if spliced.is_empty() {
            return Err(PtoRebuildError::NothingSpliced {
                pto_name: file_name(pto),
                functions,
                unit: stem.clone(),
            });
        }
        let raw_cpp = pto.with_extension("cpp");
        std::fs::rename(&tmp_out, &raw_cpp).map_err(io_err("rename", &raw_cpp))?;
        Ok(spliced)
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp_out);
    }
    res
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `path` relative to `base` with `/` separators (the full path if it is
/// not under `base`).
fn relative(base: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(base).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Which ptoas regenerates the bodies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Translator {
    /// A ptoas program found on `PTOAS_ROOT` or `PATH`.
    External(PathBuf),
    /// This project's translator, run in-process.
    Bundled,
}

impl std::fmt::Display for Translator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Translator::External(p) => write!(f, "ptoas {}", p.display()),
            Translator::Bundled => {
                f.write_str("the bundled ptoas translator (no ptoas on PTOAS_ROOT or PATH)")
            }
        }
    }
}

/// Runs the translator: an external `ptoas <pto> -o <out> --enable-insert-sync
/// --pto-level=<level>` killed after `timeout`, or the bundled one with the same options.
fn run_ptoas(
    ptoas: &Translator,
    pto: &Path,
    out: &Path,
    timeout: Duration,
) -> Result<(), PtoRebuildError> {
    let pto_text = std::fs::read(pto).map_err(io_err("read", pto))?;
    let level = pto_level(&String::from_utf8_lossy(&pto_text));
    let ptoas = match ptoas {
        Translator::External(path) => path.as_path(),
        Translator::Bundled => {
            let text = String::from_utf8_lossy(&pto_text);
            let options = ptoas::Options {
                arch: None,
                level: ptoas::Level::from_name(level).unwrap_or(ptoas::Level::Level2),
                infer_layout: true,
                insert_sync: true,
            };
            let cpp =
                ptoas::translate(&text, &pto.display().to_string(), &options).map_err(|e| {
                    PtoRebuildError::PtoasFailed {
                        pto_name: file_name(pto),
                        stderr: format!("Error: {e}"),
                    }
                })?;
            return write_atomic(out, cpp.as_bytes()).map_err(PtoRebuildError::from);
        }
    };
    let mut child = crate::toolchain::spawn_retrying(
        Command::new(ptoas)
            .arg(pto)
            .arg("-o")
            .arg(out)
            .arg("--enable-insert-sync")
            .arg(format!("--pto-level={level}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
    .map_err(|source| PtoRebuildError::PtoasSpawn {
        ptoas: ptoas.to_path_buf(),
        source,
    })?;
    // Drain both pipes on their own threads so a chatty ptoas cannot block
    // on a full pipe. After a timeout the readers are abandoned: a
    // grandchild may still hold the pipes open.
    let (tx, rx) = mpsc::channel::<(bool, Vec<u8>)>();
    if let Some(mut stdout) = child.stdout.take() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stdout.read_to_end(&mut buf);
            let _ = tx.send((false, buf));
        });
    }
    if let Some(mut stderr) = child.stderr.take() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stderr.read_to_end(&mut buf);
            let _ = tx.send((true, buf));
        });
    }
    drop(tx);
    let timed_out = || PtoRebuildError::PtoasTimeout {
        pto_name: file_name(pto),
        pto: pto.to_path_buf(),
        timeout,
    };
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|source| PtoRebuildError::PtoasSpawn {
                ptoas: ptoas.to_path_buf(),
                source,
            })?
        {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(timed_out());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut stderr = Vec::new();
    for _ in 0..2 {
        let remaining = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(remaining) {
            Ok((true, buf)) => stderr = buf,
            Ok((false, _)) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => return Err(timed_out()),
        }
    }
    if !status.success() {
        let text = String::from_utf8_lossy(&stderr).trim_end().to_owned();
        return Err(PtoRebuildError::PtoasFailed {
            pto_name: file_name(pto),
            stderr: if text.is_empty() {
                format!("(no error output; {status})")
            } else {
                text
            },
        });
    }
    Ok(())
}

/// Finds ptoas. When `PTOAS_ROOT` is set (non-empty) only that directory is
/// searched, in order `ptoas` (≤ v0.50 launcher), `ptoas.sh` (v0.55+),
/// `bin/ptoas`; otherwise `ptoas` on `PATH`. A candidate must be a regular
/// file (after following symbolic links) with an execute bit set.
pub fn find_ptoas(env: &RebuildEnv) -> Option<PathBuf> {
    if let Some(root) = env.ptoas_root.as_deref().filter(|r| !r.is_empty()) {
        let root = Path::new(root);
        return ["ptoas", "ptoas.sh", "bin/ptoas"]
            .iter()
            .map(|c| root.join(c))
            .find(|p| is_executable_file(p));
    }
    let path = env.path.as_deref()?;
    std::env::split_paths(path)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join("ptoas"))
        .find(|p| is_executable_file(p))
}

fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    const WRAPPER_HEAD: &str = "// Kernel Function: kern\n#include \"tensor.h\"\n\n";
    const WRAPPER_TAIL: &str = "// --- Kernel entry point ---\nextern \"C\" void kernel_entry(int64_t* args) {\n    kern(nullptr);\n}\n";

    /// A kernel wrapper around `body` (as `kernel_splice`'s tests build one).
    fn wrapper(body: &str) -> String {
        format!("{WRAPPER_HEAD}// --- ptoas-generated code ---\n{body}{WRAPPER_TAIL}")
    }

    // ---- pure functions -------------------------------------------------

    #[test]
    fn opt_out_values() {
        let env = |v: &str| RebuildEnv {
            rebuild_from_pto: Some(v.into()),
            ..RebuildEnv::default()
        };
        for v in ["0", "false", "no", " FALSE ", "No\n", "\tfalse"] {
            assert!(env(v).opted_out(), "{v:?}");
        }
        for v in ["1", "yes", "true", "", "off", "0 0"] {
            assert!(!env(v).opted_out(), "{v:?}");
        }
        assert!(!RebuildEnv::default().opted_out());
    }

    // ---- end to end with a toy ptoas ------------------------------------

    /// A toy `ptoas`: reads `kernel NAME VALUE` / `helper NAME` / `fail MSG`
    /// / `hang` lines from the `.pto` and writes C++ with `AICORE void`
    /// functions to the `-o` file. It appends its arguments to
    /// `$0.log`.
    const TOY_PTOAS: &str = r#"#!/bin/sh
echo "$@" >> "$0.log"
pto="$1"; out="$3"
: > "$out.part"
echo '#include "pto/pto-inst.hpp"' >> "$out.part"
echo '' >> "$out.part"
while read -r kw name val; do
  case "$kw" in
    kernel) printf '__global__ AICORE void %s(float* out) {\n    out[0] = %s;\n}\n' "$name" "$val" >> "$out.part" ;;
    helper) printf 'AICORE void %s(float* out) { out[0] += 1; }\n' "$name" >> "$out.part" ;;
    fail) echo "error: $name $val" >&2; rm -f "$out.part"; exit 3 ;;
    hang) sleep 5 ;;
  esac
done < "$pto"
mv "$out.part" "$out"
"#;

    struct Fixture {
        _tmp: tempfile::TempDir,
        /// The build directory.
        dir: PathBuf,
        /// Holds the toy ptoas (`ptoas.sh`).
        ptoas_root: PathBuf,
    }

    impl Fixture {
        fn new() -> Result<Fixture, Box<dyn std::error::Error>> {
            let tmp = tempfile::tempdir()?;
            let dir = tmp.path().join("build");
            let ptoas_root = tmp.path().join("ptoas-root");
            std::fs::create_dir_all(&dir)?;
            std::fs::create_dir_all(&ptoas_root)?;
            let script = ptoas_root.join("ptoas.sh");
            std::fs::write(&script, TOY_PTOAS)?;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
            Ok(Fixture {
                _tmp: tmp,
                dir,
                ptoas_root,
            })
        }

        fn env(&self) -> RebuildEnv {
            RebuildEnv {
                rebuild_from_pto: None,
                ptoas_root: Some(self.ptoas_root.clone().into_os_string()),
                path: None,
            }
        }

        fn options(&self) -> RebuildOptions {
            RebuildOptions {
                enabled: true,
                env: self.env(),
                timeout: PTOAS_TIMEOUT,
                bundled: false,
            }
        }

        fn run(&self) -> Result<RebuildReport, PtoRebuildError> {
            rebuild_kernel_cpp_from_pto_with(&self.dir, &self.options(), &mut |_| {})
        }

        fn ptoas_log(&self) -> String {
            std::fs::read_to_string(self.ptoas_root.join("ptoas.sh.log")).unwrap_or_default()
        }

        /// Writes `<sub>/ptoas/<unit>.pto` and an up-to-date raw cpp, plus a
        /// kernel wrapper for each `(core, func)`; the `.pto` is older than
        /// the raw cpp.
        fn unit(
            &self,
            sub: &str,
            unit: &str,
            pto: &str,
            kernels: &[(&str, &str)],
        ) -> Result<(), Box<dyn std::error::Error>> {
            let base = self.dir.join(sub);
            std::fs::create_dir_all(base.join("ptoas"))?;
            let pto_path = base.join("ptoas").join(format!("{unit}.pto"));
            std::fs::write(&pto_path, pto)?;
            let raw = base.join("ptoas").join(format!("{unit}.cpp"));
            std::fs::write(&raw, "// raw ptoas output\n")?;
            set_age(&pto_path, 200)?;
            set_age(&raw, 100)?;
            for (core, func) in kernels {
                let cpp = base.join("kernels").join(core).join(format!("{func}.cpp"));
                std::fs::create_dir_all(cpp.parent().ok_or("no parent")?)?;
                std::fs::write(
                    &cpp,
                    wrapper(&format!("static __aicore__ void {func}() {{}}\n")),
                )?;
            }
            Ok(())
        }

        /// Makes `<sub>/ptoas/<unit>.pto` newer than its raw cpp, with `text`.
        fn edit_pto(
            &self,
            sub: &str,
            unit: &str,
            text: &str,
        ) -> Result<(), Box<dyn std::error::Error>> {
            let pto = self.dir.join(sub).join("ptoas").join(format!("{unit}.pto"));
            std::fs::write(&pto, text)?;
            set_age(&pto, 50)?;
            Ok(())
        }
    }

    /// Sets `path`'s mtime to `secs` seconds ago.
    fn set_age(path: &Path, secs: u64) -> io::Result<()> {
        let t = SystemTime::now() - Duration::from_secs(secs);
        std::fs::File::options()
            .write(true)
            .open(path)?
            .set_modified(t)
    }

    fn mtime(path: &Path) -> io::Result<SystemTime> {
        std::fs::metadata(path)?.modified()
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_else(|e| format!("<{e}>"))
    }

    fn ptoas_dir_names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    #[test]
    fn no_change_runs_nothing() -> TestResult {
        let fx = Fixture::new()?;
        fx.unit("", "add", "kernel add 1.0\n", &[("aiv", "add")])?;
        let kernel = fx.dir.join("kernels/aiv/add.cpp");
        let before = read(&kernel);
        let report = fx.run()?;
        assert_eq!(report.status, RebuildStatus::Scanned);
        assert_eq!(report.lines, ["[pto->cpp] no .pto changes detected"]);
        assert!(report.touched.is_empty() && report.regenerated.is_empty());
        assert_eq!(report.ptoas, Some(fx.ptoas_root.join("ptoas.sh")));
        assert_eq!(fx.ptoas_log(), "", "ptoas must not run");
        assert_eq!(read(&kernel), before);
        Ok(())
    }

    #[test]
    fn hand_edited_cpp_alone_is_left_to_the_cpp_rebuild() -> TestResult {
        let fx = Fixture::new()?;
        fx.unit("", "add", "kernel add 1.0\n", &[("aiv", "add")])?;
        let kernel = fx.dir.join("kernels/aiv/add.cpp");
        let edited = wrapper("static __aicore__ void add() { /* tuned by hand */ }\n");
        std::fs::write(&kernel, &edited)?;
        let report = fx.run()?;
        assert_eq!(report.lines, ["[pto->cpp] no .pto changes detected"]);
        assert_eq!(read(&kernel), edited);
        Ok(())
    }

    #[test]
    fn newer_pto_regenerates_and_splices() -> TestResult {
        let fx = Fixture::new()?;
        fx.unit("", "add", "kernel add 1.0\n", &[("aiv", "add")])?;
        fx.edit_pto("", "add", "helper bump\nkernel add 2.5\n")?;
        let mut streamed = Vec::new();
        let report = rebuild_kernel_cpp_from_pto_with(&fx.dir, &fx.options(), &mut |l| {
            streamed.push(l.to_owned())
        })?;
        assert_eq!(
            report.lines,
            [
                "[pto->cpp] regenerating from ptoas/add.pto",
                "[pto->cpp]   spliced -> kernels/aiv/add.cpp",
                "[pto->cpp] updated 1 kernel cpp(s)",
            ]
        );
        assert_eq!(streamed, report.lines);
        assert_eq!(report.touched, ["kernels/aiv/add.cpp"]);
        assert_eq!(report.regenerated, ["ptoas/add.pto"]);
        assert_eq!(
            read(&fx.dir.join("kernels/aiv/add.cpp")),
            wrapper(
                "static __aicore__ void bump(float* out) { out[0] += 1; }\n\
                 static __aicore__ void add(float* out) {\n    out[0] = 2.5;\n}\n"
            )
        );
        // ptoas saw the documented command line, writing to a hidden temporary beside the
        // raw cpp (pto_base's, unique per writer) that keeps the `.cpp` extension.
        let pto = fx.dir.join("ptoas/add.pto");
        let log = fx.ptoas_log();
        let tmp = log
            .strip_prefix(&format!("{} -o ", pto.display()))
            .and_then(|rest| rest.strip_suffix(" --enable-insert-sync --pto-level=level2\n"))
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| panic!("ptoas command line: {log}"));
        assert_eq!(tmp.parent(), Some(fx.dir.join("ptoas").as_path()));
        let name = tmp.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(&format!(".add.cpp.{}.", std::process::id()))
                && name.ends_with(".tmp.cpp"),
            "{name}"
        );
        // The raw output is the new stamp; no temporary is left.
        let raw = fx.dir.join("ptoas/add.cpp");
        assert!(read(&raw).contains("__global__ AICORE void add(float* out)"));
        assert!(mtime(&raw)? >= mtime(&pto)?);
        assert_eq!(
            ptoas_dir_names(&fx.dir.join("ptoas")),
            ["add.cpp", "add.pto"]
        );
        // A second replay sees nothing new.
        assert_eq!(fx.run()?.lines, ["[pto->cpp] no .pto changes detected"]);
        Ok(())
    }

    #[test]
    fn missing_raw_cpp_counts_as_changed_and_level3_is_detected() -> TestResult {
        let fx = Fixture::new()?;
        fx.unit("", "mm", "kernel mm 3.0\n", &[("aic", "mm")])?;
        std::fs::remove_file(fx.dir.join("ptoas/mm.cpp"))?;
        std::fs::write(
            fx.dir.join("ptoas/mm.pto"),
            "// %t = pto.alloc_tile() {addr = 0}\nkernel mm 3.0\n",
        )?;
        let report = fx.run()?;
        assert_eq!(report.touched, ["kernels/aic/mm.cpp"]);
        assert!(
            fx.ptoas_log().ends_with("--pto-level=level3\n"),
            "{}",
            fx.ptoas_log()
        );
        Ok(())
    }

    #[test]
    fn pto_decides_the_body_and_edits_outside_the_sentinels_are_kept() -> TestResult {
        let fx = Fixture::new()?;
        fx.unit("", "add", "kernel add 1.0\n", &[("aiv", "add")])?;
        let kernel = fx.dir.join("kernels/aiv/add.cpp");
        let head =
            "// Kernel Function: add\n// my note\n#include \"tensor.h\"\n#include <cmath>\n\n";
        let tail = "// --- Kernel entry point ---\nextern \"C\" void kernel_entry(int64_t* args) {\n    // instrumented by hand\n    add(nullptr);\n}\n";
        std::fs::write(
            &kernel,
            format!("{head}// --- ptoas-generated code ---\nstatic __aicore__ void add() {{ hand(); }}\n{tail}"),
        )?;
        fx.edit_pto("", "add", "kernel add 4.0\n")?;
        let report = fx.run()?;
        assert_eq!(report.touched, ["kernels/aiv/add.cpp"]);
        assert_eq!(
            read(&kernel),
            format!(
                "{head}// --- ptoas-generated code ---\nstatic __aicore__ void add(float* out) {{\n    out[0] = 4.0;\n}}\n{tail}"
            )
        );
        Ok(())
    }

    #[test]
    fn one_unit_can_feed_several_kernels_and_helpers_are_skipped() -> TestResult {
        let fx = Fixture::new()?;
        fx.unit(
            "",
            "group",
            "kernel g_aic 1\n",
            &[("aic", "g_aic"), ("aiv", "g_aiv")],
        )?;
        fx.edit_pto(
            "",
            "group",
            "helper shared\nkernel g_aic 1\nkernel g_aiv 2\n",
        )?;
        let report = fx.run()?;
        assert_eq!(
            report.touched,
            ["kernels/aic/g_aic.cpp", "kernels/aiv/g_aiv.cpp"]
        );
        assert_eq!(
            report.lines.last().map(String::as_str),
            Some("[pto->cpp] updated 2 kernel cpp(s)")
        );
        let aic = read(&fx.dir.join("kernels/aic/g_aic.cpp"));
        assert!(
            aic.contains("static __aicore__ void g_aiv(float* out)"),
            "{aic}"
        );
        Ok(())
    }

    #[test]
    fn a_unit_that_splices_nothing_is_an_error_naming_it_and_its_functions() -> TestResult {
        let fx = Fixture::new()?;
        fx.unit("", "prep", "kernel prep 1\n", &[("aiv", "prep")])?;
        let before = read(&fx.dir.join("kernels/aiv/prep.cpp"));
        // An empty unit defines no kernel function.
        fx.edit_pto("", "prep", "")?;
        let e = fx.run().unwrap_err().to_string();
        assert!(
            e.contains("prep.pto") && e.contains("no kernel function"),
            "{e}"
        );
        // A renamed function whose unit has no kernel file either.
        fx.unit("", "other", "kernel other 1\n", &[])?;
        fx.edit_pto("", "prep", "kernel prep 1\n")?;
        fx.edit_pto("", "other", "kernel other_v2 3\n")?;
        let e = fx.run().unwrap_err().to_string();
        assert!(e.contains("other.pto") && e.contains("other_v2"), "{e}");
        assert_eq!(read(&fx.dir.join("kernels/aiv/prep.cpp")), before);
        Ok(())
    }

    #[test]
    fn a_renamed_function_still_goes_into_the_kernel_of_its_unit() -> TestResult {
        let fx = Fixture::new()?;
        fx.unit("", "prep", "kernel prep 1\n", &[("aiv", "prep")])?;
        fx.edit_pto("", "prep", "kernel prep_v2 7\n")?;
        let report = fx.run()?;
        assert_eq!(report.touched, ["kernels/aiv/prep.cpp"]);
        let cpp = read(&fx.dir.join("kernels/aiv/prep.cpp"));
        assert!(cpp.contains("void prep_v2(float* out)"), "{cpp}");
        Ok(())
    }

    #[test]
    fn missing_sentinels_fail_and_keep_the_old_stamp() -> TestResult {
        let fx = Fixture::new()?;
        fx.unit("", "add", "kernel add 1.0\n", &[("aiv", "add")])?;
        let kernel = fx.dir.join("kernels/aiv/add.cpp");
        let legacy = "// Kernel Function: add\nstatic void add() {}\nextern \"C\" void kernel_entry(int64_t* a) { add(); }\n";
        std::fs::write(&kernel, legacy)?;
        fx.edit_pto("", "add", "kernel add 2.0\n")?;
        let raw = fx.dir.join("ptoas/add.cpp");
        let raw_before = (read(&raw), mtime(&raw)?);

        let mut streamed = Vec::new();
        let err = rebuild_kernel_cpp_from_pto_with(&fx.dir, &fx.options(), &mut |l| {
            streamed.push(l.to_owned())
        })
        .err()
        .ok_or("splicing a wrapper without sentinels succeeded")?;
        assert_eq!(
            err.to_string(),
            format!(
                "{}: cannot splice — missing or out-of-order ptoas sentinels. This build_output predates the .pto rebuild feature; recompile via ir.compile() to refresh.",
                kernel.display()
            )
        );
        assert_eq!(streamed, ["[pto->cpp] regenerating from ptoas/add.pto"]);
        assert_eq!(read(&kernel), legacy);
        assert_eq!((read(&raw), mtime(&raw)?), raw_before);
        assert_eq!(
            ptoas_dir_names(&fx.dir.join("ptoas")),
            ["add.cpp", "add.pto"]
        );
        // Still stale: the next replay retries (and fails the same way).
        assert!(fx.run().is_err());
        Ok(())
    }

    #[test]
    fn ptoas_failure_reports_its_stderr() -> TestResult {
        let fx = Fixture::new()?;
        fx.unit("", "bad", "kernel bad 1\n", &[("aiv", "bad")])?;
        let kernel = fx.dir.join("kernels/aiv/bad.cpp");
        let before = read(&kernel);
        fx.edit_pto("", "bad", "kernel bad 1\nfail unknown-op pto.frob\n")?;
        let err = fx.run().err().ok_or("a failing ptoas succeeded")?;
        assert_eq!(
            err.to_string(),
            "ptoas rebuild failed for bad.pto: error: unknown-op pto.frob"
        );
        assert_eq!(read(&kernel), before);
        assert_eq!(
            ptoas_dir_names(&fx.dir.join("ptoas")),
            ["bad.cpp", "bad.pto"]
        );
        Ok(())
    }

    #[test]
    fn ptoas_timeout_is_an_error() -> TestResult {
        let fx = Fixture::new()?;
        fx.unit("", "slow", "kernel slow 1\n", &[("aiv", "slow")])?;
        fx.edit_pto("", "slow", "hang\nkernel slow 1\n")?;
        let options = RebuildOptions {
            timeout: Duration::from_millis(300),
            ..fx.options()
        };
        let err = rebuild_kernel_cpp_from_pto_with(&fx.dir, &options, &mut |_| {})
            .err()
            .ok_or("a hanging ptoas succeeded")?;
        assert!(matches!(err, PtoRebuildError::PtoasTimeout { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with("ptoas rebuild failed for slow.pto: timed out after 0.3 s"),
            "{err}"
        );
        Ok(())
    }

    #[test]
    fn ptoas_not_found_is_one_line_and_no_error() -> TestResult {
        let fx = Fixture::new()?;
        fx.unit("", "add", "kernel add 1.0\n", &[("aiv", "add")])?;
        fx.edit_pto("", "add", "kernel add 2.0\n")?;
        let empty = tempfile::tempdir()?;
        for env in [
            RebuildEnv::default(),
            RebuildEnv {
                path: Some(empty.path().as_os_str().to_owned()),
                ..RebuildEnv::default()
            },
            // PTOAS_ROOT is searched alone: PATH is not consulted.
            RebuildEnv {
                ptoas_root: Some(empty.path().as_os_str().to_owned()),
                path: Some(fx.ptoas_root.as_os_str().to_owned()),
                ..RebuildEnv::default()
            },
        ] {
            let options = RebuildOptions {
                env,
                ..fx.options()
            };
            let report = rebuild_kernel_cpp_from_pto_with(&fx.dir, &options, &mut |_| {})?;
            assert_eq!(report.status, RebuildStatus::PtoasNotFound);
            assert_eq!(
                report.lines,
                ["[pto->cpp] skipped: ptoas binary not found (set PTOAS_ROOT or PATH)"]
            );
        }
        assert_eq!(fx.ptoas_log(), "");
        Ok(())
    }

    #[test]
    fn the_bundled_translator_runs_when_no_ptoas_is_found() -> TestResult {
        let fx = Fixture::new()?;
        let vadd = include_str!("../../ptoas/tests/data/vadd.pto");
        fx.unit("", "vadd", vadd, &[("aiv", "vadd")])?;
        fx.edit_pto("", "vadd", vadd)?;
        let empty = tempfile::tempdir()?;
        let options = RebuildOptions {
            env: RebuildEnv {
                path: Some(empty.path().as_os_str().to_owned()),
                ..RebuildEnv::default()
            },
            bundled: true,
            ..fx.options()
        };
        let report = rebuild_kernel_cpp_from_pto_with(&fx.dir, &options, &mut |_| {})?;
        assert_eq!(report.status, RebuildStatus::Scanned);
        assert_eq!(report.ptoas, None);
        assert_eq!(
            report.lines[0],
            "[pto->cpp] using the bundled ptoas translator (no ptoas on PTOAS_ROOT or PATH)"
        );
        assert_eq!(report.touched, ["kernels/aiv/vadd.cpp"]);
        let cpp = std::fs::read_to_string(fx.dir.join("kernels/aiv/vadd.cpp"))?;
        assert!(
            cpp.contains("static __aicore__ void vadd(") && cpp.contains("TADD("),
            "{cpp}"
        );
        // A bad .pto is the translator's located error, and the stamp stays old.
        fx.edit_pto("", "vadd", "module {\n  func.func @vadd( {\n")?;
        set_age(&fx.dir.join("ptoas/vadd.cpp"), 100)?;
        let err = rebuild_kernel_cpp_from_pto_with(&fx.dir, &options, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("vadd.pto:2:"), "{err}");
        assert_eq!(fx.ptoas_log(), "");
        Ok(())
    }

    #[test]
    fn opt_outs_skip_with_their_lines() -> TestResult {
        let fx = Fixture::new()?;
        fx.unit("", "add", "kernel add 1.0\n", &[("aiv", "add")])?;
        fx.edit_pto("", "add", "kernel add 2.0\n")?;
        let mut options = fx.options();
        options.env.rebuild_from_pto = Some(" False ".into());
        let report = rebuild_kernel_cpp_from_pto_with(&fx.dir, &options, &mut |_| {})?;
        assert_eq!(report.status, RebuildStatus::DisabledByEnv);
        assert_eq!(
            report.lines,
            ["[pto->cpp] skipped (PYPTO_REBUILD_FROM_PTO=0)"]
        );

        options.enabled = false;
        let report = rebuild_kernel_cpp_from_pto_with(&fx.dir, &options, &mut |_| {})?;
        assert_eq!(report.status, RebuildStatus::DisabledByCaller);
        assert_eq!(
            report.lines,
            ["[pto->cpp] skipped (rebuild_from_pto=False)"]
        );
        // The process-environment entry point, disabled, reads nothing.
        let report = rebuild_kernel_cpp_from_pto(&fx.dir, false)?;
        assert_eq!(
            report.lines,
            ["[pto->cpp] skipped (rebuild_from_pto=False)"]
        );
        assert_eq!(fx.ptoas_log(), "");
        Ok(())
    }

    #[test]
    fn next_levels_are_scanned_after_the_root() -> TestResult {
        let fx = Fixture::new()?;
        // The parent has no ptoas/: only the sub-builds are scanned.
        fx.unit("next_levels/rank1", "b", "kernel b 1\n", &[("aiv", "b")])?;
        fx.unit("next_levels/rank0", "a", "kernel a 1\n", &[("aic", "a")])?;
        std::fs::create_dir_all(fx.dir.join("next_levels/no_ptoas/kernels"))?;
        fx.edit_pto("next_levels/rank0", "a", "kernel a 7\n")?;
        fx.edit_pto("next_levels/rank1", "b", "kernel b 8\n")?;
        let report = fx.run()?;
        assert_eq!(
            report.lines,
            [
                "[pto->cpp] regenerating from next_levels/rank0/ptoas/a.pto",
                "[pto->cpp]   spliced -> next_levels/rank0/kernels/aic/a.cpp",
                "[pto->cpp] regenerating from next_levels/rank1/ptoas/b.pto",
                "[pto->cpp]   spliced -> next_levels/rank1/kernels/aiv/b.cpp",
                "[pto->cpp] updated 2 kernel cpp(s)",
            ]
        );
        assert!(read(&fx.dir.join("next_levels/rank1/kernels/aiv/b.cpp")).contains("out[0] = 8;"));
        Ok(())
    }

    #[test]
    fn no_ptoas_directory_is_silent() -> TestResult {
        let fx = Fixture::new()?;
        std::fs::create_dir_all(fx.dir.join("kernels/aiv"))?;
        let mut options = fx.options();
        // Even without ptoas: the scan comes first.
        options.env = RebuildEnv::default();
        let report = rebuild_kernel_cpp_from_pto_with(&fx.dir, &options, &mut |_| {})?;
        assert_eq!(report.status, RebuildStatus::NothingToScan);
        assert!(report.lines.is_empty());
        Ok(())
    }

    #[test]
    fn discovery_order_and_executable_bit() -> TestResult {
        let root = tempfile::tempdir()?;
        let r = root.path();
        let make = |rel: &str, mode: u32| -> io::Result<PathBuf> {
            let p = r.join(rel);
            std::fs::create_dir_all(p.parent().unwrap_or(r))?;
            std::fs::write(&p, "#!/bin/sh\n")?;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode))?;
            Ok(p)
        };
        let env = RebuildEnv {
            ptoas_root: Some(r.as_os_str().to_owned()),
            ..RebuildEnv::default()
        };
        let bin = make("bin/ptoas", 0o755)?;
        assert_eq!(find_ptoas(&env), Some(bin));
        let sh = make("ptoas.sh", 0o755)?;
        assert_eq!(find_ptoas(&env), Some(sh.clone()));
        make("ptoas", 0o644)?; // not executable: skipped
        assert_eq!(find_ptoas(&env), Some(sh));
        let top = make("ptoas", 0o755)?;
        assert_eq!(find_ptoas(&env), Some(top));
        std::fs::create_dir_all(r.join("dir_only/ptoas"))?; // a directory is no candidate
        let env = RebuildEnv {
            ptoas_root: Some(r.join("dir_only").into_os_string()),
            ..RebuildEnv::default()
        };
        assert_eq!(find_ptoas(&env), None);

        // PATH, in order; an empty PTOAS_ROOT counts as unset.
        let a = tempfile::tempdir()?;
        let path = std::env::join_paths([a.path(), r])?;
        let env = RebuildEnv {
            ptoas_root: Some("".into()),
            path: Some(path),
            ..RebuildEnv::default()
        };
        assert_eq!(find_ptoas(&env), Some(r.join("ptoas")));
        Ok(())
    }

    /// The spliced wrapper compiles against the project's headers (when a
    /// C++ compiler is installed).
    #[test]
    fn spliced_kernel_compiles() -> TestResult {
        let fx = Fixture::new()?;
        fx.unit("", "add", "kernel add 1.0\n", &[("aiv", "add")])?;
        let kernel = fx.dir.join("kernels/aiv/add.cpp");
        std::fs::write(
            &kernel,
            "// Kernel Function: add\n#include <stdint.h>\n#include \"tensor.h\"\n\n\
             // --- ptoas-generated code ---\nstatic __aicore__ void add() {}\n\
             // --- Kernel entry point ---\nextern \"C\" void kernel_entry(int64_t* args) {\n    \
             add(reinterpret_cast<float*>(args[0]));\n}\n",
        )?;
        fx.edit_pto("", "add", "helper h\nkernel add 2.0\n")?;
        fx.run()?;
        let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include/pto");
        let out = match Command::new("c++")
            .args(["-std=c++17", "-fsyntax-only"])
            .arg(format!("-I{}", include.display()))
            .arg(&kernel)
            .output()
        {
            Ok(out) => out,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        assert!(
            out.status.success(),
            "{}\n{}",
            read(&kernel),
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(())
    }
}
