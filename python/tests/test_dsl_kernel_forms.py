"""Kernel-code forms PyPTO's Qwen3 decode uses: ``acc = pl.create_tensor(...)`` seeding a
K loop whose first iteration is ``pl.matmul`` and the others ``pl.matmul_acc`` on tensor
windows; slice bounds whose difference is a constant (``(k + 1) * D`` and ``k * D``);
``pl.reshape`` of a tensor window and a slice of the tile it gives; an inline helper that
assembles into its ``Out`` parameter in a loop. Each program is compiled, run on the
simulator and checked against NumPy."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

import pypto.language as pl
from pypto.language.errors import InvalidOperationError, ParserTypeError


@pl.jit
def k_loop_projection(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    """out = a @ b, 32 columns per scope, K in steps of 32 through a seeded accumulator."""
    for n0 in pl.parallel(0, 64, 32):
        with pl.at(level=pl.Level.CORE_GROUP):
            acc = pl.create_tensor([16, 32], dtype=pl.FP32)
            for kb in pl.range(4):
                ta = a[:, kb * 32 : (kb + 1) * 32]
                tb = b[kb * 32 : kb * 32 + 32, n0 : n0 + 32]
                if kb == 0:
                    acc = pl.matmul(ta, tb, out_dtype=pl.FP32)
                else:
                    acc = pl.matmul_acc(acc, ta, tb)
            out = pl.assemble(out, acc, [0, n0])
    return out


@pl.jit
def fold_rows(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    """Row r of x ([2, 256]) folded to [4, 64]; its left half scaled by 2 into out[4r:4r+4, :32]."""
    with pl.at(level=pl.Level.CORE_GROUP):
        for r in pl.range(2):
            block = pl.reshape(x[r : r + 1, :], [4, 64])
            left = block[:, 0:32]
            out = pl.assemble(out, pl.mul(left, 2.0), [r * 4, 0])
    return out


@pl.jit.inline
def scale_columns(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for c in pl.range(4):
            y = pl.assemble(y, pl.mul(x[:, c * 16 : (c + 1) * 16], 3.0), [0, c * 16])
    return y


@pl.jit
def inline_assembles(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = scale_columns(x, y)
    return y


@pytest.fixture(autouse=True)
def _build_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))


def test_a_seeded_accumulator_over_tensor_windows() -> None:
    g = torch.Generator().manual_seed(3)
    a = torch.randn(16, 128, generator=g).to(torch.bfloat16)
    b = torch.randn(128, 64, generator=g).to(torch.bfloat16)
    out = torch.zeros(16, 64)
    k_loop_projection(a, b, out)
    torch.testing.assert_close(out, a.float() @ b.float(), rtol=1e-4, atol=1e-4)


def test_a_reshaped_window_and_a_slice_of_its_tile() -> None:
    x = np.random.default_rng(4).standard_normal((2, 256)).astype(np.float32)
    out = np.zeros((8, 32), np.float32)
    fold_rows(x, out)
    want = np.concatenate([x[r].reshape(4, 64)[:, :32] * 2 for r in range(2)])
    np.testing.assert_array_equal(out, want)


def test_an_inline_helper_assembling_into_its_out_parameter_in_a_loop() -> None:
    x = np.random.default_rng(6).standard_normal((16, 64)).astype(np.float32)
    y = np.zeros_like(x)
    inline_assembles(x, y)
    np.testing.assert_allclose(y, x * 3, rtol=1e-6)


def test_a_tensor_created_in_kernel_code_for_anything_else_is_refused() -> None:
    src = textwrap.dedent(
        """\
        import pypto.language as pl

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, t: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
                s = pl.create_tensor([16, 16], dtype=pl.FP32)
                return pl.store(pl.load(t, [0, 0], [16, 16]), [0, 0], t)
        """
    )
    with pytest.raises(InvalidOperationError, match="'s' is not the accumulator of a later pl.matmul") as e:
        pl.parse(src)
    assert e.value.span["line"] == 7


@pytest.mark.parametrize(
    ("window", "size"),
    [("n * n : n * n + 4", 4), ("(n + 1) * 2 - 2 : (n + 3) * 2", 6), ("n + 64 : n + 128", 64), ("-n : 8 - n", 8)],
)
def test_slice_sizes_are_the_constant_differences_of_their_bounds(window: str, size: int) -> None:
    src = textwrap.dedent(
        f"""\
        import pypto.language as pl

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, t: pl.Out[pl.Tensor[[256, 8], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[256, 8], pl.FP32]:
                w = t[{window}, :]
                return pl.store(pl.load(w, [0, 0], [{size}, 8]), [0, 0], t)
        """
    )
    assert f"pl.Tensor[[{size}, 8], pl.FP32]" in pl.parse(src).as_python()


def test_a_slice_whose_bounds_differ_by_a_variable_is_refused() -> None:
    src = _kernel_with_window("(n + 1) * 2 : n * 3")
    with pytest.raises(ParserTypeError, match="has no static positive size") as e:
        pl.parse(src)
    assert e.value.span["line"] == 7


def _kernel_with_window(window: str) -> str:
    return textwrap.dedent(
        f"""\
        import pypto.language as pl

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, t: pl.Out[pl.Tensor[[256, 8], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[256, 8], pl.FP32]:
                w = t[{window}, :]
                return t
        """
    )
