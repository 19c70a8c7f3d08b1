"""``pl.parse`` / ``pl.loads`` of source text holding one module-level ``@pl.function``
(a function comes back, ``pypto.ir.Function``) or one program, their errors as PyPTO raises
them, and ``pypto.ir.serialize`` / ``deserialize``."""

from __future__ import annotations

from pathlib import Path

import pytest

import pypto.ir as ir
import pypto.language as pl

SCALE = """
@pl.function
def scale(x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INT32]) -> pl.Tensor[[16, 64], pl.FP32]:
    acc: pl.Tensor[[16, 64], pl.FP32] = pl.mul(x, 2.0)
    for i, (a,) in pl.range(n, init_values=(acc,)):
        b: pl.Tensor[[16, 64], pl.FP32] = pl.add(a, x)
        r = pl.yield_(b)
    return r
"""


def test_a_single_function_parses_to_a_function_and_prints_back() -> None:
    fn = pl.parse(SCALE)
    assert isinstance(fn, ir.Function)
    assert fn.name == "scale" and len(fn.params) == 2 and len(fn.return_types) == 1
    assert fn.func_type is pl.FunctionType.Opaque
    text = fn.as_python()
    assert text.splitlines()[3] == "@pl.function(type=pl.FunctionType.Opaque)"
    again = pl.parse(text)
    assert isinstance(again, ir.Function) and again.as_python() == text


def test_loads_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "kernel.py"
    path.write_text("import pypto.language as pl\n" + SCALE, encoding="utf-8")
    fn = pl.loads(str(path))
    assert isinstance(fn, ir.Function) and fn.name == "scale"


def test_nothing_or_several_items_is_a_value_error_and_bad_python_a_syntax_error() -> None:
    with pytest.raises(ValueError, match="No @pl.function or @pl.program found in <string>"):
        pl.parse("x = 42\n")
    with pytest.raises(ValueError, match=r"Multiple functions/programs found in <string>: \['scale', 'scale2'\]"):
        pl.parse(SCALE + SCALE.replace("def scale(", "def scale2("))
    with pytest.raises(SyntaxError, match="Failed to compile code from k.py"):
        pl.parse("@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    return x +\n", filename="k.py")


def test_serialize_round_trips_functions_and_programs() -> None:
    fn = pl.parse(SCALE)
    restored = ir.deserialize(ir.serialize(fn))
    assert isinstance(restored, ir.Function) and restored.as_python() == fn.as_python()
    program = pl.parse(
        """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.store(pl.exp(pl.load(a, [0, 0], [16, 16])), [0, 0], c)
"""
    )
    assert program.structural_equal(ir.deserialize(ir.serialize(program)))
    with pytest.raises(ValueError, match="not bytes written by pypto.ir.serialize"):
        ir.deserialize(b"\x80\x01")
