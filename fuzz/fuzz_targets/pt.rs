//! torch `.pt`: the in-memory decoder and the file reader agree, a decoded
//! tensor re-encodes (both byte orders) to a file that decodes the same, and
//! the restricted pickle interpreter never panics on raw bytes either (an
//! input that is no zip archive still exercises it).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pto_build_output::pt::pickle::parse_tensor_pickle;
use pto_build_output::pt::{decode_pt, encode_pt, ByteOrder};
use pto_build_output::read_pt;

fuzz_target!(|data: &[u8]| {
    if let Ok(spec) = parse_tensor_pickle(data) {
        assert_eq!(spec.size.len(), spec.stride.len());
    }
    let name = Path::new("x.pt");
    let decoded = decode_pt(data, name);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("x.pt");
    std::fs::write(&path, data).expect("write input");
    let read = read_pt(&path);
    match (&decoded, &read) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        // The same message after the file name (which differs).
        (Err(a), Err(b)) => assert_eq!(
            a.to_string().strip_prefix("x.pt").map(str::to_string),
            b.to_string()
                .strip_prefix(&path.display().to_string())
                .map(str::to_string)
        ),
        _ => panic!("decode {decoded:?} but read {read:?}"),
    }
    if let Ok(array) = decoded {
        let _ = array.to_f64_vec();
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let bytes = encode_pt(&array, order).expect("a decoded tensor encodes");
            assert_eq!(decode_pt(&bytes, name).expect("re-decodes"), array);
        }
    }
});
