"""Reading a ``golden.py``'s inputs without running it: :func:`static_inputs`.

The scripts pto-examples and ir.compile(inputs=, golden=) write load every input with
`np.load(_DATA_DIR / "in" / "<name>.npy")`, make pure outputs with `np.zeros(shape,
dtype=np.<type>)` and scalars with `ctypes.c_<type>(<literal>)`. When a golden.py has only
that shape, its inputs are read natively (pypto._native.HostArray) instead of running it,
which would import NumPy; anything else runs the script as before.

The replay's command line reads it, so this module imports neither ``ast`` (it parses with
``compile(..., _ast.PyCF_ONLY_AST)``, what ``ast.parse`` calls, and evaluates literals as
``ast.literal_eval`` does) nor ``pathlib`` nor ``typing``: they cost milliseconds at start-up.
"""

from __future__ import annotations

import _ast as ast
import os

from pypto import _native
from pypto._dtypes import CTYPES_CLASSES, NUMPY_ATTR_TO_PYPTO

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Set, Tuple, Union

    PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["static_inputs"]

_NUMPY_TO_PYPTO = NUMPY_ATTR_TO_PYPTO
#: The ctypes classes a recognised scalar may be made with: the element types' and c_double.
_CTYPES_SCALARS = CTYPES_CLASSES | {"c_double"}
#: Imports a recognised golden.py may have (skipping them has no effect on its inputs).
_ALLOWED_IMPORTS = {("numpy", "np"), ("ctypes", None)}
_ALLOWED_FROM_IMPORTS = {("pathlib", "Path", None), ("__future__", "annotations", None)}


class _NotStatic(Exception):
    """golden.py is not of the recognised shape: run it."""


