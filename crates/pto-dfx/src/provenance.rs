//! Which program and which run each diagnostic artifact of a `dfx_outputs/` came from: our
//! own sidecar `dfx_outputs/pto_provenance.json` (Simpler's files are left exactly as
//! Simpler writes them).
//!
//! A run publishes only the artifacts it produced, so a directory can hold files of several
//! runs: the seed's "capture the graph once, time many times" workflow joins a `deps.json`
//! of one run with the swimlanes of later runs *of the same program*. The runner moves an
//! artifact of a different program aside (to `previous/`) when a new run publishes; the
//! viewers that join several files warn, naming them, when the sidecar says they come from
//! different programs ([`mixed_programs`]).
//!
//! Format (version 1): `{"version": 1, "files": {"<path relative to dfx_outputs/>":
//! {"program": "<hex identity>", "run": "<run id>"}}}`. A file the sidecar does not list
//! has unknown provenance (written before this sidecar existed, or copied in) and is never
//! called foreign.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The sidecar's file name inside `dfx_outputs/`.
pub const FILE_NAME: &str = "pto_provenance.json";

/// The directory inside `dfx_outputs/` that holds artifacts of a different program, moved
/// aside when a run of another program published.
pub const PREVIOUS_DIR: &str = "previous";

/// The sidecar's largest accepted size: far more than any listing of artifacts needs.
const MAX_BYTES: u64 = 4 << 20;

/// Where one artifact came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The identity of the program that wrote it (hex).
    pub program: String,
    /// The run that wrote it (unique per run).
    pub run: String,
}

/// The sidecar: every listed artifact's origin, by path relative to `dfx_outputs/`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// Format version (1).
    pub version: u32,
    /// Origins by relative path (`/`-separated).
    pub files: BTreeMap<String, Origin>,
}

impl Provenance {
    /// The sidecar of `dir` (a `dfx_outputs/`); empty when it is missing, too large or
    /// unreadable (then nothing is known about the files, which is never an error).
    pub fn read(dir: &Path) -> Provenance {
        let path = dir.join(FILE_NAME);
        let fits = std::fs::metadata(&path).is_ok_and(|m| m.len() <= MAX_BYTES);
        let parsed = fits
            .then(|| std::fs::read(&path).ok())
            .flatten()
            .and_then(|bytes| serde_json::from_slice::<Provenance>(&bytes).ok());
        parsed.filter(|p| p.version == 1).unwrap_or_default()
    }

    /// Writes the sidecar into `dir` atomically.
    pub fn write(&self, dir: &Path) -> Result<(), crate::error::WriteError> {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        crate::atomic_write(&dir.join(FILE_NAME), text.as_bytes())
    }

    /// The origin of `file` (a path under `dir`), if listed.
    pub fn origin(&self, dir: &Path, file: &Path) -> Option<&Origin> {
        self.files.get(&relative_key(dir, file)?)
    }
}

/// `file`'s key: its path relative to `dir`, `/`-separated.
pub fn relative_key(dir: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(dir).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// A warning naming the files when the artifacts `files` (under `dir`) come from different
/// programs by the sidecar; `None` when they agree or the sidecar does not know.
pub fn mixed_programs(dir: &Path, files: &[&Path]) -> Option<String> {
    let provenance = Provenance::read(dir);
    let known: Vec<(PathBuf, &Origin)> = files
        .iter()
        .filter_map(|f| provenance.origin(dir, f).map(|o| (f.to_path_buf(), o)))
        .collect();
    let first = known.first()?;
    if known.iter().all(|(_, o)| o.program == first.1.program) {
        return None;
    }
    let listing: Vec<String> = known
        .iter()
        .map(|(f, o)| {
            format!(
                "{} (program {})",
                f.display(),
                o.program.get(..12).unwrap_or(&o.program)
            )
        })
        .collect();
    Some(format!(
        "these artifacts come from different programs and are joined anyway: {}; re-run the program with every switch you need in one run, or run the earlier switch again after the edit",
        listing.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(program: &str) -> Origin {
        Origin {
            program: program.to_string(),
            run: "r".to_string(),
        }
    }

    #[test]
    fn mixed_programs_are_named_and_unknown_files_are_never_foreign() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let (deps, lane, other) = (
            dir.join("deps.json"),
            dir.join("chip_swimlane_records.json"),
            dir.join("pmu.csv"),
        );
        assert_eq!(mixed_programs(dir, &[&deps, &lane]), None, "no sidecar");
        let mut p = Provenance {
            version: 1,
            ..Provenance::default()
        };
        p.files.insert("deps.json".into(), origin("aaaa"));
        p.files
            .insert("chip_swimlane_records.json".into(), origin("aaaa"));
        p.write(dir).unwrap();
        assert_eq!(mixed_programs(dir, &[&deps, &lane, &other]), None);
        p.files
            .insert("chip_swimlane_records.json".into(), origin("bbbb"));
        p.write(dir).unwrap();
        let w = mixed_programs(dir, &[&deps, &lane]).unwrap();
        assert!(w.contains("deps.json (program aaaa)"), "{w}");
        assert!(
            w.contains("chip_swimlane_records.json (program bbbb)"),
            "{w}"
        );
        std::fs::write(dir.join(FILE_NAME), "{not json").unwrap();
        assert_eq!(Provenance::read(dir), Provenance::default());
    }
}
