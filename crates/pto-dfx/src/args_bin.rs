//! `args_dump/args.bin`: tensor payloads, and the gather that makes them.
//!
//! The file is the concatenation of payloads in **collection order** (not
//! manifest order), with no header, padding or alignment; each manifest entry
//! points at its payload with `bin_offset` / `bin_size`, so offsets in the
//! sorted manifest need not grow. Each payload is the tensor's logical view
//! gathered in row-major (C) order: element `(i0, .., in)` comes from element
//! index `start_offset + Σ i_d·strides[d]` of the storage, in native
//! little-endian bytes, so `bin_size = numel·elem_size` unless truncated.
//!
//! [`StridedView::gather`] (or [`gather_logical`]) produces a payload from
//! the storage bytes, with every index checked against the slice;
//! [`ArgsBinWriter`] appends payloads and hands back their spans;
//! [`ArgsBin`] reads the file and slices payloads for manifest entries;
//! [`ArgsBin::read_for`] reads only the bytes a manifest's entries reach, so
//! a manifest claiming huge payloads costs nothing past the file's real
//! length, and the buffer is reserved fallibly.

use std::path::{Path, PathBuf};

use crate::args_dump::{numel, ArgRecord};
use crate::atomic::AtomicFile;
use crate::error::{Problem, ReadError, WriteError};
use crate::json;

/// Why a view cannot be gathered from the given storage.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GatherError {
    /// `shape` and `strides` have different lengths.
    #[error("shape has {shape} dimensions but strides has {strides}")]
    RankMismatch {
        /// `shape.len()`.
        shape: usize,
        /// `strides.len()`.
        strides: usize,
    },
    /// The view reaches past the end of the storage.
    #[error("the view needs {needed} bytes of storage but only {available} are given")]
    OutOfBounds {
        /// Bytes from the storage start to the end of the view's last element.
        needed: u64,
        /// The storage length.
        available: u64,
    },
    /// Sizes overflow 64 bits (or the address space).
    #[error("the view's size overflows")]
    Overflow,
    /// The gathered bytes cannot be allocated.
    #[error("the view's {bytes} logical bytes cannot be allocated")]
    TooLarge {
        /// The bytes the gather needs.
        bytes: usize,
    },
    /// The element size is 0 (an unknown dtype).
    #[error("the element size is 0")]
    ZeroElemSize,
}

/// A strided tensor view over some storage, in element units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StridedView<'a> {
    /// Bytes per element.
    pub elem_size: usize,
    /// Dimensions; empty for a 0-d (single-element) view.
    pub shape: &'a [u64],
    /// Per-dimension strides in elements, same length as `shape`.
    pub strides: &'a [u64],
    /// Index of element `(0, .., 0)` in the storage, in elements.
    pub start_offset: u64,
}

