//! The one owner of freshness: whether the binaries of a build directory are current, and
//! what identifies a program once it is loaded.
//!
//! Every front end asks this module (through `pto-runner`'s `build::load_for`), never a
//! rule of its own: `pto replay`, Python's `replay()`, `CompiledProgram.__call__`,
//! `benchmark()` and the chip programs of an L3 build.
//!
//! # The rule
//!
//! Binaries next to a build directory's sources are reused only when all of these hold:
//!
//! 1. **The stamp** (`cache/binary_context.json`, [`crate::binary_cache`]) equals the
//!    current [`BinaryContext`](crate::BinaryContext): the same runtime revision, PTO
//!    headers, compiler and flags. A build runs under the directory's `flock`; the stamp is
//!    written only after a whole build succeeded.
//! 2. **The units record** (`cache/units.json`, [`UnitsRecord`]) says that the same
//!    compile units were built from inputs whose contents are unchanged — each source *and
//!    every header it includes* (the compiler's dependency output) — and that every
//!    installed binary is still the one this build wrote (a truncated or foreign `.so` is
//!    rebuilt, never adopted).
//! 3. **No forced invalidation** ran: `replay` with `recompile=True` (the default) deletes
//!    the binaries and both records first ([`crate::binary_cache::invalidate_tree`]).
//!
//! `--no-recompile` / `recompile=False` skips only step 3: an edited source is still seen
//! by step 2 and rebuilt.
//!
//! # Identity of a loaded program
//!
//! A loaded program is identified by a [`ProgramIdentity`]: the runtime revision, the
//! platform, the contents of the objects it was loaded from (hashed once per process: they
//! sit at content-addressed paths and are never rewritten) and the bytes of the
//! configuration files the loader read (`kernel_config.py`, `compiled_meta.json`). A warm chip process is reused
//! only for a run whose program has the identity of the one it loaded; anything else
//! reloads it. The identity is computed once per load from what the load already has in
//! hand: hashing a few paths and two small files.
//!
//! # Files that change while a program is loaded
//!
//! A loaded program keeps running what it loaded: its objects are content-addressed copies,
//! so a rebuild or an edit on disk never changes a run under way. What the run does is *say
//! so*: [`LoadedFiles`] keeps the size and modification time of the files the program was
//! built from (its sources, the headers they include, the installed binaries and
//! `kernel_config.py`) as they were at load, and after a run the runner reports, once per
//! loaded program, the files that changed since: that run used the program as loaded, and
//! the next load runs the edit.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::SystemTime;

use crate::error::{Result, ToolchainError};
use crate::fsutil;
use crate::toolchain::CompileUnit;

/// What identifies a loaded program (see the module documentation): a hex SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ProgramIdentity(String);

impl ProgramIdentity {
    /// The identity of a program for `platform`, loaded from `objects` (in load order:
    /// the orchestration, then each kernel), configured by the
    /// files `config_files` (a missing file counts as absent, not as an error).
    pub fn compute(platform: &str, objects: &[&Path], config_files: &[&Path]) -> Self {
        let mut h = pto_base::hash::KeyHasher::new("pto-program-identity-v1");
        h.field(crate::runtime_revision().unwrap_or("").as_bytes());
        h.field(platform.as_bytes());
        h.field(&(objects.len() as u64).to_le_bytes());
        for o in objects {
            h.field(object_digest(o).as_bytes());
        }
        for f in config_files {
            h.field(f.as_os_str().as_encoded_bytes());
            match std::fs::read(f) {
                Ok(bytes) => h.field(b"present").field(&bytes),
                Err(_) => h.field(b"absent"),
            };
        }
        ProgramIdentity(h.finish())
    }

    /// Wraps an identity received as text (from the other end of the chip-process channel).
    pub fn from_hex(text: &str) -> Self {
        ProgramIdentity(text.to_owned())
    }

    /// The identity as hex text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 hex digits, for messages.
    pub fn short(&self) -> &str {
        self.0.get(..12).unwrap_or(&self.0)
    }
}

