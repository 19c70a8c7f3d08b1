"""Selective dumps, end to end: the seed's limitations table row by row. Each supported form
compiles, runs with ``enable_dump_args=1`` and dumps exactly the tagged tensors with the
right roles (``dfx_outputs/args_dump/args_dump.json``); each unsupported form raises
PyPTO's exception with its text and hint; each silent-drop case of reference §2.2 is
silent (compiles, runs, dumps nothing for it)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, List, Set, Tuple

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.errors import CompileError, ParserSyntaxError, ParserTypeError
from pypto.runtime import RunConfig, run

F = pl.FP32
Dump = Set[Tuple[str, int, str, str]]


def rand(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


def dumps_of(build: Path, kernels: List[str]) -> Dump:
    """``(kernel, arg_index, role, stage)`` of every dumped argument."""
    path = build / "dfx_outputs" / "args_dump" / "args_dump.json"
    if not path.exists():
        return set()
    doc = json.loads(path.read_text())
    return {(kernels[a["func_id"][0]], a["arg_index"], a["role"], a["stage"]) for a in doc["args"]}


def orch_cpp(build: Path) -> str:
    files = list((build / "orchestration").glob("*.cpp"))
    assert len(files) == 1, files
    return files[0].read_text()


def go(program: Any, tmp: Path, *args: Any, level: int = 1) -> Tuple[Path, Dump]:
    compiled = run(program, *args, config=RunConfig(save_kernels_dir=str(tmp / "build"), enable_dump_args=level))
    build = Path(compiled.output_dir if hasattr(compiled, "output_dir") else compiled.work_dir)
    kernels = [k for k in compiled.compile_report["kernels"]] if hasattr(compiled, "compile_report") else []
    return build, dumps_of(build, kernels)


# ---- row 1: pl.dump_tag in an Orchestration body (the seed's orch) ------------------------


@pl.program
class Attention:
    @pl.function(type=pl.FunctionType.AIV)
    def qk_pv(
        self,
        q: pl.Tensor[[16, 32], pl.FP32],
        k_cache: pl.Tensor[[4, 16, 32], pl.FP32],
        out: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ) -> pl.Tensor[[16, 32], pl.FP32]:
        tq = pl.load(q, [0, 0], [16, 32])
        tk = pl.load(k_cache, [1, 0, 0], [1, 16, 32])
        return pl.store(pl.mul(tq, tk), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self,
        q: pl.Tensor[[16, 32], pl.FP32],
        k_cache: pl.Tensor[[4, 16, 32], pl.FP32],
        out: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ) -> pl.Tensor[[16, 32], pl.FP32]:
        pl.dump_tag(q)
        pl.dump_tag(out)
        out = self.qk_pv(q, k_cache, out)  # q and out dumped; k_cache filtered
        return out


@pytest.fixture(scope="module")
def attention_inputs() -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    return rand(16, 32), rand(4, 16, 32), np.zeros((16, 32), np.float32)


def test_row1_dump_tag_dumps_q_and_out_and_filters_k_cache(tmp_path: Path, attention_inputs: Any) -> None:
    q, k, out = attention_inputs
    build, dumped = go(Attention, tmp_path, q, k, out)
    np.testing.assert_allclose(out, q * k[1], rtol=1e-6)
    assert "params_t0.dump(ext_q, ext_out);" in orch_cpp(build)
    assert dumped == {
        ("qk_pv", 0, "input", "before_dispatch"),
        ("qk_pv", 2, "output", "after_completion"),
    }


@pl.program
class AttentionSubmit:
    @pl.function(type=pl.FunctionType.AIV)
    def qk_pv(
        self,
        q: pl.Tensor[[16, 32], pl.FP32],
        k_cache: pl.Tensor[[4, 16, 32], pl.FP32],
        out: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ) -> pl.Tensor[[16, 32], pl.FP32]:
        tq = pl.load(q, [0, 0], [16, 32])
        tk = pl.load(k_cache, [1, 0, 0], [1, 16, 32])
        return pl.store(pl.mul(tq, tk), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self,
        q: pl.Tensor[[16, 32], pl.FP32],
        k_cache: pl.Tensor[[4, 16, 32], pl.FP32],
        out: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ) -> pl.Tensor[[16, 32], pl.FP32]:
        out, tid = pl.submit(self.qk_pv, q, k_cache, out, dumps=[q, out])
        return out


def test_row2_the_seeds_submit_dumps_q_and_out(tmp_path: Path, attention_inputs: Any) -> None:
    q, k, out = attention_inputs
    build, dumped = go(AttentionSubmit, tmp_path, q, k, out)
    np.testing.assert_allclose(out, q * k[1], rtol=1e-6)
    assert "params_t0.dump(ext_q, ext_out);" in orch_cpp(build)
    assert dumped == {
        ("qk_pv", 0, "input", "before_dispatch"),
        ("qk_pv", 2, "output", "after_completion"),
    }


def test_dump_levels_zero_and_two(tmp_path: Path, attention_inputs: Any) -> None:
    q, k, out = attention_inputs
    _, none = go(Attention, tmp_path / "l0", q, k, out, level=0)
    assert none == set()
    _, everything = go(Attention, tmp_path / "l2", q, k, out, level=2)
    assert {(a, i) for a, i, _, _ in everything} == {("qk_pv", 0), ("qk_pv", 1), ("qk_pv", 2)}


# ---- row 2: dumps= on pl.submit; runtime scopes carry nothing themselves -----------------


@pl.program
class Stages:
    @pl.function(type=pl.FunctionType.AIV)
    def stage1(
        self, x: pl.Tensor[[16, 32], pl.FP32], scratch: pl.InOut[pl.Tensor[[16, 32], pl.FP32]]
    ) -> pl.Tensor[[16, 32], pl.FP32]:
        r = pl.add(pl.load(x, [0, 0], [16, 32]), pl.load(scratch, [0, 0], [16, 32]))
        return pl.store(r, [0, 0], scratch)

    @pl.function(type=pl.FunctionType.AIV)
    def stage2(
        self, scratch: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]
    ) -> pl.Tensor[[16, 32], pl.FP32]:
        return pl.store(pl.mul(pl.load(scratch, [0, 0], [16, 32]), 2.0), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[16, 32], pl.FP32],
        scratch: pl.InOut[pl.Tensor[[16, 32], pl.FP32]],
        out: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        out2: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.manual_scope():
            scratch, stage1_tid = pl.submit(self.stage1, x, scratch, dumps=[x, scratch])
            out, _ = pl.submit(self.stage2, scratch, out, deps=[stage1_tid])
        pl.dump_tag(scratch)
        with pl.manual_scope():
            # The tag rides the task itself (runtime scopes carry nothing). A manual scope
            # orders tasks only by deps=, so this one must name stage1 (a plain call there
            # would race with it).
            out2, _ = pl.submit(self.stage2, scratch, out2, deps=[stage1_tid])
        return out


def test_row2_submit_dumps_and_manual_scope(tmp_path: Path) -> None:
    x, s = rand(16, 32), rand(16, 33)[:, :32].copy()
    out, out2 = np.zeros((16, 32), np.float32), np.zeros((16, 32), np.float32)
    want = (x + s) * 2
    build, dumped = go(Stages, tmp_path, x, s, out, out2)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    np.testing.assert_allclose(out2, want, rtol=1e-6)
    cpp = orch_cpp(build)
    assert "PTO2_SCOPE(PTO2ScopeMode::MANUAL) {" in cpp
    assert "params_t0.dump(ext_x, ext_scratch);" in cpp
    assert "params_t1.dump" not in cpp
    assert "params_t1.set_dependencies(params_t1_deps, params_t1_deps_count);" in cpp
    assert "params_t2.dump(ext_scratch);" in cpp
    assert "params_t2_deps[params_t2_deps_count++] = stage1_tid;" in cpp
    assert dumped == {
        ("stage1", 0, "input", "before_dispatch"),
        ("stage1", 1, "inout", "before_dispatch"),
        ("stage1", 1, "inout", "after_completion"),
        ("stage2", 0, "input", "before_dispatch"),
    }


# ---- rows 3 and 5: dumps= on pl.at, tags on outlined dispatches (forward sticky) ---------


@pl.program
class Scopes:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        b: pl.Tensor[[16, 16], pl.FP32],
        o1: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        o2: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        o3: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):  # before the tag: nothing (forward sticky)
            pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], o1)
        pl.dump_tag(a)
        with pl.at(level=pl.Level.CORE_GROUP, dumps=[b]) as t0:  # explicit b, sticky a
            ta = pl.load(a, [0, 0], [16, 16])
            tb = pl.load(b, [0, 0], [16, 16])
            pl.store(pl.add(ta, tb), [0, 0], o2)
        with pl.at(level=pl.Level.CORE_GROUP, deps=[t0]):  # a not captured: dropped silently
            pl.store(pl.mul(pl.load(b, [0, 0], [16, 16]), 3.0), [0, 0], o3)
        return o3


def test_rows3_and_5_at_dumps_are_translated_to_the_outlined_dispatches(tmp_path: Path) -> None:
    a, b = rand(16, 16), rand(16, 17)[:, :16].copy()
    o1, o2, o3 = (np.zeros((16, 16), np.float32) for _ in range(3))
    printed = Scopes.as_python()
    assert "with pl.at(level=pl.Level.CORE_GROUP, dumps=[b, a]) as t0:" in printed
    # deps= makes the dispatch a submit: the printer names its task id.
    assert re.search(r"with pl\.at\(level=pl\.Level\.CORE_GROUP, deps=\[t0\], dumps=\[a\]\) as _at_tid\d+:", printed)
    Scopes.assert_structural_equal(pl.parse(printed))
    outlined = Scopes.run_passes().as_python()
    assert 'pl.submit(self.main_incore_1, a__ssa_v0, b__ssa_v0, o2__ssa_v0, dumps=[a__ssa_v0, b__ssa_v0]' in outlined
    assert "pl.submit(self.main_incore_2, b__ssa_v0, o3__ssa_v0, deps=[t0__ssa_v0]," in outlined
    build, dumped = go(Scopes, tmp_path, a, b, o1, o2, o3)
    np.testing.assert_allclose(o1, a + 1, rtol=1e-6)
    np.testing.assert_allclose(o2, a + b, rtol=1e-6)
    np.testing.assert_allclose(o3, b * 3, rtol=1e-6)
    cpp = orch_cpp(build)
    assert "params_t1.dump(ext_a, ext_b);" in cpp
    assert "params_t0.dump" not in cpp and "params_t2.dump" not in cpp
    assert dumped == {
        ("main_incore_1", 0, "input", "before_dispatch"),
        ("main_incore_1", 1, "input", "before_dispatch"),
    }


@pl.jit.inline
def add_inline(a: pl.Tensor, c: pl.Tensor) -> pl.Tensor:
    pl.dump_tag(a)  # inline-scope tag -> the pl.at scope's dump list
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_a = pl.load(a, [0, 0], [32, 32])
        pl.store(pl.add(tile_a, 1.0), [0, 0], c)
    return c


@pl.jit.inline
def mul_inline(a: pl.Tensor, c: pl.Tensor, unused: pl.Tensor) -> pl.Tensor:
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_a = pl.load(a, [0, 0], [32, 32])
        pl.store(pl.mul(tile_a, 3.0), [0, 0], c)
    return c


@pl.jit
def add_mul_with_dump_tags(a: pl.Tensor, c: pl.Out[pl.Tensor], side: pl.Tensor) -> pl.Tensor:
    intermediate = pl.create_tensor([32, 32], dtype=pl.FP32)
    pl.dump_tag(intermediate)  # entry-scope tag -> the inline call's dump_vars
    intermediate = add_inline(a, intermediate)
    pl.dump_tag(side)  # a call-site tag the inline body never consumes: dropped
    c = mul_inline(intermediate, c, side)  # consumes the rebound intermediate: not dumped
    return c


def test_row5_jit_inline_tags_reach_the_outlined_dispatch(tmp_path: Path) -> None:
    a, side = rand(32, 32), rand(32, 31)[:, :1].repeat(32, axis=1).copy()
    c = np.zeros((32, 32), np.float32)
    program = add_mul_with_dump_tags.front_end(a, c, side)
    text = program.run_pass("InlineFunctions").as_python()
    assert "with pl.at(level=pl.Level.CORE_GROUP, dumps=[a, intermediate]):" in text
    compiled = add_mul_with_dump_tags.compile(a, c, side, output_dir=str(tmp_path / "jit"))
    compiled(a, c, side, config=RunConfig(enable_dump_args=1))
    np.testing.assert_allclose(c, (a + 1) * 3, rtol=1e-6)
    build = tmp_path / "jit"
    cpp = orch_cpp(build)
    assert "params_t0.dump(ext_a, intermediate);" in cpp
    assert "params_t1.dump" not in cpp
    kernels = compiled.compile_report["kernels"]
    assert dumps_of(build, kernels) == {
        (kernels[0], 0, "input", "before_dispatch"),
        (kernels[0], 1, "output", "after_completion"),
    }


# ---- rows 4 and 6, HOST tier: errors -------------------------------------------------


def test_row4_dumps_on_a_plain_call_is_a_type_error() -> None:
    with pytest.raises(ParserTypeError, match="Function 'qk_pv' does not accept keyword argument 'dumps'"):

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV)
            def qk_pv(self, q: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
                return pl.store(pl.load(q, [0, 0], [16, 16]), [0, 0], o)

            @pl.function(type=pl.FunctionType.Orchestration)
            def orch(self, q: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
                o = self.qk_pv(q, o, dumps=[q])
                return o


@pytest.mark.parametrize("ftype", ["InCore", "AIC", "AIV", "Group"])
def test_row6_dump_tag_in_a_kernel_body_is_a_syntax_error(ftype: str) -> None:
    src = f"""
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.{ftype})
    def k(self, q: pl.Tensor[[16, 16], pl.FP32]) -> None:
        pl.dump_tag(q)