impl StridedView<'_> {
    /// Number of logical elements (1 for a 0-d view).
    pub fn numel(&self) -> u64 {
        numel(self.shape)
    }

    /// Whether the strides are row-major contiguous (dimensions of size 1 are
    /// ignored), so the view is one run of storage.
    pub fn is_row_major(&self) -> bool {
        let mut expected: u64 = 1;
        for (&dim, &stride) in self.shape.iter().zip(self.strides).rev() {
            if dim != 1 && stride != expected {
                return false;
            }
            expected = expected.saturating_mul(dim);
        }
        true
    }

    /// Bytes of storage, from its start, that the view touches: the end of
    /// its last element (0 for an empty view).
    pub fn storage_extent(&self) -> Result<u64, GatherError> {
        self.check_rank()?;
        if self.shape.contains(&0) {
            return Ok(0);
        }
        let mut last = self.start_offset;
        for (&dim, &stride) in self.shape.iter().zip(self.strides) {
            let step = (dim - 1).checked_mul(stride).ok_or(GatherError::Overflow)?;
            last = last.checked_add(step).ok_or(GatherError::Overflow)?;
        }
        last.checked_add(1)
            .and_then(|n| n.checked_mul(self.elem_size as u64))
            .ok_or(GatherError::Overflow)
    }

    fn check_rank(&self) -> Result<(), GatherError> {
        if self.shape.len() != self.strides.len() {
            return Err(GatherError::RankMismatch {
                shape: self.shape.len(),
                strides: self.strides.len(),
            });
        }
        if self.elem_size == 0 {
            return Err(GatherError::ZeroElemSize);
        }
        Ok(())
    }

    /// The logical bytes in row-major order.
    pub fn gather(&self, storage: &[u8]) -> Result<Vec<u8>, GatherError> {
        self.gather_prefix(storage, usize::MAX)
    }

    /// The first `max_bytes` logical bytes (all of them if fewer), for a
    /// payload truncated to the dump arena.
    pub fn gather_prefix(&self, storage: &[u8], max_bytes: usize) -> Result<Vec<u8>, GatherError> {
        let extent = self.storage_extent()?;
        if extent > storage.len() as u64 {
            return Err(GatherError::OutOfBounds {
                needed: extent,
                available: storage.len() as u64,
            });
        }
        let total = self
            .numel()
            .checked_mul(self.elem_size as u64)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or(GatherError::Overflow)?;
        let want = total.min(max_bytes);
        if want == 0 {
            return Ok(Vec::new());
        }
        // Every index below is within `extent <= storage.len()`, checked above,
        // so the narrowing casts and slices cannot fail.
        let es = self.elem_size;
        let start = self.start_offset as usize * es;
        if self.is_row_major() {
            // Row-major: the logical bytes are one run, `want <= extent - start`.
            return Ok(storage[start..start + want].to_vec());
        }
        // A broadcast view (stride 0) can name far more logical bytes than
        // the storage holds: reserve fallibly.
        let mut out = Vec::new();
        out.try_reserve_exact(want)
            .map_err(|_| GatherError::TooLarge { bytes: want })?;
        let rank = self.shape.len();
        // rank >= 1 here: a 0-d view is row-major.
        let inner_len = self.shape[rank - 1] as usize;
        let inner_stride = self.strides[rank - 1] as usize;
        let mut index = vec![0u64; rank - 1];
        loop {
            let base = self.start_offset as usize
                + index
                    .iter()
                    .zip(self.strides)
                    .map(|(&i, &s)| (i * s) as usize)
                    .sum::<usize>();
            if inner_stride == 1 {
                out.extend_from_slice(&storage[base * es..(base + inner_len) * es]);
            } else {
                for k in 0..inner_len {
                    let at = (base + k * inner_stride) * es;
                    out.extend_from_slice(&storage[at..at + es]);
                }
            }
            if out.len() >= want {
                out.truncate(want);
                return Ok(out);
            }
            // Advance the outer index (odometer over dimensions 0..rank-1).
            let mut d = rank - 1;
            loop {
                if d == 0 {
                    return Ok(out);
                }
                d -= 1;
                index[d] += 1;
                if index[d] < self.shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
    }
}

/// Gathers the strided view `(elem_size, shape, strides, start_offset)` of
/// `storage` into logical row-major bytes.
pub fn gather_logical(
    storage: &[u8],
    elem_size: usize,
    shape: &[u64],
    strides: &[u64],
    start_offset: u64,
) -> Result<Vec<u8>, GatherError> {
    StridedView {
        elem_size,
        shape,
        strides,
        start_offset,
    }
    .gather(storage)
}

/// Where a payload landed in `args.bin`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinSpan {
    /// `bin_offset`.
    pub offset: u64,
    /// `bin_size`.
    pub size: u64,
}

/// Writes `args.bin` payload by payload; the file appears atomically at
/// [`finish`](Self::finish). Dropping the writer abandons the file.
#[derive(Debug)]
pub struct ArgsBinWriter {
    file: AtomicFile,
    len: u64,
}

