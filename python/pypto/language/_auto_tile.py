"""Matmuls larger than the cube buffers, tiled by the front end (PyPTO's ``AutoTileMatmulL0``
semantics, ``advanced/02_auto_tile_matmul``).

In kernel code (a kernel body or a ``pl.at`` scope) ``c = pl.matmul(a, b)`` whose left
operand exceeds L0A, right operand L0B or result L0C is not computed where it is written:
``c`` names a :class:`TiledMatmul`, and each use decides where the ``[m, n]`` sub-tiles go:

* ``pl.assemble(t, c, [r, col])`` / ``pl.store(c, [r, col], t)`` into a tensor: every
  sub-tile is accumulated over K in L0C and stored straight to its window of ``t``;
* ``pl.matmul(c, x)`` (or ``x`` on the left): every sub-tile is written into one Mat scratch
  tile (an Acc -> Mat ``tile.assemble``), which the next matmul reads on-chip;
* ``pl.cast(c, pl.BF16, mode="rint")``: the scratch is narrowed on the way (the cube's
  FIXPIPE write-back rounds to nearest even), so the cast costs no vector work.

Any other use of ``c`` is refused naming the construct. Sub-tile sizes are the largest
multiples of 16 dividing ``M``, ``N``, ``K`` whose Left, Right and Acc tiles fit; the grid
is written out statement by statement.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

from pypto._dtypes import ELEMENT_TYPES
from pypto._native import IrExpr

#: Capacities in bytes: L0A (Left), L0B (Right), L0C (Acc).
_LEFT_BYTES = 64 << 10
_RIGHT_BYTES = 64 << 10
_ACC_BYTES = 128 << 10
#: The most matmul instructions one tiled matmul writes out.
_MAX_STEPS = 512
#: Bytes per element by member name (the element-type table).
_SIZES = {t.member: t.bits // 8 for t in ELEMENT_TYPES if t.c_type}


@dataclass
class TiledMatmul:
    """A matmul result too large for the cube buffers: its operands (tensors or Mat tiles,
    as IR expressions), its shape, and the dtype a ``pl.cast(..., mode="rint")`` narrows it
    to (``None``: the accumulator's)."""

    lhs: Any
    rhs: Any
    m: int
    k: int
    n: int
    acc_dtype: str
    cast_dtype: Optional[str] = None
    scratch: Optional[Any] = field(default=None)

    @property
    def dtype(self) -> str:
        return self.cast_dtype or self.acc_dtype


def _shape(e: Any) -> Tuple[int, int]:
    shape = [int(d) for d in (e.type.shape or [])]
    return (shape[0], shape[1]) if len(shape) == 2 else (-1, -1)


def oversized(lhs: Any, rhs: Any) -> bool:
    """Whether ``lhs @ rhs`` (rank-2 tensors or Mat tiles) exceeds L0A, L0B or L0C."""
    (m, k), (_, n) = _shape(lhs), _shape(rhs)
    if m <= 0 or n <= 0 or k <= 0:
        return False
    a, b = _SIZES.get(str(lhs.type.dtype), 4), _SIZES.get(str(rhs.type.dtype), 4)
    return m * k * a > _LEFT_BYTES or k * n * b > _RIGHT_BYTES or m * n * 4 > _ACC_BYTES


def _divisors16(n: int) -> List[int]:
    return sorted((d for d in range(16, n + 1, 16) if n % d == 0), reverse=True) or [n]


def plan(t: TiledMatmul) -> Optional[Tuple[int, int, int]]:
    """The sub-tile ``(m, n, k)``: the largest ``m * n`` (then ``k``) whose tiles take at most
    half of each buffer (so the next step's tiles fit beside them), or ``None``."""
    a, b = _SIZES.get(str(t.lhs.type.dtype), 4), _SIZES.get(str(t.rhs.type.dtype), 4)
    best: Optional[Tuple[int, int, int]] = None
    for m in _divisors16(t.m):
        for n in _divisors16(t.n):
            if 2 * m * n * 4 > _ACC_BYTES or (best is not None and m * n < best[0] * best[1]):
                continue
            ks = [k for k in _divisors16(t.k) if 2 * m * k * a <= _LEFT_BYTES and 2 * k * n * b <= _RIGHT_BYTES]
            if ks and (best is None or (m * n, ks[0]) > (best[0] * best[1], best[2])):
                best = (m, n, ks[0])
    return best


def _zeros() -> Any:
    return IrExpr.list_of([IrExpr.const_int(0), IrExpr.const_int(0)])


def _at(r: int, c: int) -> Any:
    return IrExpr.list_of([IrExpr.const_int(r), IrExpr.const_int(c)])


class AutoTiler:
    """Writes the sub-tile grid of :class:`TiledMatmul` values for one :class:`FunctionParser`
    (``p``), through its ``op_call_ir`` / ``atom``."""

    def __init__(self, p: Any) -> None:
        self.p = p

    def operand(self, src: Any, r0: int, c0: int, rows: int, cols: int, side: str, node: ast.AST) -> Any:
        """The ``[rows, cols]`` window at ``(r0, c0)`` of ``src`` in the ``side`` buffer."""
        p = self.p
        if src.type.kind == "tensor":
            mat = p.atom(
                p.op_call_ir("tile.load", [src, _at(r0, c0)], [("shapes", "ints", [rows, cols]), ("target_memory", "memory", "Mat")], node),
                node,
                "t",
            )
        elif _shape(src) == (rows, cols):
            mat = src
        else:
            mat = p.atom(p.op_call_ir("tile.slice", [src, _at(r0, c0)], [("shape", "ints", [rows, cols])], node), node, "t")
        return p.atom(p.op_call_ir("tile.move", [mat], [("target_memory", "memory", side)], node), node, "t")

    def grid(self, t: TiledMatmul, node: ast.AST) -> List[Tuple[int, int, Tuple[int, int, int]]]:
        """Each ``(row, col, (m, n, k))``: the origin of one ``[m, n]`` sub-tile of the result."""
        p = self.p
        sizes = plan(t)
        if sizes is None:
            raise p.operr(node, f"pl.matmul of [{t.m}, {t.k}] @ [{t.k}, {t.n}]: no sub-tile fits L0A / L0B / L0C", "Use dimensions that are multiples of 16.")
        m, n, k = sizes
        if (t.m // m) * (t.n // n) * (t.k // k) > _MAX_STEPS:
            raise p.operr(
                node,
                f"pl.matmul of [{t.m}, {t.k}] @ [{t.k}, {t.n}] needs more than {_MAX_STEPS} cube steps when tiled",
                "Split the matmul over several kernels (a pl.parallel loop of pl.at scopes over output windows).",
            )
        return [(r, c, sizes) for r in range(0, t.m, m) for c in range(0, t.n, n)]

    def subtile(self, t: TiledMatmul, r: int, c: int, sizes: Tuple[int, int, int], node: ast.AST) -> Any:
        """The accumulator of the ``[m, n]`` sub-tile at ``(r, c)``, summed over K."""
        p = self.p
        m, n, k = sizes
        acc: Optional[Any] = None
        for kk in range(0, t.k, k):
            left = self.operand(t.lhs, r, kk, m, k, "Left", node)
            right = self.operand(t.rhs, kk, c, k, n, "Right", node)
            if acc is None:
                call = p.op_call_ir("tile.matmul", [left, right], [], node)
            else:
                call = p.op_call_ir("tile.matmul_acc", [acc, left, right], [], node)
            acc = p.atom(call, node, "acc")
        assert acc is not None
        return acc

    def store(self, t: TiledMatmul, target: Any, offsets: List[int], node: ast.AST) -> Any:
        """Every sub-tile stored to its window of ``target`` at ``offsets`` as soon as it is
        summed; returns the last store (the value the statement binds)."""
        if t.cast_dtype is not None:
            raise self.p.operr(
                node,
                f"storing a pl.cast(..., {t.cast_dtype}) of a tiled matmul result",
                "Store the accumulator's dtype (assemble the matmul result itself), or feed the cast to another pl.matmul.",
            )
        cells = self.grid(t, node)
        for i, (r, c, sizes) in enumerate(cells):
            acc = self.subtile(t, r, c, sizes, node)
            expr = self.p.op_call_ir("tile.store", [acc, _at(offsets[0] + r, offsets[1] + c), target], [], node)
            if i + 1 == len(cells):
                return expr
            self.p.atom(expr, node, "st")
        raise AssertionError("a tiled matmul has at least one sub-tile")

    def scratch(self, t: TiledMatmul, node: ast.AST) -> Any:
        """The result in one Mat tile (written once, on first use)."""
        if t.scratch is not None:
            return t.scratch
        p = self.p
        tile = p.atom(
            p.op_call_ir("tile.alloc", [], [("shape", "ints", [t.m, t.n]), ("dtype", "dtype", t.dtype), ("target_memory", "memory", "Mat")], node),
            node,
            "scratch",
        )
        for r, c, sizes in self.grid(t, node):
            acc = self.subtile(t, r, c, sizes, node)
            tile = p.atom(p.op_call_ir("tile.assemble", [tile, acc, _at(r, c)], [], node), node, "scratch")
        t.scratch = tile
        return tile

    def fold_cast(self, acc: Any, dtype: str, node: ast.AST) -> Any:
        """``pl.cast(acc, dtype, mode="rint")`` of an accumulator in a scope: the cast on the
        cube's write-back into a Mat tile (the fold PyPTO's auto-tiler makes)."""
        p = self.p
        rows, cols = _shape(acc)
        tile = p.atom(
            p.op_call_ir("tile.alloc", [], [("shape", "ints", [rows, cols]), ("dtype", "dtype", dtype), ("target_memory", "memory", "Mat")], node),
            node,
            "scratch",
        )
        return p.op_call_ir("tile.assemble", [tile, acc, _zeros()], [], node)
