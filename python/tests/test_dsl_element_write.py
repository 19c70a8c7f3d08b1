"""``pl.write(t, [i, j], value)``: one element of a tensor set from a scalar, the
counterpart of ``pl.read``. In kernel code it is a scalar store to the parameter in global
memory (``pto.store_scalar``); in an orchestration it is ``set_tensor_data``. Programs are
compiled, run on the simulator and checked against NumPy and the IR interpreter; misuses
are refused naming the line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.errors import InvalidOperationError, ParserTypeError


@pl.program
class ElementWrites:
    """A kernel moving the diagonal of ``src`` into column 0 of ``out`` element by element,
    writing a literal, a vector element and an element through a window; the orchestration
    then sets one more element of ``out``."""

    @pl.function(type=pl.FunctionType.InCore)
    def scatter(
        self,
        src: pl.Tensor[[4, 8], pl.INT32],
        out: pl.Out[pl.Tensor[[4, 8], pl.INT32]],
        vec: pl.Out[pl.Tensor[[8], pl.FP32]],
    ) -> pl.Tensor[[4, 8], pl.INT32]:
        for i in pl.range(4):
            v = pl.read(src, [i, i])
            pl.write(out, [i, 0], v)
            pl.write(vec, i * 2, pl.cast(v, pl.FP32))
        pl.write(out, [0, 7], -3)
        rows = pl.slice(out, [2, 8], [2, 0])
        pl.write(rows, [1, 4], pl.read(src, [0, 1]))
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self,
        src: pl.Tensor[[4, 8], pl.INT32],
        out: pl.Out[pl.Tensor[[4, 8], pl.INT32]],
        vec: pl.Out[pl.Tensor[[8], pl.FP32]],
    ) -> pl.Tensor[[4, 8], pl.INT32]:
        out = self.scatter(src, out, vec)
        pl.write(out, [1, 1], pl.read(src, [3, 0]) + 100)
        return out


@pytest.fixture(autouse=True)
def _build_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))


def _expected(src: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    out = np.zeros((4, 8), np.int32)
    vec = np.zeros(8, np.float32)
    for i in range(4):
        out[i, 0] = src[i, i]
        vec[i * 2] = src[i, i]
    out[0, 7] = -3
    out[3, 4] = src[0, 1]
    out[1, 1] = src[3, 0] + 100
    return out, vec


def test_element_writes_in_kernels_and_the_orchestration(tmp_path: Path) -> None:
    src = np.arange(32, dtype=np.int32).reshape(4, 8) * 3 - 7
    out = np.zeros((4, 8), np.int32)
    vec = np.zeros(8, np.float32)
    compiled = ir.compile(ElementWrites, output_dir=str(tmp_path / "w"))
    pto = (tmp_path / "w" / "ptoas" / "scatter.pto").read_text()
    assert pto.count("pto.store_scalar") == 4, pto
    assert "set_tensor_data<int32_t>(" in (tmp_path / "w" / "orchestration" / "orch.cpp").read_text()
    compiled(src, out, vec)
    want_out, want_vec = _expected(src)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(vec, want_vec)
    compiled.validate_ir(
        {"src": src, "out": np.zeros_like(out), "vec": np.zeros_like(vec)}, {"out": want_out, "vec": want_vec}
    )


def _kernel(body: str, params: str = "t: pl.Out[pl.Tensor[[4, 8], pl.FP32]]") -> str:
    return textwrap.dedent(
        """\
        import pypto.language as pl

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, {params}) -> pl.Tensor[[4, 8], pl.FP32]:
        {body}
                return t
        """
    ).format(params=params, body=textwrap.indent(textwrap.dedent(body), " " * 8))


@pytest.mark.parametrize(
    ("body", "params", "cls", "message"),
    [
        ("pl.write(t, [1], 2.0)\n", None, InvalidOperationError, "tensor.write: a rank-2 tensor needs 2 indices, got 1"),
        ("pl.write(t, [1, 2, 3], 2.0)\n", None, InvalidOperationError, "tensor.write: a rank-2 tensor needs 2 indices, got 3"),
        (
            "x = pl.load(t, [0, 0], [4, 8])\npl.write(t, [0, 0], x)\n",
            None,
            ParserTypeError,
            "pl.write writes one element: the value must be a scalar, got Tile",
        ),
        (
            "x = pl.load(t, [0, 0], [4, 8])\npl.write(x, [0, 0], 1.0)\n",
            None,
            InvalidOperationError,
            "pl.write of a tile (Tile[[4, 8], FP32",
        ),
        ("pl.write(t, [0, 0], pl.read(i, [0]))\n", "t: pl.Out[pl.Tensor[[4, 8], pl.FP32]], i: pl.Tensor[[2], pl.INT32]", InvalidOperationError, "tensor.write: the value is INT32, the tensor holds FP32"),
        ("pl.write(t, [0, 0], 1.0)\n", "t: pl.Tensor[[4, 8], pl.FP32]", ParserTypeError, "pl.write writes 't', an In parameter of kernel 'k'"),
    ],
)
def test_misuse_is_refused_at_its_line(body: str, params: str | None, cls: type, message: str) -> None:
    src = _kernel(body, params or "t: pl.Out[pl.Tensor[[4, 8], pl.FP32]]")
    line = 1 + next(n for n, text in enumerate(src.splitlines()) if "pl.write" in text)
    with pytest.raises(cls) as e:
        pl.parse(src)
    assert message in str(e.value), str(e.value)
    assert e.value.span["line"] == line


def test_write_in_a_scope_names_the_supported_places() -> None:
    src = textwrap.dedent(
        """\
        import pypto.language as pl

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def orch(self, t: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
                with pl.at(level=pl.Level.CORE_GROUP):
                    pl.write(t, [0, 0], 1.0)
                return t
        """
    )
    with pytest.raises(InvalidOperationError, match="inside a pl.at scope is not supported yet") as e:
        pl.parse(src)
    assert e.value.span["line"] == 8
    assert "InCore kernel function" in (e.value.hint or "")