impl ArgsBinWriter {
    /// Starts `path` (normally `<prefix>/args_dump/args.bin`), creating directories.
    pub fn create(path: &Path) -> Result<Self, WriteError> {
        Ok(Self {
            file: AtomicFile::create(path)?,
            len: 0,
        })
    }

    /// Appends one payload and returns its span. An empty payload gets
    /// offset 0, as Simpler writes `bin_offset` 0 whenever `bin_size` is 0.
    pub fn append(&mut self, payload: &[u8]) -> Result<BinSpan, WriteError> {
        if payload.is_empty() {
            return Ok(BinSpan { offset: 0, size: 0 });
        }
        self.file.write_all(payload)?;
        let span = BinSpan {
            offset: self.len,
            size: payload.len() as u64,
        };
        self.len += span.size;
        Ok(span)
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Publishes the file.
    pub fn finish(self) -> Result<(), WriteError> {
        self.file.commit()
    }
}

/// Why an entry's payload cannot be sliced from `args.bin`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PayloadError {
    /// `bin_offset + bin_size` is past the end of the file.
    #[error("bin_offset {offset} + bin_size {size} is past the end of {} ({len} bytes)", path.display())]
    OutOfRange {
        /// The payload file.
        path: PathBuf,
        /// `bin_offset`.
        offset: u64,
        /// `bin_size`.
        size: u64,
        /// The file length.
        len: u64,
    },
}

/// The longest `args.bin` [`ArgsBin::read_for`] takes (64 GiB).
pub const MAX_BIN_BYTES: u64 = 64 << 30;

/// The content of an `args.bin`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgsBin {
    /// Where it was read from.
    pub path: PathBuf,
    /// All payload bytes.
    pub bytes: Vec<u8>,
}

impl ArgsBin {
    /// Reads the whole file (at most [`crate::MAX_FILE_BYTES`]).
    pub fn read(path: &Path) -> Result<Self, ReadError> {
        Ok(Self {
            path: path.to_path_buf(),
            bytes: json::read_file(path)?,
        })
    }

    /// Reads the part of the file `entries` reach: up to the largest
    /// `bin_offset + bin_size` among them, never more than the file holds
    /// (entries past its end are then reported by [`ArgsBin::check`]), and
    /// at most [`MAX_BIN_BYTES`].
    pub fn read_for(path: &Path, entries: &[ArgRecord]) -> Result<Self, ReadError> {
        let reach = entries
            .iter()
            .filter(|e| e.bin_size > 0)
            .map(|e| e.bin_offset.saturating_add(e.bin_size))
            .max()
            .unwrap_or(0);
        Ok(Self {
            path: path.to_path_buf(),
            bytes: json::read_prefix(path, reach, MAX_BIN_BYTES)?,
        })
    }

    /// The payload bytes of `entry` (empty when `bin_size` is 0).
    pub fn payload(&self, entry: &ArgRecord) -> Result<&[u8], PayloadError> {
        self.slice(entry.bin_offset, entry.bin_size)
    }

    /// The bytes at `offset..offset + size`.
    pub fn slice(&self, offset: u64, size: u64) -> Result<&[u8], PayloadError> {
        let err = || PayloadError::OutOfRange {
            path: self.path.clone(),
            offset,
            size,
            len: self.bytes.len() as u64,
        };
        if size == 0 {
            return Ok(&[]);
        }
        let start = usize::try_from(offset).map_err(|_| err())?;
        let end = start
            .checked_add(usize::try_from(size).map_err(|_| err())?)
            .ok_or_else(err)?;
        self.bytes.get(start..end).ok_or_else(err)
    }

