"""``CompiledProgram``: a compiled single-chip build directory as a callable.

``CompiledProgram.from_dir(work_dir)`` rebuilds a program from ``compiled_meta.json`` and
``kernel_config.py`` alone: no IR, no passes. It compiles the C++ sources through the
toolchain's caches but never splices ``.pto`` files nor invalidates cached binaries; call
:func:`pypto.runtime.debug.rebuild_kernel_cpp_from_pto` and
:func:`pypto.runtime.debug.invalidate_binary_cache` first when the sources were edited.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple, Union

from pypto import _native
from pypto._tensors import as_host_array, zeros_for
from pypto.runtime.run_config import RunConfig

__all__ = ["BACKEND_TYPES", "CompiledProgram"]

#: The backends ``compiled_meta.json`` may record.
BACKEND_TYPES = ("Ascend910B", "Ascend950")

_logger = logging.getLogger("pypto.runtime")


def _default_platform(backend_type: str) -> str:
    return "a5sim" if backend_type == "Ascend950" else "a2a3sim"


def _log_report(report: _native.ExecuteReport) -> None:
    for warning in report.dfx_warnings:
        _logger.warning("%s", warning)
    if report.dfx_files:
        _logger.info("DFX artefacts: %s", ", ".join(report.dfx_files))
    for hint in report.dfx_hints:
        _logger.info("view with: %s", hint)


class CompiledProgram:
    """A compiled single-chip program, callable with NumPy arrays (or torch tensors).

    Call it in place, with every parameter (outputs are written into the arrays passed), or
    return-style, with the non-output parameters only (outputs are allocated and returned:
    one array, or a tuple for several)::

        compiled = CompiledProgram.from_dir("build_output/vector_add")
        compiled(a, b, c)      # in place: c = a + b
        c = compiled(a, b)     # return-style

    Scalars are Python numbers, NumPy scalars or ctypes values.
    """

    def __init__(self, native: _native.Program, platform: str, backend_type: str) -> None:
        self._native = native
        self.work_dir = Path(native.dir)
        self.platform = platform
        self.backend_type = backend_type
        #: The IR program: ``None``, a reconstructed program has no IR.
        self.program = None
        self.last_report: Optional[_native.ExecuteReport] = None

    @classmethod
    def from_dir(
        cls,
        work_dir: Union[str, "os.PathLike[str]"],
        platform: Optional[str] = None,
        backend_type: Optional[str] = None,
    ) -> CompiledProgram:
        """Rebuilds the program in ``work_dir`` from its ``compiled_meta.json``.

        ``platform`` and ``backend_type`` default to the values recorded at compile time.
        Raises ``FileNotFoundError`` when the sidecar is missing and ``ValueError`` when it
        is malformed (with PyPTO's texts), ``ValueError`` for an unknown platform or backend.
        """
        if platform is not None:
            _native.RunOptions(str(platform))
        if backend_type is not None and backend_type not in BACKEND_TYPES:
            raise ValueError(
                f"backend_type must be one of {list(BACKEND_TYPES)}, got {backend_type!r}"
            )
        native = _native.Program.load(work_dir, platform)
        backend = backend_type or native.backend_type
        resolved_platform = platform or native.platform or _default_platform(backend)
        return cls(native, resolved_platform, backend)

    @property
    def param_infos(self) -> List[_native.ParamInfo]:
        """The orchestration parameters, in order."""
        return self._native.params

    @property
    def param_names(self) -> List[str]:
        """The parameter names, in order."""
        return [p.name for p in self._native.params]

    @property
    def output_indices(self) -> List[int]:
        """Indices of the pure outputs (``Out``; ``InOut`` tensors are passed in)."""
        return [i for i, p in enumerate(self._native.params) if p.direction == "Out"]

    @property
    def num_return_types(self) -> int:
        """How many values the PyPTO function returns."""
        return self._native.num_return_types

    def _bind(self, args: Sequence[Any]) -> Tuple[List[Any], List[Any]]:
        """The full argument list (outputs allocated for a return-style call) and the
        allocated outputs."""
        params = self._native.params
        n_all = len(params)
        outputs = set(self.output_indices)
        n_inputs = n_all - len(outputs)
        if len(args) == n_all:
            full = list(args)
            returned: List[Any] = []
        elif len(args) == n_inputs:
            supplied = iter(args)
            full = []
            returned = []
            for i, p in enumerate(params):
                if i in outputs:
                    array = zeros_for(p.name, p.shape, p.dtype)
                    full.append(array)
                    returned.append(array)
                else:
                    full.append(next(supplied))
        else:
            raise TypeError(
                f"CompiledProgram expects {n_all} (in-place) or {n_inputs} (return) arguments, "
                f"got {len(args)}. Parameters: {self.param_names}"
            )
        return [as_host_array(a, i) for i, a in enumerate(full)], returned

    def run(self, *args: Any, config: Optional[RunConfig] = None) -> _native.ExecuteReport:
        """Runs once in place (every parameter passed) and returns the runtime's report."""
        host, _ = self._bind(args)
        return self._execute(host, config)

    def _execute(self, host: List[Any], config: Optional[RunConfig]) -> _native.ExecuteReport:
        config = config if config is not None else RunConfig(platform=self.platform)
        report = self._native.execute(host, config.native_options())
        self.last_report = report
        _log_report(report)
        return report

    def __call__(self, *args: Any, config: Optional[RunConfig] = None) -> Any:
        """Runs the program (see the class docs); returns ``None`` for an in-place call."""
        host, returned = self._bind(args)
        self._execute(host, config)
        if not returned:
            return None
        return returned[0] if len(returned) == 1 else tuple(returned)

    def __repr__(self) -> str:
        return (
            f"CompiledProgram.from_dir({str(self.work_dir)!r}, platform={self.platform!r}, "
            f"backend_type={self.backend_type!r})"
        )
