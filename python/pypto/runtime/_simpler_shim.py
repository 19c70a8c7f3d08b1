"""Provides ``simpler`` / ``simpler.task_interface`` from :mod:`pypto.runtime._simpler_compat`
when the real Simpler is not importable.

:func:`install` appends a finder to the **end** of ``sys.meta_path``: Python consults it
only after every other finder (the path finder among them) failed to find ``simpler``, so a
real Simpler on ``sys.path`` always wins and is never shadowed. Calling it twice is harmless.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Optional, Sequence

__all__ = ["install", "provided"]

_ALIASES = {
    "simpler": "pypto.runtime._simpler_compat",
    "simpler.task_interface": "pypto.runtime._simpler_compat._task_interface",
}


class _Loader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self._target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Optional[ModuleType]:
        return importlib.import_module(self._target)

    def exec_module(self, module: ModuleType) -> None:
        # The target module is already executed; keep its own __name__ so its objects
        # report where they are defined.
        return None


class _SimplerFinder(importlib.abc.MetaPathFinder):
    """Finds ``simpler`` names only when nothing before it on ``sys.meta_path`` did."""

    def find_spec(
        self,
        fullname: str,
        path: Optional[Sequence[str]] = None,
        target: Optional[ModuleType] = None,
    ) -> Optional[importlib.machinery.ModuleSpec]:
        alias = _ALIASES.get(fullname)
        if alias is None:
            return None
        is_pkg = fullname == "simpler"
        return importlib.util.spec_from_loader(fullname, _Loader(alias), is_package=is_pkg)


def install() -> None:
    """Appends the finder once (see the module docs)."""
    if not any(isinstance(f, _SimplerFinder) for f in sys.meta_path):
        sys.meta_path.append(_SimplerFinder())


def provided() -> bool:
    """Whether ``simpler`` currently resolves to this package (not to a real Simpler)."""
    install()
    try:
        mod = importlib.import_module("simpler")
    except ImportError:
        return False
    return getattr(mod, "__name__", "") == _ALIASES["simpler"] or mod is sys.modules.get(
        _ALIASES["simpler"]
    )
