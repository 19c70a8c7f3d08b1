//! Comm domains on the CPU: one shared-memory file per domain, laid out as a 4 KiB header
//! followed by one window per rank (`[header][rank0 window][rank1 window]…`), and the
//! per-rank `CommContext` a kernel reaches through the `device_ctx` scalar.
//!
//! The host creates the file ([`DomainFile::create`]) and hands it to every member chip;
//! each chip maps it, zeroes its own window, builds its `CommContext` **in its own address
//! space** (`windowsIn[i]` = that process's address of rank i's window, `rankId` / `rankNum`
//! relative to the domain) and counts itself in the header's `ready_count`
//! ([`join`]). Kernels then compute a peer's address as
//! `local + (windowsIn[peer] - windowsIn[rankId])` and use plain loads, stores and 32-bit
//! atomics on the shared mapping; no runtime call is on the data path.
//!
//! The layout of [`CommContext`] is Simpler's (1056 bytes) and is mirrored by
//! `include/pto/pto_comm_sim.h`, which kernels include.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::chip_process::shm::{Mapping, SharedFile};

/// Bytes before the first window.
pub const HEADER_BYTES: usize = 4096;
/// Most ranks a `CommContext` describes.
pub const MAX_RANKS: usize = 64;
/// `"PTOCOMM1"`: the header's first word.
pub const MAGIC: u64 = 0x314D_4D4F_434F_5450;

/// Simpler's `CommContext` (field names and byte offsets are the contract).
#[repr(C)]
#[allow(non_snake_case)] // Simpler's field names
#[derive(Clone, Copy, Debug)]
pub struct CommContext {
    /// Scratch workspace (unused on the CPU: 0).
    pub workSpace: u64,
    /// Its size (0).
    pub workSpaceSize: u64,
    /// This rank's index in the domain.
    pub rankId: u32,
    /// Ranks in the domain.
    pub rankNum: u32,
    /// Bytes per window.
    pub winSize: u64,
    /// Rank i's window, as an address of the process that owns this context.
    pub windowsIn: [u64; MAX_RANKS],
    /// Same as `windowsIn` (one shared mapping serves both directions).
    pub windowsOut: [u64; MAX_RANKS],
}

const _: () = assert!(std::mem::size_of::<CommContext>() == 1056);
const _: () = assert!(std::mem::offset_of!(CommContext, rankId) == 16);
const _: () = assert!(std::mem::offset_of!(CommContext, winSize) == 24);
const _: () = assert!(std::mem::offset_of!(CommContext, windowsIn) == 32);
const _: () = assert!(std::mem::offset_of!(CommContext, windowsOut) == 544);

/// The domain header at the start of the file.
#[repr(C)]
pub struct DomainHeader {
    /// [`MAGIC`].
    pub magic: AtomicU64,
    /// Ranks in the domain.
    pub nranks: AtomicU32,
    /// Set by the host once the header is written.
    pub alloc_done: AtomicU32,
    /// Ranks whose window is zeroed and whose context is built.
    pub ready_count: AtomicU32,
    /// A counter kernels may use for a barrier (`barrier_phase` flips per round).
    pub barrier_count: AtomicU32,
    /// See `barrier_count`.
    pub barrier_phase: AtomicU32,
    /// Ranks that released the domain.
    pub destroy_count: AtomicU32,
    /// Bytes per window.
    pub per_rank_win_size: AtomicU64,
}

const _: () = assert!(std::mem::size_of::<DomainHeader>() <= HEADER_BYTES);

