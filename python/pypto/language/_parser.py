"""The DSL front end: Python source of a ``@pl.program`` class (or a ``@pl.jit`` function) is
read from its AST — never executed — and built into the IR of the native module.

What the parser does itself (everything else — operation typing, the passes, codegen — is
Rust):

* **Names.** Every assignment binds a *new* variable; a use reads the binding visible in
  straight-line order (after an ``if``, the else branch's binding wins over the then
  branch's). ``ConvertToSSA`` repairs loops and branches; identity is what ``pl.dump_tag``
  tracks: ``q = self.foo(q)`` makes a new ``q`` that the old tag does not cover.
* **Selective dumps.** ``pl.dump_tag(t)`` emits no IR: it appends ``t``'s variable to the
  function's tag list (checks E1–E5 of the reference, in that order). Every later kernel
  dispatch whose positional argument *is* a tagged variable (or is listed in
  ``pl.submit(..., dumps=[...])``) gets it in its ``dump_vars``, in argument order; every
  later ``pl.at`` scope gets ``dumps=`` entries followed by the tags not already listed
  (the forward-sticky merge). ``pl.manual_scope`` is not a dump carrier.
* **Diagnostics.** Every error is a :class:`~pypto.language.errors.ParserError` subclass
  with PyPTO's message and hint and the span of the construct; operation type errors from
  the native module become :class:`~pypto.language.errors.InvalidOperationError`.
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, Union

from pypto import _native
from pypto._dtypes import ELEMENT_TYPES
from pypto.language import _distributed, _ops
from pypto.language import _surface as S
from pypto.language._auto_tile import AutoTiler, TiledMatmul, oversized
from pypto.language.errors import (
    InvalidOperationError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    Span,
)

IrExpr = _native.IrExpr
IrStmt = _native.IrStmt
IrType = _native.IrType
IrVar = _native.IrVar

SpanTuple = Tuple[str, int, int]
AttrItem = Tuple[str, str, Any]

_E1_HINT = (
    "Move the pl.dump_tag(...) marker into the @pl.function(type=pl.FunctionType.Orchestration) "
    "function whose tasks consume the tagged tensor, or into an @pl.jit.inline / "
    "@pl.function(type=pl.FunctionType.Inline) helper that the orchestration inlines. Selective "
    "tensor dump is filtered per kernel call by the orchestration codegen; kernel-body (AIV / AIC / "
    "Group) usage has no effect."
)
_UNKNOWN_OP_HINT = "Check spelling, or use pl.tensor.*/pl.tile.*/pl.system.* for explicit namespacing"
_AT_KEYWORDS = (
    "level",
    "role",
    "optimizations",
    "deps",
    "no_dep_args",
    "dumps",
    "allow_early_resolve",
    "name_hint",
    "windowize",
)

# Unified operations, derived from the Rust op table (``_ops``): the DSL name and its
# tile-tile / tile-scalar IR operations, the explicit scalar forms, and the one-tile,
# reduction and expansion ops.
_BINARY = _ops.BINARY
_SCALAR_FORMS = _ops.SCALAR_FORMS
_UNARY = _ops.UNARY
_REDUCTIONS = _ops.REDUCTIONS
_EXPANDS = _ops.EXPANDS
# PyPTO operations whose PTO-ISA instruction our header does not implement (docs/PTO_ISA.md).
_HEADER_LACKS = {
    "sel": "TSEL",
    "sels": "TSELS",
    "cmp": "TCMP",
    "cmps": "TCMPS",
    "prelu": "TPRELU",
    "rem": "TREM",
    "rems": "TREMS",
    "addc": "TADDC",
    "subc": "TSUBC",
    "addsc": "TADDSC",
    "subsc": "TSUBSC",
    "fmod": "TREM",
    "fmods": "TREMS",
    "part_add": "TPARTADD",
    "part_mul": "TPARTMUL",
    "part_max": "TPARTMAX",
    "part_min": "TPARTMIN",
}
# PyPTO operations this DSL subset does not lower yet (the header has the instructions).
_NOT_IN_SUBSET = (
    "or_",
    "ors",
    "xor",
    "xors",
    "not_",
    "shl",
    "shls",
    "shr",
    "shrs",
    "lrelu",
    "gemv",
    "gemv_acc",
    "gemv_bias",
    "matmul_bias",
    "fillpad_expand",
    "dim",
    "row_prod",
    "col_prod",
    "row_argmax",
    "row_argmin",
    "col_argmax",
    "col_argmin",
    "batch_matmul",
    "row_expand_max",
    "row_expand_min",
    "row_expand_expdif",
    "col_expand_max",
    "col_expand_min",
    "col_expand_expdif",
    "set_validshape",
    "reinterpret_view",
    "spmd_submit",
    "cluster",
    "incore",
    "auto_incore",
    "unroll",
    "while_",
    "cond",
)

# Tensor operations kernel code may use (the table's in_kernels column): a window of a tensor
# parameter, which later loads and stores address, and an element read or written in GM.
_KERNEL_TENSOR_OPS = _ops.KERNEL_TENSOR_OPS

# A tensor dimension known only at run time (the IR's DYNAMIC_DIM).
_DYNAMIC_DIM = -1

# Element types of NumPy arrays (``@pl.jit`` specialisation): NumPy / ml_dtypes name -> member.
NUMPY_DTYPES = {t.host_name: t.member for t in ELEMENT_TYPES if t.host_name and t.code is not None}
# The integer types of the DSL (``pl.INDEX``, ``pl.INT8`` ... ``pl.UINT64``).
_INTEGER_MEMBERS = frozenset(t.member for t in ELEMENT_TYPES if t.kind in ("int", "uint") and t.c_type)
#: Bytes per element by member name (the element-type table).
_ELEM_BYTES = {t.member: t.bits // 8 for t in ELEMENT_TYPES if t.c_type}
#: The largest vector tile one step of an orchestration ``pl.assemble`` copies, and the most
#: steps one copy takes (a quarter of the 192 KiB vector buffer; 4 MiB in all).
_COPY_TILE_BYTES = 48 << 10
_COPY_MAX_STEPS = 85


@dataclass
class Source:
    """Where a parsed AST came from: maps AST positions to file positions."""

    filename: str
    line_offset: int = 0
    col_offset: int = 0
    lines: List[str] = field(default_factory=list)

    def span(self, node: ast.AST) -> Span:
        line = int(getattr(node, "lineno", 0)) + self.line_offset
        col = int(getattr(node, "col_offset", 0)) + 1 + self.col_offset
        span: Span = {"filename": self.filename, "line": line, "column": col}
        end_line = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        if end_col is not None and end_line == getattr(node, "lineno", None):
            span["end_column"] = int(end_col) + 1 + self.col_offset
        return span

    def triple(self, node: ast.AST) -> SpanTuple:
        s = self.span(node)
        return (str(s["filename"]), int(s["line"]), int(s["column"]))


@dataclass
class ParamDecl:
    """A declared parameter: its name, type (``None``: bare ``pl.Tensor`` in jit code) and
    direction."""

    name: str
    ty: Optional[Any]
    direction: str
    kind: str
    node: ast.arg
    # ``pl.TensorView(valid_shape=[...])`` in the annotation: the declared valid extents
    # (ints, or ``None`` for a ``pl.dynamic`` one); ``None`` when the annotation has none.
    valid_shape: Optional[List[Optional[int]]] = None


@dataclass
class FunctionDecl:
    """A ``@pl.function`` method (or ``@pl.jit`` function) before its body is parsed."""

    name: str
    node: ast.FunctionDef
    ftype: str
    src: Source
    globals: Dict[str, Any]
    params: List[ParamDecl]
    return_types: Optional[List[Any]]
    is_method: bool = True
    pyfunc: Any = None
    #: A HOST function (``@pl.jit.host``): the entry of an L3 build.
    host: bool = False
    #: A SubWorker (``role=pl.Role.SubWorker``): a host callback the HOST function calls.
    sub_worker: bool = False

    @property
    def generic(self) -> bool:
        return any(p.ty is None for p in self.params)


def _pl_path(node: ast.AST) -> Optional[str]:
    """``pl.tile.load`` → ``tile.load``; ``None`` when the expression is not ``pl.<...>``."""
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "pl" and parts:
        return ".".join(reversed(parts))
    if isinstance(node, ast.Name) and node.id == "pld" and parts:
        return _distributed.PREFIX + ".".join(reversed(parts))
    return None


def _is_pl_call(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and _pl_path(node.func) == name


def _following(root: ast.AST, stmt: ast.stmt) -> List[ast.stmt]:
    """The statements after ``stmt`` in the statement list (a body or else branch under
    ``root``) that holds it."""
    for node in ast.walk(root):
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                for k, x in enumerate(stmts):
                    if x is stmt:
                        return stmts[k + 1 :]
    return []


def _self_attr(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _unparse(node: ast.AST) -> str:
    return ast.unparse(node)


def _error(cls: type, src: Source, node: ast.AST, message: str, hint: Optional[str] = None) -> ParserError:
    err = cls(message, src.span(node), hint, None, src.lines or None)
    assert isinstance(err, ParserError)
    return err


def _fold_ints(sym: str, a: Any, b: Any) -> Optional[Any]:
    """``a <sym> b`` computed now when both are INDEX constants (shapes like ``M // T``)."""
    if a.kind != "int" or b.kind != "int" or a.type.dtype != "INDEX" or b.type.dtype != "INDEX":
        return None
    x, y = a.const_value, b.const_value
    if x is None or y is None:
        return None
    if sym in ("//", "%") and y == 0:
        return None
    ops: Dict[str, Callable[[int, int], int]] = {
        "+": lambda p, q: p + q,
        "-": lambda p, q: p - q,
        "*": lambda p, q: p * q,
        "//": lambda p, q: p // q,
        "%": lambda p, q: p % q,
    }
    fn = ops.get(sym)
    if fn is None:
        return None
    v = fn(x, y)
    if not -(2**63) <= v < 2**63:
        return None
    return IrExpr.const_int(v)


def _tensor_admits(param: Any, arg: Any) -> bool:
    """A tensor argument fits a tensor parameter when dtype and rank agree and every
    dimension is equal or known only at run time on either side."""
    if param.kind != "tensor" or arg.kind != "tensor" or param.dtype != arg.dtype:
        return False
    ps, as_ = list(param.shape or []), list(arg.shape or [])
    return len(ps) == len(as_) and all(p == a or _DYNAMIC_DIM in (p, a) for p, a in zip(ps, as_))


def _type_desc(t: Any) -> str:
    return str(t.annotation()).replace("pl.", "")


class _Static:
    """Evaluates compile-time constants: literals, ``pl.X`` members, module-level numbers."""

    def __init__(self, src: Source, globals_: Dict[str, Any]) -> None:
        self.src = src
        self.globals = globals_

    def __call__(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        path = _pl_path(node)
        if path is not None:
            return self.pl_value(path, node)
        if (
            isinstance(node, ast.Call)
            and _pl_path(node.func) == "dynamic"
            and len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            return S.DynVar(node.args[0].value)
        if isinstance(node, ast.Name):
            if node.id in self.globals:
                v = self.globals[node.id]
                if isinstance(v, (bool, int, float, str, S.DataType, enum.Enum, S.DynVar)):
                    return v
            raise _error(
                ParserSyntaxError,
                self.src,
                node,
                f"'{node.id}' is not a compile-time constant",
                "Use a literal, a pl.* constant or a module-level number here.",
            )
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self(e) for e in node.elts]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self(node.operand)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return -v
        if isinstance(node, ast.BinOp):
            a, b = self(node.left), self(node.right)
            if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool) and not isinstance(b, bool):
                ops: Dict[type, Callable[[int, int], int]] = {
                    ast.Add: lambda x, y: x + y,
                    ast.Sub: lambda x, y: x - y,
                    ast.Mult: lambda x, y: x * y,
                    ast.FloorDiv: lambda x, y: x // y,
                    ast.Mod: lambda x, y: x % y,
                }
                fn = ops.get(type(node.op))
                if fn is not None and not (isinstance(node.op, (ast.FloorDiv, ast.Mod)) and b == 0):
                    return fn(a, b)
        raise _error(
            ParserSyntaxError,
            self.src,
            node,
            f"'{_unparse(node)}' is not a compile-time constant",
            "Shapes, dtypes and memories are static: write literals or pl.* constants.",
        )

    def pl_value(self, path: str, node: ast.AST) -> Any:
        head, _, rest = path.partition(".")
        if path.startswith(_distributed.PREFIX):
            found = _distributed.constant(path[len(_distributed.PREFIX) :])
            if found is not None:
                return found
        if not rest and head in S.DATA_TYPES:
            return S.DATA_TYPES[head]
        enums: Dict[str, Any] = {
            "FunctionType": S.FunctionType,
            "Level": S.Level,
            "Role": S.Role,
            "Mem": S.MemorySpace,
            "MemorySpace": S.MemorySpace,
            "ScopeMode": S.ScopeMode,
            "SplitMode": S.SplitMode,
            "PadValue": S.PadValue,
            "AtomicType": S.AtomicType,
        }
        if head in enums and rest and rest in enums[head].__members__:
            return enums[head].__members__[rest]
        if head == "TASK_ID" and not rest:
            return S.TASK_ID
        raise _error(
            ParserSyntaxError,
            self.src,
            node,
            f"'pl.{path}' is not a pl constant",
            "Use pl.FP32 / pl.Mem.Vec / pl.Level.CORE_GROUP / pl.FunctionType.X.",
        )


def parse_annotation(ann: ast.AST, static: _Static, src: Source, allow_bare: bool) -> Tuple[Optional[Any], str, str]:
    """An annotation → ``(type or None for a bare pl.Tensor, direction, kind)``."""
    direction = "In"
    node = ann
    if isinstance(node, ast.Subscript) and _pl_path(node.value) in ("Out", "InOut"):
        direction = str(_pl_path(node.value))
        node = node.slice
    window = _distributed.annotation(node, static, src)
    if window is not None:
        return window
    if allow_bare and _pl_path(node) == "Tensor":
        return None, direction, "tensor"
    bare = _pl_path(node)
    if bare in S.DATA_TYPES and direction == "In":
        # ``scale: pl.FP32``: a scalar parameter (PyPTO's spelling of pl.Scalar[pl.FP32]).
        return IrType.scalar(S.DATA_TYPES[bare].name), direction, "scalar"
    if not isinstance(node, ast.Subscript):
        raise _error(
            ParserTypeError,
            src,
            ann,
            f"unsupported annotation '{_unparse(ann)}'",
            "Annotate with pl.Tensor[[d0, d1], pl.FP32], pl.Scalar[pl.INT32], pl.Out[...] or pl.InOut[...].",
        )
    kind = _pl_path(node.value)
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if kind == "Scalar":
        if direction != "In":
            raise _error(ParserTypeError, src, ann, "a scalar cannot be pl.Out / pl.InOut", "Only tensors are written.")
        d = static(items[0])
        if d == S.TASK_ID:
            return IrType.task_id(), direction, "task_id"
        if not isinstance(d, S.DataType):
            raise _error(ParserTypeError, src, items[0], "pl.Scalar[...] needs a dtype", "Write pl.Scalar[pl.INT32].")
        return IrType.scalar(d.name), direction, "scalar"
    if kind in ("Tensor", "Tile"):
        if len(items) < 2:
            raise _error(
                ParserTypeError, src, ann, f"pl.{kind}[...] needs a shape and a dtype", f"Write pl.{kind}[[16, 16], pl.FP32]."
            )
        shape = static(items[0])
        dtype = static(items[1])
        if kind == "Tensor" and isinstance(shape, list):
            # pl.dynamic dimensions: known only at run time.
            shape = [_DYNAMIC_DIM if isinstance(d, S.DynVar) else d for d in shape]
        if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and (d > 0 or (d == _DYNAMIC_DIM and kind == "Tensor")) for d in shape
        ):
            raise _error(
                ParserTypeError, src, items[0], f"the shape of pl.{kind} must be a list of positive ints", "Write [16, 16]."
            )
        if not isinstance(dtype, S.DataType):
            raise _error(ParserTypeError, src, items[1], f"the dtype of pl.{kind} must be a pl dtype", "Write pl.FP32.")
        if kind == "Tensor":
            return IrType.tensor([int(d) for d in shape], dtype.name), direction, "tensor"
        if direction != "In":
            raise _error(ParserTypeError, src, ann, "a tile cannot be pl.Out / pl.InOut", "Tiles live in one kernel.")
        mem = static(items[2]) if len(items) > 2 else S.MemorySpace.Vec
        if not isinstance(mem, S.MemorySpace) or len(shape) not in (1, 2):
            raise _error(ParserTypeError, src, ann, "pl.Tile[[rows, cols], dtype[, pl.Mem.X]]", "Tiles are 2-D.")
        rows, cols = (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])
        return IrType.tile(int(rows), int(cols), dtype.name, mem.name), direction, "tile"
    if kind == "Array":
        n = static(items[0]) if len(items) == 2 else None
        d = static(items[1]) if len(items) == 2 else None
        if direction != "In" or not isinstance(n, int) or isinstance(n, bool) or not isinstance(d, S.DataType):
            raise _error(
                ParserTypeError, src, ann, f"unsupported annotation '{_unparse(ann)}'", "Write pl.Array[N, pl.TASK_ID] (or an integer dtype)."
            )
        try:
            return IrType.array(n, d.name), direction, "array"
        except ValueError as e:
            raise _error(ParserTypeError, src, ann, str(e), "Arrays hold a positive number of task ids or integers.") from None
    if kind == "Tuple" or (isinstance(node.value, ast.Name) and node.value.id == "tuple"):
        raise _error(ParserTypeError, src, ann, "tuple annotations are only valid as return types", "")
    raise _error(
        ParserTypeError,
        src,
        ann,
        f"unsupported annotation '{_unparse(ann)}'",
        "Annotate with pl.Tensor[...], pl.Tile[...], pl.Scalar[...], pl.Out[...] or pl.InOut[...].",
    )


