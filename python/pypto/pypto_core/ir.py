"""The parts of PyPTO's ``pypto_core.ir`` the runtime layer uses: :class:`ParamDirection`."""

from __future__ import annotations

import enum

__all__ = ["ParamDirection"]


class ParamDirection(enum.Enum):
    """How an orchestration reads a parameter: ``In``, ``Out`` (written only; allocated by
    a return-style call) or ``InOut`` (read, then written)."""

    In = 0
    Out = 1
    InOut = 2
