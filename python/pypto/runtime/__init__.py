"""Running compiled programs, as PyPTO's ``pypto.runtime``: :class:`RunConfig` (with
:class:`ExecutionMode`, :class:`DfxOptions`, :class:`CompileOptions`),
:func:`execute_compiled` (deprecated in PyPTO's 2026-09 generation), :func:`execute_distributed_compiled`, :func:`benchmark`,
:func:`configure_log` / :func:`log_level`, the explicit-dispatch workers
(:class:`ChipWorker` / :class:`RegistrationHandle` for one chip, :class:`DistributedWorker`
/ :class:`DistributedRunHandle` for L3, their :class:`DeviceTensor` memory), and
:mod:`pypto.runtime.debug` (replay).

Submodules callers import directly keep PyPTO's names: ``runner``, ``log_config``,
``device_runner``, ``bench``. Importing this package applies ``PYPTO_RUNTIME_LOG`` (and
``PYPTO_RUNTIME_LOG_SYNC``) to the runtime's log.
"""

from __future__ import annotations

import sys

from pypto import _lazy, _native
from pypto.runtime.log_config import _ensure_configured, configure_log
from pypto.runtime.log_config import current_level as log_level

#: A diagnostics artifact under ``dfx_outputs/`` could not be written (an ``OSError``: the
#: directory is at fault, not the configuration).
ArtifactWriteError = _native.ArtifactWriteError

# typing is not imported at run time: the replay's command line imports this package.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict

    from pypto.runtime.bench import BenchmarkStats, TraceInvocation, TraceSpan, benchmark
    from pypto.runtime.compile_and_run import compile_program, run
    from pypto.runtime.device_tensor import DeviceTensor
    from pypto.runtime.distributed_runner import (
        DistributedRunHandle,
        DistributedWorker,
        execute_distributed_compiled,
    )
    from pypto.runtime.worker import ChipWorker, RegistrationHandle
    from pypto.runtime.runner import (
        PLATFORMS,
        CompileOptions,
        DfxOptions,
        ExecutionMode,
        RunConfig,
        RunResult,
        execute_compiled,
    )
    from pypto.runtime.tensor_spec import ScalarSpec, TensorSpec

#: The public names imported from their submodule on first access (PEP 562), so that
#: ``import pypto.runtime`` does not import the runner's dependencies (dataclasses,
#: statistics, the compile-side enums); ``from pypto.runtime import RunConfig`` works as
#: before.
_LAZY_NAMES: Dict[str, str] = {
    "BenchmarkStats": "bench",
    "TraceInvocation": "bench",
    "TraceSpan": "bench",
    "benchmark": "bench",
    "ChipWorker": "worker",
    "RegistrationHandle": "worker",
    "DeviceTensor": "device_tensor",
    "DistributedRunHandle": "distributed_runner",
    "DistributedWorker": "distributed_runner",
    "execute_distributed_compiled": "distributed_runner",
    "compile_program": "compile_and_run",
    "run": "compile_and_run",
    "PLATFORMS": "runner",
    "CompileOptions": "runner",
    "DfxOptions": "runner",
    "ExecutionMode": "runner",
    "RunConfig": "runner",
    "RunResult": "runner",
    "execute_compiled": "runner",
    "ScalarSpec": "tensor_spec",
    "TensorSpec": "tensor_spec",
}

if not TYPE_CHECKING:
    # A public name of _LAZY_NAMES on first access, or a submodule (pypto.runtime.runner:
    # the package used to import them all).
    __getattr__, __dir__ = _lazy.attributes(__name__, globals(), _LAZY_NAMES)


__all__ = [
    "PLATFORMS",
    "ArtifactWriteError",
    "BenchmarkStats",
    "ChipWorker",
    "CompileOptions",
    "DfxOptions",
    "ExecutionMode",
    "DeviceTensor",
    "DistributedRunHandle",
    "DistributedWorker",
    "RegistrationHandle",
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
    "execute_distributed_compiled",
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
# The loader comes from importlib.machinery, which the interpreter has loaded already
# (importlib.util would import contextlib, functools and more first).
_CHIP_WORKER_BOOTSTRAP = (
    "import sys\n"
    "from importlib.machinery import ExtensionFileLoader as L, ModuleSpec as S\n"
    "l = L('pypto._native', sys.argv[1])\n"
    "m = l.create_module(S('pypto._native', l, origin=sys.argv[1]))\n"
    "l.exec_module(m)\n"
    f"m.set_capture_command({_CAPTURE_COMMAND!r})\n"
    "sys.exit(m.chip_worker_main())\n"
)
_native.set_worker_command(
    [sys.executable, "-I", "-S", "-c", _CHIP_WORKER_BOOTSTRAP, str(_native.__file__)]
)
