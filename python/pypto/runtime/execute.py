"""``execute_compiled``: run a compiled build directory once."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from pypto.runtime.run_config import RunConfig, RunResult

__all__ = ["execute_compiled"]


def execute_compiled(
    work_dir: Union[str, "os.PathLike[str]"],
    args: Sequence[Any],
    *,
    platform: Optional[str] = None,
    device_id: Optional[int] = None,
    config: Optional[RunConfig] = None,
) -> RunResult:
    """Runs the single-chip build in ``work_dir`` once with ``args`` (every parameter, in
    orchestration order; outputs are written into their arrays).

    ``config`` carries the DFX switches and ring overrides (default ``RunConfig()`` on the
    build's platform); ``platform`` / ``device_id`` override its fields. Diagnostics go to
    ``<work_dir>/dfx_outputs/``. Like ``CompiledProgram.from_dir``, this never splices
    ``.pto`` files nor forces recompilation.

    Returns a :class:`RunResult` whose ``profile`` holds the runtime's report.
    """
    from pypto.ir.compiled_program import CompiledProgram

    if platform is None and config is not None:
        platform = config.platform
    compiled = CompiledProgram.from_dir(work_dir, platform=platform)
    if config is None:
        config = RunConfig(platform=compiled.platform)
    overrides: dict[str, Any] = {}
    if platform is not None and platform != config.platform:
        overrides["platform"] = platform
    if device_id is not None and device_id != config.device_id:
        overrides["device_id"] = device_id
    if overrides:
        config = dataclasses.replace(config, **overrides)
    report = compiled.run(*args, config=config)
    return RunResult(
        passed=True,
        test_name=Path(work_dir).name,
        execution_time=report.wall_s,
        profile={
            "n_tasks": report.n_tasks,
            "platform": report.platform,
            "wall_s": report.wall_s,
            "device_time_s": report.device_time_s,
            "n_workers": report.n_workers,
            "dfx_files": list(report.dfx_files),
        },
    )
