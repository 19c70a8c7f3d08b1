"""``pypto.backend``: :class:`BackendType`, the code-generation target a platform implies
(``a2a3*`` -> ``Ascend910B``, ``a5*`` -> ``Ascend950``; ``cpu`` counts as ``Ascend910B``)."""

from __future__ import annotations

import enum

__all__ = ["BackendType", "arch_name", "backend_for_platform", "default_sim_platform"]


class BackendType(enum.Enum):
    """The Ascend generation code is generated for."""

    Ascend910B = 0
    Ascend950 = 1


def arch_name(backend: BackendType) -> str:
    """The architecture's name in a platform string: ``a2a3`` (Ascend910B) or ``a5``
    (Ascend950)."""
    return "a5" if backend is BackendType.Ascend950 else "a2a3"


def backend_for_platform(platform: str) -> BackendType:
    """The backend ``platform`` runs (``a5``/``a5sim`` -> Ascend950, else Ascend910B)."""
    return BackendType.Ascend950 if platform.startswith("a5") else BackendType.Ascend910B


def default_sim_platform(backend: BackendType) -> str:
    """The simulator platform of a backend (``a2a3sim`` / ``a5sim``)."""
    return arch_name(backend) + "sim"
