//! PyTorch `.pt` files: one tensor as `torch.save(t, path)` writes it, read
//! and written without Python.
//!
//! The file is a zip archive of stored (uncompressed) records under one root
//! folder (`<root>/`, the file's stem or `archive`):
//!
//! | record | content |
//! |---|---|
//! | `data.pkl` | the pickled `torch._utils._rebuild_tensor_v2(...)` call ([`pickle`]) |
//! | `data/<key>` | the raw bytes of the storage the tensor views |
//! | `byteorder` | `little` or `big`: the storages' byte order (absent in old files: little) |
//! | `version`, `.format_version`, `.storage_alignment` | format markers |
//!
//! [`read_pt`] returns the tensor made contiguous as an [`NpyArray`] (C
//! order, little-endian, the in-memory form every tensor file here reads
//! into): any strides and storage offset are gathered, a big-endian file is
//! byte-swapped. [`write_pt`] writes a contiguous little-endian tensor the
//! way `torch.save` does (64-byte aligned records), and [`encode_pt`] can
//! write big-endian files too.
//!
//! The zip archive is read by the `zip` crate; the pickle by this crate's
//! restricted interpreter, which refuses every global that is not part of a
//! saved tensor and never runs anything ([`pickle`]).
//!
//! Bounded work: `data.pkl` is at most [`MAX_PICKLE_BYTES`]; the storage a
//! tensor views must lie inside its record, which must lie inside the file,
//! before any buffer for it is reserved (fallibly); and the contiguous
//! result may be larger than the file only up to [`MAX_EXPANSION_BYTES`]
//! (a broadcast view with stride 0 saves one element for many).

pub mod pickle;

use std::io::{Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use zip::result::ZipError;
use zip::CompressionMethod;

use crate::dtype::DType;
use crate::fs::WriteError;
use crate::npy::{NpyArray, NpyError};
use pickle::{PickleError, TensorSpec};

/// The longest `data.pkl` read (1 MiB; a tensor's is about 200 bytes).
pub const MAX_PICKLE_BYTES: u64 = 1 << 20;

/// How much larger than its file a tensor may grow when made contiguous
/// (broadcast views): 64 MiB.
pub const MAX_EXPANSION_BYTES: u64 = 64 << 20;

/// The byte order of a `.pt` file's storages (its `byteorder` record).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ByteOrder {
    /// `little` (what torch writes on x86 and ARM).
    #[default]
    Little,
    /// `big`.
    Big,
}

impl ByteOrder {
    fn record(self) -> &'static str {
        match self {
            ByteOrder::Little => "little",
            ByteOrder::Big => "big",
        }
    }
}

/// Reading or writing a `.pt` file failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PtError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not one tensor as `torch.save` writes it.
    #[error("{}: {message}; save one tensor with torch.save(tensor, path)", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The pickle uses something a saved tensor never does.
    #[error("{}: {source}", path.display())]
    Pickle {
        /// The file.
        path: PathBuf,
        /// What the pickle holds.
        #[source]
        source: PickleError,
    },
    /// The memory for the tensor cannot be had.
    #[error("{}: cannot allocate {bytes} bytes for the tensor; it is larger than this machine's memory", path.display())]
    Alloc {
        /// The file.
        path: PathBuf,
        /// Bytes needed.
        bytes: u64,
    },
    /// The array to write is inconsistent.
    #[error(transparent)]
    Array(#[from] NpyError),
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] WriteError),
}

