"""What importing the package and replaying a build cost (issue 15, deliverable 7), as
properties rather than timings: ``import pypto`` / ``import pypto.runtime`` import neither
NumPy nor torch, every public name is still importable, and the replay command line binds a
generated ``golden.py``'s ``data/in`` natively (``pypto._native.HostArray``), so that a run
that is not validated never imports NumPy, with the same results."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pypto import _native
from pypto._golden import load_inputs_from_golden, native_inputs_from_golden

HEAVY = ("numpy", "torch")


def fresh(code: str) -> dict:
    """Runs ``code`` in a fresh interpreter; it prints a JSON value as its last line."""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.splitlines()[-1])


LOADED = "import json, sys; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r})))"


@pytest.mark.parametrize("module", ["pypto", "pypto.runtime", "pypto.runtime.debug", "pypto.ir"])
def test_import_loads_neither_numpy_nor_torch(module):
    loaded = fresh(f"import {module}\n" + LOADED.format(heavy=HEAVY))
    assert loaded == [], f"import {module} imported {loaded[:5]}"


def test_the_property_test_can_fail():
    """The check above sees a module that does import NumPy."""
    loaded = fresh("import pypto.runtime.runner, numpy\n" + LOADED.format(heavy=HEAVY))
    assert "numpy" in loaded


def test_public_names_stay_importable():
    names = fresh(
        "import json, pypto, pypto.runtime\n"
        "from pypto.runtime import (PLATFORMS, BenchmarkStats, RunConfig, RunResult, ScalarSpec,\n"
        "    TensorSpec, TraceInvocation, TraceSpan, benchmark, compile_program, configure_log,\n"
        "    execute_compiled, log_level, run)\n"
        "from pypto.ir import CompiledProgram, DistributedCompiledProgram, DistributedConfig, Program\n"
        "import pypto.language as pl\n"
        "assert RunConfig is pypto.runtime.runner.RunConfig\n"
        "assert callable(pypto.ir.compile) and pypto.ir.CompiledProgram is CompiledProgram\n"
        "assert pypto.backend.BackendType.Ascend950.name == 'Ascend950'\n"
        "assert pl.program is pypto.language.program\n"
        "ns = {}\n"
        "exec('from pypto import *', ns)\n"
        "missing = [n for n in pypto.runtime.__all__ if not hasattr(pypto.runtime, n)]\n"
        "print(json.dumps({'dir': dir(pypto), 'star': sorted(k for k in ns if k != '__builtins__'),\n"
        "                  'runtime_dir': dir(pypto.runtime), 'missing': missing}))\n"
    )
    assert {"backend", "ir", "language", "runtime"} <= set(names["dir"])
    assert set(names["star"]) == set(__import__("pypto").__all__)
    assert {"RunConfig", "benchmark", "TensorSpec"} <= set(names["runtime_dir"])
    assert names["missing"] == []


def test_submodules_stay_reachable_as_attributes():
    """Code written against the eager package reaches submodules as attributes."""
    seen = fresh(
        "import json, pypto, pypto.runtime, pypto.ir\n"
        "print(json.dumps([pypto.runtime.runner.RunConfig.__name__, pypto.runtime.bench.__name__,\n"
        "    pypto.runtime.device_runner.__name__, pypto.ir.compiled_program.CompiledProgram.__name__,\n"
        "    pypto.ir.param_info.__name__, pypto.backend.__name__]))"
    )
    assert seen == [
        "RunConfig", "pypto.runtime.bench", "pypto.runtime.device_runner", "CompiledProgram",
        "pypto.ir.param_info", "pypto.backend",
    ]  # fmt: skip


def test_unknown_attributes_still_raise():
    import pypto
    import pypto.ir
    import pypto.runtime

    for module in (pypto, pypto.runtime, pypto.ir):
        with pytest.raises(AttributeError, match="no attribute 'nope'"):
            getattr(module, "nope")


# --- the replay's inputs without NumPy ---------------------------------------------------


def test_every_bundled_golden_is_read_natively_and_equals_the_script(shared_example):
    root = Path(__file__).resolve().parents[2] / "examples"
    dirs = sorted(p.parent for p in root.glob("*/golden.py"))
    assert dirs
    for d in dirs:
        native = native_inputs_from_golden(d)
        assert native is not None, f"{d.name}: golden.py is not recognised"
        script = load_inputs_from_golden(d)
        assert [n for n, _ in native] == [n for n, _ in script], d.name
        for (name, got), (_, want) in zip(native, script):
            if isinstance(got, _native.HostArray):
                assert got.shape == list(want.shape), (d.name, name)
                assert got.tobytes() == np.ascontiguousarray(want).tobytes(), (d.name, name)
            else:
                assert type(got) is type(want) and got.value == want.value, (d.name, name)


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: s + "\nprint('side effect')\n",  # a statement with an effect
        lambda s: s.replace("import numpy as np", "import numpy as np\nimport os"),  # another import
        lambda s: s.replace("    return [", "    a = a * 2\n    return ["),  # a computation
        lambda s: s.replace("import numpy as np\n", ""),  # np undefined: the script would fail
        lambda s: s.replace("def generate_inputs(params):", "def generate_inputs(np):"),  # shadowing
        lambda s: s.replace('_DATA_DIR = Path(__file__).parent / "data"', '_DATA_DIR = "data"'),
    ],
)
def test_anything_else_runs_the_script(example, edit):
    d = example("vector_add")
    golden = d / "golden.py"
    text = golden.read_text()
    assert edit(text) != text
    golden.write_text(edit(text))
    assert native_inputs_from_golden(d) is None


def test_the_files_named_are_the_files_read(example):
    d = example("vector_add")
    golden = d / "golden.py"
    golden.write_text(golden.read_text().replace('"in" / "a.npy"', '"in" / "b.npy"'))
    (name, a), _, _ = native_inputs_from_golden(d)
    assert name == "a" and a.tobytes() == np.load(d / "data" / "in" / "b.npy").tobytes()


def test_an_unreadable_input_falls_back_to_the_script(example):
    d = example("vector_add")
    np.save(d / "data" / "in" / "a.npy", np.ones(16384, np.float64))  # no native f64
    assert native_inputs_from_golden(d) is None
    _, a = load_inputs_from_golden(d)[0]
    assert a.dtype == np.float64


def test_host_arrays_run_and_receive_outputs(shared_example):
    d = shared_example("bgemm")
    program = _native.Program.load(d)
    args = [v for _, v in native_inputs_from_golden(d)]
    program.execute(args, _native.RunOptions("a2a3sim"))
    want = np.load(d / "data" / "out" / "c.npy")
    assert _native.compare(args[2].to_numpy(), want, 1e-4, 1e-4) is None
    # The same checks as for an array: a wrong dtype or shape names the parameter.
    with pytest.raises(TypeError, match="Parameter 'a' expects dtype fp32; got a int32 array"):
        program.execute([_native.HostArray.zeros("int32", [256, 256]), *args[1:]], _native.RunOptions("a2a3sim"))
    with pytest.raises(ValueError, match=r"Parameter 'b' expects shape \[256, 256\]; got \[4\]"):
        program.execute([args[0], _native.HostArray.zeros("fp32", [4]), args[2]], _native.RunOptions("a2a3sim"))


def test_host_array_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        _native.HostArray.load(tmp_path / "missing.npy")
    np.save(tmp_path / "f.npy", np.zeros((2, 3), np.float32, order="F"))
    with pytest.raises(ValueError, match="Fortran order"):
        _native.HostArray.load(tmp_path / "f.npy")
    with pytest.raises(ValueError):
        _native.HostArray.zeros("fp64", [2])
    z = _native.HostArray.zeros("int16", [2, 3])
    assert (z.dtype, z.shape, z.nbytes) == ("int16", [2, 3], 12)
    assert z.to_numpy().dtype == np.int16 and not z.to_numpy().any()


#: The replay's child (the interpreter that runs the replay under ``python -m
#: pypto.runtime.debug.replay``), run in this process so that what it imported can be listed;
#: the exit code is kept.
REPLAY_LOADED = (
    "import json, sys\n"
    "sys.argv = ['replay', *sys.argv[1:]]\n"
    "from pypto.runtime.debug.replay import _child_main\n"
    "code = 0\n"
    "try:\n"
    "    _child_main()\n"
    "except SystemExit as e:\n"
    "    code = e.code\n"
    "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'torch'))))\n"
    "sys.exit(code)\n"
)


def replay_process(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", REPLAY_LOADED, *args], capture_output=True, text=True, timeout=300
    )


def test_replay_without_validation_never_imports_numpy(example):
    d = example("bgemm")
    res = replay_process(str(d), "--no-recompile")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.splitlines()[-1]) == []
    assert f"Replay finished. DFX artefacts (if any) under {d / 'dfx_outputs'}" in res.stdout


def test_replay_with_validation_still_checks_against_golden(example):
    d = example("bgemm")
    res = replay_process(str(d), "--no-recompile", "--validate")
    assert res.returncode == 0, res.stderr
    assert "Golden validation: PASSED" in res.stdout
    golden = d / "golden.py"
    golden.write_text(golden.read_text().replace("(c + a @ b)", "(c + a @ b + 1)"))
    res = replay_process(str(d), "--no-recompile", "--validate")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "PASSED" not in res.stdout
    assert "FAIL: golden mismatch" in res.stdout
    assert "Output 'c' does not match golden" in res.stdout


def test_a_golden_py_of_another_shape_runs_once(example):
    """A script the static reader does not recognise runs, once per command line, with or
    without validation (generate_inputs used to run twice under --validate)."""
    d = example("vector_add")
    golden = d / "golden.py"
    calls = d / "calls.txt"
    golden.write_text(
        golden.read_text().replace(
            '    """Generate inputs as a list of (name, value) tuples."""',
            '    """Generate inputs as a list of (name, value) tuples."""\n'
            f"    open({str(calls)!r}, 'a').write('x')",
        )
    )
    assert native_inputs_from_golden(d) is None
    for flags in ([], ["--validate"]):
        calls.write_text("")
        res = replay_process(str(d), "--no-recompile", *flags)
        assert res.returncode == 0, res.stderr
        assert calls.read_text() == "x", flags
    assert "Golden validation: PASSED" in res.stdout
    assert "numpy" in json.loads(res.stdout.splitlines()[-1])
