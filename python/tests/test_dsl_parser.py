"""The DSL front end: what it accepts (the IR it builds, printed), the printer's round trip,
and every parser error of the selective-dump surface with PyPTO's type, message and hint
(reference: pypto-dsl-dump.md §2.1), located at the construct."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.errors import (
    CompileError,
    InvalidOperationError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
)

THIS_FILE = Path(__file__).name
SRC_LINES = Path(__file__).read_text(encoding="utf-8").splitlines()


def line_of(marker: str) -> int:
    """The 1-based line of this file that holds ``marker``."""
    hits = [i + 1 for i, line in enumerate(SRC_LINES) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


T16 = pl.Tensor[[16, 16], pl.FP32]


@pl.program
class Basic:
    @pl.function(type=pl.FunctionType.AIV)
    def kernel(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        output: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32] = pl.load(a, [0, 0], [16, 16])
        o: pl.Tensor[[16, 16], pl.FP32] = pl.store(t, [0, 0], output)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        d: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.dump_tag(a)
        pl.dump_tag(a)
        d = self.kernel(a, d)
        return d


def test_program_is_an_ir_program_with_the_functions_in_order() -> None:
    assert isinstance(Basic, ir.Program)
    assert Basic.name == "Basic"
    assert [f.name for f in Basic.functions.values()] == ["kernel", "orch"]
    assert [f.ftype for f in Basic.functions.values()] == ["AIV", "Orchestration"]
    params = Basic.function("kernel").params
    assert [(v.name, d) for v, d in params] == [("a", "In"), ("output", "Out")]
    assert params[0][0].type.shape == [16, 16] and params[0][0].type.dtype == "FP32"


def test_dump_tag_rides_the_call_by_identity_and_is_deduplicated() -> None:
    text = Basic.as_python()
    assert 'd: pl.Tensor[[16, 16], pl.FP32] = self.kernel(a, d, attrs={"dump_vars": [a]})' in text
    orch = Basic.function("orch")
    call = [s for s in orch.body if s.kind == "assign"][0]
    assert call.kind == "assign"


def test_printer_round_trips_through_parse() -> None:
    text = Basic.as_python()
    again = pl.parse(text)
    Basic.assert_structural_equal(again)
    assert again.as_python() == text
    for stage in ir.pass_names():
        Basic_after = Basic.run_passes()
        assert Basic_after.structural_equal(pl.parse(Basic_after.as_python())), stage


def test_structural_equality_sees_a_difference() -> None:
    text = Basic.as_python().replace("[0, 0], shapes=[16, 16])", "[0, 0], shapes=[8, 16])", 1)
    text = text.replace("pl.Tile[[16, 16], pl.FP32] = pl.tile.load", "pl.Tile[[8, 16], pl.FP32] = pl.tile.load", 1)
    other = pl.parse(text)
    assert not Basic.structural_equal(other)
    with pytest.raises(AssertionError, match="Structural equality assertion failed"):
        Basic.assert_structural_equal(other)


@pl.program
class ControlFlow:
    @pl.function(type=pl.FunctionType.AIV)
    def inc(
        self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        acc = pl.load(x, [0, 0], [16, 16])
        for i in pl.range(n):
            acc = pl.add(acc, 1.0)
        if n > 2:
            acc = pl.mul(acc, 2.0)
        else:
            acc = pl.sub(acc, 1.0)
        return pl.store(acc, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[64, 16], pl.FP32], y: pl.InOut[pl.Tensor[[64, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]
    ) -> pl.Tensor[[64, 16], pl.FP32]:
        for i in pl.range(4):
            xs = x[i * 16 : i * 16 + 16, :]
            ys = y[i * 16 : i * 16 + 16, :]
            ys = self.inc(xs, ys, n)
        return y


def test_ssa_makes_loop_carried_values_and_merged_branches() -> None:
    after = ControlFlow.run_pass("InlineFunctions").run_pass("ConvertToSSA")
    text = after.as_python()
    # The tile carried around the loop becomes an iter arg with a yield; the if merges.
    assert "for i__ssa_v0, (acc__ssa_v1,) in pl.range(0, n__ssa_v0, 1, init_values=(acc__ssa_v0,)):" in text
    assert "acc__ssa_v3 = pl.yield_(acc__ssa_v2)" in text
    assert re.search(r"acc__ssa_v\d+ = pl\.yield_\(acc__ssa_v\d+\)\n\s+else:", text)
    # Slices at the orchestration tier.
    assert "pl.tensor.slice(x__ssa_v0, [i__ssa_v0 * 16, 0], shape=[16, 16])" in text
    assert after.structural_equal(pl.parse(text))


def test_every_pass_runs_on_its_own_and_prints_a_parsable_program() -> None:
    program = ControlFlow
    for name in ir.pass_names():
        program = program.run_pass(name)
        text = program.as_python()
        assert program.structural_equal(pl.parse(text)), name
    assert [f.ftype for f in program.functions.values()] == ["AIV", "Orchestration"]
    assert '"arg_directions": ["In", "InOut", "Scalar"]' in program.as_python()


def test_unknown_pass_is_named() -> None:
    with pytest.raises(ValueError, match="unknown pass 'Nope'; passes: InlineFunctions"):
        Basic.run_pass("Nope")


# ---- E1..E17 (reference §2.1): type, message, hint, location ----------------------------


def _raises(cls: type, message: str, hint: Any = None) -> Any:
    return pytest.raises(cls, match="^" + re.escape(message))


def test_e1_dump_tag_in_a_kernel() -> None:
    with _raises(ParserSyntaxError, "pl.dump_tag() is only valid inside an Orchestration or Inline function") as e:

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV)
            def k(self, a: pl.Tensor[[16, 16], pl.FP32]) -> None:
                pl.dump_tag(a)  # E1-HERE

    err = e.value
    assert err.hint is not None and err.hint.startswith("Move the pl.dump_tag(...) marker into the")
    assert err.span is not None
    assert str(err.span["filename"]).endswith(THIS_FILE)
    assert err.span["line"] == line_of("# E1-HERE")
    assert err.span["column"] == 17
    rendered = str(err)
    assert f"{THIS_FILE}:{line_of('# E1-HERE')}:17" in rendered
    assert "pl.dump_tag(a)  # E1-HERE" in rendered and "^^^^" in rendered


@pytest.mark.parametrize("ftype", ["InCore", "AIC", "Group", "Opaque"])
def test_e1_in_every_non_orchestration_type(ftype: str) -> None:
    src = f"""
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.{ftype})
    def k(self, a: pl.Tensor[[16, 16], pl.FP32]) -> None:
        pl.dump_tag(a)
