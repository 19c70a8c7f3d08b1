"""Compiled programs: :class:`CompiledProgram` (``from_dir``) and :class:`DistributedConfig` and
:class:`DistributedCompiledProgram` (L3).

``CompiledProgram``, ``DistributedCompiledProgram`` and ``DistributedConfig`` are imported from
their modules on first access (PEP 562), so that importing ``pypto.ir.pass_manager`` (as the
runner does) does not import them; ``compile`` is imported here, because the submodule of the
same name would otherwise take its place on first import.
"""

from typing import TYPE_CHECKING, Dict

from pypto import _lazy

from pypto.ir.compile import compile
from pypto.ir.program import Function, Program, pass_names
from pypto.ir.serialize import deserialize, serialize

if TYPE_CHECKING:
    from pypto.ir.compiled_program import CompiledProgram
    from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig
    from pypto.ir.pass_manager import OptimizationStrategy, PassDumpLevel

__all__ = [
    "CompiledProgram",
    "Function",
    "Program",
    "compile",
    "deserialize",
    "pass_names",
    "serialize", "DistributedCompiledProgram", "DistributedConfig", "OptimizationStrategy", "PassDumpLevel"]

#: The names imported from their submodule on first access.
_LAZY_NAMES: Dict[str, str] = {
    "CompiledProgram": "compiled_program",
    "DistributedCompiledProgram": "distributed_compiled_program",
    "DistributedConfig": "distributed_compiled_program",
    "OptimizationStrategy": "pass_manager",
    "PassDumpLevel": "pass_manager",
}

if not TYPE_CHECKING:
    # A name of _LAZY_NAMES on first access, or a submodule (pypto.ir.compiled_program:
    # the package used to import them all).
    __getattr__, __dir__ = _lazy.attributes(__name__, globals(), _LAZY_NAMES)