impl PtError {
    /// True when the error means the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, PtError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Reads the tensor `torch.save` wrote to `path` (see the module docs).
pub fn read_pt(path: &Path) -> Result<NpyArray, PtError> {
    let io_err = |source| PtError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    read_pt_from(std::io::BufReader::new(file), len, path)
}

/// Parses the bytes of a whole `.pt` file; `path_for_errors` names it in errors.
pub fn decode_pt(bytes: &[u8], path_for_errors: &Path) -> Result<NpyArray, PtError> {
    read_pt_from(Cursor::new(bytes), bytes.len() as u64, path_for_errors)
}

/// Reads into `buf` until it is full or the input ends; the bytes read.
fn read_up_to<R: Read>(reader: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match reader.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn zip_message(e: &ZipError) -> String {
    match e {
        ZipError::UnsupportedArchive(m) => format!("an unsupported zip archive ({m})"),
        other => format!("not a readable zip archive ({other}); the file may be truncated"),
    }
}

/// Reads a `.pt` archive of `archive_len` bytes from `reader`.
///
/// The steps: refuse a legacy pickle stream (`refuse_legacy_pickle`), find the
/// root folder (`archive_root`), read `data.pkl` and the byte order, plan the
/// view, locate and bound-check the storage record (`storage_record`,
/// `check_storage_fits`), then read its bytes and make them a contiguous
/// little-endian array (`read_span`, `into_array`).
pub fn read_pt_from<R: Read + Seek>(
    reader: R,
    archive_len: u64,
    path: &Path,
) -> Result<NpyArray, PtError> {
    let invalid = |message: String| PtError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let mut reader = reader;
    refuse_legacy_pickle(&mut reader, path)?;
    let mut archive = zip::ZipArchive::new(reader).map_err(|e| invalid(zip_message(&e)))?;
    let root = archive_root(&archive).map_err(invalid)?;
    let pickle_name = format!("{root}/data.pkl");
    let pickle_bytes = read_small_record(&mut archive, &pickle_name, MAX_PICKLE_BYTES)
        .map_err(invalid)?
        .ok_or_else(|| invalid(format!("there is no {pickle_name} record")))?;
    let order = read_byte_order(&mut archive, &root).map_err(invalid)?;
    let spec = pickle::parse_tensor_pickle(&pickle_bytes).map_err(|source| PtError::Pickle {
        path: path.to_path_buf(),
        source,
    })?;
    let plan = plan_view(&spec).map_err(invalid)?;
    let storage_name = format!("{root}/data/{}", spec.storage.key);
    let (data_start, record_len) = storage_record(&mut archive, &storage_name).map_err(invalid)?;
    check_storage_fits(
        &spec,
        &plan,
        &storage_name,
        data_start,
        record_len,
        archive_len,
    )
    .map_err(invalid)?;
    let raw = read_span(archive.into_inner(), &plan, &storage_name, data_start, path)?;
    into_array(&spec, &plan, raw, order, path)
}

/// Refuses a legacy pickle stream (its first two bytes are a pickle `PROTO`
/// opcode): torch.save before 1.6, or with `_use_new_zipfile_serialization=False`,
/// wrote that instead of a zip archive. Leaves `reader` at its start.
fn refuse_legacy_pickle<R: Read + Seek>(reader: &mut R, path: &Path) -> Result<(), PtError> {
    let read_err = |source| PtError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut head = [0u8; 2];
    let got = read_up_to(reader, &mut head).map_err(read_err)?;
    reader.seek(SeekFrom::Start(0)).map_err(read_err)?;
    if got == 2 && head[0] == 0x80 && (2..=5).contains(&head[1]) {
        return Err(PtError::Invalid {
            path: path.to_path_buf(),
            message: String::from(
                "a legacy torch.save file (a pickle stream, not the zip archive torch >= 1.6 writes), which is not read; re-save it with torch.save(tensor, path) from torch >= 1.6 (without _use_new_zipfile_serialization=False), or as .npy with numpy.save()",
            ),
        });
    }
    Ok(())
}

/// The archive's root folder: the first record's (as torch's reader takes it).
fn archive_root<R: Read + Seek>(archive: &zip::ZipArchive<R>) -> Result<String, String> {
    let first = archive
        .name_for_index(0)
        .and_then(Result::ok)
        .ok_or_else(|| String::from("the zip archive is empty"))?
        .into_owned();
    match first.split_once('/') {
        Some((root, _)) if !root.is_empty() => Ok(root.to_string()),
        _ => Err(format!("the first record {first:?} is not inside a folder")),
    }
}

/// The storages' byte order from the `<root>/byteorder` record (absent: little).
fn read_byte_order<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    root: &str,
) -> Result<ByteOrder, String> {
    match read_small_record(archive, &format!("{root}/byteorder"), 64)?.as_deref() {
        None | Some(b"little") => Ok(ByteOrder::Little),
        Some(b"big") => Ok(ByteOrder::Big),
        Some(other) => Err(format!(
            "the byteorder record says {:?} (little or big expected)",
            String::from_utf8_lossy(other)
        )),
    }
}

/// Where the stored (uncompressed) record `storage_name` starts in the file, and
/// its length.
fn storage_record<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    storage_name: &str,
) -> Result<(u64, u64), String> {
    let index = archive
        .index_for_name(storage_name)
        .ok_or_else(|| format!("the tensor's storage record {storage_name} is missing"))?;
    let entry = archive
        .by_index_raw(index)
        .map_err(|e| format!("cannot open {storage_name}: {e}"))?;
    if entry.compression() != CompressionMethod::Stored {
        return Err(format!(
            "{storage_name} is compressed ({}); torch.save stores records uncompressed",
            entry.compression()
        ));
    }
    let start = entry
        .data_start()
        .ok_or_else(|| format!("cannot locate the data of {storage_name}"))?;
    Ok((start, entry.size()))
}

