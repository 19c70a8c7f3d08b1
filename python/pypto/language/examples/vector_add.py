# DSL annotations (pl.Tensor[[...], dtype], pl.Out[...]) are parsed, not Python types.
# mypy: ignore-errors
"""Vector add in the DSL: ``c = a + b`` over a [128, 128] FP32 matrix, one AIV task per
32-row slice (the orchestration slices the tensors, the kernel adds two tiles)."""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

import pypto.language as pl

ROWS = 128
COLS = 128
TILE = 32

RTOL = 1e-5
ATOL = 1e-5


@pl.program
class VectorAdd:
    @pl.function(type=pl.FunctionType.AIV)
    def kernel_add(
        self,
        a: pl.Tensor[[TILE, COLS], pl.FP32],
        b: pl.Tensor[[TILE, COLS], pl.FP32],
        c: pl.Out[pl.Tensor[[TILE, COLS], pl.FP32]],
    ) -> pl.Tensor[[TILE, COLS], pl.FP32]:
        ta = pl.load(a, [0, 0], [TILE, COLS])
        tb = pl.load(b, [0, 0], [TILE, COLS])
        return pl.store(pl.add(ta, tb), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def vector_add(
        self,
        a: pl.Tensor[[ROWS, COLS], pl.FP32],
        b: pl.Tensor[[ROWS, COLS], pl.FP32],
        c: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        for i in pl.range(ROWS // TILE):
            rows = c[i * TILE : i * TILE + TILE, :]
            rows = self.kernel_add(a[i * TILE : i * TILE + TILE, :], b[i * TILE : i * TILE + TILE, :], rows)
        return c


def make_inputs() -> List[Any]:
    """Deterministic inputs, one per orchestration parameter."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    b = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    return [a, b, np.zeros((ROWS, COLS), dtype=np.float32)]


def reference(tensors: Dict[str, Any], params: Dict[str, Any]) -> None:
    """c = a + b, in float64, rounded to float32."""
    a = np.asarray(tensors["a"], dtype=np.float64)
    b = np.asarray(tensors["b"], dtype=np.float64)
    tensors["c"][:] = (a + b).astype(np.float32)