impl fmt::Display for ProgramIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Hex SHA-256 of a loaded object's bytes. The same program compiled in one process and
/// reused in another sits at different content-addressed paths (the compile cache names an
/// object by its inputs, an adopted copy by its bytes), so the identity hashes contents.
/// Those files are never rewritten, so each is hashed once per process (a memo by path);
/// an unreadable one contributes its path.
fn object_digest(path: &Path) -> String {
    static MEMO: Mutex<Option<HashMap<PathBuf, String>>> = Mutex::new(None);
    if let Some(d) = MEMO
        .lock()
        .ok()
        .and_then(|m| m.as_ref().and_then(|m| m.get(path).cloned()))
    {
        return d;
    }
    let digest = match std::fs::read(path) {
        Ok(bytes) => pto_base::hash::sha256_hex(&bytes),
        Err(_) => return format!("unreadable:{}", path.display()),
    };
    if let Ok(mut m) = MEMO.lock() {
        m.get_or_insert_with(HashMap::new)
            .insert(path.to_path_buf(), digest.clone());
    }
    digest
}

/// The files a loaded program was built from, as they were at load (see "Files that change
/// while a program is loaded" in the module documentation).
#[derive(Debug, Default)]
pub struct LoadedFiles {
    /// Each file with its `(length, modification time)` at load (`None`: absent then).
    files: Vec<(PathBuf, Option<(u64, SystemTime)>)>,
    /// Whether the change was reported already (a note once per loaded program).
    reported: AtomicBool,
}

/// A file's `(length, modification time)`, or `None` when it cannot be read.
fn stat(path: &Path) -> Option<(u64, SystemTime)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

impl LoadedFiles {
    /// Records `paths` as they are now (duplicates are kept once).
    pub fn snapshot<I: IntoIterator<Item = PathBuf>>(paths: I) -> Self {
        let mut files: Vec<(PathBuf, Option<(u64, SystemTime)>)> = Vec::new();
        for p in paths {
            if !files.iter().any(|(q, _)| *q == p) {
                let s = stat(&p);
                files.push((p, s));
            }
        }
        LoadedFiles {
            files,
            reported: AtomicBool::new(false),
        }
    }

    /// The files whose length or modification time differ from the snapshot.
    pub fn changed(&self) -> Vec<&Path> {
        self.files
            .iter()
            .filter(|(p, s)| stat(p) != *s)
            .map(|(p, _)| p.as_path())
            .collect()
    }

    /// The note for a run of the program `identity` when files changed since its load, the
    /// first time only; `None` when nothing changed or it was said before.
    pub fn change_note(&self, identity: &ProgramIdentity) -> Option<String> {
        if self.reported.load(Ordering::Relaxed) {
            return None;
        }
        let changed = self.changed();
        if changed.is_empty() || self.reported.swap(true, Ordering::Relaxed) {
            return None;
        }
        let names: Vec<String> = changed.iter().map(|p| p.display().to_string()).collect();
        Some(format!(
            "[execute] {} changed on disk since this program was loaded: this run used the program as loaded (identity {}); the next load (replay, CompiledProgram.from_dir) runs the edit",
            names.join(", "),
            identity.short()
        ))
    }
}

/// The units record's file name inside the build directory's `cache/`.
pub const UNITS_FILE: &str = "units.json";

/// Version of [`UnitsRecord`]'s file format.
const UNITS_VERSION: u64 = 2;

/// `cache/units.json`: what the installed binaries were built from and what they are
/// (rule 2 of the module documentation).
#[derive(Default, Debug)]
pub struct UnitsRecord {
    /// The compile units' sources, in order.
    units: Vec<String>,
    /// `(path, sha256)` of every input: sources and the headers they include.
    inputs: Vec<(String, String)>,
    /// `(path, sha256)` of every installed binary.
    binaries: Vec<(String, String)>,
}

/// Hex SHA-256 of a file's contents.
fn file_hash(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| ToolchainError::io("cannot read", path, e))?;
    Ok(pto_base::hash::sha256_hex(&bytes))
}

impl UnitsRecord {
    /// An empty record for the units about to be built, in order.
    pub fn for_units(units: &[CompileUnit]) -> Self {
        UnitsRecord {
            units: units
                .iter()
                .map(|u| u.source.to_string_lossy().into_owned())
                .collect(),
            ..UnitsRecord::default()
        }
    }

