"""The DSL's view of the op table.

Every operation, its kind and its ``pl.X`` spellings are rows of ``pto_ir::ops::OPS`` in
Rust, read here through ``_native.ops()``; the parser's dispatch tables and the ``pl``
namespace are derived from them, so a new row needs no Python edit (docs/ARCHITECTURE.md,
"Adding an elementwise tile op").
"""

from __future__ import annotations

import keyword
from typing import Any, Dict, List, Tuple

from pypto import _native

#: The rows of the op table, in table order (see ``_native.ops``).
ROWS: List[Dict[str, Any]] = _native.ops()

#: Every IR operation name (``tile.add``, ``tensor.create``, ...).
KNOWN = frozenset(str(r["name"]) for r in ROWS)


def _spellings(kind: str) -> Tuple[str, ...]:
    """The ``pl.X`` spellings of the tile operations of ``kind``."""
    return tuple(s for r in ROWS if r["level"] == "tile" and r["kind"] == kind for s in r["dsl"])


def python_name(leaf: str) -> str:
    """The Python spelling of an IR name's last part: a keyword gets a trailing underscore
    (``tile.and`` is ``pl.tile.and_``, as the printer writes it)."""
    return f"{leaf}_" if keyword.iskeyword(leaf) else leaf


def ir_name(leaf: str) -> str:
    """The IR spelling of a ``pl.tile.X`` name: ``and_`` → ``and`` (the inverse of
    :func:`python_name`)."""
    return leaf[:-1] if leaf.endswith("_") and keyword.iskeyword(leaf[:-1]) else leaf


def _suffixes(prefix: str) -> Tuple[str, ...]:
    """The Python names after ``prefix`` of the operations ``prefix.X`` (``tile.``, ``array.``)."""
    return tuple(python_name(str(r["name"])[len(prefix) :]) for r in ROWS if str(r["name"]).startswith(prefix))


def _binary_rows() -> List[Dict[str, Any]]:
    return [r for r in ROWS if r["kind"] == "binary"]


#: ``pl.add`` → (``tile.add``, ``tile.adds``): a binary op and its tile-scalar form.
BINARY: Dict[str, Tuple[str, str]] = {s: (str(r["name"]), str(r["scalar"])) for r in _binary_rows() for s in r["dsl"]}
#: ``pl.add`` → ``+``: the IR operator of a binary op applied to two scalars (absent: none).
SCALAR_OPERATOR: Dict[str, str] = {s: str(r["infix"]) for r in _binary_rows() if r["infix"] for s in r["dsl"]}
#: ``+`` → ``add``: the binary op a Python operator on tiles means.
INFIX: Dict[str, str] = {op: name for name, op in SCALAR_OPERATOR.items()}
#: ``pl.adds`` → ``tile.adds``: the explicit tile-scalar forms.
SCALAR_FORMS: Dict[str, str] = {s: str(r["name"]) for r in ROWS if r["kind"] == "scalar" for s in r["dsl"]}
#: ``pl.exp``, ...: elementwise ops of one tile (IR ``tile.<name>``).
UNARY = _spellings("unary")
#: ``pl.row_max``, ...: row and column reductions (IR ``tile.<name>``).
REDUCTIONS = _spellings("reduce")
#: ``pl.row_expand_add``, ...: a row or column vector combined with a tile (IR ``tile.<name>``).
EXPANDS = _spellings("expand")

#: ``pl.tile.X`` spellings that are PyPTO's unified signature too (``load``, ``create_tile``,
#: ...) -> the keyword the printer always writes for the IR form (the table's
#: ``printer_keyword``): a call without it, or of a spelling that is no IR name, is the
#: unified signature.
PRINTER_KEYWORDS: Dict[str, str] = {s: str(r["printer_keyword"]) for r in ROWS if r["printer_keyword"] for s in r["dsl"]}

#: The ``pl.X`` spellings of tile operations.
TILE_OPS: Tuple[str, ...] = tuple(s for r in ROWS if r["level"] == "tile" for s in r["dsl"])
#: The ``pl.X`` spellings of tensor operations.
TENSOR_OPS: Tuple[str, ...] = tuple(s for r in ROWS if r["level"] == "tensor" for s in r["dsl"])
#: The tensor operations kernel code may use (IR names): a window of a parameter, an element
#: read or write in GM.
KERNEL_TENSOR_OPS: Tuple[str, ...] = tuple(str(r["name"]) for r in ROWS if r["level"] == "tensor" and r["in_kernels"])
def spellings(*names: str) -> Tuple[str, ...]:
    """The ``pl.X`` spellings and IR names of the operations ``names`` (``tile.cast`` →
    ``cast``, ``tile.cast``)."""
    return tuple(s for r in ROWS if r["name"] in names for s in (*r["dsl"], str(r["name"])))


#: The spellings of the cube's matmuls (``matmul``, ``matmul_acc`` and their IR names), whose
#: results are accumulators.
MATMULS = spellings("tile.matmul", "tile.matmul_acc")
#: ``pl.tile.X`` names beyond ``TILE_OPS``: each is the IR operation ``tile.<name>``.
TILE_ONLY: Tuple[str, ...] = tuple(n for n in _suffixes("tile.") if n not in TILE_OPS)
#: ``pl.tensor.X`` / ``pl.array.X`` / ``pl.system.X``: the IR operations of those namespaces.
TENSOR_NS = _suffixes("tensor.")
ARRAY_NS = _suffixes("array.")
SYSTEM_NS = _suffixes("system.")