/// Checks, before any buffer is reserved, that the storage fits its record, the
/// view fits the storage, the record fits the file, and the contiguous result is
/// not more than [`MAX_EXPANSION_BYTES`] larger than the file.
fn check_storage_fits(
    spec: &TensorSpec,
    plan: &ViewPlan,
    storage_name: &str,
    data_start: u64,
    record_len: u64,
    archive_len: u64,
) -> Result<(), String> {
    let storage_bytes = spec
        .storage_bytes()
        .ok_or_else(|| String::from("the storage's size overflows"))?;
    if record_len < storage_bytes {
        return Err(format!(
            "{storage_name} holds {record_len} bytes but the storage of {} elements needs {storage_bytes}",
            spec.storage.numel
        ));
    }
    if plan.span_end > storage_bytes {
        return Err(format!(
            "the tensor (offset {}, size {:?}, stride {:?}) reaches byte {} of its {storage_bytes}-byte storage; the storage is shorter than the shape",
            spec.storage_offset, spec.size, spec.stride, plan.span_end
        ));
    }
    let end_in_file = data_start.checked_add(record_len);
    if end_in_file.is_none_or(|end| end > archive_len) {
        return Err(format!(
            "{storage_name} claims {record_len} bytes past the end of the {archive_len}-byte file"
        ));
    }
    if plan.out_bytes > archive_len.max(MAX_EXPANSION_BYTES) {
        return Err(format!(
            "the tensor needs {} bytes when made contiguous, far more than the {archive_len}-byte file holds (a broadcast view); save tensor.contiguous() instead",
            plan.out_bytes
        ));
    }
    Ok(())
}

/// Reads the bytes of the storage the view spans (the record starts at `data_start`).
fn read_span<R: Read + Seek>(
    mut reader: R,
    plan: &ViewPlan,
    storage_name: &str,
    data_start: u64,
    path: &Path,
) -> Result<Vec<u8>, PtError> {
    let read_err = |source| PtError::Read {
        path: path.to_path_buf(),
        source,
    };
    let span = plan.span_end - plan.span_start;
    let seek_to = data_start + plan.span_start;
    reader.seek(SeekFrom::Start(seek_to)).map_err(read_err)?;
    let mut raw = try_buffer(span, path)?;
    reader.take(span).read_to_end(&mut raw).map_err(read_err)?;
    if (raw.len() as u64) != span {
        return Err(PtError::Invalid {
            path: path.to_path_buf(),
            message: format!(
                "{storage_name} ends after {} of its {span} bytes",
                raw.len()
            ),
        });
    }
    Ok(raw)
}

