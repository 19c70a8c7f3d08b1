//! Compiler discovery, compile flags and cached compilation.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::depfile;
use crate::error::{Result, ToolchainError};
use crate::fsutil::{self, TempPath};
use crate::generation::Generation;
use crate::headers;
use crate::manifest::{Entry, Manifest};
use pto_base::hash::KeyHasher;

mod pch;

/// Version of the cache key derivation and layout. Bump it whenever the
/// meaning of a key changes, so old entries are never misread.
const CACHE_FORMAT: &str = "pto-toolchain-cache-v1";

/// Which simulated AI core a kernel targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoreKind {
    /// The cube (matrix) core; kernels are compiled with `-D__DAV_CUBE__`.
    Aic,
    /// The vector core; kernels are compiled with `-D__DAV_VEC__`.
    Aiv,
}

/// What a compilation unit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnitKind {
    /// A host-side orchestration function.
    Orchestration,
    /// A kernel for the given core kind.
    Kernel(CoreKind),
}

/// One C++ source file to compile into a shared object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileUnit {
    /// The `.cpp` file.
    pub source: PathBuf,
    /// Orchestration or kernel (decides the core-specific defines).
    pub kind: UnitKind,
    /// Additional `-I` directories, searched after the PTO headers.
    pub extra_include_dirs: Vec<PathBuf>,
    /// Additional `-D` macro definitions (`NAME` or `NAME=VALUE`), e.g. `PTO_ARCH_A5`.
    pub defines: Vec<String>,
    /// The Simpler generation the source is written against (decides the include roots).
    pub generation: Generation,
}

impl CompileUnit {
    /// A unit with no extra include directories.
    pub fn new(source: impl Into<PathBuf>, kind: UnitKind) -> Self {
        CompileUnit {
            source: source.into(),
            kind,
            extra_include_dirs: Vec::new(),
            defines: Vec::new(),
            generation: Generation::default(),
        }
    }

    /// Sets the Simpler generation (builder style).
    #[must_use]
    pub fn with_generation(mut self, generation: Generation) -> Self {
        self.generation = generation;
        self
    }

    /// Adds a `-D` definition (builder style).
    #[must_use]
    pub fn with_define(mut self, define: impl Into<String>) -> Self {
        self.defines.push(define.into());
        self
    }

    /// Adds an extra `-I` directory (builder style).
    #[must_use]
    pub fn with_include_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.extra_include_dirs.push(dir.into());
        self
    }
}

/// The result of a successful [`Toolchain::compile`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledObject {
    /// The shared object, `<cache_root>/objects/<key>.so`. Never rewritten
    /// in place, so it stays valid while loaded.
    pub so_path: PathBuf,
    /// Whether the object came from the cache without running the compiler.
    pub cache_hit: bool,
    /// The object key (hex SHA-256), also the file stem of `so_path`.
    pub key: String,
    /// Every file the compile read besides the source (headers, absolute paths), from the
    /// compiler's dependency output; system headers excluded.
    pub deps: Vec<PathBuf>,
    /// `(path, sha256)` of what the object was built from: the source as the unit names it,
    /// with the hash of the bytes compiled (not of the file as it is later), then every
    /// header with its hash as checked against the compile.
    pub inputs: Vec<(PathBuf, String)>,
    /// Whether the inputs stayed as hashed for the whole compile. `false`: a source or
    /// header changed while it ran, so `inputs` may not describe the object and a record of
    /// it must not be trusted later (the object is not cached either).
    pub stable: bool,
}

/// A C++ compiler plus a content-addressed object cache.
///
/// Cheap to share across threads (`&Toolchain` is all [`Toolchain::compile`]
/// needs); several processes may use the same cache root concurrently.
#[derive(Debug, Clone)]
pub struct Toolchain {
    compiler: PathBuf,
    compiler_args: Vec<String>,
    compiler_identity: String,
    gcc_flags: bool,
    cache_root: PathBuf,
    include_root: PathBuf,
    header_identity: String,
}

/// The default cache root: `$PTO_CACHE_DIR`, else `$XDG_CACHE_HOME/pto`,
/// else `$HOME/.cache/pto`, else `<temp dir>/pto-cache`. Empty variables and
/// a relative `XDG_CACHE_HOME` are ignored.
pub fn default_cache_root() -> PathBuf {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("PTO_CACHE_DIR") {
        return dir;
    }
    if let Some(xdg) = var("XDG_CACHE_HOME").filter(|p| p.is_absolute()) {
        return xdg.join("pto");
    }
    if let Some(home) = var("HOME") {
        return home.join(".cache").join("pto");
    }
    std::env::temp_dir().join("pto-cache")
}

