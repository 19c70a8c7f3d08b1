//! Shared memory between the host and a chip process: one `memfd` file, mapped by both.
//!
//! The file starts with the status board ([`super::board`], a fixed size) and continues with
//! the tensor area, which the host grows (`ftruncate`) before a run that needs more room. The
//! child maps the board once (the signal handler writes into it) and the tensor area per run.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;

/// A shared mapping of `len` bytes at `offset` of a file; unmapped on drop.
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: plain shared memory; the protocol orders who touches what (the host writes inputs
// before a run and reads outputs after it; the child runs in between).
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `[offset, offset + len)` of `fd` read-write and shared.
    pub fn new(fd: RawFd, offset: usize, len: usize) -> std::io::Result<Mapping> {
        let len = len.max(1);
        // SAFETY: a shared mapping of a file we hold open; the result is checked.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                offset as libc::off_t,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let ptr = NonNull::new(ptr.cast::<u8>())
            .ok_or_else(|| std::io::Error::other("mmap returned null"))?;
        Ok(Mapping { ptr, len })
    }

    /// First byte.
    pub fn base(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never: at least one byte is mapped).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The bytes `[offset, offset + len)`, if inside the mapping.
    ///
    /// # Safety
    /// No one else may access those bytes while the slice lives.
    #[allow(clippy::mut_from_ref)] // shared memory: exclusivity is the protocol's, not the borrow's
    pub unsafe fn slice_mut(&self, offset: usize, len: usize) -> Option<&mut [u8]> {
        let end = offset.checked_add(len)?;
        if end > self.len {
            return None;
        }
        // SAFETY: inside the mapping; exclusivity is the caller's promise.
        Some(unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(offset), len) })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: this object owns the mapping.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// An anonymous shared-memory file (`memfd_create`), inherited by the child.
pub struct SharedFile {
    fd: OwnedFd,
    len: usize,
}

impl SharedFile {
    /// A new file of `len` bytes (not close-on-exec, so a spawned child inherits it).
    pub fn create(name: &str, len: usize) -> std::io::Result<SharedFile> {
        let cname = std::ffi::CString::new(name).map_err(std::io::Error::other)?;
        // SAFETY: plain syscall; the result is checked.
        let raw = unsafe { libc::memfd_create(cname.as_ptr(), 0) };
        if raw < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut f = SharedFile { fd, len: 0 };
        f.grow(len)?;
        Ok(f)
    }

    /// Grows the file to at least `len` bytes.
    pub fn grow(&mut self, len: usize) -> std::io::Result<()> {
        if len <= self.len {
            return Ok(());
        }
        // SAFETY: plain syscall on our descriptor.
        if unsafe { libc::ftruncate(self.fd.as_raw_fd(), len as libc::off_t) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        self.len = len;
        Ok(())
    }

    /// Current length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The descriptor.
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Rounds `n` up to a multiple of 64 (tensor offsets in the tensor area).
pub fn align64(n: usize) -> usize {
    n.div_ceil(64) * 64
}

/// Rounds `n` up to whole pages (offsets of mappings).
pub fn page_align(n: usize) -> usize {
    // SAFETY: plain libc query.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    n.div_ceil(page) * page
}
