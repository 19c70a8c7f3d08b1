//! Kernel names for the viewers: where they come from and how they show.
//!
//! A task's kernel is a `func_id`; its human name comes from a name map
//! (`name_map_<label>.json`, [`pto_dfx::name_map`]) or from the build's
//! `kernel_config.py` (`KERNELS[{func_id, name}]`, read leniently by
//! [`pto_build_output::load_name_map`], never executed). The tools find a
//! name map beside their input when none is given:
//!
//! - the swimlane converter takes a *unique* sibling `name_map*.json`
//!   (several → a warning and no names), [`SiblingPolicy::Unique`];
//! - the deps viewer, the critical path and the dump viewer take the newest
//!   by `(mtime, name)`, [`SiblingPolicy::Newest`].
//!
//! A `func_id` without a name shows as `func_<n>_<letters>`, the letters
//! being `n` in bijective base 26 (`0_a`, `25_z`, `26_aa`), as Simpler's
//! converter labels them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::ToolError;
use pto_dfx::error::Problem;

/// `func_id → name`, plus the orchestrator's name when the map has one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelNames {
    /// Names by func_id (L2) or callable index (L3).
    pub names: BTreeMap<i64, String>,
    /// `orchestrator_name` of a name map.
    pub orchestrator_name: Option<String>,
    /// The file the names came from.
    pub source: Option<PathBuf>,
}

impl KernelNames {
    /// The name of `func_id`, if known.
    pub fn get(&self, func_id: i64) -> Option<&str> {
        self.names.get(&func_id).map(String::as_str)
    }

    /// Whether no kernel has a name.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Reads a name map (structured or flat); ids that are not integers are
    /// skipped with a problem.
    pub fn from_name_map(path: &Path) -> Result<(Self, Vec<Problem>), ToolError> {
        let loaded = pto_dfx::name_map::read(path)?;
        let mut problems = loaded.problems;
        let mut names = BTreeMap::new();
        for (id, name) in loaded.value.callable_id_to_name {
            match id.trim().parse::<i64>() {
                Ok(n) => {
                    names.insert(n, name);
                }
                Err(_) => problems.push(Problem::new(
                    format!("callable_id_to_name.{id}"),
                    "is not an integer id; skipped it",
                )),
            }
        }
        Ok((
            Self {
                names,
                orchestrator_name: loaded.value.orchestrator_name,
                source: Some(path.to_path_buf()),
            },
            problems,
        ))
    }

    /// Reads `KERNELS` of a `kernel_config.py`; skipped entries are problems.
    pub fn from_kernel_config(path: &Path) -> Result<(Self, Vec<Problem>), ToolError> {
        let map = pto_build_output::load_name_map(path)?;
        let problems = map
            .skipped
            .into_iter()
            .map(|line| Problem::new("KERNELS", line))
            .collect();
        Ok((
            Self {
                names: map
                    .names
                    .into_iter()
                    .map(|(k, v)| (i64::from(k), v))
                    .collect(),
                orchestrator_name: None,
                source: Some(path.to_path_buf()),
            },
            problems,
        ))
    }

    /// `name` or `func_<n>_<letters>` for a known func_id.
    pub fn label(&self, func_id: i64) -> String {
        match self.get(func_id) {
            Some(name) => name.to_string(),
            None => func_placeholder(func_id),
        }
    }
}

/// `func_<n>_<letters>`: the label of a func_id without a name.
pub fn func_placeholder(func_id: i64) -> String {
    if func_id < 0 {
        return format!("func_{func_id}_");
    }
    format!("func_{func_id}_{}", bijective_letters(func_id as u64))
}

/// `n` in bijective base 26 over `a..z`: 0 → `a`, 25 → `z`, 26 → `aa`.
pub fn bijective_letters(n: u64) -> String {
    let mut n = n + 1;
    let mut out = Vec::new();
    while n > 0 {
        n -= 1;
        out.push(b'a' + (n % 26) as u8);
        n /= 26;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// How a tool picks a name map among its input's siblings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SiblingPolicy {
    /// Exactly one candidate, or none (several → a problem, no names).
    Unique,
    /// The newest by `(mtime, name)`.
    Newest,
}

/// The `name_map*.json` files directly in `dir`, sorted by name.
pub fn sibling_name_maps(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.starts_with("name_map") && n.ends_with(".json") && !n.starts_with('.')
                })
        })
        .collect();
    found.sort();
    found
}

