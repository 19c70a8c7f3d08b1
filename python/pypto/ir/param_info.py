"""Orchestration parameter metadata: :class:`ParamInfo` (PyPTO's, re-exported by
``pypto.ir.compiled_program``), and how it is read from ``compiled_meta.json``.

A leaf module: it imports nothing from ``pypto.runtime``, so the ``debug/run.py`` writer
and ``CompiledProgram`` can both depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional

from pypto import _native
from pypto.pypto_core import DataType
from pypto.pypto_core.ir import ParamDirection

__all__ = ["ParamInfo", "from_native"]


@dataclass
class ParamInfo:
    """One orchestration parameter: ``shape`` is ``None`` for a scalar, ``-1`` marks a
    dynamic dimension."""

    name: str
    direction: ParamDirection
    shape: Optional[List[int]]
    dtype: DataType


def from_native(p: _native.ParamInfo) -> ParamInfo:
    """A parameter of ``compiled_meta.json`` as read (and validated) by the runner."""
    return ParamInfo(
        name=p.name,
        direction=ParamDirection[p.direction],
        shape=None if p.shape is None else list(p.shape),
        dtype=DataType.from_string(p.dtype),
    )


def direction_name(direction: Any) -> str:
    """``In`` / ``Out`` / ``InOut`` of a :class:`ParamDirection` (or of its name)."""
    return str(getattr(direction, "name", direction))