impl Toolchain {
    /// Finds the C++ compiler and prepares `cache_root`.
    ///
    /// The compiler is `$CXX` if set (split on whitespace, so a launcher such
    /// as `ccache g++` works), else the first of `c++`, `g++`, `clang++` on
    /// `PATH`. The embedded PTO headers are materialized under `cache_root`.
    pub fn discover(cache_root: &Path) -> Result<Toolchain> {
        let cxx = std::env::var_os("CXX").filter(|v| !v.is_empty());
        let (compiler, args) = match cxx {
            Some(cxx) => match cxx.to_str() {
                Some(s) => {
                    let mut words = s.split_whitespace().map(str::to_owned);
                    let program = words.next().ok_or(ToolchainError::NoCompiler)?;
                    (PathBuf::from(program), words.collect())
                }
                None => (PathBuf::from(cxx), Vec::new()),
            },
            None => {
                let found = ["c++", "g++", "clang++"]
                    .iter()
                    .find_map(|name| find_in_path(name));
                (found.ok_or(ToolchainError::NoCompiler)?, Vec::new())
            }
        };
        Self::with_compiler_args(compiler, args, cache_root)
    }

    /// Uses an explicit compiler (path or name on `PATH`) instead of
    /// discovering one.
    pub fn with_compiler(compiler: impl Into<PathBuf>, cache_root: &Path) -> Result<Toolchain> {
        Self::with_compiler_args(compiler.into(), Vec::new(), cache_root)
    }

