"""An L3 (distributed) build of a DSL program whose entry is a HOST function: the native
compiler (``pto-ir``'s ``codegen::host``) writes ``distributed_meta.json``,
``orchestration/host_orch.py`` and one single-chip build per chip program under
``next_levels/``; this module adds ``debug/run.py`` and returns the
:class:`~pypto.ir.DistributedCompiledProgram` (``docs/DSL.md``, distributed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from pypto import _native

__all__ = ["compile_distributed"]


def compile_distributed(
    native: _native.IrProgram,
    host: str,
    output_dir: Optional[Any],
    *,
    platform: Optional[str],
    distributed_config: Any,
    dump_passes: bool = True,
) -> Any:
    """Compiles ``native`` with the HOST function ``host`` as its entry into ``output_dir``
    (default ``build_output/<host>_<timestamp>``) for ``distributed_config`` (a
    :class:`~pypto.ir.distributed_compiled_program.DistributedConfig`; default: device 0)."""
    import pypto.runtime  # noqa: F401  (configures the runtime log the passes write to)
    from pypto.ir.compile import _raise_compile_error, default_output_dir
    from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig

    dc = distributed_config if distributed_config is not None else DistributedConfig()
    out = Path(output_dir) if output_dir is not None else default_output_dir(host)
    plat = platform or "a2a3sim"
    backend = "Ascend950" if plat.startswith("a5") else "Ascend910B"
    try:
        native.compile_distributed(
            host,
            str(out),
            list(dc.device_ids),
            int(dc.num_sub_workers),
            str(dc.runtime),
            int(dc.aicpu_thread_num),
            plat,
            backend,
            bool(dump_passes),
        )
    except ValueError as e:
        _raise_compile_error(e)
        raise
    compiled = DistributedCompiledProgram.from_dir(out, platform=plat)
    from pypto.runtime.debug.run_script_writer import maybe_write_run_script

    params = [{"name": p[0], "direction": p[1], "shape": p[2], "dtype": p[3]} for p in compiled.params]
    maybe_write_run_script(out, params, platform=plat, tensor_lib="torch")
    return compiled
