"""The debug/run.py writer (reference §5.6): one renderer (Rust, `pto_build_output::run_script`)
writes both forms; the Python entry point reproduces the bundled examples' scripts byte for
byte from their sidecars, and the script replays."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from conftest import EXAMPLES, write_meta
from pypto.runtime.debug import maybe_write_run_script, write_run_script
from pypto.runtime.debug.run_script_writer import render_run_script


@pytest.mark.parametrize(
    "name", ["vector_add", "bgemm", "paged_attention", "paged_attn_bf16", "softmax", "mixed_pipe"]
)
def test_writer_reproduces_the_bundled_examples_scripts(example, name):
    d = example(name)
    rust_text = (EXAMPLES / name / "debug" / "run.py").read_text(encoding="utf-8")
    (d / "debug" / "run.py").unlink()
    path = write_run_script(d)
    assert path == d / "debug" / "run.py"
    assert path.read_text(encoding="utf-8") == rust_text


def p(name, direction, shape, dtype):
    return {"name": name, "direction": direction, "shape": shape, "dtype": dtype}


# The same cases as `run_script::tests::lines_per_parameter_kind` in crates/pto-build-output.
LINE_CASES = [
    (p("a", "In", [4, 8], "fp32"), "    a = _rng.standard_normal((4, 8)).astype(np.float32)"),
    (p("c", "Out", [16], "fp16"), "    c = np.zeros((16,), dtype=np.float16)"),
    (p("ids", "InOut", [2], "int32"), "    ids = _rng.integers(0, 8, size=(2,)).astype(np.int32)"),
    (p("m", "In", [3], "bool"), "    m = _rng.integers(0, 2, size=(3,)).astype(np.bool_)"),
    (p("x", "In", [-1, 4], "fp32"), "    x = _rng.standard_normal((1, 4)).astype(np.float32)  # NOTE: dynamic dim(s) filled with 1 — edit as needed"),
    (p("o", "Out", [2], "bfloat16"), "    o = np.zeros((2,), dtype=np.uint16)  # bfloat16 bits"),
    (p("n", "In", None, "int32"), "    n = ctypes.c_int32(1)  # scalar int32: set the value you need"),
    (p("in", "In", None, "fp32"), "    in_ = ctypes.c_float(1.0)  # scalar fp32: set the value you need"),
    (p("q", "In", [], "fp8e4m3fn"), "    q = _rng.standard_normal(()).astype(np.float32)"),
]  # fmt: skip


@pytest.mark.parametrize(("param", "line"), LINE_CASES)
def test_lines_per_parameter_kind(param, line):
    text = render_run_script([param])
    assert line + "\n" in text
    ast.parse(text)


def test_script_shape():
    params = [p("a", "In", [4], "fp32"), p("n", "In", None, "int64"), p("out", "Out", [4], "fp32")]
    text = render_run_script(params, "a5sim")
    tree = ast.parse(text)
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    assert set(functions) == {"_inline_inputs", "_user_compare"}
    assert [a.arg for a in functions["_user_compare"].args.args] == ["a", "n", "out"]
    assert "import ctypes\n" in text
    assert "from pypto.runtime.debug.replay import _main\n" in text
    assert 'default_platform="a5sim",' in text
    assert "--no-rebuild-from-pto" in ast.get_docstring(tree)
    assert "--scope-stats" in ast.get_docstring(tree)
    assert 'default_platform="a2a3sim",' in render_run_script(params)


TORCH_CASES = [
    (p("a", "In", [4, 8], "fp32"), "    a = torch.randn((4, 8), dtype=torch.float32)"),
    (p("c", "Out", [16], "fp16"), "    c = torch.zeros((16,), dtype=torch.float16)"),
    (p("ids", "InOut", [2], "int32"), "    ids = torch.randint(0, 8, (2,), dtype=torch.int32)"),
    (p("m", "In", [3], "bool"), "    m = torch.randint(0, 2, (3,), dtype=torch.bool)"),
    (p("o", "In", [2], "bfloat16"), "    o = torch.randn((2,), dtype=torch.bfloat16)"),
    (p("x", "In", [-1, 4], "fp32"), "    x = torch.randn((1, 4), dtype=torch.float32)  # NOTE: dynamic dim(s) filled with 1 — edit as needed"),
    (p("n", "In", None, "int32"), "    n = None  # TODO: scalar param — set a ctypes value"),
]  # fmt: skip


@pytest.mark.parametrize(("param", "line"), TORCH_CASES)
def test_torch_form_lines(param, line):
    text = render_run_script([param], "a5sim", tensor_lib="torch")
    assert line + "\n" in text
    assert "import torch\n" in text and "numpy" not in text
    assert "(default: a5sim)" in ast.get_docstring(ast.parse(text))


def test_torch_form_inputs_run():
    torch = pytest.importorskip("torch")
    params = [p(n, "In", [2, 3], dt) for n, dt in [("a", "fp32"), ("b", "int32"), ("c", "bool")]]
    namespace: dict = {"__file__": "build/debug/run.py"}
    exec(compile(render_run_script(params, tensor_lib="torch"), "run.py", "exec"), namespace)
    a, b, c = namespace["_inline_inputs"]()
    assert (a.dtype, b.dtype, c.dtype) == (torch.float32, torch.int32, torch.bool)
    assert a.shape == (2, 3)


def test_unknown_tensor_lib_is_refused():
    with pytest.raises(ValueError, match=r"tensor_lib must be one of \['numpy', 'torch'\], got 'jax'"):
        render_run_script([], tensor_lib="jax")


def test_writer_reads_the_sidecar_platform(tmp_path):
    write_meta(tmp_path, [p("x", "In", [2], "fp32")], platform="a5sim")
    text = write_run_script(tmp_path).read_text()
    assert 'default_platform="a5sim",' in text
    text = write_run_script(tmp_path, platform="cpu").read_text()
    assert 'default_platform="cpu",' in text
    text = write_run_script(tmp_path, [p("y", "Out", [1], "fp32")]).read_text()
    assert "def _user_compare(y):" in text


@pytest.mark.parametrize("value", ["0", "false", "NO", " False "])
def test_emit_debug_runner_env_disables(tmp_path, monkeypatch, value):
    write_meta(tmp_path, [p("x", "In", [2], "fp32")])
    monkeypatch.setenv("PYPTO_EMIT_DEBUG_RUNNER", value)
    assert maybe_write_run_script(tmp_path) is None
    assert not (tmp_path / "debug").exists()


def test_maybe_write_is_best_effort(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_EMIT_DEBUG_RUNNER", raising=False)
    assert maybe_write_run_script(tmp_path) is None  # no compiled_meta.json: skipped quietly
    write_meta(tmp_path, [p("x", "In", [2], "fp32")])
    assert maybe_write_run_script(tmp_path) == tmp_path / "debug" / "run.py"


def test_run_py_replays_with_golden_then_inline_inputs(example):
    d = example("vector_add")
    script = d / "debug" / "run.py"
    marker = d / "compared.txt"
    text = script.read_text().replace(
        "    return  # add your comparison here, e.g. assert np.allclose(...)",
        f"    assert np.array_equal(c, a + b)\n    open({str(marker)!r}, 'w').write('ok')",
    )
    script.write_text(text)
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1] == "Golden validation: PASSED"
    assert not marker.exists()
    res = subprocess.run(
        [sys.executable, str(script), "--no-validate", "--no-recompile", "--platform", "cpu"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert marker.read_text() == "ok"
    assert "Golden validation" not in res.stdout


def test_the_renderer_refuses_an_unknown_direction():
    from pypto import _native

    with pytest.raises(ValueError, match="parameter 'x': direction 'Sideways' is not In, Out or InOut"):
        _native.render_run_script([("x", "Sideways", [2], "fp32")], None, "numpy")
