//! Integration tests of `pto-dfx`: one module per artifact, plus tidy checks.
//!
//! Golden files under `tests/data/` are the format examples of the
//! reference (`simpler-dfx-artifacts.md` §2.5, §3.3, §4.4, §5.3, §6.2, §7).
//! The viewers' tests, and the hostile-input and property tests of the readers the
//! viewers share, live in `pto-dfx-view` (`tests/tests.rs` there).

mod common;

mod args_dump;
mod deps;
mod name_map;
mod pmu;
mod scope_stats;
mod swimlane;
mod tidy;
