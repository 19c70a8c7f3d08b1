"""``golden.py`` and ``data/{in,out}/*.npy`` for a compiled program, from the caller's
inputs and reference function (what PyPTO's test harness writes; ``ir.compile`` writes it
when given ``inputs=`` and ``golden=``).

The script has the shape replay and ``debug/run.py`` read: ``generate_inputs(params)``
(every parameter in order: inputs and InOut initial values from ``data/in/*.npy``, pure
outputs as zeros, scalars as ctypes values, also written to ``data/in`` as 0-d arrays),
``compute_golden(tensors, params)`` (the caller's function, renamed), ``__outputs__``,
``RTOL``, ``ATOL``; its text comes from the one renderer (``pto_build_output::golden_script``,
which also writes the bundled examples'). ``data/out/*.npy`` holds the reference's outputs
for the Rust replay's validation. Every file is written atomically.
"""

from __future__ import annotations

import ast
import ctypes
import inspect
import io
import textwrap
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from pypto import _native
from pypto._dtypes import ELEMENT_TYPES, NUMPY_NAMES, SCALAR_CTYPES
from pypto._files import write_atomic

__all__ = ["write_golden"]

# PyPTO name -> NumPy dtype name of a tensor parameter (not index; bfloat16 has none).
_NUMPY = {t.name: t.host_name for t in ELEMENT_TYPES if t.host_name and t.numpy_attr and t.code is not None}
# PyPTO name -> ctypes class of a scalar parameter, for the types NumPy has (index included).
_CTYPES = {name: cls for name, cls in SCALAR_CTYPES.items() if name in NUMPY_NAMES}


def _npy_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def _reference_source(fn: Callable[..., Any]) -> str:
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as e:
        raise TypeError(
            f"golden= needs a function defined in a .py file (its source goes into golden.py): {e}"
        ) from None
    tree = ast.parse(src)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef) or len(fdef.args.args) != 2:
        raise TypeError("golden= must be a function compute_golden(tensors, params)")
    fdef.name = "compute_golden"
    fdef.decorator_list = []
    # Annotations name the caller's imports, which golden.py does not have.
    fdef.returns = None
    for a in fdef.args.args:
        a.annotation = None
    return ast.unparse(fdef)


def write_golden(
    out: Path,
    params: Sequence[Tuple[str, str, Any, str]],
    inputs: List[Any],
    golden: Callable[[Dict[str, Any], Dict[str, Any]], None],
    *,
    rtol: float,
    atol: float,
) -> None:
    """Writes ``golden.py`` and its data for parameters ``params`` (``(name, direction,
    shape, dtype)``, as compiled) and one input per parameter."""
    if len(inputs) != len(params):
        raise TypeError(f"inputs= has {len(inputs)} value(s); the program takes {len(params)} parameter(s)")
    tensors: Dict[str, Any] = {}
    golden_params: List[Tuple[str, str, Optional[str], Optional[List[int]], Optional[str]]] = []
    for (name, direction, shape, dtype), value in zip(params, inputs):
        if shape is None:
            ctype = _CTYPES.get(dtype)
            if ctype is None:
                raise TypeError(f"golden.py: scalar parameter {name!r} of dtype {dtype} is not supported")
            v = getattr(value, "value", value)
            tensors[name] = getattr(ctypes, ctype)(v)
            golden_params.append((name, "scalar", None, None, f"ctypes.{ctype}({v!r})"))
            # The replay binds every parameter from data/in: a scalar is a 0-d array there.
            scalar_dtype = _NUMPY.get(dtype) or ("int64" if dtype == "index" else None)
            if scalar_dtype is not None:
                write_atomic(out / "data" / "in" / f"{name}.npy", _npy_bytes(np.array(v, dtype=scalar_dtype)))
            continue
        np_dtype = _NUMPY.get(dtype)
        if np_dtype is None:
            raise TypeError(f"golden.py: tensor parameter {name!r} of dtype {dtype} has no NumPy type here")
        arr = np.asarray(value)
        if list(arr.shape) != list(shape) or str(arr.dtype) != np_dtype:
            raise TypeError(
                f"inputs[{name!r}] is {arr.dtype}{list(arr.shape)}; the parameter is {np_dtype}{list(shape)}"
            )
        tensors[name] = np.array(arr, copy=True)
        if direction == "Out":
            golden_params.append((name, "zeros", dtype, [int(d) for d in shape], None))
        else:
            write_atomic(out / "data" / "in" / f"{name}.npy", _npy_bytes(arr))
            golden_params.append((name, "load", None, None, None))
    expected = {k: (np.array(v, copy=True) if isinstance(v, np.ndarray) else v) for k, v in tensors.items()}
    for (name, direction, shape, _), _v in zip(params, inputs):
        if direction == "Out" and shape is not None:
            expected[name] = np.zeros_like(expected[name])
    golden(expected, {})
    outputs = [name for name, direction, shape, _ in params if direction in ("Out", "InOut") and shape is not None]
    for name in outputs:
        write_atomic(out / "data" / "out" / f"{name}.npy", _npy_bytes(np.asarray(expected[name])))
    text = _native.render_golden_script(
        "pypto.ir.compile(inputs=..., golden=...)",
        golden_params,
        outputs,
        rtol,
        atol,
        _reference_source(golden),
    )
    write_atomic(out / "golden.py", text.encode("utf-8"))
