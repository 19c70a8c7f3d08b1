"""Running compiled programs, as PyPTO's ``pypto.runtime``: :class:`RunConfig`,
:func:`execute_compiled`, :func:`benchmark`, :func:`configure_log` / :func:`log_level`, and
:mod:`pypto.runtime.debug` (replay).

Submodules callers import directly keep PyPTO's names: ``runner``, ``log_config``,
``device_runner``, ``bench``. Importing this package applies ``PYPTO_RUNTIME_LOG`` (and
``PYPTO_RUNTIME_LOG_SYNC``) to the runtime's log.
"""

import sys

from pypto import _native
from pypto.runtime.compile_and_run import compile_program, run
from pypto.runtime.bench import BenchmarkStats, TraceInvocation, TraceSpan, benchmark
from pypto.runtime.log_config import _ensure_configured, configure_log
from pypto.runtime.log_config import current_level as log_level
from pypto.runtime.runner import PLATFORMS, RunConfig, RunResult, execute_compiled
from pypto.runtime.tensor_spec import ScalarSpec, TensorSpec

__all__ = [
    "PLATFORMS",
    "BenchmarkStats",
    "RunConfig",
    "RunResult",
    "ScalarSpec",
    "TensorSpec",
    "TraceInvocation",
    "TraceSpan",
    "benchmark",
    "compile_program",
    "configure_log",
    "execute_compiled",
    "log_level",
    "run",
]

_ensure_configured()

# The two-pass swimlane's graph pass runs in a child process: this interpreter, running
# pypto.runtime._dep_gen_capture (the runner would otherwise re-run its own executable).
_CAPTURE_COMMAND = [sys.executable, "-m", "pypto.runtime._dep_gen_capture"]
_native.set_capture_command(_CAPTURE_COMMAND)
# Runs isolate the chip in a child process of this interpreter. The chip process needs only
# the native module, so it loads that one file (isolated mode, no site) instead of importing
# the package with NumPy and everything else: that made every first run of a build pay a
# second full interpreter start-up (pypto.runtime._chip_worker does the same, importing it).
# The chip process runs the two-pass swimlane's graph pass too, so it gets the same capture
# command (a full interpreter: the capture child imports the package).
_CHIP_WORKER_BOOTSTRAP = (
    "import importlib.util as u, sys\n"
    "s = u.spec_from_file_location('pypto._native', sys.argv[1])\n"
    "m = u.module_from_spec(s)\n"
    "s.loader.exec_module(m)\n"
    f"m.set_capture_command({_CAPTURE_COMMAND!r})\n"
    "sys.exit(m.chip_worker_main())\n"
)
_native.set_worker_command(
    [sys.executable, "-I", "-S", "-c", _CHIP_WORKER_BOOTSTRAP, str(_native.__file__)]
)
