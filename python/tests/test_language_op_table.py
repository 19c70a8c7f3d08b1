"""The DSL reads its operations from the Rust op table (``pto_ir::ops::OPS`` through
``_native.ops()``): the parser's dispatch tables and the ``pl`` namespace are derived from
it, no hand-kept copy of an op list comes back, and an operation the table lacks is a parser
error naming it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, List, Tuple

import numpy as np
import pytest

import pypto.language as pl
from pypto import _native
from pypto.language import _ops
from pypto.language import _parser as P
from pypto.language.errors import InvalidOperationError

PACKAGE = Path(pl.__file__).resolve().parent.parent

#: Literal collections of op names that are not copies of the op table: (file, name, why).
NOT_COPIES = {
    ("language/distributed.py", "system"): "pld.system's Python stubs; the parser maps each to its dist.* row",
}


def _op_words() -> set[str]:
    """Every IR name, IR name without its namespace, and DSL spelling of the table."""
    words = set()
    for r in _ops.ROWS:
        words.add(r["name"])
        words.add(str(r["name"]).split(".", 1)[1])
        words.update(r["dsl"])
    return words


def _literal_strings(node: ast.AST) -> List[str]:
    items: List[ast.expr | None] = []
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = list(node.elts)
    elif isinstance(node, ast.Dict):
        items = list(node.keys)
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]


def _assigned_collections(tree: ast.AST) -> Iterator[Tuple[str, int, ast.AST]]:
    """(assigned name, line, value) of every assignment of a literal collection."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            name = next((t.id for t in targets if isinstance(t, ast.Name)), "")
            for sub in ast.walk(node.value):
                yield name, node.lineno, sub


def test_no_hand_written_copies_of_the_op_lists() -> None:
    words = _op_words()
    copies = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for name, line, value in _assigned_collections(ast.parse(path.read_text())):
            strings = _literal_strings(value)
            hits = [s for s in strings if s in words]
            if len(hits) >= 3 and 2 * len(hits) >= len(strings) and (rel, name) not in NOT_COPIES:
                copies.append(f"{rel}:{line} {name} = {hits}")
    assert not copies, "hand-kept op lists (derive them from pypto.language._ops):\n" + "\n".join(copies)


def test_the_unified_tile_spellings_are_the_tables_printer_keywords() -> None:
    """``pl.tile.X`` spellings that are PyPTO's unified signature too, and the keyword the
    printer always writes for the IR form, are the op table's ``printer_keyword`` column."""
    assert _ops.PRINTER_KEYWORDS == {
        "load": "shapes", "full": "shape", "create_tile": "shape", "move": "target_memory", "cast": "dtype",
    }  # fmt: skip
    assert not hasattr(P, "_UNIFIED_TILE") and not hasattr(P, "_PRINTER_MARKERS")


def test_the_parser_and_the_namespace_read_the_table() -> None:
    rows = _native.ops()
    assert P._BINARY is _ops.BINARY and P._UNARY is _ops.UNARY and P._EXPANDS is _ops.EXPANDS
    assert {s for r in rows if r["level"] == "tile" for s in r["dsl"]} == set(pl._TILE_OPS)
    for r in rows:
        if r["kind"] == "binary":
            assert _ops.BINARY[r["dsl"][0]] == (r["name"], r["scalar"])
        if r["level"] == "tile":
            assert hasattr(pl.tile, _ops.python_name(str(r["name"])[len("tile.") :])), r["name"]
            assert r["cpp"] and r["pto"], r
    assert _ops.INFIX["+"] == "add" and _ops.SCALAR_OPERATOR["maximum"] == "max"


def test_the_unsupported_lists_name_no_op_of_the_table() -> None:
    spellings = {s for r in _ops.ROWS for s in r["dsl"]}
    assert not spellings & set(P._HEADER_LACKS), "an op the header lacks is in the table"
    assert not spellings & set(P._NOT_IN_SUBSET), "an op of the table is listed as unsupported"


def test_an_op_the_table_lacks_is_a_parser_error_naming_it_and_its_line() -> None:
    src = (
        "@pl.program\n"
        "class P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
        "        t = pl.load(a, [0, 0], [16, 16])\n"
        "        return pl.store(pl.frobnicate(t, t), [0, 0], c)\n"
    )
    with pytest.raises(InvalidOperationError) as e:
        pl.parse(src, filename="bad.py")
    assert e.value.span["line"] == 6
    assert "pl.frobnicate" in str(e.value)


@pl.jit
def bit_and(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    """out = (a & b & 0x0FF0) & 0x3C3C: ``pl.and_`` of two tiles, of a tile and a scalar,
    and the explicit scalar form ``pl.ands``."""
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 32])
        y = pl.load(b, [0, 0], [16, 32])
        pl.store(pl.ands(pl.and_(pl.and_(x, y), 0x0FF0), 0x3C3C), [0, 0], out)
    return out


def test_and_of_integer_tiles_runs_and_interprets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The op added by the recipe "Adding an elementwise tile op" (docs/ARCHITECTURE.md):
    compiled, run on the simulator, and interpreted at every pass snapshot."""
    from pypto import ir

    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    rng = np.random.default_rng(25)
    a = rng.integers(-(2**20), 2**20, (16, 32), dtype=np.int32)
    b = rng.integers(-(2**20), 2**20, (16, 32), dtype=np.int32)
    out = np.zeros_like(a)
    bit_and(a, b, out)
    want = a & b & 0x0FF0 & 0x3C3C
    np.testing.assert_array_equal(out, want)
    assert np.any(want != 0)
    compiled = ir.compile(bit_and.front_end(a, b, out), output_dir=str(tmp_path / "and"))
    compiled.validate_ir({"a": a, "b": b, "out": np.zeros_like(a)}, {"out": want})


def test_and_of_float_tiles_is_refused_naming_the_fix() -> None:
    src = (
        "@pl.program\n"
        "class P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
        "        t = pl.load(a, [0, 0], [16, 16])\n"
        "        return pl.store(pl.and_(t, t), [0, 0], c)\n"
    )
    with pytest.raises(InvalidOperationError, match="needs an integer tile") as e:
        pl.parse(src, filename="bad.py")
    assert e.value.span["line"] == 6
    assert "pl.INT32" in e.value.hint
