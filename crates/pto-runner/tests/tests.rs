//! Replay of real build directories through the real toolchain and runtime.

mod fixture;
mod replay;
