//! Writing `kernel_config.py` in exactly the layout PyPTO's codegen emits.
//!
//! The layout (`pto_backend._generate_config_file`): a header whose lines
//! are each followed by a blank line, TAB-indented dict bodies, one line per
//! kernel sorted by `func_id`, the `_D` import only when some signature is
//! non-empty, `"enable_sdma": True` only when set. Paths under the build
//! directory become `str(_ROOT_DIR / "a" / "b")`; external kernel sources and
//! paths elsewhere are written as Python string literals (`repr`). An empty
//! signature is written like an absent one, as PyPTO does.

use std::path::{Component, Path};

use super::{ArgDirection, KernelConfig, KernelConfigError, KernelEntry};
use crate::pyrepr::{double_quoted, repr_str};

/// Renders paths relative to the build directory of the file being written.
struct PathWriter<'a> {
    root: &'a Path,
    file: &'a Path,
}

impl PathWriter<'_> {
    fn utf8<'p>(&self, path: &'p Path) -> Result<&'p str, KernelConfigError> {
        path.to_str()
            .ok_or_else(|| KernelConfigError::Unrepresentable {
                path: self.file.to_path_buf(),
                message: format!("path {} is not valid UTF-8", path.display()),
            })
    }

    /// `repr(str(path))`.
    fn literal(&self, path: &Path) -> Result<String, KernelConfigError> {
        Ok(repr_str(self.utf8(path)?))
    }

    /// `str(_ROOT_DIR / ...)` when `path` lies under the build directory (or
    /// is relative, i.e. relative to it), else the literal.
    fn expr(&self, path: &Path) -> Result<String, KernelConfigError> {
        let rel = if path.is_relative() {
            Some(path)
        } else {
            path.strip_prefix(self.root).ok()
        };
        let Some(rel) = rel.filter(|r| r.components().all(|c| matches!(c, Component::Normal(_))))
        else {
            return self.literal(path);
        };
        let mut out = String::from("str(_ROOT_DIR");
        for part in rel.iter() {
            out.push_str(" / ");
            out.push_str(&double_quoted(self.utf8(Path::new(part))?));
        }
        out.push(')');
        Ok(out)
    }
}

fn signature_text(sig: &[ArgDirection]) -> String {
    let parts: Vec<String> = sig.iter().map(|d| format!("_D.{}", d.name())).collect();
    format!("[{}]", parts.join(", "))
}

fn non_empty(sig: &Option<Vec<ArgDirection>>) -> Option<&[ArgDirection]> {
    sig.as_deref().filter(|s| !s.is_empty())
}

fn kernel_line(k: &KernelEntry, paths: &PathWriter<'_>) -> Result<String, KernelConfigError> {
    let source = if k.external {
        paths.literal(&k.source)?
    } else {
        paths.expr(&k.source)?
    };
    let mut line = format!(
        "\t{{\"func_id\": {}, \"name\": {}, \"source\": {source}, \"core_type\": \"{}\"",
        k.func_id,
        double_quoted(&k.name),
        k.core_type.as_str()
    );
    if k.external {
        line.push_str(", \"external\": True");
    }
    if !k.extra_include_dirs.is_empty() {
        let dirs = k
            .extra_include_dirs
            .iter()
            .map(|d| paths.literal(d))
            .collect::<Result<Vec<_>, _>>()?;
        line.push_str(&format!(", \"extra_include_dirs\": [{}]", dirs.join(", ")));
    }
    if let Some(sig) = non_empty(&k.signature) {
        line.push_str(&format!(", \"signature\": {}", signature_text(sig)));
    }
    line.push_str("},");
    Ok(line)
}

impl KernelConfig {
    /// The text of `kernel_config.py` for a build directory `root_dir`
    /// (what `_ROOT_DIR` will be); `file_for_errors` names the target in
    /// errors. Fails only for a path that is not valid UTF-8.
    pub fn to_python_source(
        &self,
        root_dir: &Path,
        file_for_errors: &Path,
    ) -> Result<String, KernelConfigError> {
        let paths = PathWriter {
            root: root_dir,
            file: file_for_errors,
        };
        let has_signatures = non_empty(&self.orchestration.signature).is_some()
            || self
                .kernels
                .iter()
                .any(|k| non_empty(&k.signature).is_some());
        let runtime = &self.runtime.runtime;
        // The comment line must stay one line whatever the runtime name holds.
        let runtime_in_comment: String = runtime.chars().filter(|c| !c.is_control()).collect();

        let mut lines: Vec<String> = vec![
            "# Kernel and Orchestration Configuration\n".into(),
            "from pathlib import Path\n".into(),
        ];
        if has_signatures {
            lines.push("from simpler.task_interface import ArgDirection as _D\n".into());
        }
        lines.push("_ROOT_DIR = Path(__file__).parent\n".into());
        lines.push(format!("# Runtime configuration for {runtime_in_comment}."));
        lines.push(
            "# AICPU thread count 0 selects the runtime's architecture default (a2a3: 4; a5: 5)."
                .into(),
        );
        lines.push("RUNTIME_CONFIG = {".into());
        lines.push(format!("\t\"runtime\": {},", double_quoted(runtime)));
        lines.push(format!(
            "\t\"aicpu_thread_num\": {},",
            self.runtime.aicpu_thread_num
        ));
        if self.runtime.enable_sdma {
            lines.push("\t\"enable_sdma\": True,".into());
        }
        lines.push("}\n".into());
        lines.push("ORCHESTRATION = {".into());
        lines.push(format!(
            "\t\"source\": {},",
            paths.expr(&self.orchestration.source)?
        ));
        lines.push(format!(
            "\t\"function_name\": {},",
            double_quoted(&self.orchestration.function_name)
        ));
        if let Some(name) = &self.orchestration.config_name {
            lines.push(format!("\t\"config_name\": {},", double_quoted(name)));
        }
        if let Some(sig) = non_empty(&self.orchestration.signature) {
            lines.push(format!("\t\"signature\": {},", signature_text(sig)));
        }
        lines.push("}\n".into());
        lines.push("KERNELS = [".into());
        let mut kernels: Vec<&KernelEntry> = self.kernels.iter().collect();
        kernels.sort_by_key(|k| k.func_id);
        for k in kernels {
            lines.push(kernel_line(k, &paths)?);
        }
        lines.push("]".into());
        let mut text = lines.join("\n");
        text.push('\n');
        Ok(text)
    }

    /// Writes this config to `path` atomically; `_ROOT_DIR` is the directory
    /// holding `path`. Writes what it is given: it does not re-validate
    /// (e.g. `func_id` uniqueness), so build configs through [`load`] or
    /// with care.
    ///
    /// [`load`]: KernelConfig::load
    pub fn write(&self, path: &Path) -> Result<(), KernelConfigError> {
        let text = self.to_python_source(&super::parent_dir(path), path)?;
        crate::fs::write_atomic(path, text.as_bytes())?;
        Ok(())
    }
}
