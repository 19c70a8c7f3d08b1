"""Running a loaded build on the chip: :func:`execute_on_device` (PyPTO's
``pypto.runtime.device_runner``) and the helpers every run path shares.

``chip_callable`` here is this runtime's loaded build (``CompiledProgram.chip_callable``,
a ``pypto._native.Program``), not Simpler's ``ChipCallable``.
"""

from __future__ import annotations

import os

from pypto import _native

# The replay's command line imports this module for _log_report: typing, pathlib, logging
# and the switches' table are imported where they are used.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Union

    from pypto.runtime.runner import RunConfig

__all__ = ["execute_on_device"]


def _load_program(work_dir: Union[str, "os.PathLike[str]"], platform: Optional[str]) -> _native.Program:
    """Loads and compiles the build in ``work_dir`` for ``platform`` (binaries cached
    beside the sources are reused when they match)."""
    return _native.Program.load(work_dir, platform)


def _log_report(report: _native.ExecuteReport) -> None:
    """The run's diagnostics warnings, files and viewer hints, on the ``pypto.runtime``
    logger (warnings are printed on stderr unless logging is configured otherwise)."""
    if not (report.dfx_warnings or report.dfx_files or report.dfx_hints):
        return
    import logging

    _logger = logging.getLogger("pypto.runtime")
    for warning in report.dfx_warnings:
        _logger.warning("%s", warning)
    if report.dfx_files:
        _logger.info("DFX artefacts: %s", ", ".join(report.dfx_files))
    for hint in report.dfx_hints:
        _logger.info("view with: %s", hint)


def _run_program(program: _native.Program, host: List[Any], config: "RunConfig") -> _native.ExecuteReport:
    """One run of ``program`` with host arguments (outputs written back), the run's
    diagnostics logged."""
    report = program.execute(host, config.native_options())
    _log_report(report)
    return report


def execute_on_device(
    chip_callable: _native.Program,
    orch_args: List[Any],
    platform: str,
    runtime_name: str,
    device_id: int,
    *,
    level: int = 2,
    aicpu_thread_num: Optional[int] = None,
    enable_sdma: bool = False,
    output_prefix: Optional[str] = None,
    enable_chip_swimlane: Union[int, bool] = 0,
    enable_dump_args: int = 0,
    enable_pmu: int = 0,
    enable_dep_gen: bool = False,
    enable_scope_stats: bool = False,
    runtime_env: Optional[Dict[str, Any]] = None,
) -> None:
    """Runs a loaded build once with packed arguments (``CompiledProgram.build_orch_args``).

    PyPTO's checks come first, with its texts: ``level`` must be 2, and ``output_prefix`` is
    required when any diagnostic is on. The diagnostics are written to the build's
    ``dfx_outputs/`` (this runtime publishes them there as a set); an ``output_prefix``
    elsewhere is refused. ``runtime_name``, ``aicpu_thread_num``, ``enable_sdma`` and
    ``runtime_env`` are accepted for PyPTO's signature.
    """
    from pathlib import Path

    from pypto.runtime import _dfx_switches

    # The diagnostics switches of PyPTO's signature, by keyword (the table's rows).
    switches = {k: v for k, v in locals().items() if k in _dfx_switches.KEYWORDS}
    del runtime_name, aicpu_thread_num, enable_sdma, runtime_env
    from pypto.runtime.runner import RunConfig, _coerced_to_orch_args

    if level != 2:
        raise ValueError(
            f"execute_on_device currently only supports level=2; got level={level}. "
            "L3 execution is not yet exposed at the pypto user-API layer."
        )
    dfx_on = _dfx_switches.any_enabled(switches)
    if dfx_on and not output_prefix:
        raise ValueError(
            "execute_on_device: output_prefix is required when any DFX flag "
            f"({_dfx_switches.keywords_text()}) is enabled — runtime CallConfig::validate() "
            "would otherwise reject the call."
        )
    expected = Path(chip_callable.dir) / "dfx_outputs"
    if dfx_on and output_prefix and Path(output_prefix).resolve() != expected.resolve():
        raise ValueError(
            f"execute_on_device: output_prefix {output_prefix} is not {expected}; this runtime "
            "writes a build's diagnostics into its own dfx_outputs/ directory"
        )
    config = RunConfig(platform=platform, device_id=device_id, **switches)
    _run_program(chip_callable, _coerced_to_orch_args(orch_args), config)
