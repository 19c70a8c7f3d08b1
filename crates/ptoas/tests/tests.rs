//! The translator's tests, one binary: parsing and printing, errors, the CLI, the parser
//! fuzz, and end-to-end runs of translated kernels on the simulated chip.

mod cli;
mod common;
mod fuzz;
mod parse;
mod run;
