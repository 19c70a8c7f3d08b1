"""Tile operations and forms PyPTO's programs use beyond the first subset: ``pl.concat``,
``pl.create_tile`` (a scratch tile for the row reductions), ``pl.reshape`` of a tile, and
a local ``pl.Tile[[r, c], dtype]`` annotation naming no memory space (the accumulator of
``pl.matmul_acc``). Each program is compiled, run on the simulator and checked against
NumPy; the op tables of the IR, ptoas and the front end are checked to agree."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import _native
from pypto.language.errors import InvalidOperationError


@pl.jit
def concat_cols(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        joined: pl.Tile[[16, 48], pl.FP32] = pl.concat(pl.load(a, [0, 0], [16, 32]), pl.load(b, [0, 0], [16, 16]))
        pl.store(joined, [0, 0], c)
    return c


@pl.jit
def row_scale(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    """out = x / (sum of the row, scaled through a [1, r] reshape of the [r, 1] column)."""
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        scratch = pl.create_tile([16, 32], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        s: pl.Tile[[16, 1], pl.FP32] = pl.row_sum(t, scratch)
        s_row = pl.reshape(s, [1, 16])
        s_row = pl.mul(s_row, 0.5)
        s = pl.reshape(s_row, [16, 1])
        pl.store(pl.row_expand_div(t, s), [0, 0], out)
    return out


@pl.jit
def matmul_two_chunks(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        l0 = pl.move(pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        r0 = pl.move(pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
        acc: pl.Tile[[16, 16], pl.FP32] = pl.matmul(l0, r0)
        l1 = pl.move(pl.load(a, [0, 16], [16, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        r1 = pl.move(pl.load(b, [16, 0], [16, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
        acc = pl.matmul_acc(acc, l1, r1)
        pl.store(acc, [0, 0], c)
    return c


@pytest.fixture(autouse=True)
def _build_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))


def test_concat_joins_columns() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((16, 16)).astype(np.float32)
    c = np.zeros((16, 48), np.float32)
    concat_cols(a, b, c)
    np.testing.assert_array_equal(c, np.concatenate([a, b], axis=1))


def test_create_tile_scratch_and_tile_reshape() -> None:
    x = np.random.default_rng(2).uniform(1.0, 2.0, (16, 32)).astype(np.float32)
    out = np.zeros_like(x)
    row_scale(x, out)
    np.testing.assert_allclose(out, x / (x.sum(axis=1, keepdims=True) * 0.5), rtol=1e-5, atol=1e-6)


def test_unannotated_memory_tile_accepts_the_accumulator() -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((32, 16)).astype(np.float32)
    c = np.zeros((16, 16), np.float32)
    matmul_two_chunks(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_the_new_ops_interpret_as_they_run(tmp_path: Path) -> None:
    """The IR interpreter agrees with the chip at every pass snapshot."""
    from pypto import ir

    a = np.ones((16, 32), np.float32)
    b = np.full((16, 16), 2.0, np.float32)
    c = np.zeros((16, 48), np.float32)
    compiled = ir.compile(concat_cols.lower(a, b, c), output_dir=str(tmp_path / "cc"))
    compiled.validate_ir({"a": a, "b": b, "c": c}, {"c": np.concatenate([a, b], axis=1)})


def test_bad_uses_name_the_construct_and_the_fix() -> None:
    src = (
        "import pypto.language as pl\n"
        "@pl.program\n"
        "class P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:\n"
        "        t = pl.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Left)\n"
        "        return pl.store(pl.concat(t, t), [0, 0], c)\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def o(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:\n"
        "        return self.k(a, c)\n"
    )
    with pytest.raises(InvalidOperationError) as e:
        pl.parse(src, filename="bad.py")
    assert e.value.span["line"] == 6
    assert "create_tile(target_memory=pl.MemorySpace.Left)" in str(e.value)
    assert "target_memory=pl.MemorySpace.Vec" in e.value.hint
    bad_concat = src.replace(
        "t = pl.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Left)",
        "t = pl.load(a, [0, 0], [16, 16])\n        u = pl.load(a, [0, 0], [8, 16])",
    ).replace("pl.concat(t, t)", "pl.concat(t, u)")
    with pytest.raises(InvalidOperationError, match="same rows"):
        pl.parse(bad_concat, filename="bad.py")


def test_every_front_end_tile_op_is_in_the_ir_table() -> None:
    """Every tile op the front end spells lowers to an IR op of ``pto_ir::ops::OPS`` (whose
    PTO instruction ptoas lowers: ``every_tile_op_lowers_in_ptoas`` in the crate)."""
    ir_ops = {n for n, level in _native.op_names() if level == "tile"}
    spelled_as = {"create_tile": "tile.full"}
    for op in (*pl._TILE_OPS, "reshape"):
        name = spelled_as.get(op, f"tile.{op}")
        assert name in ir_ops, f"pl.{op}: {name} missing from the IR's OPS"


@pl.program
class ScalarFirst:
    """A kernel that declares its scalar before its tensors (the payload still carries the
    tensors first)."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add_scalar(
        self,
        k: pl.Scalar[pl.FP32],
        a: pl.Tensor[[16, 32], pl.FP32],
        out: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ) -> pl.Tensor[[16, 32], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [16, 32]), k), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self, a: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]
    ) -> pl.Tensor[[16, 32], pl.FP32]:
        out = self.kernel_add_scalar(2.5, a, out)
        return out


def test_a_scalar_declared_before_the_tensors(tmp_path: Path) -> None:
    from pypto import ir

    a = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    out = np.zeros_like(a)
    ir.compile(ScalarFirst, output_dir=str(tmp_path / "sf"), dump_passes=False)(a, out)
    np.testing.assert_array_equal(out, a + 2.5)
