"""The front end of ``pypto.language.distributed`` (``pld``): what the parser does with
``pld.*`` calls, ``pld.DistributedTensor`` annotations, rank slices ``x[r]`` and ``device=``
in a HOST function (``@pl.jit.host``). Each builds the IR's ``dist.*`` operations (type
rules: ``crates/pto-ir/src/dist.rs``); the L3 codegen lowers them into ``host_orch.py``.

Kept apart from ``_parser`` so the distributed constructs read as one unit; the parser calls
:func:`call`, :func:`annotation`, :func:`host_subscript` and :func:`device_attr`.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from pypto import _native
from pypto.language import _surface as S
from pypto.language.errors import InvalidOperationError, ParserError, ParserTypeError

if TYPE_CHECKING:
    from pypto.language._parser import FunctionParser, Source, _Static

IrExpr = _native.IrExpr
IrType = _native.IrType

#: The prefix ``_pl_path`` gives ``pld.<name>`` paths.
PREFIX = "distributed."

#: ``pld`` constructs of PyPTO this front end does not lower yet, with the nearest form
#: that works.
_NOT_YET = {
    "get_comm_ctx": "pass window tensors (pld.DistributedTensor) and work on this rank's slice with pl.load / pl.store",
    "rank": "pass the rank from the HOST loop as a pl.Scalar argument (chip(x[r], r, device=r))",
    "nranks": "pass pld.world_size() from the HOST function as a pl.Scalar argument",
    "system.notify": "exchange data through window tensors between separate dispatches",
    "system.wait": "exchange data through window tensors between separate dispatches",
    "tensor.barrier": "order the ranks with separate dispatches of the HOST function",
    "tile.remote_load": "pl.load of this rank's own window (pld.DistributedTensor)",
    "tile.remote_store": "pl.store into this rank's own window (pld.DistributedTensor)",
}


def _err(fp: "FunctionParser", cls: type, node: ast.AST, message: str, hint: str) -> ParserError:
    from pypto.language._parser import _error

    return _error(cls, fp.src, node, message, hint)


def is_host(fp: "FunctionParser") -> bool:
    """Whether ``fp`` parses a HOST function."""
    return bool(getattr(fp.decl, "host", False))


def annotation(node: ast.AST, static: "_Static", src: "Source") -> Optional[Tuple[Any, str, str]]:
    """``pld.DistributedTensor[[d0, d1], dtype]`` → an ``InOut`` tensor (a window view is
    read and written in place); ``None`` for any other annotation."""
    from pypto.language._parser import _error, _pl_path

    if not isinstance(node, ast.Subscript) or _pl_path(node.value) != PREFIX + "DistributedTensor":
        return None
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    shape = static(items[0]) if len(items) == 2 else None
    dtype = static(items[1]) if len(items) == 2 else None
    if (
        not isinstance(shape, list)
        or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape)
        or not isinstance(dtype, S.DataType)
    ):
        raise _error(
            ParserTypeError,
            src,
            node,
            f"unsupported annotation '{ast.unparse(node)}'",
            "Write pld.DistributedTensor[[1, 256], pl.FP32] (a static shape and a pl dtype).",
        )
    return IrType.tensor([int(d) for d in shape], dtype.name), "InOut", "tensor"


def call(fp: "FunctionParser", node: ast.Call, name: str) -> Any:
    """A ``pld.<name>(...)`` call."""
    if name in ("world_size", "system.world_size"):
        if node.args or node.keywords:
            raise _err(fp, InvalidOperationError, node, "pld.world_size() takes no arguments", "Write pld.world_size().")
        return fp.op_call_ir("dist.world_size", [], [], node)
    if name in ("alloc_window_buffer", "window"):
        _require_host(fp, node, f"pld.{name}")
        spec = ["shape", "dtype"] if name == "alloc_window_buffer" else ["buffer", "shape", "dtype"]
        b = fp.bind_args(node, name, spec, {})
        shape = fp.static_ints(b["shape"], "shape")
        dt = fp.static(b["dtype"])
        if not isinstance(dt, S.DataType):
            raise _err(fp, InvalidOperationError, b["dtype"], f"pld.{name}: dtype must be a pl dtype", "Write dtype=pl.FP32.")
        kwargs: List[Any] = [("shape", "ints", shape), ("dtype", "dtype", dt.name)]
        args = [fp.expr(b["buffer"])] if name == "window" else []
        return fp.op_call_ir(f"dist.{name}", args, kwargs, node)
    if name in _NOT_YET:
        raise _err(
            fp,
            InvalidOperationError,
            node,
            f"pld.{name} is not supported by this DSL subset yet",
            f"Nearest supported form: {_NOT_YET[name]} (docs/DSL.md, distributed).",
        )
    raise _err(
        fp,
        InvalidOperationError,
        node,
        f"Unknown operation 'pld.{name}'",
        "Distributed operations: pld.world_size(), pld.alloc_window_buffer(shape, dtype=), pld.window(buf, shape, dtype=).",
    )


def _require_host(fp: "FunctionParser", node: ast.AST, what: str) -> None:
    if not is_host(fp):
        raise _err(
            fp,
            InvalidOperationError,
            node,
            f"{what} outside a HOST function",
            "Window buffers are declared by the host orchestrator: write them in a @pl.jit.host function "
            "and pass pld.window(...) views to the chip program.",
        )


def host_subscript(fp: "FunctionParser", node: ast.Subscript, base: Any) -> Any:
    """``x[r]`` / ``x[r, 0:8]`` of a host tensor: an integer index selects (and drops) its
    axis, a slice keeps it, missing trailing axes are whole."""
    shape = list(base.type.shape or [])
    items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if len(items) > len(shape):
        raise _err(fp, ParserTypeError, node, f"{len(items)} indices for a rank-{len(shape)} tensor", "")
    offsets: List[Any] = []
    sizes: List[int] = []
    drop: List[int] = []
    for axis, dim in enumerate(shape):
        it = items[axis] if axis < len(items) else ast.Slice()
        if not isinstance(it, ast.Slice):
            offsets.append(fp.scalar_expr(it))
            sizes.append(1)
            drop.append(axis)
            continue
        if it.step is not None:
            raise _err(fp, ParserTypeError, it, "slices with a step are not supported", "Write x[r, a:b].")
        lo = fp.static(it.lower) if it.lower is not None else 0
        hi = fp.static(it.upper) if it.upper is not None else dim
        offsets.append(IrExpr.const_int(int(lo)))
        sizes.append(int(hi) - int(lo))
    kwargs: List[Any] = [("shape", "ints", sizes), ("drop", "ints", drop)]
    return fp.op_call_ir("dist.slice", [base, IrExpr.list_of(offsets)], kwargs, node)


def device_attr(fp: "FunctionParser", kw: ast.keyword, name: str) -> Tuple[str, str, Any]:
    """``device=r`` of a dispatch in a HOST function: the rank it runs on."""
    if not is_host(fp):
        raise _err(
            fp,
            ParserTypeError,
            kw,
            f"Function '{name}' does not accept keyword argument 'device'",
            "device= pins a chip dispatch to a rank in a @pl.jit.host function.",
        )
    v = kw.value
    if isinstance(v, ast.Constant) and isinstance(v.value, int) and not isinstance(v.value, bool):
        return ("device", "int", int(v.value))
    e = fp.atom(fp.expr(v), v)
    var = e.as_var
    if var is None or e.type.kind != "scalar":
        raise _err(fp, ParserTypeError, kw, "device= must be a rank: an int or a loop variable", "Write device=r.")
    return ("device", "var", var)


# ---- HOST functions of a @pl.program class --------------------------------------------


def host_role(fdef: ast.FunctionDef, src: "Source") -> Optional[str]:
    """The role of ``@pl.function(level=pl.Level.HOST, role=pl.Role.X)`` (``Orchestrator``
    when the role is omitted), ``None`` for a function of another level."""
    from pypto.language._parser import _error, _pl_path

    for dec in fdef.decorator_list:
        if not isinstance(dec, ast.Call) or _pl_path(dec.func) != "function":
            continue
        kws = {kw.arg: _pl_path(kw.value) for kw in dec.keywords}
        if kws.get("level") not in (None, "Level.HOST"):
            raise _error(
                ParserTypeError,
                src,
                dec,
                f"@pl.function(level=pl.{kws.get('level')}) is not supported",
                "Functions are chip-level by default; the other level is pl.Level.HOST (role=pl.Role.Orchestrator / SubWorker).",
            )
        if kws.get("level") is None:
            if "role" in kws:
                raise _error(ParserTypeError, src, dec, "role= needs level=pl.Level.HOST", "Write level=pl.Level.HOST, role=pl.Role.X.")
            return None
        role = kws.get("role") or "Role.Orchestrator"
        if role not in ("Role.Orchestrator", "Role.SubWorker"):
            raise _error(ParserTypeError, src, dec, f"unknown role 'pl.{role}'", "Use pl.Role.Orchestrator or pl.Role.SubWorker.")
        return role.split(".", 1)[1]
    return None


def declare_in_class(fdef: ast.FunctionDef, ftype: str, src: "Source", globals_: Any) -> Any:
    """A method of a ``@pl.program`` class; a SubWorker may omit ``self`` (as PyPTO's)."""
    from pypto.language._parser import declare_function

    role = host_role(fdef, src)
    takes_self = bool(fdef.args.args) and fdef.args.args[0].arg == "self"
    decl = declare_function(fdef, ftype, src, globals_, role != "SubWorker" or takes_self, False)
    decl.host = role == "Orchestrator"
    decl.sub_worker = role == "SubWorker"
    return decl


def _is_abstract(body: List[ast.stmt]) -> bool:
    stmts = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str))]
    return len(stmts) == 1 and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant) and stmts[0].value.value is Ellipsis


