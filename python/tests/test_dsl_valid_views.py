"""Valid shapes of tensors (PyPTO's dynamic paged attention): ``pl.slice(t, shape, offset,
valid_shape=[rows, n])`` in an orchestration, passed to a kernel whose parameter is
annotated ``pl.Tensor[[R, C], dtype, pl.TensorView(valid_shape=[R, N], layout=pl.TensorLayout.ND)]``
and loaded with ``pl.load(..., valid_shape=[rows, n])``. The window is the data the kernel
receives; its valid part is the kernel's to honour. The program is compiled, run on the
simulator and checked against NumPy; the uses that would ignore the valid shape are refused
naming the construct, with the supported form as the hint."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.language.errors import InvalidOperationError, ParserTypeError
from pypto.runtime import RunConfig, run

ROWS = 16
COLS = 64
BLOCKS = 3
DYN_ROWS = pl.dynamic("DYN_ROWS")
DYN_COLS = pl.dynamic("DYN_COLS")
VALID_COLS = pl.dynamic("VALID_COLS")


@pl.function(type=pl.FunctionType.InCore)
def row_max_valid(
    x: pl.Tensor[[ROWS, DYN_COLS], pl.FP32, pl.TensorView(valid_shape=[ROWS, VALID_COLS], layout=pl.TensorLayout.ND)],
    valid: pl.Scalar[pl.INDEX],
    out: pl.Out[pl.Tensor[[ROWS, 1], pl.FP32]],
) -> pl.Tensor[[ROWS, 1], pl.FP32]:
    t = pl.load(x, [0, 0], [ROWS, COLS], valid_shape=[ROWS, valid], target_memory=pl.MemorySpace.Vec)
    padded = pl.tile.fillpad(t, pad_value=pl.PadValue.min)
    tmp = pl.create_tile([ROWS, COLS], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
    return pl.store(pl.row_max(padded, tmp), [0, 0], out)


@pl.program
class ValidWindows:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[DYN_ROWS, COLS], pl.FP32],
        lens: pl.Tensor[[BLOCKS], pl.INT32],
        out: pl.Out[pl.Tensor[[DYN_ROWS, 1], pl.FP32]],
    ) -> pl.Tensor[[DYN_ROWS, 1], pl.FP32]:
        for i in pl.range(BLOCKS):
            n = pl.tensor.read(lens, [i])
            xi = pl.slice(x, [ROWS, COLS], [i * ROWS, 0], valid_shape=[ROWS, n])
            oi = pl.slice(out, [ROWS, 1], [i * ROWS, 0])
            oi = row_max_valid(xi, n, oi)
        return out


def test_a_valid_shaped_window_reaches_a_tensor_view_kernel(tmp_path: Path) -> None:
    x = np.random.default_rng(21).standard_normal((ROWS * BLOCKS, COLS)).astype(np.float32)
    lens = np.array([COLS, 5, 33], dtype=np.int32)
    # Past each block's valid columns the data is large: a kernel reading it would see it.
    for i, n in enumerate(lens):
        x[i * ROWS : (i + 1) * ROWS, n:] = 1e6
    out = np.zeros((ROWS * BLOCKS, 1), np.float32)
    run(ValidWindows, x, lens, out, config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / "b")))
    expected = np.concatenate([x[i * ROWS : (i + 1) * ROWS, :n].max(axis=1, keepdims=True) for i, n in enumerate(lens)])
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_a_tensor_view_parameter_loaded_without_a_valid_shape_is_refused() -> None:
    with pytest.raises(InvalidOperationError, match="pl.load of 'x', whose pl.TensorView declares a valid shape") as e:

        @pl.program
        class Whole:
            @pl.function(type=pl.FunctionType.InCore)
            def whole(
                self,
                x: pl.Tensor[[ROWS, COLS], pl.FP32, pl.TensorView(valid_shape=[ROWS, VALID_COLS], layout=pl.TensorLayout.ND)],
                out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
            ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
                t = pl.load(x, [0, 0], [ROWS, COLS])
                return pl.store(t, [0, 0], out)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self, x: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
            ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
                out = self.whole(x, out)
                return out

    assert "valid_shape=[rows, n]" in (e.value.hint or "")
    assert e.value.span["line"] > 0


def test_tensor_view_layouts_other_than_nd_are_refused() -> None:
    with pytest.raises(ParserTypeError, match=r"pl.TensorView\(layout=pl.TensorLayout.DN\) is not supported") as e:

        @pl.program
        class Dn:
            @pl.function(type=pl.FunctionType.InCore)
            def dn(
                self,
                x: pl.Tensor[[ROWS, COLS], pl.FP32, pl.TensorView(valid_shape=[ROWS, COLS], layout=pl.TensorLayout.DN)],
                out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
            ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
                return out

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self, x: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
            ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
                out = self.dn(x, out)
                return out

    assert "pl.TensorLayout.ND" in (e.value.hint or "")


def test_a_valid_shaped_window_used_as_a_whole_tensor_is_refused() -> None:
    with pytest.raises(InvalidOperationError, match=r"pl.slice\(..., valid_shape=...\) used as a whole tensor"):

        @pl.program
        class Whole:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self, x: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
            ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
                xi = pl.slice(x, [ROWS, COLS], [0, 0], valid_shape=[ROWS, 8])
                y = pl.add(xi, xi)
                out = pl.assemble(out, y, [0, 0])
                return out