    /// Whether a manifest's `entries` and an `args.bin` of `len` bytes belong to the same
    /// run: the writer (ours and Simpler's) appends each stored payload once, so the spans
    /// with `bin_size > 0` tile `0..len` exactly, without gaps or overlaps. The first
    /// disagreement, as text; `None` when they fit.
    pub fn pairing_problem(len: u64, entries: &[ArgRecord]) -> Option<String> {
        let mut spans: Vec<(u64, u64, usize)> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.bin_size > 0)
            .map(|(i, e)| (e.bin_offset, e.bin_size, i))
            .collect();
        spans.sort_unstable();
        let mut end = 0u64;
        for &(offset, size, i) in &spans {
            if offset < end {
                return Some(format!(
                    "args[{i}]'s payload at {offset}..{} overlaps the previous one (ending at {end})",
                    offset.saturating_add(size)
                ));
            }
            if offset > end {
                return Some(format!(
                    "bytes {end}..{offset} of args.bin belong to no entry (args[{i}] starts at {offset})"
                ));
            }
            end = offset.saturating_add(size);
        }
        (end != len).then(|| {
            format!("args.bin is {len} bytes, but the manifest's payloads end at byte {end}")
        })
    }

    /// One problem per entry whose payload is out of range, keyed `args[i]`.
    pub fn check(&self, entries: &[ArgRecord]) -> Vec<Problem> {
        entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                self.payload(e)
                    .err()
                    .map(|err| Problem::new(format!("args[{i}]"), err.to_string()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Storage of `n` u16 elements whose value is their index.
    fn storage(n: u16) -> Vec<u8> {
        (0..n).flat_map(u16::to_le_bytes).collect()
    }

    fn values(bytes: &[u8]) -> Vec<u16> {
        bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    }

    fn check(shape: &[u64], strides: &[u64], start: u64, expected: &[u16]) {
        let got = gather_logical(&storage(64), 2, shape, strides, start).unwrap();
        assert_eq!(
            values(&got),
            expected,
            "shape {shape:?} strides {strides:?} start {start}"
        );
    }

    #[test]
    fn gathers_views_in_row_major_order() {
        check(&[2, 2], &[2, 1], 0, &[0, 1, 2, 3]);
        check(&[2, 2], &[2, 1], 5, &[5, 6, 7, 8]);
        // Transposed.
        check(&[2, 3], &[1, 2], 0, &[0, 2, 4, 1, 3, 5]);
        // Column slice of an 4x8 row-major matrix, starting at column 3.
        check(&[4, 2], &[8, 1], 3, &[3, 4, 11, 12, 19, 20, 27, 28]);
        // Every other element.
        check(&[3], &[2], 1, &[1, 3, 5]);
        // 3-d with a size-1 dimension (still row-major).
        check(&[1, 2, 2], &[100, 2, 1], 0, &[0, 1, 2, 3]);
        check(&[2, 2, 2], &[16, 4, 1], 0, &[0, 1, 4, 5, 16, 17, 20, 21]);
        // 0-d: one element.
        check(&[], &[], 9, &[9]);
        // Empty.
        check(&[0, 4], &[4, 1], 0, &[]);
    }

    #[test]
    fn prefix_truncates_the_logical_bytes() {
        let view = StridedView {
            elem_size: 2,
            shape: &[2, 3],
            strides: &[1, 2],
            start_offset: 0,
        };
        let got = view.gather_prefix(&storage(8), 5).unwrap();
        assert_eq!(got, vec![0, 0, 2, 0, 4]);
    }

    #[test]
    fn bad_views_are_errors() {
        let s = storage(4);
        assert_eq!(
            gather_logical(&s, 2, &[2, 2], &[2, 1], 1),
            Err(GatherError::OutOfBounds {
                needed: 10,
                available: 8
            })
        );
        assert_eq!(
            gather_logical(&s, 2, &[2], &[1, 1], 0),
            Err(GatherError::RankMismatch {
                shape: 1,
                strides: 2
            })
        );
        assert_eq!(
            gather_logical(&s, 2, &[u64::MAX, 2], &[u64::MAX, 1], 0),
            Err(GatherError::Overflow)
        );
        assert_eq!(
            gather_logical(&s, 0, &[1], &[1], 0),
            Err(GatherError::ZeroElemSize)
        );
    }
}
