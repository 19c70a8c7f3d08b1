//! A large diagnostics file written behind its renderer: full buffers are handed to a
//! thread of the file's own, which copies them into the file while the renderer fills the
//! next ones (the copy into the page cache is a third to a half of a large file's time,
//! and the run's CPUs are otherwise idle while its files are written).
//!
//! The thread starts with the full buffer after the first [`HERE_FIRST`] ones, so a small
//! file, written by its renderer, never has one; and only on a CPU that no other writer's
//! thread has ([`pto_base::thread::spare_cpu`]; until one is free, each full buffer is
//! written by its renderer, as before): with several large files at once (all five
//! diagnostics) the renderers have the CPUs. At most [`QUEUE`] buffers wait for the thread
//! (the renderer then waits too); written buffers come back empty, keeping their capacity
//! and their warm pages, to be filled again. The file stays an [`AtomicFile`]: invisible
//! at its path until committed, removed when abandoned, its first write error reported by
//! the commit.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use crate::atomic::AtomicFile;
use crate::error::WriteError;

/// Full buffers that may wait for the writing thread.
pub const QUEUE: usize = 4;

/// Full buffers written by the renderer before a writing thread is started: a file of a
/// few buffers is done before a thread would pay for itself (a compact `deps.bin` of
/// 2.9 MB was about half a millisecond slower with one).
pub const HERE_FIRST: usize = 2;

/// A file being written, on a thread of its own once a few buffers are full and a CPU is
/// spare.
pub struct Behind {
    path: PathBuf,
    /// The file, until its writing thread starts.
    file: Option<AtomicFile>,
    /// The writing thread, from then on.
    writer: Option<Writer>,
    /// Why the file could not be written (reported by the commit).
    failed: Option<WriteError>,
    /// Full buffers handed over so far.
    sent: usize,
    /// The writing thread stopped (at an error its join reports).
    stopped: bool,
}

struct Writer {
    /// Buffers to write, and whether to hand each back once written.
    full: SyncSender<(Vec<u8>, bool)>,
    empty: Receiver<Vec<u8>>,
    thread: JoinHandle<Result<AtomicFile, WriteError>>,
}

impl Behind {
    /// Creates the parent directories of `path` and a temporary beside it
    /// ([`AtomicFile::create`]).
    pub fn create(path: &Path) -> Result<Self, WriteError> {
        Ok(Self {
            path: path.to_path_buf(),
            file: Some(AtomicFile::create(path)?),
            writer: None,
            failed: None,
            sent: 0,
            stopped: false,
        })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Hands `buf`'s bytes to the writing thread (started now if it is not yet) and leaves
    /// an empty buffer of at least `buf`'s capacity in its place. Returns whether the file
    /// is still being written: after a write error (kept for [`commit`](Self::commit))
    /// buffers are dropped unwritten, and a renderer may as well stop.
    pub fn send(&mut self, buf: &mut Vec<u8>) -> bool {
        if !buf.is_empty() {
            if let Some(w) = self.writer_for(buf) {
                let spare = w
                    .empty
                    .try_recv()
                    .ok()
                    .filter(|b| b.capacity() >= buf.capacity())
                    .unwrap_or_else(|| Vec::with_capacity(buf.capacity()));
                // A closed channel: the thread stopped at an error, which its join reports.
                self.stopped = w.full.send((std::mem::replace(buf, spare), true)).is_err();
            }
        }
        self.failed.is_none() && !self.stopped
    }

    /// [`send`](Self::send) for text: `text`'s bytes handed over, an empty `String` of the
    /// same capacity left in its place.
    pub fn send_text(&mut self, text: &mut String) -> bool {
        let mut bytes = std::mem::take(text).into_bytes();
        let writing = self.send(&mut bytes);
        // What comes back is empty, so it is text.
        *text = String::from_utf8(bytes).unwrap_or_default();
        writing
    }

    /// Hands over a large text of its own (rendered apart): written, then freed, by the
    /// writing thread if the file has one (a thread started for it alone would only be
    /// waited for, as such a text mostly ends its file), else here.
    pub fn send_owned(&mut self, mut text: Vec<u8>) {
        match &self.writer {
            Some(w) if !self.stopped => self.stopped = w.full.send((text, false)).is_err(),
            Some(_) => {}
            // Written here, or dropped after an error (the file is then gone).
            None => self.write_here(&mut text),
        }
    }

    /// The writing thread for `buf`, started now if a CPU is spare; `None` when
    /// `buf` was written here or dropped after an error (it is then empty).
    fn writer_for(&mut self, buf: &mut Vec<u8>) -> Option<&Writer> {
        if self.failed.is_some() || self.stopped {
            buf.clear();
            return None;
        }
        self.sent += 1;
        if self.sent > HERE_FIRST && pto_base::thread::spare_cpu() {
            if let Some(file) = self.file.take() {
                // No thread to be had: the renderer writes on, as for a small file.
                match start(file, &self.path) {
                    Ok(writer) => self.writer = Some(writer),
                    Err(file) => self.file = Some(file),
                }
            }
        }
        if self.file.is_some() {
            self.write_here(buf);
            return None;
        }
        self.writer.as_ref()
    }

    /// Writes `buf` on this thread (every CPU has a writer's thread already).
    fn write_here(&mut self, buf: &mut Vec<u8>) {
        if let Some(file) = &mut self.file {
            if let Err(e) = file.write_all(buf) {
                self.file = None;
                self.failed = Some(e);
            }
        }
        buf.clear();
    }

    /// Starts the writing thread now, spare CPU or not (the tests of the thread).
    #[cfg(test)]
    fn start_now(&mut self) {
        let file = self.file.take().expect("a new file");
        self.writer = Some(start(file, &self.path).unwrap_or_else(|_| panic!("no thread")));
    }

    /// Makes the file fail with `e` (the tests' stand-in for a full disk).
    #[cfg(test)]
    pub(crate) fn fail_with(&mut self, e: WriteError) {
        self.failed = Some(e);
    }

    /// Writes `last`, waits for the writing thread and renames the file over its path;
    /// the first write error instead (the target untouched, the temporary removed).
    pub fn commit(mut self, last: &[u8]) -> Result<(), WriteError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let mut file = match (self.writer.take(), self.file.take()) {
            (Some(w), _) => w.finish(&self.path)?,
            (None, Some(file)) => file,
            // Not reached: a file without its thread has failed, which returned above.
            (None, None) => return Err(thread_error(&self.path, "the file is closed")),
        };
        file.write_all(last)?;
        file.commit()
    }
}

