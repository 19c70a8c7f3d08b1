"""Matmuls larger than the cube buffers in kernel code (PyPTO's ``AutoTileMatmulL0``,
``advanced/02_auto_tile_matmul``): the front end tiles them into ``[m, n]`` sub-tiles summed
over K, stored straight to the assembled tensor, or written into a Mat scratch tile that the
next matmul reads (narrowed to bf16 on the way by ``pl.cast(..., mode="rint")``, the
cube's write-back rounding; the same fold applies to an accumulator that fits). The programs
are compiled, run on the simulator and checked against NumPy; other uses of a tiled result
are refused naming the construct."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.errors import InvalidOperationError
from pypto.runtime import RunConfig

torch = pytest.importorskip("torch")


@pl.jit
def ddr(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="ddr"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        out = pl.assemble(out, c, [0, 0])
    return out


@pl.jit
def chained(a: pl.Tensor, b: pl.Tensor, e: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="chained"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        cb = pl.cast(c, pl.BF16, mode="rint")
        d = pl.matmul(cb, e, out_dtype=pl.FP32)
        out = pl.assemble(out, d, [0, 0])
    return out


def _config(tmp_path: Path, name: str) -> RunConfig:
    return RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / name))


def test_a_matmul_larger_than_l0_is_stored_sub_tile_by_sub_tile(tmp_path: Path) -> None:
    torch.manual_seed(1)
    a, b = torch.randn(256, 128), torch.randn(128, 256)
    out = torch.zeros(256, 256)
    ddr(a, b, out, config=_config(tmp_path, "ddr"))
    assert torch.allclose(out, a @ b, rtol=1e-3, atol=1e-3)
    pto = next((tmp_path / "ddr" / "ptoas").glob("ddr*.pto")).read_text()
    assert pto.count("pto.tstore") > 1 and "pto.tmatmul.acc" in pto, pto
    program = ddr.front_end(a, b, out)
    built = ir.compile(program, output_dir=str(tmp_path / "validate"))
    inputs = {"a": a.numpy(), "b": b.numpy(), "out": np.zeros((256, 256), np.float32)}
    built.validate_ir(inputs, {"out": (a @ b).numpy()}, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("k", [64, 512])
def test_chained_matmuls_pass_the_narrowed_result_on_chip(tmp_path: Path, k: int) -> None:
    # K = 64: the [128, 128] accumulator fits and the cast folds into one Acc -> Mat write;
    # K = 512: the left operand exceeds L0A, so the first matmul is tiled over K.
    torch.manual_seed(2)
    a, b = torch.randn(128, k, dtype=torch.bfloat16), torch.randn(k, 128, dtype=torch.bfloat16)
    e = torch.randn(128, 64, dtype=torch.bfloat16)
    out = torch.zeros(128, 64)
    chained(a, b, e, out, config=_config(tmp_path, f"k{k}"))
    golden = (a.float() @ b.float()).to(torch.bfloat16).float() @ e.float()
    rel = ((out - golden).norm() / golden.norm()).item()
    assert rel < 1e-2, rel
    pto = next((tmp_path / f"k{k}" / "ptoas").glob("chained*.pto")).read_text()
    assert "pto.tinsert" in pto and "pto.tcvt" not in pto, pto


def test_other_uses_of_a_tiled_result_are_refused() -> None:
    with pytest.raises(InvalidOperationError, match="'c' is a matmul result larger than the cube buffers") as e:

        @pl.program
        class VectorUse:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self,
                a: pl.Tensor[[256, 128], pl.FP32],
                b: pl.Tensor[[128, 256], pl.FP32],
                out: pl.Out[pl.Tensor[[256, 256], pl.FP32]],
            ) -> pl.Tensor[[256, 256], pl.FP32]:
                with pl.at(level=pl.Level.CORE_GROUP):
                    c = pl.matmul(a, b, out_dtype=pl.FP32)
                    out = pl.assemble(out, pl.exp(c), [0, 0])
                return out

    assert "pl.assemble(t, c, [r, col])" in (e.value.hint or "")
    with pytest.raises(InvalidOperationError, match="mode='round'.* of a matmul result tiled by the compiler"):

        @pl.program
        class RoundCast:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self,
                a: pl.Tensor[[256, 128], pl.FP32],
                b: pl.Tensor[[128, 256], pl.FP32],
                out: pl.Out[pl.Tensor[[256, 256], pl.FP32]],
            ) -> pl.Tensor[[256, 256], pl.FP32]:
                with pl.at(level=pl.Level.CORE_GROUP):
                    c = pl.matmul(a, b, out_dtype=pl.FP32)
                    cb = pl.cast(c, pl.BF16)
                    out = pl.assemble(out, c, [0, 0])
                return out