def tensor_view_valid_shape(ann: ast.AST, static: _Static, src: Source) -> Optional[List[Optional[int]]]:
    """The valid shape a ``pl.Tensor[shape, dtype, pl.TensorView(valid_shape=..., layout=...)]``
    annotation declares (``None`` entries: ``pl.dynamic`` extents), or ``None`` without a
    third item. Only the ND layout is read; strides and pads are refused, naming the item."""
    node = ann.slice if isinstance(ann, ast.Subscript) and _pl_path(ann.value) in ("Out", "InOut") else ann
    if not (isinstance(node, ast.Subscript) and _pl_path(node.value) == "Tensor" and isinstance(node.slice, ast.Tuple)):
        return None
    items = node.slice.elts
    if len(items) < 3:
        return None
    view = items[2]
    if len(items) > 3 or not (isinstance(view, ast.Call) and _pl_path(view.func) == "TensorView") or view.args:
        raise _error(
            ParserTypeError,
            src,
            view,
            f"unsupported third item '{_unparse(view)}' of a pl.Tensor annotation",
            "Write pl.Tensor[[r, c], pl.FP32, pl.TensorView(valid_shape=[r, n], layout=pl.TensorLayout.ND)].",
        )
    keywords = {kw.arg: kw.value for kw in view.keywords}
    for name, value in keywords.items():
        if name not in ("valid_shape", "layout"):
            raise _error(
                ParserTypeError,
                src,
                value,
                f"pl.TensorView({name}=...) is not supported by this DSL subset yet",
                "Give valid_shape= and layout=pl.TensorLayout.ND only.",
            )
    layout = keywords.get("layout")
    if layout is not None and _pl_path(layout) != "TensorLayout.ND":
        raise _error(
            ParserTypeError,
            src,
            layout,
            f"pl.TensorView(layout={_unparse(layout)}) is not supported: kernels read ND tensors only",
            "Write layout=pl.TensorLayout.ND.",
        )
    if "valid_shape" not in keywords:
        return None
    dims = static(keywords["valid_shape"])
    if not isinstance(dims, list) or not all(isinstance(d, S.DynVar) or (isinstance(d, int) and not isinstance(d, bool)) for d in dims):
        raise _error(
            ParserTypeError,
            src,
            keywords["valid_shape"],
            "pl.TensorView(valid_shape=...) must be a list of ints or pl.dynamic dimensions",
            "Write valid_shape=[ROWS, VALID_COLS] with VALID_COLS = pl.dynamic(\"VALID_COLS\").",
        )
    return [None if isinstance(d, S.DynVar) else int(d) for d in dims]


def _annotation_matches(ann: ast.AST, declared: Any, ty: Any) -> bool:
    """Whether a local variable's annotation admits ``ty``: equal types, or a
    ``pl.Tile[[r, c], dtype]`` that names no memory space and matches shape and dtype (as
    in PyPTO, the memory is then the value's)."""
    if declared == ty:
        return True
    names_memory = isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Tuple) and len(ann.slice.elts) > 2
    return (
        declared.kind == "tile"
        and ty.kind == "tile"
        and not names_memory
        and declared.shape == ty.shape
        and declared.dtype == ty.dtype
    )


def parse_return_annotation(ann: Optional[ast.AST], static: _Static, src: Source) -> Optional[List[Any]]:
    if ann is None:
        return None
    if isinstance(ann, ast.Constant) and ann.value is None:
        return []
    if isinstance(ann, ast.Subscript) and (
        _pl_path(ann.value) == "Tuple" or (isinstance(ann.value, ast.Name) and ann.value.id == "tuple")
    ):
        items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        return [parse_annotation(i, static, src, False)[0] for i in items]
    if _pl_path(ann) == "Tensor":
        return None  # bare (jit): inferred from the body
    return [parse_annotation(ann, static, src, False)[0]]


def function_type_of(fdef: ast.FunctionDef, src: Source) -> Optional[str]:
    """The function type named by a ``@pl.function(type=...)`` / ``@pl.jit...`` decorator."""
    for dec in fdef.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        path = _pl_path(target)
        if path in ("function", "inline"):
            ftype = "Inline" if path == "inline" else "Opaque"
            if isinstance(dec, ast.Call):
                for kw in dec.keywords:
                    if kw.arg == "type":
                        v = _pl_path(kw.value)
                        if v is None or not v.startswith("FunctionType."):
                            raise _error(
                                ParserSyntaxError,
                                src,
                                kw.value,
                                "type= must be a pl.FunctionType member",
                                "Write @pl.function(type=pl.FunctionType.AIV).",
                            )
                        name = v.split(".", 1)[1]
                        if name not in S.FunctionType.__members__:
                            raise _error(
                                ParserSyntaxError,
                                src,
                                kw.value,
                                f"unknown function type 'pl.{v}'",
                                f"Use one of {', '.join(S.FunctionType.__members__)}.",
                            )
                        ftype = name
            return ftype
        if path in ("jit", "jit.inline", "jit.incore", "jit.opaque"):
            return {"jit": "Orchestration", "jit.inline": "Inline", "jit.incore": "InCore", "jit.opaque": "Opaque"}[path]
    return None


def declare_function(
    fdef: ast.FunctionDef, ftype: str, src: Source, globals_: Dict[str, Any], is_method: bool, allow_bare: bool
) -> FunctionDecl:
    static = _Static(src, globals_)
    args = fdef.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise _error(
            ParserSyntaxError,
            src,
            fdef,
            f"function '{fdef.name}' has *args, **kwargs or keyword-only parameters",
            "DSL functions take plain positional parameters.",
        )
    positional = list(args.args)
    if is_method:
        if not positional or positional[0].arg != "self":
            raise _error(
                ParserSyntaxError, src, fdef, f"method '{fdef.name}' must take self first", "Write def f(self, ...)."
            )
        positional = positional[1:]
    params = []
    for a in positional:
        if a.annotation is None:
            if allow_bare:
                params.append(ParamDecl(a.arg, None, "In", "tensor", a))
                continue
            raise _error(
                ParserTypeError,
                src,
                a,
                f"parameter '{a.arg}' of '{fdef.name}' has no type annotation",
                "Annotate it: pl.Tensor[[16, 16], pl.FP32], pl.Scalar[pl.INT32], pl.Out[...].",
            )
        ty, direction, kind = parse_annotation(a.annotation, static, src, allow_bare)
        params.append(ParamDecl(a.arg, ty, direction, kind, a, tensor_view_valid_shape(a.annotation, static, src)))
    rets = parse_return_annotation(fdef.returns, static, src)
    _distributed.append_ctx_params(params)
    return FunctionDecl(fdef.name, fdef, ftype, src, globals_, params, rets, is_method)


class ProgramBuilder:
    """Parses the functions of one program, on demand and each once."""

    def __init__(self, name: str, decls: List[FunctionDecl], jit: bool = False) -> None:
        self.name = name
        self.decls = {d.name: d for d in decls}
        self.order = [d.name for d in decls]
        self.jit = jit
        self.done: Dict[str, Any] = {}
        self.returns: Dict[str, List[Any]] = {}
        self.in_progress: Set[str] = set()
        self.specialised: Dict[Tuple[str, Tuple[str, ...]], str] = {}
        self.extra_order: Dict[str, List[str]] = {}
        self.param_types: Dict[str, List[Any]] = {}

    def build(self) -> Any:
        for name in self.order:
            if not self.decls[name].generic:
                self.ensure(name)
        functions = []
        for name in self.order:
            if name in self.done:
                functions.append(self.done[name])
            for extra in self.extra_order.get(name, []):
                functions.append(self.done[extra])
        return _native.IrProgram(self.name, functions)

    def add_external(self, name: str, fn: Any, node: ast.AST, src: Source) -> None:
        """A module-level ``@pl.function`` called by name: it joins the program (after the
        class's own functions, as in PyPTO)."""
        known = self.decls.get(name)
        if known is not None:
            if known.is_method or getattr(known, "pyfunc", None) is not fn:
                raise _error(
                    ParserSyntaxError,
                    src,
                    node,
                    f"Conflicting functions with name '{name}'",
                    "A module-level @pl.function and a method (or another function) share this name; rename one.",
                )
            return
        fdef, fsrc = function_source(fn)
        ftype = getattr(fn, "__pypto_function_type__", None)
        globals_ = dict(getattr(fn, "__globals__", {}))
        globals_.update(getattr(fn, "__pypto_scope__", {}))
        import inspect

        try:
            globals_.update(inspect.getclosurevars(fn).nonlocals)
        except (TypeError, ValueError):
            pass
        decl = declare_function(fdef, ftype.name if ftype is not None else "Opaque", fsrc, globals_, False, False)
        decl.pyfunc = fn
        self.decls[name] = decl
        self.order.append(name)

    def signature(self, name: str) -> Tuple[List[Any], List[Any]]:
        """Parameter types and return types of a non-generic function (parsing it if the
        return types are not declared)."""
        decl = self.decls[name]
        if name not in self.param_types:
            self.param_types[name] = [p.ty for p in decl.params]
        if decl.return_types is not None:
            return self.param_types[name], decl.return_types
        self.ensure(name)
        return self.param_types[name], self.returns[name]

    def ensure(self, name: str, final_name: Optional[str] = None, types: Optional[List[Any]] = None) -> None:
        final = final_name or name
        if final in self.done:
            return
        if final in self.in_progress:
            decl = self.decls[name]
            raise _error(
                ParserSyntaxError,
                decl.src,
                decl.node,
                f"function '{name}' calls itself (directly or through others) before its return type is known",
                "Annotate its return type, or remove the recursion (DSL functions are not recursive).",
            )
        self.in_progress.add(final)
        try:
            decl = self.decls[name]
            fp = FunctionParser(self, decl, final, types)
            fn, rets = fp.parse()
        finally:
            self.in_progress.discard(final)
        self.done[final] = fn
        self.returns[final] = rets
        if types is not None:
            self.param_types[final] = types

    def specialise(self, name: str, arg_types: List[Any], node: ast.AST, src: Source) -> Tuple[str, List[Any], List[Any]]:
        """A generic (bare ``pl.Tensor``) function specialised to the argument types."""
        decl = self.decls[name]
        types: List[Any] = []
        for p, t in zip(decl.params, arg_types):
            types.append(p.ty if p.ty is not None else t)
        key = (name, tuple(_type_desc(t) for t in types))
        if key not in self.specialised:
            n = len([k for k in self.specialised if k[0] == name])
            final = name if n == 0 else f"{name}_{n}"
            self.specialised[key] = final
            self.ensure(name, final, types)
            if final != name:
                self.extra_order.setdefault(name, []).append(final)
            elif name not in self.order:
                self.order.append(name)
        final = self.specialised[key]
        return final, self.param_types[final], self.returns[final]


class _Scope:
    """Name bindings of a function body."""

    def __init__(self) -> None:
        self.names: Dict[str, Any] = {}