"""
    with _raises(ParserSyntaxError, "pl.dump_tag() is only valid inside an Orchestration or Inline function"):
        pl.parse(src)


ORCH_HEAD = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INT32]) -> pl.Tensor[[16, 16], pl.FP32]:
"""


def orch_src(*body: str) -> str:
    return ORCH_HEAD + "".join(f"        {line}\n" for line in body)


@pytest.mark.parametrize(
    "stmt",
    ["pl.dump_tag()", "pl.dump_tag(a, o)", "pl.dump_tag(a, x=1)", "pl.dump_tag(tensor=a)"],
)
def test_e2_arity(stmt: str) -> None:
    with _raises(ParserSyntaxError, "pl.dump_tag() takes exactly one positional argument (no keywords)") as e:
        pl.parse(orch_src(stmt, "return o"))
    assert e.value.hint == "Use: pl.dump_tag(tensor_var)"


@pytest.mark.parametrize("arg", ["self.k", "a[0:8]", "pl.add(a, a)"])
def test_e3_bare_name(arg: str) -> None:
    with _raises(ParserSyntaxError, "pl.dump_tag() argument must be a bare variable name") as e:
        pl.parse(orch_src(f"pl.dump_tag({arg})", "return o"))
    assert e.value.hint is not None and e.value.hint.startswith("Write pl.dump_tag(q) where q is a tensor variable")


def test_e4_not_defined_yet() -> None:
    with _raises(ParserSyntaxError, "pl.dump_tag() argument 'later' is not defined at this point") as e:
        pl.parse(orch_src("pl.dump_tag(later)", "later = pl.create_tensor([16, 16], dtype=pl.FP32)", "return o"))
    assert e.value.hint == "Tag a tensor only after it is bound (a parameter or an earlier assignment)."


