//! The per-build-directory binary cache: compiled `.so` files kept next to
//! their sources, a compatibility stamp that says which runtime, compiler
//! and flags built them, and the lock that serializes builds of one
//! directory.
//!
//! This is PyPTO's `_binary_cache.py` contract adapted to this project. A
//! build directory holds:
//!
//! ```text
//! <dir>/cache/.binary_context.lock   persistent flock file (never deleted)
//! <dir>/cache/binary_context.json    the stamp (a BinaryContext), written only
//!                                    after a successful build
//! <dir>/cache/*.bin                  cached final binaries (PyPTO's names)
//! <dir>/kernels/{aic,aiv}/<func>.so  kernel binaries next to their sources
//! <dir>/orchestration/<stem>.so      the orchestration binary
//! ```
//!
//! # The build protocol
//!
//! A build of a directory runs under [`BinaryCacheLock`], so concurrent
//! replays of one directory serialize:
//!
//! 1. [`prepare`] compares the stamp with the current [`BinaryContext`]. If
//!    they are equal, the stamp is *unlinked* (a transaction is now open) and
//!    the binaries are reused; otherwise (no stamp, a malformed stamp, a
//!    mismatch, or an unknown identity) every binary and the stamp are
//!    deleted ([`invalidate`]).
//! 2. The caller compiles (through the global content-addressed cache of
//!    [`crate::Toolchain`]) and copies each object next to its source with
//!    [`install_binary`].
//! 3. Only after the whole build succeeded does [`record`] write the stamp.
//!    A build that fails or crashes leaves no stamp, so the next build
//!    invalidates: the cache fails closed.
//!
//! [`BinaryCacheBuild`] bundles the three steps: [`BinaryCacheBuild::begin`]
//! takes the lock and prepares, [`BinaryCacheBuild::commit`] records (when
//! the identity is known) and releases the lock.
//!
//! # Identity
//!
//! A key design decision: binaries are trusted only when the runtime that
//! built them is *exactly* identified. [`runtime_revision`] is this
//! project's version plus the git commit embedded at build time by
//! `build.rs`, in a dirty checkout followed by `.dirty-<hash>` of the diff
//! against it and the untracked files (so an edit gives a new identity and an
//! unchanged dirty tree keeps its own); a workspace that is not a git
//! checkout, or any failure to ask git, gives `None`. With no identity [`BinaryContext::current`] is
//! `None`, [`prepare`] always invalidates and no stamp is ever written, so
//! every replay rebuilds (cheaply: the global object cache still hits).
//!
//! Forced invalidation (`replay` with `recompile=True`, the default) is
//! [`invalidate_tree`]: the directory and every `next_levels/*/`
//! sub-build, each under its own lock, with PyPTO's printable summary line.
//!
//! This module never prints; it returns the lines a front end prints.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt as _;
use std::os::unix::io::AsRawFd as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::toolchain::Toolchain;

/// The schema number of the stamp ([`BinaryContext::schema`]).
pub const BINARY_CONTEXT_SCHEMA: u32 = 1;

/// The cache directory inside a build directory.
pub const CACHE_DIR: &str = "cache";

/// The stamp's file name inside [`CACHE_DIR`].
pub const STAMP_FILE: &str = "binary_context.json";

/// The lock file's name inside [`CACHE_DIR`].
pub const LOCK_FILE: &str = ".binary_context.lock";

/// The line a front end prints when forced invalidation is skipped
/// (`--no-recompile`, `recompile=False`).
pub const SKIPPED_INVALIDATION_MESSAGE: &str =
    "[cpp->.so] skipped forced invalidation; compatibility checks still apply (recompile=False)";

/// The git commit embedded by `build.rs` (with `.dirty-<hash>` in a dirty
/// tree), empty when unknown.
const EMBEDDED_GIT_REVISION: &str = env!("PTO_TOOLCHAIN_GIT_REVISION");

/// Errors of the binary cache. Each names the file involved and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BinaryCacheError {
    /// A file-system operation on the build directory failed.
    #[error("{action} `{}`: {source}; check that the build directory is writable", path.display())]
    Io {
        /// What was being attempted, e.g. "cannot remove cached binary".
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: io::Error,
    },

    /// The lock file could not be locked.
    #[error(
        "cannot lock `{}`: {source}; the build directory must be on a file system that supports flock (a local disk)",
        path.display()
    )]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: io::Error,
    },

    /// Copying a compiled object next to its source failed.
    #[error(
        "cannot install `{}` as `{}`: {source}; check that the directory exists and is writable",
        object.display(),
        dest.display()
    )]
    Install {
        /// The object in the global cache.
        object: PathBuf,
        /// Where it was to be installed.
        dest: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: io::Error,
    },
}

