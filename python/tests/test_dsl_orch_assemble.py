"""``t = pl.assemble(t, src, offsets)`` in orchestration code writes ``src`` into the window
of ``t`` at ``offsets``, wherever ``src`` was produced: a tensor a kernel wrote, a tensor
parameter, in a loop at runtime offsets, a source larger than one vector tile. Each program
runs on the simulator and is checked against NumPy and the IR interpreter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.errors import InvalidOperationError

ROWS = pl.dynamic("ROWS")


@pl.program
class Halves:
    """Two kernel results, each produced into a tensor of its own, assembled into the two
    halves of ``out``; a parameter and a kernel result assembled into windows of ``wide``."""

    @pl.function(type=pl.FunctionType.InCore)
    def scale(
        self, x: pl.Tensor[[8, 32], pl.FP32], k: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor[[8, 32], pl.FP32]]
    ) -> pl.Tensor[[8, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 32])
        return pl.store(pl.mul(t, k), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self,
        x: pl.Tensor[[8, 32], pl.FP32],
        out: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        wide: pl.InOut[pl.Tensor[[8, 96], pl.FP32]],
    ) -> pl.Tensor[[16, 32], pl.FP32]:
        a = pl.create_tensor([8, 32], dtype=pl.FP32)
        a = self.scale(x, 2.0, a)
        b = pl.create_tensor([8, 32], dtype=pl.FP32)
        b = self.scale(x, -1.0, b)
        out = pl.assemble(out, a, [0, 0])
        out = pl.assemble(out, b, [8, 0])
        wide = pl.assemble(wide, x, [0, 64])
        wide = pl.tensor.assemble(wide, b, [0, 0])  # PyPTO's explicit spelling
        return out


@pl.program
class Rows:
    """A loop producing one block of rows per iteration into a scratch tensor, assembled at
    a runtime row offset."""

    @pl.function(type=pl.FunctionType.InCore)
    def plus(
        self, x: pl.Tensor[[4, 16], pl.FP32], k: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]
    ) -> pl.Tensor[[4, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [4, 16])
        return pl.store(pl.add(t, k), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self, x: pl.Tensor[[4, 16], pl.FP32], out: pl.Out[pl.Tensor[[12, 16], pl.FP32]]
    ) -> pl.Tensor[[12, 16], pl.FP32]:
        for i in pl.range(3):
            blk = pl.create_tensor([4, 16], dtype=pl.FP32)
            blk = self.plus(x, pl.cast(i, pl.FP32), blk)
            out = pl.assemble(out, blk, [i * 4, 0])
        return out


@pl.program
class Big:
    """A source of 256 KiB (more than one vector tile holds) assembled below the first rows,
    which keep their values."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self, x: pl.Tensor[[512, 128], pl.FP32], out: pl.InOut[pl.Tensor[[520, 128], pl.FP32]]
    ) -> pl.Tensor[[520, 128], pl.FP32]:
        out = pl.assemble(out, x, [8, 0])
        return out


@pytest.fixture(autouse=True)
def _build_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))


def test_kernel_results_and_a_parameter_are_copied_into_their_windows(tmp_path: Path) -> None:
    x = np.random.default_rng(3).uniform(-1, 1, (8, 32)).astype(np.float32)
    out = np.full((16, 32), 7.0, np.float32)
    wide = np.full((8, 96), 5.0, np.float32)
    compiled = ir.compile(Halves, output_dir=str(tmp_path / "h"))
    compiled(x, out, wide)
    want_out = np.concatenate([x * 2.0, -x])
    want_wide = np.concatenate([-x, np.full((8, 32), 5.0, np.float32), x], axis=1)
    np.testing.assert_allclose(out, want_out, rtol=1e-6)
    np.testing.assert_allclose(wide, want_wide, rtol=1e-6)
    compiled.validate_ir(
        {"x": x, "out": np.full_like(out, 7.0), "wide": np.full_like(wide, 5.0)}, {"out": want_out, "wide": want_wide}
    )


def test_assembles_at_runtime_offsets_in_a_loop(tmp_path: Path) -> None:
    x = np.random.default_rng(4).standard_normal((4, 16)).astype(np.float32)
    out = np.zeros((12, 16), np.float32)
    compiled = ir.compile(Rows, output_dir=str(tmp_path / "r"))
    compiled(x, out)
    want = np.concatenate([x + float(i) for i in range(3)])
    np.testing.assert_allclose(out, want, rtol=1e-6)
    compiled.validate_ir({"x": x, "out": np.zeros_like(out)}, {"out": want})


def test_a_source_larger_than_a_vector_tile_is_copied_whole(tmp_path: Path) -> None:
    x = np.arange(512 * 128, dtype=np.float32).reshape(512, 128)
    out = np.full((520, 128), -1.0, np.float32)
    compiled = ir.compile(Big, output_dir=str(tmp_path / "b"))
    compiled(x, out)
    np.testing.assert_array_equal(out[:8], -1.0)
    np.testing.assert_array_equal(out[8:], x)


def test_a_runtime_sized_source_is_refused_naming_the_fix() -> None:
    with pytest.raises(InvalidOperationError, match="pl.assemble of a runtime-sized tensor") as e:

        @pl.program
        class Dyn:
            @pl.function(type=pl.FunctionType.Orchestration)
            def orch(
                self, x: pl.Tensor[[ROWS, 16], pl.FP32], out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]
            ) -> pl.Tensor[[64, 16], pl.FP32]:
                out = pl.assemble(out, x, [0, 0])
                return out

    assert "pl.slice(t, shape, offsets)" in (e.value.hint or "")
    assert e.value.span is not None and e.value.span["line"] > 0
