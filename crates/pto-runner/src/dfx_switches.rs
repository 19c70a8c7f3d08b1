//! The diagnostics switches, declared once: [`DFX_SWITCHES`] names each switch in every
//! layer (the [`DfxOptions`] field and chip-process key, the `pto` flag, the Python keyword),
//! its kind and range, the artifact it writes under `dfx_outputs/` and its help text.
//!
//! The `pto` flags, the validation texts, the Python `RunOptions` keywords and the
//! `pypto.runtime` keyword lists are built from this table (`pypto._native.dfx_switches()`);
//! the few hand-written copies left (dataclass fields, the C++ runtime's) are each checked
//! against it by a test (`tidy.rs`, `the_diagnostics_switches_are_listed_once`, names them).
//! docs/ARCHITECTURE.md, "Adding a diagnostics switch", is the recipe.

use crate::config::DfxOptions;
use crate::error::RunnerError;

/// What values a switch takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchKind {
    /// A level or event number in `0..=max`, 0 off; a bare flag (or Python `True`) is `bare`.
    Level {
        /// The largest value.
        max: u32,
        /// The value of the bare `pto` flag and of Python `True`.
        bare: u32,
        /// The `pto` flag's value name (`LEVEL`, `N`).
        value_name: &'static str,
        /// What a Python value of the wrong type is told it must be.
        type_text: &'static str,
        /// What a value out of range is told it must be.
        range_text: &'static str,
    },
    /// On or off (Python truthiness).
    Flag,
}

/// One diagnostics switch.
#[derive(Clone, Copy, Debug)]
pub struct DfxSwitch {
    /// The [`DfxOptions`] field, which is also its chip-process key (`chip_swimlane`).
    pub name: &'static str,
    /// The `pto` flag without its dashes (`swimlane`).
    pub cli_flag: &'static str,
    /// The Python keyword and `CallConfig` field (`enable_chip_swimlane`).
    pub python_keyword: &'static str,
    /// Its values.
    pub kind: SwitchKind,
    /// The Python replay's option for the level, without its dashes, when the bare flag
    /// there takes no value (PyPTO spells the swimlane `--swimlane` and
    /// `--swimlane-level LEVEL`: an optional value would take the positional build
    /// directory); `None`: the level is the flag's value (`--pmu=2`).
    pub replay_level_option: Option<&'static str>,
    /// What it writes under `dfx_outputs/` (a directory ends in `/`).
    pub artifact: &'static str,
    /// What it records; the `pto` help is this, `: ` and the artifact.
    pub help: &'static str,
    /// Its value in `options` (a flag is 0 or 1).
    pub get: fn(&DfxOptions) -> u32,
    /// Sets its value in `options` (a value a field cannot hold saturates).
    pub set: fn(&mut DfxOptions, u32),
}

fn saturate(v: u32) -> u8 {
    u8::try_from(v).unwrap_or(u8::MAX)
}

/// The swimlane's range text, also used by the Python alias check.
const SWIMLANE_RANGE: &str = "a collection level in [0, 4] (0=off, 1=AICore timing, 2=+dispatch/finish, 3=+sched phases, 4=+orch phases)";

/// The five diagnostics switches, in the order the `pto` help lists them.
pub static DFX_SWITCHES: [DfxSwitch; 5] = [
    DfxSwitch {
        name: "chip_swimlane",
        cli_flag: "swimlane",
        python_keyword: "enable_chip_swimlane",
        kind: SwitchKind::Level {
            max: 4,
            bare: 4,
            value_name: "LEVEL",
            type_text: "an int collection level (0-4) or a bool",
            range_text: SWIMLANE_RANGE,
        },
        replay_level_option: Some("swimlane-level"),
        artifact: "chip_swimlane_records.json",
        help: "Chip swimlane at LEVEL 1-4 (bare flag = 4)",
        get: |o| u32::from(o.chip_swimlane),
        set: |o, v| o.chip_swimlane = saturate(v),
    },
    DfxSwitch {
        name: "dump_args",
        cli_flag: "dump-args",
        python_keyword: "enable_dump_args",
        kind: SwitchKind::Level {
            max: 3,
            bare: 1,
            value_name: "LEVEL",
            type_text: "an int level (0 off, 1 partial, 2 full, 3 hybrid) or a bool",
            range_text: "0 (off), 1 (partial), 2 (full) or 3 (hybrid)",
        },
        replay_level_option: None,
        artifact: "args_dump/",
        help: "Args dump at LEVEL 1 partial, 2 full, 3 hybrid (bare flag = 1)",
        get: |o| u32::from(o.dump_args),
        set: |o, v| o.dump_args = saturate(v),
    },
    DfxSwitch {
        name: "pmu",
        cli_flag: "pmu",
        python_keyword: "enable_pmu",
        kind: SwitchKind::Level {
            max: u32::MAX,
            bare: 2,
            value_name: "N",
            type_text: "an int PMU event type (0 = off)",
            range_text: "a PMU event type in [0, 4294967295] (0 = off)",
        },
        replay_level_option: None,
        artifact: "pmu.csv",
        help: "Per-task PMU counters with event type N (bare flag = 2)",
        get: |o| o.pmu,
        set: |o, v| o.pmu = v,
    },
    DfxSwitch {
        name: "dep_gen",
        cli_flag: "dep-gen",
        python_keyword: "enable_dep_gen",
        kind: SwitchKind::Flag,
        replay_level_option: None,
        artifact: "deps.json",
        help: "Dependency graph",
        get: |o| u32::from(o.dep_gen),
        set: |o, v| o.dep_gen = v != 0,
    },
    DfxSwitch {
        name: "scope_stats",
        cli_flag: "scope-stats",
        python_keyword: "enable_scope_stats",
        kind: SwitchKind::Flag,
        replay_level_option: None,
        artifact: "scope_stats/scope_stats.jsonl",
        help: "Scope statistics",
        get: |o| u32::from(o.scope_stats),
        set: |o, v| o.scope_stats = v != 0,
    },
];

