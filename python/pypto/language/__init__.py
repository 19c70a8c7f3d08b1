"""``pypto.language as pl``: the DSL subset for writing PTO programs.

A program is a ``@pl.program`` class whose ``@pl.function(type=...)`` methods are kernels
(``InCore`` / ``AIC`` / ``AIV``: tiles, ``pl.load`` / ``pl.store`` and tile operations),
helpers (``Inline``) and one ``Orchestration`` (tensors, ``self.kernel(...)`` dispatches,
``pl.submit``, ``pl.manual_scope``, ``with pl.at(...)`` scopes, ``pl.range`` loops, ``if``,
``pl.dump_tag``). ``@pl.jit`` / ``@pl.jit.inline`` write the same with shapes taken from
the call's arrays. The source is parsed from its AST, never executed; the IR, the passes
and codegen live in the native module (see ``docs/DSL.md``)::

    import pypto.language as pl

    @pl.program
    class VectorAdd:
        @pl.function(type=pl.FunctionType.AIV)
        def add(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            ta = pl.load(a, [0, 0], [16, 16])
            tb = pl.load(b, [0, 0], [16, 16])
            return pl.store(pl.add(ta, tb), [0, 0], c)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = self.add(a, b, c)
            return c
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pypto.language import _ops, errors
from pypto.language._decorators import JitFunction, function, inline, jit, loads, parse, program
from pypto.language._surface import (
    BF16,
    BOOL,
    FP16,
    FP32,
    INDEX,
    INT8,
    INT16,
    INT32,
    INT64,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    Array,
    AtomicType,
    DataType,
    FunctionType,
    InOut,
    Level,
    Mem,
    MemorySpace,
    Out,
    PadValue,
    Role,
    Scalar,
    ScopeMode,
    SplitMode,
    TASK_ID,
    Tensor,
    TensorLayout,
    TensorView,
    Tile,
    Tuple,
    DynVar,
    _make_stub,
    dump_tag,
    dynamic,
)

#: ``pl.X`` spellings of the tile and tensor operations (the Rust op table, ``_ops``).
_TILE_OPS = _ops.TILE_OPS
_TENSOR_OPS = _ops.TENSOR_OPS
_CONSTRUCTS = (
    "range",
    "parallel",
    "pipeline",
    "yield_",
    "submit",
    "manual_scope",
    "scope",
    "at",
    "spmd",
    "cluster",
    "const",
    "split",
    "cross_core_slot",
)
#: ``pl.max`` / ``pl.min`` of scalars (not in ``__all__``: a star import would hide the builtins).
_SCALAR_FNS = ("max", "min")
#: Names under ``pl.tile`` beyond ``_TILE_OPS``: each is the IR operation ``tile.<name>``.
_TILE_ONLY = _ops.TILE_ONLY

_stubs: dict[str, Any] = {}
for _name in _TILE_OPS + _TENSOR_OPS + _CONSTRUCTS + _SCALAR_FNS:
    _stubs[_name] = _make_stub(_name, f"pl.{_name}: a DSL construct (see docs/DSL.md); parsed, never called.")
globals().update(_stubs)

#: ``pl.tile.<op>``: tile operations under their IR names (``pl.tile.load``, ...).
tile = SimpleNamespace(**{n: _make_stub(f"tile.{n}", f"pl.tile.{n}") for n in (*_TILE_OPS, *_TILE_ONLY)})
#: ``pl.array.<op>``: fixed-length arrays of an orchestration (``create(N, dtype)``,
#: ``get_element(arr, i)`` / ``arr[i]``, ``update_element(arr, i, v)`` / ``arr[i] = v``).
array = SimpleNamespace(**{n: _make_stub(f"array.{n}", f"pl.array.{n}") for n in _ops.ARRAY_NS})
#: ``pl.system.<op>``: runtime operations without a kernel (``task_dummy(deps=[...])``: a
#: dependency-only barrier task whose id later tasks depend on).
system = SimpleNamespace(**{n: _make_stub(f"system.{n}", f"pl.system.{n}") for n in _ops.SYSTEM_NS})
#: ``pl.tensor.<op>``: tensor operations under their IR names (``pl.tensor.create``, ...).
tensor = SimpleNamespace(**{n: _make_stub(f"tensor.{n}", f"pl.tensor.{n}") for n in _ops.TENSOR_NS})

__all__ = [
    "Array",
    "AtomicType",
    "BF16",
    "BOOL",
    "FP16",
    "FP32",
    "INDEX",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "UINT8",
    "UINT16",
    "UINT32",
    "UINT64",
    "DataType",
    "FunctionType",
    "InOut",
    "JitFunction",
    "Level",
    "Mem",
    "MemorySpace",
    "Out",
    "PadValue",
    "Role",
    "Scalar",
    "ScopeMode",
    "SplitMode",
    "Tensor",
    "TensorLayout",
    "TensorView",
    "Tile",
    "Tuple",
    "DynVar",
    "dump_tag",
    "dynamic",
    "errors",
    "function",
    "inline",
    "jit",
    "parse",
    "loads",
    "program",
    "system",
    "tensor",
    "tile",
    *_TILE_OPS,
    *_TENSOR_OPS,
    *_CONSTRUCTS,
]


def __getattr__(name: str) -> Any:
    raise AttributeError(f"module 'pypto.language' has no attribute {name!r} (not in this DSL subset; see docs/DSL.md)")