impl BinaryCacheError {
    fn io(action: &'static str, path: &Path, source: io::Error) -> Self {
        BinaryCacheError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Result alias of this module.
type Result<T, E = BinaryCacheError> = std::result::Result<T, E>;

/// This runtime's exact identity: `<package version>+<git commit>` (e.g.
/// `0.1.0+3f2a…`, or `0.1.0+3f2a….dirty-9c41…` when built from a dirty
/// checkout: the hash of its diff and untracked files), or `None` when git
/// could not be asked. `None` means cached binaries are never trusted.
pub fn runtime_revision() -> Option<&'static str> {
    static REVISION: OnceLock<Option<String>> = OnceLock::new();
    REVISION
        .get_or_init(|| {
            let commit = EMBEDDED_GIT_REVISION.trim();
            (!commit.is_empty()).then(|| format!("{}+{commit}", env!("CARGO_PKG_VERSION")))
        })
        .as_deref()
}

/// What the binaries of a build directory were built with; the content of
/// the stamp `cache/binary_context.json`. Two contexts are compatible iff
/// they are equal field by field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryContext {
    /// Stamp schema, [`BINARY_CONTEXT_SCHEMA`].
    pub schema: u32,
    /// The platform, e.g. `a2a3sim`.
    pub platform: String,
    /// The runtime name from `kernel_config.py`, e.g. `tensormap_and_ringbuffer`.
    pub runtime_name: String,
    /// [`runtime_revision`].
    pub runtime_revision: String,
    /// [`crate::header_identity`]: the PTO headers binaries compile against.
    pub header_identity: String,
    /// Hex SHA-256 of the compiler's `--version` text.
    pub compiler_identity: String,
    /// [`Toolchain::flags_hash`].
    pub flags_hash: String,
}

impl BinaryContext {
    /// The context of a build by `toolchain` for `platform` and
    /// `runtime_name`, or `None` when [`runtime_revision`] is unknown.
    pub fn current(platform: &str, runtime_name: &str, toolchain: &Toolchain) -> Option<Self> {
        let runtime_revision = runtime_revision()?;
        Some(BinaryContext {
            schema: BINARY_CONTEXT_SCHEMA,
            platform: platform.to_owned(),
            runtime_name: runtime_name.to_owned(),
            runtime_revision: runtime_revision.to_owned(),
            header_identity: crate::header_identity(),
            compiler_identity: pto_base::hash::sha256_hex(toolchain.compiler_identity().as_bytes()),
            flags_hash: toolchain.flags_hash(),
        })
    }

    /// The stamp as a JSON value (an object with one key per field).
    fn to_value(&self) -> serde_json::Value {
        // A BTreeMap serializes with sorted keys, like Python's
        // `json.dumps(sort_keys=True)`.
        let map: std::collections::BTreeMap<&str, serde_json::Value> = [
            ("compiler_identity", self.compiler_identity.clone().into()),
            ("flags_hash", self.flags_hash.clone().into()),
            ("header_identity", self.header_identity.clone().into()),
            ("platform", self.platform.clone().into()),
            ("runtime_name", self.runtime_name.clone().into()),
            ("runtime_revision", self.runtime_revision.clone().into()),
            ("schema", self.schema.into()),
        ]
        .into_iter()
        .collect();
        serde_json::Value::from(serde_json::Map::from_iter(
            map.into_iter().map(|(k, v)| (k.to_owned(), v)),
        ))
    }

    /// The stamp text: sorted keys, two-space indent, trailing newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.to_value()).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// Whether this process may write the binary cache of `dir`: `dir` and, when it exists,
/// `dir/cache` accept new files (`access(W_OK)`: false on a read-only mount even for root,
/// and without write permission). A build directory that is not writable is run from the
/// shared object cache, with nothing written next to its sources.
pub fn dir_writable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    let writable = |p: &Path| {
        let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
    };
    let cache = dir.join(CACHE_DIR);
    writable(dir) && (!cache.is_dir() || writable(&cache))
}

/// `<dir>/cache/binary_context.json`.
pub fn stamp_path(dir: &Path) -> PathBuf {
    dir.join(CACHE_DIR).join(STAMP_FILE)
}

/// `<dir>/cache/.binary_context.lock`.
pub fn lock_path(dir: &Path) -> PathBuf {
    dir.join(CACHE_DIR).join(LOCK_FILE)
}