impl DfxSwitch {
    /// The switch whose [`DfxOptions`] field is `name`.
    pub fn named(name: &str) -> &'static DfxSwitch {
        DFX_SWITCHES
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no diagnostics switch named {name}"))
    }

    /// Its artifact under the diagnostics directory `out`.
    pub fn artifact_in(&self, out: &std::path::Path) -> std::path::PathBuf {
        out.join(self.artifact.trim_end_matches('/'))
    }

    /// The `pto` help line: what it records and its artifact.
    pub fn cli_help(&self) -> String {
        format!("{}: {}", self.help, self.artifact)
    }

    /// `value` checked against the switch's range; the error names `source` (the
    /// Python keyword, or the deprecated alias a caller used).
    pub fn check(&self, value: u32, source: &str) -> Result<(), RunnerError> {
        match self.kind {
            SwitchKind::Level {
                max, range_text, ..
            } if value > max => Err(RunnerError::config(format!(
                "{source} must be {range_text}, got {value}"
            ))),
            _ => Ok(()),
        }
    }
}

/// The Python keywords joined with ` / ` (`enable_chip_swimlane / enable_dump_args / ...`).
pub fn python_keywords_text() -> String {
    DFX_SWITCHES
        .iter()
        .map(|s| s.python_keyword)
        .collect::<Vec<_>>()
        .join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each switch's accessors reach its own field and no other.
    #[test]
    fn each_switch_sets_and_reads_its_own_field() {
        for s in &DFX_SWITCHES {
            let mut o = DfxOptions::default();
            (s.set)(&mut o, 1);
            assert_eq!((s.get)(&o), 1, "{}", s.name);
            let on: Vec<&str> = DFX_SWITCHES
                .iter()
                .filter(|t| (t.get)(&o) != 0)
                .map(|t| t.name)
                .collect();
            assert_eq!(on, [s.name]);
            // `name` is the field's (and the chip-process key's) name.
            let json = serde_json::to_value(o).unwrap();
            let off = serde_json::to_value(DfxOptions::default()).unwrap();
            assert!(json.get(s.name).is_some(), "{}", s.name);
            assert_ne!(json[s.name], off[s.name], "{}", s.name);
        }
    }

    /// The table names every [`DfxOptions`] field but `predicted_timing` (a timing choice,
    /// not a diagnostic), so a field added there fails here until it has a row.
    #[test]
    fn the_table_covers_every_diagnostics_field() {
        let json = serde_json::to_value(DfxOptions::default()).unwrap();
        let mut fields: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|&k| k != "predicted_timing")
            .collect();
        fields.sort_unstable();
        let mut names: Vec<&str> = DFX_SWITCHES.iter().map(|s| s.name).collect();
        names.sort_unstable();
        assert_eq!(fields, names);
    }

    /// The artifacts are the names the writers use.
    #[test]
    fn artifacts_are_the_writers_file_names() {
        let named = |n: &str| DfxSwitch::named(n).artifact;
        assert_eq!(named("chip_swimlane"), pto_dfx::swimlane::FILE_NAME);
        assert_eq!(named("dep_gen"), pto_dfx::deps::FILE_NAME);
        assert_eq!(named("dump_args"), "args_dump/");
    }

    #[test]
    fn levels_out_of_range_are_refused_with_the_keyword() {
        let s = DfxSwitch::named("dump_args");
        assert!(s.check(3, s.python_keyword).is_ok());
        assert_eq!(
            s.check(4, s.python_keyword).unwrap_err().to_string(),
            "enable_dump_args must be 0 (off), 1 (partial), 2 (full) or 3 (hybrid), got 4"
        );
        assert!(DfxSwitch::named("dep_gen").check(7, "x").is_ok());
    }
}
