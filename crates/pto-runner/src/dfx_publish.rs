//! A run's diagnostics are published as a set.
//!
//! Every run writes its artifacts into a private staging directory
//! `dfx_outputs/.run-<pid>-<nanos>-<n>/` (the args dump streams `args.bin` there too). Only
//! when every file is complete does the run take an exclusive lock on `dfx_outputs/.lock`
//! and rename each file into place; readers that need several files to agree (the dump
//! viewer: `args_dump.json` and `args.bin`) take the lock shared. So concurrent runs leave
//! the files of exactly one of them, a full disk or a kill mid-write leaves the previous
//! complete set (the staging directory is abandoned), and the next run sweeps staging
//! directories whose process is gone.
//!
//! Replacing a large file must not make the run pay for freeing the old one (renaming a new
//! 192 MiB `args.bin` over the previous run's frees the old pages before `rename` returns:
//! ~85 ms). So, under the lock, a replaced file of at least [`SET_ASIDE_MIN_BYTES`] is
//! exchanged with the new one and then renamed to a hidden `.trash-<pid>-…` name in
//! `dfx_outputs/` (same file system: costs nothing); a file or `previous/` directory that a
//! publish removes is renamed to a trash name. The trash is unlinked on a background thread
//! ([`finish_freeing`] waits for it; a long-lived session never does). A crash at any step
//! leaves the old or the new file under the published name, never neither; trash whose
//! process is gone is swept like staging.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::RunnerError;

/// Prefix of staging directories inside `dfx_outputs/`.
pub const STAGING_PREFIX: &str = ".run-";
/// Prefix of replaced files and directories set aside inside `dfx_outputs/` to be freed off
/// the run's path: `.trash-<pid>-<nanos>-<n>-<k>`.
pub const TRASH_PREFIX: &str = ".trash-";
/// A replaced file at least this large is set aside and freed on a background thread; a
/// smaller one is freed in place (microseconds). The size above which replacing by an
/// exchange pays, as for every atomic write.
pub const SET_ASIDE_MIN_BYTES: u64 = pto_base::fs::EXCHANGE_MIN_BYTES;
pub use pto_dfx::set_lock::{SetLock, LOCK_FILE};