/// Where the binary of `source` lives: the same path with extension `.so`
/// (`kernels/aiv/add.cpp` → `kernels/aiv/add.so`).
pub fn binary_path_for(source: &Path) -> PathBuf {
    source.with_extension("so")
}

/// An exclusive `flock` on `<dir>/cache/.binary_context.lock`, released on
/// drop. Concurrent holders of one directory (threads or processes)
/// serialize: [`BinaryCacheLock::acquire`] blocks until the lock is free.
/// The lock file is created if missing and never deleted (deleting it would
/// let two processes lock two different files).
#[derive(Debug)]
pub struct BinaryCacheLock {
    file: File,
    path: PathBuf,
}

impl BinaryCacheLock {
    /// Creates `<dir>/cache/` and the lock file if needed and blocks until
    /// the exclusive lock is held.
    pub fn acquire(dir: &Path) -> Result<Self> {
        let cache = dir.join(CACHE_DIR);
        std::fs::create_dir_all(&cache)
            .map_err(|e| BinaryCacheError::io("cannot create directory", &cache, e))?;
        let path = lock_path(dir);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .open(&path)
            .map_err(|e| BinaryCacheError::io("cannot open lock file", &path, e))?;
        loop {
            // SAFETY: `file` owns the descriptor and outlives the call;
            // flock has no other preconditions.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
            if rc == 0 {
                break;
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(BinaryCacheError::Lock { path, source: err });
            }
        }
        Ok(BinaryCacheLock { file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for BinaryCacheLock {
    fn drop(&mut self) {
        // Closing the descriptor releases the lock too; unlocking first makes
        // the release explicit. A failure here cannot be handled usefully.
        // SAFETY: the descriptor is still open (owned by `self.file`).
        let _ = unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Removes `path` if it exists; true if it was removed.
fn remove_if_exists(path: &Path, action: &'static str) -> Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(BinaryCacheError::io(action, path, e)),
    }
}

/// The entries of `dir` as `(path, is_dir)` without following symbolic links;
/// empty when `dir` does not exist.
fn list_dir(dir: &Path) -> Result<Vec<(PathBuf, bool)>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e)
            if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            return Ok(Vec::new())
        }
        Err(e) => return Err(BinaryCacheError::io("cannot read directory", dir, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| BinaryCacheError::io("cannot read directory", dir, e))?;
        let is_dir = entry
            .file_type()
            .map_err(|e| BinaryCacheError::io("cannot stat", &entry.path(), e))?
            .is_dir();
        out.push((entry.path(), is_dir));
    }
    out.sort();
    Ok(out)
}

fn has_extension(path: &Path, extensions: &[&str]) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| extensions.contains(&e))
}

/// Removes every `*.so` / `*.o` under `dir` (recursively, not following
/// symbolic links to directories); returns how many.
fn remove_binaries_under(dir: &Path) -> Result<usize> {
    let mut removed = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for (path, is_dir) in list_dir(&d)? {
            if is_dir {
                stack.push(path);
            } else if has_extension(&path, &["so", "o"])
                && remove_if_exists(&path, "cannot remove cached binary")?
            {
                removed += 1;
            }
        }
    }
    Ok(removed)
}

/// Deletes the stamp, `cache/*.bin`, `kernels/**/*.so|*.o` and
/// `orchestration/**/*.so|*.o` of one build directory (never a source, never
/// the lock file) and returns how many binaries were removed; the stamp is
/// not counted. Call it under [`BinaryCacheLock`].
pub fn invalidate(dir: &Path) -> Result<usize> {
    remove_if_exists(&stamp_path(dir), "cannot remove stamp")?;
    let mut removed = 0;
    for (path, is_dir) in list_dir(&dir.join(CACHE_DIR))? {
        if !is_dir
            && has_extension(&path, &["bin"])
            && remove_if_exists(&path, "cannot remove cached binary")?
        {
            removed += 1;
        }
    }
    removed += remove_binaries_under(&dir.join("kernels"))?;
    removed += remove_binaries_under(&dir.join("orchestration"))?;
    Ok(removed)
}

/// How many binaries [`invalidate_tree`] removed in one directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirInvalidation {
    /// The build directory (the root or a `next_levels/<name>/`).
    pub dir: PathBuf,
    /// Binaries removed there (the stamp is not counted).
    pub removed: usize,
}

/// The result of [`invalidate_tree`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeInvalidation {
    /// The root first, then each `next_levels/*/` in name order.
    pub dirs: Vec<DirInvalidation>,
}

