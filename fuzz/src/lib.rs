//! Helpers shared by the fuzz targets.

/// The separator between the files of a multi-file input
/// (`deps.json` and a swimlane file; a manifest and its `args.bin`).
pub const SEPARATOR: &[u8] = b"\n--8<--\n";

/// `data` split at the first [`SEPARATOR`]: the first file, and the rest
/// (empty when there is no separator).
pub fn split2(data: &[u8]) -> (&[u8], &[u8]) {
    match data.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
        Some(i) => (&data[..i], &data[i + SEPARATOR.len()..]),
        None => (data, &[]),
    }
}
