//! Device memory of the simulated chip: page-aligned anonymous mappings.
//!
//! Heap rings (256 MiB per ring by default) and bound orchestration arguments live in
//! `mmap`ed regions: page-aligned (so 1024-byte alignment of outputs holds), zero-filled and
//! committed lazily by the kernel, so an untouched heap costs nothing.

use std::ptr::NonNull;

use crate::error::RuntimeError;

/// An anonymous, private, read-write mapping; unmapped on drop.
pub struct DeviceMemory {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory; concurrent access discipline is the users' (tasks
// ordered by dependencies), exactly as on the device.
unsafe impl Send for DeviceMemory {}
// SAFETY: as above.
unsafe impl Sync for DeviceMemory {}

impl DeviceMemory {
    /// Maps `len` zeroed bytes (at least one page).
    pub fn new(len: usize) -> Result<DeviceMemory, RuntimeError> {
        let len = len.max(1);
        // SAFETY: anonymous private mapping with no address hint; the result is checked.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(RuntimeError::Io {
                what: format!("mapping {len} bytes of device memory"),
                source: std::io::Error::last_os_error(),
            });
        }
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or_else(|| RuntimeError::Io {
            what: "mapping device memory".to_string(),
            source: std::io::Error::other("mmap returned null"),
        })?;
        Ok(DeviceMemory { ptr, len })
    }

    /// Base address.
    pub fn base(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never: at least one byte is mapped).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` came from a successful mmap and are unmapped exactly once.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}