    fn with_compiler_args(
        compiler: PathBuf,
        compiler_args: Vec<String>,
        cache_root: &Path,
    ) -> Result<Toolchain> {
        let mut version = Command::new(&compiler);
        version.args(&compiler_args).arg("--version");
        let output = output_of(&mut version).map_err(|source| ToolchainError::Spawn {
            program: compiler.clone(),
            source,
        })?;
        if !output.status.success() {
            return Err(ToolchainError::CompilerIdentity {
                program: compiler,
                status: output.status.to_string(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            });
        }
        let compiler_identity = String::from_utf8_lossy(&output.stdout).into_owned();
        let gcc_flags = !compiler_identity.contains("clang");
        let cache_root = std::path::absolute(cache_root)
            .map_err(|e| ToolchainError::io("cannot resolve cache directory", cache_root, e))?;
        let include_root = headers::materialize_headers(&cache_root)?;
        sweep_stale_temporaries(&cache_root.join("objects"), &include_root);
        let toolchain = Toolchain {
            compiler,
            compiler_args,
            compiler_identity,
            gcc_flags,
            cache_root,
            include_root,
            header_identity: headers::header_identity(),
        };
        tracing::debug!(
            compiler = %toolchain.compiler.display(),
            version = toolchain.compiler_identity.lines().next().unwrap_or(""),
            cache = %toolchain.cache_root.display(),
            "C++ toolchain ready"
        );
        Ok(toolchain)
    }

    /// The compiler program.
    pub fn compiler(&self) -> &Path {
        &self.compiler
    }

    /// The compiler's `--version` output, hashed into every cache key.
    pub fn compiler_identity(&self) -> &str {
        &self.compiler_identity
    }

    /// The (absolute) cache root.
    pub fn cache_root(&self) -> &Path {
        &self.cache_root
    }

    /// The materialized runtime include directory (`tensor.h`, `pto_orchestration_api.h`,
    /// ...; passed as the first `-I`).
    pub fn include_dir(&self) -> PathBuf {
        self.include_root.join(headers::RUNTIME_INCLUDE)
    }

    /// The materialized PTO-ISA include directory (`<pto/pto-inst.hpp>`; the second `-I`).
    pub fn isa_include_dir(&self) -> PathBuf {
        self.include_root.join(headers::ISA_INCLUDE)
    }

    /// Where compiled objects are stored: `<cache_root>/objects`.
    pub fn objects_dir(&self) -> PathBuf {
        self.cache_root.join("objects")
    }

    /// A content-addressed copy of an existing shared object (`objects/adopted-<hash>.so`),
    /// so that loading it never returns a stale library that the process loaded earlier
    /// from the same path.
    pub fn adopt_object(&self, path: &Path) -> Result<PathBuf> {
        let bytes = std::fs::read(path).map_err(|e| ToolchainError::io("cannot read", path, e))?;
        let dir = self.objects_dir();
        let dest = dir.join(format!(
            "adopted-{}.so",
            &pto_base::hash::sha256_hex(&bytes)[..32]
        ));
        if !dest.is_file() {
            fsutil::write_atomic(&dest, &bytes)?;
        }
        Ok(dest)
    }

    /// The compiler flags for `unit`, excluding the source, output and
    /// dependency-file arguments:
    /// `-std=c++17 -O2 -fPIC -shared -Wl,-z,defs -fno-gnu-unique -pthread -D__CPU_SIM
    /// -DPTO_CPU_SIM [-D__DAV_CUBE__ | -D__DAV_VEC__] [-D__aicore__=]
    /// [-I<2026-09 include_dir>] -I<include_dir> -I<isa_include_dir>
    /// [-I<extra dir>...]`. Extra directories are made absolute.
    /// (`-fno-gnu-unique` is omitted for clang, which rejects it.)
    pub fn flags(&self, unit: &CompileUnit) -> Vec<String> {
        self.args(unit, self.include_root.as_os_str(), &absolute_dirs(unit))
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// Hex SHA-256 identifying the flags this toolchain passes, independent
    /// of where the cache lives: the launcher arguments (`$CXX` words after
    /// the program) and [`Toolchain::flags`] of an orchestration, an AIC and
    /// an AIV unit with no extra include directories, the include directory
    /// replaced by [`crate::header_identity`]. Per-unit extra include
    /// directories are not covered.
    pub fn flags_hash(&self) -> String {
        let mut h = KeyHasher::new("pto-toolchain-flags-v1");
        h.field(&(self.compiler_args.len() as u64).to_le_bytes());
        for a in &self.compiler_args {
            h.field(a.as_bytes());
        }
        for kind in [
            UnitKind::Orchestration,
            UnitKind::Kernel(CoreKind::Aic),
            UnitKind::Kernel(CoreKind::Aiv),
        ] {
            let unit = CompileUnit::new(PathBuf::new(), kind);
            let flags = self.args(&unit, OsStr::new(&self.header_identity), &[]);
            h.field(&(flags.len() as u64).to_le_bytes());
            for f in &flags {
                h.field(f.as_encoded_bytes());
            }
        }
        h.finish()
    }

    fn args(
        &self,
        unit: &CompileUnit,
        include_root: &OsStr,
        extra_dirs: &[PathBuf],
    ) -> Vec<OsString> {
        // `-z defs`: a symbol no library provides is a link error naming the source, not a
        // load error naming a cache object.
        let mut args: Vec<OsString> = ["-std=c++17", "-O2", "-fPIC", "-shared", "-Wl,-z,defs"]
            .iter()
            .map(OsString::from)
            .collect();
        if self.gcc_flags {
            args.push("-fno-gnu-unique".into());
        }
        args.extend(
            ["-pthread", "-D__CPU_SIM", "-DPTO_CPU_SIM"]
                .iter()
                .map(OsString::from),
        );
        match unit.kind {
            UnitKind::Orchestration => {}
            UnitKind::Kernel(CoreKind::Aic) => args.push("-D__DAV_CUBE__".into()),
            UnitKind::Kernel(CoreKind::Aiv) => args.push("-D__DAV_VEC__".into()),
        }
        if matches!(unit.kind, UnitKind::Kernel(_)) {
            // The device compiler knows `__aicore__`; kernels written for it guard their
            // fallback (`#ifndef __aicore__` / `#define __aicore__ [aicore]`) before any
            // include, so the simulator's empty definition must come from the command line.
            args.push("-D__aicore__=".into());
        }
        for d in &unit.defines {
            args.push(format!("-D{d}").into());
        }
        let roots = unit.generation.include_subdirs().iter();
        for sub in roots.chain(&[headers::ISA_INCLUDE]) {
            let mut flag = OsString::from("-I");
            flag.push(include_root);
            flag.push("/");
            flag.push(sub);
            args.push(flag);
        }
        for dir in extra_dirs {
            let mut flag = OsString::from("-I");
            flag.push(dir);
            args.push(flag);
        }
        args
    }

    /// Compiles several units, at most `available_parallelism()` at a time.
    /// Results are in input order; one failure does not stop the others.
    pub fn compile_all(&self, units: &[CompileUnit]) -> Vec<Result<CompiledObject>> {
        let workers = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(units.len());
        if workers <= 1 {
            return units.iter().map(|u| self.compile(u)).collect();
        }
        let next = AtomicUsize::new(0);
        let mut slots: Vec<Option<Result<CompiledObject>>> = units.iter().map(|_| None).collect();
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    s.spawn(|| {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(unit) = units.get(i) else { break };
                            done.push((i, self.compile(unit)));
                        }
                        done
                    })
                })
                .collect();
            for handle in handles {
                match handle.join() {
                    Ok(done) => {
                        for (i, r) in done {
                            slots[i] = Some(r);
                        }
                    }
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        });
        slots
            .into_iter()
            .zip(units)
            .map(|(slot, unit)| slot.unwrap_or_else(|| self.compile(unit)))
            .collect()
    }

    /// Compiles `unit` to a shared object, or returns the cached one.
    ///
    /// The cache works like ccache's direct mode. A *manifest key* hashes the
    /// cache format, compiler identity, flags (with the include directory
    /// replaced by [`crate::header_identity`] and extra directories
    /// canonicalized), the source file name and content, and the source's
    /// directory. The manifest remembers, for recent compiles, every
    /// non-system header read and its content hash; if all of one entry's
    /// headers still hash the same and its object exists, that object is
    /// returned without running the compiler. The object key additionally
    /// covers the header hashes but not the source directory, so identical
    /// sources with identical headers share one object file.
    pub fn compile(&self, unit: &CompileUnit) -> Result<CompiledObject> {
        let source_err = |source| ToolchainError::Source {
            path: unit.source.clone(),
            source,
        };
        let source = std::fs::canonicalize(&unit.source).map_err(source_err)?;
        let content = std::fs::read(&source).map_err(source_err)?;
        let source_dir = source.parent().unwrap_or(Path::new("/"));

        let content_key = self.content_key(unit, &source, &content);
        let manifest_key = {
            let mut h = KeyHasher::new(CACHE_FORMAT);
            h.field(b"manifest").field(content_key.as_bytes());
            h.field(source_dir.as_os_str().as_encoded_bytes());
            h.finish()
        };

        let objects = self.objects_dir();
        let manifests = objects.join("manifests");
        let tmp_dir = objects.join("tmp");
        fsutil::create_dir_all(&manifests)?;
        fsutil::create_dir_all(&tmp_dir)?;
        let manifest_path = manifests.join(format!("{manifest_key}.txt"));

        if let Some(hit) = cached_object(unit, &content, &objects, &manifest_path) {
            return Ok(hit);
        }
        tracing::debug!(source = %unit.source.display(), manifest = %manifest_key, "cache miss");
        tracing::info!("compiling {}", unit.source.display());
        let _notice = crate::progress::announce(unit);

        let flags = self.args(unit, self.include_root.as_os_str(), &absolute_dirs(unit));
        let before = self.snapshot_headers(&flags, &tmp_dir, &source)?;
        let pch_args = pch::args(self, unit.kind, &content, &flags);
        let (tmp_so, dep_file) =
            self.run_compile(unit, [flags, pch_args.clone()].concat(), &tmp_dir, &source)?;
        // A compile from the precompiled header lists none of the headers it holds: the
        // dependency-only run, which read them all, lists what the plain compile would.
        let dep_file = match before {
            Some((_, ref pre_deps)) if !pch_args.is_empty() => pre_deps,
            _ => &dep_file,
        };
        let before = before.as_ref().map(|(hashes, _)| hashes);
        let (deps, consistent) = self.hash_deps(dep_file, &source, &content, before)?;
        let object_key = object_key(&content_key, &deps);
        if !consistent {
            return keep_uncached(unit, tmp_so, &objects, object_key, deps, &content);
        }
        store_cached(
            unit,
            tmp_so,
            &objects,
            &manifest_path,
            object_key,
            deps,
            &content,
        )
    }

    /// Hashes every header `source` includes, by a dependency-only compile run before
    /// the real one: an entry is only recorded if every header the compiler read is
    /// unchanged afterwards, so a header edited mid-compile can never produce a stale
    /// entry. The hashes come with the dependency file the run wrote. `None` when that run
    /// fails (the real compile reports the error).
    fn snapshot_headers(
        &self,
        flags: &[OsString],
        tmp_dir: &Path,
        source: &Path,
    ) -> Result<Option<(HashMap<PathBuf, String>, TempPath)>> {
        let pre_deps = TempPath::new(tmp_dir.join(fsutil::unique_name("pre-", ".d")));
        let mut args = flags.to_vec();
        args.extend([
            "-MM".into(),
            "-MF".into(),
            pre_deps.path().into(),
            source.to_path_buf().into(),
        ]);
        match self.run(&args) {
            Ok(out) if out.status.success() => {
                Ok(std::fs::read_to_string(pre_deps.path()).ok().map(|text| {
                    let hashes = self
                        .deps(&text, source)
                        .into_iter()
                        .filter_map(|p| hash_file(&p).map(|h| (p, h)))
                        .collect();
                    (hashes, pre_deps)
                }))
            }
            Ok(_) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The real compile of `source` with `flags`: the object and the dependency file it
    /// wrote, both temporary. Compiler output on success is logged as a warning.
    fn run_compile(
        &self,
        unit: &CompileUnit,
        flags: Vec<OsString>,
        tmp_dir: &Path,
        source: &Path,
    ) -> Result<(TempPath, TempPath)> {
        let tmp_so = TempPath::new(tmp_dir.join(fsutil::unique_name("obj-", ".so")));
        let dep_file = TempPath::new(tmp_dir.join(fsutil::unique_name("dep-", ".d")));
        let mut args = flags;
        args.extend([
            "-MMD".into(),
            "-MF".into(),
            dep_file.path().into(),
            "-o".into(),
            tmp_so.path().into(),
            source.to_path_buf().into(),
        ]);
        let out = self.run(&args)?;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if !out.status.success() {
            return Err(ToolchainError::Compile {
                source_file: unit.source.clone(),
                stderr,
            });
        }
        if !stderr.trim().is_empty() {
            tracing::warn!(
                "compiler output for {}:\n{}",
                unit.source.display(),
                stderr.trim_end()
            );
        }
        Ok((tmp_so, dep_file))
    }

    /// Hashes what the compiler actually depended on (the headers `dep_file` lists);
    /// the flag is true when they match the `before` snapshot and the source still
    /// holds `content` (what was hashed into the key).
    fn hash_deps(
        &self,
        dep_file: &TempPath,
        source: &Path,
        content: &[u8],
        before: Option<&HashMap<PathBuf, String>>,
    ) -> Result<(Vec<(PathBuf, String)>, bool)> {
        let dep_text = std::fs::read_to_string(dep_file.path())
            .map_err(|e| ToolchainError::io("cannot read dependency file", dep_file.path(), e))?;
        let mut deps = Vec::new();
        let mut consistent =
            before.is_some() && std::fs::read(source).ok().as_deref() == Some(content);
        for path in self.deps(&dep_text, source) {
            match hash_file(&path) {
                Some(h) => {
                    consistent &= before.and_then(|b| b.get(&path)) == Some(&h);
                    deps.push((path, h));
                }
                None => consistent = false,
            }
        }
        Ok((deps, consistent))
    }

    /// Hash of everything that determines the object except header contents
    /// and the source's location.
    fn content_key(&self, unit: &CompileUnit, source: &Path, content: &[u8]) -> String {
        let canonical_extra: Vec<PathBuf> = absolute_dirs(unit)
            .into_iter()
            .map(|d| std::fs::canonicalize(&d).unwrap_or(d))
            .collect();
        let key_flags = self.args(unit, OsStr::new(&self.header_identity), &canonical_extra);
        let mut h = KeyHasher::new(CACHE_FORMAT);
        h.field(b"content").field(self.compiler_identity.as_bytes());
        h.field(&(self.compiler_args.len() as u64).to_le_bytes());
        for a in &self.compiler_args {
            h.field(a.as_bytes());
        }
        h.field(&(key_flags.len() as u64).to_le_bytes());
        for f in &key_flags {
            h.field(f.as_encoded_bytes());
        }
        h.field(
            source
                .file_name()
                .map(OsStr::as_encoded_bytes)
                .unwrap_or_default(),
        );
        h.field(content);
        h.finish()
    }

    /// Prerequisites from a dependency file, absolute, without the source.
    fn deps(&self, depfile_text: &str, source: &Path) -> Vec<PathBuf> {
        depfile::parse_prerequisites(depfile_text)
            .into_iter()
            .filter_map(|p| std::path::absolute(&p).ok())
            .filter(|p| p != source)
            .collect()
    }

    fn run(&self, args: &[OsString]) -> Result<Output> {
        let mut cmd = Command::new(&self.compiler);
        cmd.args(&self.compiler_args).args(args);
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::process::CommandExt as _;
            // A compiler never outlives the thread that waits for it: if `pto` is killed,
            // the kernel kills its compilers too (no orphan keeps writing temp files).
            // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                    Ok(())
                });
            }
        }
        output_of(&mut cmd).map_err(|source| ToolchainError::Spawn {
            program: self.compiler.clone(),
            source,
        })
    }
}