fn io(action: &'static str, path: &Path, source: std::io::Error) -> RunnerError {
    RunnerError::ArtifactIo {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// A run id unique on this machine: `<pid>-<nanos>-<n>` (the staging directory's suffix and
/// the provenance sidecar's `run`).
fn new_run_id() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{}-{nanos}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A fresh staging directory under `out` (which is created).
pub fn staging_dir(out: &Path) -> Result<PathBuf, RunnerError> {
    std::fs::create_dir_all(out).map_err(|e| io("creating", out, e))?;
    sweep(out);
    let dir = out.join(format!("{STAGING_PREFIX}{}", new_run_id()));
    std::fs::create_dir_all(&dir).map_err(|e| io("creating", &dir, e))?;
    Ok(dir)
}

/// Removes staging directories and trash left by processes that no longer exist (on the
/// background thread that frees trash: a killed run's files can be large).
pub fn sweep(out: &Path) {
    let Ok(entries) = std::fs::read_dir(out) else {
        return;
    };
    let dead: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| owner_pid(&e.file_name().to_string_lossy()).is_some_and(|pid| !alive(pid)))
        .map(|e| e.path())
        .collect();
    free_later(dead);
}

/// The process that made a staging directory or trash entry, by its name.
fn owner_pid(name: &str) -> Option<i32> {
    let rest = name
        .strip_prefix(STAGING_PREFIX)
        .or_else(|| name.strip_prefix(TRASH_PREFIX))?;
    rest.split('-').next()?.parse::<i32>().ok()
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks whether the process exists.
    pid == std::process::id() as i32
        || unsafe { libc::kill(pid, 0) } == 0
        // It exists but belongs to another user.
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Frees in flight (a count of [`free_later`]'s threads not yet done), and the condition
/// [`finish_freeing`] waits on for it to reach zero. A count, not the threads' handles: two
/// callers of `finish_freeing` (tests run in parallel) both wait for every free, where
/// taking the handles let the second return while the first was still joining them.
static FREEING: std::sync::Mutex<usize> = std::sync::Mutex::new(0);
static FREED: std::sync::Condvar = std::sync::Condvar::new();

/// One counted free: counted when made, uncounted when dropped (its thread finished, or
/// the closure holding it was dropped because the thread could not start).
struct Counted;

impl Counted {
    fn new() -> Self {
        *FREEING.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        Counted
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut n = FREEING.lock().unwrap_or_else(|p| p.into_inner());
        *n -= 1;
        if *n == 0 {
            FREED.notify_all();
        }
    }
}

fn remove_any(path: &Path) {
    let _ = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(_) => Ok(()),
    };
}

/// Removes `paths` (files or directories) on a thread of their own; in place if no thread
/// can be started.
fn free_later(paths: Vec<PathBuf>) {
    if paths.is_empty() {
        return;
    }
    let shared = std::sync::Arc::new(paths);
    let for_thread = std::sync::Arc::clone(&shared);
    let counted = Counted::new();
    let spawned = std::thread::Builder::new()
        .name("pto-dfx-free".into())
        .spawn(move || {
            let _counted = counted;
            for_thread.iter().for_each(|p| remove_any(p));
        });
    if spawned.is_err() {
        shared.iter().for_each(|p| remove_any(p));
    }
}

/// Waits until every replaced file this process set aside is freed. A one-shot process
/// (the CLI, a chip process told to exit) calls it before exiting, after its results are
/// out, so no trash outlives it; a run never does.
pub fn finish_freeing() {
    let mut n = FREEING.lock().unwrap_or_else(|p| p.into_inner());
    while *n > 0 {
        n = FREED.wait(n).unwrap_or_else(|p| p.into_inner());
    }
}

/// The replaced files of one publication, set aside under hidden names in `out` and freed
/// off the run's path by [`Trash::free_in_background`].
struct Trash {
    out: PathBuf,
    run: String,
    items: Vec<PathBuf>,
    /// The atomic exchange [`Trash::replace`] tries first ([`pto_base::fs::exchange`]; a
    /// test gives one that fails, as on a file system without `RENAME_EXCHANGE`).
    exchange: fn(&Path, &Path) -> std::io::Result<()>,
}

impl Trash {
    fn new(out: &Path) -> Self {
        Trash {
            out: out.to_path_buf(),
            run: new_run_id(),
            items: Vec::new(),
            exchange: pto_base::fs::exchange,
        }
    }

    fn next_name(&self) -> PathBuf {
        let k = self.items.len();
        self.out.join(format!("{TRASH_PREFIX}{}-{k}", self.run))
    }

    /// Renames `src` over `dest`, setting a large `dest` aside instead of freeing it: the
    /// two are exchanged atomically (`dest` is the new file at once) and the old one, now at
    /// `src`, is renamed to a trash name. Renaming over an existing file would cost more
    /// than the free: ext4 also starts the new file's delayed block allocation there
    /// (`auto_da_alloc`), which the exchange does not. Without the exchange (a file system
    /// that lacks it), `dest` gets a trash name as a second link first, so the rename only
    /// drops a link; without hard links, the rename frees the old file as before.
    fn replace(&mut self, src: &Path, dest: &Path) -> std::io::Result<()> {
        if !pto_base::fs::is_large_file(dest) {
            return std::fs::rename(src, dest);
        }
        let trash = self.next_name();
        if (self.exchange)(src, dest).is_ok() {
            match std::fs::rename(src, &trash) {
                Ok(()) => self.items.push(trash),
                // Left in the staging directory, which is removed after publication.
                Err(_) => self.items.push(src.to_path_buf()),
            }
            return Ok(());
        }
        if std::fs::hard_link(dest, &trash).is_ok() {
            self.items.push(trash);
        }
        std::fs::rename(src, dest)
    }

    /// Removes `path` (a file or a directory; missing is fine): a large one is renamed to a
    /// trash name, a small one removed in place.
    fn remove(&mut self, path: &Path) -> std::io::Result<()> {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return Ok(());
        };
        if tree_bytes(path) >= SET_ASIDE_MIN_BYTES {
            let trash = self.next_name();
            std::fs::rename(path, &trash)?;
            self.items.push(trash);
            Ok(())
        } else if meta.is_dir() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        }
    }

    fn free_in_background(self) {
        free_later(self.items);
    }
}

