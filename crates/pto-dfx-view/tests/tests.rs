//! Integration tests of `pto-dfx-view`.
//!
//! `viewers` runs the offline viewers end to end (HTML pages in headless
//! Chromium) on inputs from `synth`; `pinned` holds their output bytes
//! (length and hash) for fixed inputs, so a refactoring cannot change them.
//! `hostile` feeds the readers inputs made to exhaust them (size, nesting,
//! claimed payloads, quadratic pairings); `props` checks the swimlane and
//! deps readers, careful and fast, on random and randomly edited files.
//!
//! `common` (golden files, error assertions) and `tidy` are `pto-dfx`'s, shared by path.

// Only part of `pto-dfx`'s helpers are needed here.
#[allow(dead_code)]
#[path = "../../pto-dfx/tests/common.rs"]
mod common;
#[path = "../../pto-dfx/tests/tidy.rs"]
mod tidy;

mod hostile;
mod pinned;
mod props;
mod synth;
mod viewers;
