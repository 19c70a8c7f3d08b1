"""Scopes holding cube and vector work (PyPTO's mixed kernels, ``advanced/03_mixed_kernel``)
and tiles used after their scope: ``OutlineIncoreScopes`` splits a mixed ``pl.at`` scope
into a cube kernel and a vector kernel, and hands an accumulator or vector tile to a later
scope through a workspace tensor. ``pl.at(optimizations=[pl.split(...),
pl.cross_core_slot(...)])`` is kept on the scope. The programs are compiled, run on the
simulator and checked against NumPy; the forms the split cannot take are refused naming
the construct."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.backend.pto_backend import PartialCodegenError
from pypto.runtime import RunConfig

M, K, N = 64, 128, 64


@pl.jit
def mixed_scope(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(
        level=pl.Level.CORE_GROUP,
        optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=2)],
        name_hint="mm_bias",
    ):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
        out[:] = pl.mul(pl.add(acc, bias), 0.5)
    return out


@pl.jit
def staged_scopes(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cube"):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="vec1"):
        shifted = pl.add(acc, bias)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="vec2"):
        out[:] = pl.exp(pl.mul(shifted, 0.01))
    return out


@pl.jit
def matmul_before_loop(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_loop"):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
        total = pl.full([M, N], dtype=pl.FP32, value=0.5)
        for i in pl.range(3):
            total = pl.add(total, acc)
        out[:] = total
    return out


@pl.jit
def acc_into_mat(x: pl.Tensor, a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    """A matmul result assembled into the right half of a Mat tile, which is moved to the
    vector buffer and stored: the Mat tile is handed from the cube kernel to the vector one."""
    with pl.at(level=pl.Level.CORE_GROUP):
        tx = pl.load(x, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        ta = pl.move(pl.load(a, [0, 0], [32, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        tb = pl.move(pl.load(b, [0, 0], [16, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        merged = pl.tile.assemble(tx, pl.matmul(ta, tb), [0, 16])
        pl.store(pl.move(merged, target_memory=pl.Mem.Vec), [0, 0], y)
    return y


def _operands() -> tuple:
    rng = np.random.default_rng(31)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    bias = rng.standard_normal((M, N)).astype(np.float32)
    return a, b, bias, a.astype(np.float32) @ b.astype(np.float32)


def test_a_mixed_scope_runs_as_a_cube_kernel_and_a_vector_kernel(tmp_path: Path) -> None:
    a, b, bias, ab = _operands()
    out = np.zeros((M, N), np.float32)
    mixed_scope(a, b, bias, out, config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / "b")))
    np.testing.assert_allclose(out, (ab + bias) * 0.5, rtol=1e-3, atol=1e-3)
    build = tmp_path / "b"
    assert [p.name for p in (build / "kernels" / "aic").glob("*.cpp")] == ["mm_bias_aic.cpp"]
    assert [p.name for p in (build / "kernels" / "aiv").glob("*.cpp")] == ["mm_bias_aiv.cpp"]
    program = mixed_scope.front_end(a, b, bias, out)
    text = program.as_python()
    assert "optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=2)]" in text, text
    assert ir.serialize(pl.parse(text)) == ir.serialize(program)
    built = ir.compile(program, output_dir=str(tmp_path / "validate"))
    inputs = {"a": a, "b": b, "bias": bias, "out": np.zeros_like(out)}
    built.validate_ir(inputs, {"out": (ab + bias) * 0.5}, rtol=1e-3, atol=1e-3)


def test_accumulator_and_vector_tiles_used_by_later_scopes_are_handed_over(tmp_path: Path) -> None:
    a, b, bias, ab = _operands()
    out = np.zeros((M, N), np.float32)
    staged_scopes(a, b, bias, out, config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / "b")))
    expected = np.exp((ab + bias) * 0.01)
    np.testing.assert_allclose(out, expected, rtol=1e-3, atol=1e-3)
    cpp = next((tmp_path / "b" / "orchestration").glob("*.cpp")).read_text()
    # Two workspaces: the accumulator of 'cube' and the vector tile of 'vec1'.
    assert cpp.count("TensorCreateInfo") >= 2, cpp


@pl.jit
def blockwise_residual(a: pl.Tensor, b: pl.Tensor, res: pl.Tensor, out: pl.Out[pl.Tensor]):
    """out[:, n0:n0+32] = a @ b[:, n0:n0+32] + res[:, n0:n0+32], a mixed scope whose body is
    one loop over the column blocks (a cube K loop, then vector work, per block)."""
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)], name_hint="blk"):
        for j in pl.range(2):
            n0 = j * 32
            acc = pl.create_tensor([M, 32], dtype=pl.FP32)
            for kb in pl.range(K // 32):
                k0 = kb * 32
                ta = a[:, k0 : k0 + 32]
                tb = b[k0 : k0 + 32, n0 : n0 + 32]
                if k0 == 0:
                    acc = pl.matmul(ta, tb, out_dtype=pl.FP32)
                else:
                    acc = pl.matmul_acc(acc, ta, tb)
            out = pl.assemble(out, pl.add(acc, res[:, n0 : n0 + 32]), [0, n0])
    return out


def test_a_mixed_scope_of_one_loop_splits_per_iteration(tmp_path: Path) -> None:
    a, b, bias, ab = _operands()
    out = np.zeros((M, N), np.float32)
    blockwise_residual(a, b, bias, out, config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / "b")))
    np.testing.assert_allclose(out, ab + bias, rtol=1e-3, atol=1e-3)
    assert [p.name for p in (tmp_path / "b" / "kernels" / "aic").glob("*.cpp")] == ["blk_aic.cpp"]
    assert [p.name for p in (tmp_path / "b" / "kernels" / "aiv").glob("*.cpp")] == ["blk_aiv.cpp"]


def test_a_loop_holding_cube_and_vector_work_in_a_mixed_scope_is_refused(tmp_path: Path) -> None:
    @pl.program
    class LoopMixed:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[M, K], pl.FP16],
            b: pl.Tensor[[K, N], pl.FP16],
            out: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ) -> pl.Tensor[[M, N], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP):
                acc = pl.matmul(a, b, out_dtype=pl.FP32)
                for i in pl.range(2):
                    acc2 = pl.matmul(a, b, out_dtype=pl.FP32)
                    out[:] = pl.add(acc2, 1.0)
                out[:] = pl.add(acc, 2.0)
            return out

    with pytest.raises(PartialCodegenError, match="a loop or branch inside a pl.at scope that holds both cube and vector work") as e:
        ir.compile(LoopMixed, output_dir=str(tmp_path / "loop"))
    assert "two pl.at scopes" in (e.value.hint or "")


def test_an_accumulator_of_an_earlier_scope_used_as_a_cube_operand_is_refused(tmp_path: Path) -> None:
    @pl.program
    class AccAgain:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[M, K], pl.FP16],
            b: pl.Tensor[[K, N], pl.FP16],
            out: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ) -> pl.Tensor[[M, N], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP):
                acc = pl.matmul(a, b, out_dtype=pl.FP32)
            with pl.at(level=pl.Level.CORE_GROUP):
                ta = pl.move(pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
                tb = pl.move(pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
                acc2 = pl.matmul_acc(acc, ta, tb)
                out = pl.store(acc2, [0, 0], out)
            return out

    with pytest.raises(PartialCodegenError, match="accumulator tile 'acc' of an earlier pl.at scope is used here as a cube operand"):
        ir.compile(AccAgain, output_dir=str(tmp_path / "acc"))


def test_a_matmul_before_a_loop_read_by_vector_code_in_the_loop(tmp_path: Path) -> None:
    a, _, _, _ = _operands()
    b = np.random.default_rng(5).standard_normal((K, N)).astype(np.float16)
    out = np.zeros((M, N), np.float32)
    matmul_before_loop(a, b, out, config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / "b")))
    want = 0.5 + 3 * (a.astype(np.float32) @ b.astype(np.float32))
    np.testing.assert_allclose(out, want, rtol=1e-3, atol=1e-2)
    assert [p.name for p in (tmp_path / "b" / "kernels" / "aic").glob("*.cpp")] == ["mm_loop_aic.cpp"]
    assert [p.name for p in (tmp_path / "b" / "kernels" / "aiv").glob("*.cpp")] == ["mm_loop_aiv.cpp"]


def test_an_accumulator_sliced_in_a_loop_is_refused_naming_the_workaround(tmp_path: Path) -> None:
    @pl.program
    class SliceInLoop:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[M, K], pl.FP16],
            b: pl.Tensor[[K, N], pl.FP16],
            out: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ) -> pl.Tensor[[M, N], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP):
                acc = pl.matmul(a, b, out_dtype=pl.FP32)
                for i in pl.range(2):
                    part = pl.slice(acc, [32, N], [i * 32, 0])
                    out = pl.assemble(out, pl.add(part, 1.0), [i * 32, 0])
            return out

    with pytest.raises(PartialCodegenError, match="accumulator 'acc' is sliced inside a loop") as e:
        ir.compile(SliceInLoop, output_dir=str(tmp_path / "slice"))
    assert "pl.move(acc, target_memory=pl.Mem.Vec)" in (e.value.hint or "")
    assert e.value.span is not None and e.value.span["line"] > 0


def test_lower_names_a_mixed_scope_s_halves_as_pypto_does() -> None:
    a, b, bias, _ = _operands()
    program = blockwise_residual.lower(a, b, bias, np.zeros((M, N), np.float32))
    names = [f.name for f in program.functions.values()]
    assert names == sorted(names) and {"blk_aic", "blk_aiv"} <= set(names), names
    unnamed = matmul_unnamed.lower(a, b, np.zeros((M, N), np.float32))
    assert [(f.name, f.ftype) for f in unnamed.functions.values()] == [
        ("matmul_unnamed", "Orchestration"),
        ("matmul_unnamed_incore_0_aic", "AIC"),
        ("matmul_unnamed_incore_0_aiv", "AIV"),
    ]


@pl.jit
def matmul_unnamed(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
        out[:] = pl.mul(acc, 2.0)
    return out


def test_a_mat_tile_moved_to_the_vector_buffer_is_handed_over(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    x = rng.standard_normal((32, 32)).astype(np.float32)
    a = rng.standard_normal((32, 16)).astype(np.float16)
    b = rng.standard_normal((16, 16)).astype(np.float16)
    y = np.zeros((32, 32), np.float32)
    acc_into_mat(x, a, b, y, config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / "b")))
    want = x.copy()
    want[:, 16:] = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(y, want, rtol=1e-3, atol=1e-3)
    names = [f.name for f in acc_into_mat.lower(x, a, b, y).functions.values()]
    assert names == ["acc_into_mat", "acc_into_mat_incore_0_aic", "acc_into_mat_incore_0_aiv"], names