/// The bytes of the file or directory tree at `path` (0 when missing; stops counting once
/// it reaches [`SET_ASIDE_MIN_BYTES`]).
fn tree_bytes(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    let mut total = 0;
    for e in std::fs::read_dir(path).into_iter().flatten().flatten() {
        total += tree_bytes(&e.path());
        if total >= SET_ASIDE_MIN_BYTES {
            break;
        }
    }
    total
}

/// Locks `out`'s artifact set ([`pto_dfx::set_lock`]): `exclusive` to publish, shared to
/// read several files.
pub fn lock(out: &Path, exclusive: bool) -> Result<SetLock, RunnerError> {
    pto_dfx::set_lock::lock(out, exclusive).map_err(|e| io("locking", &out.join(LOCK_FILE), e))
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            files_under(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

/// The two forms of the large records (`--dfx-format`): publishing one removes the other
/// from `out`, so the set never holds a stale form of an earlier run beside the new one.
const FORMS: [(&str, &str); 2] = [
    (
        pto_dfx::swimlane::FILE_NAME,
        pto_dfx::compact::swimlane::FILE_NAME,
    ),
    (pto_dfx::deps::FILE_NAME, pto_dfx::compact::deps::FILE_NAME),
];

fn other_form(rel: &Path) -> Option<&'static str> {
    let name = rel.to_str()?;
    FORMS.iter().find_map(|&(json, bin)| match name {
        n if n == json => Some(bin),
        n if n == bin => Some(json),
        _ => None,
    })
}

/// Moves every file of `staging` to the same relative path under `out`, under the set's
/// exclusive lock, then removes `staging`. The other form of a published swimlane or
/// dep_gen file is removed. `paths` (files the summary names) are rewritten
/// from their staging location to their published one.
///
/// `program` is the identity of the program that ran (`pto_toolchain::freshness`): the
/// published files are recorded with it and this run's id in `pto_provenance.json`
/// ([`pto_dfx::provenance`]); an artifact left by a run of a *different* program is moved
/// aside to `previous/` (which then holds only such files), while one of the same program
/// stays, to be joined as before (capture the graph once, time many times).
pub fn publish(
    staging: &Path,
    out: &Path,
    paths: &mut [PathBuf],
    program: &str,
) -> Result<(), RunnerError> {
    let mut files = Vec::new();
    files_under(staging, &mut files).map_err(|e| io("listing", staging, e))?;
    let run = staging
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix(STAGING_PREFIX))
        .unwrap_or_default()
        .to_string();
    let mut trash = Trash::new(out);
    let published = publish_locked(staging, out, &files, &run, program, &mut trash);
    // Freed off the run's path whether or not the publication succeeded (what was set
    // aside is no longer published either way).
    trash.free_in_background();
    published?;
    let _ = std::fs::remove_dir_all(staging);
    for p in paths.iter_mut() {
        if let Ok(rel) = p.strip_prefix(staging) {
            *p = out.join(rel);
        }
    }
    Ok(())
}

/// [`publish`]'s moves, under the set's exclusive lock.
fn publish_locked(
    staging: &Path,
    out: &Path,
    files: &[PathBuf],
    run: &str,
    program: &str,
    trash: &mut Trash,
) -> Result<(), RunnerError> {
    {
        let _lock = lock(out, true)?;
        let mut provenance = pto_dfx::provenance::Provenance::read(out);
        provenance.version = 1;
        let incoming: Vec<String> = files
            .iter()
            .filter_map(|f| pto_dfx::provenance::relative_key(staging, f))
            .collect();
        set_aside_foreign(out, &mut provenance, program, &incoming, trash)?;
        for f in files {
            let Ok(rel) = f.strip_prefix(staging) else {
                continue;
            };
            let dest = out.join(rel);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io("creating", parent, e))?;
            }
            trash
                .replace(f, &dest)
                .map_err(|e| io("publishing", &dest, e))?;
            if let Some(other) = other_form(rel) {
                trash
                    .remove(&out.join(other))
                    .map_err(|e| io("removing", &out.join(other), e))?;
                provenance.files.remove(other);
            }
        }
        supersede_args_bin(out, &mut provenance, &incoming, trash)?;
        for key in incoming {
            let origin = pto_dfx::provenance::Origin {
                program: program.to_string(),
                run: run.to_string(),
            };
            provenance.files.insert(key, origin);
        }
        provenance.write(out)?;
    }
    Ok(())
}