def _is_name(node: Any, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _is_attr(node: Any, value: str, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and _is_name(node.value, value)


def _number(node: Any, signed: bool) -> Any:
    """A number literal (``ast.literal_eval``'s rule: an int, float or complex constant,
    with ``signed`` also one under a unary ``+`` / ``-``)."""
    if signed and isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        value = _number(node.operand, False)
        return +value if isinstance(node.op, ast.UAdd) else -value
    if not isinstance(node, ast.Constant) or type(node.value) not in (int, float, complex):
        raise _NotStatic
    return node.value


def _literal_value(node: Any) -> Any:
    """The value of a literal, accepting exactly what ``ast.literal_eval`` accepts."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(map(_literal_value, node.elts))
    if isinstance(node, ast.List):
        return list(map(_literal_value, node.elts))
    if isinstance(node, ast.Set):
        return set(map(_literal_value, node.elts))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "set":
        if not node.args and not node.keywords:
            return set()
    if isinstance(node, ast.Dict):
        if len(node.keys) != len(node.values):
            raise _NotStatic
        return dict(zip(map(_literal_value, node.keys), map(_literal_value, node.values)))
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left = _number(node.left, True)
        right = _number(node.right, False)
        if isinstance(left, (int, float)) and isinstance(right, complex):
            return left + right if isinstance(node.op, ast.Add) else left - right
    return _number(node, True)


def _literal(node: Any) -> Any:
    try:
        return _literal_value(node)
    except (ValueError, TypeError, MemoryError, RecursionError):
        raise _NotStatic from None


def _is_data_dir(v: Any) -> bool:
    """``Path(__file__).parent / "data"``."""
    if not (isinstance(v, ast.BinOp) and isinstance(v.op, ast.Div)):
        return False
    parent, data = v.left, v.right
    if not (isinstance(data, ast.Constant) and data.value == "data"):
        return False
    if not (isinstance(parent, ast.Attribute) and parent.attr == "parent"):
        return False
    call = parent.value
    return (
        isinstance(call, ast.Call)
        and _is_name(call.func, "Path")
        and not call.keywords
        and len(call.args) == 1
        and _is_name(call.args[0], "__file__")
    )


def _check_module(tree: Any) -> Tuple[Any, Optional[str], Set[str]]:
    """``(generate_inputs, data-directory variable, imported names)`` of a module whose top
    level has no effect but binding names, each once (``_NotStatic`` otherwise)."""
    generate = None
    data_dir: Optional[str] = None
    bound: Set[str] = set()
    imported: Set[str] = set()

    def bind(name: str) -> None:
        if name in bound:
            raise _NotStatic
        bound.add(name)

    for i, node in enumerate(tree.body):
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.Import):
            for a in node.names:
                if (a.name, a.asname) not in _ALLOWED_IMPORTS:
                    raise _NotStatic
                bind(a.asname or a.name)
                imported.add(a.asname or a.name)
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if node.level or (node.module, a.name, a.asname) not in _ALLOWED_FROM_IMPORTS:
                    raise _NotStatic
                if node.module != "__future__":
                    bind(a.name)
                    imported.add(a.name)
        elif isinstance(node, ast.FunctionDef):
            if node.decorator_list or node.args.defaults or node.args.kw_defaults or node.returns:
                raise _NotStatic
            if any(a.annotation is not None for a in node.args.args):
                raise _NotStatic
            bind(node.name)
            if node.name == "generate_inputs":
                generate = node
        elif isinstance(node, ast.Assign):
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                raise _NotStatic
            name = node.targets[0].id
            if _is_data_dir(node.value):
                if "Path" not in imported or data_dir is not None:
                    raise _NotStatic
                data_dir = name
            else:
                _literal(node.value)
            bind(name)
        else:
            raise _NotStatic
    if generate is None:
        raise _NotStatic
    return generate, data_dir, imported


def _input_file(node: Any, data_dir: Optional[str]) -> str:
    """``DATA / "in" / "<file>.npy"``: the file name."""
    if data_dir is None or not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        raise _NotStatic
    inner, leaf = node.left, node.right
    if not (isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Div) and _is_name(inner.left, data_dir)):
        raise _NotStatic
    if not (isinstance(inner.right, ast.Constant) and inner.right.value == "in"):
        raise _NotStatic
    if not (isinstance(leaf, ast.Constant) and isinstance(leaf.value, str)):
        raise _NotStatic
    name = leaf.value
    if not name.endswith(".npy") or "/" in name or "\\" in name or name.startswith("."):
        raise _NotStatic
    return name


def _native_value(node: Any, work_dir: PathLike, data_dir: Optional[str], imported: Set[str]) -> Any:
    """The value of one recognised ``generate_inputs`` assignment."""
    if not isinstance(node, ast.Call):
        raise _NotStatic
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id not in imported:
        raise _NotStatic  # the script would fail with a NameError
    if _is_attr(func, "np", "load") and len(node.args) == 1 and not node.keywords:
        path = os.path.join(work_dir, "data", "in", _input_file(node.args[0], data_dir))
        try:
            return _native.HostArray.load(path)
        except (OSError, ValueError):
            raise _NotStatic from None  # golden.py says what is wrong, as before
    if _is_attr(func, "np", "zeros") and len(node.args) == 1 and len(node.keywords) == 1:
        shape = _literal(node.args[0])
        kw = node.keywords[0]
        if kw.arg != "dtype" or not isinstance(kw.value, ast.Attribute) or not _is_name(kw.value.value, "np"):
            raise _NotStatic
        dtype = _NUMPY_TO_PYPTO.get(kw.value.attr)
        if dtype is None or not isinstance(shape, tuple) or not all(type(d) is int and d >= 0 for d in shape):
            raise _NotStatic
        try:
            return _native.HostArray.zeros(dtype, list(shape))
        except ValueError:
            raise _NotStatic from None
    if isinstance(func, ast.Attribute) and _is_name(func.value, "ctypes") and func.attr in _CTYPES_SCALARS:
        if len(node.args) != 1 or node.keywords:
            raise _NotStatic
        value = _literal(node.args[0])
        if type(value) not in (int, float, bool):
            raise _NotStatic
        import ctypes

        try:
            return getattr(ctypes, func.attr)(value)
        except TypeError:
            raise _NotStatic from None
    raise _NotStatic


def _inputs(source: str, work_dir: PathLike) -> List[Tuple[str, Any]]:
    try:
        tree = compile(source, "<unknown>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise _NotStatic from None
    generate, data_dir, imported = _check_module(tree)
    args = generate.args
    if len(args.args) != 1 or args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg:
        raise _NotStatic
    # A local of one of these names would shadow the global the calls read.
    shadowed = imported | ({data_dir} if data_dir is not None else set())
    if args.args[0].arg in shadowed:
        raise _NotStatic
    body = list(generate.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if not body or not isinstance(body[-1], ast.Return):
        raise _NotStatic
    values: Dict[str, Any] = {}
    for stmt in body[:-1]:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            raise _NotStatic
        if stmt.targets[0].id in shadowed:
            raise _NotStatic
        values[stmt.targets[0].id] = _native_value(stmt.value, work_dir, data_dir, imported)
    returned = body[-1].value
    if not isinstance(returned, (ast.List, ast.Tuple)):
        raise _NotStatic
    out: List[Tuple[str, Any]] = []
    for item in returned.elts:
        if not (isinstance(item, ast.Tuple) and len(item.elts) == 2):
            raise _NotStatic
        key, var = item.elts
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            raise _NotStatic
        if not (isinstance(var, ast.Name) and var.id in values):
            raise _NotStatic
        out.append((key.value, values[var.id]))
    return out


def static_inputs(source: str, work_dir: PathLike) -> Optional[List[Tuple[str, Any]]]:
    """The ``(name, value)`` pairs ``generate_inputs`` of the golden.py ``source`` (in
    ``work_dir``) returns, read natively, or ``None`` when the script must run (see
    :func:`pypto._golden.native_inputs_from_golden`)."""
    try:
        return _inputs(source, work_dir)
    except _NotStatic:
        return None
