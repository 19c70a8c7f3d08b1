"""Tensor operations in kernel code, as PyPTO converts them: inside a kernel or a ``pl.at``
scope, a whole tensor where a tile is expected is loaded first, and ``t[...] = value`` stores
the value at the slice's start. Each program runs on the simulator against NumPy; what is
refused says so (a tile leaving its scope is PyPTO's ``PartialCodegenError``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.backend.pto_backend import PartialCodegenError
from pypto.language.errors import CompileError, InvalidOperationError
from pypto.runtime import RunConfig, run


@pl.jit
def two_stages(x: pl.Tensor, scratch: pl.Out[pl.Tensor], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        scratch[:] = pl.add(x, x)
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.exp(scratch) * 0.5 - x
    return scratch, out


@pl.jit
def tile_escapes(x: pl.Tensor, result: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        result = pl.mul(x, 2.0)
    return result


@pl.program
class HalfRows:
    @pl.function(type=pl.FunctionType.InCore)
    def halves(
        self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]
    ) -> pl.Tensor[[32, 32], pl.FP32]:
        out[0:16, :] = pl.mul(x, 2.0)
        out[16:32, :] = pl.neg(x)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]
    ) -> pl.Tensor[[32, 32], pl.FP32]:
        out = self.halves(x, out)
        return out


@pytest.fixture(autouse=True)
def _build_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))


def test_tensor_ops_in_scopes_load_and_slice_assignment_stores() -> None:
    x = np.random.default_rng(7).uniform(-1, 1, (16, 64)).astype(np.float32)
    scratch = np.zeros_like(x)
    out = np.zeros_like(x)
    two_stages(x, scratch, out)
    np.testing.assert_allclose(scratch, x + x, rtol=1e-6)
    np.testing.assert_allclose(out, np.exp(x + x) * 0.5 - x, rtol=1e-5, atol=1e-6)


def test_slice_assignment_in_a_kernel_stores_at_the_slice_start() -> None:
    x = np.random.default_rng(8).standard_normal((16, 32)).astype(np.float32)
    out = np.zeros((32, 32), np.float32)
    run(HalfRows, x, out, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_allclose(out, np.concatenate([x * 2.0, -x]), rtol=1e-6)


def test_a_tile_leaving_its_scope_is_a_partial_codegen_error() -> None:
    x = np.ones(64, np.float32)
    with pytest.raises(PartialCodegenError, match="computed inside this pl.at scope and used after it") as e:
        tile_escapes(x, np.zeros_like(x))
    assert isinstance(e.value, CompileError) and e.value.stage == "OutlineIncoreScopes"
    assert e.value.span is not None and e.value.span["line"] > 0


def test_slice_assignment_in_orchestration_names_the_supported_forms() -> None:
    with pytest.raises(InvalidOperationError, match="slice assignment 'out\\[0:16, :\\] = ...' in orchestration") as e:

        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]
            ) -> pl.Tensor[[32, 32], pl.FP32]:
                out[0:16, :] = x
                return out

    assert "pl.assemble" in str(e.value.hint)


@pl.jit
def orchestration_tensor_ops(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    """Tensor operations in orchestration code: each is one kernel task."""
    s = pl.add(x, y)
    t = pl.mul(s, 2.0)
    u = pl.transpose(t, 0, 1)
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.exp(u)
    return out


def test_tensor_operations_in_orchestration_are_one_task_each() -> None:
    rng = np.random.default_rng(9)
    x = rng.uniform(-1, 1, (16, 32)).astype(np.float32)
    y = rng.uniform(-1, 1, (16, 32)).astype(np.float32)
    out = np.zeros((32, 16), np.float32)
    program = orchestration_tensor_ops.front_end(x, y, out)
    assert [f.ftype for f in program.functions.values()] == ["Orchestration"]
    text = program.as_python()
    assert text.count("with pl.at(level=pl.Level.CORE_GROUP)") == 4 and "pl.tile.transpose" in text
    orchestration_tensor_ops(x, y, out)
    np.testing.assert_allclose(out, np.exp((x + y) * 2.0).T, rtol=1e-5)


def test_transpose_of_a_rank_3_tensor_names_the_supported_form() -> None:
    src = """
@pl.function
def f(x: pl.Tensor[[2, 16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
    return pl.transpose(x, 1, 2)
"""
    with pytest.raises(InvalidOperationError, match="only the two axes of a 2-D tensor or tile") as e:
        pl.parse(src)
    assert e.value.span is not None and e.value.span["line"] == 4
