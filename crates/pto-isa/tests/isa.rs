//! Integration tests of our PTO-ISA header: hand-written kernels in PyPTO's style, compiled
//! with the project's toolchain and run on the simulated chip, against scalar references.

mod common;

mod atomics;
mod comm;
mod compat;
mod convert;
mod elementwise;
mod errors;
mod gm_index;
mod layouts;
mod matmul;
mod names;
mod pipes;
mod reduce;
mod sort_gather;
