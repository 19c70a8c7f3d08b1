//! `kernel_config.py`: the strict reader, the lenient name-map reader, and
//! the writer's fixed point (what the writer writes, the reader reads back
//! to the same text).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pto_build_output::{parse_name_map, KernelConfig};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let root = Path::new("/b");
    let file = Path::new("/b/kernel_config.py");
    let _ = parse_name_map(text, root, file);
    let Ok(config) = KernelConfig::parse(text, root, file) else {
        return;
    };
    let _ = config.name_map();
    // A path that is not UTF-8 cannot be written; anything else must round-trip.
    let Ok(written) = config.to_python_source(root, file) else {
        return;
    };
    let reread = KernelConfig::parse(&written, root, file)
        .unwrap_or_else(|e| panic!("the writer's output does not read back: {e}\n{written}"));
    let rewritten = reread.to_python_source(root, file).expect("writes again");
    assert_eq!(written, rewritten, "the writer is not a fixed point");
});
