//! Tests, reference numerics and the benchmark of our PTO-ISA C++ header.
//!
//! The header itself lives in `include/pto-isa/pto/` (kernels include it as
//! `<pto/pto-inst.hpp>`; `docs/PTO_ISA.md` lists what it supports). This crate holds what
//! checks it: the integration tests in `tests/` compile hand-written kernels in PyPTO's style
//! with `pto_toolchain` and run them on the simulated chip with `pto_runtime::run`, comparing
//! against the scalar references in [`reference`](mod@reference); `benches/isa.rs` compares the header's
//! instructions with plain C++ loops.
//!
//! A key design decision: the references are written independently of the header's C++
//! (rounding by comparing the neighbouring representable values instead of scaling and
//! rounding, bf16/f16 through the `half` crate), so a shared mistake is unlikely.

pub mod reference;
pub mod wrapper;
