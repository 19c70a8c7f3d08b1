"""pypto: PyPTO's runtime layer over a simulated Ascend chip.

The package runs programs that PyPTO compiled into a ``build_output/<dir>/`` directory
(``kernel_config.py``, ``compiled_meta.json``, the orchestration and kernel C++ sources) on
the project's Rust runtime, with PyPTO's user-facing API and module layout:

- :mod:`pypto.runtime`: :class:`~pypto.runtime.RunConfig`, :func:`~pypto.runtime.execute_compiled`,
  :func:`~pypto.runtime.benchmark`, :func:`~pypto.runtime.configure_log`; submodules
  ``runner``, ``log_config``, ``device_runner``, ``bench``.
- :mod:`pypto.runtime.debug`: :func:`~pypto.runtime.debug.replay` and its command line
  ``python -m pypto.runtime.debug.replay DIR``, the ``debug/run.py`` writer, binary-cache
  invalidation and the ``.pto`` rebuild.
- :mod:`pypto.ir`: :class:`~pypto.ir.CompiledProgram` (``CompiledProgram.from_dir``);
  ``pypto.ir.compiled_program.ParamInfo``.
- Here: PyPTO's core names — :class:`DataType` and the ``DT_*`` constants,
  :class:`LogLevel`, :func:`set_log_level` / :func:`get_log_level`, ``log_*``,
  :func:`check`, :func:`internal_check`, :class:`Error`, :class:`InternalError`.
- :mod:`pypto.testing.pytest_plugin`: PyPTO's pytest flags and fixtures.

Tensors are ``torch.Tensor`` or NumPy arrays; torch is imported only when a caller uses it.

The subpackages ``backend``, ``ir``, ``language`` and ``runtime`` are imported on first use
(``pypto.ir`` or ``from pypto import ir`` imports ``pypto.ir`` then), so that
``import pypto`` and ``import pypto.runtime`` cost the interpreter and the native module,
not NumPy nor the DSL compiler.
"""

from pypto import _lazy

# typing is not imported at run time: the replay's command line imports this package.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pypto import pypto_core
    from pypto.pypto_core import (
        DataType,
        Error,
        InternalError,
        LogLevel,
        check,
        get_log_level,
        internal_check,
        internal_check_span,
        log_debug,
        log_error,
        log_event,
        log_fatal,
        log_info,
        log_warn,
        passes,
        set_log_level,
    )

    DT_BOOL = DataType.BOOL
    DT_INT4 = DataType.INT4
    DT_INT8 = DataType.INT8
    DT_INT16 = DataType.INT16
    DT_INT32 = DataType.INT32
    DT_INT64 = DataType.INT64
    DT_UINT4 = DataType.UINT4
    DT_UINT8 = DataType.UINT8
    DT_UINT16 = DataType.UINT16
    DT_UINT32 = DataType.UINT32
    DT_UINT64 = DataType.UINT64
    DT_FP4 = DataType.FP4
    DT_FP8E4M3FN = DataType.FP8E4M3FN
    DT_FP8E5M2 = DataType.FP8E5M2
    DT_FP8E8M0 = DataType.FP8E8M0
    DT_FP16 = DataType.FP16
    DT_FP32 = DataType.FP32
    DT_BF16 = DataType.BF16
    DT_HF4 = DataType.HF4
    DT_HF8 = DataType.HF8
    DT_INDEX = DataType.INDEX

#: PyPTO's package version (this runtime's own is ``pypto._native.__version__``).
__version__ = "0.1.0"

__all__ = [
    "DT_BF16", "DT_BOOL", "DT_FP16", "DT_FP32", "DT_FP4", "DT_FP8E4M3FN", "DT_FP8E5M2",
    "DT_FP8E8M0", "DT_HF4", "DT_HF8", "DT_INDEX", "DT_INT16", "DT_INT32", "DT_INT4",
    "DT_INT64", "DT_INT8", "DT_UINT16", "DT_UINT32", "DT_UINT4", "DT_UINT64", "DT_UINT8",
    "CacheConfig", "DataType", "Error", "InternalError", "LogLevel", "__version__", "backend", "cache_stats", "check",
    "get_log_level", "internal_check", "internal_check_span", "ir", "log_debug", "log_error",
    "log_event", "log_fatal", "log_info", "log_warn", "passes", "pypto_core", "runtime",
    "set_log_level",
]  # fmt: skip

#: The subpackages imported on first attribute access (PEP 562); ``pypto_core`` too, which
#: imports ``enum`` and ``typing``.
_LAZY_SUBMODULES = ("backend", "ir", "language", "pypto_core", "runtime")

#: PyPTO's core names, from ``pypto_core`` on first use (its ``DataType`` gives ``DT_*``).
_CORE_NAMES = (
    "DataType", "Error", "InternalError", "LogLevel", "check", "get_log_level", "internal_check",
    "internal_check_span", "log_debug", "log_error", "log_event", "log_fatal", "log_info",
    "log_warn", "passes", "set_log_level",
)  # fmt: skip

#: The names imported on first use: PyPTO's core names and the persistent ``@pl.jit``
#: cache's (PyPTO 2026-09).
_LAZY_NAMES = {
    **{name: "pypto_core" for name in _CORE_NAMES},
    "CacheConfig": "_cache_config",
    "cache_stats": "_cache_config",
}

if TYPE_CHECKING:
    from pypto import backend, ir, language, runtime
    from pypto._cache_config import CacheConfig, cache_stats
else:
    # The subpackage or submodule on first access (pypto.ir).
    _getattr, _dir = _lazy.attributes(__name__, globals(), _LAZY_NAMES, modules=_LAZY_SUBMODULES)

    def __getattr__(name):
        # ``DT_FP32`` is ``DataType.FP32``, read on first access.
        if name.startswith("DT_") and name in __all__:
            value = getattr(_getattr("DataType"), name[3:])
            globals()[name] = value
            return value
        return _getattr(name)

    def __dir__():
        return sorted(set(_dir()) | set(__all__))
