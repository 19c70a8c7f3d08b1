//! `args_dump.json` and `args.bin` (two files, split at `pto_fuzz::SEPARATOR`):
//! the manifest reader and its round trip, payload slicing, and the dump
//! viewer's listing and `.npy` / `.txt` exports as `pto dump-viewer` runs them.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pto_dfx::args_dump;
use pto_dfx_view::dump_viewer::{self, DumpFilter, ExportFormat};

fuzz_target!(|data: &[u8]| {
    let (manifest, bin) = pto_fuzz::split2(data);
    let path = Path::new("args_dump.json");
    let Ok(loaded) = args_dump::parse(manifest, path) else {
        return;
    };
    if loaded.problems.is_empty() {
        let text = args_dump::render(&loaded.value);
        let again = args_dump::parse(text.as_bytes(), path).expect("rendered file reads back");
        assert_eq!(again.value, loaded.value, "render/parse round trip");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let dump_dir = dir.path().join("args_dump");
    std::fs::create_dir(&dump_dir).expect("mkdir");
    std::fs::write(dump_dir.join("args_dump.json"), manifest).expect("write manifest");
    // Keep the bin_file name inside the dump directory.
    if let Some(name) = loaded.value.bin_file.as_deref() {
        if !name.is_empty() && !name.contains(['/', '\0']) && name != "." && name != ".." {
            std::fs::write(dump_dir.join(name), bin).expect("write bin");
        }
    }
    let Ok(dump) = dump_viewer::load(&dump_dir) else {
        return;
    };
    let all = dump_viewer::select(&dump, &DumpFilter::default()).expect("no filter selects all");
    let _ = dump_viewer::render_list(&dump, &all);
    // Exports write a file per record: a few records are enough.
    let some = &all[..all.len().min(8)];
    let _ = dump_viewer::export(&dump, some, ExportFormat::Npy);
    let _ = dump_viewer::export(&dump, some, ExportFormat::Txt);
});
