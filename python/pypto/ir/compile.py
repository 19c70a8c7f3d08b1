"""``pypto.ir.compile``: a DSL program into a build directory, as PyPTO's ``ir.compile``.

The passes and codegen run in the native module (``pto-ir``), which writes
``kernel_config.py``, ``compiled_meta.json``, ``orchestration/<orch>.cpp``,
``ptoas/<kernel>.pto`` + ``.cpp``, ``kernels/<aic|aiv>/<kernel>.cpp``, ``passes_dump/`` and
``report/``; this module adds ``debug/run.py`` (unless ``PYPTO_EMIT_DEBUG_RUNNER=0``) and,
when ``inputs`` and a ``golden`` reference are given, ``golden.py`` with ``data/in`` and
``data/out``. The result is an ordinary build directory: ``pto replay``, ``debug/run.py``
and :meth:`CompiledProgram.from_dir` run it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence, Union

from pypto import _native
from pypto.ir.program import Program

__all__ = ["compile", "default_output_dir"]

PathLike = Union[str, "os.PathLike[str]"]

#: Keyword arguments of PyPTO's ``ir.compile`` that this compiler accepts and ignores (its
#: pipeline has no strategies, diagnostics phases or ptoas pass dumps; memory is always
#: planned by ptoas, PyPTO's ``memory_planner=PTOAS``).
IGNORED_OPTIONS = (
    "strategy",
    "dump_ptoas_passes",
    "diagnostic_phase",
    "disabled_diagnostics",
    "profiling",
    "analyze_auto_scopes_for_deps",
    "memory_planner",
    "skip_ptoas",
)


def default_output_dir(name: str) -> Path:
    """``$PYPTO_PROG_BUILD_DIR`` (or ``build_output``) ``/<name>_<YYYYmmdd_HHMMSS>``."""
    base = os.environ.get("PYPTO_PROG_BUILD_DIR") or "build_output"
    return Path(base) / f"{name}_{time.strftime('%Y%m%d_%H%M%S')}"


def _native_program(program: Any) -> _native.IrProgram:
    if isinstance(program, Program):
        return program.native
    if isinstance(program, _native.IrProgram):
        return program
    from pypto.language._decorators import JitFunction

    if isinstance(program, JitFunction):
        raise TypeError(
            "ir.compile() got a @pl.jit function: call it with arrays, or compile "
            "fn.lower(*arrays) / fn.compile(*arrays)"
        )
    raise TypeError(
        f"ir.compile() takes a @pl.program (a pypto.ir.Program), got {type(program).__name__}; "
        "a build directory is loaded with CompiledProgram.from_dir()"
    )


def _raise_compile_error(e: ValueError) -> None:
    if len(e.args) == 2 and isinstance(e.args[1], dict):
        d: Dict[str, Any] = e.args[1]
        span: Optional[Dict[str, Union[str, int]]] = None
        if d.get("line"):
            span = {"filename": str(d.get("file", "")), "line": int(d["line"]), "column": int(d.get("col", 0))}
        from pypto.backend.pto_backend import PartialCodegenError

        raise PartialCodegenError(str(e.args[0]), str(d.get("stage", "")), str(d.get("message", "")), str(d.get("hint", "")), span) from None
    raise e


def compile(
    program: Any,
    output_dir: Optional[PathLike] = None,
    *,
    platform: Optional[str] = None,
    backend_type: Any = None,
    dump_passes: Any = True,
    inputs: Optional[Sequence[Any]] = None,
    golden: Optional[Callable[[Dict[str, Any], Dict[str, Any]], None]] = None,
    rtol: float = 1e-5,
    atol: float = 1e-5,
    distributed_config: Any = None,
    **pypto_options: Any,
) -> Any:
    """Compiles ``program`` into ``output_dir`` (default :func:`default_output_dir`; created,
    never cleared) and returns the :class:`~pypto.ir.CompiledProgram`.

    ``platform`` (default ``a2a3sim``) and ``backend_type`` are recorded in
    ``compiled_meta.json``; ``dump_passes`` writes ``passes_dump/`` (PyPTO's default: on).
    ``inputs`` (one value per orchestration parameter) with ``golden`` (a
    ``compute_golden(tensors, params)`` that writes the expected outputs into ``tensors``,
    using only NumPy as ``np``) add ``golden.py``, ``data/in`` and ``data/out``.

    A program with a HOST orchestrator (``@pl.function(level=pl.Level.HOST)``) compiles
    into the L3 layout for ``distributed_config`` and returns the
    :class:`~pypto.ir.DistributedCompiledProgram` (``docs/DSL.md``, several chips).

    Raises :class:`~pypto.language.errors.CompileError` (with ``stage``, ``hint`` and the
    source ``span``) when a pass or codegen refuses the program.
    """
    unknown = set(pypto_options) - set(IGNORED_OPTIONS)
    if unknown:
        raise TypeError(f"compile() got unexpected keyword argument(s) {sorted(unknown)}")
    # The passes log through the runtime's log, which importing pypto.runtime configures
    # (PYPTO_RUNTIME_LOG); `import pypto` no longer imports it.
    import pypto.runtime  # noqa: F401

    native = _native_program(program)
    from pypto.language._distributed import host_entry

    host = host_entry(native)
    if host is not None:
        from pypto.ir._compile_distributed import compile_distributed

        return compile_distributed(
            native, host, output_dir, platform=platform, distributed_config=distributed_config, dump_passes=bool(dump_passes)
        )
    out = Path(output_dir) if output_dir is not None else default_output_dir(native.name)
    plat = platform or "a2a3sim"
    backend = backend_type.name if hasattr(backend_type, "name") else backend_type
    if backend is None:
        backend = "Ascend950" if plat.startswith("a5") else "Ascend910B"
    try:
        report = native.compile(str(out), plat, str(backend), bool(dump_passes))
    except ValueError as e:
        _raise_compile_error(e)
        raise
    params = report["params"]
    if inputs is not None or golden is not None:
        if inputs is None or golden is None:
            raise TypeError("compile(): inputs= and golden= go together (golden.py needs both)")
        from pypto.ir._golden_writer import write_golden

        write_golden(out, params, list(inputs), golden, rtol=rtol, atol=atol)
    from pypto.runtime.debug.run_script_writer import maybe_write_run_script

    maybe_write_run_script(out, platform=plat)
    from pypto.ir.compiled_program import CompiledProgram

    compiled = CompiledProgram.from_dir(out, platform=plat)
    setattr(compiled, "compile_report", report)
    return compiled
