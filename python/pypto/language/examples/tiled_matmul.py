# DSL annotations (pl.Tensor[[...], dtype], pl.Out[...]) are parsed, not Python types.
# mypy: ignore-errors
"""A tiled matmul in the DSL: ``c = a @ b`` for [128, 128] FP32 matrices, one AIC task per
64x64 output tile; each kernel loads its row block of ``a`` and column block of ``b`` into
L1 (``pl.Mem.Mat``), moves them into L0A / L0B and accumulates over K in L0C."""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

import pypto.language as pl

M = 128
K = 128
N = 128
T = 64

RTOL = 1e-4
ATOL = 1e-4


@pl.program
class TiledMatmul:
    @pl.function(type=pl.FunctionType.AIC)
    def matmul_tile(
        self,
        a: pl.Tensor[[M, K], pl.FP32],
        b: pl.Tensor[[K, N], pl.FP32],
        c: pl.InOut[pl.Tensor[[M, N], pl.FP32]],
        i: pl.Scalar[pl.INDEX],
        j: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[M, N], pl.FP32]:
        a0 = pl.load(a, [i * T, 0], [T, T], target_memory=pl.Mem.Mat)
        b0 = pl.load(b, [0, j * T], [T, T], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(a0, target_memory=pl.Mem.Left), pl.move(b0, target_memory=pl.Mem.Right))
        for k in pl.range(1, K // T):
            ak = pl.load(a, [i * T, k * T], [T, T], target_memory=pl.Mem.Mat)
            bk = pl.load(b, [k * T, j * T], [T, T], target_memory=pl.Mem.Mat)
            acc = pl.matmul_acc(acc, pl.move(ak, target_memory=pl.Mem.Left), pl.move(bk, target_memory=pl.Mem.Right))
        return pl.store(acc, [i * T, j * T], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def tiled_matmul(
        self,
        a: pl.Tensor[[M, K], pl.FP32],
        b: pl.Tensor[[K, N], pl.FP32],
        c: pl.InOut[pl.Tensor[[M, N], pl.FP32]],
    ) -> pl.Tensor[[M, N], pl.FP32]:
        for i in pl.range(M // T):
            for j in pl.range(N // T):
                c = self.matmul_tile(a, b, c, i, j)
        return c


def make_inputs() -> List[Any]:
    """Deterministic inputs, one per orchestration parameter."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    return [a, b, np.zeros((M, N), dtype=np.float32)]


def reference(tensors: Dict[str, Any], params: Dict[str, Any]) -> None:
    """c = a @ b in float64, rounded to float32."""
    a = np.asarray(tensors["a"], dtype=np.float64)
    b = np.asarray(tensors["b"], dtype=np.float64)
    tensors["c"][:] = (a @ b).astype(np.float32)
