"""pypto: PyPTO's runtime layer over a simulated Ascend chip.

The package runs programs that PyPTO compiled into a ``build_output/<dir>/`` directory
(``kernel_config.py``, ``compiled_meta.json``, the orchestration and kernel C++ sources) on
the project's Rust runtime, with PyPTO's user-facing API:

- :mod:`pypto.runtime`: :class:`~pypto.runtime.RunConfig` (the DFX switches, ring
  overrides), :func:`~pypto.runtime.execute_compiled`, :func:`~pypto.runtime.benchmark`.
- :mod:`pypto.runtime.debug`: :func:`~pypto.runtime.debug.replay` and its command line
  ``python -m pypto.runtime.debug.replay DIR``, the ``debug/run.py`` writer, binary-cache
  invalidation and the ``.pto`` rebuild.
- :mod:`pypto.ir`: :class:`~pypto.ir.CompiledProgram` (``CompiledProgram.from_dir``) and
  :class:`~pypto.ir.DistributedConfig`.
- :mod:`pypto.testing.pytest_plugin`: the pytest flags (``--enable-chip-swimlane``, ...) and
  the ``run_config`` fixture.

Tensors are NumPy arrays; ``torch.Tensor`` values are accepted when torch is installed
(converted with ``.numpy()``), and torch is never imported by this package.
"""

from pypto import ir, runtime
from pypto._native import __version__

__all__ = ["__version__", "ir", "runtime"]
