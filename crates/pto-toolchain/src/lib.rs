//! Compiles PTO orchestrations and kernels (C++) into shared objects for the
//! CPU-simulation runtime, with a content-addressed cache.
//!
//! * [`Toolchain::discover`] finds the system C++ compiler (`$CXX` or `c++`)
//!   and writes the PTO headers, embedded into this crate at build time from
//!   the repository's `include/` (`pto/`, `pto-isa/`), into the cache ([`materialize_headers`]),
//!   so binaries need nothing but a compiler at run time.
//! * [`detect_generation`] tells which Simpler orchestration generation (2026-08 or
//!   2026-09) a build's sources are written against; a [`CompileUnit`] of that
//!   [`Generation`] gets that generation's include roots.
//! * [`Toolchain::compile`] / [`Toolchain::compile_all`] turn a
//!   [`CompileUnit`] into a `.so` under `<cache_root>/objects/`.
//! * [`pto_rebuild`]: replay's `.pto` → `.cpp` step, the other tool this crate runs:
//!   regenerate kernel bodies from edited `ptoas/*.pto` with a discovered `ptoas` (or the
//!   bundled translator) and splice them into the kernel wrappers
//!   ([`rebuild_kernel_cpp_from_pto`]).
//!
//! # Cache
//!
//! Modelled on ccache's direct mode: an unchanged unit is never recompiled,
//! and a change to the source, a flag, the compiler (`--version` output), the
//! embedded headers or any non-system header it includes is never served
//! stale. Per source, a manifest under `objects/manifests/` remembers the
//! headers recent compiles read (from `-MMD`) with their content hashes; a
//! lookup re-hashes them and returns the matching object. Several header
//! versions are remembered, so reverting an edit hits again. All writes are
//! temp-file + rename, so concurrent processes sharing a cache root are safe
//! without locks.
//!
//! # Per-directory binary cache
//!
//! [`binary_cache`] keeps compiled binaries next to their sources in a build
//! directory, guarded by a compatibility stamp (runtime revision, headers,
//! compiler, flags) and an `flock`, following PyPTO's replay contract.
//!
//! Known limits (shared with ccache): system headers (`-MMD` omits them) are
//! covered only by the compiler's `--version` identity, and a *new* header
//! created earlier in the include search path than the one previously found
//! is not detected.

pub mod binary_cache;
mod depfile;
mod error;
pub mod freshness;
mod fsutil;
pub mod generation;
mod headers;
mod manifest;
pub mod progress;
pub mod pto_rebuild;
mod toolchain;

pub use binary_cache::{
    runtime_revision, BinaryCacheBuild, BinaryCacheError, BinaryCacheLock, BinaryContext, Prepared,
    StampState, TreeInvalidation,
};
pub use error::{Result, ToolchainError};
pub use generation::{detect_generation, Evidence, Generation, GenerationError};
pub use headers::{
    embedded_headers, header_identity, materialize_headers, ISA_INCLUDE, RUNTIME_INCLUDE,
    RUNTIME_INCLUDE_2026_09,
};
pub use progress::{set_progress, Progress};
pub use pto_rebuild::{
    rebuild_kernel_cpp_from_pto, rebuild_kernel_cpp_from_pto_with, PtoRebuildError, RebuildEnv,
    RebuildOptions, RebuildReport, RebuildStatus,
};
pub use toolchain::{
    default_cache_root, CompileUnit, CompiledObject, CoreKind, Toolchain, UnitKind,
};
