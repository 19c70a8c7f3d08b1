//! Unit tests of the `.pt` reader and writer on archives built here (the
//! files real torch writes are tested in `tests/pt_torch.rs`).

use super::*;
use std::io::Write;

fn array(dtype: DType, shape: &[usize]) -> NpyArray {
    let n: usize = shape.iter().product();
    let values: Vec<f64> = (0..n).map(|i| (i % 100) as f64 - 7.0).collect();
    NpyArray::from_f64(dtype, shape, &values).unwrap()
}

fn decode(bytes: &[u8]) -> Result<NpyArray, String> {
    decode_pt(bytes, Path::new("t.pt")).map_err(|e| e.to_string())
}

#[test]
fn round_trips_every_dtype_both_orders() {
    for d in DType::ALL {
        for shape in [&[][..], &[5], &[2, 3], &[0, 4]] {
            let a = array(d, shape);
            for order in [ByteOrder::Little, ByteOrder::Big] {
                let bytes = encode_pt(&a, order).unwrap();
                assert_eq!(decode(&bytes).unwrap(), a, "{d} {shape:?} {order:?}");
            }
        }
    }
}

#[test]
fn records_are_aligned_and_in_torch_order() {
    let bytes = encode_pt(&array(DType::Float32, &[3]), ByteOrder::Little).unwrap();
    let mut z = zip::ZipArchive::new(Cursor::new(&bytes[..])).unwrap();
    let names: Vec<String> = z.file_names().map(|n| n.unwrap().into_owned()).collect();
    assert_eq!(
        names,
        [
            "archive/data.pkl",
            "archive/.format_version",
            "archive/.storage_alignment",
            "archive/byteorder",
            "archive/data/0",
            "archive/version"
        ]
    );
    let e = z.by_name("archive/data/0").unwrap();
    assert_eq!(e.data_start().unwrap() % 64, 0);
}

/// An archive with a hand-written pickle and storage.
fn archive(pickle: &[u8], storage: &[u8], byteorder: Option<&str>) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    zip.start_file("x/data.pkl", opts).unwrap();
    zip.write_all(pickle).unwrap();
    if let Some(b) = byteorder {
        zip.start_file("x/byteorder", opts).unwrap();
        zip.write_all(b.as_bytes()).unwrap();
    }
    zip.start_file("x/data/0", opts).unwrap();
    zip.write_all(storage).unwrap();
    zip.finish().unwrap().into_inner()
}

/// A `_rebuild_tensor_v2` pickle of an int32 view.
fn view_pickle(numel: u8, offset: u8, size: &[u8], stride: &[u8]) -> Vec<u8> {
    let tuple = |dims: &[u8]| {
        let mut t = vec![b'('];
        for &d in dims {
            t.extend_from_slice(&[b'K', d]);
        }
        t.push(b't');
        t
    };
    view_pickle_raw(numel, offset, &tuple(size), &tuple(stride))
}

/// The same, with the size and stride tuples as pickle bytes.
fn view_pickle_raw(numel: u8, offset: u8, size: &[u8], stride: &[u8]) -> Vec<u8> {
    let mut p = b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nIntStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK".to_vec();
    p.push(numel);
    p.extend_from_slice(b"tQK");
    p.push(offset);
    p.extend_from_slice(size);
    p.extend_from_slice(stride);
    p.extend_from_slice(b"\x89ccollections\nOrderedDict\n)RtR.");
    p
}