impl TreeInvalidation {
    /// Binaries removed in all directories.
    pub fn total(&self) -> usize {
        self.dirs.iter().map(|d| d.removed).sum()
    }

    /// PyPTO's summary line: `[cpp->.so] invalidated N cached binary
    /// file(s); cpp will rebuild`, or `[cpp->.so] no cached binaries to
    /// invalidate` when nothing was removed.
    pub fn message(&self) -> String {
        match self.total() {
            0 => "[cpp->.so] no cached binaries to invalidate".to_owned(),
            n => format!("[cpp->.so] invalidated {n} cached binary file(s); cpp will rebuild"),
        }
    }
}

/// The `next_levels/*/` sub-directories of `dir`, sorted (symbolic links to
/// directories included, as Python's glob does).
fn next_level_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let next_levels = dir.join("next_levels");
    let mut out = Vec::new();
    for (path, is_dir) in list_dir(&next_levels)? {
        if is_dir || path.is_dir() {
            out.push(path);
        }
    }
    Ok(out)
}

/// Forced invalidation (replay's `recompile=True`): [`invalidate`] on `dir`
/// and on every `next_levels/*/`, each under its own [`BinaryCacheLock`].
pub fn invalidate_tree(dir: &Path) -> Result<TreeInvalidation> {
    let mut dirs = Vec::new();
    for d in std::iter::once(dir.to_path_buf()).chain(next_level_dirs(dir)?) {
        let _lock = BinaryCacheLock::acquire(&d)?;
        let removed = invalidate(&d)?;
        dirs.push(DirInvalidation { dir: d, removed });
    }
    Ok(TreeInvalidation { dirs })
}

/// What the stamp said when [`prepare`] looked at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StampState {
    /// The stamp equals the current context: binaries are reused.
    Matched,
    /// There was no stamp (never built, a failed build, or invalidated).
    Missing,
    /// The stamp could not be read or is not a JSON object.
    Malformed,
    /// The stamp describes a different context.
    Mismatched,
    /// The current identity is unknown ([`runtime_revision`] is `None`), so
    /// no stamp can be trusted.
    UnknownIdentity,
}

/// The result of [`prepare`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prepared {
    /// True when the existing binaries may be reused.
    pub reuse: bool,
    /// Binaries deleted (0 when reusing).
    pub invalidated: usize,
    /// Why.
    pub stamp: StampState,
}

/// Reads the stamp: `None` if absent, `Some(None)` if unreadable or not a
/// JSON object, else `Some(Some(value))`.
fn read_stamp(dir: &Path) -> Option<Option<serde_json::Value>> {
    match std::fs::read_to_string(stamp_path(dir)) {
        Ok(text) => Some(
            serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .filter(serde_json::Value::is_object),
        ),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(_) => Some(None),
    }
}

/// Step 5 of PyPTO's `compile_and_assemble`, under [`BinaryCacheLock`]:
/// when `current` is known and equal to the stamp, unlinks the stamp (the
/// build is now an open transaction: a crash before [`record`] leaves no
/// stamp) and reports `reuse`; otherwise invalidates every binary and the
/// stamp and reports how many binaries went.
pub fn prepare(dir: &Path, current: Option<&BinaryContext>) -> Result<Prepared> {
    let stamp = match (current, read_stamp(dir)) {
        (None, _) => StampState::UnknownIdentity,
        (Some(_), None) => StampState::Missing,
        (Some(_), Some(None)) => StampState::Malformed,
        (Some(ctx), Some(Some(value))) if value == ctx.to_value() => StampState::Matched,
        (Some(_), Some(Some(_))) => StampState::Mismatched,
    };
    if stamp == StampState::Matched {
        remove_if_exists(&stamp_path(dir), "cannot remove stamp")?;
        return Ok(Prepared {
            reuse: true,
            invalidated: 0,
            stamp,
        });
    }
    let invalidated = invalidate(dir)?;
    if invalidated > 0 {
        match current {
            None => tracing::warn!(
                "Could not determine the current runtime revision (not built from a git checkout); invalidated {invalidated} cached binary file(s) under {}",
                dir.display()
            ),
            Some(ctx) => tracing::info!(
                "Cached binaries under {} have no matching build context for runtime {}@{}, platform {}; invalidated {invalidated} file(s)",
                dir.display(),
                ctx.runtime_name,
                ctx.runtime_revision,
                ctx.platform
            ),
        }
    }
    Ok(Prepared {
        reuse: false,
        invalidated,
        stamp,
    })
}

