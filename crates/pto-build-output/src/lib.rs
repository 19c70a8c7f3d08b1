//! The `build_output/<dir>/` contract: the files `ir.compile()` leaves in a
//! build directory, read and written without Python.
//!
//! A build directory is what replay, `from_dir` and benchmarks start from.
//! This crate owns its file formats and their validation; it runs nothing.
//!
//! - [`layout`]: which kind of build a directory holds ([`BuildLayout`]:
//!   single-chip, distributed, multi-orchestration parent) and the deletion
//!   of stale build-kind markers.
//! - [`kernel_config`]: `kernel_config.py`, the runtime manifest, through a
//!   strict reader of the declarative Python slice PyPTO writes
//!   ([`KernelConfig::load`]) and a writer of PyPTO's exact layout
//!   ([`KernelConfig::write`]).
//! - [`compiled_meta`]: the sidecars `compiled_meta.json` (L2) and
//!   `distributed_meta.json` (L3), with PyPTO's validation texts
//!   ([`MetaError`], whose [`MetaErrorKind`] maps to a Python exception).
//! - [`npy`]: NumPy `.npy` tensors ([`NpyArray`], [`read_npy`],
//!   [`write_npy`]) and [`dtype`]: element types ([`DType`]) with their
//!   PyPTO, Simpler and NumPy names.
//! - [`pt`]: torch `.pt` tensors as `torch.save` writes them ([`read_pt`],
//!   [`write_pt`]), through a zip reader and a restricted pickle reader that
//!   runs nothing; [`tensor_file`]: a data file in either format
//!   ([`locate_tensor`], [`read_tensor`], [`write_tensor`]).
//! - [`golden`]: `RTOL`/`ATOL` from `golden.py` and the element-wise
//!   comparison of outputs with goldens ([`compare`], [`Comparison`]).
//! - [`kernel_splice`]: the kernel wrapper's contract with ptoas (the body's
//!   sentinels, the splice, the preprocessing of ptoas's output); running ptoas
//!   is `pto_toolchain::pto_rebuild`'s.
//!
//! A key design decision: Python files (`kernel_config.py`, the tolerance
//! lines of `golden.py`, the `.npy` header dict) are *parsed*, never run,
//! by one small strict reader of Python literals. A build directory is user
//! input; reading it must neither execute code nor accept something the
//! reader does not understand, and every rejection names the file, the line
//! and column, and the fix. The crate also writes these files byte-for-byte
//! as PyPTO does, atomically (a hidden temporary beside the target, then a
//! rename; `pto_base::fs`), so PyPTO and Simpler read ours and we read theirs.
//!
//! Each module has its own error type; [`BuildOutputError`] wraps them all
//! for callers that handle them together.
//!
//! # Example
//!
//! ```
//! use pto_build_output::{compare, DType, KernelConfig, NpyArray, Tolerances};
//! use std::path::Path;
//!
//! let text = "from pathlib import Path\n\
//!     _ROOT_DIR = Path(__file__).parent\n\
//!     ORCHESTRATION = {\"source\": str(_ROOT_DIR / \"orchestration\" / \"main.cpp\"), \
//!                      \"function_name\": \"aicpu_orchestration_entry\"}\n\
//!     KERNELS = [{\"func_id\": 0, \"name\": \"add\", \"core_type\": \"aiv\", \
//!                 \"source\": str(_ROOT_DIR / \"kernels\" / \"aiv\" / \"add.cpp\")}]\n";
//! let build = Path::new("/build");
//! let config = KernelConfig::parse(text, build, &build.join("kernel_config.py"))?;
//! assert_eq!(config.kernels[0].source, build.join("kernels/aiv/add.cpp"));
//!
//! let golden = NpyArray::from_f64(DType::Float32, &[2], &[1.0, 2.0])?;
//! let actual = NpyArray::from_f64(DType::Float32, &[2], &[1.0, 2.5])?;
//! let cmp = compare(&actual, &golden, Tolerances::default())?;
//! assert_eq!(cmp.n_mismatch, 1);
//! assert!(cmp.report("out").starts_with("Output 'out' does not match golden."));
//! # Ok::<(), pto_build_output::BuildOutputError>(())
//! ```
#![deny(missing_docs)]

