"""The front end of ``pypto.language.distributed`` (``pld``): what the parser does with
``pld.*`` calls, ``pld.DistributedTensor`` annotations, rank slices ``x[r]`` and ``device=``
in a HOST function (``@pl.jit.host``). Each builds the IR's ``dist.*`` operations (type
rules: ``crates/pto-ir/src/dist.rs``); the L3 codegen lowers them into ``host_orch.py``.

Kept apart from ``_parser`` so the distributed constructs read as one unit; the parser calls
:func:`call`, :func:`annotation`, :func:`host_subscript` and :func:`device_attr`.
"""

from __future__ import annotations

import ast
import enum
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
    "system.defer_wait": "pld.system.wait(signal, offsets=[...], expected=v, cmp=pld.WaitCmp.Ge)",
}

#: The suffix of the hidden comm-context parameter of a ``pld.DistributedTensor``
#: parameter (``codegen/pto/dist.rs`` reads it back).
CTX_SUFFIX = "__ctx"

def constant(path: str) -> Any:
    """``pld.NotifyOp.X`` / ``pld.WaitCmp.X`` (``None`` for anything else)."""
    from pypto.language import distributed as D

    head, _, member = path.partition(".")
    cls = {"NotifyOp": D.NotifyOp, "WaitCmp": D.WaitCmp, "AtomicType": S.AtomicType}.get(head)
    return cls.__members__.get(member) if cls is not None else None


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
    if name in _KERNEL_OPS:
        return _KERNEL_OPS[name](fp, node)
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


# ---- window tensors in chip programs ----------------------------------------------------


def _is_dt(ann: Optional[ast.AST]) -> bool:
    from pypto.language._parser import _pl_path

    if isinstance(ann, ast.Subscript) and _pl_path(ann.value) in ("Out", "InOut"):
        ann = ann.slice
    return isinstance(ann, ast.Subscript) and _pl_path(ann.value) == PREFIX + "DistributedTensor"


def append_ctx_params(params: List[Any]) -> None:
    """After the parameters, one hidden ``UINT64`` scalar ``<name>__ctx`` per
    ``pld.DistributedTensor`` parameter: the address of its domain's ``CommContext``
    (``device_ctx``), which ``pld.get_comm_ctx`` reads."""
    from pypto.language._parser import ParamDecl

    for p in list(params):
        if _is_dt(p.node.annotation):
            params.append(ParamDecl(p.name + CTX_SUFFIX, IrType.scalar("UINT64"), "In", "scalar", p.node))


def ctx_args(fp: "FunctionParser", name: str, args: List[Any], node: ast.AST) -> List[Any]:
    """The comm contexts a call passes for the callee's window parameters: in a HOST
    function the rank's ``device_ctx`` of each window (``dist.device_ctx``), elsewhere the
    caller's own context parameter of the window it passes on."""
    decl = fp.prog.decls.get(name)
    if decl is None:
        return []
    windows = [i for i, p in enumerate(decl.params) if _is_dt(p.node.annotation) and not p.name.endswith(CTX_SUFFIX)]
    out: List[Any] = []
    for i in windows:
        if i >= len(args):
            return []
        a = args[i]
        if is_host(fp):
            out.append(fp.atom(IrExpr.op_call("dist.device_ctx", [a], [], fp.sp(node)), node))
            continue
        v = a.as_var
        ctx = fp.names.get(v.name + CTX_SUFFIX) if v is not None else None
        if ctx is None:
            raise _err(
                fp,
                ParserTypeError,
                node,
                f"argument {i + 1} of '{name}' must be a pld.DistributedTensor parameter of '{fp.decl.name}'",
                "Pass window tensors on unchanged: declare the parameter pld.DistributedTensor[...] here too.",
            )
        out.append(IrExpr.var(ctx))
    return out


def _ctx_of(fp: "FunctionParser", node: ast.expr) -> Any:
    ctx = fp.names.get(node.id + CTX_SUFFIX) if isinstance(node, ast.Name) else None
    if ctx is None:
        raise _err(
            fp,
            ParserTypeError,
            node,
            f"'{ast.unparse(node)}' is not a pld.DistributedTensor parameter",
            "Pass a window tensor parameter of this kernel (pld.DistributedTensor[...]).",
        )
    return IrExpr.var(ctx)


def _op(fp: "FunctionParser", name: str, args: List[Any], kwargs: List[Any], node: ast.AST) -> Any:
    _require_kernel(fp, node, name)
    args = [fp.atom(a, node) for a in args]
    try:
        return IrExpr.op_call(name, args, kwargs, fp.sp(node))
    except ValueError as e:
        msg = str(e.args[0]) if e.args else str(e)
        hint = str(e.args[1]) if len(e.args) > 1 else ""
        raise _err(fp, InvalidOperationError, node, msg, hint) from None


def _require_kernel(fp: "FunctionParser", node: ast.AST, name: str) -> None:
    if not fp.in_kernel():
        raise _err(
            fp,
            InvalidOperationError,
            node,
            f"pld.{name.split('.', 1)[1]} outside a kernel",
            "Window traffic runs on the cores: write it in a @pl.jit.incore (InCore) function.",
        )


def _get_comm_ctx(fp: "FunctionParser", node: ast.Call) -> Any:
    b = fp.bind_args(node, "get_comm_ctx", ["tensor"], {})
    _require_kernel(fp, node, "dist.get_comm_ctx")
    return _ctx_of(fp, b["tensor"])


def _rank_of(op: str) -> Any:
    def lower(fp: "FunctionParser", node: ast.Call) -> Any:
        b = fp.bind_args(node, op, ["ctx"], {})
        return _op(fp, f"dist.{op}", [fp.expr(b["ctx"])], [], node)

    return lower


