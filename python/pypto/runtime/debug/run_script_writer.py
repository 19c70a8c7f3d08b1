"""The ``debug/run.py`` writer: a self-contained re-runner beside each build.

``python <work_dir>/debug/run.py [flags]`` replays the build through
:func:`pypto.runtime.debug.replay._main`. With a ``golden.py`` beside the build, inputs come
from ``golden.generate_inputs()`` and outputs are validated; otherwise (or with
``--no-validate``) the script's own ``_inline_inputs()`` builds them from the parameters'
shapes and dtypes (seeded ``np.random`` for inputs, zeros for outputs) and
``_user_compare(...)`` runs afterwards for the user's own checks.

The text comes from the one renderer, ``pto_build_output::run_script`` (through
``_native.render_run_script``), which also writes the bundled examples' scripts.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from pypto import _native
from pypto._files import write_text_atomic
from pypto.ir.param_info import direction_name

__all__ = ["TENSOR_LIBS", "maybe_write_run_script", "render_run_script", "write_run_script"]

PathLike = Union[str, "os.PathLike[str]"]

#: Values of ``PYPTO_EMIT_DEBUG_RUNNER`` that disable :func:`maybe_write_run_script`.
DISABLED_VALUES = ("0", "false", "no")


def _field(p: Any, key: str) -> Any:
    return p[key] if isinstance(p, dict) else getattr(p, key)


#: The two forms of ``debug/run.py``: NumPy inputs (this runtime's default) or torch
#: inputs (PyPTO's form). Read from the one renderer.
TENSOR_LIBS = tuple(_native.RUN_SCRIPT_TENSOR_LIBS)


def render_run_script(
    param_infos: Sequence[Any], platform: Optional[str] = None, *, tensor_lib: str = "numpy"
) -> str:
    """The text of ``debug/run.py`` for ``param_infos`` (PyPTO's ``ParamInfo``, or objects or
    dicts with ``name``, ``direction``, ``shape``, ``dtype`` as in ``compiled_meta.json``).

    ``tensor_lib="numpy"`` (the default) builds inline inputs with seeded ``np.random`` and
    ctypes scalars; ``"torch"`` writes PyPTO's form (``torch.randn`` / ``torch.zeros`` /
    ``torch.randint``, a ``None`` placeholder per scalar). ``ValueError`` for another value.
    """
    params = [
        (
            str(_field(p, "name")),
            direction_name(_field(p, "direction")),
            None if _field(p, "shape") is None else [int(d) for d in _field(p, "shape")],
            str(_field(p, "dtype")),
        )
        for p in param_infos
    ]
    return _native.render_run_script(params, platform, tensor_lib)


def write_run_script(
    work_dir: PathLike,
    param_infos: Optional[Sequence[Any]] = None,
    *,
    platform: Optional[str] = None,
    tensor_lib: str = "numpy",
) -> Path:
    """Writes ``<work_dir>/debug/run.py`` and returns its path.

    ``param_infos`` (this runtime lets it default to the parameters of
    ``<work_dir>/compiled_meta.json``, and ``platform`` to the platform recorded there,
    else ``a2a3sim``). ``tensor_lib`` picks the form (see :func:`render_run_script`). The
    file is written atomically (a temporary beside it, then a rename).
    """
    wd = Path(work_dir)
    if param_infos is None:
        meta = _native.CompiledMeta.load(wd)
        param_infos = meta.params
        platform = platform or meta.platform
    text = render_run_script(param_infos, platform, tensor_lib=tensor_lib)
    target = wd / "debug" / "run.py"
    write_text_atomic(target, text)
    return target


def maybe_write_run_script(
    work_dir: PathLike,
    param_infos: Optional[Sequence[Any]] = None,
    *,
    platform: Optional[str] = None,
    tensor_lib: str = "numpy",
) -> Optional[Path]:
    """:func:`write_run_script`, best effort: skipped (``None``) when
    ``PYPTO_EMIT_DEBUG_RUNNER`` is ``0``, ``false`` or ``no`` (any case), and any failure is
    logged, never raised."""
    if os.environ.get("PYPTO_EMIT_DEBUG_RUNNER", "").strip().lower() in DISABLED_VALUES:
        return None
    try:
        return write_run_script(work_dir, param_infos, platform=platform, tensor_lib=tensor_lib)
    except Exception as e:  # noqa: BLE001 -- best effort by contract: never fail the caller
        logging.getLogger("pypto.runtime").info("debug/run.py not written for %s: %s", work_dir, e)
        return None
