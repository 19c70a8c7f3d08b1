"""``run(program, *tensors, config=RunConfig(...))``: compile a DSL program, then call it,
as PyPTO's ``pypto.runtime.run``; ``compile_program(program, work_dir, ...)``, compile only.

``run`` always compiles (``ir.compile`` into ``config.save_kernels_dir``, else the default
``build_output/<name>_<timestamp>``, with ``passes_dump/`` when ``config.dump_passes``); with
tensors, and unless ``config.codegen_only``, it then runs the compiled program once with
``config`` (its DFX switches write ``<build>/dfx_outputs/``). It returns the
:class:`~pypto.ir.CompiledProgram` either way. A build directory is not a program: load it
with ``CompiledProgram.from_dir`` or run it with ``execute_compiled``.
"""

from __future__ import annotations

from typing import Any, Optional

__all__ = ["compile_program", "run"]


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


def compile_program(
    program: Any,
    work_dir: Any,
    *,
    strategy: Any = None,
    backend_type: Any = None,
    dump_passes: bool = False,
    platform: Optional[str] = None,
    enable_pypto_l0c_double_buffer: Optional[bool] = None,
    **options: Any,
) -> None:
    """Compiles ``program`` into ``work_dir`` (PyPTO's ``compile_program``); returns nothing.

    ``strategy`` and ``enable_pypto_l0c_double_buffer`` are accepted and ignored (one
    pipeline, and ptoas plans the L0C buffers); other keywords go to ``ir.compile``, which
    accepts PyPTO's and refuses unknown ones."""
    from pypto.ir.compile import compile as ir_compile

    del strategy, enable_pypto_l0c_double_buffer
    ir_compile(
        program,
        output_dir=work_dir,
        platform=platform,
        backend_type=backend_type,
        dump_passes=dump_passes,
        **options,
    )
