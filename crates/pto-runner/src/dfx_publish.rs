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

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::RunnerError;

/// Prefix of staging directories inside `dfx_outputs/`.
pub const STAGING_PREFIX: &str = ".run-";
/// The lock file inside `dfx_outputs/`.
pub const LOCK_FILE: &str = ".lock";

fn io(action: &'static str, path: &Path, source: std::io::Error) -> RunnerError {
    RunnerError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// A fresh staging directory under `out` (which is created).
pub fn staging_dir(out: &Path) -> Result<PathBuf, RunnerError> {
    static N: AtomicU64 = AtomicU64::new(0);
    std::fs::create_dir_all(out).map_err(|e| io("creating", out, e))?;
    sweep(out);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = out.join(format!(
        "{STAGING_PREFIX}{}-{nanos}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| io("creating", &dir, e))?;
    Ok(dir)
}

/// Removes staging directories left by processes that no longer exist.
pub fn sweep(out: &Path) {
    let Ok(entries) = std::fs::read_dir(out) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(STAGING_PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        // SAFETY: signal 0 only checks whether the process exists.
        let alive = pid == std::process::id() as i32 || unsafe { libc::kill(pid, 0) } == 0;
        if !alive {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// An advisory lock on `dfx_outputs/.lock` (released on drop).
pub struct SetLock {
    _file: File,
}

/// Locks `out`'s artifact set: `exclusive` to publish, shared to read several files.
pub fn lock(out: &Path, exclusive: bool) -> Result<SetLock, RunnerError> {
    std::fs::create_dir_all(out).map_err(|e| io("creating", out, e))?;
    let path = out.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| io("opening", &path, e))?;
    let op = if exclusive {
        libc::LOCK_EX
    } else {
        libc::LOCK_SH
    };
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), op) } != 0 {
        return Err(io("locking", &path, std::io::Error::last_os_error()));
    }
    Ok(SetLock { _file: file })
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
pub fn publish(staging: &Path, out: &Path, paths: &mut [PathBuf]) -> Result<(), RunnerError> {
    let mut files = Vec::new();
    files_under(staging, &mut files).map_err(|e| io("listing", staging, e))?;
    {
        let _lock = lock(out, true)?;
        for f in &files {
            let Ok(rel) = f.strip_prefix(staging) else {
                continue;
            };
            let dest = out.join(rel);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io("creating", parent, e))?;
            }
            std::fs::rename(f, &dest).map_err(|e| io("publishing", &dest, e))?;
            if let Some(other) = other_form(rel) {
                match std::fs::remove_file(out.join(other)) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(io("removing", &out.join(other), e))
                    }
                    _ => {}
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(staging);
    for p in paths.iter_mut() {
        if let Ok(rel) = p.strip_prefix(staging) {
            *p = out.join(rel);
        }
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
        publish(&stage, &out, &mut named).unwrap();
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
        publish(&stage, &out, &mut []).unwrap();
        assert!(!out.join("chip_swimlane_records.json").exists());
        let stage = staging_dir(&out).unwrap();
        std::fs::write(stage.join("chip_swimlane_records.json"), "newer").unwrap();
        publish(&stage, &out, &mut []).unwrap();
        assert!(!out.join("chip_swimlane_records.bin").exists());
        // A staging directory of a process that is gone is swept by the next run.
        let dead = out.join(format!("{STAGING_PREFIX}999999999-1-0"));
        std::fs::create_dir_all(&dead).unwrap();
        let s2 = staging_dir(&out).unwrap();
        assert!(!dead.exists() && s2.exists());
    }
}
