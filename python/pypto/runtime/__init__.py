"""Running compiled programs: :class:`RunConfig`, :func:`execute_compiled`,
:func:`benchmark`, the log level, and :mod:`pypto.runtime.debug` (replay).

Importing this module applies ``PYPTO_RUNTIME_LOG`` (``debug``, ``info``, ``timing``,
``warn``, ``error``, ``null``) to the runtime's log.
"""

import sys

from pypto import _native
from pypto.runtime.compile_and_run import run
from pypto.runtime.bench import BenchmarkStats, benchmark
from pypto.runtime.execute import execute_compiled
from pypto.runtime.log import _ensure_log_configured, configure_log, log_level
from pypto.runtime.run_config import PLATFORMS, RunConfig, RunResult

__all__ = [
    "PLATFORMS",
    "BenchmarkStats",
    "RunConfig",
    "RunResult",
    "benchmark",
    "configure_log",
    "execute_compiled",
    "log_level",
    "run",
]

_ensure_log_configured()

# The two-pass swimlane's graph pass runs in a child process: this interpreter, running
# pypto.runtime._dep_gen_capture (the runner would otherwise re-run its own executable).
_native.set_capture_command([sys.executable, "-m", "pypto.runtime._dep_gen_capture"])
# Runs isolate the chip in a child process of this interpreter (pypto.runtime._chip_worker).
_native.set_worker_command([sys.executable, "-m", "pypto.runtime._chip_worker"])