/// Writes the stamp atomically ([`pto_base::fs::write_atomic`]). Call it only after a
/// successful build, under the same [`BinaryCacheLock`] as [`prepare`].
pub fn record(dir: &Path, context: &BinaryContext) -> Result<()> {
    let stamp = stamp_path(dir);
    pto_base::fs::write_atomic(&stamp, context.to_json().as_bytes())
        .map_err(|e| BinaryCacheError::io("cannot write stamp", &stamp, atomic_cause(e)))
}

/// The I/O error of a failed atomic write, with the step that failed in its text.
fn atomic_cause(e: pto_base::fs::AtomicWriteError) -> io::Error {
    io::Error::new(e.source.kind(), format!("{}: {}", e.step, e.source))
}

/// Copies `object` (usually from the global content cache) to `dest` (e.g.
/// `kernels/aiv/<func>.so`) atomically ([`pto_base::fs::copy_atomic`]): a process that has
/// the old `dest` loaded keeps its (unlinked) copy.
pub fn install_binary(object: &Path, dest: &Path) -> Result<()> {
    pto_base::fs::copy_atomic(object, dest).map_err(|e| BinaryCacheError::Install {
        object: object.to_path_buf(),
        dest: dest.to_path_buf(),
        source: atomic_cause(e),
    })
}

/// A build of one directory as a transaction: the lock, the result of
/// [`prepare`], and the context to [`record`] on success.
///
/// Dropping it without [`BinaryCacheBuild::commit`] (a failed build)
/// releases the lock and leaves no stamp.
#[derive(Debug)]
pub struct BinaryCacheBuild {
    dir: PathBuf,
    context: Option<BinaryContext>,
    prepared: Prepared,
    _lock: BinaryCacheLock,
}

impl BinaryCacheBuild {
    /// Takes the directory's lock (blocking) and runs [`prepare`].
    pub fn begin(dir: &Path, context: Option<BinaryContext>) -> Result<Self> {
        let lock = BinaryCacheLock::acquire(dir)?;
        let prepared = prepare(dir, context.as_ref())?;
        Ok(BinaryCacheBuild {
            dir: dir.to_path_buf(),
            context,
            prepared,
            _lock: lock,
        })
    }

    /// What [`prepare`] decided.
    pub fn prepared(&self) -> Prepared {
        self.prepared
    }

    /// True when existing binaries next to the sources may be loaded as is.
    pub fn reuse(&self) -> bool {
        self.prepared.reuse
    }

    /// The context this build will record, if known.
    pub fn context(&self) -> Option<&BinaryContext> {
        self.context.as_ref()
    }

