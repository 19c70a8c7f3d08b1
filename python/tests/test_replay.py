"""replay() and its command line (reference §5.1, §5.2, §7.1, §8): real builds of the
bundled examples where a run is needed, recording stubs where only the wiring is checked."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto.runtime.debug
from pypto._golden import load_inputs_from_golden
from pypto.runtime import RunConfig
from pypto.runtime.debug import replay

replay_module = sys.modules["pypto.runtime.debug.replay"]


def golden_inputs(d: Path) -> list:
    return [value for _, value in load_inputs_from_golden(d)]


def test_debug_package_exports():
    assert pypto.runtime.debug.replay is replay
    assert callable(pypto.runtime.debug.invalidate_binary_cache)
    assert callable(pypto.runtime.debug.rebuild_kernel_cpp_from_pto)
    assert callable(pypto.runtime.debug.write_run_script)


def test_replay_runs_validates_and_prints(example, capsys):
    d = example("vector_add")
    tensors = golden_inputs(d)
    replay(d, *tensors, validate=True)
    out = capsys.readouterr().out.splitlines()
    assert "[cpp->.so] no cached binaries to invalidate" in out
    assert out[-1] == "[execute] running on device..."
    np.testing.assert_array_equal(tensors[2], np.load(d / "data" / "out" / "c.npy"))


def test_replay_invalidates_by_default_and_skips_when_asked(example, capsys):
    d = example("vector_add")
    replay(d, *golden_inputs(d))
    so_files = sorted(p.relative_to(d) for p in d.rglob("*.so"))
    assert so_files, "binaries are cached next to their sources after a run"
    capsys.readouterr()
    replay(d, *golden_inputs(d), recompile=False, rebuild_from_pto=False)
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [
        "[pto->cpp] skipped (rebuild_from_pto=False)",
        "[cpp->.so] skipped forced invalidation; compatibility checks still apply (recompile=False)",
    ]
    replay(d, *golden_inputs(d))
    out = capsys.readouterr().out
    assert f"[cpp->.so] invalidated {len(so_files)} cached binary file(s); cpp will rebuild" in out


def test_replay_calls_rebuild_before_invalidate(example, monkeypatch, capsys):
    """The runner's lifecycle (``_native.replay_steps``, as ``pto replay``): the splice's
    lines, then the invalidation's, then the run."""
    d = example("vector_add")
    (d / "ptoas").mkdir()
    (d / "ptoas" / "kernel_add.pto").write_text("")
    (d / "ptoas" / "kernel_add.cpp").write_text("// raw output\n")  # newer: nothing to do
    monkeypatch.delenv("PYPTO_REBUILD_FROM_PTO", raising=False)
    replay(d, *golden_inputs(d))
    lines = capsys.readouterr().out.splitlines()
    steps = [line.split("]")[0] + "]" for line in lines if line.startswith("[")]
    assert steps[:3] == ["[pto->cpp]", "[cpp->.so]", "[execute]"], lines
    assert lines[0] == "[pto->cpp] no .pto changes detected", lines
    replay(d, *golden_inputs(d), rebuild_from_pto=False, recompile=False)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [
        "[pto->cpp] skipped (rebuild_from_pto=False)",
        "[cpp->.so] skipped forced invalidation; compatibility checks still apply (recompile=False)",
    ], lines


def test_replay_forwards_the_config(example, monkeypatch):
    """PyPTO's test: replay passes ``platform=``, ``device_id=`` and ``dfx=`` (a
    ``_DfxOpts``) to ``execute_compiled``, patched on the replay module."""
    d = example("vector_add")
    seen = {}

    def fake_execute(work_dir, args, **kwargs):
        seen.update(work_dir=work_dir, args=args, **kwargs)

    monkeypatch.setattr(replay_module, "execute_compiled", fake_execute)
    config = RunConfig(platform="cpu", device_id=3, enable_chip_swimlane=True, enable_pmu=2,
                       enable_dump_args=True, enable_dep_gen=True, enable_scope_stats=True)  # fmt: skip
    tensors = golden_inputs(d)
    replay(d, *tensors, config=config)
    assert seen["work_dir"] == d and seen["args"] == tensors and seen["platform"] == "cpu"
    assert seen["device_id"] == 3
    dfx = seen["dfx"]
    assert (dfx.enable_chip_swimlane, dfx.enable_pmu) == (4, 2)
    assert dfx.enable_dump_args is True and dfx.enable_dep_gen and dfx.enable_scope_stats
    replay(d, *golden_inputs(d))
    assert seen["platform"] == RunConfig().platform
    assert seen["device_id"] == RunConfig().device_id


