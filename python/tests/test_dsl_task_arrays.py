"""Task-id arrays and dependency-only barriers, as in PyPTO's manual dependency primitives:
``pl.array.create(N, pl.TASK_ID)`` collects the ids of a fan-out (``tids[b] = tid``), a
``deps=[tids]`` entry depends on every valid element, ``pl.system.task_dummy(deps=[...])``
submits a barrier without a kernel whose id later tasks depend on, and ``tids[k]`` reads one
element. Each program is compiled, run on the simulator and checked against NumPy; the
dependency edges are read back from the run's ``deps.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.backend.pto_backend import PartialCodegenError
from pypto.language.errors import InvalidOperationError, ParserTypeError
from pypto.runtime import RunConfig, run

ROWS = 16
COLS = 32
BRANCHES = 2
TOTAL = ROWS * BRANCHES


@pl.program
class FanInArray:
    """Phase 1 writes ``mid`` block by block; phase 2 reads the *other* branch's block, so
    each phase-2 task needs every phase-1 task (``deps=[tids]``)."""

    @pl.function(type=pl.FunctionType.InCore)
    def produce(
        self, x: pl.Tensor[[TOTAL, COLS], pl.FP32], row: pl.Scalar[pl.INDEX], mid: pl.Out[pl.Tensor[[TOTAL, COLS], pl.FP32]]
    ) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
        t = pl.load(x, [row, 0], [ROWS, COLS])
        return pl.store(pl.add(t, 1.0), [row, 0], mid)

    @pl.function(type=pl.FunctionType.InCore)
    def consume(
        self,
        mid: pl.Tensor[[TOTAL, COLS], pl.FP32],
        src: pl.Scalar[pl.INDEX],
        dst: pl.Scalar[pl.INDEX],
        out: pl.Out[pl.Tensor[[TOTAL, COLS], pl.FP32]],
    ) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
        t = pl.load(mid, [src, 0], [ROWS, COLS])
        return pl.store(pl.mul(t, 2.0), [dst, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[TOTAL, COLS], pl.FP32],
        mid: pl.Out[pl.Tensor[[TOTAL, COLS], pl.FP32]],
        out: pl.Out[pl.Tensor[[TOTAL, COLS], pl.FP32]],
    ) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
        with pl.manual_scope():
            tids = pl.array.create(BRANCHES, pl.TASK_ID)
            for b in pl.parallel(BRANCHES):
                mid, tid = pl.submit(self.produce, x, b * ROWS, mid)
                tids[b] = tid
            for b in pl.parallel(BRANCHES):
                other: pl.Scalar[pl.INDEX] = (BRANCHES - 1 - b) * ROWS
                out, tid = pl.submit(self.consume, mid, other, b * ROWS, out, deps=[tids])
        return out


def build_phases(use_barrier: bool, phases: int = 2):
    """``phases`` rounds over the same rows of ``out`` (each adds 1 to ``out``, which the
    previous round wrote): round r depends on every task of round r - 1, directly
    (``deps=[prev]``) or through one barrier (``pl.system.task_dummy``). The task-id array
    of each round is carried by the outer loop (``init_values`` / ``pl.yield_``)."""

    @pl.program
    class Phases:
        @pl.function(type=pl.FunctionType.InCore)
        def bump(
            self, out: pl.InOut[pl.Tensor[[TOTAL, COLS], pl.FP32]], row: pl.Scalar[pl.INDEX]
        ) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
            t = pl.load(out, [row, 0], [ROWS, COLS])
            return pl.store(pl.add(t, 1.0), [row, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[TOTAL, COLS], pl.FP32]]) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
            with pl.manual_scope():
                tids = pl.array.create(BRANCHES, pl.TASK_ID)
                for p, (prev,) in pl.range(phases, init_values=(tids,)):
                    nxt = pl.array.create(BRANCHES, pl.TASK_ID)
                    if use_barrier:
                        fence = pl.system.task_dummy(deps=[prev])
                        for b in pl.parallel(BRANCHES):
                            out, tid = pl.submit(self.bump, out, b * ROWS, deps=[fence])
                            nxt[b] = tid
                    else:
                        for b in pl.parallel(BRANCHES):
                            out, tid = pl.submit(self.bump, out, b * ROWS, deps=[prev])
                            nxt[b] = tid
                    tids = pl.yield_(nxt)
            return out

    return Phases


def _deps(compiled: Any) -> Dict[str, Any]:
    data: Dict[str, Any] = json.loads((Path(str(compiled)) / "dfx_outputs" / "deps.json").read_text())
    return data


def _explicit(deps: Dict[str, Any]) -> List[Any]:
    return [e for e in deps["edges"] if e["source"] == "explicit"]


def _config(tmp_path: Path, name: str) -> RunConfig:
    return RunConfig(platform="a2a3sim", enable_dep_gen=True, save_kernels_dir=str(tmp_path / name))


def test_a_full_array_dependency_waits_for_every_element(tmp_path: Path) -> None:
    x = np.random.default_rng(3).standard_normal((TOTAL, COLS)).astype(np.float32)
    mid, out = np.zeros_like(x), np.zeros_like(x)
    compiled = run(FanInArray, x, mid, out, config=_config(tmp_path, "fan_in"))
    np.testing.assert_allclose(mid, x + 1.0, rtol=1e-6)
    swapped = np.concatenate([mid[ROWS:], mid[:ROWS]])
    np.testing.assert_allclose(out, swapped * 2.0, rtol=1e-6)
    # Every consumer depends on every producer: BRANCHES x BRANCHES explicit edges.
    deps = _deps(compiled)
    assert len(deps["tasks"]) == 2 * BRANCHES
    assert len(_explicit(deps)) == BRANCHES * BRANCHES
    cpp = next((Path(str(compiled)) / "orchestration").glob("*.cpp")).read_text()
    assert "PTO2TaskId tids[2];" in cpp and ".is_valid()) params_t1_deps[params_t1_deps_count++] = tids[" in cpp


@pytest.mark.parametrize("use_barrier", [False, True])
def test_phases_carry_their_task_ids_and_barriers_compress_the_edges(tmp_path: Path, use_barrier: bool) -> None:
    phases = 3
    program = build_phases(use_barrier, phases)
    out = np.random.default_rng(4).standard_normal((TOTAL, COLS)).astype(np.float32)
    start = out.copy()
    compiled = run(program, out, config=_config(tmp_path, f"phases_{use_barrier}"))
    np.testing.assert_allclose(out, start + phases, rtol=1e-6)
    deps = _deps(compiled)
    kernels = phases * BRANCHES
    if use_barrier:
        # The first round's barrier has no valid predecessor and is not submitted; each
        # later one has BRANCHES edges in and BRANCHES out.
        assert len(deps["tasks"]) == kernels + phases - 1
        assert len(_explicit(deps)) == (phases - 1) * 2 * BRANCHES
        assert sum(1 for t in deps["tasks"] if all(k == -1 for k in t["kernel_ids"])) == phases - 1
    else:
        assert len(deps["tasks"]) == kernels
        assert len(_explicit(deps)) == (phases - 1) * BRANCHES * BRANCHES


def test_an_element_read_is_a_dependency_and_the_ir_round_trips(tmp_path: Path) -> None:
    @pl.program
    class FirstOnly:
        @pl.function(type=pl.FunctionType.InCore)
        def bump(
            self, out: pl.InOut[pl.Tensor[[TOTAL, COLS], pl.FP32]], row: pl.Scalar[pl.INDEX]
        ) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
            t = pl.load(out, [row, 0], [ROWS, COLS])
            return pl.store(pl.mul(t, 3.0), [row, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[TOTAL, COLS], pl.FP32]]) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
            with pl.manual_scope():
                tids: pl.Array[BRANCHES, pl.TASK_ID] = pl.array.create(BRANCHES, pl.TASK_ID)
                for b in pl.range(BRANCHES):
                    out, tid = pl.submit(self.bump, out, b * ROWS)
                    tids = pl.array.update_element(tids, b, tid)
                first = tids[0]
                last = pl.array.get_element(tids, BRANCHES - 1)
                out, t2 = pl.submit(self.bump, out, 0, deps=[first, last])
            return out

    text = FirstOnly.as_python()
    assert "pl.array.create(2, pl.TASK_ID)" in text and "pl.Array[2, pl.TASK_ID]" in text
    assert ir.serialize(pl.parse(text)) == ir.serialize(FirstOnly)
    out = np.random.default_rng(5).standard_normal((TOTAL, COLS)).astype(np.float32)
    start = out.copy()
    compiled = run(FirstOnly, out, config=_config(tmp_path, "first_only"))
    expected = start * 3.0
    expected[:ROWS] *= 3.0
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert len(_explicit(_deps(compiled))) == 2
    # Every pass snapshot (the printed IR re-parsed) computes the same in the interpreter.
    built = ir.compile(FirstOnly, output_dir=str(tmp_path / "validate"))
    built.validate_ir({"out": start.copy()}, {"out": expected}, rtol=1e-6, atol=1e-6)


def test_a_name_bound_only_inside_an_earlier_loop_starts_afresh_in_a_later_one(tmp_path: Path) -> None:
    @pl.program
    class TwoLoops:
        @pl.function(type=pl.FunctionType.InCore)
        def bump(
            self, out: pl.InOut[pl.Tensor[[TOTAL, COLS], pl.FP32]], row: pl.Scalar[pl.INDEX]
        ) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
            t = pl.load(out, [row, 0], [ROWS, COLS])
            return pl.store(pl.add(t, 1.0), [row, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[TOTAL, COLS], pl.FP32]]) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
            for i in pl.range(BRANCHES):
                row: pl.Scalar[pl.INDEX] = i * ROWS
                out = self.bump(out, row)
            for i in pl.range(BRANCHES):
                row: pl.Scalar[pl.INDEX] = (BRANCHES - 1 - i) * ROWS
                out = self.bump(out, row)
            return out

    out = np.zeros((TOTAL, COLS), np.float32)
    run(TwoLoops, out, config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / "two_loops")))
    np.testing.assert_allclose(out, np.full_like(out, 2.0))


def test_reading_an_array_after_it_was_updated_is_refused(tmp_path: Path) -> None:
    @pl.program
    class Stale:
        @pl.function(type=pl.FunctionType.InCore)
        def bump(
            self, out: pl.InOut[pl.Tensor[[TOTAL, COLS], pl.FP32]], row: pl.Scalar[pl.INDEX]
        ) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
            t = pl.load(out, [row, 0], [ROWS, COLS])
            return pl.store(pl.add(t, 1.0), [row, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.InOut[pl.Tensor[[TOTAL, COLS], pl.FP32]]) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
            with pl.manual_scope():
                old = pl.array.create(BRANCHES, pl.TASK_ID)
                out, tid = pl.submit(self.bump, out, 0)
                new = pl.array.update_element(old, 0, tid)
                out, t2 = pl.submit(self.bump, out, ROWS, deps=[old])
                out, t3 = pl.submit(self.bump, out, ROWS, deps=[new])
            return out

    with pytest.raises(PartialCodegenError) as e:
        ir.compile(Stale, output_dir=str(tmp_path / "stale"))
    assert "'old' is read after the array it was made from was updated" in str(e.value)
    assert e.value.stage.startswith("codegen") and e.value.span is not None and e.value.span["line"] > 0


def test_array_misuse_is_refused_where_it_is_written() -> None:
    with pytest.raises(InvalidOperationError, match="inside a kernel"):

        @pl.program
        class InKernel:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
                a = pl.array.create(4, pl.INT32)
                return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)

    with pytest.raises(InvalidOperationError, match="cannot hold"):

        @pl.program
        class WrongElement:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
                tids = pl.array.create(4, pl.TASK_ID)
                tids[0] = 3
                return x

    with pytest.raises(ParserTypeError, match="deps= entries must be task ids"):

        @pl.program
        class IntDeps:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
                counts = pl.array.create(4, pl.INT32)
                with pl.manual_scope():
                    fence = pl.system.task_dummy(deps=[counts])
                return x

    with pytest.raises(InvalidOperationError, match="an array of 0"):

        @pl.program
        class Empty:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
                tids = pl.array.create(0, pl.TASK_ID)
                return x


@pl.program
class BareStatements:
    """FanInArray with its array update and a barrier written as statements of their own
    (``pl.array.update_element(tids, b, tid)``, ``pl.system.task_dummy(deps=[tids])``):
    neither is dropped."""

    @pl.function(type=pl.FunctionType.InCore)
    def produce(
        self, x: pl.Tensor[[TOTAL, COLS], pl.FP32], row: pl.Scalar[pl.INDEX], mid: pl.Out[pl.Tensor[[TOTAL, COLS], pl.FP32]]
    ) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
        t = pl.load(x, [row, 0], [ROWS, COLS])
        return pl.store(pl.add(t, 1.0), [row, 0], mid)

    @pl.function(type=pl.FunctionType.InCore)
    def consume(
        self,
        mid: pl.Tensor[[TOTAL, COLS], pl.FP32],
        src: pl.Scalar[pl.INDEX],
        dst: pl.Scalar[pl.INDEX],
        out: pl.Out[pl.Tensor[[TOTAL, COLS], pl.FP32]],
    ) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
        t = pl.load(mid, [src, 0], [ROWS, COLS])
        return pl.store(pl.mul(t, 2.0), [dst, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[TOTAL, COLS], pl.FP32],
        mid: pl.Out[pl.Tensor[[TOTAL, COLS], pl.FP32]],
        out: pl.Out[pl.Tensor[[TOTAL, COLS], pl.FP32]],
    ) -> pl.Tensor[[TOTAL, COLS], pl.FP32]:
        with pl.manual_scope():
            tids = pl.array.create(BRANCHES, pl.TASK_ID)
            for b in pl.parallel(BRANCHES):
                mid, tid = pl.submit(self.produce, x, b * ROWS, mid)
                pl.array.update_element(tids, b, tid)
            pl.system.task_dummy(deps=[tids])
            for b in pl.parallel(BRANCHES):
                other: pl.Scalar[pl.INDEX] = (BRANCHES - 1 - b) * ROWS
                out, tid = pl.submit(self.consume, mid, other, b * ROWS, out, deps=[tids])
        return out


def test_bare_array_updates_and_barriers_are_emitted(tmp_path: Path) -> None:
    x = np.random.default_rng(5).standard_normal((TOTAL, COLS)).astype(np.float32)
    mid, out = np.zeros_like(x), np.zeros_like(x)
    compiled = run(BareStatements, x, mid, out, config=_config(tmp_path, "bare"))
    np.testing.assert_allclose(mid, x + 1.0, rtol=1e-6)
    swapped = np.concatenate([mid[ROWS:], mid[:ROWS]])
    np.testing.assert_allclose(out, swapped * 2.0, rtol=1e-6)
    cpp = next((Path(str(compiled)) / "orchestration").glob("*.cpp")).read_text()
    assert "tids[b] = " in cpp and "rt_submit_dummy_task(" in cpp, cpp
    deps = _deps(compiled)
    # The producers, the barrier and the consumers; each consumer waits for every producer.
    assert len(deps["tasks"]) == 2 * BRANCHES + 1
    assert len(_explicit(deps)) == BRANCHES * BRANCHES + BRANCHES