    /// Records an input (a source or a header it includes) with its current contents.
    pub fn add_input(&mut self, path: &Path) -> Result<()> {
        let key = path.to_string_lossy().into_owned();
        if !self.inputs.iter().any(|(p, _)| *p == key) {
            self.inputs.push((key, file_hash(path)?));
        }
        Ok(())
    }

    /// Records an input with the hash of the contents it was built from (a compile's
    /// [`crate::CompiledObject::inputs`]): a file edited while the compile ran is then seen
    /// as changed, never recorded as current.
    pub fn add_input_hashed(&mut self, path: &Path, hash: &str) {
        let key = path.to_string_lossy().into_owned();
        if !self.inputs.iter().any(|(p, _)| *p == key) {
            self.inputs.push((key, hash.to_owned()));
        }
    }

    /// Deletes `dir`'s record (after a build whose inputs changed while it compiled: its
    /// binaries must not be reused on a later check).
    pub fn remove(dir: &Path) -> Result<()> {
        let path = dir.join(crate::binary_cache::CACHE_DIR).join(UNITS_FILE);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(ToolchainError::io("cannot remove", &path, e))
            }
            _ => Ok(()),
        }
    }

    /// Records an installed binary with its current contents.
    pub fn add_binary(&mut self, path: &Path) -> Result<()> {
        self.binaries
            .push((path.to_string_lossy().into_owned(), file_hash(path)?));
        Ok(())
    }

    /// The inputs the record lists (sources and the headers they include).
    pub fn input_paths(&self) -> impl Iterator<Item = &Path> {
        self.inputs.iter().map(|(p, _)| Path::new(p.as_str()))
    }

    /// Whether the binaries `installed` can be reused for `units`: same units, every input
    /// and every installed binary unchanged.
    pub fn still_current(&self, units: &[CompileUnit], installed: &[PathBuf]) -> bool {
        let same_units = self.units.len() == units.len()
            && self
                .units
                .iter()
                .zip(units)
                .all(|(r, u)| *r == u.source.to_string_lossy());
        let same_binaries = self.binaries.len() == installed.len()
            && self.binaries.iter().zip(installed).all(|((p, h), i)| {
                *p == i.to_string_lossy() && file_hash(i).ok().as_ref() == Some(h)
            });
        if same_units && !same_binaries {
            tracing::warn!(
                "an installed binary under cache/ differs from the one this build compiled (truncated or replaced); recompiling"
            );
        }
        same_units
            && same_binaries
            && self
                .inputs
                .iter()
                .all(|(p, h)| file_hash(Path::new(p)).ok().as_ref() == Some(h))
    }

    /// The record of `dir`, or `None` when it is missing, malformed or of another version
    /// (which the caller treats as "not current").
    pub fn load(dir: &Path) -> Option<UnitsRecord> {
        let path = dir.join(crate::binary_cache::CACHE_DIR).join(UNITS_FILE);
        let text = std::fs::read_to_string(path).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        if v.get("version")?.as_u64()? != UNITS_VERSION {
            return None;
        }
        let pairs = |k: &str| -> Option<Vec<(String, String)>> {
            v.get(k)?
                .as_array()?
                .iter()
                .map(|e| {
                    Some((
                        e.get(0)?.as_str()?.to_string(),
                        e.get(1)?.as_str()?.to_string(),
                    ))
                })
                .collect()
        };
        Some(UnitsRecord {
            units: v
                .get("units")?
                .as_array()?
                .iter()
                .map(|u| u.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()?,
            inputs: pairs("inputs")?,
            binaries: pairs("binaries")?,
        })
    }

    /// Writes the record to `dir/cache/units.json` atomically.
    pub fn save(&self, dir: &Path) -> Result<()> {
        let cache = dir.join(crate::binary_cache::CACHE_DIR);
        let doc = serde_json::json!({
            "version": UNITS_VERSION,
            "units": self.units,
            "inputs": self.inputs,
            "binaries": self.binaries,
        });
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        fsutil::create_dir_all(&cache)?;
        fsutil::write_atomic(&cache.join(UNITS_FILE), text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UnitKind;

    #[test]
    fn loaded_files_report_a_change_once() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("kernel.cpp");
        std::fs::write(&src, "int a;\n").unwrap();
        let gone = dir.path().join("absent.h");
        let files = LoadedFiles::snapshot([src.clone(), src.clone(), gone.clone()]);
        let id = ProgramIdentity::from_hex("0123456789abcdef0123");
        assert!(files.changed().is_empty());
        assert_eq!(files.change_note(&id), None);
        std::fs::write(&src, "int a, b;\n").unwrap();
        std::fs::write(&gone, "").unwrap();
        assert_eq!(files.changed(), vec![src.as_path(), gone.as_path()]);
        let note = files.change_note(&id).expect("a note");
        assert!(
            note.contains("kernel.cpp") && note.contains("0123456789ab"),
            "{note}"
        );
        assert_eq!(files.change_note(&id), None, "said once per loaded program");
    }

    #[test]
    fn identity_changes_with_objects_config_and_platform() {
        let dir = tempfile::tempdir().unwrap();
        let kc = dir.path().join("kernel_config.py");
        std::fs::write(&kc, "A = 1\n").unwrap();
        let a = Path::new("/objects/aaa.so");
        let b = Path::new("/objects/bbb.so");
        let base = ProgramIdentity::compute("a2a3sim", &[a], &[&kc]);
        assert_eq!(base, ProgramIdentity::compute("a2a3sim", &[a], &[&kc]));
        assert_ne!(base, ProgramIdentity::compute("a2a3sim", &[b], &[&kc]));
        assert_ne!(base, ProgramIdentity::compute("a5sim", &[a], &[&kc]));
        std::fs::write(&kc, "A = 2\n").unwrap();
        assert_ne!(base, ProgramIdentity::compute("a2a3sim", &[a], &[&kc]));
        std::fs::remove_file(&kc).unwrap();
        assert_ne!(base, ProgramIdentity::compute("a2a3sim", &[a], &[&kc]));
        // The same object bytes at two paths (compiled here, adopted elsewhere) are one
        // program; other bytes are another.
        let (x, y, z) = (
            dir.path().join("objects-key.so"),
            dir.path().join("adopted-hash.so"),
            dir.path().join("other.so"),
        );
        std::fs::write(&x, "ELF one").unwrap();
        std::fs::write(&y, "ELF one").unwrap();
        std::fs::write(&z, "ELF two").unwrap();
        let at = |o: &Path| ProgramIdentity::compute("a2a3sim", &[o], &[&kc]);
        assert_eq!(at(&x), at(&y));
        assert_ne!(at(&x), at(&z));
    }

    #[test]
    fn units_record_sees_header_edits_and_replaced_binaries() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("k.cpp");
        let hdr = dir.path().join("k.h");
        let bin = dir.path().join("k.so");
        std::fs::write(&src, "#include \"k.h\"\n").unwrap();
        std::fs::write(&hdr, "int x;\n").unwrap();
        std::fs::write(&bin, "ELF").unwrap();
        let units = [CompileUnit::new(&src, UnitKind::Orchestration)];
        let mut record = UnitsRecord::for_units(&units);
        record.add_input(&src).unwrap();
        record.add_input(&hdr).unwrap();
        record.add_binary(&bin).unwrap();
        record.save(dir.path()).unwrap();
        let installed = [bin.clone()];
        let loaded = UnitsRecord::load(dir.path()).unwrap();
        assert!(loaded.still_current(&units, &installed));
        std::fs::write(&hdr, "int y;\n").unwrap();
        assert!(!loaded.still_current(&units, &installed));
        std::fs::write(&hdr, "int x;\n").unwrap();
        std::fs::write(&bin, "ELF2").unwrap();
        assert!(!loaded.still_current(&units, &installed));
        std::fs::write(dir.path().join("cache/units.json"), "[[\"k.cpp\", \"00\"]]").unwrap();
        assert!(
            UnitsRecord::load(dir.path()).is_none(),
            "another format is never trusted"
        );
    }
}