def sub_worker_body(fp: "FunctionParser") -> List[Any]:
    """A SubWorker's body: only ``...`` (a callback bound at run time) is supported."""
    node = fp.decl.node
    if not _is_abstract(node.body):
        raise _err(
            fp,
            InvalidOperationError,
            node.body[0],
            f"SubWorker '{fp.decl.name}' has a body; only runtime-bound SubWorkers are supported here",
            "Nearest supported form: declare it with a `...` body and bind it at run time with "
            f"compiled.prepare(callbacks={{'{fp.decl.name}': fn}}).",
        )
    return []


def function_attrs(decl: Any) -> List[Tuple[str, str, Any]]:
    """The IR attributes of a HOST function: ``level``, ``role`` and, for a SubWorker,
    ``requires_runtime_binding``."""
    if decl.host:
        return [("level", "str", "HOST"), ("role", "str", "Orchestrator")]
    if decl.sub_worker:
        return [("level", "str", "HOST"), ("role", "str", "SubWorker"), ("requires_runtime_binding", "bool", True)]
    return []


def host_entry(native: Any) -> Optional[str]:
    """The HOST orchestrator of a program (its L3 entry), ``None`` for a single-chip one."""
    hosts = [f.name for f in native.functions if f.level == "HOST" and f.role == "Orchestrator"]
    return hosts[0] if hosts else None