/// How often [`spawn_retrying`] tries an executable the kernel reports busy.
const BUSY_TRIES: u32 = 20;

/// Starts `cmd` ([`Command::spawn`]), trying again for a while when the executable is busy
/// (`ETXTBSY`): the way the toolchain starts the compilers and ptoas. A wrapper written
/// just before by this process (a test's, or a user's tool that generates one) is busy
/// while any child forked meanwhile by another thread still holds its write descriptor,
/// until that child execs: the condition lasts microseconds, so a short wait is the fix,
/// not an error.
pub(crate) fn spawn_retrying(cmd: &mut Command) -> std::io::Result<Child> {
    let mut tries = 1;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < BUSY_TRIES => {
                tracing::debug!(tries, "executable busy (ETXTBSY), trying again");
                std::thread::sleep(std::time::Duration::from_millis(u64::from(tries)));
                tries += 1;
            }
            result => return result,
        }
    }
}

/// Runs `cmd` to completion with its output captured and no input, as [`Command::output`]
/// does, started by [`spawn_retrying`].
fn output_of(cmd: &mut Command) -> std::io::Result<Output> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    spawn_retrying(cmd)?.wait_with_output()
}

/// The cached object for `unit` if the manifest at `manifest_path` has an entry whose
/// object exists and whose headers all still hash the same.
fn cached_object(
    unit: &CompileUnit,
    content: &[u8],
    objects: &Path,
    manifest_path: &Path,
) -> Option<CompiledObject> {
    let mut hashes = HashCache::default();
    for entry in Manifest::load(manifest_path).entries {
        let so_path = objects.join(format!("{}.so", entry.object_key));
        if so_path.is_file() && entry.deps.iter().all(|(p, h)| hashes.get(p) == Some(h)) {
            tracing::debug!(source = %unit.source.display(), key = %entry.object_key, "cache hit");
            let mut inputs = vec![(unit.source.clone(), pto_base::hash::sha256_hex(content))];
            inputs.extend(entry.deps.iter().cloned());
            return Some(CompiledObject {
                so_path,
                cache_hit: true,
                key: entry.object_key,
                deps: entry.deps.iter().map(|(p, _)| p.clone()).collect(),
                inputs,
                stable: true,
            });
        }
    }
    None
}

