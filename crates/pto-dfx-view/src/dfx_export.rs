//! `pto dfx-export`: Simpler's JSON files from the compact ones.
//!
//! For each compact file in a directory (`chip_swimlane_records.bin`,
//! `deps.bin`), writes the JSON file of the same records beside it
//! (`chip_swimlane_records.json`, `deps.json`), atomically. The JSON comes
//! from [`pto_dfx::compact::swimlane::model`] / [`pto_dfx::compact::deps::model`]
//! and the format modules' renderers, the path the JSON mode of a run takes,
//! so the files are byte-identical to what that run would have written: in
//! the generation the run asked for (the compact header's), or in the one
//! the caller names (`--dfx-schema`; the records are the same, the 2026-09
//! files stamped with the run's `run_epoch`).

use std::path::{Path, PathBuf};

use crate::ToolError;
use pto_dfx::compact;
use pto_dfx::schema::DfxSchema;

/// What [`export`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportReport {
    /// The JSON files written, swimlane first.
    pub written: Vec<PathBuf>,
}

/// Writes the JSON beside every compact file of `dir` (a directory, or a
/// compact file whose directory is meant), in `schema`, else in the
/// generation each file records. A directory with no compact file is
/// [`ToolError::Missing`].
pub fn export(dir: &Path, schema: Option<DfxSchema>) -> Result<ExportReport, ToolError> {
    let dir = if dir.is_file() {
        crate::parent_dir(dir)
    } else {
        dir
    };
    let mut report = ExportReport::default();
    let swimlane = dir.join(compact::swimlane::FILE_NAME);
    if swimlane.is_file() {
        let mut records = compact::swimlane::read(&swimlane)?;
        if let Some(schema) = schema {
            records.header.schema = schema;
        }
        let out = dir.join(pto_dfx::swimlane::FILE_NAME);
        records.write_json(&out)?;
        report.written.push(out);
    }
    let deps = dir.join(compact::deps::FILE_NAME);
    if deps.is_file() {
        let mut records = compact::deps::read(&deps)?;
        if let Some(schema) = schema {
            records.schema = schema;
        }
        let out = dir.join(pto_dfx::deps::FILE_NAME);
        records.write_json(&out)?;
        report.written.push(out);
    }
    if report.written.is_empty() {
        return Err(ToolError::Missing {
            path: dir.join(compact::swimlane::FILE_NAME),
            hint: format!(
                "nor {}; run with `--dfx-format compact` and `--swimlane` or `--dep-gen`",
                compact::deps::FILE_NAME
            ),
        });
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_directory_is_missing_and_damage_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let e = export(dir.path(), None).unwrap_err();
        assert!(matches!(e, ToolError::Missing { .. }), "{e}");
        let deps_bin = dir.path().join(compact::deps::FILE_NAME);
        std::fs::write(&deps_bin, b"PTO-DEP\0\x04\0\0\0\0").unwrap();
        let e = export(dir.path(), None).unwrap_err().to_string();
        assert!(e.contains("deps.bin") && e.contains("views"), "{e}");
        assert!(!dir.path().join(pto_dfx::deps::FILE_NAME).exists());
        // A deps.bin of the layout before the view tables is read in that layout.
        std::fs::write(&deps_bin, b"PTO-DEP\0\x03\0\0\0\0").unwrap();
        let e = export(dir.path(), None).unwrap_err().to_string();
        assert!(e.contains("deps.bin") && e.contains("tasks"), "{e}");
        assert!(!dir.path().join(pto_dfx::deps::FILE_NAME).exists());
    }
}
