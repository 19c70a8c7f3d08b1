"""``golden.py`` support: loading a build directory's golden module, its named inputs, and
validating outputs against ``compute_golden``.

A ``golden.py`` (written by the test harness, not by ``ir.compile``) defines:

- ``generate_inputs(params) -> list[tuple[str, value]]``: every orchestration parameter in
  order, tensors as NumPy arrays (or torch tensors), scalars as ctypes values;
- ``compute_golden(tensors: dict, params)``: writes the expected outputs into ``tensors``;
- ``__outputs__``: the names of the outputs to validate; ``RTOL`` / ``ATOL``: tolerances
  (default ``1e-5``).

Validation compares output by output: torch tensors with ``torch.testing.assert_close``
(as PyPTO's replay does), NumPy arrays element by element with the runner's comparison
(``|actual - expected| <= ATOL + RTOL * |expected|``, NumPy's ``isclose``). ``compute_golden``
starts from the values the tensors had before the run (PyPTO passes the values after it,
which differs only for InOut tensors).

:func:`native_inputs_from_golden` reads the inputs without running ``golden.py`` (and so
without NumPy) when its ``generate_inputs`` only loads ``data/in/*.npy`` files, makes zeros
and ctypes scalars, as the generated scripts do.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from pypto import _native
from pypto._user_code import user_code
from pypto._tensors import as_host_array, is_array_like, is_ndarray, is_torch_tensor

__all__ = [
    "DEFAULT_TOLERANCE",
    "generate_named_inputs",
    "load_golden_module",
    "load_inputs_from_golden",
    "native_inputs_from_golden",
    "snapshot",
    "validate_against_golden",
]

#: ``RTOL`` / ``ATOL`` when ``golden.py`` does not set them.
DEFAULT_TOLERANCE = 1e-5

PathLike = Union[str, "os.PathLike[str]"]


def load_golden_module(work_dir: PathLike) -> ModuleType:
    """Imports ``<work_dir>/golden.py`` (as module ``_replay_golden``).

    Raises ``FileNotFoundError`` when it is missing and ``ImportError`` when it cannot be
    read; an error raised by the module's own code propagates as it is.
    """
    golden_path = Path(work_dir) / "golden.py"
    if not golden_path.is_file():
        raise FileNotFoundError(f"{golden_path} not found; cannot derive named inputs / outputs.")
    # Compiled and run by hand rather than through the import system, so that no
    # __pycache__/ is written into the build directory.
    module = ModuleType("_replay_golden")
    module.__file__ = str(golden_path)
    try:
        source = golden_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ImportError(f"Cannot load golden.py from {golden_path}: {e}") from e
    code = compile(source, str(golden_path), "exec")
    with user_code(f"golden.py ({golden_path})"):
        exec(code, module.__dict__)
    return module


def _golden_path(module: ModuleType) -> str:
    return str(getattr(module, "__file__", "golden.py"))


def generate_named_inputs(module: ModuleType) -> List[Tuple[Any, Any]]:
    """``module.generate_inputs({"name": "Default"})`` as a list, run as user code (a
    ``sys.exit()`` / ``os._exit()`` in it is a ``UserCodeExit`` naming the function)."""
    with user_code(f"golden.py's generate_inputs ({_golden_path(module)})"):
        return list(module.generate_inputs({"name": "Default"}))


def load_inputs_from_golden(work_dir: PathLike) -> List[Tuple[str, Any]]:
    """``generate_inputs({"name": "Default"})`` of ``<work_dir>/golden.py``: ``(name, value)``
    pairs in orchestration parameter order."""
    module = load_golden_module(work_dir)
    return [(str(name), value) for name, value in generate_named_inputs(module)]


def _copy(value: Any) -> Any:
    """A copy of a tensor (torch stays torch, NumPy stays NumPy); a scalar as it is."""
    if is_torch_tensor(value):
        return value.clone()
    if is_ndarray(value):
        import numpy as np  # already imported: the value is an array

        return np.array(value, copy=True)
    return value


def snapshot(names: Sequence[str], values: Sequence[Any]) -> Dict[str, Any]:
    """Copies of the tensor values (scalars as they are), by name: the initial values that
    ``compute_golden`` starts from (InOut tensors need theirs)."""
    return {name: _copy(value) for name, value in zip(names, values)}


def _tolerance(module: ModuleType, name: str) -> float:
    return float(getattr(module, name, DEFAULT_TOLERANCE))


def validate_against_golden(
    module: ModuleType,
    initial: Mapping[str, Any],
    actual: Mapping[str, Any],
) -> List[str]:
    """Checks each output in ``__outputs__`` against ``compute_golden``.

    ``initial`` holds every parameter's value before the run (see :func:`snapshot`),
    ``actual`` the values after it. ``compute_golden`` runs on copies of ``initial``.
    Returns the names validated (empty when ``__outputs__`` is empty: nothing to check).
    Raises ``AssertionError`` (``Output 'c' does not match golden (rtol=..., atol=...):``
    and the mismatch details) at the first output that differs.
    """
    outputs = [str(n) for n in getattr(module, "__outputs__", [])]
    if not outputs:
        return []
    unknown = [name for name in outputs if name not in actual or name not in initial]
    if unknown:
        raise ValueError(
            f"{_golden_path(module)}: __outputs__ names {unknown}, which are not parameters of "
            f"the program (parameters: {list(actual)}); fix __outputs__"
        )
    rtol = _tolerance(module, "RTOL")
    atol = _tolerance(module, "ATOL")
    expected = {name: _copy(value) for name, value in initial.items()}
    with user_code(f"golden.py's compute_golden ({_golden_path(module)})"):
        module.compute_golden(expected, {})
    for name in outputs:
        if name not in expected:
            raise ValueError(
                f"{_golden_path(module)}: compute_golden removed output '{name}' from its "
                "tensors; it must write the expected values into tensors[name]"
            )
        _warn_if_untouched(name, initial[name], actual[name], expected[name])
        if is_torch_tensor(actual[name]) and is_torch_tensor(expected[name]):
            import torch  # type: ignore[import-not-found, unused-ignore]  # torch tensors imply torch

            try:
                torch.testing.assert_close(actual[name].cpu(), expected[name].cpu(), rtol=rtol, atol=atol)
            except AssertionError as e:
                raise AssertionError(
                    f"Output '{name}' does not match golden (rtol={rtol}, atol={atol}):\n{e}"
                ) from None
            continue
        import numpy as np

        got = as_host_array(actual[name], 0)
        want = as_host_array(expected[name], 0)
        if not (isinstance(got, np.ndarray) and isinstance(want, np.ndarray)):
            raise AssertionError(f"Output '{name}' is not a tensor; cannot compare it")
        details = _native.compare(got, np.asarray(want), rtol, atol)
        if details is not None:
            raise AssertionError(
                f"Output '{name}' does not match golden (rtol={rtol}, atol={atol}):\n{details}"
            )
    return outputs


def _same_bytes(a: Any, b: Any) -> bool:
    """Whether two tensors hold the same bytes (``False`` for anything else)."""
    try:
        import numpy as np

        if is_torch_tensor(a):
            a = a.detach().cpu()
        if is_torch_tensor(b):
            b = b.detach().cpu()
        x = np.asarray(as_host_array(a, 0))
        y = np.asarray(as_host_array(b, 0))
        if x.dtype == object or y.dtype == object:
            return False
        return bool(x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes())
    except Exception:  # noqa: BLE001 - not comparable: not the same
        return False


def _warn_if_untouched(name: str, before: Any, after: Any, expected: Any) -> None:
    """Prints a warning when output ``name`` is exactly what it was before the run and the
    golden expects exactly that too: the comparison passes whether or not any task wrote it
    (an orchestration that forgot its submit, against an all-zero golden or a no-op
    ``compute_golden``)."""
    if _same_bytes(before, after) and _same_bytes(before, expected):
        print(
            f"warning: output '{name}' is unchanged by the run and its golden equals its "
            "initial value, so the comparison passes whether or not any task wrote it; check "
            f"that the orchestration submits a task writing '{name}' and that compute_golden "
            "computes it",
            file=sys.stderr,
            flush=True,
        )


def is_tensor_default(value: Any) -> bool:
    """True when a ``generate_inputs`` value is a tensor (not a scalar)."""
    return is_array_like(value)


def native_inputs_from_golden(work_dir: PathLike) -> Optional[List[Tuple[str, Any]]]:
    """``generate_inputs``'s ``(name, value)`` pairs of ``<work_dir>/golden.py`` read without
    running the script, or ``None`` when it must run.

    Applies when the module's top level only imports NumPy, ctypes and ``pathlib.Path``,
    sets ``_DATA_DIR = Path(__file__).parent / "data"`` and literal constants and defines
    functions, and ``generate_inputs`` only assigns ``np.load(_DATA_DIR / "in" / "<f>.npy")``
    (read as a ``pypto._native.HostArray``), ``np.zeros(<shape>, dtype=np.<type>)`` (a zeroed
    ``HostArray``) and ``ctypes.c_<type>(<literal>)`` values and returns ``[("name", var),
    ...]``. A file that cannot be read natively gives ``None`` too (the script then reports
    it as before).
    """
    from pypto._golden_static import static_inputs

    golden_path = Path(work_dir) / "golden.py"
    try:
        source = golden_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return static_inputs(source, Path(work_dir))
