//! `.npy`: the in-memory decoder and the streaming file reader agree, and
//! what decodes re-encodes to an array that decodes the same.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pto_build_output::npy::{decode_npy, encode_npy};
use pto_build_output::read_npy;

fuzz_target!(|data: &[u8]| {
    let name = Path::new("x.npy");
    let decoded = decode_npy(data, name);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("x.npy");
    std::fs::write(&path, data).expect("write input");
    let read = read_npy(&path);
    match (&decoded, &read) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        // The same message after the file name (which differs).
        (Err(a), Err(b)) => assert_eq!(
            a.to_string().strip_prefix("x.npy").map(str::to_string),
            b.to_string()
                .strip_prefix(&path.display().to_string())
                .map(str::to_string)
        ),
        _ => panic!("decode {decoded:?} but read {read:?}"),
    }
    if let Ok(array) = decoded {
        let _ = array.to_f64_vec();
        let bytes = encode_npy(&array).expect("a decoded array encodes");
        assert_eq!(decode_npy(&bytes, name).expect("re-decodes"), array);
    }
});
