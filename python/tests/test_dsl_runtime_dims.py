"""Tensors whose sizes are known only at run time, in orchestration code (PyPTO's paged
attention reads its head dimension and block size from a config tensor):
``pl.create_tensor([rows, n])`` and ``pl.slice(t, [rows, n], offsets)`` with ``n`` a
scalar the orchestration computed, passed to kernels whose parameters have static shapes.
The programs are compiled, run on the simulator and checked against NumPy; kernel code on
such tensors, and ``pl.dynamic`` kernel parameters, are refused naming the construct."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.backend.pto_backend import PartialCodegenError
from pypto.language.errors import InvalidOperationError
from pypto.runtime import RunConfig, run

ROWS = 16
COLS = 64
BLOCKS = 3
DYN_COLS = pl.dynamic("DYN_COLS")


@pl.function(type=pl.FunctionType.InCore)
def scale_block(
    x: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
    t = pl.load(x, [0, 0], [ROWS, COLS])
    return pl.store(pl.mul(t, 2.0), [0, 0], out)


@pl.function(type=pl.FunctionType.InCore)
def add_blocks(
    a: pl.Tensor[[ROWS, COLS], pl.FP32], b: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
    ta = pl.load(a, [0, 0], [ROWS, COLS])
    tb = pl.load(b, [0, 0], [ROWS, COLS])
    return pl.store(pl.add(ta, tb), [0, 0], out)


@pl.program
class RuntimeSized:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[ROWS * BLOCKS, COLS], pl.FP32],
        config: pl.Tensor[[2], pl.INT64],
        out: pl.Out[pl.Tensor[[ROWS * BLOCKS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS * BLOCKS, COLS], pl.FP32]:
        cols = pl.tensor.read(config, [0])
        blocks = pl.tensor.read(config, [1])
        for i in pl.range(blocks):
            xi = pl.slice(x, [ROWS, cols], [i * ROWS, 0])
            tmp: pl.Tensor[[ROWS, DYN_COLS], pl.FP32] = pl.create_tensor([ROWS, cols], dtype=pl.FP32)
            tmp = scale_block(xi, tmp)
            oi = pl.slice(out, [ROWS, cols], [i * ROWS, 0])
            oi = add_blocks(tmp, xi, oi)
        return out


def test_runtime_sized_tensors_reach_static_kernels(tmp_path: Path) -> None:
    x = np.random.default_rng(11).standard_normal((ROWS * BLOCKS, COLS)).astype(np.float32)
    config = np.array([COLS, BLOCKS], dtype=np.int64)
    out = np.zeros_like(x)
    compiled = run(RuntimeSized, x, config, out, config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / "b")))
    np.testing.assert_allclose(out, x * 3.0, rtol=1e-6)
    cpp = next((Path(str(compiled)) / "orchestration").glob("*.cpp")).read_text()
    assert "(uint32_t)(cols)" in cpp, cpp
    # The printed IR spells the runtime dimension and parses back to the same program.
    text = RuntimeSized.as_python()
    assert 'pl.Tensor[[16, pl.dynamic("dyn")], pl.FP32]' in text
    assert ir.serialize(pl.parse(text)) == ir.serialize(RuntimeSized)
    # Every pass snapshot computes the same in the IR interpreter.
    built = ir.compile(RuntimeSized, output_dir=str(tmp_path / "validate"))
    built.validate_ir({"x": x, "config": config, "out": np.zeros_like(x)}, {"out": x * 3.0}, rtol=1e-6, atol=1e-6)


def test_a_scope_on_a_runtime_sized_window_runs_and_rank_3_parameters_are_refused(tmp_path: Path) -> None:
    @pl.program
    class InScope:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[ROWS, 2 * COLS], pl.FP32], config: pl.Tensor[[1], pl.INT64], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
        ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
            cols = pl.tensor.read(config, [0])
            xi = pl.slice(x, [ROWS, cols], [0, cols])
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(xi, [0, 0], [ROWS, COLS])
                out = pl.store(pl.mul(t, 4.0), [0, 0], out)
            return out

    x = np.random.default_rng(13).standard_normal((ROWS, 2 * COLS)).astype(np.float32)
    out = np.zeros((ROWS, COLS), np.float32)
    run(InScope, x, np.array([COLS], np.int64), out, config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / "s")))
    np.testing.assert_allclose(out, x[:, COLS:] * 4.0, rtol=1e-6)

    @pl.program
    class Rank3DynamicParam:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self, x: pl.Tensor[[2, ROWS, DYN_COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
        ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[2, ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
        ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
            out = self.k(x, out)
            return out

    with pytest.raises(PartialCodegenError, match="parameter 'x' is .*rank 3 with a dimension known only at run time") as e:
        ir.compile(Rank3DynamicParam, output_dir=str(tmp_path / "dyn_param"))
    assert "up to rank 2" in e.value.hint


DYN_ROWS = pl.dynamic("DYN_ROWS")


@pl.function(type=pl.FunctionType.InCore)
def scale_dyn(
    x: pl.Tensor[[DYN_ROWS, DYN_COLS], pl.FP32],
    row: pl.Scalar[pl.INDEX],
    out: pl.Out[pl.Tensor[[DYN_ROWS, DYN_COLS], pl.FP32]],
) -> pl.Tensor[[DYN_ROWS, DYN_COLS], pl.FP32]:
    # The region is static; the tensor's row stride (its column count) comes at run time.
    t = pl.load(x, [row, 0], [ROWS, 32])
    return pl.store(pl.add(t, 1.0), [row, 0], out)


@pl.program
class DynamicKernels:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[DYN_ROWS, DYN_COLS], pl.FP32], out: pl.Out[pl.Tensor[[DYN_ROWS, DYN_COLS], pl.FP32]]
    ) -> pl.Tensor[[DYN_ROWS, DYN_COLS], pl.FP32]:
        rows = pl.tensor.dim(x, 0)
        cols = pl.tensor.dim(x, 1)
        for i in pl.range(rows // ROWS):
            for j in pl.range(cols // 32):
                xs = pl.slice(x, [rows, 32], [0, j * 32])
                os_ = pl.slice(out, [rows, 32], [0, j * 32])
                os_ = scale_dyn(xs, i * ROWS, os_)
        return out


@pytest.mark.parametrize("shape", [(32, 64), (48, 96)])
def test_kernels_with_pl_dynamic_parameters_read_the_sizes_at_run_time(tmp_path: Path, shape: tuple) -> None:
    x = np.random.default_rng(12).standard_normal(shape).astype(np.float32)
    out = np.zeros_like(x)
    compiled = run(DynamicKernels, x, out, config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / "b")))
    np.testing.assert_allclose(out, x + 1.0, rtol=1e-6)
    build = Path(str(compiled))
    wrapper = next((build / "kernels" / "aiv").glob("scale_dyn*.cpp")).read_text()
    assert "->shapes[1];" in wrapper, wrapper
    cpp = next((build / "orchestration").glob("*.cpp")).read_text()
    assert ".shapes[0]" in cpp and ".shapes[1]" in cpp, cpp


@pl.function(type=pl.FunctionType.InCore)
def double_head(
    x: pl.Tensor[[2 * ROWS, 32], pl.FP32], row: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[3 * ROWS, 32], pl.FP32]]
) -> pl.Tensor[[3 * ROWS, 32], pl.FP32]:
    t = pl.load(x, [0, 0], [ROWS, 32])
    return pl.store(pl.mul(t, 2.0), [row, 0], out)


@pl.program
class PastTheEnd:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[DYN_ROWS, 32], pl.FP32], out: pl.Out[pl.Tensor[[3 * ROWS, 32], pl.FP32]]
    ) -> pl.Tensor[[3 * ROWS, 32], pl.FP32]:
        for i in pl.range(3):
            # A two-block window of a runtime-sized tensor: the last one runs one block past
            # it, and is clamped to the block that remains.
            xs = pl.slice(x, [2 * ROWS, 32], [i * ROWS, 0])
            out = double_head(xs, i * ROWS, out)
        return out


def test_a_window_at_a_runtime_offset_is_clamped_to_the_tensor(tmp_path: Path) -> None:
    x = np.random.default_rng(14).standard_normal((3 * ROWS, 32)).astype(np.float32)
    out = np.zeros_like(x)
    compiled = run(PastTheEnd, x, out, config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / "b")))
    np.testing.assert_allclose(out, x * 2.0, rtol=1e-6)
    cpp = next((Path(str(compiled)) / "orchestration").glob("*.cpp")).read_text()
    assert ".shapes[0] ? 0u :" in cpp, cpp
    built = ir.compile(PastTheEnd, output_dir=str(tmp_path / "validate"))
    built.validate_ir({"x": x, "out": np.zeros_like(x)}, {"out": x * 2.0}, rtol=1e-6, atol=1e-6)
