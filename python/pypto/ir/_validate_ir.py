"""``CompiledProgram.validate_ir``: run every ``passes_dump/`` snapshot of a build in the
reference interpreter and name the first one whose outputs leave ``expected``.

Each snapshot is DSL source (``00_frontend.py``, ``NN_after_<Pass>.py``); it is parsed with
``pl.parse`` and its orchestration interpreted on copies of ``tensors`` (by parameter name;
a pure output left out starts as zeros). The outputs named in ``expected`` are compared
with ``|actual - expected| <= atol + rtol * |expected|``. A divergence after pass N means
that pass changed what the program computes; a divergence in ``00_frontend.py`` means the
program itself does not compute ``expected``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, List, Mapping

import numpy as np

__all__ = ["validate_ir"]

_SSA = re.compile(r"__ssa_v\d+$")


def _base(name: str) -> str:
    return _SSA.sub("", name)


def _run_snapshot(path: Path, tensors: Mapping[str, Any]) -> Dict[str, np.ndarray]:
    from pypto.language import parse

    program = parse(path.read_text(encoding="utf-8"), filename=str(path))
    functions = list(program.native.functions)
    orch = next((f for f in functions if f.ftype == "Orchestration"), None)
    if orch is None:
        orch = functions[-1]
    args: List[Any] = []
    names: List[str] = []
    for var, direction in orch.params:
        name = _base(var.name)
        ty = var.type
        if ty.kind == "tensor":
            shape = list(ty.shape or [])
            if name in tensors:
                arr = np.asarray(tensors[name], dtype=np.float64)
                # A pl.dynamic dimension (-1) takes the array's extent.
                fits = len(arr.shape) == len(shape) and all(d in (-1, a) for d, a in zip(shape, arr.shape))
                if not fits:
                    raise ValueError(f"validate_ir: tensors[{name!r}] has shape {list(arr.shape)}, the parameter {shape}")
                shape = [int(a) for a in arr.shape]
            elif direction == "Out":
                arr = np.zeros(shape, dtype=np.float64)
            else:
                raise KeyError(f"validate_ir: no value for input parameter {name!r} (tensors has {sorted(tensors)})")
            args.append((shape, np.ascontiguousarray(arr).tobytes()))
            names.append(name)
        else:
            if name not in tensors:
                raise KeyError(f"validate_ir: no value for scalar parameter {name!r}")
            args.append(float(getattr(tensors[name], "value", tensors[name])))
    try:
        results = program.native.interpret(args, orch.name)
    except ValueError as e:
        raise AssertionError(f"IR validation failed: {path.name} cannot be interpreted: {e}") from None
    out: Dict[str, np.ndarray] = {}
    for name, (shape, data) in zip(names, results):
        out[name] = np.frombuffer(data, dtype=np.float64).reshape(shape)
    return out


def validate_ir(
    output_dir: Path,
    tensors: Mapping[str, Any],
    expected: Mapping[str, Any],
    *,
    rtol: float = 5e-2,
    atol: float = 5e-2,
) -> None:
    """Raises ``AssertionError`` naming the first snapshot whose outputs differ from
    ``expected``; ``FileNotFoundError`` without ``passes_dump/``."""
    dump = Path(output_dir) / "passes_dump"
    files = sorted(dump.glob("*.py")) if dump.is_dir() else []
    if not files:
        raise FileNotFoundError(
            f"No passes_dump/ under {output_dir}. Compile with dump_passes=True to enable IR validation."
        )
    for path in files:
        actual = _run_snapshot(path, tensors)
        for name, want in expected.items():
            if name not in actual:
                raise KeyError(f"validate_ir: {name!r} is not a tensor parameter (parameters: {sorted(actual)})")
            w = np.asarray(want, dtype=np.float64)
            a = actual[name]
            if a.shape != w.shape:
                raise AssertionError(f"IR validation failed at {path.name}: {name!r} has shape {a.shape}, expected {w.shape}")
            bad = ~np.isclose(a, w, rtol=rtol, atol=atol)
            if bad.any():
                idx = tuple(int(i) for i in np.argwhere(bad)[0])
                where = (
                    "the program itself (before any pass) does not compute the expected values"
                    if path.name.startswith("00_")
                    else f"the pass that wrote {path.name} changed what the program computes"
                )
                raise AssertionError(
                    f"IR validation failed at {path.name}: output {name!r} differs in {int(bad.sum())} of "
                    f"{bad.size} elements (first at {list(idx)}: {a[idx]!r} vs expected {w[idx]!r}; "
                    f"rtol={rtol}, atol={atol}); {where}"
                )
