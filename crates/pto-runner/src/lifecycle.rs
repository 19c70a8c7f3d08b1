//! The replay lifecycle steps a user can also run on their own: the `.pto` → `.cpp` splice
//! and the forced invalidation of a build directory's cached binaries (seed 002).

use std::path::Path;

use pto_toolchain::binary_cache;
use pto_toolchain::pto_rebuild::{rebuild_kernel_cpp_from_pto_with, RebuildOptions};

use crate::error::RunnerError;

/// Regenerates kernel `.cpp` bodies from edited `ptoas/*.pto` files (also under
/// `next_levels/*/`), sending the seed's `[pto->cpp]` lines to `say`. `enabled = false`
/// is `--no-rebuild-from-pto`; `PYPTO_REBUILD_FROM_PTO=0|false|no` also disables it.
pub fn rebuild_kernel_cpp_from_pto(
    dir: &Path,
    enabled: bool,
    say: &mut dyn FnMut(&str),
) -> Result<Vec<String>, RunnerError> {
    let report = rebuild_kernel_cpp_from_pto_with(dir, &RebuildOptions::from_process(enabled), say)
        .map_err(|e| RunnerError::Config {
            message: e.to_string(),
            kind: crate::error::ErrorKind::Runtime,
        })?;
    Ok(report.touched)
}

/// Deletes the cached binaries and stamps of `dir` and every `next_levels/*/` (sources are
/// kept); returns the seed's `[cpp->.so]` line.
pub fn invalidate_binary_cache(dir: &Path) -> Result<String, RunnerError> {
    if !dir.is_dir() {
        return Err(RunnerError::Io {
            action: "invalidating the binary cache of",
            path: dir.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such directory"),
        });
    }
    let res = binary_cache::invalidate_tree(dir).map_err(pto_toolchain::ToolchainError::from)?;
    Ok(res.message())
}

/// The lifecycle steps before a replay runs, in the seed's order, for every front end
/// (`pto replay`, Python's `replay()`): the `.pto` -> cpp splice (or its skip line), then the
/// forced invalidation of cached binaries when `recompile` (or the line saying it was
/// skipped, or that a read-only directory has nothing to invalidate). Whether the binaries
/// are then current is `pto_toolchain::freshness`'s rule, applied by the load.
pub fn prepare(
    dir: &Path,
    rebuild_from_pto: bool,
    recompile: bool,
    say: &mut dyn FnMut(&str),
) -> Result<(), RunnerError> {
    rebuild_kernel_cpp_from_pto(dir, rebuild_from_pto, say)?;
    if !recompile {
        say(binary_cache::SKIPPED_INVALIDATION_MESSAGE);
    } else if !binary_cache::dir_writable(dir) {
        say(crate::replay::READ_ONLY_INVALIDATION_MESSAGE);
    } else {
        say(&invalidate_binary_cache(dir)?);
    }
    Ok(())
}