/// The object key: the content key and the hashes of the headers the compile read.
fn object_key(content_key: &str, deps: &[(PathBuf, String)]) -> String {
    let mut h = KeyHasher::new(CACHE_FORMAT);
    h.field(b"object").field(content_key.as_bytes());
    h.field(&(deps.len() as u64).to_le_bytes());
    for (_, hash) in deps {
        h.field(hash.as_bytes());
    }
    h.finish()
}

/// The inputs of a compile: the source with the hash of `content`, then the headers.
fn compile_inputs(
    unit: &CompileUnit,
    content: &[u8],
    deps: &[(PathBuf, String)],
) -> Vec<(PathBuf, String)> {
    let mut inputs = vec![(unit.source.clone(), pto_base::hash::sha256_hex(content))];
    inputs.extend(deps.iter().cloned());
    inputs
}

/// Inputs changed while compiling: the object is valid for this call but must not be
/// found by future lookups, so it is kept under a unique name outside the cache.
fn keep_uncached(
    unit: &CompileUnit,
    mut tmp_so: TempPath,
    objects: &Path,
    object_key: String,
    deps: Vec<(PathBuf, String)>,
    content: &[u8],
) -> Result<CompiledObject> {
    tracing::debug!(source = %unit.source.display(), "inputs changed during compile; not caching");
    let so_path = objects.join(fsutil::unique_name("uncached-", ".so"));
    std::fs::rename(tmp_so.path(), &so_path)
        .map_err(|e| ToolchainError::io("cannot rename into", &so_path, e))?;
    tmp_so.disarm();
    let inputs = compile_inputs(unit, content, &deps);
    Ok(CompiledObject {
        so_path,
        cache_hit: false,
        key: object_key,
        deps: deps.iter().map(|(p, _)| p.clone()).collect(),
        inputs,
        stable: false,
    })
}

