//! Which generation of Simpler's diagnostic formats a file follows.
//!
//! Simpler changed three of its files after 22 August 2026 (see
//! `docs/COMPATIBILITY.md`, generation column):
//!
//! - `deps.json` begins with a `"runtime"` key;
//! - `scope_stats.jsonl` lost the metadata's `version` and its records gained
//!   `run_epoch` and `buf_seq`;
//! - `chip_swimlane_records.json` gained `metadata.runtime`, 7-column
//!   `aicore_tasks` rows ending in `run_epoch`, and `scheduler_tasks` /
//!   `scheduler_records` in place of `aicpu_tasks` / `aicpu_scheduler_phases`.
//!
//! [`DfxSchema`] names the two generations. Each format module tells them
//! apart from a file's content (`deps::detect`, `scope_stats::detect`,
//! `swimlane::detect`); the readers read both into one model and the writers
//! write either. [`runtime_problem`] is the shared rule for a `runtime` value
//! newer than the ones we know: read what we know, warn naming the key.

use std::fmt;
use std::str::FromStr;

use crate::error::Problem;

/// A generation of the DFX file formats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DfxSchema {
    /// Simpler 6ebaf77 (22 August 2026): the formats of
    /// `simpler-dfx-artifacts.md`.
    #[default]
    V2026_08,
    /// Simpler after #2355 (September 2026): `runtime` keys, `run_epoch`,
    /// `scheduler_tasks` / `scheduler_records`, no schema versions.
    V2026_09,
}

/// The spellings [`DfxSchema::from_str`] accepts, for messages.
pub const SCHEMA_NAMES: &str = "2026-08 or 2026-09";

impl DfxSchema {
    /// Every generation, oldest first.
    pub const ALL: [DfxSchema; 2] = [DfxSchema::V2026_08, DfxSchema::V2026_09];

    /// `2026-08` / `2026-09`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::V2026_08 => "2026-08",
            Self::V2026_09 => "2026-09",
        }
    }

    /// Whether files of this generation carry `runtime` / `run_epoch`.
    pub const fn is_newer(self) -> bool {
        matches!(self, Self::V2026_09)
    }
}

impl fmt::Display for DfxSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A DFX schema name that is neither `2026-08` nor `2026-09`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown DFX schema {0:?}; expected {SCHEMA_NAMES}")]
pub struct UnknownSchema(pub String);

impl FromStr for DfxSchema {
    type Err = UnknownSchema;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|g| g.name() == s.trim())
            .ok_or_else(|| UnknownSchema(s.to_string()))
    }
}

/// The `runtime` of the device-orchestrated runtime (ids `(ring << 32) | local`).
pub const RUNTIME_TMR: &str = "tensormap_and_ringbuffer";
/// The `runtime` of the host-orchestrated runtime.
pub const RUNTIME_HBG: &str = "host_build_graph";

/// The `runtime` values this crate knows.
pub const KNOWN_RUNTIMES: [&str; 2] = [RUNTIME_TMR, RUNTIME_HBG];

/// A warning for a `runtime` value at `key` newer than the ones we know
/// (the file is read as far as we understand it), or `None` for a known one.
pub fn runtime_problem(key: &str, value: &str) -> Option<Problem> {
    (!KNOWN_RUNTIMES.contains(&value)).then(|| {
        Problem::new(
            key,
            format!(
                "is {value:?}, a runtime newer than this reader knows ({}); read as {RUNTIME_TMR}, whose task-id layout may differ",
                KNOWN_RUNTIMES.join(", ")
            ),
        )
    })
}

/// Warnings, one per key, for the keys of an object this reader does not
/// know (a newer generation than ours): `prefix` names the object (`""` for
/// the root, else ending in `.`).
pub(crate) fn unknown_keys<'a>(
    keys: impl Iterator<Item = &'a String>,
    known: &[&str],
    prefix: &str,
    problems: &mut Vec<Problem>,
) {
    for k in keys {
        if !known.contains(&k.as_str()) {
            problems.push(Problem::new(
                format!("{prefix}{k}"),
                "is not a key of any generation this reader knows (2026-08, 2026-09); ignored",
            ));
        }
    }
}

/// The error for `field`, a key of `field_generation`, in a file of the other
/// generation where reading it would change the result.
pub(crate) fn foreign_field(field: &str, field_generation: DfxSchema, file: DfxSchema) -> String {
    format!(
        "`{field}` belongs to the {field_generation} generation but the file is {file} (told by its other keys); a file mixes the two generations only when it was edited or written by two tools, so regenerate it"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for g in DfxSchema::ALL {
            assert_eq!(g.name().parse::<DfxSchema>(), Ok(g));
        }
        let e = "2026-10".parse::<DfxSchema>().unwrap_err();
        assert!(e.to_string().contains("2026-08 or 2026-09"), "{e}");
        assert_eq!(DfxSchema::default(), DfxSchema::V2026_08);
    }

    #[test]
    fn only_unknown_runtimes_warn() {
        assert!(runtime_problem("runtime", RUNTIME_TMR).is_none());
        assert!(runtime_problem("runtime", RUNTIME_HBG).is_none());
        let p = runtime_problem("metadata.runtime", "tiled_mesh").unwrap();
        assert_eq!(p.key, "metadata.runtime");
        assert!(p.message.contains("tiled_mesh"), "{p}");
    }
}