/// Publishes a set of one small file, `name` with `bytes`, into `out` without a staging
/// directory: under the set's exclusive lock the file is written atomically (temporary file,
/// rename) and recorded in the provenance sidecar with `program` and a new run id, and
/// artifacts of another program are moved aside, exactly as [`publish`] does for a staged
/// set. Used by `--timing predicted` alone (its one `predicted_timing.json`), where the
/// staging round trip was most of the mode's cost. Returns the file's path.
pub fn publish_file(
    out: &Path,
    name: &str,
    bytes: &[u8],
    program: &str,
) -> Result<PathBuf, RunnerError> {
    let _lock = lock(out, true)?;
    let mut provenance = pto_dfx::provenance::Provenance::read(out);
    provenance.version = 1;
    let mut trash = Trash::new(out);
    let set_aside = set_aside_foreign(
        out,
        &mut provenance,
        program,
        &[name.to_string()],
        &mut trash,
    );
    trash.free_in_background();
    set_aside?;
    let path = out.join(name);
    pto_dfx::atomic_write(&path, bytes)?;
    provenance.files.insert(
        name.to_string(),
        pto_dfx::provenance::Origin {
            program: program.to_string(),
            run: new_run_id(),
        },
    );
    provenance.write(out)?;
    Ok(path)
}

/// An args dump manifest published without its payload file (a dump that captured nothing,
/// or only scalars) supersedes the payload of an earlier dump: `args.bin` is removed, so
/// the manifest never points into another run's bytes.
fn supersede_args_bin(
    out: &Path,
    provenance: &mut pto_dfx::provenance::Provenance,
    incoming: &[String],
    trash: &mut Trash,
) -> Result<(), RunnerError> {
    let manifest = format!("args_dump/{}", pto_dfx::args_dump::MANIFEST_FILE_NAME);
    let bin = format!("args_dump/{}", pto_dfx::args_dump::BIN_FILE_NAME);
    if incoming.contains(&manifest) && !incoming.contains(&bin) {
        trash
            .remove(&out.join(&bin))
            .map_err(|e| io("removing", &out.join(&bin), e))?;
        provenance.files.remove(&bin);
    }
    Ok(())
}

/// Moves the artifacts of `out` that the sidecar attributes to another program than
/// `program`, and that this run does not replace, to `out/previous/` (emptied first: it
/// holds the artifacts of the program before, not a history), and forgets them.
fn set_aside_foreign(
    out: &Path,
    provenance: &mut pto_dfx::provenance::Provenance,
    program: &str,
    incoming: &[String],
    trash: &mut Trash,
) -> Result<(), RunnerError> {
    let foreign: Vec<String> = provenance
        .files
        .iter()
        .filter(|(k, o)| o.program != program && !incoming.contains(k))
        .map(|(k, _)| k.clone())
        .filter(|k| out.join(k).is_file())
        .collect();
    if foreign.is_empty() {
        return Ok(());
    }
    let previous = out.join(pto_dfx::provenance::PREVIOUS_DIR);
    trash
        .remove(&previous)
        .map_err(|e| io("emptying", &previous, e))?;
    for key in foreign {
        let dest = previous.join(&key);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io("creating", parent, e))?;
        }
        std::fs::rename(out.join(&key), &dest).map_err(|e| io("moving aside", &dest, e))?;
        tracing::warn!(
            "{}: written by another program than this run's (an edit since); moved to {}",
            out.join(&key).display(),
            dest.display()
        );
        provenance.files.remove(&key);
    }
    Ok(())
}

