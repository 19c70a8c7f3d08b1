"""What a ``@pl.program`` class sees and what a program exposes, as in PyPTO: shape constants
from the scope that applies the decorator (a builder function's locals, not only module
globals), module-level ``@pl.function`` kernels called by name (they join the program), and
``Program.functions`` as a name → function mapping whose functions carry ``func_type``.
Each program is compiled, run on the simulator and checked against NumPy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.language.errors import ParserTypeError
from pypto.runtime import RunConfig, run

COLS = 32


@pl.function(type=pl.FunctionType.InCore)
def scale_rows(
    x: pl.Tensor[[16, COLS], pl.FP32], factor: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor[[16, COLS], pl.FP32]]
) -> pl.Tensor[[16, COLS], pl.FP32]:
    t = pl.load(x, [0, 0], [16, COLS])
    return pl.store(pl.mul(t, factor), [0, 0], out)


def build_scaler(blocks: int):
    """A program whose tensor shapes come from this function's arguments."""
    rows = blocks * 16
    tile_rows = 16

    @pl.program
    class Scaler:
        @pl.function(type=pl.FunctionType.InCore)
        def add_one(
            self, x: pl.Tensor[[tile_rows, COLS], pl.FP32], out: pl.Out[pl.Tensor[[tile_rows, COLS], pl.FP32]]
        ) -> pl.Tensor[[tile_rows, COLS], pl.FP32]:
            t: pl.Tile[[tile_rows, COLS], pl.FP32] = pl.load(x, [0, 0], [tile_rows, COLS])
            return pl.store(pl.add(t, 1.0), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[rows, COLS], pl.FP32], out: pl.Out[pl.Tensor[[rows, COLS], pl.FP32]]
        ) -> pl.Tensor[[rows, COLS], pl.FP32]:
            for i in pl.range(blocks):
                tmp = pl.create_tensor([tile_rows, COLS], dtype=pl.FP32)
                tmp = scale_rows(x[i * tile_rows : i * tile_rows + tile_rows, :], 3.0, tmp)
                view = out[i * tile_rows : i * tile_rows + tile_rows, :]
                view = self.add_one(tmp, view)
            return out

    return Scaler


@pytest.fixture(autouse=True)
def _build_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))


def test_builder_locals_size_the_tensors_and_module_kernels_join_the_program() -> None:
    program = build_scaler(3)
    assert list(program.functions) == ["add_one", "main", "scale_rows"]
    assert program.functions["main"].params[0][0].type.shape == [48, COLS]
    x = np.random.default_rng(5).standard_normal((48, COLS)).astype(np.float32)
    out = np.zeros_like(x)
    run(program, x, out, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_allclose(out, x * 3.0 + 1.0, rtol=1e-6)


def test_functions_is_a_mapping_of_functions_with_func_type() -> None:
    program = build_scaler(1)
    kinds = {name: str(fn.func_type) for name, fn in program.functions.items()}
    assert kinds == {
        "add_one": "FunctionType.InCore",
        "main": "FunctionType.Orchestration",
        "scale_rows": "FunctionType.InCore",
    }
    assert program.functions["scale_rows"].func_type is pl.FunctionType.InCore


def test_a_local_that_is_not_a_number_is_still_refused_with_its_line() -> None:
    shape_name = "rows"

    with pytest.raises(ParserTypeError, match="the shape of pl.Tensor must be a list of positive ints") as e:

        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[shape_name, 16], pl.FP32]) -> pl.Tensor[[shape_name, 16], pl.FP32]:
                return x

    assert e.value.span is not None and e.value.span["line"] > 0
    assert shape_name == "rows"


def build_with_local_kernel(rows: int):
    """A kernel defined in a builder function whose annotations read the builder's locals
    (names the function body never reads, so they are no closure variables)."""
    total = rows * 2

    @pl.function(type=pl.FunctionType.InCore)
    def twice(x: pl.Tensor[[total, COLS], pl.FP32], out: pl.Out[pl.Tensor[[total, COLS], pl.FP32]]) -> pl.Tensor[[total, COLS], pl.FP32]:
        t = pl.load(x, [0, 0], [16, COLS])
        return pl.store(pl.add(t, t), [0, 0], out)

    @pl.program
    class LocalKernel:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[total, COLS], pl.FP32], out: pl.Out[pl.Tensor[[total, COLS], pl.FP32]]
        ) -> pl.Tensor[[total, COLS], pl.FP32]:
            out = twice(x, out)
            return out

    return LocalKernel


def test_a_kernel_defined_in_a_builder_reads_its_locals_in_annotations() -> None:
    program = build_with_local_kernel(8)
    assert program.functions["twice"].params[0][0].type.shape == [16, COLS]
    x = np.random.default_rng(6).standard_normal((16, COLS)).astype(np.float32)
    out = np.zeros_like(x)
    run(program, x, out, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_allclose(out, x * 2.0, rtol=1e-6)
