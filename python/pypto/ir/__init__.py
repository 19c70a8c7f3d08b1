"""Compiled programs: :class:`CompiledProgram` (``from_dir``) and :class:`DistributedConfig`."""

from pypto.ir.compiled_program import CompiledProgram
from pypto.ir.distributed_compiled_program import DistributedConfig

__all__ = ["CompiledProgram", "DistributedConfig"]