/// Moves the object into the cache under `object_key` and records its headers in the
/// manifest at `manifest_path`.
fn store_cached(
    unit: &CompileUnit,
    mut tmp_so: TempPath,
    objects: &Path,
    manifest_path: &Path,
    object_key: String,
    deps: Vec<(PathBuf, String)>,
    content: &[u8],
) -> Result<CompiledObject> {
    let so_path = objects.join(format!("{object_key}.so"));
    if !so_path.is_file() {
        // Atomic: a concurrent compile of the same unit renames an
        // equivalent object; either one is complete.
        std::fs::rename(tmp_so.path(), &so_path)
            .map_err(|e| ToolchainError::io("cannot rename into", &so_path, e))?;
        tmp_so.disarm();
    }

    // Re-load right before writing to keep entries other processes added.
    let mut manifest = Manifest::load(manifest_path);
    let dep_paths = deps.iter().map(|(p, _)| p.clone()).collect();
    let inputs = compile_inputs(unit, content, &deps);
    manifest.insert(Entry {
        object_key: object_key.clone(),
        deps,
    });
    match manifest.serialize() {
        Some(text) => fsutil::write_atomic(manifest_path, text.as_bytes())?,
        None => {
            tracing::debug!(source = %unit.source.display(), "dependency path not representable; not caching")
        }
    }
    tracing::debug!(source = %unit.source.display(), key = %object_key, "cached object");
    Ok(CompiledObject {
        so_path,
        cache_hit: false,
        key: object_key,
        deps: dep_paths,
        inputs,
        stable: true,
    })
}

