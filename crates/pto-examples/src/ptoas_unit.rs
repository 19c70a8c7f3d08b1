//! Kernels generated from PTO-AS: a `ptoas/<unit>.pto` translated by our ptoas and spliced
//! into PyPTO's kernel wrapper, exactly as `pto replay` regenerates an edited unit.
//!
//! PyPTO compiles a kernel in three steps: its codegen writes `ptoas/<unit>.pto` (one module
//! per kernel, or per group for a mixed kernel), ptoas translates it into
//! `ptoas/<unit>.cpp`, and the preprocessed output goes between the two sentinels of
//! `kernels/<core>/<func>.cpp`, whose header and `kernel_entry` come from the wrapper
//! generator. The PTO-ISA examples are built the same way: their `.pto` and wrapper (the
//! kernel file outside the sentinels) are the hand-written sources, and [`PtoasUnit::new`]
//! runs the bundled translator with the options replay's fallback uses (level from
//! [`pto_level`], `--enable-insert-sync`, the arch from `pto.target_arch`). The splice is
//! replay's own ([`preprocess_ptoas_output`], [`splice_body`]), so replaying an unedited
//! example regenerates byte-identical kernels.

use pto_build_output::kernel_splice::{
    aicore_functions, preprocess_ptoas_output, pto_level, splice_body, PTOAS_BODY_BEGIN,
    PTOAS_BODY_END,
};

use crate::Error;

/// One ptoas unit: the `.pto` source and its translation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtoasUnit {
    /// The unit name: `ptoas/<name>.pto` (the kernel name, or the group name of a mixed
    /// kernel).
    pub name: &'static str,
    /// The PTO-AS text (`ptoas/<name>.pto`).
    pub pto: &'static str,
    /// The raw translation (`ptoas/<name>.cpp`, what `ptoas <name>.pto -o <name>.cpp` writes;
    /// replay treats it as the unit's build stamp).
    pub cpp: String,
}

impl PtoasUnit {
    /// Translates `pto` (the unit `name`) with the bundled ptoas, as replay's fallback does.
    pub fn new(name: &'static str, pto: &'static str) -> Result<PtoasUnit, Error> {
        let options = ptoas::Options {
            arch: None,
            level: ptoas::Level::from_name(pto_level(pto)).unwrap_or(ptoas::Level::Level2),
            infer_layout: true,
            insert_sync: true,
        };
        let file = format!("ptoas/{name}.pto");
        let cpp = ptoas::translate(pto, &file, &options).map_err(|source| Error::Ptoas {
            unit: name.to_string(),
            source,
        })?;
        Ok(PtoasUnit { name, pto, cpp })
    }

    /// The entry functions of the translation (PyPTO's `AICORE void <name>(` heads), in
    /// order: the kernel files replay splices this unit into.
    pub fn functions(&self) -> Vec<String> {
        aicore_functions(self.cpp.as_bytes())
    }

    /// The kernel file `kernels/<core>/<kernel>.cpp`: `wrapper` (a kernel file of PyPTO's
    /// shape, whose text between the sentinels is replaced) with this unit's preprocessed
    /// translation spliced in. `kernel` must be one of [`PtoasUnit::functions`], else replay
    /// would never regenerate the file from this unit.
    pub fn kernel_source(&self, kernel: &str, wrapper: &str) -> Result<String, Error> {
        let functions = self.functions();
        if !functions.iter().any(|f| f == kernel) {
            return Err(Error::Unsupported {
                what: format!(
                    "ptoas/{}.pto defines no entry function {kernel} (it defines {}); name the func.func after the kernel file kernels/<core>/{kernel}.cpp",
                    self.name,
                    if functions.is_empty() {
                        "none".to_string()
                    } else {
                        functions.join(", ")
                    }
                ),
            });
        }
        let body = preprocess_ptoas_output(self.cpp.as_bytes());
        let spliced =
            splice_body(wrapper.as_bytes(), &body).ok_or_else(|| Error::Unsupported {
                what: format!(
                    "the wrapper of kernel {kernel} lacks the sentinel lines {PTOAS_BODY_BEGIN:?} and {PTOAS_BODY_END:?} (in that order)"
                ),
            })?;
        String::from_utf8(spliced).map_err(|_| Error::Unsupported {
            what: format!("the wrapper of kernel {kernel} is not UTF-8"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNIT: &str = r#"module attributes {pto.target_arch = "a2a3"} {
  func.func @k(%arg0: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
  return
  }
}
"#;

    const WRAPPER: &str = "// head\n// --- ptoas-generated code ---\nold body\n// --- Kernel entry point ---\nentry\n";

    #[test]
    fn the_body_is_the_preprocessed_translation_between_the_sentinels() {
        let unit = PtoasUnit::new("k", UNIT).unwrap();
        assert_eq!(unit.functions(), ["k"]);
        let text = unit.kernel_source("k", WRAPPER).unwrap();
        let body = String::from_utf8(preprocess_ptoas_output(unit.cpp.as_bytes())).unwrap();
        assert_eq!(
            text,
            format!("// head\n// --- ptoas-generated code ---\n{body}// --- Kernel entry point ---\nentry\n")
        );
        assert!(text.contains("static __aicore__ void k("), "{text}");
        assert!(!text.contains("old body") && !text.contains("#include"));
    }

    #[test]
    fn a_kernel_the_unit_does_not_define_is_refused() {
        let unit = PtoasUnit::new("k", UNIT).unwrap();
        let e = unit
            .kernel_source("other", WRAPPER)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ptoas/k.pto defines no entry function other (it defines k)"),
            "{e}"
        );
        let e = unit
            .kernel_source("k", "no sentinels\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("lacks the sentinel lines"), "{e}");
    }

    #[test]
    fn a_translation_error_names_the_unit_file_and_line() {
        let e = PtoasUnit::new("bad", "module {\n  func.func @k() {\n  pto.nope\n  }\n}\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cannot translate ptoas/bad.pto: "), "{e}");
        assert!(e.contains("ptoas/bad.pto:3:"), "{e}");
    }
}
