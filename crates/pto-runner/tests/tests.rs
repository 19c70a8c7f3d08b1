//! Replay of real build directories through the real toolchain and runtime.

mod dfx;
mod fixture;
mod replay;
