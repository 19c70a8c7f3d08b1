//! Integration tests: real C++ orchestrations and kernels through the real runtime.

mod common;

mod abi;
mod api;
mod basics;
mod codegen;
mod elastic;
mod errors;
mod faults;
mod gang;
mod inference;
mod rings;
mod sim_abi;
mod stress;
mod swimlane;