/// Memoized content hashes for one lookup (`None`: unreadable).
#[derive(Default)]
struct HashCache(HashMap<PathBuf, Option<String>>);

impl HashCache {
    fn get(&mut self, path: &Path) -> Option<&String> {
        self.0
            .entry(path.to_path_buf())
            .or_insert_with(|| hash_file(path))
            .as_ref()
    }
}

fn hash_file(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|data| pto_base::hash::sha256_hex(&data))
}

fn absolute_dirs(unit: &CompileUnit) -> Vec<PathBuf> {
    unit.extra_include_dirs
        .iter()
        .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone()))
        .collect()
}

/// Temporaries older than this in the object cache belong to a run that was killed.
const STALE_TEMPORARY: std::time::Duration = std::time::Duration::from_secs(3600);

/// Removes compiler outputs, adoption copies and precompiled headers that a killed run left
/// half-written (`objects/tmp/*`, `objects/.adopt-*.tmp`, the precompiled header's
/// temporaries) once they are an hour old.
fn sweep_stale_temporaries(objects: &Path, include_root: &Path) {
    let stale = |p: &Path| fsutil::older_than(p, STALE_TEMPORARY);
    for (dir, temporary) in [
        (objects.join("tmp"), (|_: &str| true) as fn(&str) -> bool),
        (objects.to_path_buf(), |n: &str| {
            n.starts_with(".adopt-") && n.ends_with(".tmp")
        }),
        (pch::state_dir(include_root), pch::is_temporary),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name();
            if p.is_file() && temporary(&name.to_string_lossy()) && stale(&p) {
                let _ = std::fs::remove_file(&p);
            }
        }
    }
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;
    use std::os::unix::fs::PermissionsExt as _;

    /// An executable still open for writing cannot be run (`ETXTBSY`); once the writer
    /// closes it, [`output_of`]'s next try runs it.
    #[test]
    fn a_busy_executable_is_tried_again() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("tool");
        let mut file = std::fs::File::create(&path)?;
        file.write_all(b"#!/bin/sh\nexit 0\n")?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        let busy = Command::new(&path).output().map(|_| ()).unwrap_err();
        assert_eq!(busy.raw_os_error(), Some(libc::ETXTBSY), "{busy}");
        let closer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            drop(file);
        });
        let output = output_of(&mut Command::new(&path))?;
        closer.join().expect("the closing thread");
        assert!(output.status.success(), "{output:?}");
        Ok(())
    }

    /// Any other failure is returned as it is.
    #[test]
    fn a_missing_executable_is_not_tried_again() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let err = output_of(&mut Command::new(dir.path().join("none"))).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    }
}
