"""``Program``: a parsed DSL program (PyPTO's ``ir.Program``), and the IR classes of the
native module under PyPTO's names (``ir.Var``, ``ir.Expr``, ...).

A program prints as DSL source (:meth:`Program.as_python`) that :func:`pypto.language.parse`
reads back into a structurally equal program (:meth:`Program.structural_equal`).
"""

from __future__ import annotations

from typing import Dict, List, Optional

from pypto import _native

__all__ = ["Expr", "Function", "Program", "Stmt", "Type", "Var", "pass_names"]

#: A variable: an identity with a name hint and a type (``ir.Var``).
Var = _native.IrVar
#: An expression.
Expr = _native.IrExpr
#: A statement.
Stmt = _native.IrStmt
#: A value type.
Type = _native.IrType
#: A function.
Function = _native.IrFunction


def pass_names() -> List[str]:
    """The passes of the pipeline, in order."""
    return list(_native.pass_names())


class Program:
    """A DSL program: what ``@pl.program``, ``pl.parse`` and ``@pl.jit(...).lower()`` give."""

    def __init__(self, native: _native.IrProgram) -> None:
        self._native = native

    @property
    def native(self) -> _native.IrProgram:
        """The native IR."""
        return self._native

    @property
    def name(self) -> str:
        """The program (class) name."""
        return self._native.name

    @property
    def functions(self) -> Dict[str, _native.IrFunction]:
        """The functions by name, sorted by name as PyPTO's ``Program.functions`` (a map
        keyed by name) is: iterate ``.values()`` for the functions. ``native.functions``
        keeps definition order."""
        return {f.name: f for f in sorted(self._native.functions, key=lambda f: f.name)}

    def function(self, name: str) -> _native.IrFunction:
        """The function named ``name`` (``KeyError`` when absent)."""
        for f in self._native.functions:
            if f.name == name:
                return f
        raise KeyError(f"no function {name!r} in program {self.name}; functions: {list(self.functions)}")

    def get_function(self, name: str) -> Optional[_native.IrFunction]:
        """The function named ``name``, or ``None`` (PyPTO's ``Program.get_function``)."""
        return self.functions.get(name)

    def as_python(self, header: str = "IR printed by pypto.ir") -> str:
        """The program as DSL source."""
        return self._native.as_python(header)

    def structural_equal(self, other: "Program") -> bool:
        """Equal up to the renaming of variables."""
        return self._native.difference(other._native) is None

    def assert_structural_equal(self, other: "Program") -> None:
        """Raises ``AssertionError`` naming the first difference."""
        diff = self._native.difference(other._native)
        if diff is not None:
            raise AssertionError(f"Structural equality assertion failed: {diff}")

    def run_pass(self, name: str) -> "Program":
        """This program after pass ``name`` alone (see :func:`pass_names`)."""
        return Program(self._native.run_pass(name))

    def run_passes(self, dump_dir: Optional[str] = None) -> "Program":
        """This program after the whole pipeline; with ``dump_dir``, the ``passes_dump``
        snapshots are written there."""
        return Program(self._native.run_passes(dump_dir))

    def __str__(self) -> str:
        return self.as_python()

    def __repr__(self) -> str:
        return f"Program({self.name}, functions={list(self.functions)})"