/// Removes a staging directory after a failed run (its partial files never appear).
pub fn abandon(staging: &Path) {
    let _ = std::fs::remove_dir_all(staging);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_is_published_together_and_stale_staging_is_swept() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("dfx_outputs");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("pmu.csv"), "old").unwrap();
        let stage = staging_dir(&out).unwrap();
        std::fs::create_dir_all(stage.join("args_dump")).unwrap();
        std::fs::write(stage.join("args_dump/args.bin"), "new").unwrap();
        std::fs::write(stage.join("pmu.csv"), "new").unwrap();
        // Not visible before publication.
        assert_eq!(std::fs::read_to_string(out.join("pmu.csv")).unwrap(), "old");
        let mut named = vec![stage.join("pmu.csv")];
        publish(&stage, &out, &mut named, "p1").unwrap();
        assert_eq!(named, vec![out.join("pmu.csv")]);
        assert_eq!(std::fs::read_to_string(out.join("pmu.csv")).unwrap(), "new");
        assert_eq!(
            std::fs::read_to_string(out.join("args_dump/args.bin")).unwrap(),
            "new"
        );
        assert!(!stage.exists());
        // A compact swimlane replaces the JSON one of an earlier run, and back.
        std::fs::write(out.join("chip_swimlane_records.json"), "old").unwrap();
        let stage = staging_dir(&out).unwrap();
        std::fs::write(stage.join("chip_swimlane_records.bin"), "new").unwrap();
        publish(&stage, &out, &mut [], "p1").unwrap();
        assert!(!out.join("chip_swimlane_records.json").exists());
        let stage = staging_dir(&out).unwrap();
        std::fs::write(stage.join("chip_swimlane_records.json"), "newer").unwrap();
        publish(&stage, &out, &mut [], "p1").unwrap();
        assert!(!out.join("chip_swimlane_records.bin").exists());
        // A staging directory of a process that is gone is swept by the next run.
        let dead = out.join(format!("{STAGING_PREFIX}999999999-1-0"));
        std::fs::create_dir_all(&dead).unwrap();
        let s2 = staging_dir(&out).unwrap();
        finish_freeing();
        assert!(!dead.exists() && s2.exists());
    }

    #[test]
    fn one_file_published_without_staging_is_recorded_like_a_staged_set() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("dfx_outputs");
        let stage = staging_dir(&out).unwrap();
        std::fs::write(stage.join("deps.json"), "g1").unwrap();
        publish(&stage, &out, &mut [], "p1").unwrap();
        // Same program: the graph stays beside the new file; both are recorded.
        let path = publish_file(&out, "predicted_timing.json", b"{}", "p1").unwrap();
        assert_eq!(path, out.join("predicted_timing.json"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
        let prov = pto_dfx::provenance::Provenance::read(&out);
        let (a, b) = (
            &prov.files["deps.json"],
            &prov.files["predicted_timing.json"],
        );
        assert_eq!((a.program.as_str(), b.program.as_str()), ("p1", "p1"));
        assert_ne!(a.run, b.run);
        // Another program: the earlier graph is moved aside, as a staged publish does.
        publish_file(&out, "predicted_timing.json", b"[]", "p2").unwrap();
        assert!(out.join("previous/deps.json").is_file() && !out.join("deps.json").exists());
        let prov = pto_dfx::provenance::Provenance::read(&out);
        assert_eq!(prov.files["predicted_timing.json"].program, "p2");
        assert!(!prov.files.contains_key("deps.json"));
        // Nothing is left in a staging directory.
        let left: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(STAGING_PREFIX))
            .collect();
        assert!(left.is_empty());
    }

    #[test]
    fn artifacts_of_another_program_are_moved_aside_and_the_same_program_s_are_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("dfx_outputs");
        let run = |files: &[(&str, &str)], program: &str| {
            let stage = staging_dir(&out).unwrap();
            for (name, text) in files {
                std::fs::write(stage.join(name), text).unwrap();
            }
            publish(&stage, &out, &mut [], program).unwrap();
        };
        // A dep_gen run, then a swimlane run of the same program: both stay, joined.
        run(&[("deps.json", "g1")], "p1");
        run(&[("chip_swimlane_records.json", "s1")], "p1");
        assert!(out.join("deps.json").is_file());
        let prov = pto_dfx::provenance::Provenance::read(&out);
        assert_eq!(prov.files["deps.json"].program, "p1");
        assert_ne!(
            prov.files["deps.json"].run,
            prov.files["chip_swimlane_records.json"].run
        );
        // After an edit (another program), the old graph is moved aside, not joined.
        run(&[("chip_swimlane_records.json", "s2")], "p2");
        assert!(!out.join("deps.json").exists());
        assert_eq!(
            std::fs::read_to_string(out.join("previous/deps.json")).unwrap(),
            "g1"
        );
        let prov = pto_dfx::provenance::Provenance::read(&out);
        assert!(!prov.files.contains_key("deps.json"));
        assert_eq!(prov.files["chip_swimlane_records.json"].program, "p2");
        // A file the sidecar does not know (copied in) is never moved.
        std::fs::write(out.join("pmu.csv"), "mine").unwrap();
        run(&[("deps.json", "g3")], "p3");
        assert_eq!(
            std::fs::read_to_string(out.join("pmu.csv")).unwrap(),
            "mine"
        );
        assert!(out.join("previous/chip_swimlane_records.json").is_file());
        assert!(
            !out.join("previous/deps.json").exists(),
            "previous/ holds one program"
        );
    }

    fn trash_in(out: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(out)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(TRASH_PREFIX))
            .collect();
        names.sort();
        names
    }

    fn large(fill: u8) -> Vec<u8> {
        vec![fill; SET_ASIDE_MIN_BYTES as usize]
    }

    /// A published `args.bin` of large(1) in `out` and its replacement of large(2).
    fn large_pair(out: &Path) -> (PathBuf, PathBuf) {
        let (dest, new) = (out.join("args.bin"), out.join("new.bin"));
        std::fs::write(&dest, large(1)).unwrap();
        std::fs::write(&new, large(2)).unwrap();
        (dest, new)
    }

    #[test]
    fn a_large_replaced_file_is_set_aside_then_freed_and_a_small_one_in_place() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path();
        let (dest, new) = large_pair(out);
        let mut trash = Trash::new(out);
        trash.replace(&new, &dest).unwrap();
        // The old bytes live on under a trash name only; the published name has the new.
        assert_eq!(trash.items.len(), 1);
        assert_eq!(std::fs::read(&trash.items[0]).unwrap(), large(1));
        assert_eq!(std::fs::read(&dest).unwrap(), large(2));
        // A large file or directory a publication removes is renamed to trash.
        std::fs::create_dir_all(out.join("previous")).unwrap();
        std::fs::write(out.join("previous/deps.json"), large(3)).unwrap();
        trash.remove(&out.join("previous")).unwrap();
        assert!(!out.join("previous").exists() && trash.items.len() == 2);
        // Small ones are replaced and removed in place; a missing one is no error.
        std::fs::write(out.join("small"), "old").unwrap();
        std::fs::write(out.join("small.new"), "new").unwrap();
        trash
            .replace(&out.join("small.new"), &out.join("small"))
            .unwrap();
        std::fs::write(out.join("pmu.csv"), "x").unwrap();
        trash.remove(&out.join("pmu.csv")).unwrap();
        trash.remove(&out.join("missing")).unwrap();
        // A directory at the published name is never swapped out: the rename fails.
        std::fs::create_dir_all(out.join("dir")).unwrap();
        std::fs::write(out.join("dir/big"), large(4)).unwrap();
        std::fs::write(out.join("dir.new"), "new").unwrap();
        assert!(trash
            .replace(&out.join("dir.new"), &out.join("dir"))
            .is_err());
        assert_eq!(std::fs::read(out.join("dir/big")).unwrap(), large(4));
        assert_eq!(trash.items.len(), 2);
        assert_eq!(trash_in(out).len(), 2);
        trash.free_in_background();
        finish_freeing();
        assert!(trash_in(out).is_empty());
        assert_eq!(std::fs::read(&dest).unwrap(), large(2));
        assert_eq!(std::fs::read_to_string(out.join("small")).unwrap(), "new");
    }

    #[test]
    fn without_the_exchange_a_replaced_large_file_is_set_aside_by_a_second_link() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path();
        let (dest, new) = large_pair(out);
        let mut trash = Trash::new(out);
        trash.exchange = |_, _| Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        trash.replace(&new, &dest).unwrap();
        // The published name has the new bytes; the old ones live on under the trash
        // name only (the rename dropped the published name's link to them).
        assert_eq!(std::fs::read(&dest).unwrap(), large(2));
        assert!(!new.exists());
        assert_eq!(trash.items.len(), 1);
        assert_eq!(std::fs::read(&trash.items[0]).unwrap(), large(1));
        use std::os::unix::fs::MetadataExt;
        assert_eq!(std::fs::metadata(&trash.items[0]).unwrap().nlink(), 1);
        trash.free_in_background();
        finish_freeing();
        assert!(trash_in(out).is_empty());
        assert_eq!(std::fs::read(&dest).unwrap(), large(2));
    }

    #[test]
    fn republishing_a_large_dump_leaves_the_new_set_and_no_trash() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("dfx_outputs");
        for fill in [1, 2] {
            let stage = staging_dir(&out).unwrap();
            std::fs::create_dir_all(stage.join("args_dump")).unwrap();
            std::fs::write(stage.join("args_dump/args.bin"), large(fill)).unwrap();
            std::fs::write(stage.join("args_dump/args_dump.json"), [fill]).unwrap();
            publish(&stage, &out, &mut [], "p1").unwrap();
            // The set is complete as soon as publish returns, whatever the freeing does.
            assert_eq!(
                std::fs::read(out.join("args_dump/args.bin")).unwrap(),
                large(fill)
            );
            assert_eq!(
                std::fs::read(out.join("args_dump/args_dump.json")).unwrap(),
                [fill]
            );
            let prov = pto_dfx::provenance::Provenance::read(&out);
            assert_eq!(
                prov.files["args_dump/args.bin"].run,
                prov.files["args_dump/args_dump.json"].run
            );
        }
        // A manifest without payload supersedes the large args.bin (set aside, then freed).
        let stage = staging_dir(&out).unwrap();
        std::fs::create_dir_all(stage.join("args_dump")).unwrap();
        std::fs::write(stage.join("args_dump/args_dump.json"), "[]").unwrap();
        publish(&stage, &out, &mut [], "p1").unwrap();
        assert!(!out.join("args_dump/args.bin").exists());
        finish_freeing();
        assert!(trash_in(&out).is_empty());
    }

    #[test]
    fn trash_left_by_a_killed_process_is_swept_and_a_live_one_s_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("dfx_outputs");
        std::fs::create_dir_all(out.join("args_dump")).unwrap();
        let bin = out.join("args_dump/args.bin");
        std::fs::write(&bin, "published").unwrap();
        // Killed between the two steps of a replacement without exchange: the trash is a
        // second link of the still-published file, which stays readable; sweeping drops only
        // the extra link.
        let dead_link = out.join(format!("{TRASH_PREFIX}999999999-1-0-0"));
        std::fs::hard_link(&bin, &dead_link).unwrap();
        // Killed after setting a previous/ aside.
        let dead_dir = out.join(format!("{TRASH_PREFIX}999999999-1-0-1"));
        std::fs::create_dir_all(&dead_dir).unwrap();
        std::fs::write(dead_dir.join("deps.json"), "old").unwrap();
        // This process's own trash is its own thread's to free.
        let mine = out.join(format!("{TRASH_PREFIX}{}-1-0-0", std::process::id()));
        std::fs::write(&mine, "mine").unwrap();
        let _stage = staging_dir(&out).unwrap();
        finish_freeing();
        assert!(!dead_link.exists() && !dead_dir.exists());
        assert!(mine.exists());
        assert_eq!(std::fs::read_to_string(&bin).unwrap(), "published");
    }
}
