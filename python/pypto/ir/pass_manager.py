"""The compile-side enums of ``RunConfig`` that PyPTO keeps in ``pypto.ir.pass_manager``:
:class:`OptimizationStrategy` and :class:`PassDumpLevel`."""

from __future__ import annotations

import enum

__all__ = ["OptimizationStrategy", "PassDumpLevel"]


class OptimizationStrategy(enum.Enum):
    """The pass pipeline a compile runs (PyPTO's pytest ``--strategy`` offers ``Default``)."""

    Default = 0


class PassDumpLevel(enum.Enum):
    """How much IR ``dump_passes`` writes per pass (``True`` means ``CONCISE``)."""

    NONE = 0
    CONCISE = 1
    EXPLICIT = 2
