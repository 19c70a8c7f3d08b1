//! Which kind of build a `build_output/<dir>/` holds, and its marker files.
//!
//! Four files mark a build's kind: `compiled_meta.json`,
//! `distributed_meta.json`, `kernel_config.py` and
//! `orchestration/host_orch.py` ([`BUILD_KIND_MARKERS`]).
//! [`BuildLayout::detect`] reads the kind the way `replay()` does: a
//! top-level `kernel_config.py` means a single-chip (L2) build; otherwise
//! `orchestration/host_orch.py` means a distributed (L3) build; otherwise
//! `next_levels/<name>/kernel_config.py` sub-builds mean the parent of a
//! multi-orchestration L2 build.
//!
//! A fresh compile into a reused directory deletes the markers its kind
//! does not keep ([`drop_foreign_build_markers`]), so a stale marker from an
//! earlier compile of another kind cannot mislead the detection. Only those
//! four files are ever deleted; directories and other artifacts are not.

use std::io;
use std::path::{Path, PathBuf};

use crate::kernel_config::KERNEL_CONFIG_FILE;

/// The marker files, relative to the build directory.
pub const BUILD_KIND_MARKERS: [&str; 4] = [
    "compiled_meta.json",
    "distributed_meta.json",
    "kernel_config.py",
    "orchestration/host_orch.py",
];

/// The L3 host orchestrator, relative to the build directory.
pub const HOST_ORCH_FILE: &str = "orchestration/host_orch.py";

/// The directory holding chip sub-builds.
pub const NEXT_LEVELS_DIR: &str = "next_levels";

/// The layout of a build directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildLayout {
    /// A single-chip (L2) build with a top-level `kernel_config.py`.
    SingleChip,
    /// A distributed (L3) build: `orchestration/host_orch.py`, no top-level
    /// `kernel_config.py`.
    Distributed,
    /// The parent of a multi-orchestration L2 build: neither marker, but
    /// complete sub-builds under `next_levels/`.
    MultiOrchParent {
        /// The `next_levels/<name>/` sub-builds holding a
        /// `kernel_config.py`, sorted by name.
        sub_builds: Vec<String>,
    },
}

/// A build's kind, for [`drop_foreign_build_markers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BuildKind {
    /// An L2 single-orchestration build.
    SingleChip,
    /// The parent of a multi-orchestration L2 build.
    MultiOrchParent,
    /// An L3 build.
    Distributed,
}

impl BuildKind {
    /// The markers a build of this kind keeps at its top level.
    pub fn kept_markers(self) -> &'static [&'static str] {
        match self {
            BuildKind::SingleChip => &["compiled_meta.json", "kernel_config.py"],
            BuildKind::MultiOrchParent => &[],
            BuildKind::Distributed => &["distributed_meta.json", "orchestration/host_orch.py"],
        }
    }
}

impl BuildLayout {
    /// The kind of this layout.
    pub fn kind(&self) -> BuildKind {
        match self {
            BuildLayout::SingleChip => BuildKind::SingleChip,
            BuildLayout::Distributed => BuildKind::Distributed,
            BuildLayout::MultiOrchParent { .. } => BuildKind::MultiOrchParent,
        }
    }
}

/// Detecting a layout or deleting markers failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// The build directory does not exist.
    #[error("build directory {} does not exist; pass the build_output/<name>_<timestamp>/ directory that ir.compile() wrote", dir.display())]
    MissingDir {
        /// The directory as given.
        dir: PathBuf,
    },
    /// The path exists but is not a directory.
    #[error("{} is not a directory; pass the build_output/<name>_<timestamp>/ directory that ir.compile() wrote", dir.display())]
    NotADir {
        /// The path as given.
        dir: PathBuf,
    },
    /// The directory holds no build (PyPTO's `replay()` text).
    #[error("replay(): {} is not a build_output directory (missing kernel_config.py and orchestration/host_orch.py)", dir.display())]
    NotABuildDir {
        /// The directory as given.
        dir: PathBuf,
    },
    /// Listing or deleting a file failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done (`list`, `delete`).
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

impl LayoutError {
    /// True for the errors a front end reports as `FileNotFoundError`.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            LayoutError::MissingDir { .. } | LayoutError::NotABuildDir { .. }
        )
    }
}

impl BuildLayout {
    /// Detects the layout of the build directory `dir`.
    pub fn detect(dir: &Path) -> Result<BuildLayout, LayoutError> {
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(LayoutError::NotADir {
                    dir: dir.to_path_buf(),
                })
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(LayoutError::MissingDir {
                    dir: dir.to_path_buf(),
                })
            }
            Err(source) => {
                return Err(LayoutError::Io {
                    action: "inspect",
                    path: dir.to_path_buf(),
                    source,
                })
            }
        }
        if dir.join(KERNEL_CONFIG_FILE).is_file() {
            return Ok(BuildLayout::SingleChip);
        }
        if dir.join(HOST_ORCH_FILE).is_file() {
            return Ok(BuildLayout::Distributed);
        }
        let sub_builds = sub_builds(dir)?;
        if sub_builds.is_empty() {
            return Err(LayoutError::NotABuildDir {
                dir: dir.to_path_buf(),
            });
        }
        Ok(BuildLayout::MultiOrchParent { sub_builds })
    }
}

