"""Module attributes imported on first access (PEP 562), for the packages of ``pypto``.

``import pypto.runtime`` must not import what only some callers need (NumPy, the runner's
dataclasses, the DSL); the packages therefore name their public attributes here and import
each from its submodule the first time it is read, and keep every submodule reachable as an
attribute, as when the packages imported them eagerly.
"""

from __future__ import annotations

import sys

# Names for type checkers only: the replay's command line imports this module, and `typing`
# costs it milliseconds at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, List, Mapping, MutableMapping, Optional, Tuple


def attributes(
    package: str,
    namespace: MutableMapping[str, Any],
    names: Optional[Mapping[str, str]] = None,
    modules: Iterable[str] = (),
    submodules: bool = True,
) -> Tuple[Callable[[str], Any], Callable[[], List[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` (whose globals are ``namespace``).

    A name of ``names`` is imported from the submodule ``names[name]`` on first access and
    kept in ``namespace``; a name of ``modules`` is that submodule; with ``submodules``, any
    other submodule of the package is reachable too. ``__dir__`` lists the names not
    imported yet beside the module's own.
    """
    lazy = dict(names or {})
    listed = tuple(modules)

    def import_module(name: str) -> Any:
        # importlib.import_module for an absolute name, without importing importlib.
        __import__(name)
        return sys.modules[name]

    def getattr_(name: str) -> Any:
        if name in listed:
            return import_module(f"{package}.{name}")
        submodule = lazy.get(name)
        if submodule is not None:
            value = getattr(import_module(f"{package}.{submodule}"), name)
            namespace[name] = value
            return value
        if submodules and not name.startswith("__"):
            # The submodule if there is one (found by importing it: importlib.util's
            # find_spec would import contextlib and more first).
            try:
                return import_module(f"{package}.{name}")
            except ModuleNotFoundError as e:
                if e.name != f"{package}.{name}":
                    raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def dir_() -> List[str]:
        return sorted(set(namespace) | set(lazy) | set(listed))

    return getattr_, dir_
