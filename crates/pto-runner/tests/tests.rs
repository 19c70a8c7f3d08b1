//! Replay of real build directories through the real toolchain and runtime.

mod dfx;
mod dfx_compact;
mod fixture;
mod generations;
mod replay;
