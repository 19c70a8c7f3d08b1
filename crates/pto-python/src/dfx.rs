//! The diagnostics switches on the Python side: [`dfx_switches`] hands the runner's table
//! (`pto_runner::dfx_switches::DFX_SWITCHES`) to `pypto.runtime._dfx_switches`, and
//! [`Switches`] reads the switch values of a `RunOptions` or of an L3 `CallConfig` dict, one
//! conversion and one set of texts for both.

use pto_runner::dfx_switches::{DfxSwitch, SwitchKind, DFX_SWITCHES};
use pto_runner::DfxOptions;
use pyo3::prelude::*;

use crate::conversion::{python_value_in_message, switch_value};

/// One diagnostics switch, as `pypto._native.dfx_switches()` lists it.
#[pyclass(module = "pypto._native", name = "DfxSwitch", frozen)]
pub struct DfxSwitchInfo {
    /// The runner's field name (`chip_swimlane`).
    #[pyo3(get)]
    name: &'static str,
    /// The Python keyword (`enable_chip_swimlane`).
    #[pyo3(get)]
    python_keyword: &'static str,
    /// The `pto` flag without its dashes (`swimlane`).
    #[pyo3(get)]
    cli_flag: &'static str,
    /// `level` (an int in `0..=max`) or `flag` (a bool).
    #[pyo3(get)]
    kind: &'static str,
    /// A level's largest value; `None` for a flag.
    #[pyo3(get)]
    max: Option<u32>,
    /// A level's value for `True` (the bare `pto` flag); `None` for a flag.
    #[pyo3(get)]
    bare: Option<u32>,
    /// A level's value name in command-line help (`LEVEL`, `N`); `None` for a flag.
    #[pyo3(get)]
    value_name: Option<&'static str>,
    /// The Python replay's option for the level when the bare flag takes no value
    /// (`swimlane-level`); `None`: the level is the flag's value.
    #[pyo3(get)]
    replay_level_option: Option<&'static str>,
    /// What it writes under `dfx_outputs/` (a directory ends in `/`).
    #[pyo3(get)]
    artifact: &'static str,
    /// What it records.
    #[pyo3(get)]
    help: &'static str,
}

#[pymethods]
impl DfxSwitchInfo {
    fn __repr__(&self) -> String {
        format!("DfxSwitch({:?})", self.python_keyword)
    }
}

/// The diagnostics switches, in the runner's order.
#[pyfunction]
pub fn dfx_switches() -> Vec<DfxSwitchInfo> {
    DFX_SWITCHES
        .iter()
        .map(|s| {
            let (kind, max, bare, value_name) = match s.kind {
                SwitchKind::Level {
                    max,
                    bare,
                    value_name,
                    ..
                } => ("level", Some(max), Some(bare), Some(value_name)),
                SwitchKind::Flag => ("flag", None, None, None),
            };
            DfxSwitchInfo {
                name: s.name,
                python_keyword: s.python_keyword,
                cli_flag: s.cli_flag,
                kind,
                max,
                bare,
                value_name,
                replay_level_option: s.replay_level_option,
                artifact: s.artifact,
                help: s.help,
            }
        })
        .collect()
}

/// The switch values read from Python, and the Python values their fields could not hold.
pub struct Switches {
    /// The values (`predicted_timing` off).
    pub options: DfxOptions,
    reprs: Vec<(&'static DfxSwitch, String)>,
}

impl Switches {
    /// Reads every switch: `lookup` returns the value under a Python keyword (`None`, or a
    /// Python `None`, keeps the switch off).
    pub fn read<'py>(
        lookup: impl Fn(&str) -> PyResult<Option<Bound<'py, PyAny>>>,
    ) -> PyResult<Switches> {
        let mut switches = Switches {
            options: DfxOptions::default(),
            reprs: Vec::new(),
        };
        for s in &DFX_SWITCHES {
            let Some(value) = lookup(s.python_keyword)?.filter(|v| !v.is_none()) else {
                continue;
            };
            let (stored, repr) = switch_value(s, &value, s.python_keyword)?;
            (s.set)(&mut switches.options, stored);
            if let Some(repr) = repr {
                switches.reprs.push((s, repr));
            }
        }
        Ok(switches)
    }

    /// A runner validation `message` with the Python value put back when it is about a
    /// switch whose field could not hold that value.
    pub fn python_message(&self, message: String) -> String {
        for (s, repr) in &self.reprs {
            if message.starts_with(&format!("{} ", s.python_keyword)) {
                let stored = (s.get)(&self.options).to_string();
                return python_value_in_message(message, &stored, Some(repr));
            }
        }
        message
    }
}

/// Adds the table's function and class to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DfxSwitchInfo>()?;
    m.add_function(wrap_pyfunction!(dfx_switches, m)?)?;
    Ok(())
}
