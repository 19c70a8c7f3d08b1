//! `name_map_<label>.json`: the reader.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pto_dfx::name_map;

fuzz_target!(|data: &[u8]| {
    let _ = name_map::parse(data, Path::new("name_map_x.json"));
});
