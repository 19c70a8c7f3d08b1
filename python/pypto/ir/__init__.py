"""Compiled programs: :class:`CompiledProgram` (``from_dir``) and :class:`DistributedConfig` and
:class:`DistributedCompiledProgram` (L3).

``CompiledProgram``, ``DistributedCompiledProgram`` and ``DistributedConfig`` are imported from
their modules on first access (PEP 562), so that importing ``pypto.ir.pass_manager`` (as the
runner does) does not import them; ``compile`` is imported here, because the submodule of the
same name would otherwise take its place on first import.
"""

from typing import TYPE_CHECKING, Any, Dict, List

from pypto.ir.compile import compile
from pypto.ir.program import Program, pass_names

if TYPE_CHECKING:
    from pypto.ir.compiled_program import CompiledProgram
    from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig

__all__ = ["CompiledProgram", "Program", "compile", "pass_names", "DistributedCompiledProgram", "DistributedConfig"]

#: The names imported from their submodule on first access.
_LAZY_NAMES: Dict[str, str] = {
    "CompiledProgram": "compiled_program",
    "DistributedCompiledProgram": "distributed_compiled_program",
    "DistributedConfig": "distributed_compiled_program",
}

if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """A name of ``_LAZY_NAMES``, imported on first access, or a submodule
        (``pypto.ir.compiled_program``: the package used to import them all)."""
        import importlib

        submodule = _LAZY_NAMES.get(name)
        if submodule is not None:
            value = getattr(importlib.import_module(f"{__name__}.{submodule}"), name)
            globals()[name] = value
            return value
        if not name.startswith("__"):
            import importlib.util

            if importlib.util.find_spec(f"{__name__}.{name}") is not None:
                return importlib.import_module(f"{__name__}.{name}")
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    """The module's names, those not yet imported included."""
    return sorted(set(globals()) | set(_LAZY_NAMES))
