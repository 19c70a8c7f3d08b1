//! The lock of a run's artifact set: `dfx_outputs/.lock`, an advisory `flock`.
//!
//! A run publishes its artifacts under the lock held exclusively (the runner's
//! `dfx_publish`); a reader that needs several files of one set to agree (the dump viewer:
//! `args_dump.json` and `args.bin`) holds it shared while it reads them, so a run
//! finishing meanwhile cannot pair one run's manifest with another's payloads.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

/// The lock file inside `dfx_outputs/`.
pub const LOCK_FILE: &str = ".lock";

/// A held lock (released on drop).
#[derive(Debug)]
pub struct SetLock {
    _file: File,
}

fn flock(file: File, exclusive: bool) -> std::io::Result<SetLock> {
    let op = if exclusive {
        libc::LOCK_EX
    } else {
        libc::LOCK_SH
    };
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), op) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(SetLock { _file: file })
}

/// Locks the set in `out` to publish into it (exclusive) or to read several of its files
/// (shared), creating `out` and the lock file if needed. The error names no path: the
/// caller knows which `out` it passed.
pub fn lock(out: &Path, exclusive: bool) -> std::io::Result<SetLock> {
    std::fs::create_dir_all(out)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(out.join(LOCK_FILE))?;
    flock(file, exclusive)
}

/// A shared lock on the set in `out` for a reader, without creating anything: `None` when
/// `out` has no lock file (no run published there with a lock) or it cannot be opened (a
/// directory this user may only read still opens; a reader then reads unlocked, as
/// before the lock existed).
pub fn read_lock(out: &Path) -> Option<SetLock> {
    let file = File::open(out.join(LOCK_FILE)).ok()?;
    flock(file, false).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_share_and_a_publisher_waits_for_them() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            read_lock(dir.path()).is_none(),
            "no lock file: nothing to share"
        );
        let publisher = lock(dir.path(), true).unwrap();
        drop(publisher);
        let a = read_lock(dir.path()).expect("the lock file exists now");
        let b = read_lock(dir.path()).expect("readers share");
        let (tx, rx) = std::sync::mpsc::channel();
        let out = dir.path().to_path_buf();
        let t = std::thread::spawn(move || {
            let _l = lock(&out, true).unwrap();
            tx.send(()).unwrap();
        });
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(200))
                .is_err(),
            "the publisher took the lock while readers held it"
        );
        drop((a, b));
        rx.recv_timeout(std::time::Duration::from_secs(20))
            .expect("the publisher gets the lock once the readers let go");
        t.join().unwrap();
    }
}