fn ints(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn strided_views_are_made_contiguous() {
    let storage = ints(&(0..12).collect::<Vec<_>>());
    // A transpose of a 3x4 matrix: size (4, 3), stride (1, 4).
    let t = decode(&archive(
        &view_pickle(12, 0, &[4, 3], &[1, 4]),
        &storage,
        None,
    ))
    .unwrap();
    assert_eq!(t.shape, [4, 3]);
    assert_eq!(
        t.to_f64_vec(),
        [0., 4., 8., 1., 5., 9., 2., 6., 10., 3., 7., 11.]
    );
    // A column slice with an offset: rows of 4, take column 2 of 3 rows.
    let t = decode(&archive(&view_pickle(12, 2, &[3], &[4]), &storage, None)).unwrap();
    assert_eq!(t.to_f64_vec(), [2., 6., 10.]);
    // A contiguous view at an offset.
    let t = decode(&archive(
        &view_pickle(12, 5, &[2, 2], &[2, 1]),
        &storage,
        None,
    ))
    .unwrap();
    assert_eq!(t.to_f64_vec(), [5., 6., 7., 8.]);
    // Broadcast (stride 0).
    let t = decode(&archive(
        &view_pickle(12, 1, &[2, 3], &[0, 1]),
        &storage,
        None,
    ))
    .unwrap();
    assert_eq!(t.to_f64_vec(), [1., 2., 3., 1., 2., 3.]);
    // Big-endian storage, gathered and swapped.
    let be: Vec<u8> = (0..12i32).flat_map(|v| v.to_be_bytes()).collect();
    let t = decode(&archive(
        &view_pickle(12, 0, &[4, 3], &[1, 4]),
        &be,
        Some("big"),
    ))
    .unwrap();
    assert_eq!(t.to_f64_vec()[..4], [0., 4., 8., 1.]);
}

#[test]
fn hostile_archives_are_clear_errors() {
    let storage = ints(&[1, 2, 3, 4]);
    let err = decode(&archive(&view_pickle(6, 0, &[6], &[1]), &storage, None)).unwrap_err();
    assert_eq!(
        err,
        "t.pt: x/data/0 holds 16 bytes but the storage of 6 elements needs 24; save one tensor with torch.save(tensor, path)"
    );
    let err = decode(&archive(&view_pickle(4, 1, &[4], &[1]), &storage, None)).unwrap_err();
    assert!(
        err.contains(
            "reaches byte 20 of its 16-byte storage; the storage is shorter than the shape"
        ),
        "{err}"
    );
    let err = decode(&archive(
        &view_pickle(4, 0, &[4], &[1]),
        &storage,
        Some("middle"),
    ))
    .unwrap_err();
    assert!(
        err.contains("the byteorder record says \"middle\""),
        "{err}"
    );
    let evil = b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00idq\x00\x85R.";
    let err = decode(&archive(evil, &storage, None)).unwrap_err();
    assert!(
        err.starts_with("t.pt: the pickle refers to the global `os.system`"),
        "{err}"
    );
    let good = encode_pt(&array(DType::Float32, &[8]), ByteOrder::Little).unwrap();
    for cut in [0, 10, good.len() / 2, good.len() - 1] {
        let err = decode(&good[..cut]).unwrap_err();
        assert!(
            err.contains("not a readable zip archive"),
            "cut {cut}: {err}"
        );
    }
    let err = decode(b"\x93NUMPY").unwrap_err();
    assert!(err.contains("not a readable zip archive"), "{err}");
    // A broadcast far larger than the file.
    let p = view_pickle_raw(
        1,
        0,
        b"(J\x00\x00\x00\x40J\x00\x00\x00\x40t",
        b"(K\x00K\x00t",
    );
    let err = decode(&archive(&p, &storage, None)).unwrap_err();
    assert!(err.contains("bytes when made contiguous"), "{err}");
}

#[test]
fn file_round_trip_and_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.pt");
    let a = array(DType::BFloat16, &[3, 2]);
    write_pt(&path, &a).unwrap();
    assert_eq!(read_pt(&path).unwrap(), a);
    let err = read_pt(&dir.path().join("no.pt")).unwrap_err();
    assert!(err.is_not_found());
}

/// A legacy (pre-1.6, non-zip) torch file was called "not a readable zip archive …; the
/// file may be truncated": it is named for what it is, with the fix.
#[test]
fn a_legacy_torch_file_is_named_as_such() {
    // torch's legacy format: a pickle stream (protocol 2) opening with its magic number.
    let legacy = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.\x80\x02M\xe9\x03.";
    let err = decode(legacy).unwrap_err();
    assert!(
        err.starts_with("t.pt: a legacy torch.save file (a pickle stream, not the zip archive torch >= 1.6 writes)"),
        "{err}"
    );
    assert!(!err.contains("truncated"), "{err}");
    // Something else that is not a zip is still reported as before.
    let err = decode(b"PK\x03\x04 cut").unwrap_err();
    assert!(err.contains("not a readable zip archive"), "{err}");
}