def test_replay_writes_dfx_outputs(example):
    d = example("vector_add")
    replay(d, *golden_inputs(d), config=RunConfig(enable_chip_swimlane=2, enable_pmu=2))
    files = {p.name for p in (d / "dfx_outputs").iterdir()}
    assert {"chip_swimlane_records.json", "pmu.csv"} <= files


def test_replay_two_pass_swimlane_on_cpu(example, capsys):
    d = example("vector_add")
    config = RunConfig(platform="cpu", enable_chip_swimlane=True)
    replay(d, *golden_inputs(d), config=config, validate=True)
    out = capsys.readouterr().out
    assert "[swimlane] run 1/2: capturing the task dependency graph (deps.json) in a subprocess" in out
    files = {p.name for p in (d / "dfx_outputs").iterdir()}
    assert {"chip_swimlane_records.json", "deps.json"} <= files
    assert not [f for f in files if f.startswith("_dep_gen_spec")]


def test_ctrl_c_handled_inside_a_progress_print_still_stops_the_run(
    example, monkeypatch, python_ctrl_c
):
    """Python code that runs while a run lasts (here the two-pass banner's print) can handle
    a Ctrl-C itself, where its KeyboardInterrupt cannot reach the caller; the run must
    still stop and raise it (Python's wakeup fd shows the signal)."""
    import signal

    class InterruptingStdout:
        def __init__(self) -> None:
            self.sent = False

        def write(self, text: str) -> int:
            if not self.sent and "[swimlane]" in text:
                self.sent = True
                signal.raise_signal(signal.SIGINT)  # raises KeyboardInterrupt here
            return len(text)

        def flush(self) -> None:
            pass

    import socket

    d = example("vector_add")
    stdout = InterruptingStdout()
    monkeypatch.setattr(sys, "stdout", stdout)
    config = RunConfig(platform="cpu", enable_chip_swimlane=True)
    # A wakeup fd the caller had set (asyncio's, say) is put back and gets the signal too.
    mine, other = socket.socketpair()
    mine.setblocking(False)
    other.setblocking(False)
    previous = signal.set_wakeup_fd(mine.fileno(), warn_on_full_buffer=False)
    try:
        with pytest.raises(KeyboardInterrupt):
            replay(d, *golden_inputs(d), config=config)
        assert signal.set_wakeup_fd(previous) == mine.fileno()
        assert signal.SIGINT in other.recv(64)  # what the handler writes to `mine`
    finally:
        signal.set_wakeup_fd(previous)
        mine.close()
        other.close()
    assert stdout.sent


def test_replay_validates_inout_outputs(example):
    d = example("bgemm")
    replay(d, *golden_inputs(d), validate=True)


def test_replay_validate_fails_when_outputs_mismatch(example):
    d = example("vector_add")
    golden = d / "golden.py"
    golden.write_text(golden.read_text().replace("(a + b)", "(a + b + 1.0)"))
    with pytest.raises(AssertionError) as e:
        replay(d, *golden_inputs(d), validate=True)
    message = str(e.value)
    assert message.startswith(
        "Output 'c' does not match golden (rtol=1e-05, atol=1e-05):\n"
        "Mismatched elements: 16384/16384\nFirst 20 mismatches:\n"
    )


def test_replay_validate_skipped_without_outputs(example):
    d = example("vector_add")
    golden = d / "golden.py"
    golden.write_text(golden.read_text().replace("__outputs__ = ['c']", "__outputs__ = []")
                      .replace("(a + b)", "(a + b + 1.0)"))  # fmt: skip
    replay(d, *golden_inputs(d), validate=True)