/// Names of the `next_levels/<name>/` directories holding a
/// `kernel_config.py`, sorted; empty when there is no `next_levels/`.
/// Names that are not valid UTF-8 cannot be orchestration names and are
/// not listed.
pub fn sub_builds(dir: &Path) -> Result<Vec<String>, LayoutError> {
    let next_levels = dir.join(NEXT_LEVELS_DIR);
    if !next_levels.is_dir() {
        return Ok(Vec::new());
    }
    let entries = std::fs::read_dir(&next_levels).map_err(|source| LayoutError::Io {
        action: "list",
        path: next_levels.clone(),
        source,
    })?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| LayoutError::Io {
            action: "list",
            path: next_levels.clone(),
            source,
        })?;
        if entry.path().join(KERNEL_CONFIG_FILE).is_file() {
            if let Ok(name) = entry.file_name().into_string() {
                names.push(name);
            }
        }
    }
    names.sort();
    Ok(names)
}

/// Deletes the top-level markers of `dir` that a build of `kind` does not
/// keep, and returns the files deleted. Missing markers are fine; a marker
/// path that is a directory is left alone.
pub fn drop_foreign_build_markers(
    dir: &Path,
    kind: BuildKind,
) -> Result<Vec<PathBuf>, LayoutError> {
    let kept = kind.kept_markers();
    let mut deleted = Vec::new();
    for marker in BUILD_KIND_MARKERS.iter().filter(|m| !kept.contains(m)) {
        let path = dir.join(marker);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(source) => {
                return Err(LayoutError::Io {
                    action: "inspect",
                    path,
                    source,
                })
            }
        }
        match std::fs::remove_file(&path) {
            Ok(()) => deleted.push(path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(LayoutError::Io {
                    action: "delete",
                    path,
                    source,
                })
            }
        }
    }
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a directory from `files` (paths ending in `/` are directories).
    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let path = dir.path().join(f);
            if f.ends_with('/') {
                std::fs::create_dir_all(&path).unwrap();
            } else {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, "").unwrap();
            }
        }
        dir
    }

    fn check_detect(files: &[&str], expected: Result<BuildLayout, &str>) {
        let dir = tree(files);
        let res = BuildLayout::detect(dir.path()).map_err(|e| {
            e.to_string()
                .replace(&dir.path().display().to_string(), "<wd>")
        });
        assert_eq!(res, expected.map_err(str::to_string), "{files:?}");
    }

    #[test]
    fn detects_each_layout() {
        check_detect(
            &["kernel_config.py", "compiled_meta.json"],
            Ok(BuildLayout::SingleChip),
        );
        check_detect(
            &["kernel_config.py", "orchestration/host_orch.py"],
            Ok(BuildLayout::SingleChip),
        );
        check_detect(
            &[
                "orchestration/host_orch.py",
                "next_levels/chip/kernel_config.py",
            ],
            Ok(BuildLayout::Distributed),
        );
        check_detect(
            &[
                "next_levels/b/kernel_config.py",
                "next_levels/a/kernel_config.py",
                "next_levels/partial/kernels/",
                "next_levels/stray.txt",
            ],
            Ok(BuildLayout::MultiOrchParent {
                sub_builds: vec!["a".into(), "b".into()],
            }),
        );
        let not_build = "replay(): <wd> is not a build_output directory (missing kernel_config.py and orchestration/host_orch.py)";
        check_detect(&["compiled_meta.json", "kernels/aiv/x.cpp"], Err(not_build));
        check_detect(&["kernel_config.py/"], Err(not_build));
        check_detect(&["next_levels/a/"], Err(not_build));
    }

    #[test]
    fn missing_dir_and_file_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("gone");
        let err = BuildLayout::detect(&missing).unwrap_err();
        assert!(err.is_not_found());
        assert_eq!(
            err.to_string(),
            format!("build directory {} does not exist; pass the build_output/<name>_<timestamp>/ directory that ir.compile() wrote", missing.display())
        );
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        let err = BuildLayout::detect(&file).unwrap_err();
        assert!(!err.is_not_found());
        assert!(err
            .to_string()
            .starts_with(&format!("{} is not a directory", file.display())));
    }

    fn check_drop(
        kind: BuildKind,
        files: &[&str],
        expected_deleted: &[&str],
        expected_left: &[&str],
    ) {
        let dir = tree(files);
        let deleted = drop_foreign_build_markers(dir.path(), kind).unwrap();
        let deleted: Vec<PathBuf> = deleted
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().to_path_buf())
            .collect();
        let want: Vec<PathBuf> = expected_deleted.iter().map(PathBuf::from).collect();
        assert_eq!(deleted, want, "{kind:?}");
        for f in expected_left {
            assert!(dir.path().join(f).exists(), "{f} must survive ({kind:?})");
        }
    }

    #[test]
    fn marker_table() {
        let all = [
            "compiled_meta.json",
            "distributed_meta.json",
            "kernel_config.py",
            "orchestration/host_orch.py",
            "orchestration/main.cpp",
            "next_levels/a/kernel_config.py",
        ];
        check_drop(
            BuildKind::SingleChip,
            &all,
            &["distributed_meta.json", "orchestration/host_orch.py"],
            &[
                "compiled_meta.json",
                "kernel_config.py",
                "orchestration/main.cpp",
            ],
        );
        check_drop(
            BuildKind::Distributed,
            &all,
            &["compiled_meta.json", "kernel_config.py"],
            &[
                "distributed_meta.json",
                "orchestration/host_orch.py",
                "next_levels/a/kernel_config.py",
            ],
        );
        check_drop(
            BuildKind::MultiOrchParent,
            &all,
            &BUILD_KIND_MARKERS,
            &["orchestration/main.cpp", "next_levels/a/kernel_config.py"],
        );
        check_drop(
            BuildKind::MultiOrchParent,
            &["kernel_config.py/x"],
            &[],
            &["kernel_config.py/x"],
        );
        check_drop(BuildKind::SingleChip, &[], &[], &[]);
    }
}