impl Writer {
    /// Ends the thread and takes the file back (its first write error instead).
    fn finish(self, path: &Path) -> Result<AtomicFile, WriteError> {
        drop(self.full);
        self.thread
            .join()
            .unwrap_or_else(|_| Err(thread_error(path, "the writing thread panicked")))
    }
}

fn thread_error(path: &Path, why: &str) -> WriteError {
    WriteError::io(path, "writing", std::io::Error::other(why.to_string()))
}

/// Starts the thread that writes the buffers sent to it into `file` ([at
/// work](pto_base::thread::AtWork) while it runs); `file` back when no thread can start.
fn start(file: AtomicFile, path: &Path) -> Result<Writer, AtomicFile> {
    let (full, from_writer) = sync_channel::<(Vec<u8>, bool)>(QUEUE);
    let (to_writer, empty) = sync_channel::<Vec<u8>>(QUEUE + 1);
    // The file goes to the thread once it exists, so that a failed start keeps it here.
    let (give, take) = sync_channel::<AtomicFile>(1);
    let path = path.to_path_buf();
    let spawned = std::thread::Builder::new()
        .name("pto-dfx-file".to_string())
        .spawn(move || {
            let _at_work = pto_base::thread::AtWork::begin();
            let mut file = take
                .recv()
                .map_err(|_| thread_error(&path, "the file never reached its writing thread"))?;
            for (mut buf, back) in from_writer {
                file.write_all(&buf)?;
                if back {
                    buf.clear();
                    let _ = to_writer.try_send(buf);
                }
            }
            Ok(file)
        });
    match spawned {
        Ok(thread) => {
            // The thread waits for it, so this cannot fail.
            let _ = give.send(file);
            Ok(Writer {
                full,
                empty,
                thread,
            })
        }
        Err(_) => Err(file),
    }
}