def test_e5_not_a_tensor() -> None:
    with _raises(ParserTypeError, "pl.dump_tag() argument 'n' is not a tensor (got Var)") as e:
        pl.parse(orch_src("pl.dump_tag(n)", "return o"))
    assert e.value.hint == "Only tensors can be selectively dumped."


def test_e6_dumps_on_a_plain_call_and_e6b_deps() -> None:
    with _raises(ParserTypeError, "Function 'k' does not accept keyword argument 'dumps'") as e:
        pl.parse(orch_src("o = self.k(a, o, dumps=[a])", "return o"))
    assert e.value.hint is not None and "declare the dump target with a `pl.dump_tag(x)` statement" in e.value.hint
    with _raises(ParserTypeError, "Function 'k' does not accept keyword argument 'deps'") as e:
        pl.parse(orch_src("o = self.k(a, o, deps=[])", "return o"))
    assert e.value.hint is not None and e.value.hint.startswith("Plain self.kernel(...) is fire-and-forget.")


def test_e7_e8_e9_submit_dumps() -> None:
    with _raises(ParserTypeError, "'k' dumps= must be a list / tuple of tensor arguments") as e:
        pl.parse(orch_src("o, t = pl.submit(self.k, a, o, dumps=a)", "return o"))
    assert e.value.hint == "Write dumps=[x, y] listing tensors passed to this submit."
    with _raises(ParserTypeError, "'k' dumps= entries must be tensor variables — got 'n'") as e:
        pl.parse(orch_src("o, t = pl.submit(self.k, a, o, dumps=[n])", "return o"))
    assert e.value.hint == "List tensors passed to this submit, e.g. dumps=[x]."
    with _raises(ParserTypeError, "'k' dumps= entries must be tensor variables — got 'a[0:8]'"):
        pl.parse(orch_src("o, t = pl.submit(self.k, a, o, dumps=[a[0:8]])", "return o"))
    with _raises(ParserTypeError, "'k' dumps= entry 'z' is not an argument of this submit") as e:
        pl.parse(orch_src("z = pl.create_tensor([16, 16], dtype=pl.FP32)", "o, t = pl.submit(self.k, a, o, dumps=[z])", "return o"))
    assert e.value.hint == "dumps= may only name tensors passed positionally to the submitted kernel."


def test_submit_dumps_duplicates_are_deduplicated_silently() -> None:
    p = pl.parse(orch_src("o, t = pl.submit(self.k, a, o, dumps=[a, a])", "return o"))
    assert "dumps=[a])" in p.as_python()


def test_e10_to_e14_at_dumps() -> None:
    at = "with pl.at(level=pl.Level.CORE_GROUP, dumps={}):"
    body = "    o = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], o)"
    cases = [
        ("a", ParserTypeError, "pl.at(dumps=...) must be a list literal of tensor names",
         "Use `dumps=[t1, t2]` with bare tensor names visible to the enclosing function."),
        ("[a.T]", ParserTypeError, "pl.at(dumps=[...]) entries must be bare tensor names",
         "Use `dumps=[t]` where `t` is a tensor variable visible to the enclosing function scope."),
        ("[qq]", ParserTypeError, "pl.at(dumps=[...]) references unknown name 'qq'",
         "Each entry must resolve to a tensor visible in the enclosing function scope."),
        ("[n]", ParserTypeError, "pl.at(dumps=[...]) entry 'n' is not a tensor (got type Scalar[INT32])",
         "Only tensors can be selectively dumped."),
        ("[a, a]", ParserTypeError, "pl.at(dumps=[...]) lists 'a' more than once",
         "Each tensor may appear at most once in `dumps=`."),
    ]
    for dumps, cls, msg, hint in cases:
        with _raises(cls, msg) as e:
            pl.parse(orch_src(at.format(dumps), body, "return o"))
        assert e.value.hint == hint, dumps