class FunctionParser:
    """Parses one function body into an ``IrFunction``."""

    def __init__(
        self, prog: ProgramBuilder, decl: FunctionDecl, final_name: str, types: Optional[List[Any]] = None
    ) -> None:
        self.prog = prog
        self.decl = decl
        self.name = final_name
        self.src = decl.src
        self.static = _Static(decl.src, decl.globals)
        self.ftype = decl.ftype
        self.names: Dict[str, Any] = {}
        self.tagged: List[Any] = []
        self.blocks: List[List[Any]] = []
        self.in_manual = 0
        self.in_at = 0
        # A pl.store result (by var id) → the tensor it wrote (the store's target).
        self.stored_into: Dict[int, Any] = {}
        # Inside ``with pl.spmd(core_num=n, sync_start=b):``: the attributes of its dispatches.
        self.spmd: List[AttrItem] = []
        self.loop_depth = 0
        self.types = types
        self.param_roots: Dict[int, str] = {}
        # Matmuls larger than the cube buffers (pypto.language._auto_tile).
        self.tiler = AutoTiler(self)
        self.tiled_ok = False
        # Orchestration windows made by pl.slice(..., valid_shape=...) (by var id).
        self.valid_slices: Set[int] = set()
        # Tensor parameters whose annotation declares a partial valid shape (by var id).
        self.param_views: Dict[int, Tuple[str, List[Optional[int]]]] = {}
        self._ret_types: Optional[List[Any]] = None
        self._ret_node: Optional[ast.AST] = None
        self._n_temps = 0

    def temp_name(self, hint: str) -> str:
        """A name for a parser temporary, distinct from every other name of the function
        (names carry meaning before SSA: a reused one would look loop-carried)."""
        self._n_temps += 1
        return f"_{hint}{self._n_temps}"

    # ---- errors -----------------------------------------------------------------------

    def syntax(self, node: ast.AST, message: str, hint: Optional[str] = None) -> ParserError:
        return _error(ParserSyntaxError, self.src, node, message, hint)

    def typeerr(self, node: ast.AST, message: str, hint: Optional[str] = None) -> ParserError:
        return _error(ParserTypeError, self.src, node, message, hint)

    def operr(self, node: ast.AST, message: str, hint: Optional[str] = None) -> ParserError:
        return _error(InvalidOperationError, self.src, node, message, hint)

    def sp(self, node: ast.AST) -> SpanTuple:
        return self.src.triple(node)

    # ---- function ---------------------------------------------------------------------

    def parse(self) -> Tuple[Any, List[Any]]:
        params = []
        for i, p in enumerate(self.decl.params):
            ty = self.types[i] if self.types is not None else p.ty
            if ty is None:
                raise self.typeerr(
                    p.node,
                    f"parameter '{p.name}' of '{self.decl.name}' is a bare pl.Tensor",
                    "Give it a shape (pl.Tensor[[16, 16], pl.FP32]) or call the @pl.jit function with arrays.",
                )
            if p.direction != "In" and ty.kind != "tensor":
                raise self.typeerr(p.node, f"parameter '{p.name}': only tensors are pl.Out / pl.InOut", "")
            v = IrVar(p.name, ty)
            self.names[p.name] = v
            if ty.kind == "tensor":
                self.param_roots[v.id] = p.direction
                self.declare_param_view(p, v)
            params.append((v, p.direction))
        body = _distributed.sub_worker_body(self) if self.decl.sub_worker else self.block(self.decl.node.body)
        rets = self.return_types(body)
        fn = _native.IrFunction(
            self.name, self.ftype, params, rets, body, self.sp(self.decl.node), _distributed.function_attrs(self.decl)
        )
        return fn, rets

    def declare_param_view(self, p: ParamDecl, v: Any) -> None:
        """Records a ``pl.TensorView(valid_shape=...)`` parameter whose valid shape may be
        smaller than its shape (loads of it must then name their valid region)."""
        if p.valid_shape is None:
            return
        shape = list(v.type.shape or [])
        if len(p.valid_shape) != len(shape):
            raise self.typeerr(
                p.node,
                f"parameter '{p.name}': pl.TensorView valid_shape has {len(p.valid_shape)} dimensions, the tensor {len(shape)}",
                "Give one valid extent per dimension of the tensor.",
            )
        if any(d is None or d != shape[i] for i, d in enumerate(p.valid_shape)):
            self.param_views[v.id] = (p.name, p.valid_shape)

    def check_view_load(self, t: Any, node: ast.AST) -> None:
        """A load without ``valid_shape=`` of a parameter declared partly valid is refused:
        the valid extents reach the kernel only as scalars the load names."""
        var = t.as_var if t.kind == "var" else None
        if var is None or var.id not in self.param_views:
            return
        name, _ = self.param_views[var.id]
        raise self.operr(
            node,
            f"pl.load of '{name}', whose pl.TensorView declares a valid shape, without valid_shape=",
            "Pass the valid extents to the kernel as scalars and load with pl.load(..., valid_shape=[rows, n]).",
        )

    def return_types(self, body: List[Any]) -> List[Any]:
        declared = self.decl.return_types
        found = self._ret_types
        if declared is not None:
            if found is not None and len(found) == len(declared):
                for i, (a, b) in enumerate(zip(found, declared)):
                    if a != b:
                        node = self._ret_node or self.decl.node
                        raise self.typeerr(
                            node,
                            f"return value {i + 1} of '{self.decl.name}' is {_type_desc(a)}, the annotation says {_type_desc(b)}",
                            "Fix the return annotation or the returned value.",
                        )
            elif found is not None and len(found) != len(declared):
                node = self._ret_node or self.decl.node
                raise self.typeerr(
                    node,
                    f"'{self.decl.name}' returns {len(found)} value(s), its annotation declares {len(declared)}",
                    "Fix the return annotation or the return statement.",
                )
            return list(declared)
        return list(found) if found is not None else []

    # ---- blocks -----------------------------------------------------------------------

    def emit(self, stmt: Any) -> None:
        self.blocks[-1].append(stmt)

    def block(self, stmts: Sequence[ast.stmt]) -> List[Any]:
        self.blocks.append([])
        try:
            for s in stmts:
                self.stmt(s)
        finally:
            out = self.blocks.pop()
        return out

    def stmt(self, s: ast.stmt) -> None:
        if isinstance(s, ast.Assign):
            self.assign(s, s.targets, s.value, None)
        elif isinstance(s, ast.AnnAssign):
            if s.value is None:
                raise self.syntax(s, "an annotation without a value", "Write x: pl.Tile[...] = expr.")
            self.assign(s, [s.target], s.value, s.annotation)
        elif isinstance(s, ast.AugAssign):
            if not isinstance(s.target, ast.Name):
                raise self.syntax(s, "augmented assignment to a non-name", "Write x = x + y.")
            value = ast.BinOp(left=ast.Name(id=s.target.id, ctx=ast.Load()), op=s.op, right=s.value)
            ast.copy_location(value, s)
            ast.fix_missing_locations(value)
            self.assign(s, [s.target], value, None)
        elif isinstance(s, ast.Expr):
            self.expr_stmt(s)
        elif isinstance(s, ast.Return):
            self.return_stmt(s)
        elif isinstance(s, ast.For):
            self.for_stmt(s)
        elif isinstance(s, ast.If):
            self.if_stmt(s)
        elif isinstance(s, ast.With):
            self.with_stmt(s)
        elif isinstance(s, ast.Pass):
            pass
        elif isinstance(s, (ast.While,)):
            raise self.syntax(s, "while loops are not supported yet", "Use for i in pl.range(...).")
        else:
            raise self.syntax(
                s, f"unsupported statement '{type(s).__name__}'", "DSL bodies hold assignments, calls, for, if, with and return."
            )

    # ---- names ------------------------------------------------------------------------

    def lookup(self, node: ast.Name) -> Any:
        if node.id in self.names:
            if isinstance(self.names[node.id], TiledMatmul):
                raise self.operr(
                    node,
                    f"'{node.id}' is a matmul result larger than the cube buffers (L0A / L0B / L0C), tiled by the compiler",
                    "Use it as pl.assemble(t, c, [r, col]) / pl.store(c, [r, col], t) into a tensor, "
                    "pl.cast(c, dtype, mode=\"rint\"), or an operand of another pl.matmul.",
                )
            return self.names[node.id]
        if node.id in self.decl.globals:
            v = self.decl.globals[node.id]
            if isinstance(v, (bool, int, float)):
                return v
        raise self.syntax(node, f"Undefined variable '{node.id}'", "Bind it before use (a parameter or an earlier assignment).")

    def bind_targets(self, targets: List[ast.expr], types: List[Any], node: ast.AST) -> List[Any]:
        names: List[ast.Name] = []

        def flatten(t: ast.expr) -> None:
            if isinstance(t, ast.Name):
                names.append(t)
            elif isinstance(t, (ast.Tuple, ast.List)):
                for e in t.elts:
                    flatten(e)
            else:
                raise self.syntax(t, f"cannot assign to '{_unparse(t)}'", "Assign to plain names.")

        for t in targets:
            flatten(t)
        if len(names) != len(types):
            raise self.syntax(
                node,
                f"{len(types)} value(s) cannot be unpacked into {len(names)} name(s)",
                "Bind one name per value.",
            )
        out = []
        for n, ty in zip(names, types):
            v = IrVar(n.id, ty)
            self.names[n.id] = v
            out.append(v)
        return out

    # ---- statements -------------------------------------------------------------------

    def assign(self, s: ast.stmt, targets: List[ast.expr], value: ast.expr, ann: Optional[ast.expr]) -> None:
        if len(targets) != 1:
            raise self.syntax(s, "chained assignment (a = b = ...)", "Assign one target per statement.")
        target = targets[0]
        if _is_pl_call(value, "yield_"):
            raise self.syntax(
                value,
                "pl.yield_(...) must be the last statement of a loop or if body",
                "Move it to the end of the body.",
            )
        if _is_pl_call(value, "submit"):
            assert isinstance(value, ast.Call)
            expr, types = self.submit(value, target)
            vars_ = self.bind_targets([target], types, s)
            self.emit(IrStmt.assign(vars_, expr, self.sp(s)))
            return
        if _is_pl_call(value, "dump_tag"):
            raise self.operr(value, "Unknown operation 'pl.dump_tag'", _UNKNOWN_OP_HINT)
        if isinstance(target, ast.Subscript):
            if isinstance(target.value, ast.Name) and target.value.id in self.names:
                base = self.names[target.value.id]
                if isinstance(base, IrVar) and base.type.kind == "array":
                    self.array_store(s, target, base, value)
                    return
            self.store_into(s, target, value)
            return
        if isinstance(target, ast.Name) and _is_pl_call(value, "create_tensor") and self.in_kernel():
            assert isinstance(value, ast.Call)
            expr = self.accumulator_placeholder(s, value, target.id)
        else:
            expr = self.tiled_value(value) if isinstance(target, ast.Name) else self.expr(value)
        if isinstance(expr, TiledMatmul):
            assert isinstance(target, ast.Name)
            self.names[target.id] = expr
            return
        ty = expr.type
        if isinstance(target, ast.Name):
            if ty.kind == "unit":
                raise self.typeerr(value, f"'{_unparse(value)}' returns nothing", "Call it as a statement instead.")
            if ty.kind == "tuple":
                raise self.syntax(
                    s,
                    f"'{_unparse(value)}' returns {len(ty.items)} values",
                    "Unpack them: a, b = ...",
                )
            if ann is not None:
                declared, _, _ = parse_annotation(ann, self.static, self.src, False)
                assert declared is not None  # a bare pl.Tensor is refused (allow_bare=False)
                if declared.kind == "scalar" and ty.kind == "scalar" and declared != ty:
                    # x: pl.Scalar[pl.INT64] = 0 converts the value to the declared dtype.
                    expr = IrExpr.cast(self.atom(expr, value), str(declared.dtype))
                    ty = expr.type
                if not _annotation_matches(ann, declared, ty):
                    raise self.typeerr(
                        ann,
                        f"'{target.id}' is annotated {_type_desc(declared)} but the value is {_type_desc(ty)}",
                        "Fix the annotation (or the value).",
                    )
            v = IrVar(target.id, ty)
            self.track_alias(v, expr)
            self.names[target.id] = v
            self.emit(IrStmt.assign([v], expr, self.sp(s)))
            return
        types = list(ty.items) if ty.kind == "tuple" else [ty]
        vars_ = self.bind_targets([target], types, s)
        self.emit(IrStmt.assign(vars_, expr, self.sp(s)))

    def accumulator_placeholder(self, s: ast.stmt, call: ast.Call, name: str) -> Any:
        """``acc = pl.create_tensor([m, n], dtype=pl.FP32)`` in kernel code, when a later
        statement of the block rebinds ``acc`` to a ``pl.matmul`` / ``pl.matmul_acc`` result
        (a loop whose first iteration starts the accumulation): the accumulator tile, in
        ``Acc``, its contents unspecified until that matmul writes it (``tile.alloc``). Any
        other tensor created in kernel code is refused naming the supported forms."""
        later = [n for st in _following(self.decl.node, s) for n in ast.walk(st)]
        rebound = any(
            isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
            and isinstance(n.value, ast.Call)
            and _pl_path(n.value.func) in _ops.MATMULS
            for n in later
        )
        if not rebound:
            raise self.operr(
                call,
                f"tensor operation pl.create_tensor inside a kernel: '{name}' is not the accumulator of a later pl.matmul",
                "Create tensors in the orchestration and pass them in; in kernel code, pl.create_tile makes a "
                "scratch tile, and acc = pl.create_tensor(...) may seed a loop that rebinds acc = pl.matmul(...).",
            )
        b = self.bind_args(call, "create_tensor", ["shape", "dtype"], {})
        dt = self.static(b["dtype"])
        shape = self.static_ints(b["shape"], "shape")
        if not isinstance(dt, S.DataType) or len(shape) != 2:
            raise self.operr(call, "an accumulator pl.create_tensor takes a [rows, cols] literal shape and a pl dtype", "Write pl.create_tensor([16, 256], dtype=pl.FP32).")
        kwargs = [("shape", "ints", shape), ("dtype", "dtype", dt.name), ("target_memory", "memory", "Acc")]
        return self.op_call_ir("tile.alloc", [], kwargs, call)

    def tiled_value(self, value: ast.expr) -> Any:
        """A value bound to a name: may be a :class:`TiledMatmul` (``c = pl.matmul(a, b)`` too
        large for the cube buffers, or ``pl.cast`` of one); elsewhere such a matmul is refused."""
        self.tiled_ok = isinstance(value, ast.Call) and _pl_path(value.func) in _ops.spellings("tile.matmul", "tile.cast")
        try:
            return self.expr(value)
        finally:
            self.tiled_ok = False

    def tiled_of(self, node: ast.expr) -> Optional[TiledMatmul]:
        """The tiled matmul result ``node`` names, if it names one."""
        v = self.names.get(node.id) if isinstance(node, ast.Name) else None
        return v if isinstance(v, TiledMatmul) else None

    def matmul_operands(self, b: Dict[str, ast.expr], node: ast.Call) -> Any:
        """The operands of ``pl.matmul``: a tiled result is written into a Mat tile first.
        Returns a :class:`TiledMatmul` when the product itself exceeds the cube buffers."""
        tiled = self.tiled_ok
        self.tiled_ok = False
        sides = []
        for key in ("lhs", "rhs"):
            t = self.tiled_of(b[key])
            sides.append(self.tiler.scratch(t, node) if t is not None else self.expr(b[key]))
        lhs, rhs = sides
        cube = all(e.type.kind == "tensor" or (e.type.kind == "tile" and e.type.memory == "Mat") for e in sides)
        if not (self.in_kernel() and cube and oversized(lhs, rhs)):
            return lhs, rhs
        if not tiled:
            raise self.operr(
                node,
                "a pl.matmul larger than the cube buffers (L0A / L0B / L0C) inside an expression",
                "Bind it to a name first (c = pl.matmul(a, b)), then assemble, cast or multiply c.",
            )
        (m, k), n = [int(d) for d in lhs.type.shape], int(rhs.type.shape[1])
        acc = "INT32" if str(lhs.type.dtype) == "INT8" else "FP32"
        return TiledMatmul(lhs, rhs, m, k, n, acc)

    def tiled_cast(self, t: TiledMatmul, b: Dict[str, ast.expr], dt: Any, allowed: bool, node: ast.Call) -> TiledMatmul:
        """``pl.cast(c, dtype, mode="rint")`` of a tiled result (bound to a name when
        ``allowed``): narrowed on the cube's write-back."""
        mode = self.static(b["mode"]) if "mode" in b else "round"
        if mode != "rint" or not allowed or dt.name not in ("BF16", "FP16"):
            raise self.operr(
                node,
                f"pl.cast(..., pl.{dt.name}, mode={mode!r}) of a matmul result tiled by the compiler",
                "Write c2 = pl.cast(c, pl.BF16, mode=\"rint\") (the cube write-back's rounding) and use c2 in a pl.matmul.",
            )
        return TiledMatmul(t.lhs, t.rhs, t.m, t.k, t.n, t.acc_dtype, dt.name)

    def array_store(self, s: ast.stmt, target: ast.Subscript, base: Any, value: ast.expr) -> None:
        """``arr[i] = v``: ``arr = pl.array.update_element(arr, i, v)`` (the name is rebound
        to the updated array)."""
        assert isinstance(target.value, ast.Name)
        if isinstance(target.slice, (ast.Slice, ast.Tuple)):
            raise self.typeerr(target, f"arrays take one index: write {target.value.id}[i] = value", "Arrays are one-dimensional.")
        idx = self.scalar_expr(target.slice)
        v = self.atom(self.expr(value), value)
        expr = self.op_call_ir("array.update_element", [IrExpr.var(base), idx, v], [], s)
        nv = IrVar(target.value.id, expr.type)
        self.names[target.value.id] = nv
        self.emit(IrStmt.assign([nv], expr, self.sp(s)))

    def store_into(self, s: ast.stmt, target: ast.Subscript, value: ast.expr) -> None:
        """``t[a:b, :] = value`` in kernel code: a ``pl.store`` of the value (a tile, or a
        whole tensor loaded first) at the slice's start, rebinding ``t`` to the result."""
        if not isinstance(target.value, ast.Name):
            raise self.syntax(target, f"cannot assign to '{_unparse(target)}'", "Assign to t[...] with t a tensor name.")
        base = self.lookup(target.value)
        if not isinstance(base, IrVar) or base.type.kind != "tensor":
            raise self.typeerr(target, f"cannot assign to a slice of '{target.value.id}'", "Slice-assign into tensors.")
        if not self.in_kernel():
            raise self.operr(
                target,
                f"slice assignment '{_unparse(target)} = ...' in orchestration code",
                "Write it inside a kernel or a pl.at scope (a pl.store), or use "
                "pl.assemble(target, source, offsets) in the orchestration.",
            )
        shape = list(base.type.shape or [])
        items = list(target.slice.elts) if isinstance(target.slice, ast.Tuple) else [target.slice]
        if len(items) > len(shape):
            raise self.typeerr(target, f"{len(items)} indices for a rank-{len(shape)} tensor", "")
        offsets: List[Any] = []
        for d in range(len(shape)):
            it = items[d] if d < len(items) else None
            if it is not None and not isinstance(it, ast.Slice):
                raise self.typeerr(it, "slice assignment needs slices (t[i:i + 16, :])", "Slices keep the rank.")
            if it is not None and it.step is not None:
                raise self.syntax(it.step, "slices with a step are not supported", "")
            lower = it.lower if it is not None else None
            offsets.append(self.scalar_expr(lower) if lower is not None else IrExpr.const_int(0))
        tile = self.tile_of(self.atom(self.expr(value), value), value)
        expr = self.op_call_ir("tile.store", [tile, IrExpr.list_of(offsets), IrExpr.var(base)], [], s)
        v = IrVar(target.value.id, expr.type)
        self.track_alias(v, expr)
        self.names[target.value.id] = v
        self.emit(IrStmt.assign([v], expr, self.sp(s)))

    def valid_slice(self, window: Any, valid: ast.expr, node: ast.AST) -> Any:
        """``pl.slice(t, shape, offset, valid_shape=[...])`` in orchestration code: the window
        is the data the kernel receives; its valid shape is the kernel's to honour (a
        ``pl.TensorView`` parameter loaded with ``valid_shape=``), so the window may only be
        passed to kernels. Kernel code has no such views."""
        if self.in_kernel():
            raise self.operr(
                valid,
                "pl.slice(valid_shape=...) of a tensor in kernel code is not supported yet",
                "Load the window with pl.load(..., valid_shape=[rows, n]) instead.",
            )
        self.offsets(valid, "valid_shape")  # checked: scalars of the orchestration
        v = IrVar(self.temp_name("valid_view"), window.type)
        self.emit(IrStmt.assign([v], window, self.sp(node)))
        self.valid_slices.add(v.id)
        return IrExpr.var(v)

    def in_kernel(self) -> bool:
        """Code that runs on a core: a kernel body or a ``pl.at`` scope."""
        return self.ftype in ("InCore", "AIC", "AIV", "Group") or bool(self.in_at)

    def tile_of(self, e: Any, node: ast.AST) -> Any:
        """In kernel code, a whole tensor where a tile is expected is loaded first (PyPTO's
        tensor-to-tile conversion of a tensor operation inside a kernel or a scope)."""
        if e.type.kind != "tensor" or not self.in_kernel():
            return e
        if e.kind == "var" and e.as_var is not None and e.as_var.id in self.valid_slices:
            raise self.operr(
                node,
                "a window made by pl.slice(..., valid_shape=...) used as a whole tensor",
                "Pass the window to a kernel whose parameter is annotated with pl.TensorView(valid_shape=...) "
                "and load it with pl.load(..., valid_shape=[rows, n]).",
            )
        shape = [int(d) for d in (e.type.shape or [])]
        zeros = IrExpr.list_of([IrExpr.const_int(0) for _ in shape])
        return self.atom(self.op_call_ir("tile.load", [e, zeros], [("shapes", "ints", shape)], node), node, "t")

    def tensor_task(self, node: ast.AST, ir_op: str, operands: List[Any], kwargs: List[AttrItem]) -> Any:
        """A tensor operation in orchestration code (PyPTO's ``pl.add(x, y)`` on tensors):
        one kernel task, written as the ``pl.at`` scope it stands for — load the tensors,
        ``ir_op`` on the tiles, store into a new tensor of the result's shape — which
        ``OutlineIncoreScopes`` turns into a kernel and its dispatch."""
        ref = next(o for o in operands if o.type.kind == "tensor")
        body: List[Any] = []
        self.blocks.append(body)
        self.in_at += 1
        try:
            tiles = [self.tile_of(self.atom(o, node), node) for o in operands]
            tile = self.atom(self.op_call_ir(ir_op, tiles, kwargs, node), node, "t")
            # Elementwise results keep the operand's shape; a transpose takes the tile's.
            src_shape = tile.type.shape if ir_op == "tile.transpose" else ref.type.shape
            shape = [int(d) for d in (src_shape or [])]
            name = self.temp_name("r")
            create = IrExpr.op_call("tensor.create", [], [("shape", "ints", shape), ("dtype", "dtype", tile.type.dtype)], self.sp(node))
            created = IrVar(name, create.type)
            zeros = IrExpr.list_of([IrExpr.const_int(0) for _ in shape])
            store = self.op_call_ir("tile.store", [tile, zeros, IrExpr.var(created)], [], node)
            stored = IrVar(name, store.type)
            self.emit(IrStmt.assign([stored], store, self.sp(node)))
        finally:
            self.in_at -= 1
            self.blocks.pop()
        self.emit(IrStmt.assign([created], create, self.sp(node)))
        self.emit(IrStmt.scope("at", S.Level.CORE_GROUP.name, [], body, None, [], self.sp(node)))
        return IrExpr.var(stored)

    def elementwise(self, node: ast.AST, ir_op: str, operands: List[Any], kwargs: List[AttrItem]) -> Any:
        """``ir_op`` on tiles; in kernel code tensors are loaded first, in orchestration code
        the operation on tensors is one task (:meth:`tensor_task`)."""
        if not self.in_kernel() and any(o.type.kind == "tensor" for o in operands):
            if self.ftype not in ("Orchestration", "Opaque", "Inline"):
                raise self.operr(node, f"{ir_op} on tensors in a {self.ftype} function", "")
            return self.tensor_task(node, ir_op, operands, kwargs)
        return self.op_call_ir(ir_op, [self.vector_operand(self.tile_of(o, node), node) for o in operands], kwargs, node)

    def vector_operand(self, e: Any, node: ast.AST) -> Any:
        """In a ``pl.at`` scope a matmul result is a tensor value to PyPTO: an accumulator
        tile a vector operation reads is moved to the vector buffer first (the crossing
        that ``SplitMixedScopes`` turns into a hand-over between a cube and a vector
        kernel)."""
        if not self.in_at or e.type.kind != "tile" or e.type.memory != "Acc":
            return e
        move = self.op_call_ir("tile.move", [self.atom(e, node)], [("target_memory", "memory", "Vec")], node)
        return self.atom(move, node, "acc_vec")

    def track_alias(self, v: Any, expr: Any) -> None:
        """Kernel bodies: a ``pl.store`` result writes the same parameter as its target.
        A name bound to a valid-shaped window is that window."""
        if expr.kind == "var" and expr.as_var is not None and expr.as_var.id in self.valid_slices:
            self.valid_slices.add(v.id)
        if expr.kind == "op_call":
            args = expr.call_args()
            target = args[2].as_var if len(args) == 3 else None
            if target is not None and target.type.kind == "tensor" and v.type.kind == "tensor":
                self.stored_into[v.id] = target
            if target is not None and target.id in self.param_roots:
                self.param_roots[v.id] = self.param_roots[target.id]
        elif expr.kind == "var" and expr.as_var is not None and expr.as_var.id in self.param_roots:
            self.param_roots[v.id] = self.param_roots[expr.as_var.id]

    def expr_stmt(self, s: ast.Expr) -> None:
        v = s.value
        if _is_pl_call(v, "dump_tag"):
            assert isinstance(v, ast.Call)
            self.dump_tag(v)
            return
        if _is_pl_call(v, "yield_"):
            raise self.syntax(
                v, "pl.yield_(...) must be the last statement of a loop or if body", "Move it to the end of the body."
            )
        if _is_pl_call(v, "submit"):
            raise self.syntax(
                v,
                "pl.submit(...) must be unpacked to exactly two targets",
                "Write: out, tid = pl.submit(self.kernel, ...)",
            )
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return  # a docstring
        if not isinstance(v, ast.Call):
            raise self.syntax(v, f"expression statement '{_unparse(v)}' has no effect", "Remove it or assign it.")
        expr = self.expr(v)
        self.emit(IrStmt.eval(expr, self.sp(s)))

    def dump_tag(self, call: ast.Call) -> None:
        if self.ftype not in ("Orchestration", "Inline"):
            raise self.syntax(call, "pl.dump_tag() is only valid inside an Orchestration or Inline function", _E1_HINT)
        if len(call.args) != 1 or call.keywords:
            raise self.syntax(
                call, "pl.dump_tag() takes exactly one positional argument (no keywords)", "Use: pl.dump_tag(tensor_var)"
            )
        arg = call.args[0]
        if not isinstance(arg, ast.Name):
            raise self.syntax(
                arg,
                "pl.dump_tag() argument must be a bare variable name",
                "Write pl.dump_tag(q) where q is a tensor variable bound in this orchestration scope. "
                "Attribute / subscript / call expressions are not supported.",
            )
        if arg.id not in self.names:
            raise self.syntax(
                arg,
                f"pl.dump_tag() argument '{arg.id}' is not defined at this point",
                "Tag a tensor only after it is bound (a parameter or an earlier assignment).",
            )
        v = self.names[arg.id]
        if not isinstance(v, IrVar) or v.type.kind != "tensor":
            cls = "Var" if isinstance(v, IrVar) else type(v).__name__
            raise self.typeerr(
                arg,
                f"pl.dump_tag() argument '{arg.id}' is not a tensor (got {cls})",
                "Only tensors can be selectively dumped.",
            )
        if not any(t == v for t in self.tagged):
            self.tagged.append(v)

    def return_stmt(self, s: ast.Return) -> None:
        values: List[Any] = []
        if s.value is not None:
            elts = s.value.elts if isinstance(s.value, ast.Tuple) else [s.value]
            values = [self.expr(e) for e in elts]
        if self.blocks and len(self.blocks) > 1:
            raise self.syntax(s, "return inside a loop, an if or a with block", "Return at the end of the function.")
        # A returned call (return pl.store(...), return self.k(...)) is bound first, so
        # every backend executes it as a statement.
        bound = []
        for i, v in enumerate(values):
            if v.kind in ("op_call", "fn_call", "submit"):
                if v.type.kind in ("unit", "tuple"):
                    raise self.typeerr(s, "return of a call without a single result", "Bind the results first.")
                tmp = IrVar(self.temp_name("ret"), v.type)
                self.track_alias(tmp, v)
                self.emit(IrStmt.assign([tmp], v, self.sp(s)))
                v = IrExpr.var(tmp)
            bound.append(v)
        values = bound
        self._ret_types = [v.type for v in values]
        self._ret_node = s
        self.emit(IrStmt.ret(values, self.sp(s)))

    def split_yield(self, body: List[ast.stmt]) -> Tuple[List[ast.stmt], Optional[ast.stmt]]:
        if body:
            last = body[-1]
            value = last.value if isinstance(last, (ast.Assign, ast.AnnAssign, ast.Expr)) else None
            if value is not None and _is_pl_call(value, "yield_"):
                return body[:-1], last
        return body, None

    def yield_parts(self, stmt: ast.stmt) -> Tuple[List[Any], Optional[List[ast.expr]]]:
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr)) else None
        assert isinstance(value, ast.Call)
        if value.keywords:
            raise self.syntax(value, "pl.yield_ takes no keywords", "Write pl.yield_(a, b).")
        vals = [self.atom(self.expr(a), a, "yield") for a in value.args]
        targets: Optional[List[ast.expr]] = None
        if isinstance(stmt, ast.AnnAssign):
            targets = [stmt.target]
            vals = [self.annotated_scalar(stmt.annotation, v, stmt) for v in vals]
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) != 1:
                raise self.syntax(stmt, "chained assignment of pl.yield_", "")
            t = stmt.targets[0]
            targets = list(t.elts) if isinstance(t, (ast.Tuple, ast.List)) else [t]
        return vals, targets

    def annotated_scalar(self, ann: ast.expr, v: Any, node: ast.AST) -> Any:
        """A yielded value under ``x: pl.Scalar[dtype] = pl.yield_(v)``: converted to the
        declared dtype (a tensor or tile must match its annotation)."""
        declared, _, _ = parse_annotation(ann, self.static, self.src, False)
        assert declared is not None  # a bare pl.Tensor is refused (allow_bare=False)
        if declared.kind == "scalar" and v.type.kind == "scalar" and declared != v.type:
            return self.atom(IrExpr.cast(v, str(declared.dtype)), node, "yield")
        if not _annotation_matches(ann, declared, v.type):
            raise self.typeerr(ann, f"the yield gives {_type_desc(v.type)}, the annotation says {_type_desc(declared)}", "")
        return v

    def pipeline_stage(self, it: ast.Call) -> None:
        """Checks ``stage=`` of ``pl.pipeline(..., stage=n)``: required, a positive integer
        literal (the loop itself runs as ``pl.range``)."""
        stage = next((kw.value for kw in it.keywords if kw.arg == "stage"), None)
        if stage is None:
            raise self.syntax(it, "pl.pipeline() requires stage=", "Write for i in pl.pipeline(n, stage=2).")
        n = self.static(stage)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise self.syntax(stage, f"pl.pipeline stage must be a positive integer, got {_unparse(stage)}", "Write stage=2 (or another positive literal).")

    def for_stmt(self, s: ast.For) -> None:
        # The names bound before the loop (not its loop variable nor its iter args).
        before_loop = dict(self.names)
        it = s.iter
        # pl.parallel(...) promises independent iterations; the task graph's dependencies
        # decide what runs at the same time, so it is a pl.range here (docs/DSL.md). So is
        # pl.pipeline(..., stage=n): its iterations run in order, unreplicated.
        kind = next((k for k in ("range", "parallel", "pipeline") if _is_pl_call(it, k)), None)
        if kind is None:
            raise self.syntax(
                it,
                "unsupported for loop: iterate over pl.range(...), pl.parallel(...) or pl.pipeline(...)",
                "Write for i in pl.range(n).",
            )
        assert isinstance(it, ast.Call)
        if s.orelse:
            raise self.syntax(s, "for ... else is not supported", "Remove the else clause.")
        if kind == "pipeline":
            self.pipeline_stage(it)
        inits: List[Any] = []
        init_node = None
        for kw in it.keywords:
            if kw.arg == "stage" and kind == "pipeline":
                continue
            if kw.arg == "init_values":
                init_node = kw.value
                if not isinstance(kw.value, (ast.Tuple, ast.List)):
                    raise self.syntax(kw.value, "init_values= must be a tuple", "Write init_values=(x,).")
                inits = [self.atom(self.expr(e), e, "init") for e in kw.value.elts]
            else:
                raise self.syntax(kw, f"pl.{kind}() got an unexpected keyword argument '{kw.arg}'", f"pl.{kind}(start, stop, step, init_values=(...)).")
        bounds = [self.scalar_expr(a) for a in it.args]
        if not 1 <= len(bounds) <= 3:
            raise self.syntax(it, "pl.range takes 1 to 3 positional arguments", "pl.range(stop) / (start, stop) / (start, stop, step).")
        if len(bounds) == 1:
            start, stop, step = IrExpr.const_int(0), bounds[0], IrExpr.const_int(1)
        elif len(bounds) == 2:
            start, stop, step = bounds[0], bounds[1], IrExpr.const_int(1)
        else:
            start, stop, step = bounds
        if step.const_value is not None and step.const_value <= 0:
            raise self.syntax(it, "pl.range step must be positive", "Use a positive step.")
        target = s.target
        iter_names: List[ast.expr] = []
        if isinstance(target, ast.Tuple):
            if len(target.elts) != 2 or not isinstance(target.elts[0], ast.Name):
                raise self.syntax(target, "for i, (a, b) in pl.range(..., init_values=(...))", "")
            inner = target.elts[1]
            iter_names = list(inner.elts) if isinstance(inner, (ast.Tuple, ast.List)) else [inner]
            loop_name = target.elts[0].id
        elif isinstance(target, ast.Name):
            loop_name = target.id
        else:
            raise self.syntax(target, "the loop variable must be a name", "")
        if len(iter_names) != len(inits):
            raise self.syntax(
                init_node or s, f"{len(iter_names)} loop-carried name(s) but {len(inits)} init value(s)", "Give one init value per name."
            )
        loop_var = IrVar(loop_name, IrType.scalar("INDEX"))
        self.names[loop_name] = loop_var
        iter_args = []
        for n, init in zip(iter_names, inits):
            if not isinstance(n, ast.Name):
                raise self.syntax(n, "loop-carried values must be names", "")
            v = IrVar(n.id, init.type)
            self.names[n.id] = v
            iter_args.append((v, init))
        body_nodes, yield_node = self.split_yield(s.body)
        if iter_args and yield_node is None:
            raise self.syntax(s, "a loop with init_values must end with pl.yield_(...)", "End the body with r = pl.yield_(value).")
        self.loop_depth += 1
        self.blocks.append([])
        try:
            for st in body_nodes:
                self.stmt(st)
            yields: List[Any] = []
            targets: Optional[List[ast.expr]] = None
            if yield_node is not None:
                yields, targets = self.yield_parts(yield_node)
        finally:
            body = self.blocks.pop()
            self.loop_depth -= 1
        if len(yields) != len(iter_args):
            raise self.syntax(yield_node or s, f"pl.yield_ gives {len(yields)} value(s) for {len(iter_args)} loop-carried name(s)", "")
        for (v, _), y in zip(iter_args, yields):
            if y.type != v.type:
                raise self.typeerr(
                    yield_node or s, f"loop-carried '{v.name}' is {_type_desc(v.type)}, the yield gives {_type_desc(y.type)}", ""
                )
        results: List[Any] = []
        if targets is not None:
            results = self.bind_targets(targets, [v.type for v, _ in iter_args], yield_node or s)
        elif iter_args:
            results = [IrVar(self.temp_name(f"{v.name}_rv"), v.type) for v, _ in iter_args]
        self.bind_stores_before_loop(before_loop, s)
        self.emit(IrStmt.for_loop(loop_var, start, stop, step, iter_args, body, yields, results, self.sp(s)))

    def bind_stores_before_loop(self, before: Dict[str, Any], node: ast.AST) -> None:
        """A name first bound in a loop body to a ``pl.store`` into a tensor of before the
        loop (``new = pl.store(t, offsets, out)``, then ``return new`` after the loop) names
        that tensor: it is bound to it before the loop too, so the loop carries it (PyPTO
        accepts the loop-local binding)."""
        known_ids = {v.id for v in before.values() if isinstance(v, IrVar)}
        for name, v in self.names.items():
            if name in before or not isinstance(v, IrVar) or v.id not in self.stored_into:
                continue
            target = self.stored_into[v.id]
            seen = 0
            while target.id not in known_ids and target.id in self.stored_into and seen < 10_000:
                target = self.stored_into[target.id]
                seen += 1
            if target.id in known_ids:
                pre = IrVar(name, v.type)
                self.track_alias(pre, IrExpr.var(target))
                self.emit(IrStmt.assign([pre], IrExpr.var(target), self.sp(node)))

    def if_stmt(self, s: ast.If) -> None:
        cond = self.scalar_expr(s.test)
        before = dict(self.names)
        then_nodes, then_yield = self.split_yield(s.body)
        else_nodes, else_yield = self.split_yield(s.orelse)
        if (then_yield is None) != (else_yield is None) and s.orelse:
            raise self.syntax(s, "both branches must end with pl.yield_ when one does", "")
        if then_yield is not None and not s.orelse:
            raise self.syntax(s, "an if with pl.yield_ needs an else branch", "")
        self.blocks.append([])
        try:
            for st in then_nodes:
                self.stmt(st)
            then_vals, then_targets = self.yield_parts(then_yield) if then_yield is not None else ([], None)
        finally:
            then_body = self.blocks.pop()
        after_then = dict(self.names)
        self.names = dict(before)
        self.blocks.append([])
        try:
            for st in else_nodes:
                self.stmt(st)
            else_vals, _ = self.yield_parts(else_yield) if else_yield is not None else ([], None)
        finally:
            else_body = self.blocks.pop()
        after_else = dict(self.names)
        merged = dict(before)
        for n, v in after_then.items():
            if before.get(n) is not v:
                merged[n] = v
        for n, v in after_else.items():
            if before.get(n) is not v:
                merged[n] = v
        self.names = merged
        if len(then_vals) != len(else_vals):
            raise self.syntax(s, "the branches yield different numbers of values", "")
        for a, b in zip(then_vals, else_vals):
            if a.type != b.type:
                raise self.typeerr(s, f"the branches yield {_type_desc(a.type)} and {_type_desc(b.type)}", "")
        results: List[Any] = []
        if then_targets is not None:
            results = self.bind_targets(then_targets, [v.type for v in then_vals], s)
        elif then_vals:
            results = [IrVar(self.temp_name("if_rv"), v.type) for v in then_vals]
        self.emit(IrStmt.if_else(cond, then_body, else_body, then_vals, else_vals, results, self.sp(s)))

    def with_stmt(self, s: ast.With) -> None:
        if len(s.items) != 1:
            raise self.syntax(s, "one context manager per with statement", "Nest the with statements.")
        item = s.items[0]
        ctx = item.context_expr
        if _is_pl_call(ctx, "manual_scope") or _is_pl_call(ctx, "scope"):
            assert isinstance(ctx, ast.Call)
            if _is_pl_call(ctx, "manual_scope"):
                if ctx.args or ctx.keywords:
                    raise self.syntax(
                        ctx,
                        "pl.manual_scope() does not accept arguments",
                        "Use 'with pl.manual_scope():' (or 'with pl.scope(mode=pl.ScopeMode.MANUAL):').",
                    )
            else:
                mode = None
                for kw in ctx.keywords:
                    if kw.arg == "mode":
                        mode = self.static(kw.value)
                    else:
                        raise self.syntax(kw, f"Unknown keyword argument '{kw.arg}' in pl.scope()", "Supported arguments: mode")
                if ctx.args or mode != S.ScopeMode.MANUAL:
                    raise self.syntax(
                        ctx,
                        "pl.scope() supports only mode=pl.ScopeMode.MANUAL (automatic scopes are implicit)",
                        "Write with pl.scope(mode=pl.ScopeMode.MANUAL): or with pl.manual_scope():",
                    )
            if item.optional_vars is not None:
                raise self.syntax(item.optional_vars, "a manual scope binds no name", "Remove 'as ...'.")
            if self.in_manual:
                raise self.syntax(ctx, "a manual scope cannot nest in another manual scope", "Remove the inner pl.manual_scope().")
            self.require_orchestration_level(ctx, "pl.manual_scope()")
            self.in_manual += 1
            try:
                body = self.block(s.body)
            finally:
                self.in_manual -= 1
            self.emit(IrStmt.scope("manual", None, [], body, None, [], self.sp(s)))
            return
        if _is_pl_call(ctx, "at"):
            assert isinstance(ctx, ast.Call)
            self.at_scope(s, ctx, item.optional_vars)
            return
        if _is_pl_call(ctx, "spmd") or _is_pl_call(ctx, "cluster"):
            assert isinstance(ctx, ast.Call)
            self.launch_scope(s, ctx, item.optional_vars)
            return
        raise self.syntax(ctx, f"unsupported with statement '{_unparse(ctx)}'", "Use pl.at(...), pl.manual_scope() or pl.scope(...).")

    def launch_scope(self, s: ast.With, ctx: ast.Call, as_var: Optional[ast.expr]) -> None:
        """``with pl.spmd(core_num=n, sync_start=False):`` — every kernel dispatch in the body
        runs as ``n`` blocks (``pl.tile.get_block_idx()`` tells each its index), all launched
        together with ``sync_start=True``. ``with pl.cluster():`` groups dispatches onto one
        core cluster in PyPTO; here the scheduler places every task, so the body is
        dispatched as written."""
        kind = "spmd" if _is_pl_call(ctx, "spmd") else "cluster"
        self.require_orchestration_level(ctx, f"pl.{kind}()")
        if as_var is not None:
            raise self.syntax(as_var, f"pl.{kind}() binds no name", "Remove 'as ...'.")
        saved = list(self.spmd)
        if kind == "cluster":
            if ctx.args or ctx.keywords:
                raise self.syntax(ctx, "pl.cluster() takes no arguments", "Write with pl.cluster():")
        else:
            b = self.bind_args(ctx, "spmd", ["core_num", "sync_start"], {"sync_start": None})
            n = self.static(b["core_num"])
            if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n < 2**15:
                raise self.syntax(b["core_num"], "pl.spmd core_num= must be a positive integer constant", "Write pl.spmd(core_num=4).")
            sync = self.static(b["sync_start"]) if "sync_start" in b else False
            if not isinstance(sync, bool):
                raise self.syntax(b["sync_start"], "pl.spmd sync_start= must be True or False", "")
            self.spmd = [("block_num", "int", n)] + ([("sync_start", "bool", True)] if sync else [])
        try:
            for st in s.body:
                self.stmt(st)
        finally:
            self.spmd = saved

    def require_orchestration_level(self, node: ast.AST, what: str) -> None:
        if self.ftype in ("InCore", "AIC", "AIV", "Group"):
            raise self.syntax(
                node,
                f"{what} inside a {self.ftype} kernel",
                "Scopes belong to Orchestration (or Inline / Opaque) functions.",
            )

    def at_scope(self, s: ast.With, ctx: ast.Call, as_var: Optional[ast.expr]) -> None:
        level = S.Level.CORE_GROUP
        deps: List[Any] = []
        dumps: List[Any] = []
        name_hint: Optional[str] = None
        early = False
        optimizations: List[AttrItem] = []
        if ctx.args:
            raise self.syntax(ctx.args[0], "pl.at() takes keyword arguments only", "Write pl.at(level=pl.Level.CORE_GROUP).")
        seen: Set[str] = set()
        for kw in ctx.keywords:
            if kw.arg not in _AT_KEYWORDS:
                raise self.syntax(kw, f"Unknown keyword argument '{kw.arg}' in pl.at()", "Supported arguments: " + ", ".join(_AT_KEYWORDS))
            if kw.arg in seen:
                raise self.syntax(kw, f"pl.at() got multiple values for argument '{kw.arg}'", "")
            seen.add(kw.arg)
            if kw.arg == "level":
                lv = self.static(kw.value)
                if not isinstance(lv, S.Level):
                    raise self.syntax(kw.value, "level= must be a pl.Level member", "Write level=pl.Level.CORE_GROUP.")
                level = lv
            elif kw.arg == "deps":
                deps = self.task_id_list(kw.value, "pl.at")
            elif kw.arg == "dumps":
                dumps = self.at_dumps(kw.value)
            elif kw.arg == "name_hint":
                nh = self.static(kw.value)
                if not isinstance(nh, str) or not nh.isidentifier():
                    raise self.syntax(kw.value, "name_hint= must be a string that is a valid identifier", "")
                name_hint = nh
            elif kw.arg == "allow_early_resolve":
                early = bool(self.static(kw.value))
            elif kw.arg == "optimizations":
                optimizations = self.at_optimizations(kw.value)
            else:
                raise self.syntax(
                    kw,
                    f"pl.at({kw.arg}=...) is not supported yet",
                    "Supported here: level, deps, dumps, name_hint, allow_early_resolve, optimizations.",
                )
        self.require_orchestration_level(ctx, "pl.at()")
        if self.in_at:
            raise self.syntax(ctx, "a pl.at scope inside another pl.at scope", "Scopes of one kernel do not nest.")
        # Forward-sticky merge: explicit entries first, then the tags not already listed.
        # A tag on a value rebound since (q = self.foo(q)) is left out: no later scope can
        # capture that value, so the outliner would drop it anyway.
        merged = list(dumps)
        for t in self.tagged:
            current = self.names.get(t.name)
            if isinstance(current, IrVar) and current == t and not any(t == d for d in merged):
                merged.append(t)
        attrs: List[AttrItem] = []
        if merged:
            attrs.append(("dump_vars", "vars", merged))
        if name_hint is not None:
            attrs.append(("name_hint", "str", name_hint))
        attrs.extend(optimizations)
        self.in_at += 1
        try:
            body = self.block(s.body)
        finally:
            self.in_at -= 1
        task_id = None
        if as_var is not None:
            if not isinstance(as_var, ast.Name):
                raise self.syntax(as_var, "'as' needs a name", "Write with pl.at(...) as tid:")
            task_id = IrVar(as_var.id, IrType.task_id())
            self.names[as_var.id] = task_id
        elif early or deps:
            task_id = IrVar(self.temp_name("at_tid"), IrType.task_id())
        self.emit(IrStmt.scope("at", level.name, attrs, body, task_id, deps, self.sp(s)))

    def at_optimizations(self, node: ast.expr) -> List[AttrItem]:
        """``optimizations=[pl.split(pl.SplitMode.X), pl.cross_core_slot(slot_num=n)]``: the
        scope's split mode and cross-core slot count, kept as attributes (``split``,
        ``slot_num``); a scope holding cube and vector work is split in two either way."""
        if not isinstance(node, (ast.List, ast.Tuple)):
            raise self.syntax(node, "optimizations= must be a list", "Write optimizations=[pl.split(pl.SplitMode.UP_DOWN)].")
        attrs: List[AttrItem] = []
        for item in node.elts:
            if _is_pl_call(item, "split"):
                assert isinstance(item, ast.Call)
                b = self.bind_args(item, "split", ["mode", "slot_num"], {"slot_num": None})
                mode = self.static_enum(b["mode"], S.SplitMode, "mode")
                attrs.append(("split", "str", mode.name))
                if "slot_num" in b:
                    attrs.append(("slot_num", "int", self.slot_num(b["slot_num"])))
            elif _is_pl_call(item, "cross_core_slot"):
                assert isinstance(item, ast.Call)
                b = self.bind_args(item, "cross_core_slot", ["slot_num"], {})
                attrs.append(("slot_num", "int", self.slot_num(b["slot_num"])))
            else:
                raise self.syntax(
                    item,
                    f"'{_unparse(item)}' is not a supported pl.at optimization",
                    "Supported: pl.split(pl.SplitMode.UP_DOWN | LEFT_RIGHT | NONE), pl.cross_core_slot(slot_num=n).",
                )
        return attrs

    def slot_num(self, node: ast.expr) -> int:
        n = self.static(node)
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            raise self.syntax(node, f"slot_num must be a positive integer, got {_unparse(node)}", "Write slot_num=4.")
        return n

    def at_dumps(self, node: ast.expr) -> List[Any]:
        if not isinstance(node, (ast.List, ast.Tuple)):
            raise self.typeerr(
                node,
                "pl.at(dumps=...) must be a list literal of tensor names",
                "Use `dumps=[t1, t2]` with bare tensor names visible to the enclosing function.",
            )
        out: List[Any] = []
        for elt in node.elts:
            if not isinstance(elt, ast.Name):
                raise self.typeerr(
                    elt,
                    "pl.at(dumps=[...]) entries must be bare tensor names",
                    "Use `dumps=[t]` where `t` is a tensor variable visible to the enclosing function scope.",
                )
            if elt.id not in self.names:
                raise self.typeerr(
                    elt,
                    f"pl.at(dumps=[...]) references unknown name '{elt.id}'",
                    "Each entry must resolve to a tensor visible in the enclosing function scope.",
                )
            v = self.names[elt.id]
            if not isinstance(v, IrVar) or v.type.kind != "tensor":
                t = _type_desc(v.type) if isinstance(v, IrVar) else type(v).__name__
                raise self.typeerr(
                    elt,
                    f"pl.at(dumps=[...]) entry '{elt.id}' is not a tensor (got type {t})",
                    "Only tensors can be selectively dumped.",
                )
            if any(v == o for o in out):
                raise self.typeerr(
                    elt,
                    f"pl.at(dumps=[...]) lists '{elt.id}' more than once",
                    "Each tensor may appear at most once in `dumps=`.",
                )
            out.append(v)
        return out

    def task_id_list(self, node: ast.expr, what: str) -> List[Any]:
        if not isinstance(node, (ast.List, ast.Tuple)):
            raise self.typeerr(node, f"{what} deps= must be a list of task ids", "Write deps=[tid].")
        out = []
        for elt in node.elts:
            e = self.atom(self.expr(elt), elt)
            is_tid_array = e.type.kind == "array" and e.type.elem is not None and e.type.elem.kind == "task_id"
            if (e.type.kind != "task_id" and not is_tid_array) or e.as_var is None:
                raise self.typeerr(
                    elt, f"{what} deps= entries must be task ids, got '{_unparse(elt)}'", "Use the tid of out, tid = pl.submit(...)."
                )
            out.append(e)
        return out

    # ---- calls of program functions ----------------------------------------------------

    def callee_signature(self, name: str, node: ast.AST, arg_types: List[Any]) -> Tuple[str, List[Any], List[Any], Any]:
        decl = self.prog.decls.get(name)
        if decl is None:
            raise self.syntax(
                node,
                f"Function '{name}' is not defined in program {self.prog.name}",
                "Call a @pl.function method of the same program: self.name(...).",
            )
        if decl.generic:
            final, params, rets = self.prog.specialise(name, arg_types, node, self.src)
        else:
            params, rets = self.prog.signature(name)
            final = name
        return final, params, rets, decl

    def fn_call(
        self,
        node: ast.Call,
        name: str,
        args_nodes: List[ast.expr],
        keywords: List[ast.keyword],
        submit: bool,
    ) -> Tuple[Any, List[Any]]:
        explicit_dumps: List[Any] = []
        deps: List[Any] = []
        extra_attrs: List[AttrItem] = []
        device: List[AttrItem] = []
        attrs_node = None
        for kw in keywords:
            if kw.arg is None:
                raise self.syntax(kw, "**kwargs in a call", "")
            if kw.arg == "device" and not submit:
                device.append(_distributed.device_attr(self, kw, name))
            elif kw.arg == "attrs":
                attrs_node = kw.value
            elif submit and kw.arg == "deps":
                deps = self.task_id_list(kw.value, f"'{name}'")
            elif submit and kw.arg == "dumps":
                explicit_dumps = []  # parsed below, after the arguments
            elif submit and kw.arg in ("allow_early_resolve", "predicate"):
                raise self.syntax(kw, f"pl.submit({kw.arg}=...) is not supported yet", "")
            elif not submit and kw.arg == "dumps":
                raise self.typeerr(
                    kw,
                    f"Function '{name}' does not accept keyword argument 'dumps'",
                    "dumps= is only valid on pl.submit(...) / pl.at(...). For a plain self.kernel(...) call, "
                    "declare the dump target with a `pl.dump_tag(x)` statement before the call instead.",
                )
            elif not submit and kw.arg == "deps":
                raise self.typeerr(
                    kw,
                    f"Function '{name}' does not accept keyword argument 'deps'",
                    "Plain self.kernel(...) is fire-and-forget. To attach dependency edges, submit it: "
                    "`out, tid = pl.submit(self.kernel, ..., deps=[...])`.",
                )
            else:
                raise self.typeerr(
                    kw,
                    f"Function '{name}' does not accept keyword argument '{kw.arg}'",
                    "Pass arguments positionally; pl.submit accepts deps= and dumps=.",
                )
        for a in args_nodes:
            if isinstance(a, ast.Starred):
                raise self.syntax(a, "*args in a call", "Pass arguments one by one.")
        args = [self.atom(self.expr(a), a, "arg") for a in args_nodes]
        args.extend(_distributed.ctx_args(self, name, args, node))
        final, ptypes, rets, decl = self.callee_signature(name, node, [a.type for a in args])
        n_params = len(ptypes)
        omit_ok = submit and len(args) < n_params and all(p.direction == "Out" for p in decl.params[len(args):])
        if len(args) != n_params and not omit_ok:
            raise self.typeerr(
                node,
                f"'{name}' takes {n_params} argument(s), got {len(args)}",
                "Pass one argument per parameter (pl.submit may omit trailing pl.Out parameters).",
            )
        for i, (a, pt) in enumerate(zip(args, ptypes)):
            ok = (a.type.kind == "scalar" and pt.kind == "scalar") or a.type == pt or _tensor_admits(pt, a.type)
            if not ok:
                raise self.typeerr(
                    args_nodes[i],
                    f"argument {i + 1} of '{name}' is {_type_desc(a.type)}, parameter '{decl.params[i].name}' is {_type_desc(pt)}",
                    "Pass a value of the parameter's type (slice or reshape tensors first).",
                )
        if submit:
            for kw in keywords:
                if kw.arg == "dumps":
                    explicit_dumps = self.submit_dumps(kw.value, name, args)
        if attrs_node is not None:
            round_trip, extra_attrs = self.attrs_dict(attrs_node, name, args)
            for v in round_trip:
                if not any(v == d for d in explicit_dumps):
                    explicit_dumps.append(v)
        dump_vars: List[Any] = []
        for a in args:
            v = a.as_var
            if v is None or v.type.kind != "tensor":
                continue
            tagged = any(v == t for t in self.tagged)
            listed = any(v == d for d in explicit_dumps)
            if (tagged or listed) and not any(v == d for d in dump_vars):
                dump_vars.append(v)
        attrs: List[AttrItem] = []
        if dump_vars:
            attrs.append(("dump_vars", "vars", dump_vars))
        attrs.extend(extra_attrs)
        attrs.extend(device)
        attrs.extend(a for a in self.spmd if not any(a[0] == e[0] for e in extra_attrs))
        if submit:
            items = list(rets) + [IrType.task_id()]
            ret_type = IrType.tuple_of(items)
        elif not rets:
            ret_type = IrType.unit()
        elif len(rets) == 1:
            ret_type = rets[0]
        else:
            ret_type = IrType.tuple_of(list(rets))
        expr = IrExpr.fn_call(final, args, attrs, ret_type, self.sp(node), deps if submit else None)
        return expr, list(rets)

    def submit_dumps(self, node: ast.expr, name: str, args: List[Any]) -> List[Any]:
        if not isinstance(node, (ast.List, ast.Tuple)):
            raise self.typeerr(
                node, f"'{name}' dumps= must be a list / tuple of tensor arguments", "Write dumps=[x, y] listing tensors passed to this submit."
            )
        out: List[Any] = []
        for elt in node.elts:
            v = self.names.get(elt.id) if isinstance(elt, ast.Name) else None
            if not isinstance(v, IrVar) or v.type.kind != "tensor":
                raise self.typeerr(
                    elt,
                    f"'{name}' dumps= entries must be tensor variables — got '{_unparse(elt)}'",
                    "List tensors passed to this submit, e.g. dumps=[x].",
                )
            if not any(a.as_var is not None and a.as_var == v for a in args):
                raise self.typeerr(
                    elt,
                    f"'{name}' dumps= entry '{_unparse(elt)}' is not an argument of this submit",
                    "dumps= may only name tensors passed positionally to the submitted kernel.",
                )
            if not any(v == o for o in out):
                out.append(v)
        return out

    def attrs_dict(self, node: ast.expr, name: str, args: List[Any]) -> Tuple[List[Any], List[AttrItem]]:
        """The machine round-trip spelling ``attrs={"dump_vars": [...], ...}``."""
        if not isinstance(node, ast.Dict):
            raise self.typeerr(node, f"attrs= on call to '{name}' must be a dict literal", "")
        dump: List[Any] = []
        extra: List[AttrItem] = []
        for k, v in zip(node.keys, node.values):
            if not isinstance(k, ast.Constant) or not isinstance(k.value, str):
                raise self.typeerr(node, f"attrs= keys on call to '{name}' must be strings", "")
            key = k.value
            if key == "dump_vars":
                if not isinstance(v, (ast.List, ast.Tuple)):
                    raise self.typeerr(v, f"attrs['dump_vars'] on call to '{name}' must be a list literal", "")
                for elt in v.elts:
                    var = self.names.get(elt.id) if isinstance(elt, ast.Name) else None
                    if not isinstance(var, IrVar) or var.type.kind != "tensor":
                        raise self.typeerr(
                            elt, f"attrs['dump_vars'] entries on call to '{name}' must be tensor variables — got '{_unparse(elt)}'", ""
                        )
                    if not any(a.as_var is not None and a.as_var == var for a in args):
                        raise self.typeerr(
                            elt, f"attrs['dump_vars'] entry '{_unparse(elt)}' is not an argument of call to '{name}'", ""
                        )
                    dump.append(var)
            else:
                value = self.static(v)
                if isinstance(value, list) and all(isinstance(x, str) for x in value):
                    extra.append((key, "strs", value))
                elif isinstance(value, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in value):
                    extra.append((key, "ints", value))
                elif isinstance(value, bool):
                    extra.append((key, "bool", value))
                elif isinstance(value, int):
                    extra.append((key, "int", value))
                elif isinstance(value, float):
                    extra.append((key, "float", value))
                elif isinstance(value, str):
                    extra.append((key, "str", value))
                else:
                    raise self.typeerr(v, f"attrs['{key}'] on call to '{name}' has an unsupported value", "")
        return dump, extra

    def submit(self, call: ast.Call, target: ast.expr) -> Tuple[Any, List[Any]]:
        if not isinstance(target, (ast.Tuple, ast.List)) or len(target.elts) != 2:
            raise self.syntax(
                call,
                "pl.submit(...) must be unpacked to exactly two targets",
                "Write: out, tid = pl.submit(self.kernel, ...) (or (a, b), tid = ... for several outputs).",
            )
        self.require_orchestration_level(call, "pl.submit()")
        if not call.args or _self_attr(call.args[0]) is None:
            raise self.syntax(
                call, "the first argument of pl.submit must be self.<kernel>", "Write pl.submit(self.kernel, a, b)."
            )
        name = str(_self_attr(call.args[0]))
        expr, rets = self.fn_call(call, name, list(call.args[1:]), list(call.keywords), True)
        if not rets:
            raise self.typeerr(call, f"'{name}' returns nothing to bind", "Submit a kernel that returns its output tensor(s).")
        items = list(expr.type.items)
        outs = target.elts[0]
        n_out_targets = len(outs.elts) if isinstance(outs, (ast.Tuple, ast.List)) else 1
        if n_out_targets != len(rets):
            raise self.syntax(
                target, f"'{name}' returns {len(rets)} value(s), {n_out_targets} bound", "Bind one name per kernel output."
            )
        return expr, items

    # ---- expressions ------------------------------------------------------------------

    def atom(self, e: Any, node: ast.AST, hint: str = "tmp") -> Any:
        """A call used as an operand is bound to a fresh variable first (one operation per
        statement, as every backend expects)."""
        if e.kind in ("op_call", "fn_call", "submit"):
            if e.type.kind in ("unit", "tuple"):
                raise self.typeerr(node, f"'{_unparse(node)}' has no single value to use here", "Bind its results first.")
            tmp = IrVar(self.temp_name(hint), e.type)
            self.track_alias(tmp, e)
            self.emit(IrStmt.assign([tmp], e, self.sp(node)))
            return IrExpr.var(tmp)
        return e

    def scalar_expr(self, node: ast.expr) -> Any:
        e = self.atom(self.expr(node), node)
        if e.type.kind != "scalar":
            raise self.typeerr(node, f"expected a scalar, got {_type_desc(e.type)}", "Use a number or a pl.Scalar value.")
        return e

    def const(self, value: Any, node: ast.AST) -> Any:
        if isinstance(value, bool):
            return IrExpr.const_bool(value)
        if isinstance(value, int):
            if not -(2**63) <= value < 2**63:
                raise self.syntax(node, f"integer {value} does not fit 64 bits", "")
            return IrExpr.const_int(value)
        if isinstance(value, float):
            return IrExpr.const_float(value)
        raise self.syntax(node, f"unsupported constant {value!r}", "Use numbers.")

    def expr(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return self.const(node.value, node)
        if isinstance(node, ast.Name):
            v = self.lookup(node)
            if isinstance(v, IrVar):
                return IrExpr.var(v)
            return self.const(v, node)
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.UnaryOp):
            if (
                isinstance(node.op, ast.USub)
                and isinstance(node.operand, ast.Constant)
                and isinstance(node.operand.value, (int, float))
                and not isinstance(node.operand.value, bool)
            ):
                return self.const(-node.operand.value, node)
            operand = self.atom(self.expr(node.operand), node.operand)
            if isinstance(node.op, ast.USub):
                if operand.type.kind == "tile":
                    return self.op_call_ir("tile.neg", [operand], [], node)
                return self.wrap_scalar(lambda: IrExpr.unary("neg", operand), node)
            if isinstance(node.op, ast.Not):
                return self.wrap_scalar(lambda: IrExpr.unary("not", operand), node)
            if isinstance(node.op, ast.UAdd):
                return operand
            raise self.syntax(node, "unsupported unary operator", "")
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise self.syntax(node, "chained comparisons are not supported", "Write (a < b) and (b < c).")
            sym = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}.get(type(node.ops[0]))
            if sym is None:
                raise self.syntax(node, "unsupported comparison", "Use <, <=, >, >=, == or !=.")
            a = self.atom(self.expr(node.left), node.left)
            b = self.atom(self.expr(node.comparators[0]), node.comparators[0])
            return self.wrap_scalar(lambda: IrExpr.binary(sym, a, b), node)
        if isinstance(node, ast.BoolOp):
            op = "and" if isinstance(node.op, ast.And) else "or"
            acc = self.atom(self.expr(node.values[0]), node.values[0])
            for v in node.values[1:]:
                rhs = self.atom(self.expr(v), v)
                lhs = acc
                acc = self.wrap_scalar(lambda: IrExpr.binary(op, lhs, rhs), node)
            return acc
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, (ast.List, ast.Tuple)):
            return IrExpr.list_of([self.scalar_expr(e) for e in node.elts])
        path = _pl_path(node)
        if path is not None:
            raise self.syntax(node, f"'pl.{path}' is not a value here", "pl constants are used as operation arguments.")
        raise self.syntax(node, f"unsupported expression '{_unparse(node)}'", "")

    def wrap_scalar(self, make: Callable[[], Any], node: ast.AST) -> Any:
        try:
            return make()
        except ValueError as e:
            raise self.typeerr(node, str(e.args[0]) if e.args else str(e), "Scalar operators take scalars; use pl.add & co. on tiles.") from None

    def binop(self, node: ast.BinOp) -> Any:
        a = self.tile_of(self.atom(self.expr(node.left), node.left), node.left)
        b = self.tile_of(self.atom(self.expr(node.right), node.right), node.right)
        sym = {
            ast.Add: "+",
            ast.Sub: "-",
            ast.Mult: "*",
            ast.Div: "/",
            ast.FloorDiv: "//",
            ast.Mod: "%",
        }.get(type(node.op))
        if sym is None:
            raise self.syntax(node, "unsupported operator", "Use + - * / // %.")
        folded = _fold_ints(sym, a, b)
        if folded is not None:
            return folded
        if a.type.kind == "tile" or b.type.kind == "tile":
            name = _ops.INFIX.get(sym)
            if name is None or a.type.kind != "tile":
                raise self.operr(node, f"operator '{sym}' is not defined for these tile operands", "Use pl.add / pl.sub / pl.mul / pl.div.")
            pair = _BINARY[name]
            op = pair[0] if b.type.kind == "tile" else pair[1]
            return self.op_call_ir(op, [a, b], [], node)
        if a.type.kind == "tensor" or b.type.kind == "tensor":
            raise self.operr(
                node,
                f"operator '{sym}' on tensors needs the tensor-to-tile lowering, which is not supported yet",
                "Inside a kernel or a pl.at scope, pl.load the tensors into tiles, compute on the tiles and pl.store the result.",
            )
        return self.wrap_scalar(lambda: IrExpr.binary(sym, a, b), node)

    def subscript(self, node: ast.Subscript) -> Any:
        base = self.expr(node.value)
        if base.type.kind == "tuple":
            idx = self.static(node.slice)
            if not isinstance(idx, int) or not 0 <= idx < len(base.type.items):
                raise self.syntax(node.slice, "tuple index out of range", "")
            return IrExpr.get_item(base, idx)
        if base.type.kind == "array":
            if isinstance(node.slice, (ast.Slice, ast.Tuple)):
                raise self.typeerr(node, "arrays take one index: arr[i]", "Arrays are one-dimensional.")
            return self.op_call_ir("array.get_element", [base, self.scalar_expr(node.slice)], [], node)
        if base.type.kind not in ("tensor", "tile"):
            raise self.typeerr(node, f"cannot subscript a {_type_desc(base.type)}", "Slice tensors: t[0:16, :].")
        if _distributed.is_host(self):
            return _distributed.host_subscript(self, node, base)
        shape = list(base.type.shape or [])
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) > len(shape):
            raise self.typeerr(node, f"{len(items)} indices for a rank-{len(shape)} tensor", "")
        offsets: List[Any] = []
        sizes: List[int] = []
        for d, dim in enumerate(shape):
            if d >= len(items):
                offsets.append(IrExpr.const_int(0))
                sizes.append(dim)
                continue
            it = items[d]
            if not isinstance(it, ast.Slice):
                raise self.typeerr(
                    it,
                    "tensor indexing with a single index is not supported; slice instead (t[i:i+1, ...]) or use pl.read(t, [i, j])",
                    "Slices keep the rank: t[i:i + 16, :].",
                )
            if it.step is not None:
                raise self.syntax(it.step, "slices with a step are not supported", "")
            lower = it.lower
            upper = it.upper
            lo = self.expr(lower) if lower is not None else IrExpr.const_int(0)
            size: Optional[int] = None
            try:
                lo_static = self.static(lower) if lower is not None else 0
            except ParserError:
                lo_static = None
            if upper is None:
                if isinstance(lo_static, int):
                    size = dim - lo_static
            else:
                try:
                    up_static = self.static(upper)
                except ParserError:
                    up_static = None
                if isinstance(up_static, int) and isinstance(lo_static, int):
                    size = up_static - lo_static
                else:
                    size = self.static_difference(upper, lower)
            if size is None or size <= 0:
                raise self.typeerr(
                    it,
                    f"the slice '{_unparse(it)}' has no static positive size",
                    "Write bounds whose difference is a constant: start:start + N, or (i + 1) * N with i * N.",
                )
            offsets.append(lo)
            sizes.append(size)
        # A window of a tile is copied out (pl.slice of a tile, TEXTRACT).
        op = "tile.slice" if base.type.kind == "tile" else "tensor.slice"
        return self.op_call_ir(op, [base, IrExpr.list_of(offsets)], [("shape", "ints", sizes)], node)

    def static_difference(self, upper: ast.expr, lower: Optional[ast.expr]) -> Optional[int]:
        """``upper - lower`` when it is a constant though the bounds are not (``i * 64 + 64``
        and ``i * 64``, ``(k + 1) * D`` and ``k * D``): both read as integer sums of terms
        times constants; ``None`` when the terms do not cancel."""
        hi = self.linear(upper)
        lo = self.linear(lower) if lower is not None else ({}, 0)
        terms = dict(hi[0])
        for key, c in lo[0].items():
            terms[key] = terms.get(key, 0) - c
        return hi[1] - lo[1] if not any(terms.values()) else None

    def linear(self, node: ast.expr) -> Tuple[Dict[str, int], int]:
        """``node`` as ``(terms, constant)``: each non-constant sub-expression (by its AST)
        with its integer coefficient, for ``+``, ``-``, unary ``-`` and ``*`` by a constant;
        any other sub-expression (``n * n``, a call) is one opaque term."""
        try:
            c = self.static(node)
        except ParserError:
            c = None
        if isinstance(c, int) and not isinstance(c, bool):
            return {}, c
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            terms, k = self.linear(node.operand)
            return {key: -v for key, v in terms.items()}, -k
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            a, b = self.linear(node.left), self.linear(node.right)
            if isinstance(node.op, ast.Mult):
                if a[0] and b[0]:
                    return {ast.dump(node): 1}, 0
                (terms, k), f = (a, b[1]) if not b[0] else (b, a[1])
                return {key: v * f for key, v in terms.items()}, k * f
            sign = 1 if isinstance(node.op, ast.Add) else -1
            terms = dict(a[0])
            for key, v in b[0].items():
                terms[key] = terms.get(key, 0) + sign * v
            return terms, a[1] + sign * b[1]
        return {ast.dump(node): 1}, 0

    def op_call_ir(self, name: str, args: List[Any], kwargs: List[AttrItem], node: ast.AST) -> Any:
        level = "tile" if name.startswith("tile.") else "tensor"
        args = [self.atom(a, node) for a in args]
        shown = _unparse(node.func) if isinstance(node, ast.Call) else f"pl.{name}"
        if level == "tile" and self.ftype in ("Orchestration", "Opaque") and not self.in_at:
            raise self.operr(
                node,
                f"tile operation {shown} in orchestration code",
                "Tile operations run on a core: write them in an InCore / AIV / AIC function or inside "
                "with pl.at(level=pl.Level.CORE_GROUP):.",
            )
        if level == "tensor" and not name.startswith("tensor.") and self.in_kernel():
            raise self.operr(
                node,
                f"{shown} inside a kernel: arrays and pl.system operations belong to the orchestration",
                "Build task-id arrays and barriers in the orchestration (around pl.submit); kernels work on tiles.",
            )
        if name == "tensor.write" and self.in_at:
            raise self.operr(
                node,
                f"{shown} inside a pl.at scope is not supported yet",
                "Write the element in an InCore kernel function whose parameter is pl.Out[...] / pl.InOut[...], "
                "or in the orchestration.",
            )
        if level == "tensor" and name not in _KERNEL_TENSOR_OPS and (self.ftype in ("InCore", "AIC", "AIV", "Group") or self.in_at):
            raise self.operr(
                node,
                f"tensor operation {shown} inside a kernel",
                "Kernels work on tiles: pl.load / pl.store; tensor operations belong to the orchestration.",
            )
        try:
            expr = IrExpr.op_call(name, args, kwargs, self.sp(node))
        except ValueError as e:
            msg = str(e.args[0]) if e.args else str(e)
            hint = str(e.args[1]) if len(e.args) > 1 else None
            raise self.operr(node, msg, hint) from None
        if name in ("tile.store", "tensor.write"):
            target = args[2 if name == "tile.store" else 0].as_var
            if target is not None and self.param_roots.get(target.id) == "In" and self.ftype in ("InCore", "AIC", "AIV", "Group"):
                raise self.typeerr(
                    node,
                    f"{shown} writes '{target.name}', an In parameter of kernel '{self.decl.name}'",
                    f"Declare it pl.Out[...] (written only) or pl.InOut[...] (read and written).",
                )
        return expr

    def bind_args(
        self, node: ast.Call, op: str, spec: Sequence[str], defaults: Dict[str, Any]
    ) -> Dict[str, ast.expr]:
        out: Dict[str, ast.expr] = {}
        if len(node.args) > len(spec):
            raise self.operr(node, f"pl.{op}() takes at most {len(spec)} positional arguments, got {len(node.args)}", f"pl.{op}({', '.join(spec)})")
        for name, a in zip(spec, node.args):
            out[name] = a
        for kw in node.keywords:
            if kw.arg is None or kw.arg not in spec:
                raise self.operr(kw, f"pl.{op}() got an unexpected keyword argument '{kw.arg}'", f"pl.{op}({', '.join(spec)})")
            if kw.arg in out:
                raise self.operr(kw, f"pl.{op}() got multiple values for argument '{kw.arg}'", "")
            out[kw.arg] = kw.value
        for name in spec:
            if name not in out and name not in defaults:
                raise self.operr(node, f"pl.{op}() missing required argument '{name}'", f"pl.{op}({', '.join(spec)})")
        return out

    def offsets(self, node: ast.expr, what: str = "offsets") -> Any:
        return IrExpr.list_of(self.offset_items(node, what))

    def offset_items(self, node: ast.expr, what: str = "offsets") -> List[Any]:
        if not isinstance(node, (ast.List, ast.Tuple)):
            raise self.operr(node, f"{what} must be a list literal, e.g. [0, 0]", "Write [row, col].")
        return [self.scalar_expr(e) for e in node.elts]

    def shape_sizes(self, node: ast.expr) -> Tuple[List[int], List[Any]]:
        """A tensor shape that may hold runtime sizes (``[q_tile, head_dim_cfg]`` with
        ``head_dim_cfg`` read from a tensor): the static sizes with ``-1`` for each runtime
        one, and ``[list of every size]`` as the operation's extra argument when one is
        dynamic (else ``[]``)."""
        if not isinstance(node, (ast.List, ast.Tuple)):
            return self.static_ints(node, "shape"), []
        static: List[int] = []
        exprs: List[Any] = []
        for e in node.elts:
            v = self.scalar_expr(e)
            c = v.const_value
            if c is not None:
                if c <= 0:
                    raise self.operr(e, f"shape entries must be positive, got {c}", "Give positive sizes.")
                static.append(int(c))
            else:
                if v.type.dtype not in _INTEGER_MEMBERS:
                    raise self.operr(e, f"a runtime size must be an integer, got {_type_desc(v.type)}", "Use an integer scalar.")
                static.append(_DYNAMIC_DIM)
            exprs.append(v)
        if _DYNAMIC_DIM not in static:
            return static, []
        return static, [IrExpr.list_of(exprs)]

    def static_ints(self, node: ast.expr, what: str) -> List[int]:
        v = self.static(node)
        if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            raise self.operr(node, f"{what} must be a list of integer literals", "Shapes are static: [16, 16].")
        return [int(x) for x in v]

    def static_enum(self, node: ast.expr, cls: type, what: str) -> Any:
        v = self.static(node)
        if not isinstance(v, cls):
            raise self.operr(node, f"{what} must be a pl.{cls.__name__} member, got '{_unparse(node)}'", "")
        return v

    def call(self, node: ast.Call) -> Any:
        callee = _self_attr(node.func)
        if callee is not None:
            expr, _ = self.fn_call(node, callee, list(node.args), list(node.keywords), False)
            return expr
        path = _pl_path(node.func)
        if path is not None:
            return self.pl_call(node, path)
        if isinstance(node.func, ast.Name):
            fname = node.func.id
            if fname in ("min", "max") and len(node.args) == 2 and not node.keywords:
                a = self.atom(self.expr(node.args[0]), node.args[0])
                b = self.atom(self.expr(node.args[1]), node.args[1])
                return self.wrap_scalar(lambda: IrExpr.binary(fname, a, b), node)
            ext = self.decl.globals.get(fname) if fname not in self.names else None
            if ext is not None and callable(ext) and hasattr(ext, "__pypto_function_type__") and not self.prog.jit:
                self.prog.add_external(fname, ext, node, self.src)
            if fname in self.prog.decls and not self.prog.decls[fname].is_method:
                expr, _ = self.fn_call(node, fname, list(node.args), list(node.keywords), False)
                return expr
        raise self.syntax(
            node,
            f"unsupported call '{_unparse(node.func)}'",
            "Call pl.* operations, self.<function>(...) or min / max.",
        )

    def pl_call(self, node: ast.Call, path: str) -> Any:
        if path.startswith(_distributed.PREFIX):
            return _distributed.call(self, node, path[len(_distributed.PREFIX) :])
        if path == "dump_tag":
            raise self.operr(node, "Unknown operation 'pl.dump_tag'", _UNKNOWN_OP_HINT)
        if path == "submit":
            raise self.syntax(node, "pl.submit(...) must be unpacked to exactly two targets", "Write: out, tid = pl.submit(self.kernel, ...)")
        if path == "yield_":
            raise self.syntax(node, "pl.yield_(...) must be the last statement of a loop or if body", "")
        if path in ("range", "parallel"):
            raise self.syntax(node, f"pl.{path}(...) is only valid as the iterable of a for loop", "")
        if path in ("at", "manual_scope", "scope"):
            raise self.syntax(node, f"pl.{path}(...) is only valid in a with statement", f"Write with pl.{path}(...):")
        if path == "const":
            b = self.bind_args(node, "const", ["value", "dtype"], {})
            value = self.static(b["value"])
            dt = self.static(b["dtype"])
            if not isinstance(dt, S.DataType) or not isinstance(value, (int, float)) or isinstance(value, bool):
                raise self.operr(node, "pl.const(value, dtype) takes a number and a pl dtype", "")
            if isinstance(value, float) or dt.name in ("FP32", "FP16", "BF16"):
                return IrExpr.const_float(float(value), dt.name)
            return IrExpr.const_int(int(value), dt.name)
        head, _, rest = path.partition(".")
        if head in ("array", "system") and rest:
            return self.array_or_system_op(node, path)
        if path == "tensor.dim":
            return self.tensor_dim(node)
        if head in ("tile", "tensor") and rest:
            return self.explicit_op(node, head, rest)
        if head in _HEADER_LACKS and not rest:
            raise self.operr(
                node,
                f"pl.{head} is not supported yet: the PTO-ISA header has no {_HEADER_LACKS[head]} implementation (docs/PTO_ISA.md)",
                "Express it with supported operations (see docs/DSL.md), or add the instruction to the header first.",
            )
        if head in _NOT_IN_SUBSET and not rest:
            raise self.operr(
                node,
                f"pl.{head} is not supported by this DSL subset yet",
                "See docs/DSL.md for the supported operations.",
            )
        if rest:
            raise self.operr(node, f"Unknown operation 'pl.{path}'", _UNKNOWN_OP_HINT)
        return self.unified_op(node, head)

    def write_element(self, node: ast.Call) -> Any:
        """``pl.write(t, [i, j], value)`` (or ``pl.write(t, i, value)`` for a vector): one
        element of a tensor set in place from a scalar of its dtype (a number literal is
        taken as that dtype); the result is the tensor."""
        b = self.bind_args(node, "write", ["tensor", "indices", "value"], {})
        dst = self.expr(b["tensor"])
        if dst.type.kind == "tile":
            raise self.operr(
                node,
                f"pl.write of a tile ({_type_desc(dst.type)}) is not supported yet: it writes one element of a tensor",
                "Write the element into a tensor parameter: pl.write(t, [i, j], value).",
            )
        if dst.type.kind != "tensor":
            raise self.typeerr(b["tensor"], f"pl.write needs a tensor to write into, got {_type_desc(dst.type)}", "Pass a tensor: pl.write(t, [i, j], value).")
        idx = b["indices"]
        indices = self.offsets(idx, "indices") if isinstance(idx, (ast.List, ast.Tuple)) else IrExpr.list_of([self.scalar_expr(idx)])
        value = self.atom(self.expr(b["value"]), b["value"])
        if value.type.kind != "scalar":
            raise self.typeerr(
                b["value"],
                f"pl.write writes one element: the value must be a scalar, got {_type_desc(value.type)}",
                "Pass a number or a pl.Scalar (pl.read(...) of an element); store a tile with pl.store.",
            )
        dtype = str(dst.type.dtype)
        if value.kind == "int" or (value.kind == "float" and dtype in ("FP32", "FP16", "BF16")):
            value = IrExpr.cast(value, dtype)
        return self.op_call_ir("tensor.write", [dst, indices, value], [], node)

    def tensor_dim(self, node: ast.Call) -> Any:
        """``pl.tensor.dim(t, axis)``: a static dimension is its literal; one known only at
        run time (``pl.dynamic``, a runtime-sized slice) is read when the program runs."""
        b = self.bind_args(node, "tensor.dim", ["tensor", "axis"], {})
        t = self.atom(self.expr(b["tensor"]), b["tensor"])
        axis = self.static(b["axis"])
        shape = list(t.type.shape or []) if t.type.kind == "tensor" else []
        if t.type.kind != "tensor" or not isinstance(axis, int) or isinstance(axis, bool) or not -len(shape) <= axis < len(shape):
            raise self.operr(node, f"pl.tensor.dim takes a tensor and an axis literal within its rank, got '{_unparse(node)}'", "Write pl.tensor.dim(t, 0).")
        axis %= len(shape)
        if shape[axis] != _DYNAMIC_DIM:
            return IrExpr.const_int(int(shape[axis]))
        return self.op_call_ir("tensor.dim", [t, IrExpr.const_int(axis)], [], node)

    def array_or_system_op(self, node: ast.Call, path: str) -> Any:
        """``pl.array.create(N, dtype)``, ``pl.array.get_element(arr, i)``,
        ``pl.array.update_element(arr, i, v)`` and ``pl.system.task_dummy(deps=[...])``."""
        if path == "array.create":
            b = self.bind_args(node, "array.create", ["size", "dtype"], {})
            n = self.static(b["size"])
            dt = self.static(b["dtype"])
            if not isinstance(n, int) or isinstance(n, bool) or not isinstance(dt, S.DataType):
                raise self.operr(node, "pl.array.create(size, dtype) takes an int literal and a pl dtype", "Write pl.array.create(4, pl.TASK_ID).")
            return self.op_call_ir("array.create", [], [("size", "int", n), ("elem", "str", dt.name)], node)
        if path == "array.get_element":
            b = self.bind_args(node, "array.get_element", ["array", "index"], {})
            return self.op_call_ir("array.get_element", [self.expr(b["array"]), self.scalar_expr(b["index"])], [], node)
        if path == "array.update_element":
            b = self.bind_args(node, "array.update_element", ["array", "index", "value"], {})
            return self.op_call_ir(
                "array.update_element", [self.expr(b["array"]), self.scalar_expr(b["index"]), self.expr(b["value"])], [], node
            )
        if path == "system.task_dummy":
            b = self.bind_args(node, "system.task_dummy", ["deps"], {"deps": None})
            if self.in_kernel():
                raise self.operr(node, "pl.system.task_dummy inside a kernel", "Submit barriers from the orchestration.")
            deps = self.task_id_list(b["deps"], "pl.system.task_dummy") if "deps" in b else []
            return self.op_call_ir("system.task_dummy", deps, [], node)
        raise self.operr(node, f"Unknown operation 'pl.{path}'", _UNKNOWN_OP_HINT)

    def create_tile(self, node: ast.Call) -> Any:
        """``pl.create_tile(shape, dtype=, target_memory=pl.Mem.Vec)``: a fresh vector tile
        (its contents are unspecified in PyPTO; here it is zero-filled, ``tile.full``)."""
        b = self.bind_args(
            node, "create_tile", ["shape", "dtype", "target_memory", "transpose"], {"target_memory": None, "transpose": None}
        )
        dt = self.static(b["dtype"])
        if not isinstance(dt, S.DataType):
            raise self.operr(b["dtype"], "pl.create_tile dtype must be a pl dtype", "Write dtype=pl.FP32.")
        if "target_memory" in b:
            mem = self.static_enum(b["target_memory"], S.MemorySpace, "target_memory")
            if mem != S.MemorySpace.Vec:
                raise self.operr(
                    b["target_memory"],
                    f"pl.create_tile(target_memory=pl.MemorySpace.{mem.name}) is not supported yet",
                    "Create vector tiles (target_memory=pl.MemorySpace.Vec); cube tiles come from pl.load / pl.move / pl.matmul.",
                )
        if "transpose" in b:
            raise self.operr(b["transpose"], "pl.create_tile(transpose=...) is not supported yet", "Omit transpose.")
        zero = IrExpr.const_float(0.0, dt.name) if dt.name in ("FP32", "FP16", "BF16") else IrExpr.const_int(0, dt.name)
        return self.op_call_ir(
            "tile.full", [zero], [("shape", "ints", self.static_ints(b["shape"], "shape")), ("dtype", "dtype", dt.name)], node
        )

    def cube_operand(self, e: Any, side: str, node: ast.AST) -> Any:
        """A matmul operand in the ``side`` (``Left`` / ``Right``) buffer: in kernel code a
        tensor is loaded whole into ``Mat`` first, and a ``Mat`` tile is moved (PyPTO's
        conversion of ``pl.matmul`` on tensors inside a kernel)."""
        if e.type.kind == "tensor" and self.in_kernel():
            shape = [int(d) for d in (e.type.shape or [])]
            zeros = IrExpr.list_of([IrExpr.const_int(0) for _ in shape])
            e = self.atom(
                self.op_call_ir("tile.load", [e, zeros], [("shapes", "ints", shape), ("target_memory", "memory", "Mat")], node),
                node,
                "t",
            )
        if e.type.kind == "tile" and e.type.memory == "Mat":
            e = self.atom(self.op_call_ir("tile.move", [e], [("target_memory", "memory", side)], node), node, "t")
        return e

    def assemble(self, node: ast.Call) -> Any:
        """``pl.assemble(target, source, offset, atomic=)``: a tile into a tile
        (``tile.assemble``, TINSERT); in kernel code a tile (or a tensor, loaded whole) into a
        tensor (a ``pl.store``, atomic with ``atomic=pl.AtomicType.Add``); in orchestration
        code a tensor into a tensor (``tensor.assemble``)."""
        b = self.bind_args(node, "assemble", ["target", "source", "offset", "atomic"], {"atomic": None})
        atomic = S.AtomicType.None_
        if "atomic" in b:
            atomic = self.static_enum(b["atomic"], S.AtomicType, "atomic")
        tiled = self.tiled_of(b["source"])
        if tiled is not None and self.in_kernel() and atomic == S.AtomicType.None_:
            return self.tiler.store(tiled, self.expr(b["target"]), self.static_ints(b["offset"], "offset"), node)
        target, source = self.expr(b["target"]), self.expr(b["source"])
        items = self.offset_items(b["offset"], "offset")
        offsets = IrExpr.list_of(items)
        if target.type.kind == "tile":
            if atomic != S.AtomicType.None_:
                raise self.operr(
                    b["atomic"],
                    "pl.assemble(atomic=...) into a tile: atomic combining is for stores into tensors",
                    "Omit atomic= for a tile target, or assemble into a tensor.",
                )
            return self.op_call_ir("tile.assemble", [target, self.tile_of(source, node), offsets], [], node)
        if self.in_kernel():
            kwargs: List[AttrItem] = [("atomic", "str", "add")] if atomic == S.AtomicType.Add else []
            return self.op_call_ir("tile.store", [self.tile_of(self.atom(source, node), node), offsets, target], kwargs, node)
        if atomic != S.AtomicType.None_:
            raise self.operr(
                b["atomic"],
                "pl.assemble(atomic=...) in orchestration code is not supported yet",
                "Write the atomic assemble inside a pl.at scope or a kernel (a store with atomic add).",
            )
        if self.ftype in ("Orchestration", "Opaque", "Inline") and source.type.kind == "tensor":
            return self.assemble_task(node, target, self.atom(source, node), items)
        return self.op_call_ir("tensor.assemble", [target, source, offsets], [], node)

    def assemble_task(self, node: ast.Call, target: Any, source: Any, items: List[Any]) -> Any:
        """``t = pl.assemble(t, src, offsets)`` in orchestration code: ``src`` is copied into
        the window of ``t`` at ``offsets`` by one kernel task, written as the ``pl.at`` scope it
        stands for (loads of ``src`` and stores into ``t``, in row blocks of at most
        ``_COPY_TILE_BYTES``), which ``OutlineIncoreScopes`` turns into a kernel and its
        dispatch. PyPTO's orchestration emits no copy: it relies on ``src`` having been
        produced into that window; the copy makes the result right wherever it was produced."""
        shape = [int(d) for d in (source.type.shape or [])]
        dtype = str(source.type.dtype)
        fix = (
            "Produce the source straight into its window: pass pl.slice(t, shape, offsets) to the kernel "
            "as its Out argument, then use t."
        )
        if any(d <= 0 for d in shape):
            raise self.operr(node, f"pl.assemble of a runtime-sized tensor ({_type_desc(source.type)}) in orchestration code", fix)
        cols = shape[-1] if shape else 1
        rows = 1
        for d in shape[:-1]:
            rows *= d
        row_bytes = cols * _ELEM_BYTES.get(dtype, 4)
        step = max(1, _COPY_TILE_BYTES // max(1, row_bytes))
        steps = -(-rows // step)
        if steps > 1 and (len(shape) != 2 or row_bytes > _COPY_TILE_BYTES or steps > _COPY_MAX_STEPS):
            raise self.operr(
                node,
                f"pl.assemble of a {_type_desc(source.type)} in orchestration code: the copy takes more than one "
                f"vector tile of {_COPY_TILE_BYTES} bytes"
                + ("" if len(shape) == 2 else " and the source is not rank 2")
                + (f" ({steps} row blocks, at most {_COPY_MAX_STEPS})" if steps > _COPY_MAX_STEPS else ""),
                fix,
            )
        offsets = IrExpr.list_of(items)
        body: List[Any] = []
        self.blocks.append(body)
        self.in_at += 1
        try:
            if steps == 1:
                cur = self.op_call_ir("tile.store", [self.tile_of(source, node), offsets, target], [], node)
            else:
                cur = target
                for r0 in range(0, rows, step):
                    n = min(step, rows - r0)
                    win = [IrExpr.const_int(r0), IrExpr.const_int(0)]
                    load = self.op_call_ir("tile.load", [source, IrExpr.list_of(win)], [("shapes", "ints", [n, cols])], node)
                    row = self.row_offset(items, r0, node)
                    cur = self.op_call_ir("tile.store", [self.atom(load, node, "t"), row, self.atom(cur, node, "a")], [], node)
            stored = IrVar(self.temp_name("a"), cur.type)
            self.emit(IrStmt.assign([stored], cur, self.sp(node)))
        finally:
            self.in_at -= 1
            self.blocks.pop()
        self.emit(IrStmt.scope("at", S.Level.CORE_GROUP.name, [], body, None, [], self.sp(node)))
        return IrExpr.var(stored)

    def row_offset(self, items: List[Any], r0: int, node: ast.AST) -> Any:
        """The ``[row, col]`` offsets ``items`` moved down by ``r0`` rows."""
        first, rest = items[0], items[1:]
        if r0 == 0:
            return IrExpr.list_of(items)
        step = IrExpr.const_int(r0)
        moved = _fold_ints("+", first, step) or self.wrap_scalar(lambda: IrExpr.binary("+", first, step), node)
        return IrExpr.list_of([moved, *rest])

    def explicit_op(self, node: ast.Call, ns: str, op: str) -> Any:
        """``pl.tile.X(...)`` / ``pl.tensor.X(...)``: the printer's spelling (positional IR
        arguments, typed keyword arguments)."""
        known = _ops.KNOWN
        name = f"{ns}.{_ops.ir_name(op)}"
        # PyPTO's own pl.tile.X(...) spelling (the unified signature) is told from the
        # printer's (IR arguments, typed keywords) by the keyword the printer always writes
        # (the op table's printer_keyword).
        marker = _ops.PRINTER_KEYWORDS.get(op) if ns == "tile" else None
        if marker is not None and (name not in known or marker not in {kw.arg for kw in node.keywords}):
            return self.unified_op(node, op)
        if name not in known:
            raise self.operr(node, f"Unknown operation 'pl.{name}'", _UNKNOWN_OP_HINT)
        if name == "tensor.assemble":
            return self.assemble(node)
        args = [self.expr(a) for a in node.args]
        kwargs: List[AttrItem] = []
        for kw in node.keywords:
            if kw.arg == "attrs":
                continue
            v = self.static(kw.value)
            if isinstance(v, S.DataType):
                kwargs.append((str(kw.arg), "dtype", v.name))
            elif isinstance(v, S.MemorySpace):
                kwargs.append((str(kw.arg), "memory", v.name))
            elif isinstance(v, (S.PadValue, S.AtomicType)):
                kwargs.append((str(kw.arg), "str", _enum_attr(v)))
            elif isinstance(v, bool):
                kwargs.append((str(kw.arg), "bool", v))
            elif isinstance(v, int):
                kwargs.append((str(kw.arg), "int", v))
            elif isinstance(v, float):
                kwargs.append((str(kw.arg), "float", v))
            elif isinstance(v, str):
                kwargs.append((str(kw.arg), "str", v))
            elif isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
                kwargs.append((str(kw.arg), "ints", v))
            else:
                raise self.operr(kw, f"unsupported value for keyword '{kw.arg}'", "")
        return self.op_call_ir(name, args, kwargs, node)

    def unified_op(self, node: ast.Call, op: str) -> Any:
        if op == "load":
            b = self.bind_args(
                node,
                op,
                ["tensor", "offsets", "shapes", "target_memory", "valid_shape", "valid_shapes"],
                {"target_memory": None, "valid_shape": None, "valid_shapes": None},
            )
            t = self.expr(b["tensor"])
            kwargs: List[AttrItem] = [("shapes", "ints", self.static_ints(b["shapes"], "shapes"))]
            if "target_memory" in b:
                mem = self.static_enum(b["target_memory"], S.MemorySpace, "target_memory")
                kwargs.append(("target_memory", "memory", mem.name))
            args = [t, self.offsets(b["offsets"])]
            valid = b.get("valid_shape", b.get("valid_shapes"))
            if valid is not None:
                args.append(self.offsets(valid, "valid_shape"))
            else:
                self.check_view_load(t, node)
            return self.op_call_ir("tile.load", args, kwargs, node)
        if op == "store":
            b = self.bind_args(node, op, ["tile", "offsets", "output_tensor", "shapes"], {"shapes": None})
            tiled = self.tiled_of(b["tile"])
            if tiled is not None and "shapes" not in b:
                return self.tiler.store(tiled, self.expr(b["output_tensor"]), self.static_ints(b["offsets"], "offsets"), node)
            tile = self.expr(b["tile"])
            if "shapes" in b:
                shapes = self.static_ints(b["shapes"], "shapes")
                if tile.type.kind == "tile" and shapes != list(tile.type.shape or []):
                    raise self.operr(
                        b["shapes"],
                        f"pl.store(..., shapes={shapes}) of a {_type_desc(tile.type)}: a store writes the whole tile",
                        f"Write shapes={list(tile.type.shape or [])} (or omit it), or pl.slice the tile first.",
                    )
            return self.op_call_ir("tile.store", [tile, self.offsets(b["offsets"]), self.expr(b["output_tensor"])], [], node)
        if op == "fillpad":
            b = self.bind_args(node, op, ["tile", "pad_value"], {"pad_value": None})
            pad = self.static_enum(b["pad_value"], S.PadValue, "pad_value") if "pad_value" in b else S.PadValue.zero
            return self.op_call_ir("tile.fillpad", [self.expr(b["tile"])], [("pad_value", "str", pad.name)], node)
        if op in ("max", "min"):
            b = self.bind_args(node, op, ["lhs", "rhs"], {})
            lhs = self.atom(self.expr(b["lhs"]), b["lhs"])
            rhs = self.atom(self.expr(b["rhs"]), b["rhs"])
            if lhs.type.kind != "scalar" or rhs.type.kind != "scalar":
                raise self.operr(
                    node,
                    f"pl.{op} of {_type_desc(lhs.type)} and {_type_desc(rhs.type)}: pl.{op} takes scalars",
                    f"Use pl.{'maximum' if op == 'max' else 'minimum'} on tiles (or pl.row_{op} to reduce a tile).",
                )
            return self.wrap_scalar(lambda: IrExpr.binary(op, lhs, rhs), node)
        if op in _BINARY:
            b = self.bind_args(node, op, ["lhs", "rhs"], {})
            lhs, rhs = self.tile_of(self.expr(b["lhs"]), node), self.tile_of(self.expr(b["rhs"]), node)
            if lhs.type.kind in ("tile", "tensor"):
                ir = _BINARY[op][0] if rhs.type.kind in ("tile", "tensor") else _BINARY[op][1]
                return self.elementwise(node, ir, [lhs, rhs], [])
            if lhs.type.kind == "scalar" and rhs.type.kind == "scalar":
                sym = _ops.SCALAR_OPERATOR.get(op)
                if sym is None:
                    raise self.operr(node, f"pl.{op} of two scalars is not defined", f"Apply pl.{op} to tiles.")
                return self.wrap_scalar(lambda: IrExpr.binary(sym, lhs, rhs), node)
            raise self.operr(node, f"pl.{op}: expected Tensor or Tile operands, got ({_type_desc(lhs.type)}, {_type_desc(rhs.type)})", "")
        if op in _SCALAR_FORMS:
            b = self.bind_args(node, op, ["lhs", "rhs"], {})
            return self.elementwise(node, _SCALAR_FORMS[op], [self.expr(b["lhs"]), self.expr(b["rhs"])], [])
        if op in _UNARY:
            b = self.bind_args(node, op, ["tile"], {})
            return self.elementwise(node, f"tile.{op}", [self.expr(b["tile"])], [])
        if op == "transpose":
            b = self.bind_args(node, op, ["tile", "axis1", "axis2"], {"axis1": None, "axis2": None})
            src = self.expr(b["tile"])
            rank = len(src.type.shape or []) if src.type.kind == "tensor" else 2
            axes = [self.static(b[k]) if k in b else d for k, d in (("axis1", 0), ("axis2", 1))]
            if rank != 2 or not all(isinstance(a, int) for a in axes) or sorted(a % 2 for a in axes) != [0, 1]:
                raise self.operr(
                    node,
                    f"pl.transpose of a rank-{rank} value over axes {axes}: only the two axes of a 2-D tensor or tile are supported",
                    "Write pl.transpose(x, 0, 1) on a 2-D tensor or tile.",
                )
            return self.elementwise(node, "tile.transpose", [src], [])
        if op == "cast":
            b = self.bind_args(node, op, ["tile", "target_type", "mode"], {"mode": None})
            dt = self.static(b["target_type"])
            if not isinstance(dt, S.DataType):
                raise self.operr(b["target_type"], "pl.cast target_type must be a pl dtype", "Write pl.cast(t, pl.BF16).")
            allowed, self.tiled_ok = self.tiled_ok, False
            tiled = self.tiled_of(b["tile"])
            if tiled is not None:
                return self.tiled_cast(tiled, b, dt, allowed, node)
            value = self.atom(self.expr(b["tile"]), b["tile"])
            if self.in_kernel() and value.type.kind == "tile" and value.type.memory == "Acc" and "mode" in b and self.static(b["mode"]) == "rint":
                return self.tiler.fold_cast(value, dt.name, node)
            if value.type.kind == "scalar":
                if "mode" in b:
                    raise self.operr(b["mode"], "pl.cast(mode=...) of a scalar", "Scalars convert toward zero; omit mode=.")
                return IrExpr.cast(value, dt.name)
            kw: List[AttrItem] = [("dtype", "dtype", dt.name)]
            mode = self.static(b["mode"]) if "mode" in b else "round"
            if not isinstance(mode, str):
                raise self.operr(b["mode"], "pl.cast mode must be a string", "")
            kw.append(("mode", "str", mode))
            return self.elementwise(node, "tile.cast", [value], kw)
        if op in _REDUCTIONS:
            spec = ["tile", "tmp_tile"] if op.startswith("row") else ["tile"]
            b = self.bind_args(node, op, spec, {"tmp_tile": None})
            if "tmp_tile" in b:
                self.expr(b["tmp_tile"])  # accepted for compatibility; codegen allocates its own
            return self.op_call_ir(f"tile.{op}", [self.tile_of(self.expr(b["tile"]), node)], [], node)
        if op in _EXPANDS:
            b = self.bind_args(node, op, ["tile", "vec"], {})
            tile, vec = self.tile_of(self.expr(b["tile"]), node), self.tile_of(self.expr(b["vec"]), node)
            return self.op_call_ir(f"tile.{op}", [tile, vec], [], node)
        if op == "matmul":
            b = self.bind_args(node, op, ["lhs", "rhs", "out_dtype", "a_trans", "b_trans", "c_matrix_nz"], {
                "out_dtype": None, "a_trans": None, "b_trans": None, "c_matrix_nz": None})
            for flag in ("a_trans", "b_trans", "c_matrix_nz"):
                if flag in b and self.static(b[flag]) is not False:
                    raise self.operr(
                        b[flag],
                        f"pl.matmul({flag}=True) is not supported yet",
                        "Transpose the operand first (pl.transpose on a vector tile), or omit the flag.",
                    )
            operands = self.matmul_operands(b, node)
            if isinstance(operands, TiledMatmul):
                return operands
            lhs = self.cube_operand(operands[0], "Left", b["lhs"])
            rhs = self.cube_operand(operands[1], "Right", b["rhs"])
            expr = self.op_call_ir("tile.matmul", [lhs, rhs], [], node)
            if "out_dtype" in b:
                dt = self.static(b["out_dtype"])
                if not isinstance(dt, S.DataType) or dt.name != expr.type.dtype:
                    raise self.operr(
                        b["out_dtype"],
                        f"pl.matmul(out_dtype={_unparse(b['out_dtype'])}): the accumulator here is {expr.type.dtype}",
                        f"Omit out_dtype (or write out_dtype=pl.{expr.type.dtype}) and pl.cast the stored result if needed.",
                    )
            return expr
        if op == "matmul_acc":
            b = self.bind_args(node, op, ["acc", "lhs", "rhs"], {})
            lhs = self.cube_operand(self.expr(b["lhs"]), "Left", b["lhs"])
            rhs = self.cube_operand(self.expr(b["rhs"]), "Right", b["rhs"])
            return self.op_call_ir("tile.matmul_acc", [self.expr(b["acc"]), lhs, rhs], [], node)
        if op == "move":
            b = self.bind_args(node, op, ["tile", "target_memory"], {})
            mem = self.static_enum(b["target_memory"], S.MemorySpace, "target_memory")
            return self.op_call_ir("tile.move", [self.expr(b["tile"])], [("target_memory", "memory", mem.name)], node)
        if op == "full":
            b = self.bind_args(node, op, ["shape", "dtype", "value"], {})
            dt = self.static(b["dtype"])
            if not isinstance(dt, S.DataType):
                raise self.operr(b["dtype"], "pl.full dtype must be a pl dtype", "")
            return self.op_call_ir(
                "tile.full",
                [self.scalar_expr(b["value"])],
                [("shape", "ints", self.static_ints(b["shape"], "shape")), ("dtype", "dtype", dt.name)],
                node,
            )
        if op == "expands":
            b = self.bind_args(node, op, ["tile", "value"], {})
            return self.op_call_ir("tile.expands", [self.expr(b["tile"]), self.scalar_expr(b["value"])], [], node)
        if op in ("create_tensor", "create"):
            b = self.bind_args(node, op, ["shape", "dtype", "layout", "manual_dep", "init_value"], {"layout": None, "manual_dep": None, "init_value": None})
            for extra in ("layout", "manual_dep", "init_value"):
                if extra in b:
                    raise self.operr(b[extra], f"pl.create_tensor({extra}=...) is not supported yet", "")
            dt = self.static(b["dtype"])
            if not isinstance(dt, S.DataType):
                raise self.operr(b["dtype"], "pl.create_tensor dtype must be a pl dtype", "Write dtype=pl.FP32.")
            shape, sizes = self.shape_sizes(b["shape"])
            return self.op_call_ir("tensor.create", sizes, [("shape", "ints", shape), ("dtype", "dtype", dt.name)], node)
        if op == "slice":
            b = self.bind_args(node, op, ["tensor", "shape", "offset", "valid_shape"], {"valid_shape": None})
            src = self.expr(b["tensor"])
            if src.type.kind == "tile":
                if "valid_shape" in b:
                    raise self.operr(b["valid_shape"], "pl.slice(valid_shape=...) of a tile is not supported yet", "Omit valid_shape.")
                return self.op_call_ir(
                    "tile.slice", [src, self.offsets(b["offset"], "offset")], [("shape", "ints", self.static_ints(b["shape"], "shape"))], node
                )
            shape, sizes = self.shape_sizes(b["shape"])
            window = self.op_call_ir("tensor.slice", [src, self.offsets(b["offset"], "offset"), *sizes], [("shape", "ints", shape)], node)
            if "valid_shape" in b:
                return self.valid_slice(window, b["valid_shape"], node)
            return window
        if op == "reshape":
            b = self.bind_args(node, op, ["tensor", "shape"], {})
            # In kernel code a tensor is loaded whole first (PyPTO's tensor-to-tile conversion).
            src = self.tile_of(self.expr(b["tensor"]), node)
            ir = "tile.reshape" if src.type.kind == "tile" else "tensor.reshape"
            return self.op_call_ir(ir, [src], [("shape", "ints", self.static_ints(b["shape"], "shape"))], node)
        if op == "concat":
            b = self.bind_args(node, op, ["src0", "src1"], {})
            src0, src1 = self.expr(b["src0"]), self.expr(b["src1"])
            if src0.type.kind != "tile" or src1.type.kind != "tile":
                raise self.operr(
                    node,
                    f"pl.concat on {_type_desc(src0.type)} and {_type_desc(src1.type)}: only tiles are supported",
                    "pl.load both operands into tiles inside a kernel or a pl.at scope, then pl.concat(tile_a, tile_b).",
                )
            return self.op_call_ir("tile.concat", [src0, src1], [], node)
        if op == "create_tile":
            return self.create_tile(node)
        if op == "read":
            b = self.bind_args(node, op, ["tensor", "indices"], {})
            idx = b["indices"]
            # A bare index reads a vector element: pl.read(t, i) is pl.read(t, [i]).
            indices = self.offsets(idx, "indices") if isinstance(idx, (ast.List, ast.Tuple)) else IrExpr.list_of([self.scalar_expr(idx)])
            return self.op_call_ir("tensor.read", [self.expr(b["tensor"]), indices], [], node)
        if op == "write":
            return self.write_element(node)
        if op == "assemble":
            return self.assemble(node)
        raise self.operr(node, f"Unknown operation 'pl.{op}'", _UNKNOWN_OP_HINT)


def _enum_attr(v: enum.Enum) -> str:
    """The IR attribute spelling of a pl enum member (``pl.PadValue.min`` → ``min``,
    ``pl.AtomicType.Add`` → ``add``)."""
    return v.name.rstrip("_").lower()


def wrap_foreign(name: str, src: Source, node: ast.AST, e: BaseException) -> ParserError:
    """A non-parser exception escaping a function parse, as PyPTO wraps it."""
    return _error(
        ParserSyntaxError,
        src,
        node,
        f"Failed to parse function '{name}': {e}",
        "Check your function definition for errors",
    )


def parse_module_program(
    tree: ast.Module, src: Source, globals_: Dict[str, Any], class_name: Optional[str] = None
) -> Any:
    """The ``@pl.program`` class of a parsed module (the first, or ``class_name``)."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and (class_name is None or node.name == class_name):
            return parse_class(node, src, globals_)
    raise ParserSyntaxError(
        "no @pl.program class found" if class_name is None else f"no class '{class_name}' found",
        {"filename": src.filename, "line": 1, "column": 1},
        "Write @pl.program class Name: with @pl.function methods.",
    )


def parse_class(cls: ast.ClassDef, src: Source, globals_: Dict[str, Any]) -> Any:
    decls = []
    for item in cls.body:
        if isinstance(item, ast.FunctionDef):
            ftype = function_type_of(item, src)
            if ftype is None:
                raise _error(
                    ParserSyntaxError,
                    src,
                    item,
                    f"method '{item.name}' of program {cls.name} is not a @pl.function",
                    "Decorate it with @pl.function(type=pl.FunctionType.X).",
                )
            decls.append(_distributed.declare_in_class(item, ftype, src, globals_))
        elif isinstance(item, (ast.Pass, ast.Expr)):
            continue
        else:
            raise _error(
                ParserSyntaxError, src, item, f"unsupported class member in program {cls.name}", "A program holds @pl.function methods."
            )
    builder = ProgramBuilder(cls.name, decls)
    return build_checked(builder, src)


def build_checked(builder: ProgramBuilder, src: Source) -> Any:
    try:
        return builder.build()
    except ParserError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, AssertionError) as e:
        # The innermost function being parsed, for the message.
        name = next(iter(builder.in_progress), builder.name)
        decl = builder.decls.get(name)
        node: ast.AST = decl.node if decl is not None else ast.Module(body=[], type_ignores=[])
        raise wrap_foreign(name, src if decl is None else decl.src, node, e) from e


def function_source(fn: Any) -> Tuple[ast.FunctionDef, Source]:
    """The AST of a Python function and where it is, for ``@pl.jit``."""
    import inspect
    import linecache
    import textwrap

    lines, start = inspect.getsourcelines(fn)
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    filename = inspect.getsourcefile(fn) or "<unknown>"
    tree = ast.parse(dedented)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise ParserSyntaxError(f"{fn!r} is not a function definition", {"filename": filename, "line": start, "column": 1})
    return fdef, Source(filename, start - 1, indent, linecache.getlines(filename))


def jit_dependencies(fdef: ast.FunctionDef, globals_: Dict[str, Any], is_jit: Callable[[Any], bool]) -> List[str]:
    """Names of ``@pl.jit`` helpers called (bare ``f(...)``) by a jit function body."""
    out: List[str] = []
    for node in ast.walk(fdef):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            n = node.func.id
            if n in globals_ and is_jit(globals_[n]) and n not in out:
                out.append(n)
    return out