def _remote_load(fp: "FunctionParser", node: ast.Call) -> Any:
    b = fp.bind_args(node, "tile.remote_load", ["tensor", "peer", "offsets", "shape"], {})
    shape = fp.static_ints(b["shape"], "shape")
    args = [fp.expr(b["tensor"]), fp.scalar_expr(b["peer"]), fp.offsets(b["offsets"]), _ctx_of(fp, b["tensor"])]
    return _op(fp, "dist.remote_load", args, [("shape", "ints", shape)], node)


def _remote_store(fp: "FunctionParser", node: ast.Call) -> Any:
    b = fp.bind_args(node, "tile.remote_store", ["tile", "tensor", "peer", "offsets"], {})
    args = [fp.expr(b["tile"]), fp.expr(b["tensor"]), fp.scalar_expr(b["peer"]), fp.offsets(b["offsets"]), _ctx_of(fp, b["tensor"])]
    return _op(fp, "dist.remote_store", args, [], node)


def _enum_name(fp: "FunctionParser", node: Optional[ast.expr], default: str, names: Any) -> str:
    if node is None:
        return default
    v = fp.static(node)
    if not isinstance(v, enum.Enum) or v.name not in names:
        raise _err(fp, InvalidOperationError, node, f"expected one of {sorted(names)}", f"Write pld.{type(v).__name__}.X.")
    return str(names[v.name])


def _notify(fp: "FunctionParser", node: ast.Call) -> Any:
    b = fp.bind_args(node, "system.notify", ["signal", "peer", "offsets", "value", "op"], {"op": None})
    kind = _enum_name(fp, b.get("op"), "atomic_add", {"Set": "set", "AtomicAdd": "atomic_add"})
    args = [fp.expr(b["signal"]), fp.scalar_expr(b["peer"]), fp.offsets(b["offsets"]), fp.scalar_expr(b["value"]), _ctx_of(fp, b["signal"])]
    return _op(fp, "dist.notify", args, [("op", "str", kind)], node)


def _wait(fp: "FunctionParser", node: ast.Call) -> Any:
    b = fp.bind_args(node, "system.wait", ["signal", "offsets", "expected", "cmp"], {"cmp": None})
    cmp = _enum_name(fp, b.get("cmp"), "ge", {"Eq": "eq", "Ge": "ge"})
    args = [fp.expr(b["signal"]), fp.offsets(b["offsets"]), fp.scalar_expr(b["expected"])]
    return _op(fp, "dist.wait", args, [("cmp", "str", cmp)], node)


def _copy(op: str) -> Any:
    def lower(fp: "FunctionParser", node: ast.Call) -> Any:
        spec = ["dst", "peer", "src", "atomic"] if op == "put" else ["dst", "peer", "src"]
        b = fp.bind_args(node, f"tensor.{op}", spec, {"atomic": None})
        kwargs: List[Any] = []
        if op == "put":
            mode = _enum_name(fp, b.get("atomic"), "atomic_none", {"None_": "atomic_none", "Add": "atomic_add"})
            kwargs.append(("atomic", "str", mode))
        # The peer's side carries the comm context: dst of a put, src of a get.
        ctx = _ctx_of(fp, b["dst"] if op == "put" else b["src"])
        args = [fp.expr(b["dst"]), fp.scalar_expr(b["peer"]), fp.expr(b["src"]), ctx]
        return _op(fp, f"dist.{op}", args, kwargs, node)

    return lower


_BARRIER = """
for __b_peer in pl.range(__b_n):
    if __b_peer != __b_me:
        pld.system.notify(SIG, peer=__b_peer, offsets=[__b_me, 0], value=1, op=pld.NotifyOp.AtomicAdd)
for __b_src in pl.range(__b_n):
    if __b_src != __b_me:
        pld.system.wait(SIG, offsets=[__b_src, 0], expected=1, cmp=pld.WaitCmp.Ge)
"""


def _barrier(fp: "FunctionParser", node: ast.Call) -> Any:
    """``pld.tensor.barrier(signal)`` in a kernel: every rank adds 1 to its row of each
    peer's ``[n, 1]`` INT32 signal, then waits until every peer's row of its own is at
    least 1 (one rendezvous per run: the window is zeroed when the run allocates it)."""
    b = fp.bind_args(node, "tensor.barrier", ["signal"], {})
    sig = b["signal"]
    if not isinstance(sig, ast.Name):
        raise _err(fp, InvalidOperationError, sig, "pld.tensor.barrier takes a signal parameter", "Write pld.tensor.barrier(signal).")
    ctx = _ctx_of(fp, sig)
    me = fp.atom(_op(fp, "dist.rank", [ctx], [], node), node, "rank")
    n = fp.atom(_op(fp, "dist.nranks", [ctx], [], node), node, "nranks")
    fp.names["__b_me"], fp.names["__b_n"] = me.as_var, n.as_var
    tree = ast.parse(_BARRIER.replace("SIG", sig.id))
    for stmt in tree.body:
        for sub in ast.walk(stmt):
            ast.copy_location(sub, node)
            setattr(sub, "end_lineno", getattr(node, "end_lineno", None))
            setattr(sub, "end_col_offset", getattr(node, "end_col_offset", None))
        fp.stmt(stmt)
    return fp.expr(sig)


_KERNEL_OPS = {
    "get_comm_ctx": _get_comm_ctx,
    "system.get_comm_ctx": _get_comm_ctx,
    "rank": _rank_of("rank"),
    "nranks": _rank_of("nranks"),
    "tile.remote_load": _remote_load,
    "tile.remote_store": _remote_store,
    "system.notify": _notify,
    "system.wait": _wait,
    "tensor.barrier": _barrier,
    "tensor.put": _copy("put"),
    "tensor.get": _copy("get"),
}
