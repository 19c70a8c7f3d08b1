//! Running a loaded build with caller-provided parameters, and collecting its diagnostics.

use pto_runtime::RunReport;

use crate::build::CompiledBuild;
use crate::config::RunConfig;
use crate::dfx_output::{dfx_dir, write_artifacts, DfxSummary};
use crate::error::RunnerError;
use crate::inputs::{orch_args, BoundParam};

/// What one execution did.
#[derive(Debug)]
pub struct ExecuteOutcome {
    /// The runtime's report.
    pub report: RunReport,
    /// Diagnostics written under `<build>/dfx_outputs/`, hints and warnings.
    pub dfx: DfxSummary,
}

impl CompiledBuild {
    /// The parameter names, in orchestration order.
    pub fn param_names(&self) -> Vec<&str> {
        self.meta.params.iter().map(|p| p.name.as_str()).collect()
    }

    /// Runs once with `params` (outputs are written back into them). Diagnostics enabled
    /// in `config` go to `<build>/dfx_outputs/`.
    pub fn execute(&self, params: &mut [BoundParam], config: &RunConfig) -> Result<ExecuteOutcome, RunnerError> {
        if params.len() != self.meta.params.len() {
            return Err(RunnerError::Config {
                message: format!(
                    "{} expects {} arguments ({}), got {}",
                    self.dir.display(),
                    self.meta.params.len(),
                    self.param_names().join(", "),
                    params.len()
                ),
                kind: crate::error::ErrorKind::Type,
            });
        }
        let out = dfx_dir(&self.dir);
        let chip_config = config.chip_config(config.dfx.any().then_some(out.as_path()))?;
        let report = {
            let mut args = orch_args(params)?;
            pto_runtime::run(&self.program, &mut args, &chip_config)?
        };
        tracing::info!(
            "ran {} tasks on {} in {:.3} ms (device {:.3} ms)",
            report.n_tasks,
            report.platform,
            report.wall.as_secs_f64() * 1e3,
            report.device_time.as_secs_f64() * 1e3
        );
        let label = self.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let dfx = write_artifacts(&out, &config.dfx, &report, &chip_config, &self.kernel_config.name_map(), &label)?;
        Ok(ExecuteOutcome { report, dfx })
    }
}