/// Why a domain cannot be laid out.
#[derive(Debug, thiserror::Error)]
pub enum DomainError {
    /// Zero or more than [`MAX_RANKS`] ranks.
    #[error("a comm domain has between 1 and {MAX_RANKS} ranks, got {0}")]
    Ranks(usize),
    /// A zero window.
    #[error("allocate_domain: window_size must be positive")]
    Window,
    /// The file could not be created, sized or mapped.
    #[error("cannot create the comm domain's shared memory ({0})")]
    Io(#[from] std::io::Error),
    /// The file is not a domain this runtime laid out.
    #[error("the comm domain's shared memory has no valid header (magic or rank count differs)")]
    Header,
    /// The windows could not be made reachable for the PTO-ISA bounds check.
    #[error("cannot register the comm domain's windows as shared GM: {0}")]
    SharedGm(#[from] pto_runtime::shared_gm::SharedGmError),
}

/// Total bytes of a domain of `nranks` windows of `window_size` bytes.
pub fn domain_bytes(nranks: usize, window_size: usize) -> Option<usize> {
    window_size.checked_mul(nranks)?.checked_add(HEADER_BYTES)
}

/// The host's handle of one domain's shared memory.
pub struct DomainFile {
    /// The file (its descriptor is sent to every member chip).
    pub file: SharedFile,
    /// Ranks.
    pub nranks: usize,
    /// Bytes per window.
    pub window_size: usize,
    header: Mapping,
}

impl DomainFile {
    /// Creates and sizes the file and writes its header.
    pub fn create(nranks: usize, window_size: usize) -> Result<DomainFile, DomainError> {
        if nranks == 0 || nranks > MAX_RANKS {
            return Err(DomainError::Ranks(nranks));
        }
        if window_size == 0 {
            return Err(DomainError::Window);
        }
        let total = domain_bytes(nranks, window_size).ok_or(DomainError::Window)?;
        let file = SharedFile::create("pto-comm-domain", total)?;
        let header = Mapping::new(file.fd(), 0, HEADER_BYTES)?;
        // SAFETY: the mapping is HEADER_BYTES long and page aligned; the header is atomics.
        let h = unsafe { &*header.base().cast::<DomainHeader>() };
        h.nranks.store(nranks as u32, Ordering::Relaxed);
        h.per_rank_win_size
            .store(window_size as u64, Ordering::Relaxed);
        h.magic.store(MAGIC, Ordering::Relaxed);
        h.alloc_done.store(1, Ordering::Release);
        Ok(DomainFile {
            file,
            nranks,
            window_size,
            header,
        })
    }

    /// Ranks that finished [`join`].
    pub fn ready_count(&self) -> u32 {
        // SAFETY: as in `create`.
        unsafe { &*self.header.base().cast::<DomainHeader>() }
            .ready_count
            .load(Ordering::Acquire)
    }
}

/// One chip's membership of a domain: its mapping and its context (which must stay at a
/// fixed address while kernels may read it).
pub struct Joined {
    /// The whole file, mapped in this process.
    pub mapping: Mapping,
    /// This rank's context (boxed: its address is the `device_ctx` scalar).
    pub context: Box<CommContext>,
    /// This rank's window, as an address of this process.
    pub local_window_base: u64,
    /// The domain's windows as GM the PTO-ISA header's bounds check accepts (a kernel
    /// reaches a peer's window through an address it computes, not through a tensor).
    _shared_gm: pto_runtime::shared_gm::SharedGmRange,
}

/// In a chip process: maps the domain file `fd` (of `total` bytes), zeroes window `rank`,
/// builds the rank's context and counts it ready.
pub fn join(
    fd: std::os::fd::RawFd,
    total: usize,
    rank: usize,
    nranks: usize,
    window_size: usize,
) -> Result<Joined, DomainError> {
    if nranks == 0 || nranks > MAX_RANKS || rank >= nranks {
        return Err(DomainError::Ranks(nranks));
    }
    if domain_bytes(nranks, window_size) != Some(total) {
        return Err(DomainError::Header);
    }
    let mapping = Mapping::new(fd, 0, total)?;
    // SAFETY: the mapping starts with the header the host wrote.
    let h = unsafe { &*mapping.base().cast::<DomainHeader>() };
    if h.magic.load(Ordering::Acquire) != MAGIC
        || h.nranks.load(Ordering::Acquire) as usize != nranks
        || h.per_rank_win_size.load(Ordering::Acquire) as usize != window_size
    {
        return Err(DomainError::Header);
    }
    let base = mapping.base() as u64 + HEADER_BYTES as u64;
    let mut context = Box::new(CommContext {
        workSpace: 0,
        workSpaceSize: 0,
        rankId: rank as u32,
        rankNum: nranks as u32,
        winSize: window_size as u64,
        windowsIn: [0; MAX_RANKS],
        windowsOut: [0; MAX_RANKS],
    });
    for i in 0..nranks {
        context.windowsIn[i] = base + (i * window_size) as u64;
        context.windowsOut[i] = context.windowsIn[i];
    }
    // SAFETY: this rank's window lies inside the mapping; no kernel runs in this domain yet.
    unsafe {
        std::ptr::write_bytes(
            mapping.base().add(HEADER_BYTES + rank * window_size),
            0,
            window_size,
        )
    };
    let windows = context.windowsIn[0];
    let shared_gm =
        pto_runtime::shared_gm::register(windows, windows + (nranks * window_size) as u64)?;
    h.ready_count.fetch_add(1, Ordering::AcqRel);
    let local_window_base = context.windowsIn[rank];
    Ok(Joined {
        mapping,
        context,
        local_window_base,
        _shared_gm: shared_gm,
    })
}

impl Joined {
    /// The `device_ctx` scalar: this rank's context's address.
    pub fn device_ctx(&self) -> u64 {
        &*self.context as *const CommContext as u64
    }

    /// Counts this rank out of the domain (the mapping goes when `self` drops).
    pub fn release(&self) {
        // SAFETY: the mapping starts with the header.
        unsafe { &*self.mapping.base().cast::<DomainHeader>() }
            .destroy_count
            .fetch_add(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_ranks_see_each_others_windows_through_their_contexts() {
        let d = DomainFile::create(2, 256).unwrap();
        let total = domain_bytes(2, 256).unwrap();
        let r0 = join(d.file.fd(), total, 0, 2, 256).unwrap();
        let r1 = join(d.file.fd(), total, 1, 2, 256).unwrap();
        assert_eq!(d.ready_count(), 2);
        // Rank 0 stores into rank 1's window through the peer formula; rank 1 reads it.
        let c0 = &*r0.context;
        let peer = r0.local_window_base + (c0.windowsIn[1] - c0.windowsIn[0]);
        // SAFETY: inside rank 0's mapping of rank 1's window.
        unsafe { *(peer as *mut u32) = 0xC0FFEE };
        // SAFETY: rank 1's own window in its mapping.
        assert_eq!(unsafe { *(r1.local_window_base as *const u32) }, 0xC0FFEE);
        assert_eq!((r1.context.rankId, r1.context.rankNum), (1, 2));
        assert!(join(d.file.fd(), total, 2, 2, 256).is_err());
        assert!(join(d.file.fd(), total + 1, 0, 2, 256).is_err());
        assert!(matches!(
            DomainFile::create(0, 8),
            Err(DomainError::Ranks(0))
        ));
        assert!(matches!(DomainFile::create(2, 0), Err(DomainError::Window)));
    }
}