def test_e16_manual_scope_takes_no_arguments() -> None:
    with _raises(ParserSyntaxError, "pl.manual_scope() does not accept arguments") as e:
        pl.parse(orch_src("with pl.manual_scope(1):", "    o = self.k(a, o)", "return o"))
    assert e.value.hint == "Use 'with pl.manual_scope():' (or 'with pl.scope(mode=pl.ScopeMode.MANUAL):')."


def test_e17_unknown_at_keyword() -> None:
    with _raises(ParserSyntaxError, "Unknown keyword argument 'colour' in pl.at()") as e:
        pl.parse(orch_src("with pl.at(level=pl.Level.CORE_GROUP, colour=1):", "    pass", "return o"))
    assert e.value.hint == (
        "Supported arguments: level, role, optimizations, deps, no_dep_args, dumps, "
        "allow_early_resolve, name_hint, windowize"
    )


def test_e15_round_trip_attrs_dict() -> None:
    ok = pl.parse(orch_src('o = self.k(a, o, attrs={"dump_vars": [a]})', "return o"))
    assert 'attrs={"dump_vars": [a]}' in ok.as_python()
    with _raises(ParserTypeError, "attrs['dump_vars'] on call to 'k' must be a list literal"):
        pl.parse(orch_src('o = self.k(a, o, attrs={"dump_vars": a})', "return o"))
    with _raises(ParserTypeError, "attrs['dump_vars'] entries on call to 'k' must be tensor variables — got 'n'"):
        pl.parse(orch_src('o = self.k(a, o, attrs={"dump_vars": [n]})', "return o"))
    with _raises(ParserTypeError, "attrs['dump_vars'] entry 'z' is not an argument of call to 'k'"):
        pl.parse(orch_src("z = pl.create_tensor([16, 16], dtype=pl.FP32)", 'o = self.k(a, o, attrs={"dump_vars": [z]})', "return o"))


def test_dump_tag_in_expression_position_is_an_unknown_operation() -> None:
    with _raises(InvalidOperationError, "Unknown operation 'pl.dump_tag'") as e:
        pl.parse(orch_src("x = pl.dump_tag(a)", "return o"))
    assert e.value.hint == "Check spelling, or use pl.tensor.*/pl.tile.*/pl.system.* for explicit namespacing"


def test_submit_must_unpack_to_two_targets() -> None:
    with _raises(ParserSyntaxError, "pl.submit(...) must be unpacked to exactly two targets"):
        pl.parse(orch_src("o = pl.submit(self.k, a, o)", "return o"))


# ---- other diagnostics: located, with a hint ----------------------------------------------


def test_op_type_errors_are_invalid_operation_errors_located_at_the_call() -> None:
    src = orch_src("return o").replace(
        "return pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], o)",
        "return pl.store(pl.load(a, [0, 8], [16, 16]), [0, 0], o)",
    )
    with pytest.raises(InvalidOperationError, match="offset 8 \\+ size 16 is outside the tensor's extent 16") as e:
        pl.parse(src, filename="prog.py")
    span = e.value.span
    assert span is not None
    assert (span["filename"], span["line"], span["column"]) == ("prog.py", 8, 25)
    assert e.value.hint == "Keep the region inside the tensor."


def test_a_region_a_2d_view_cannot_address_is_refused_with_the_fix() -> None:
    """Kernels view every tensor folded to [rows, cols]: a 3-D region must be whole rows."""
    head = """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV)
    def k(self, a: pl.Tensor[[4, 8, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, OFFS, SIZES)
        return pl.store(t, [0, 0], o)
"""
    # One slice along the outer dimension, or whole inner dimensions: accepted.
    pl.parse(head.replace("OFFS", "[1, 0, 0]").replace("SIZES", "[1, 16, 16]").replace("8, 16]", "16, 16]"))
    pl.parse(head.replace("OFFS", "[2, 0, 0]").replace("SIZES", "[2, 8, 16]"))
    with pytest.raises(InvalidOperationError, match=r"is not a block of whole rows \(dimension 1 is cut while dimension 0 spans 2\)") as e:
        pl.parse(head.replace("OFFS", "[0, 0, 0]").replace("SIZES", "[2, 4, 16]").replace("[16, 16], pl.FP32]]", "[8, 16], pl.FP32]]").replace("[16, 16], pl.FP32]:", "[8, 16], pl.FP32]:"), filename="prog.py")
    assert e.value.hint is not None and "size 1 there" in e.value.hint
    span = e.value.span
    assert span is not None and (span["filename"], span["line"]) == ("prog.py", 6)


