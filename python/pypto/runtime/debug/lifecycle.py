"""The replay steps a user can run on their own before ``CompiledProgram.from_dir`` or
``benchmark``: the ``.pto`` -> cpp splice and the forced invalidation of cached binaries.

Both walk ``<work_dir>`` and every ``next_levels/*/`` sub-build and print PyPTO's status
lines (``[pto->cpp] ...``, ``[cpp->.so] ...``)::

    rebuild_kernel_cpp_from_pto(work_dir)  # only needed after editing ptoas/*.pto
    invalidate_binary_cache(work_dir)      # drop cached .so files so edits are compiled
    compiled = CompiledProgram.from_dir(work_dir)
"""

from __future__ import annotations

import os

# typing is not imported at run time: the replay's command line imports this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Union

from pypto import _native

__all__ = ["invalidate_binary_cache", "rebuild_kernel_cpp_from_pto"]

if TYPE_CHECKING:
    PathLike = Union[str, "os.PathLike[str]"]


def invalidate_binary_cache(work_dir: PathLike) -> None:
    """Deletes the cached binaries (``cache/*.bin``, ``kernels/**/*.so``,
    ``orchestration/**/*.so``) and compatibility stamps of ``work_dir`` and its
    ``next_levels/*/`` sub-builds; cpp sources are kept. Prints
    ``[cpp->.so] invalidated N cached binary file(s); cpp will rebuild`` or
    ``[cpp->.so] no cached binaries to invalidate``.

    A missing ``work_dir`` is no error (as in PyPTO, whose lock creates ``cache/``): there
    is nothing to invalidate.
    """
    from pathlib import Path

    (Path(work_dir) / "cache").mkdir(parents=True, exist_ok=True)
    print(_native.invalidate_binary_cache(work_dir))


def rebuild_kernel_cpp_from_pto(work_dir: PathLike, *, enabled: bool = True) -> List[str]:
    """Regenerates kernel cpp bodies from ``ptoas/*.pto`` files newer than their
    ``ptoas/<unit>.cpp`` (through a ``ptoas`` found via ``PTOAS_ROOT`` or ``PATH``) and
    splices them between the ptoas sentinels of ``kernels/<core>/<func>.cpp``.

    Returns the touched cpp paths relative to ``work_dir``. Prints ``[pto->cpp] ...`` status
    lines; no ptoas, ``enabled=False`` or ``PYPTO_REBUILD_FROM_PTO=0|false|no`` skip it.
    Raises ``RuntimeError`` when ptoas fails or a cpp lacks the sentinels.
    """
    return list(_native.rebuild_kernel_cpp_from_pto(work_dir, enabled))