def test_replay_not_a_build_dir(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        replay(tmp_path)
    assert str(e.value) == (
        f"replay(): {tmp_path} is not a build_output directory "
        "(missing kernel_config.py and orchestration/host_orch.py)"
    )


def test_replay_l3_dir_goes_to_the_distributed_runner(tmp_path, monkeypatch, capsys):
    runner = pytest.importorskip("pypto.runtime.distributed_runner", reason="the L3 runner")
    (tmp_path / "orchestration").mkdir()
    (tmp_path / "orchestration" / "host_orch.py").write_text("")
    seen = {}
    monkeypatch.setattr(runner, "execute_distributed_compiled", lambda wd, args, **kw: seen.update(wd=wd, **kw))
    replay(tmp_path)
    assert seen["wd"] == tmp_path and seen["platform"] == "a2a3sim"
    assert "[execute] running on device..." in capsys.readouterr().out


def test_replay_validate_missing_golden(example):
    d = example("vector_add")
    tensors = golden_inputs(d)
    (d / "golden.py").unlink()
    with pytest.raises(FileNotFoundError) as e:
        replay(d, *tensors, validate=True)
    assert str(e.value) == f"{d / 'golden.py'} not found; cannot derive named inputs / outputs."


def test_replay_validate_false_does_not_open_golden(example):
    d = example("vector_add")
    tensors = golden_inputs(d)
    (d / "golden.py").unlink()
    replay(d, *tensors)


def test_replay_validate_tensor_count_mismatch(example):
    d = example("vector_add")
    a, b, _ = golden_inputs(d)
    with pytest.raises(ValueError) as e:
        replay(d, a, b, validate=True)
    assert str(e.value) == (
        "replay(validate=True): expected 3 tensors (orchestration parameter count from "
        f"{d / 'golden.py'}), got 2"
    )


def test_replay_validate_non_tensor(example):
    d = example("vector_add")
    a, _, c = golden_inputs(d)
    with pytest.raises(TypeError) as e:
        replay(d, a, 7, c, validate=True)
    assert str(e.value) == (
        "replay(validate=True): parameter 'b' must be a torch.Tensor, got int"
    )


def test_golden_not_importable(example):
    d = example("vector_add")
    (d / "golden.py").write_text("def broken(:\n")
    with pytest.raises(SyntaxError) as e:  # errors inside golden.py propagate as they are
        load_inputs_from_golden(d)
    assert e.value.filename == str(d / "golden.py")
    assert not (d / "__pycache__").exists()


def test_load_inputs_from_golden_returns_named_tuples_in_order(shared_example):
    named = load_inputs_from_golden(shared_example("paged_attention"))
    assert [n for n, _ in named] == [
        "query", "key_cache", "value_cache", "block_table", "context_lens", "out", "scale"
    ]  # fmt: skip
    assert named[0][1].shape == (4, 16, 128)
    assert named[5][1].dtype == np.float32 and not named[5][1].any()
    assert type(named[6][1]).__name__ == "c_float"


class Recorder:
    """Stands in for replay() in the command line tests."""

    def __init__(self):
        self.calls = []

    def __call__(self, work_dir, *tensors, **kwargs):
        self.calls.append((work_dir, tensors, kwargs))


@pytest.fixture
def recorded(monkeypatch):
    rec = Recorder()
    monkeypatch.setattr(replay_module, "replay", rec)
    return rec


def test_cli_invokes_replay_with_dfx_flags(shared_example, recorded, capsys):
    d = shared_example("vector_add")
    rc = replay_module._main([str(d), "--pmu", "2", "--swimlane", "--scope-stats", "--device-id", "5"])
    assert rc == 0
    (work_dir, tensors, kwargs), = recorded.calls
    assert work_dir == d and len(tensors) == 3
    assert kwargs["recompile"] is True and kwargs["rebuild_from_pto"] is True
    assert kwargs["validate"] is False
    c = kwargs["config"]
    assert (c.enable_pmu, c.enable_chip_swimlane, c.enable_scope_stats, c.device_id) == (2, 4, True, 5)
    assert (c.enable_dump_args, c.enable_dep_gen, c.platform) == (0, False, "a2a3sim")
    out = capsys.readouterr().out.splitlines()
    assert out == [f"Replay finished. DFX artefacts (if any) under {d / 'dfx_outputs'}"]


@pytest.mark.parametrize(
    ("argv", "attr", "value"),
    [
        (["--swimlane-level", "2"], "enable_chip_swimlane", 2),
        (["--swimlane-level", "2", "--swimlane"], "enable_chip_swimlane", 2),
        (["--dump-args"], "enable_dump_args", 1),
        (["--dump-args", "2"], "enable_dump_args", 2),
        (["--dep-gen"], "enable_dep_gen", True),
        (["--platform", "cpu"], "platform", "cpu"),
    ],
)
def test_cli_flags(shared_example, recorded, argv, attr, value):
    d = shared_example("vector_add")
    # The work dir first, so a valueless flag cannot eat it.
    replay_module._main([str(d), *argv])
    assert getattr(recorded.calls[0][2]["config"], attr) == value


def test_cli_options_are_the_switch_table(shared_example, recorded):
    """The switches' options come from the runner's table: each alone, bare and in the form
    the L3 Python host forwards (``--x``, ``--x=N``; the swimlane ``--swimlane-level=N``),
    turns on its switch and no other, a bare level meaning the table's ``bare``."""
    from pypto.runtime import _dfx_switches

    d = shared_example("vector_add")
    for s in _dfx_switches.SWITCHES:
        flag = f"--{s.cli_flag}"
        if s.kind == "flag":
            forms = [(flag, True)]
        elif s.replay_level_option is not None:
            forms = [(flag, s.bare), (f"--{s.replay_level_option}=1", 1)]
        else:
            forms = [(flag, s.bare), (f"{flag}=1", 1)]
        for arg, value in forms:
            recorded.calls.clear()
            replay_module._main([str(d), arg])
            on = {k: v for k, v in _dfx_switches.values(recorded.calls[0][2]["config"]).items() if v}
            assert on == {s.python_keyword: value}, arg


def test_cli_swimlane_is_valueless(shared_example, recorded):
    d = shared_example("vector_add")
    replay_module._main(["--swimlane", str(d)])
    assert recorded.calls[0][0] == d


def test_cli_lifecycle_and_validate_flags(shared_example, recorded, capsys):
    d = shared_example("vector_add")
    replay_module._main([str(d), "--no-recompile", "--no-rebuild-from-pto", "--validate"])
    kwargs = recorded.calls[0][2]
    assert kwargs["recompile"] is False and kwargs["rebuild_from_pto"] is False
    assert kwargs["validate"] is True
    assert capsys.readouterr().out.splitlines()[-1] == "Golden validation: PASSED"


def test_cli_log_level(shared_example, recorded, monkeypatch):
    d = shared_example("vector_add")
    calls = []
    monkeypatch.setattr(
        "pypto.runtime.log_config.configure_log", lambda level, sync_pypto=False: calls.append((level, sync_pypto))
    )
    replay_module._main([str(d), "--log-level", "debug", "--log-sync-pypto"])
    assert calls == [("debug", True)]
    calls.clear()
    replay_module._main([str(d)])
    assert calls == []


def test_cli_inline_inputs_and_user_compare(example, recorded):
    d = example("vector_add")
    inline = [np.ones(16384, np.float32), np.ones(16384, np.float32), np.zeros(16384, np.float32)]
    compared = []

    def run(argv):
        recorded.calls.clear()
        compared.clear()
        replay_module._main([str(d), *argv], inline_inputs=lambda: inline,
                            user_compare=lambda *t: compared.append(t))  # fmt: skip
        return recorded.calls[0]

    # With golden.py: golden inputs, validated, no user_compare.
    _, tensors, kwargs = run([])
    assert kwargs["validate"] is True and tensors[0] is not inline[0] and len(tensors) == 3
    assert compared == []
    # --no-validate: inline inputs and the user's comparison.
    _, tensors, kwargs = run(["--no-validate"])
    assert kwargs["validate"] is False and list(tensors) == inline
    assert compared == [tuple(inline)]
    # Without golden.py: inline inputs.
    (d / "golden.py").unlink()
    _, tensors, kwargs = run([])
    assert kwargs["validate"] is False and list(tensors) == inline


def test_cli_default_platform(shared_example, recorded):
    d = shared_example("vector_add")
    replay_module._main([str(d)], default_platform="a5sim")
    assert recorded.calls[0][2]["config"].platform == "a5sim"
    replay_module._main([str(d), "--platform", "a2a3sim"], default_platform="a5sim")
    assert recorded.calls[1][2]["config"].platform == "a2a3sim"


def test_cli_standalone_missing_golden_raises(example, recorded):
    d = example("vector_add")
    (d / "golden.py").unlink()
    with pytest.raises(FileNotFoundError, match=r"golden\.py not found"):
        replay_module._main([str(d)])


def run_module(*args):
    return subprocess.run(
        [sys.executable, "-m", "pypto.runtime.debug.replay", *map(str, args)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_module_command_line(example):
    d = example("paged_attention")
    res = run_module(d, "--validate", "--dep-gen", "--platform", "cpu")
    assert res.returncode == 0, res.stderr
    assert "RuntimeWarning" not in res.stderr
    lines = res.stdout.splitlines()
    assert "[execute] running on device..." in lines
    assert lines[-2:] == [
        f"Replay finished. DFX artefacts (if any) under {d / 'dfx_outputs'}",
        "Golden validation: PASSED",
    ]
    assert (d / "dfx_outputs" / "deps.json").is_file()


def test_module_command_line_exit_codes(example, tmp_path):
    d = example("vector_add")
    golden = d / "golden.py"
    golden.write_text(golden.read_text().replace("(a + b)", "(a - b)"))
    # As `pto replay`: 0 pass, 1 golden mismatch, 2 any other error (argparse's usage errors too).
    res = run_module(d, "--validate")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "FAIL: golden mismatch" in res.stdout
    assert "Output 'c' does not match golden (rtol=1e-05, atol=1e-05):" in res.stdout
    res = run_module(tmp_path / "nowhere")
    assert res.returncode == 2
    assert res.stderr.splitlines()[-1].startswith("error: FileNotFoundError: "), res.stderr
    res = run_module(d, "--swimlane-level", "7")
    assert res.returncode == 2 and "invalid choice" in res.stderr


_EXITS = {
    "sys.exit(0)": ("import sys\n", "sys.exit(0)", "called sys.exit(0)"),
    "os._exit(0)": ("import os\n", "os._exit(0)", "called os._exit(0)"),
    "raise SystemExit": ("", "raise SystemExit", "called sys.exit(None)"),
}


@pytest.mark.parametrize("function", ["compute_golden", "generate_inputs"])
@pytest.mark.parametrize("how", sorted(_EXITS))
def test_user_code_that_exits_is_an_error_not_a_pass(example, function, how):
    # sys.exit(0) / os._exit(0) in golden.py made `python -m pypto.runtime.debug.replay
    # --validate` exit 0 without validating anything.
    d = example("vector_add")
    imports, call, said = _EXITS[how]
    golden = d / "golden.py"
    text = golden.read_text()
    head = f"def {function}(tensors, params):" if function == "compute_golden" else f"def {function}(params):"
    assert head in text
    golden.write_text(imports + text.replace(head, head + f"\n    {call}"))
    res = run_module(d, "--validate")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Golden validation: PASSED" not in res.stdout
    last = res.stderr.splitlines()[-1]
    assert last.startswith(f"error: UserCodeExit: golden.py's {function} ({golden}) {said}"), last
    assert "it must return instead" in last and f"(at {golden}:" in last
    # The same through the API: an exception, not an exit.
    with pytest.raises(replay_module.UserCodeExit, match=rf"golden.py's {function} .*{re.escape(said)}"):
        replay_module._main([str(d), "--validate"])


def test_an_exit_the_guard_cannot_see_leaves_no_result_and_is_an_error(example):
    # A C-level _exit(0) bypasses every Python hook: the child writes no result record, and
    # the parent refuses to call that a success.
    d = example("vector_add")
    golden = d / "golden.py"
    head = "def compute_golden(tensors, params):"
    golden.write_text(
        "import ctypes\n"
        + golden.read_text().replace(head, head + "\n    ctypes.CDLL(None)._exit(0)")
    )
    res = run_module(d, "--validate")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Golden validation: PASSED" not in res.stdout
    assert res.stderr.splitlines()[-1] == (
        "error: the replay exited with status 0 without reporting a result: its Python code "
        "(golden.py, orchestration/host_orch.py or a SubWorker) ended the interpreter early "
        "(os._exit(), a C-level exit(), a crash or a signal), so nothing was validated; make "
        "that code return, or raise an exception to report an error"
    )


def test_outcome_requires_the_result_record():
    outcome = replay_module.outcome
    assert outcome(0, '{"code": 0}') == (0, None)
    assert outcome(1, '{"code": 1}') == (1, None)
    assert outcome(0, None)[0] == 2
    assert outcome(0, '{"code": 9}')[0] == 2
    assert outcome(0, "garbage")[0] == 2
    assert outcome(-9, None)[0] == 2 and "killed by signal 9" in outcome(-9, None)[1]
    assert outcome(-2, None) == (130, None)
    code, error = outcome(-11, '{"code": 0}')
    assert code == 2 and "reported success but then was killed by signal 11" in error


def test_only_a_replay_that_runs_user_python_gets_a_child_interpreter(example):
    """The child interpreter guards against user code ending the interpreter; a replay that
    runs none (not validated, not L3, inputs read from data/in without running golden.py)
    runs in the command's own process."""
    from pypto.runtime.debug.replay import _no_user_code_inputs

    d = example("vector_add")
    inputs = _no_user_code_inputs([str(d)])
    assert inputs is not None and len(inputs) == 3, inputs
    assert _no_user_code_inputs([str(d), "--no-validate", "--pmu", "2"]) is not None
    assert _no_user_code_inputs([str(d), "--validate"]) is None
    assert _no_user_code_inputs([str(d), "--bogus-flag"]) is None
    (d / "golden.py").write_text((d / "golden.py").read_text() + "\nprint('user code')\n")
    assert _no_user_code_inputs([str(d)]) is None, "golden.py that must run"
    assert _no_user_code_inputs([str(example("l3_hello_rank"))]) is None, "an L3 host orchestration"
