"""The compile-side enums ``RunConfig`` carries: :class:`DiagnosticPhase`,
:class:`DiagnosticCheckSet`, :class:`MemoryPlanner` (PyPTO's ``pypto_core.passes``)."""

from __future__ import annotations

import enum
from typing import Iterable, Iterator

__all__ = ["DiagnosticCheckSet", "DiagnosticPhase", "MemoryPlanner"]


class DiagnosticPhase(enum.Enum):
    """When the compiler's diagnostics (warnings, performance hints) run."""

    NONE = 0
    PRE_PIPELINE = 1
    POST_PASS = 2
    POST_PIPELINE = 3


class MemoryPlanner(enum.Enum):
    """Who plans on-chip buffer memory (``None`` in a ``RunConfig`` is the default)."""

    PYPTO = 0
    DSA_RP = 1
    PTOAS = 2


class DiagnosticCheckSet:
    """A set of diagnostic check names to disable."""

    def __init__(self, checks: Iterable[str] = ()) -> None:
        self._checks = frozenset(str(c) for c in checks)

    def __contains__(self, check: object) -> bool:
        return check in self._checks

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._checks))

    def __len__(self) -> int:
        return len(self._checks)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DiagnosticCheckSet) and self._checks == other._checks

    def __hash__(self) -> int:
        return hash(self._checks)

    def __repr__(self) -> str:
        return f"DiagnosticCheckSet({sorted(self._checks)})"
