//! The example build directories of the project and their deterministic generator.
//!
//! Each example is what a PyPTO user gets from `ir.compile` plus the test harness: a
//! `build_output/<dir>/` with `kernel_config.py`, `compiled_meta.json`, the orchestration and
//! kernel C++ sources, `golden.py`, `debug/run.py` (`pto_build_output::run_script`) and `data/{in,out}/*.npy`
//! (see [`example`] for the layout).
//!
//! | example | orchestration | kernels | tasks |
//! |---|---|---|---|
//! | [`vector_add`] | `c = a + b`, 8 SPMD tasks of 4 blocks | `kernel_add` (AIV) | 8 |
//! | [`bgemm`] | `C += A @ B` in 64 x 64 tiles, k chained by INOUT | `kernel_matmul` (AIC), `kernel_add` (AIV) | 128 |
//! | [`paged_attention`] | MQA decode over a paged KV cache, online softmax | QK, PV (AIC), SF, UP (AIV) | 80 |
//! | [`paged_attn_bf16`] | the same in bf16 with ragged last blocks, PTO-ISA kernels | `qk_matmul`, `pv_matmul` (AIC), `softmax_prepare`, `online_update` (AIV) | 31 |
//! | [`softmax`] | row softmax of bf16 rows, 64-row tiles, one SPMD block per 16 rows | `row_softmax` (AIV, PTO-ISA) | 4 |
//! | [`mixed_pipe`] | `relu(a @ b) * scale` in MIX tasks, cube -> vector pipe | `matmul_relu_aic` + `matmul_relu_aiv` (PTO-ISA) | 2 |
//!
//! The C++ is hand-written in PyPTO's codegen layout and its one copy lives in the
//! examples themselves (`examples/<name>/orchestration|kernels/`, embedded at build time
//! and written back unchanged); inputs come from a seeded [`rng::SplitMix64`], so
//! [`generate`] writes byte-identical files on every run. The kernels of `vector_add`, `bgemm`
//! and `paged_attention` use the ChipTensor tile library (`pto_tile.h`) and their goldens are
//! computed in `f64` and rounded to `f32`. The other examples' kernels are PTO-ISA kernels as
//! PyPTO generates them: each ships its `ptoas/<unit>.pto`, our ptoas translates it
//! (`ptoas/<unit>.cpp`) and the body is spliced into PyPTO's kernel wrapper over
//! `<pto/pto-inst.hpp>` ([`ptoas_unit`]), so editing the `.pto` and replaying is the loop PyPTO
//! users have. Their goldens are computed in `f32` with every rounding the kernels do (bf16
//! through the `half` crate), so the kernels reproduce them bit for bit. The `gen-examples`
//! binary calls [`generate`] on the workspace's `examples/` directory.

#![deny(missing_docs)]

pub mod bgemm;
pub mod example;
pub mod golden_py;
pub mod l3_collectives;
pub mod l3_examples;
pub mod mixed_pipe;
pub mod paged_attention;
pub mod paged_attn_bf16;
pub mod ptoas_unit;
pub mod rng;
pub mod softmax;
pub mod vector_add;

use std::path::{Path, PathBuf};

pub use example::{Example, KernelSource, Param, ParamValue, Scalar, TensorParam};
pub use ptoas_unit::PtoasUnit;

/// Generating an example failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A directory could not be created.
    #[error("cannot create directory {}: {source}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An array could not be built or written.
    #[error(transparent)]
    Npy(#[from] pto_build_output::NpyError),
    /// `compiled_meta.json` could not be written.
    #[error(transparent)]
    Meta(#[from] pto_build_output::WriteError),
    /// `kernel_config.py` could not be written.
    #[error(transparent)]
    KernelConfig(#[from] pto_build_output::KernelConfigError),
    /// A `.pto` unit of an example does not translate.
    #[error("cannot translate ptoas/{unit}.pto: {source}")]
    Ptoas {
        /// The unit name.
        unit: String,
        /// The translator's located error.
        #[source]
        source: ptoas::Error,
    },
    /// Something the generator cannot express.
    #[error("unsupported: {what}")]
    Unsupported {
        /// What is unsupported.
        what: String,
    },
}

/// Every example, with its data computed.
pub fn examples() -> Result<Vec<Example>, Error> {
    Ok(vec![
        vector_add::example()?,
        bgemm::example()?,
        vector_add::example_2026_09()?,
        bgemm::example_2026_09()?,
        paged_attention::example()?,
        paged_attn_bf16::example()?,
        softmax::example()?,
        mixed_pipe::example()?,
    ])
}

/// Writes every example into `out_dir/<example name>/` (directories are created as needed)
/// and returns the files written.
pub fn generate(out_dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    for example in examples()? {
        written.extend(example.write(&out_dir.join(example.name))?);
    }
    written.extend(l3_examples::generate(out_dir)?);
    Ok(written)
}
