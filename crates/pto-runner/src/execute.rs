//! Running a loaded build with caller-provided parameters, and collecting its diagnostics.

use pto_runtime::RunReport;

use crate::build::CompiledBuild;
use crate::config::RunConfig;
use crate::dfx_output::{dfx_dir, write_artifacts, DfxSummary};
use crate::error::RunnerError;
use crate::inputs::{orch_args, BoundParam};
use crate::two_pass;

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

    /// Runs with `params` (outputs are written back into them). Diagnostics enabled in
    /// `config` go to `<build>/dfx_outputs/`; a swimlane on `cpu` takes the two-pass path
    /// ([`crate::two_pass`]). Progress lines the seeds print go to `say`.
    pub fn execute_with(
        &self,
        params: &mut [BoundParam],
        config: &RunConfig,
        say: &mut dyn FnMut(&str),
    ) -> Result<ExecuteOutcome, RunnerError> {
        let outcome = self.execute_unnoted(params, config, say)?;
        // A source or binary edited since the load: this run used the loaded program
        // (`pto_toolchain::freshness`, "Files that change while a program is loaded").
        if let Some(note) = self.loaded_files.change_note(&self.identity) {
            say(&note);
        }
        Ok(outcome)
    }

    fn execute_unnoted(
        &self,
        params: &mut [BoundParam],
        config: &RunConfig,
        say: &mut dyn FnMut(&str),
    ) -> Result<ExecuteOutcome, RunnerError> {
        self.check_arity(params)?;
        if !config.in_process {
            return crate::chip_process::execute(self, params, config, say);
        }
        let out = dfx_dir(&self.dir);
        if !two_pass::applies(config) {
            return self.execute_pass(params, config, &out);
        }
        config.chip_config(Some(&out))?;
        for line in two_pass::BANNER {
            say(line);
        }
        for line in two_pass::capture_deps(&self.dir, &out, params, config) {
            say(&line);
        }
        let mut timing = config.clone();
        timing.dfx.dep_gen = false;
        let mut outcome = self.execute_pass(params, &timing, &out)?;
        let deps = [pto_dfx::deps::FILE_NAME, pto_dfx::compact::deps::FILE_NAME]
            .map(|n| out.join(n))
            .into_iter()
            .find(|p| p.exists());
        if let Some(deps) = deps.filter(|_| config.dfx.dep_gen) {
            outcome.dfx.hints.push(format!(
                "pto deps-viewer {} --format html",
                crate::dfx_output::shell_quote(&deps.display().to_string())
            ));
        }
        Ok(outcome)
    }

    /// [`CompiledBuild::execute_with`] without progress lines.
    pub fn execute(
        &self,
        params: &mut [BoundParam],
        config: &RunConfig,
    ) -> Result<ExecuteOutcome, RunnerError> {
        self.execute_with(params, config, &mut |_| {})
    }

    fn check_arity(&self, params: &[BoundParam]) -> Result<(), RunnerError> {
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
        Ok(())
    }

    /// One run writing its diagnostics into `out` (no two-pass protocol).
    pub fn execute_pass(
        &self,
        params: &mut [BoundParam],
        config: &RunConfig,
        out: &std::path::Path,
    ) -> Result<ExecuteOutcome, RunnerError> {
        self.check_arity(params)?;
        if !config.in_process {
            return crate::chip_process::execute_pass(self, params, config, out);
        }
        let mut args = orch_args(params)?;
        self.execute_args(&mut args, config, out)
    }

    /// One in-process run over the runtime's arguments, writing its diagnostics into `out`.
    pub fn execute_args(
        &self,
        args: &mut [pto_runtime::OrchArg<'_>],
        config: &RunConfig,
        out: &std::path::Path,
    ) -> Result<ExecuteOutcome, RunnerError> {
        if !config.dfx.writes_files() {
            let chip_config = config.chip_config(None)?;
            let report = pto_runtime::run(&self.program, args, &chip_config)?;
            self.log_run(&report);
            return Ok(ExecuteOutcome {
                report,
                dfx: crate::dfx_output::DfxSummary::default(),
            });
        }
        if config.dfx.predicted_only() {
            return self.execute_predicted_only(args, config, out);
        }
        // Diagnostics are written into a staging directory and published as a set
        // (crate::dfx_publish), so a failed or concurrent run never mixes files.
        let staging = crate::dfx_publish::staging_dir(out)?;
        let result = self.execute_staged(args, config, &staging);
        match result {
            Ok(_) if !crate::chip_process::host_alive() => {
                // The host that asked for this run is gone (killed): its artifacts must
                // not appear after it (the heartbeat thread ends this process shortly).
                crate::dfx_publish::abandon(&staging);
                Err(RunnerError::ChipProcess {
                    message: "the host process is gone; this run's diagnostics are discarded"
                        .to_string(),
                })
            }
            Ok((report, mut dfx)) => {
                crate::dfx_publish::publish(&staging, out, &mut dfx.files, self.identity.as_str())?;
                let (from, to) = (staging.display().to_string(), out.display().to_string());
                for h in &mut dfx.hints {
                    *h = h.replace(&from, &to);
                }
                Ok(ExecuteOutcome { report, dfx })
            }
            Err(e) => {
                crate::dfx_publish::abandon(&staging);
                Err(e)
            }
        }
    }

    /// `--timing predicted` alone: the run, the prediction and its one file, published
    /// without a staging directory ([`crate::dfx_publish::publish_file`]).
    fn execute_predicted_only(
        &self,
        args: &mut [pto_runtime::OrchArg<'_>],
        config: &RunConfig,
        out: &std::path::Path,
    ) -> Result<ExecuteOutcome, RunnerError> {
        let chip_config = config.chip_config(Some(out))?;
        let mut report = pto_runtime::run(&self.program, args, &chip_config)?;
        self.log_run(&report);
        let p = crate::predicted::apply(&mut report, &chip_config);
        let mut dfx = crate::dfx_output::DfxSummary::default();
        report_prediction(&p, &mut dfx);
        if !crate::chip_process::host_alive() {
            return Err(RunnerError::ChipProcess {
                message: "the host process is gone; this run's diagnostics are discarded"
                    .to_string(),
            });
        }
        dfx.files.push(crate::dfx_publish::publish_file(
            out,
            crate::predicted::FILE_NAME,
            crate::predicted::summary_text(&p, &chip_config).as_bytes(),
            self.identity.as_str(),
        )?);
        Ok(ExecuteOutcome { report, dfx })
    }

    fn log_run(&self, report: &RunReport) {
        tracing::info!(
            "ran {} tasks on {} in {:.3} ms (device {:.3} ms)",
            report.n_tasks,
            report.platform,
            report.wall.as_secs_f64() * 1e3,
            report.device_time.as_secs_f64() * 1e3
        );
    }

    fn execute_staged(
        &self,
        args: &mut [pto_runtime::OrchArg<'_>],
        config: &RunConfig,
        out: &std::path::Path,
    ) -> Result<(RunReport, crate::dfx_output::DfxSummary), RunnerError> {
        let chip_config = config.chip_config(Some(out))?;
        let run_epoch = crate::dfx_output::next_run_epoch();
        let mut report = pto_runtime::run(&self.program, args, &chip_config)?;
        self.log_run(&report);
        let prediction = config
            .dfx
            .predicted_timing
            .then(|| crate::predicted::apply(&mut report, &chip_config));
        let stamp = crate::dfx_output::RunStamp {
            schema: crate::dfx_output::schema_for(&self.kernel_config, config.dfx_schema),
            run_epoch,
        };
        let label = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dfx = write_artifacts(
            out,
            &config.dfx,
            config.dfx_format,
            stamp,
            &report,
            &chip_config,
            &self.kernel_config.name_map(),
            orchestrator_name(&self.kernel_config.orchestration).as_deref(),
            &label,
        )?;
        let mut dfx = dfx;
        if let Some(p) = &prediction {
            report_prediction(p, &mut dfx);
            std::fs::create_dir_all(out).map_err(|source| RunnerError::Io {
                action: "creating",
                path: out.to_path_buf(),
                source,
            })?;
            dfx.files
                .push(crate::predicted::write_summary(out, p, &chip_config)?);
            if config.dfx.chip_swimlane > 0 {
                dfx.files.push(crate::predicted::write_pipes(out, p)?);
            }
        }
        Ok((report, dfx))
    }
}

/// Logs the prediction's makespan and warns about unmodelled subtasks.
fn report_prediction(p: &crate::predicted::Prediction, dfx: &mut crate::dfx_output::DfxSummary) {
    tracing::info!(
        "predicted device time: {} cycles ({:.3} us), {} subtasks modelled, {} not",
        p.makespan_cycles,
        p.makespan_ns() / 1e3,
        p.modelled,
        p.unmodelled.len()
    );
    if !p.unmodelled.is_empty() {
        let (task, _, why) = &p.unmodelled[0];
        dfx.warnings.push(format!(
            "timing: {} subtask(s) not modelled (0 cycles), e.g. task {}: {why}; see {}",
            p.unmodelled.len(),
            pto_dfx::task_id::TaskId(*task),
            crate::predicted::FILE_NAME
        ));
    }
}

/// The name map's `orchestrator_name`: the orchestration's name, which is the stem of its
/// source (PyPTO writes `orchestration/<name>.cpp`); `None` when it has none.
fn orchestrator_name(
    orch: &pto_build_output::kernel_config::OrchestrationConfig,
) -> Option<String> {
    orch.source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
}
