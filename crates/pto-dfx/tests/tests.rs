//! Integration tests of `pto-dfx`: one module per artifact, plus tidy checks.
//!
//! `viewers` runs the offline viewers end to end (HTML pages in headless
//! Chromium) on inputs from `synth`; `pinned` holds their output bytes
//! (length and hash) for fixed inputs, so a refactoring cannot change them.
//!
//! Golden files under `tests/data/` are the format examples of the
//! reference (`simpler-dfx-artifacts.md` §2.5, §3.3, §4.4, §5.3, §6.2, §7).
//! `hostile` feeds every reader inputs made to exhaust it (size, nesting,
//! claimed payloads, quadratic pairings); `props` checks the swimlane and
//! deps readers on random and randomly edited files.

mod common;

mod args_dump;
mod deps;
mod hostile;
mod name_map;
mod pinned;
mod pmu;
mod props;
mod scope_stats;
mod swimlane;
mod synth;
mod tidy;
mod viewers;