    /// Ends a successful build: writes the stamp when the identity is known
    /// and releases the lock. Returns whether a stamp was written (never
    /// with an unknown identity).
    pub fn commit(self) -> Result<bool> {
        match &self.context {
            Some(ctx) => {
                record(&self.dir, ctx)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

    fn context(revision: &str) -> BinaryContext {
        BinaryContext {
            schema: BINARY_CONTEXT_SCHEMA,
            platform: "a2a3sim".into(),
            runtime_name: "tensormap_and_ringbuffer".into(),
            runtime_revision: revision.into(),
            header_identity: "h".repeat(64),
            compiler_identity: "c".repeat(64),
            flags_hash: "f".repeat(64),
        }
    }

    fn touch(path: &Path) -> io::Result<PathBuf> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, path.to_string_lossy().as_bytes())?;
        Ok(path.to_path_buf())
    }

    /// A build directory with sources and binaries; returns the binaries.
    fn populate(dir: &Path) -> io::Result<Vec<PathBuf>> {
        for src in [
            "kernels/aiv/add.cpp",
            "kernels/aic/mm.cpp",
            "orchestration/main.cpp",
            "ptoas/add.pto",
            "ptoas/add.cpp",
            "kernel_config.py",
        ] {
            touch(&dir.join(src))?;
        }
        [
            "kernels/aiv/add.so",
            "kernels/aic/mm.o",
            "kernels/aic/nested/deep.so",
            "orchestration/main.so",
            "cache/incore_0_aiv_add_a2a3sim.bin",
            "cache/orch_main.bin",
        ]
        .iter()
        .map(|p| touch(&dir.join(p)))
        .collect()
    }

    fn existing(dir: &Path, paths: &[&str]) -> Vec<String> {
        paths
            .iter()
            .filter(|p| dir.join(p).exists())
            .map(|p| p.to_string())
            .collect()
    }

    #[test]
    fn stamp_text_has_sorted_keys_and_two_space_indent() {
        let expected = format!(
            "{{\n  \"compiler_identity\": \"{c}\",\n  \"flags_hash\": \"{f}\",\n  \"header_identity\": \"{h}\",\n  \"platform\": \"a2a3sim\",\n  \"runtime_name\": \"tensormap_and_ringbuffer\",\n  \"runtime_revision\": \"0.1.0+abc\",\n  \"schema\": 1\n}}\n",
            c = "c".repeat(64),
            f = "f".repeat(64),
            h = "h".repeat(64)
        );
        assert_eq!(context("0.1.0+abc").to_json(), expected);
    }

    #[test]
    fn invalidate_removes_binaries_and_stamp_but_never_sources() -> TestResult {
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        let binaries = populate(d)?;
        record(d, &context("r1"))?;
        let _lock = BinaryCacheLock::acquire(d)?;
        // A symlinked directory is not followed: its target's binaries stay.
        let outside = tempfile::tempdir()?;
        touch(&outside.path().join("keep.so"))?;
        std::os::unix::fs::symlink(outside.path(), d.join("kernels/linked"))?;

        assert_eq!(invalidate(d)?, binaries.len());
        for b in &binaries {
            assert!(!b.exists(), "{} survived", b.display());
        }
        assert!(!stamp_path(d).exists());
        assert!(lock_path(d).exists(), "the lock file is never deleted");
        assert!(outside.path().join("keep.so").exists());
        let sources = [
            "kernels/aiv/add.cpp",
            "kernels/aic/mm.cpp",
            "orchestration/main.cpp",
            "ptoas/add.pto",
            "ptoas/add.cpp",
            "kernel_config.py",
        ];
        assert_eq!(existing(d, &sources), sources.to_vec());
        // Nothing left: a second pass removes nothing, stamp or not.
        assert_eq!(invalidate(d)?, 0);
        Ok(())
    }

    #[test]
    fn invalidate_of_an_empty_directory_is_zero() -> TestResult {
        let dir = tempfile::tempdir()?;
        assert_eq!(invalidate(dir.path())?, 0);
        assert_eq!(invalidate(&dir.path().join("missing"))?, 0);
        Ok(())
    }

    #[test]
    fn invalidate_tree_recurses_into_next_levels_with_messages() -> TestResult {
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        let root = populate(d)?.len();
        touch(&d.join("next_levels/b/kernels/aiv/x.so"))?;
        touch(&d.join("next_levels/b/kernels/aiv/x.cpp"))?;
        touch(&d.join("next_levels/a/orchestration/o.so"))?;
        touch(&d.join("next_levels/a/cache/k.bin"))?;
        touch(&d.join("next_levels/not_a_dir.so"))?;
        record(&d.join("next_levels/a"), &context("r"))?;

        let report = invalidate_tree(d)?;
        let counts: Vec<(PathBuf, usize)> = report
            .dirs
            .iter()
            .map(|r| (r.dir.clone(), r.removed))
            .collect();
        assert_eq!(
            counts,
            vec![
                (d.to_path_buf(), root),
                (d.join("next_levels/a"), 2),
                (d.join("next_levels/b"), 1),
            ]
        );
        assert_eq!(report.total(), root + 3);
        assert_eq!(
            report.message(),
            format!(
                "[cpp->.so] invalidated {} cached binary file(s); cpp will rebuild",
                root + 3
            )
        );
        assert!(d.join("next_levels/b/kernels/aiv/x.cpp").exists());
        assert!(d.join("next_levels/not_a_dir.so").exists());
        assert!(!stamp_path(&d.join("next_levels/a")).exists());
        assert!(lock_path(&d.join("next_levels/b")).exists());

        let again = invalidate_tree(d)?;
        assert_eq!(again.total(), 0);
        assert_eq!(
            again.message(),
            "[cpp->.so] no cached binaries to invalidate"
        );
        Ok(())
    }

    #[test]
    fn stamp_only_is_not_counted() -> TestResult {
        let dir = tempfile::tempdir()?;
        record(dir.path(), &context("r"))?;
        let report = invalidate_tree(dir.path())?;
        assert_eq!(report.total(), 0);
        assert!(!stamp_path(dir.path()).exists());
        Ok(())
    }

    #[test]
    fn matching_stamp_is_unlinked_and_binaries_reused() -> TestResult {
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        let binaries = populate(d)?;
        let ctx = context("0.1.0+aaaa");
        record(d, &ctx)?;
        let prepared = prepare(d, Some(&ctx))?;
        assert_eq!(
            prepared,
            Prepared {
                reuse: true,
                invalidated: 0,
                stamp: StampState::Matched
            }
        );
        assert!(!stamp_path(d).exists(), "an open transaction has no stamp");
        assert!(binaries.iter().all(|b| b.exists()));
        // The build "crashes": no record. The next prepare must invalidate.
        let next = prepare(d, Some(&ctx))?;
        assert_eq!(next.stamp, StampState::Missing);
        assert!(!next.reuse);
        assert_eq!(next.invalidated, binaries.len());
        Ok(())
    }

    #[test]
    fn stamp_of_another_runtime_revision_forces_invalidation() -> TestResult {
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        let binaries = populate(d)?;
        record(d, &context("0.1.0+old"))?;
        let prepared = prepare(d, Some(&context("0.1.0+new")))?;
        assert_eq!(
            prepared,
            Prepared {
                reuse: false,
                invalidated: binaries.len(),
                stamp: StampState::Mismatched
            }
        );
        assert!(binaries.iter().all(|b| !b.exists()));
        assert!(!stamp_path(d).exists());
        Ok(())
    }

    #[test]
    fn other_differences_mismatch_too() -> TestResult {
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        let base = context("r");
        let variants = [
            BinaryContext {
                platform: "a5sim".into(),
                ..base.clone()
            },
            BinaryContext {
                compiler_identity: "d".repeat(64),
                ..base.clone()
            },
            BinaryContext {
                flags_hash: "0".into(),
                ..base.clone()
            },
            BinaryContext {
                header_identity: "1".into(),
                ..base.clone()
            },
            BinaryContext {
                schema: 2,
                ..base.clone()
            },
        ];
        for v in &variants {
            record(d, &base)?;
            assert_eq!(prepare(d, Some(v))?.stamp, StampState::Mismatched, "{v:?}");
        }
        // An extra key in the stamp is a mismatch as well.
        let mut value = base.to_value();
        if let serde_json::Value::Object(map) = &mut value {
            map.insert("extra".into(), 1.into());
        }
        std::fs::write(stamp_path(d), serde_json::to_string(&value)?)?;
        assert_eq!(prepare(d, Some(&base))?.stamp, StampState::Mismatched);
        Ok(())
    }

    #[test]
    fn malformed_stamp_forces_invalidation() -> TestResult {
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        for text in ["{not json", "[1, 2]", ""] {
            let binaries = populate(d)?;
            std::fs::write(stamp_path(d), text)?;
            let prepared = prepare(d, Some(&context("r")))?;
            assert_eq!(prepared.stamp, StampState::Malformed, "{text:?}");
            assert_eq!(prepared.invalidated, binaries.len());
            assert!(!stamp_path(d).exists());
        }
        Ok(())
    }

    #[test]
    fn unknown_identity_always_invalidates_and_never_writes_a_stamp() -> TestResult {
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        let binaries = populate(d)?;
        // Even a stamp that would otherwise match is not trusted.
        record(d, &context("r"))?;
        for round in 0..2 {
            let build = BinaryCacheBuild::begin(d, None)?;
            assert_eq!(build.prepared().stamp, StampState::UnknownIdentity);
            assert!(!build.reuse());
            assert_eq!(
                build.prepared().invalidated,
                if round == 0 { binaries.len() } else { 0 }
            );
            assert!(build.context().is_none());
            assert!(!build.commit()?, "no stamp without an identity");
            assert!(!stamp_path(d).exists());
        }
        Ok(())
    }

    #[test]
    fn transaction_records_only_on_commit() -> TestResult {
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        let ctx = context("r");
        {
            let build = BinaryCacheBuild::begin(d, Some(ctx.clone()))?;
            assert_eq!(build.prepared().stamp, StampState::Missing);
            // Failed build: dropped without commit.
        }
        assert!(!stamp_path(d).exists());
        let build = BinaryCacheBuild::begin(d, Some(ctx.clone()))?;
        touch(&d.join("kernels/aiv/add.so"))?;
        assert!(build.commit()?);
        assert_eq!(std::fs::read_to_string(stamp_path(d))?, ctx.to_json());
        let build = BinaryCacheBuild::begin(d, Some(ctx))?;
        assert!(build.reuse());
        assert!(d.join("kernels/aiv/add.so").exists());
        Ok(())
    }

    #[test]
    fn second_thread_waits_for_the_lock() -> TestResult {
        let dir = tempfile::tempdir()?;
        let d = dir.path().to_path_buf();
        let held = BinaryCacheLock::acquire(&d)?;
        let acquired = Arc::new(AtomicBool::new(false));
        let waiter = {
            let acquired = Arc::clone(&acquired);
            let d = d.clone();
            std::thread::spawn(move || -> Result<()> {
                let _lock = BinaryCacheLock::acquire(&d)?;
                acquired.store(true, Ordering::SeqCst);
                Ok(())
            })
        };
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            !acquired.load(Ordering::SeqCst),
            "the second holder got the lock while the first held it"
        );
        drop(held);
        match waiter.join() {
            Ok(res) => res?,
            Err(_) => return Err("waiter thread panicked".into()),
        }
        assert!(acquired.load(Ordering::SeqCst));
        Ok(())
    }

