"""``run(program, *tensors, config=RunConfig(...))``: compile a DSL program, then call it,
as PyPTO's ``pypto.runtime.run``.

``run`` always compiles (``ir.compile`` into ``config.save_kernels_dir``, else the default
``build_output/<name>_<timestamp>``, with ``passes_dump/`` when ``config.dump_passes``); with
tensors, and unless ``config.codegen_only``, it then runs the compiled program once with
``config`` (its DFX switches write ``<build>/dfx_outputs/``). It returns the
:class:`~pypto.ir.CompiledProgram` either way. A build directory is not a program: load it
with ``CompiledProgram.from_dir`` or run it with ``execute_compiled``.
"""

from __future__ import annotations

from typing import Any, Optional

__all__ = ["run"]


def run(program: Any, *tensors: Any, config: Optional[Any] = None) -> Any:
    """Compiles ``program`` (a ``@pl.program``) and, given tensors, runs it once with
    ``config``; returns the compiled program."""
    from pypto.ir.compile import compile as ir_compile
    from pypto.runtime import RunConfig

    cfg = config if config is not None else RunConfig()
    compiled = ir_compile(
        program,
        output_dir=getattr(cfg, "save_kernels_dir", None),
        platform=cfg.platform,
        backend_type=getattr(cfg, "backend_type", None),
        dump_passes=bool(getattr(cfg, "dump_passes", False)),
    )
    if tensors and not getattr(cfg, "codegen_only", False):
        compiled(*tensors, config=cfg)
    return compiled