pub mod build_files;
pub mod compiled_meta;
pub mod dtype;
mod fs;
pub mod golden;
pub mod golden_script;
pub mod kernel_config;
pub mod kernel_splice;
pub mod layout;
pub mod npy;
pub mod pt;
mod pyrepr;
mod pysyntax;
pub mod run_script;
pub mod tensor_file;

pub use build_files::write_build_file;
pub use compiled_meta::{
    BackendType, CompiledMeta, DistributedConfig, DistributedMeta, MetaError, MetaErrorKind,
    ParamDirection, ParamInfo,
};
pub use dtype::{DType, DTypeError};
pub use fs::{write_atomic, WriteError};
pub use golden::{
    compare, isclose, read_declared_outputs, read_tolerances, Comparison, GoldenError, Mismatch,
    Tolerances,
};
pub use kernel_config::{
    load_name_map, parse_name_map, ArgDirection, CoreType, KernelConfig, KernelConfigError,
    KernelEntry, NameMap, OrchestrationConfig, RuntimeConfig,
};
pub use layout::{drop_foreign_build_markers, BuildKind, BuildLayout, LayoutError};
pub use npy::{read_npy, write_npy, NpyArray, NpyError};
pub use pt::{read_pt, write_pt, ByteOrder, PtError};
pub use tensor_file::{
    locate_tensor, read_tensor, read_tensor_checked, write_tensor, TensorFileError, TensorFormat,
};

/// Any error of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildOutputError {
    /// A data type name or code.
    #[error(transparent)]
    DType(#[from] DTypeError),
    /// An `.npy` file.
    #[error(transparent)]
    Npy(#[from] NpyError),
    /// A `.pt` file.
    #[error(transparent)]
    Pt(#[from] PtError),
    /// Finding a tensor file.
    #[error(transparent)]
    TensorFile(#[from] TensorFileError),
    /// `kernel_config.py`.
    #[error(transparent)]
    KernelConfig(#[from] KernelConfigError),
    /// A sidecar.
    #[error(transparent)]
    Meta(#[from] MetaError),
    /// A DistributedConfig value.
    #[error(transparent)]
    DistributedConfig(#[from] compiled_meta::DistributedConfigError),
    /// The build directory layout.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// Golden tolerances or comparison.
    #[error(transparent)]
    Golden(#[from] GoldenError),
    /// Writing a file.
    #[error(transparent)]
    Write(#[from] WriteError),
}

impl BuildOutputError {
    /// True when the error means "this file or directory is not there"
    /// (what a Python front end raises as `FileNotFoundError`).
    pub fn is_not_found(&self) -> bool {
        match self {
            BuildOutputError::Npy(e) => e.is_not_found(),
            BuildOutputError::Pt(e) => e.is_not_found(),
            BuildOutputError::TensorFile(e) => e.is_not_found(),
            BuildOutputError::KernelConfig(e) => e.is_not_found(),
            BuildOutputError::Meta(e) => e.kind() == MetaErrorKind::NotFound,
            BuildOutputError::Layout(e) => e.is_not_found(),
            BuildOutputError::Golden(GoldenError::Read { source, .. }) => {
                source.kind() == std::io::ErrorKind::NotFound
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every module starts with a `//!` doc comment (the tidy rule).
    #[test]
    fn every_module_has_a_doc_comment() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![src];
        let mut checked = 0;
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    assert!(
                        text.starts_with("//!"),
                        "{} lacks a //! module doc",
                        path.display()
                    );
                    assert!(
                        !text.contains(concat!("#[should", "_panic]")),
                        "{}",
                        path.display()
                    );
                    assert!(
                        !text.contains(concat!("#[ig", "nore]")),
                        "{}",
                        path.display()
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked >= 10);
    }

    #[test]
    fn not_found_is_classified_across_modules() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let errors: Vec<BuildOutputError> = vec![
            read_npy(&missing).unwrap_err().into(),
            KernelConfig::load(&missing).unwrap_err().into(),
            CompiledMeta::load(&missing).unwrap_err().into(),
            BuildLayout::detect(&missing).unwrap_err().into(),
            read_tolerances(&missing).unwrap_err().into(),
        ];
        for e in &errors {
            assert!(e.is_not_found(), "{e}");
        }
        let invalid: BuildOutputError = DType::from_pypto_str("x").unwrap_err().into();
        assert!(!invalid.is_not_found());
    }
}