/// Where names come from: an explicit name map, else an explicit
/// `kernel_config.py`, else a sibling of `dir` chosen by `policy`.
///
/// Returns no names (and no error) when nothing is found; problems say why
/// when several siblings made the choice ambiguous.
pub fn resolve(
    dir: &Path,
    func_names: Option<&Path>,
    kernel_config: Option<&Path>,
    policy: SiblingPolicy,
) -> Result<(KernelNames, Vec<Problem>), ToolError> {
    if let Some(path) = func_names {
        return KernelNames::from_name_map(path);
    }
    if let Some(path) = kernel_config {
        return KernelNames::from_kernel_config(path);
    }
    let candidates = sibling_name_maps(dir);
    let chosen = match policy {
        SiblingPolicy::Unique => match candidates.len() {
            0 => None,
            1 => candidates.first().cloned(),
            n => {
                let list: Vec<String> = candidates
                    .iter()
                    .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .collect();
                return Ok((
                    KernelNames::default(),
                    vec![Problem::new(
                        "name_map*.json",
                        format!(
                            "{n} name maps beside the input ({}); used none, pass one with `--func-names`",
                            list.join(", ")
                        ),
                    )],
                ));
            }
        },
        SiblingPolicy::Newest => candidates
            .iter()
            .max_by_key(|p| {
                let mtime = std::fs::metadata(p).and_then(|m| m.modified()).ok();
                (mtime, p.file_name().map(|n| n.to_os_string()))
            })
            .cloned(),
    };
    match chosen {
        Some(path) => KernelNames::from_name_map(&path),
        None => Ok((KernelNames::default(), Vec::new())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_are_bijective_base_26() {
        assert_eq!(bijective_letters(0), "a");
        assert_eq!(bijective_letters(25), "z");
        assert_eq!(bijective_letters(26), "aa");
        assert_eq!(bijective_letters(27), "ab");
        assert_eq!(bijective_letters(701), "zz");
        assert_eq!(bijective_letters(702), "aaa");
        assert_eq!(func_placeholder(3), "func_3_d");
        assert_eq!(func_placeholder(-1), "func_-1_");
    }

    #[test]
    fn sibling_policies() {
        let dir = tempfile::tempdir().unwrap();
        let (names, problems) = resolve(dir.path(), None, None, SiblingPolicy::Unique).unwrap();
        assert!(names.is_empty() && problems.is_empty());
        let a = dir.path().join("name_map_a.json");
        std::fs::write(&a, r#"{"level": 2, "orchestrator_name": "O", "callable_id_to_name": {"0": "QK", "x": "bad"}}"#).unwrap();
        let (names, problems) = resolve(dir.path(), None, None, SiblingPolicy::Unique).unwrap();
        assert_eq!(names.get(0), Some("QK"));
        assert_eq!(names.orchestrator_name.as_deref(), Some("O"));
        assert_eq!(problems.len(), 1, "{problems:?}");
        std::fs::write(dir.path().join("name_map_b.json"), r#"{"1": "SF"}"#).unwrap();
        let (names, problems) = resolve(dir.path(), None, None, SiblingPolicy::Unique).unwrap();
        assert!(names.is_empty());
        assert!(problems[0].message.contains("2 name maps"), "{problems:?}");
        let (names, _) = resolve(dir.path(), None, None, SiblingPolicy::Newest).unwrap();
        assert!(!names.is_empty());
        let (names, _) = resolve(dir.path(), Some(&a), None, SiblingPolicy::Unique).unwrap();
        assert_eq!(names.label(0), "QK");
        assert_eq!(names.label(1), "func_1_b");
    }

    #[test]
    fn kernel_config_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kernel_config.py");
        std::fs::write(
            &path,
            "KERNELS = [{\"func_id\": 0, \"name\": \"add\"}, {\"name\": \"no_id\"}]\n",
        )
        .unwrap();
        let (names, problems) =
            resolve(dir.path(), None, Some(&path), SiblingPolicy::Unique).unwrap();
        assert_eq!(names.get(0), Some("add"));
        assert_eq!(problems.len(), 1);
    }
}
