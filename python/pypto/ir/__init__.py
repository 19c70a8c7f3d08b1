"""Compiled programs: :class:`CompiledProgram` (``from_dir``) and :class:`DistributedConfig`."""

from pypto.ir.compile import compile
from pypto.ir.compiled_program import CompiledProgram
from pypto.ir.program import Program
from pypto.ir.distributed_compiled_program import DistributedConfig

__all__ = ["CompiledProgram", "Program", "compile", "DistributedConfig"]