    const CHILD_ENV: &str = "PTO_BINARY_CACHE_LOCK_CHILD_DIR";

    /// Runs only as the child of `second_process_waits_for_the_lock`: takes
    /// the lock, then writes a marker file. A no-op in a normal test run.
    #[test]
    fn lock_child_process() -> TestResult {
        let Some(dir) = std::env::var_os(CHILD_ENV) else {
            return Ok(());
        };
        let dir = PathBuf::from(dir);
        let _lock = BinaryCacheLock::acquire(&dir)?;
        std::fs::write(dir.join("child-acquired"), b"1")?;
        Ok(())
    }

    #[test]
    fn second_process_waits_for_the_lock() -> TestResult {
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        let marker = d.join("child-acquired");
        let held = BinaryCacheLock::acquire(d)?;
        let mut child = std::process::Command::new(std::env::current_exe()?)
            .args([
                "--exact",
                "binary_cache::tests::lock_child_process",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, d)
            .stdout(std::process::Stdio::null())
            .spawn()?;
        std::thread::sleep(Duration::from_millis(500));
        assert!(
            !marker.exists(),
            "the child process got the lock while the parent held it"
        );
        drop(held);
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if Instant::now() > deadline {
                child.kill()?;
                return Err("the child never got the lock".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success());
        assert!(marker.exists());
        Ok(())
    }

    #[test]
    fn install_binary_replaces_atomically() -> TestResult {
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        let object = touch(&d.join("objects/abc.so"))?;
        let source = touch(&d.join("kernels/aiv/add.cpp"))?;
        let dest = binary_path_for(&source);
        assert_eq!(dest, d.join("kernels/aiv/add.so"));
        std::fs::write(&dest, b"old")?;
        install_binary(&object, &dest)?;
        assert_eq!(std::fs::read(&dest)?, std::fs::read(&object)?);
        let mut names: Vec<String> = std::fs::read_dir(d.join("kernels/aiv"))?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<io::Result<_>>()?;
        names.sort();
        assert_eq!(names, ["add.cpp", "add.so"], "no temporary left behind");

        let err = install_binary(&d.join("objects/missing.so"), &dest)
            .err()
            .ok_or("installing a missing object succeeded")?;
        assert!(err.to_string().contains("missing.so"), "{err}");
        assert_eq!(std::fs::read(&dest)?, std::fs::read(&object)?);
        Ok(())
    }

    #[test]
    fn runtime_revision_is_version_plus_commit_or_unknown() {
        if let Some(rev) = runtime_revision() {
            let (version, commit) = rev.split_once('+').unwrap_or_default();
            assert_eq!(version, env!("CARGO_PKG_VERSION"));
            let (commit, dirty) = match commit.split_once(".dirty-") {
                Some((commit, dirty)) => (commit, Some(dirty)),
                None => (commit, None),
            };
            assert!(
                commit.len() >= 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
                "{rev}"
            );
            if let Some(dirty) = dirty {
                assert!(
                    dirty.len() == 16 && dirty.bytes().all(|b| b.is_ascii_hexdigit()),
                    "{rev}"
                );
            }
        }
    }

    #[test]
    fn current_context_follows_the_revision() -> TestResult {
        let cache = tempfile::tempdir()?;
        let toolchain = Toolchain::discover(cache.path())?;
        let ctx = BinaryContext::current("a2a3sim", "tensormap_and_ringbuffer", &toolchain);
        assert_eq!(ctx.is_some(), runtime_revision().is_some());
        if let Some(ctx) = ctx {
            assert_eq!(ctx.schema, BINARY_CONTEXT_SCHEMA);
            assert_eq!(ctx.compiler_identity.len(), 64);
            assert_eq!(ctx.flags_hash, toolchain.flags_hash());
            assert_eq!(ctx.header_identity, crate::header_identity());
        }
        // The flags hash does not depend on where the cache lives.
        let other = tempfile::tempdir()?;
        let moved = Toolchain::discover(other.path())?;
        assert_eq!(moved.flags_hash(), toolchain.flags_hash());
        Ok(())
    }
}
