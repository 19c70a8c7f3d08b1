"""``for i in pl.pipeline(start, stop, step, stage=n)``: PyPTO's software-pipelined loop,
run here as ``pl.range`` (iterations in order, the body not replicated): the result is the
same. ``stage=`` is required and a positive integer literal, as PyPTO has it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.language.errors import ParserSyntaxError


@pl.jit
def column_blocks_sum(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    """out = the sum of the four [16, 16] column blocks of x, accumulated in a pipelined loop
    that carries its tile."""
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.load(x, [0, 0], [16, 16])
        for kb in pl.pipeline(1, 4, stage=2):
            acc = pl.add(acc, pl.load(x, [0, kb * 16], [16, 16]))
        pl.store(acc, [0, 0], out)
    return out


@pytest.fixture(autouse=True)
def _build_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))


def test_a_pipelined_loop_runs_as_a_range() -> None:
    x = np.random.default_rng(5).standard_normal((16, 64)).astype(np.float32)
    out = np.zeros((16, 16), np.float32)
    column_blocks_sum(x, out)
    want = x[:, 0:16] + x[:, 16:32] + x[:, 32:48] + x[:, 48:64]
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    ("loop", "message"),
    [
        ("pl.pipeline(4)", "pl.pipeline() requires stage="),
        ("pl.pipeline(4, stage=0)", "pl.pipeline stage must be a positive integer, got 0"),
        ("pl.pipeline(4, stage=n)", "'n' is not a compile-time constant"),
        ("pl.pipeline(4, stage=2, depth=3)", "pl.pipeline() got an unexpected keyword argument 'depth'"),
    ],
)
def test_a_malformed_pipeline_names_its_line(loop: str, message: str) -> None:
    src = textwrap.dedent(
        f"""\
        import pypto.language as pl

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, t: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
                for i in {loop}:
                    t = pl.store(pl.load(t, [0, 0], [16, 16]), [0, 0], t)
                return t
        """
    )
    with pytest.raises(ParserSyntaxError) as e:
        pl.parse(src)
    assert message in str(e.value), str(e.value)
    assert e.value.span["line"] == 7