impl Drop for Behind {
    fn drop(&mut self) {
        // Abandoned: the thread ends when its channel closes and drops (removes) the
        // temporary; wait for it so that nothing is left behind once this returns.
        if let Some(w) = self.writer.take() {
            let _ = w.finish(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_arrive_in_order_and_the_file_appears_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.bin");
        let mut file = Behind::create(&path).unwrap();
        file.start_now();
        let mut want = Vec::new();
        let mut buf = Vec::with_capacity(1000);
        for i in 0..50u32 {
            buf.extend((0..1000).map(|k| (i * 7 + k) as u8));
            want.extend_from_slice(&buf);
            file.send(&mut buf);
            assert!(buf.is_empty() && buf.capacity() >= 1000, "{i}");
            if i % 10 == 0 {
                let text = format!("text {i}").into_bytes();
                want.extend_from_slice(&text);
                file.send_owned(text);
            }
            if i % 10 == 5 {
                let mut text = String::with_capacity(64);
                text.push_str("é text");
                want.extend_from_slice(text.as_bytes());
                assert!(file.send_text(&mut text));
                assert!(text.is_empty() && text.capacity() >= 64);
            }
        }
        assert!(!path.exists(), "invisible until committed");
        file.commit(b"tail").unwrap();
        want.extend_from_slice(b"tail");
        assert_eq!(std::fs::read(&path).unwrap(), want);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary left");
    }

    #[test]
    fn the_renderer_writes_the_first_buffers_and_the_text_is_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("here.bin");
        let mut file = Behind::create(&path).unwrap();
        let mut buf = vec![7; 1000];
        file.write_here(&mut buf);
        assert!(file.writer.is_none() && buf.is_empty());
        for _ in 0..HERE_FIRST {
            buf.extend_from_slice(&[7; 1000]);
            file.send(&mut buf);
            assert!(file.writer.is_none(), "the first buffers are written here");
        }
        buf.extend_from_slice(&[8; 10]);
        file.send(&mut buf);
        file.commit(b"!").unwrap();
        let mut want = vec![7; 1000 * (1 + HERE_FIRST)];
        want.extend_from_slice(&[8; 10]);
        want.push(b'!');
        assert_eq!(std::fs::read(&path).unwrap(), want);
    }

    #[test]
    fn after_a_failure_nothing_more_is_written_and_the_commit_reports_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("full.bin");
        let mut file = Behind::create(&path).unwrap();
        assert!(file.send(&mut vec![1; 100]), "written");
        file.fail_with(WriteError::io(
            &path,
            "writing",
            std::io::Error::other("no space left on device"),
        ));
        let mut buf = vec![2; 100];
        assert!(!file.send(&mut buf), "the renderer may stop");
        assert!(buf.is_empty());
        let text = file.commit(b"").unwrap_err().to_string();
        assert!(text.contains("no space left"), "{text}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_small_file_is_written_here_and_an_abandoned_one_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.json");
        Behind::create(&small).unwrap().commit(b"{}").unwrap();
        assert_eq!(std::fs::read(&small).unwrap(), b"{}");
        let gone = dir.path().join("gone.bin");
        let mut file = Behind::create(&gone).unwrap();
        file.start_now();
        file.send(&mut vec![1; 4096]);
        drop(file);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("small.json")]);
    }

    /// The test below, run in a child process of this test binary with this variable set to
    /// the directory to write in.
    const EFBIG_CHILD: &str = "PTO_DFX_TEST_EFBIG_DIR";

    /// The writing thread's own write error, not a stand-in: a child process of this test
    /// binary whose files may not grow past 1 MiB (`RLIMIT_FSIZE`, with `SIGXFSZ` ignored so
    /// that a write past it fails with `EFBIG`) writes 4 MiB through a writing thread.
    #[test]
    fn a_write_error_on_the_writing_thread_fails_the_commit_and_leaves_nothing() {
        if let Some(dir) = std::env::var_os(EFBIG_CHILD) {
            write_past_the_file_size_limit(Path::new(&dir));
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let name = "behind::tests::a_write_error_on_the_writing_thread_fails_the_commit_and_leaves_nothing";
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", name, "--nocapture", "--test-threads=1"])
            .env(EFBIG_CHILD, dir.path())
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{printed}");
        assert!(
            printed.contains("1 passed"),
            "the child ran the test: {printed}"
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "nothing left"
        );
    }

    fn write_past_the_file_size_limit(dir: &Path) {
        let limit = libc::rlimit {
            rlim_cur: 1 << 20,
            rlim_max: 1 << 20,
        };
        // SAFETY: plain calls with valid arguments, in a child process that runs this test
        // alone (the limit and the signal disposition are the whole process's).
        unsafe {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0);
        }
        let path = dir.join("big.bin");
        let mut file = Behind::create(&path).unwrap();
        file.start_now();
        let mut buf = Vec::new();
        let mut sent = 0;
        while sent < 16 {
            buf.resize(256 << 10, 7);
            sent += 1;
            if !file.send(&mut buf) {
                break;
            }
        }
        assert!(sent < 16, "the renderer learns that the file stopped");
        let err = file.commit(b"").unwrap_err();
        assert_eq!(err.path, path);
        let text = err.to_string();
        assert!(text.contains("too large"), "{text}");
        assert!(!path.exists(), "nothing at the path");
    }
}