def test_header_gaps_and_subset_gaps_are_named() -> None:
    src = ORCH_HEAD.replace("return pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], o)",
                            "t = pl.load(a, [0, 0], [16, 16])\n        return pl.store(pl.sel(t, t, t), [0, 0], o)") + "        return o\n"
    with pytest.raises(InvalidOperationError, match=r"pl\.sel is not supported yet: the PTO-ISA header has no TSEL"):
        pl.parse(src)
    src2 = src.replace("pl.sel(t, t, t)", "pl.gemv(t, t)")
    with pytest.raises(InvalidOperationError, match=r"pl\.gemv is not supported by this DSL subset yet"):
        pl.parse(src2)


def test_tile_ops_in_orchestration_and_tensor_ops_in_kernels_are_refused() -> None:
    with pytest.raises(InvalidOperationError, match="tile operation pl.load in orchestration code") as e:
        pl.parse(orch_src("t = pl.load(a, [0, 0], [16, 16])", "return o"))
    assert e.value.hint is not None and "pl.at(level=pl.Level.CORE_GROUP)" in e.value.hint
    src = ORCH_HEAD.replace("return pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], o)",
                            "z = pl.create_tensor([16, 16], dtype=pl.FP32)\n        return o") + "        return o\n"
    with pytest.raises(InvalidOperationError, match="tensor operation pl.create_tensor inside a kernel"):
        pl.parse(src)


def test_store_into_an_in_parameter_is_a_type_error() -> None:
    src = ORCH_HEAD.replace("o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n        return pl.store",
                            "o: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:\n        return pl.store", 1)
    src += "        return o\n"
    with pytest.raises(ParserTypeError, match="pl.store writes 'o', an In parameter of kernel 'k'") as e:
        pl.parse(src)
    assert e.value.hint is not None and "pl.Out[...]" in e.value.hint


def test_undefined_names_wrong_arguments_and_annotations() -> None:
    with pytest.raises(ParserSyntaxError, match="Undefined variable 'nope'"):
        pl.parse(orch_src("o = self.k(nope, o)", "return o"))
    with pytest.raises(ParserTypeError, match="'k' takes 2 argument\\(s\\), got 1"):
        pl.parse(orch_src("o = self.k(a)", "return o"))
    with pytest.raises(ParserTypeError, match="argument 1 of 'k' is Scalar\\[INT32\\], parameter 'a' is Tensor\\[\\[16, 16\\], FP32\\]"):
        pl.parse(orch_src("o = self.k(n, o)", "return o"))
    with pytest.raises(ParserSyntaxError, match="Function 'nope' is not defined in program P"):
        pl.parse(orch_src("o = self.nope(a, o)", "return o"))
    with pytest.raises(ParserTypeError, match="is annotated Tile\\[\\[8, 16\\], FP32\\] but the value is Tile\\[\\[16, 16\\], FP32\\]"):
        pl.parse(ORCH_HEAD.replace("return pl.store(", "t: pl.Tile[[8, 16], pl.FP32] = pl.load(a, [0, 0], [16, 16])\n        return pl.store(") + "        return o\n")


def test_python_syntax_errors_are_located() -> None:
    with pytest.raises(ParserSyntaxError, match="invalid Python syntax") as e:
        pl.parse("@pl.program\nclass P:\n    def f(self\n", filename="bad.py")
    assert e.value.span is not None and e.value.span["filename"] == "bad.py"


def test_stubs_refuse_to_run_outside_a_parsed_body() -> None:
    with pytest.raises(RuntimeError, match="pl.load is a DSL construct"):
        pl.load(None, [0], [1])
    assert pl.dump_tag(3) == 3
    with pytest.raises(AttributeError, match="not in this DSL subset"):
        getattr(pl, "no_such_op")


def test_every_error_class_is_a_parser_error() -> None:
    for cls in (ParserSyntaxError, ParserTypeError, InvalidOperationError):
        assert issubclass(cls, ParserError)
    assert not issubclass(CompileError, ParserError)
