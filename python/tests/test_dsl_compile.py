"""``ir.compile`` and ``run``: the build directory a DSL program becomes (PyPTO's layout and
marker rules, ``golden.py``, ``debug/run.py``), the seed's first example with its DFX
switches, replay of the compiled directory, ``validate_ir``, ``@pl.jit``, and C++ that
compiles for every program the front end accepts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir import CompiledProgram
from pypto.language.errors import CompileError
from pypto.runtime import RunConfig, run

N = 16


@pl.program
class MyProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(
        self,
        a: pl.Tensor[[N, 64], pl.FP32],
        b: pl.Tensor[[N, 64], pl.FP32],
        c: pl.Out[pl.Tensor[[N, 64], pl.FP32]],
    ) -> pl.Tensor[[N, 64], pl.FP32]:
        ta = pl.load(a, [0, 0], [N, 64])
        tb = pl.load(b, [0, 0], [N, 64])
        return pl.store(pl.add(ta, tb), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self,
        a: pl.Tensor[[N, 64], pl.FP32],
        b: pl.Tensor[[N, 64], pl.FP32],
        c: pl.Out[pl.Tensor[[N, 64], pl.FP32]],
    ) -> pl.Tensor[[N, 64], pl.FP32]:
        c = self.kernel_add(a, b, c)
        return c


def reference(tensors: Dict[str, Any], params: Dict[str, Any]) -> None:
    tensors["c"][:] = tensors["a"] + tensors["b"]


def inputs() -> Any:
    rng = np.random.default_rng(7)
    a = rng.standard_normal((N, 64)).astype(np.float32)
    b = rng.standard_normal((N, 64)).astype(np.float32)
    return a, b, np.zeros((N, 64), np.float32)


def test_seed_first_example_runs_and_leaves_the_artifacts(tmp_path: Path) -> None:
    a, b, c = inputs()
    config = RunConfig(
        platform="a2a3sim",
        enable_chip_swimlane=True,
        enable_dep_gen=True,
        enable_pmu=4,
        save_kernels_dir=str(tmp_path / "build"),
    )
    compiled = run(MyProgram, a, b, c, config=config)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)
    out = Path(str(compiled))
    dfx = out / "dfx_outputs"
    for name in ("chip_swimlane_records.json", "deps.json", "pmu.csv"):
        assert (dfx / name).is_file(), sorted(p.name for p in dfx.iterdir())
    assert not (out / "passes_dump").exists(), "RunConfig.dump_passes defaults to False"


def test_compile_writes_pypto_layout_golden_and_run_script(tmp_path: Path) -> None:
    a, b, c = inputs()
    out = tmp_path / "build"
    (out).mkdir()
    (out / "distributed_meta.json").write_text("{}")  # a stale marker of another build kind
    compiled = ir.compile(MyProgram, output_dir=str(out), inputs=[a, b, c], golden=reference)
    assert isinstance(compiled, CompiledProgram)
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    for rel in (
        "compiled_meta.json",
        "data/in/a.npy",
        "data/in/b.npy",
        "data/out/c.npy",
        "debug/run.py",
        "golden.py",
        "kernel_config.py",
        "kernels/aiv/kernel_add.cpp",
        "orchestration/orch.cpp",
        "passes_dump/00_frontend.py",
        "passes_dump/05_after_DeriveCallDirections.py",
        "ptoas/kernel_add.cpp",
        "ptoas/kernel_add.pto",
    ):
        assert rel in files, files
    assert not (out / "distributed_meta.json").exists()
    meta = json.loads((out / "compiled_meta.json").read_text())
    assert meta["params"][2] == {"name": "c", "direction": "Out", "shape": [N, 64], "dtype": "fp32"}
    assert meta["num_return_types"] == 1 and meta["platform"] == "a2a3sim"
    golden = (out / "golden.py").read_text()
    assert "def compute_golden(tensors, params):" in golden and "__outputs__ = ['c']" in golden
    # The compiled directory replays: python debug/run.py validates against golden.py ...
    env = dict(os.environ)
    res = subprocess.run([sys.executable, str(out / "debug" / "run.py")], capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    # ... and the replay CLI validates against data/out (the Rust replay's check).
    res = subprocess.run(
        [sys.executable, "-m", "pypto.runtime.debug.replay", str(out)], capture_output=True, text=True, env=env, timeout=600
    )
    assert res.returncode == 0, res.stdout + res.stderr
    # The compiled program is callable, in place and return-style.
    got = compiled(a, b)
    np.testing.assert_allclose(got, a + b, rtol=1e-6)


def test_compile_program_writes_the_build_and_returns_nothing(tmp_path: Path) -> None:
    from pypto.runtime import compile_program
    from pypto.runtime.runner import compile_program as from_runner

    assert from_runner is compile_program
    out = tmp_path / "build"
    assert compile_program(MyProgram, str(out), strategy=None, dump_passes=True) is None
    assert (out / "kernel_config.py").is_file() and (out / "passes_dump" / "00_frontend.py").is_file()
    a, b, c = inputs()
    CompiledProgram.from_dir(out)(a, b, c)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        compile_program(MyProgram, str(tmp_path / "x"), no_such_option=1)


def test_default_output_dir_follows_pypto(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "builds"))
    monkeypatch.setenv("PYPTO_EMIT_DEBUG_RUNNER", "0")
    compiled = ir.compile(MyProgram, dump_passes=False)
    out = Path(str(compiled))
    assert out.parent == (tmp_path / "builds").resolve()
    assert out.name.startswith("MyProgram_")
    assert not (out / "debug" / "run.py").exists()
    assert not (out / "passes_dump").exists()


def test_validate_ir_runs_every_snapshot_and_names_the_first_divergence(tmp_path: Path) -> None:
    a, b, c = inputs()
    compiled = ir.compile(MyProgram, output_dir=str(tmp_path / "build"))
    compiled.validate_ir({"a": a, "b": b}, {"c": a + b})
    with pytest.raises(AssertionError, match="IR validation failed at 00_frontend.py: output 'c' differs"):
        compiled.validate_ir({"a": a, "b": b}, {"c": a - b})
    # A pass that changes the result is named: corrupt the snapshot after SSA.
    dump = tmp_path / "build" / "passes_dump"
    p = dump / "03_after_OutlineIncoreScopes.py"
    p.write_text(p.read_text().replace("pl.tile.add(", "pl.tile.sub("))
    with pytest.raises(AssertionError, match="at 03_after_OutlineIncoreScopes.py: .* the pass that wrote"):
        compiled.validate_ir({"a": a, "b": b}, {"c": a + b})
    bare = ir.compile(MyProgram, output_dir=str(tmp_path / "bare"), dump_passes=False)
    with pytest.raises(FileNotFoundError, match="No passes_dump/ under .* Compile with dump_passes=True"):
        bare.validate_ir({"a": a, "b": b}, {"c": a + b})


def test_compile_errors_carry_stage_span_and_hint(tmp_path: Path) -> None:
    src = """
