"""The names a DSL program writes: element types (``pl.FP32``), enums (``pl.FunctionType``,
``pl.Level``, ``pl.Mem``), annotations (``pl.Tensor[[16, 16], pl.FP32]``, ``pl.Out[...]``)
and the operation stubs (``pl.load``, ``pl.add``, ...).

DSL source is parsed, never executed: the stubs only exist so that programs import, type
check and read well. Calling one outside a parsed body raises ``RuntimeError`` naming the
construct. ``pl.dump_tag`` is the one exception: like PyPTO's it is an identity function
(the parser consumes the statement).
"""

from __future__ import annotations

import enum
from typing import Any, NoReturn
from typing import Tuple as _Tuple

__all__ = [
    "Array",
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
    "Level",
    "Mem",
    "MemorySpace",
    "Out",
    "PadValue",
    "Scalar",
    "ScopeMode",
    "SplitMode",
    "TASK_ID",
    "Tensor",
    "TensorLayout",
    "TensorView",
    "Tile",
    "Tuple",
    "DynVar",
    "dump_tag",
    "dynamic",
]


class DataType:
    """An element type (``pl.FP32``, ...); ``name`` is the member name (``FP32``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"pl.{self.name}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DataType) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("DataType", self.name))


BOOL = DataType("BOOL")
INT8 = DataType("INT8")
INT16 = DataType("INT16")
INT32 = DataType("INT32")
INT64 = DataType("INT64")
UINT8 = DataType("UINT8")
UINT16 = DataType("UINT16")
UINT32 = DataType("UINT32")
UINT64 = DataType("UINT64")
FP16 = DataType("FP16")
BF16 = DataType("BF16")
FP32 = DataType("FP32")
INDEX = DataType("INDEX")

#: ``pl.TASK_ID``: the element type of task ids (``pl.Scalar[pl.TASK_ID]``, the second
#: result of ``pl.submit``; ``pl.array.create(N, pl.TASK_ID)``). Not a numeric type.
TASK_ID = DataType("TASK_ID")

#: Every element type by member name.
DATA_TYPES = {
    d.name: d
    for d in (BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, FP16, BF16, FP32, INDEX)
}


class FunctionType(enum.Enum):
    """What a ``@pl.function`` is (PyPTO's values)."""

    Opaque = 0
    Orchestration = 1
    InCore = 2
    AIC = 3
    AIV = 4
    Group = 5
    Spmd = 6
    Inline = 7
    Graph = 8


class Level(enum.Enum):
    """The hierarchy level of a ``pl.at`` scope."""

    CORE_GROUP = 0
    CHIP = 1
    HOST = 2


class Role(enum.Enum):
    """What a HOST function is (``@pl.function(level=pl.Level.HOST, role=...)``): the
    host orchestrator of an L3 program, or a SubWorker callback it calls."""

    Orchestrator = 0
    SubWorker = 1


class MemorySpace(enum.Enum):
    """An on-chip memory of a tile (``pl.Mem.Vec``, ...)."""

    Vec = 0
    Mat = 1
    Left = 2
    Right = 3
    Acc = 4
    Bias = 5


Mem = MemorySpace


class ScopeMode(enum.Enum):
    """``pl.scope(mode=...)``: automatic or manual dependencies."""

    AUTO = 0
    MANUAL = 1


class SplitMode(enum.Enum):
    """``pl.split(mode)`` in ``pl.at(optimizations=[...])``: how PyPTO halves a mixed
    scope's vector work between the two vector cores (rows or columns). Results do not
    depend on it; this runtime records it on the scope."""

    NONE = 0
    UP_DOWN = 1
    LEFT_RIGHT = 2


class AtomicType(enum.Enum):
    """How a store combines with the tensor (``pl.assemble(..., atomic=...)``): ``None_``
    overwrites, ``Add`` adds atomically (TSTORE's ``AtomicType``; PyPTO's values)."""

    None_ = 0
    Add = 1


class PadValue(enum.Enum):
    """Fill values (reserved for ``pl.fillpad``)."""

    zero = 0
    max = 1
    min = 2


class TensorLayout(enum.Enum):
    """How a tensor's elements lie in memory (``pl.TensorView(layout=...)``); this DSL
    subset reads ``ND`` (row-major) tensors only."""

    ND = 0
    DN = 1
    NZ = 2


class TensorView:
    """``pl.TensorView(valid_shape=[r, c], layout=pl.TensorLayout.ND)``: the third item of a
    kernel parameter's ``pl.Tensor[...]`` annotation (the part of the tensor that holds
    data, and its layout). Only its source matters to the parser."""

    __slots__ = ("stride", "layout", "valid_shape", "pad")

    def __init__(
        self, stride: Any = None, layout: Any = None, valid_shape: Any = None, pad: Any = None
    ) -> None:
        self.stride = stride
        self.layout = layout
        self.valid_shape = valid_shape
        self.pad = pad


class _Annotation:
    """The value of an annotation expression such as ``pl.Tensor[[16, 16], pl.FP32]``
    (only its source matters to the parser)."""

    __slots__ = ("kind", "args")

    def __init__(self, kind: str, args: _Tuple[Any, ...]) -> None:
        self.kind = kind
        self.args = args

    def __repr__(self) -> str:
        return f"pl.{self.kind}[{', '.join(repr(a) for a in self.args)}]"


def _annotation_of(kind: str, item: Any) -> _Annotation:
    return _Annotation(kind, item if isinstance(item, tuple) else (item,))


class Tensor:
    """``pl.Tensor[[d0, d1, ...], dtype]``: a global-memory tensor (bare ``pl.Tensor`` in
    ``@pl.jit`` code: the shape comes from the call's arguments)."""

    def __class_getitem__(cls, item: Any) -> _Annotation:
        return _annotation_of("Tensor", item)


class Tile:
    """``pl.Tile[[rows, cols], dtype]`` (optionally a third item, the memory): an on-chip tile."""

    def __class_getitem__(cls, item: Any) -> _Annotation:
        return _annotation_of("Tile", item)


class Scalar:
    """``pl.Scalar[dtype]``: a scalar parameter or value."""

    def __class_getitem__(cls, item: Any) -> _Annotation:
        return _annotation_of("Scalar", item)


class Array:
    """``pl.Array[N, dtype]``: a fixed-length array of task ids (``pl.TASK_ID``) or
    integers, local to an orchestration (``pl.array.create(N, dtype)``)."""

    def __class_getitem__(cls, item: Any) -> _Annotation:
        return _annotation_of("Array", item)


class Tuple:
    """``pl.Tuple[T1, T2, ...]``: the return annotation of a function returning several values."""

    def __class_getitem__(cls, item: Any) -> _Annotation:
        return _annotation_of("Tuple", item)


class Out:
    """``pl.Out[pl.Tensor[...]]``: a write-only parameter."""

    def __class_getitem__(cls, item: Any) -> _Annotation:
        return _annotation_of("Out", item)


class InOut:
    """``pl.InOut[pl.Tensor[...]]``: a read-write parameter."""

    def __class_getitem__(cls, item: Any) -> _Annotation:
        return _annotation_of("InOut", item)


class DynVar:
    """``pl.dynamic("name")``: a tensor dimension known only at run time
    (``pl.Tensor[[ROWS, 128], pl.FP32]`` with ``ROWS = pl.dynamic("ROWS")``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"pl.dynamic({self.name!r})"


def dynamic(name: str) -> DynVar:
    """A dimension known only at run time, for tensor annotations."""
    return DynVar(name)


def dump_tag(tensor: Any) -> Any:
    """Marks ``tensor`` for selective dump in every later dispatch that consumes it (a
    statement of an Orchestration or Inline body; the parser consumes it). Returns its
    argument when called directly."""
    return tensor


def _dsl_only(name: str) -> NoReturn:
    raise RuntimeError(
        f"pl.{name} is a DSL construct: it is only valid inside a @pl.program / @pl.function / "
        "@pl.jit body, which pypto.language parses without executing"
    )


def _make_stub(name: str, doc: str) -> Any:
    def stub(*args: Any, **kwargs: Any) -> Any:
        _dsl_only(name)

    stub.__name__ = name
    stub.__qualname__ = name
    stub.__doc__ = doc
    return stub
