//! Integration tests: real C++ orchestrations and kernels through the real runtime.

mod common;

mod basics;