"""
    with pytest.raises(ParserSyntaxError, match=r"pl\.dump_tag\(\) is only valid inside an Orchestration or Inline function"):
        pl.parse(src)


def test_row_host_tier_is_not_supported(tmp_path: Path) -> None:
    src = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, q: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.dump_tag(q)
        with pl.at(level=pl.Level.HOST):
            o = pl.store(pl.load(q, [0, 0], [16, 16]), [0, 0], o)
        return o
"""
    with pytest.raises(CompileError, match=r"pl\.at\(level=pl\.Level\.HOST\) is not supported yet") as e:
        ir.compile(pl.parse(src, filename="host.py"), output_dir=str(tmp_path / "b"))
    assert e.value.stage == "OutlineIncoreScopes"
    assert e.value.span is not None and e.value.span["filename"] == "host.py" and e.value.span["line"] == 9


# ---- rows 7, 9-13 and the silent drops of §2.2 --------------------------------------


@pl.program
class Silent:
    @pl.function(type=pl.FunctionType.AIV)
    def copy(self, src: pl.Tensor[[16, 16], pl.FP32], dst: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.store(pl.load(src, [0, 0], [16, 16]), [0, 0], dst)

    @pl.function(type=pl.FunctionType.AIV)
    def addk(
        self, src: pl.Tensor[[16, 16], pl.FP32], dst: pl.InOut[pl.Tensor[[16, 16], pl.FP32]], k: pl.Scalar[pl.FP32]
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.add(pl.load(src, [0, 0], [16, 16]), pl.load(dst, [0, 0], [16, 16]))
        return pl.store(pl.add(t, k), [0, 0], dst)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        q: pl.Tensor[[16, 16], pl.FP32],
        x: pl.Tensor[[48, 16], pl.FP32],
        y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
        o1: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        o2: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        o3: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        row: pl.Scalar[pl.INDEX],
        k: pl.Scalar[pl.FP32],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        # Before the tag: not dumped (forward sticky). It writes o2, which the later copy of
        # q2 (the same values) writes again: two plain outputs of one buffer are unordered,
        # as in Simpler, so the two writes must agree.
        o2 = self.copy(q, o2)
        pl.dump_tag(q)
        pl.dump_tag(y)
        y = self.addk(q, y, k)  # q (input) and y (inout) dumped; the scalar k never
        o1 = self.copy(y, o1)  # the rebound y is a new value: not dumped
        q2 = pl.reshape(q, [16, 16])  # a transform makes a new value
        o2 = self.copy(q2, o2)  # not dumped
        pl.dump_tag(x)
        xs = x[row : row + 16, :]  # a dynamic-offset slice of a tagged tensor
        o3 = self.copy(xs, o3)  # not dumped
        buf = pl.create_tensor([48, 16], dtype=pl.FP32)
        pl.dump_tag(buf)
        buf = pl.assemble(buf, o1, [0, 0])  # a copy task no dumps= names: nothing to dump
        idx = pl.read(q, [0, 0])  # a scalar read: q is not a task argument here
        never = pl.create_tensor([16, 16], dtype=pl.FP32)
        pl.dump_tag(never)  # never consumed: nothing
        _, tid = pl.submit(self.copy, q, dumps=[q])  # the synthetic output has no slot to dump
        return o1


def test_silent_drops_compile_run_and_dump_only_what_is_tagged(tmp_path: Path) -> None:
    q, x = rand(16, 16), rand(48, 16)
    y = rand(16, 15)[:, :1].repeat(16, axis=1).copy()
    y0 = y.copy()
    o1, o2, o3 = (np.zeros((16, 16), np.float32) for _ in range(3))
    row, k = 16, 0.5
    build, dumped = go(Silent, tmp_path, q, x, y, o1, o2, o3, row, k)
    np.testing.assert_allclose(y, q + y0 + k, rtol=1e-6)
    np.testing.assert_allclose(o1, y, rtol=1e-6)
    np.testing.assert_allclose(o2, q, rtol=1e-6)
    np.testing.assert_allclose(o3, x[16:32], rtol=1e-6)
    cpp = orch_cpp(build)
    assert "params_t1.dump(ext_q, ext_y);" in cpp
    assert "params_t6.dump(ext_q);" in cpp
    assert "params_t6.add_output(params_t6_synth_out_0_ci);" in cpp
    for t in (0, 2, 3, 4, 5):
        assert f"params_t{t}.dump" not in cpp
    assert dumped == {
        ("addk", 0, "input", "before_dispatch"),
        ("addk", 1, "inout", "before_dispatch"),
        ("addk", 1, "inout", "after_completion"),
        ("copy", 0, "input", "before_dispatch"),
    }
