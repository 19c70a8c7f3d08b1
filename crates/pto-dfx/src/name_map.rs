//! `name_map_<label>.json`: kernel (callable) ids to names for the viewers.
//!
//! Simpler writes it with Python's `json.dump(mapping, f, indent=2)`: keys
//! `level`, `orchestrator_name`, `callable_id_to_name` in that order, two-space
//! indentation, `": "` after keys, non-ASCII escaped as `\uXXXX`, **no**
//! trailing newline; `callable_id_to_name` is omitted when empty. [`render`]
//! reproduces that byte for byte.
//!
//! [`read`] also accepts the flat `{"<id>": "<name>"}` form the deps viewer
//! takes. An entry whose name is not a string is skipped with a [`Problem`].

use std::path::{Path, PathBuf};

use crate::atomic::atomic_write;
use crate::error::{Loaded, Problem, ReadError, WriteError};
use crate::json::{self, Node};

/// The file-name prefix; the file is `name_map_<label>.json`.
pub const FILE_PREFIX: &str = "name_map_";

/// The mapping.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameMap {
    /// `level`: 2 (ids are incore `func_id`s) or 3 (ids index the callables);
    /// `None` for a flat file (then the key is not written).
    pub level: Option<u32>,
    /// `orchestrator_name`: `null` when unknown.
    pub orchestrator_name: Option<String>,
    /// `callable_id_to_name`, in file order; ids are decimal strings.
    pub callable_id_to_name: Vec<(String, String)>,
}

impl NameMap {
    /// The name for callable / func id `id`.
    pub fn name_for(&self, id: i64) -> Option<&str> {
        let key = id.to_string();
        self.callable_id_to_name
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Simpler's `_sanitize_for_filename`: every character outside
/// `[A-Za-z0-9._-]` becomes `_`.
pub fn sanitize_for_filename(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The label of a SceneTest case: `sanitize(f"{class_name}_{case_name}")`.
pub fn label_for(class_name: &str, case_name: &str) -> String {
    sanitize_for_filename(&format!("{class_name}_{case_name}"))
}

/// `<output_prefix>/name_map_<label>.json`.
pub fn path_for(output_prefix: &Path, label: &str) -> PathBuf {
    output_prefix.join(format!("{FILE_PREFIX}{label}.json"))
}

// ---------------------------------------------------------------- writer

/// The file's exact bytes (no trailing newline, as `json.dump` writes).
pub fn render(map: &NameMap) -> String {
    let mut items: Vec<String> = Vec::with_capacity(3);
    if let Some(level) = map.level {
        items.push(format!("\"level\": {level}"));
    }
    let mut orch = String::from("\"orchestrator_name\": ");
    match &map.orchestrator_name {
        Some(name) => pto_base::json::push_str_ascii(&mut orch, name),
        None => orch.push_str("null"),
    }
    items.push(orch);
    if !map.callable_id_to_name.is_empty() {
        let mut ids = String::from("\"callable_id_to_name\": {");
        for (i, (id, name)) in map.callable_id_to_name.iter().enumerate() {
            ids.push_str(if i > 0 { ",\n    " } else { "\n    " });
            pto_base::json::push_str_ascii(&mut ids, id);
            ids.push_str(": ");
            pto_base::json::push_str_ascii(&mut ids, name);
        }
        ids.push_str("\n  }");
        items.push(ids);
    }
    format!("{{\n  {}\n}}", items.join(",\n  "))
}

/// Writes `map` to `path` atomically.
pub fn write(path: &Path, map: &NameMap) -> Result<(), WriteError> {
    atomic_write(path, render(map).as_bytes())
}

// ---------------------------------------------------------------- reader

/// Reads the file at `path`.
pub fn read(path: &Path) -> Result<Loaded<NameMap>, ReadError> {
    parse(&json::read_file(path)?, path)
}

/// Parses file content; `path` only names the file in messages.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Loaded<NameMap>, ReadError> {
    let value = json::parse(bytes, path)?;
    let root = Node::root(&value);
    let obj = root.object().map_err(|e| e.into_read_error(path))?;
    let mut problems = Vec::new();
    let structured = ["level", "orchestrator_name", "callable_id_to_name"]
        .iter()
        .any(|k| obj.contains_key(*k));
    if !structured {
        let map = NameMap {
            level: None,
            orchestrator_name: None,
            callable_id_to_name: entries(&root, &mut problems),
        };
        return Ok(Loaded {
            value: map,
            problems,
        });
    }
    let level = match root.field("level").and_then(|n| n.u32()) {
        Ok(v) => Some(v),
        Err(issue) => {
            problems.push(issue.into_problem("read without a level"));
            None
        }
    };
    let orchestrator_name = match root.opt_field("orchestrator_name").and_then(|n| match n {
        Some(n) => n.opt_str(),
        None => Ok(None),
    }) {
        Ok(v) => v.map(str::to_string),
        Err(issue) => {
            problems.push(issue.into_problem("read as null"));
            None
        }
    };
    let callable_id_to_name = match root.opt_field("callable_id_to_name") {
        Ok(Some(n)) => match n.object() {
            Ok(_) => entries(&n, &mut problems),
            Err(issue) => {
                problems.push(issue.into_problem("read no names"));
                Vec::new()
            }
        },
        _ => Vec::new(),
    };
    Ok(Loaded {
        value: NameMap {
            level,
            orchestrator_name,
            callable_id_to_name,
        },
        problems,
    })
}

/// The string-valued entries of an object node.
fn entries(n: &Node<'_, '_>, problems: &mut Vec<Problem>) -> Vec<(String, String)> {
    let Ok(obj) = n.object() else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(obj.len());
    for (k, v) in obj {
        match v.as_str() {
            Some(name) => out.push((k.clone(), name.to_string())),
            None => {
                let key = match n.key {
                    json::Key::Root => k.clone(),
                    ref parent => format!("{parent}.{k}"),
                };
                problems.push(Problem::new(
                    key,
                    format!(
                        "should be a string, found {}; skipped it",
                        json::type_name(v)
                    ),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizes_like_simpler() {
        assert_eq!(label_for("TestDemo", "default"), "TestDemo_default");
        assert_eq!(sanitize_for_filename("a b/c:d.é-x"), "a_b_c_d._-x");
    }

    #[test]
    fn escapes_like_python_ensure_ascii() {
        let mut s = String::new();
        pto_base::json::push_str_ascii(&mut s, "a\"\\\n\u{1}\u{7f}é😀");
        assert_eq!(s, "\"a\\\"\\\\\\n\\u0001\\u007f\\u00e9\\ud83d\\ude00\"");
    }
}
