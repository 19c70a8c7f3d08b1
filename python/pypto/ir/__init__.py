"""Compiled programs: :class:`CompiledProgram` (``from_dir``) and :class:`DistributedConfig` and
:class:`DistributedCompiledProgram` (L3)."""

from pypto.ir.compile import compile
from pypto.ir.compiled_program import CompiledProgram
from pypto.ir.program import Program, pass_names
from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig

__all__ = ["CompiledProgram", "Program", "compile", "pass_names", "DistributedCompiledProgram", "DistributedConfig"]