/// The span's bytes made a contiguous little-endian array of the tensor's shape.
fn into_array(
    spec: &TensorSpec,
    plan: &ViewPlan,
    raw: Vec<u8>,
    order: ByteOrder,
    path: &Path,
) -> Result<NpyArray, PtError> {
    let invalid = |message: String| PtError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let mut data = if plan.contiguous {
        raw
    } else {
        gather(spec, plan, &raw, path)?
    };
    if order == ByteOrder::Big {
        swap_bytes(&mut data, spec.dtype.elem_size());
    }
    let shape = spec
        .size
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<usize>, _>>()
        .map_err(|_| invalid("a dimension does not fit this machine's usize".into()))?;
    NpyArray::new(spec.dtype, shape, data).map_err(|e| invalid(e.to_string()))
}

/// Reads a whole record of at most `limit` bytes (`None`: no such record).
fn read_small_record<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    name: &str,
    limit: u64,
) -> Result<Option<Vec<u8>>, String> {
    let mut entry = match archive.by_name(name) {
        Ok(e) => e,
        Err(ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(format!("cannot read {name}: {e}")),
    };
    if entry.size() > limit {
        return Err(format!(
            "{name} is {} bytes, more than the {limit} it may have",
            entry.size()
        ));
    }
    let mut out = Vec::new();
    (&mut entry)
        .take(limit + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    if out.len() as u64 > limit {
        return Err(format!("{name} is more than the {limit} bytes it may have"));
    }
    Ok(Some(out))
}

fn try_buffer(bytes: u64, path: &Path) -> Result<Vec<u8>, PtError> {
    let alloc = || PtError::Alloc {
        path: path.to_path_buf(),
        bytes,
    };
    let n = usize::try_from(bytes).map_err(|_| alloc())?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| alloc())?;
    Ok(v)
}

/// Where a view's bytes lie in its storage.
struct ViewPlan {
    /// First byte of the storage the view touches.
    span_start: u64,
    /// One past its last byte (`span_start` for an empty view).
    span_end: u64,
    /// Bytes of the contiguous result.
    out_bytes: u64,
    /// The view is the span itself, in C order.
    contiguous: bool,
}

fn plan_view(spec: &TensorSpec) -> Result<ViewPlan, String> {
    let es = spec.dtype.elem_size() as u64;
    let overflow = || "the tensor's size overflows".to_string();
    let numel = spec
        .size
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(overflow)?;
    let out_bytes = numel.checked_mul(es).ok_or_else(overflow)?;
    if isize::try_from(out_bytes).is_err() {
        return Err(overflow());
    }
    let start = spec.storage_offset.checked_mul(es).ok_or_else(overflow)?;
    if numel == 0 {
        return Ok(ViewPlan {
            span_start: start,
            span_end: start,
            out_bytes: 0,
            contiguous: true,
        });
    }
    let mut last = spec.storage_offset;
    for (&d, &s) in spec.size.iter().zip(&spec.stride) {
        last = (d - 1)
            .checked_mul(s)
            .and_then(|x| last.checked_add(x))
            .ok_or_else(overflow)?;
    }
    let span_end = last
        .checked_add(1)
        .and_then(|e| e.checked_mul(es))
        .ok_or_else(overflow)?;
    // C order: each stride is the product of the later sizes (a dimension
    // of extent 1 may have any stride).
    let mut expect = 1u64;
    let mut contiguous = true;
    for (&d, &s) in spec.size.iter().zip(&spec.stride).rev() {
        if d != 1 && s != expect {
            contiguous = false;
        }
        expect = expect.saturating_mul(d);
    }
    Ok(ViewPlan {
        span_start: start,
        span_end,
        out_bytes,
        contiguous,
    })
}

/// Copies a strided view out of `raw` (the storage from the view's first
/// element on) in C order.
fn gather(spec: &TensorSpec, plan: &ViewPlan, raw: &[u8], path: &Path) -> Result<Vec<u8>, PtError> {
    let es = spec.dtype.elem_size();
    let mut out = try_buffer(plan.out_bytes, path)?;
    let ndim = spec.size.len();
    // Sizes and strides fit usize: the span (their products) was bounded by
    // the file's length.
    let size: Vec<usize> = spec.size.iter().map(|&d| d as usize).collect();
    let stride: Vec<usize> = spec.stride.iter().map(|&s| s as usize).collect();
    let (inner_n, inner_s) = (size[ndim - 1], stride[ndim - 1]);
    let mut index = vec![0usize; ndim];
    loop {
        let base: usize = index.iter().zip(&stride).map(|(i, s)| i * s).sum();
        if inner_s == 1 {
            let from = base * es;
            out.extend_from_slice(&raw[from..from + inner_n * es]);
        } else {
            for k in 0..inner_n {
                let from = (base + k * inner_s) * es;
                out.extend_from_slice(&raw[from..from + es]);
            }
        }
        // Advance the outer index (all but the innermost dimension).
        let mut dim = ndim - 1;
        loop {
            if dim == 0 {
                return Ok(out);
            }
            dim -= 1;
            index[dim] += 1;
            if index[dim] < size[dim] {
                break;
            }
            index[dim] = 0;
        }
    }
}

fn swap_bytes(data: &mut [u8], elem_size: usize) {
    if elem_size > 1 {
        for chunk in data.chunks_exact_mut(elem_size) {
            chunk.reverse();
        }
    }
}

/// The bytes of a `.pt` file holding `array` with storages in `order`, as
/// `torch.save` lays it out (records in its order, 64-byte aligned).
pub fn encode_pt(array: &NpyArray, order: ByteOrder) -> Result<Vec<u8>, PtError> {
    array.check_data_len()?;
    let shape: Vec<u64> = array.shape.iter().map(|&d| d as u64).collect();
    let pickle = pickle::encode_tensor_pickle(array.dtype, &shape);
    let zip_err = |e: ZipError| {
        PtError::Write(WriteError {
            path: PathBuf::from("<memory>"),
            source: std::io::Error::other(e.to_string()),
        })
    };
    let mut out = Vec::new();
    out.try_reserve_exact(array.data.len().saturating_add(4096))
        .map_err(|_| PtError::Alloc {
            path: PathBuf::from("<memory>"),
            bytes: array.data.len() as u64 + 4096,
        })?;
    let mut zip = zip::ZipWriter::new(Cursor::new(out));
    let options = |len: usize| {
        zip::write::SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .with_alignment(64)
            .large_file(len as u64 >= u64::from(u32::MAX))
    };
    let record = |zip: &mut zip::ZipWriter<Cursor<Vec<u8>>>, name: &str, bytes: &[u8]| {
        zip.start_file(format!("archive/{name}"), options(bytes.len()))
            .map_err(zip_err)?;
        std::io::Write::write_all(zip, bytes).map_err(|e| zip_err(ZipError::Io(e)))
    };
    record(&mut zip, "data.pkl", &pickle)?;
    record(&mut zip, ".format_version", b"1")?;
    record(&mut zip, ".storage_alignment", b"64")?;
    record(&mut zip, "byteorder", order.record().as_bytes())?;
    if order == ByteOrder::Big && array.dtype.elem_size() > 1 {
        let mut swapped = array.data.clone();
        swap_bytes(&mut swapped, array.dtype.elem_size());
        record(&mut zip, "data/0", &swapped)?;
    } else {
        record(&mut zip, "data/0", &array.data)?;
    }
    record(&mut zip, "version", b"3\n")?;
    Ok(zip.finish().map_err(zip_err)?.into_inner())
}

/// Writes `array` to `path` as `torch.save(tensor, path)` would (little-endian),
/// atomically.
pub fn write_pt(path: &Path, array: &NpyArray) -> Result<(), PtError> {
    let bytes = encode_pt(array, ByteOrder::Little)?;
    crate::fs::write_atomic(path, &bytes)?;
    Ok(())
}

/// The element type of `dtype` in `torch`, for messages (`torch.float32`).
pub fn torch_dtype(dtype: DType) -> String {
    format!("torch.{}", dtype.host_name())
}

#[cfg(test)]
mod tests;