import pypto.language as pl

@pl.program
class NoOrch:
    @pl.function(type=pl.FunctionType.AIV)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], o)
"""
    with pytest.raises(CompileError, match="program NoOrch has no Orchestration function") as e:
        ir.compile(pl.parse(src, filename="noorch.py"), output_dir=str(tmp_path / "b"))
    assert e.value.stage == "codegen" and "Add a @pl.function" in e.value.hint
    with pytest.raises(TypeError, match="a build directory is loaded with CompiledProgram.from_dir"):
        ir.compile(str(tmp_path), output_dir=str(tmp_path / "c"))


M = K = 64
T = 32


@pl.program
class TiledMatmul:
    @pl.function(type=pl.FunctionType.AIC)
    def mm_tile(
        self,
        a: pl.Tensor[[M, K], pl.FP32],
        b: pl.Tensor[[K, M], pl.FP32],
        c: pl.InOut[pl.Tensor[[M, M], pl.FP32]],
        i: pl.Scalar[pl.INDEX],
        j: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[M, M], pl.FP32]:
        a0 = pl.load(a, [i * T, 0], [T, T], target_memory=pl.Mem.Mat)
        b0 = pl.load(b, [0, j * T], [T, T], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(a0, target_memory=pl.Mem.Left), pl.move(b0, target_memory=pl.Mem.Right))
        for k in pl.range(1, K // T):
            ak = pl.load(a, [i * T, k * T], [T, T], target_memory=pl.Mem.Mat)
            bk = pl.load(b, [k * T, j * T], [T, T], target_memory=pl.Mem.Mat)
            acc = pl.matmul_acc(acc, pl.move(ak, target_memory=pl.Mem.Left), pl.move(bk, target_memory=pl.Mem.Right))
        return pl.store(acc, [i * T, j * T], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, M], pl.FP32], c: pl.InOut[pl.Tensor[[M, M], pl.FP32]]
    ) -> pl.Tensor[[M, M], pl.FP32]:
        for i in pl.range(M // T):
            for j in pl.range(M // T):
                c = self.mm_tile(a, b, c, i, j)
        return c


def test_tiled_matmul_on_the_cube_with_loops(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, M)).astype(np.float32)
    c = np.zeros((M, M), np.float32)
    compiled = run(TiledMatmul, a, b, c, config=RunConfig(save_kernels_dir=str(tmp_path / "mm")))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    cpp = (Path(str(compiled)) / "orchestration" / "main.cpp").read_text()
    assert "for (int64_t i = 0; i < 2; i += 1) {" in cpp
    assert "rt_submit_aic_task(0, params_t0);" in cpp
    assert (Path(str(compiled)) / "kernels" / "aic" / "mm_tile.cpp").is_file()


@pl.program
class Softmax:
    @pl.function(type=pl.FunctionType.InCore)
    def softmax_rows(
        self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]], scale: pl.Scalar[pl.FP32]
    ) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.mul(pl.load(x, [0, 0], [16, 64]), scale)
        e = pl.exp(pl.row_expand_sub(t, pl.row_max(t)))
        o = pl.row_expand_div(e, pl.row_sum(e))
        if scale > 0.0:
            o = pl.maximum(o, 0.0)
        else:
            o = pl.neg(o)
        return pl.store(o, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]], scale: pl.Scalar[pl.FP32]
    ) -> pl.Tensor[[16, 64], pl.FP32]:
        y = self.softmax_rows(x, y, scale)
        return y


def test_softmax_with_reductions_broadcasts_scalars_and_an_if(tmp_path: Path) -> None:
    x = np.random.default_rng(5).standard_normal((16, 64)).astype(np.float32)
    y = np.zeros((16, 64), np.float32)
    compiled = run(Softmax, x, y, 0.5, config=RunConfig(save_kernels_dir=str(tmp_path / "sm")))
    t = x.astype(np.float64) * 0.5
    e = np.exp(t - t.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    assert not (Path(str(compiled)) / "passes_dump").exists()
    # The interpreter agrees with the chip at every stage of the pipeline.
    ir.compile(Softmax, output_dir=str(tmp_path / "sm2")).validate_ir({"x": x, "scale": 0.5}, {"y": y}, rtol=1e-4, atol=1e-5)


@pl.jit
def scaled_copy(a: pl.Tensor, out: pl.Out[pl.Tensor]) -> pl.Tensor:
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.mul(pl.load(a, [0, 0], [16, 32]), 2.0), [0, 0], out)
    return out


def test_jit_compiles_per_shape_and_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    a = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    out = np.zeros_like(a)
    scaled_copy(a, out)
    np.testing.assert_allclose(out, a * 2)
    assert [p.name for p in tmp_path.iterdir()][0].startswith("_jit_scaled_copy_")
    front = scaled_copy.front_end(a, out)
    assert front.name == "_jit_scaled_copy"
    assert [f.ftype for f in front.functions.values()] == ["Orchestration"]
    # lower() is the program after the passes, as PyPTO's: the scope outlined into a kernel.
    program = scaled_copy.lower(a, out)
    assert [(f.name, f.ftype) for f in program.functions.values()] == [
        ("scaled_copy", "Orchestration"),
        ("scaled_copy_incore_0", "AIV"),
    ]
    with pytest.raises(TypeError, match="takes 2 argument"):
        scaled_copy.lower(a)


def _accepted_programs() -> Dict[str, Any]:
    import test_dsl_dump
    import test_dsl_parser

    out: Dict[str, Any] = {}
    for mod in (test_dsl_parser, test_dsl_dump, sys.modules[__name__]):
        for name, value in vars(mod).items():
            if isinstance(value, ir.Program):
                out[f"{mod.__name__}.{name}"] = value
    # ... and the DSL examples.
    from pypto.language.examples import EXAMPLES, program_of

    for name, example in EXAMPLES.items():
        out[f"examples.{name}"] = program_of(example)
    return out


def test_every_accepted_test_program_compiles_to_cpp_that_builds(tmp_path: Path) -> None:
    programs = _accepted_programs()
    assert len(programs) >= 8, sorted(programs)
    for name, program in sorted(programs.items()):
        compiled = ir.compile(program, output_dir=str(tmp_path / name.replace(".", "_")), dump_passes=False)
        compiled.load()  # compiles the orchestration and every kernel with the real C++ compiler
