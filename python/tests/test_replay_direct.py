"""The replay command line's direct path (``pypto.runtime.debug._direct``): a replay that runs
no Python hook goes through one native call, with the same output, files and exit code as
the general path (argparse, ``RunConfig``, ``replay()`` with its Python steps), and imports
none of what the general path needs."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pypto.runtime.debug import _direct
from pypto.runtime.debug.replay import _parser

#: Runs the command line as ``python -m pypto.runtime.debug.replay`` does (``_supervise``),
#: then prints the modules it imported as its last line (``json``, which imports ``re``,
#: only after they are listed).
DIRECT = (
    "import sys\n"
    "from pypto.runtime.debug.replay import _supervise\n"
    "code = _supervise(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    "modules = sorted(sys.modules)\n"
    "import json\n"
    "print('MODULES ' + json.dumps(modules))\n"
    "sys.exit(code)\n"
)

#: The general path for the same arguments: argparse, RunConfig and replay()'s Python steps.
GENERAL = (
    "import sys\n"
    "from pypto.runtime.debug.replay import _exit_code\n"
    "code = _exit_code(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    "modules = sorted(sys.modules)\n"
    "import json\n"
    "print('MODULES ' + json.dumps(modules))\n"
    "sys.exit(code)\n"
)


def command(driver: str, cwd: Path, *args: str) -> tuple[int, str, str, list[str]]:
    res = subprocess.run(
        [sys.executable, "-c", driver, *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    out, _, modules = res.stdout.rpartition("MODULES ")
    return res.returncode, out, res.stderr, json.loads(modules)


def tree(d: Path) -> dict[str, str]:
    """Every file under ``d`` with a digest of its content (the binary-cache record holds
    times: its keys only)."""
    files = {}
    for p in sorted(d.rglob("*")):
        if p.is_file():
            rel = str(p.relative_to(d))
            data = p.read_bytes()
            if rel.endswith("binary_context.json"):
                data = json.dumps(sorted(json.loads(data))).encode()
            files[rel] = hashlib.sha256(data).hexdigest()
    return files


CASES = [
    ["bgemm", "--no-recompile"],
    ["bgemm"],
    ["bgemm", "--no-recompile", "--no-rebuild-from-pto", "--platform", "a2a3sim", "--device-id", "3", "--no-validate"],
    ["--no-recompile", "bgemm"],
]


@pytest.mark.parametrize("argv", CASES, ids=[" ".join(c) for c in CASES])
def test_the_direct_path_prints_and_writes_what_the_general_one_does(example, argv):
    d = example("bgemm")
    subprocess.run([sys.executable, "-c", GENERAL, "bgemm"], cwd=d.parent, check=True, capture_output=True)
    general = command(GENERAL, d.parent, *argv)
    after_general = tree(d)
    direct = command(DIRECT, d.parent, *argv)
    assert direct[:3] == general[:3]
    assert direct[0] == 0 and "Replay finished. DFX artefacts (if any) under bgemm/dfx_outputs" in direct[1]
    assert tree(d) == after_general
    # The direct path was taken: nothing of the general path was imported.
    for module in ("argparse", "pathlib", "typing", "logging", "re", "pypto.runtime.runner", "numpy"):
        assert module not in direct[3], module
    assert "argparse" in general[3]


def test_the_command_line_runs_its_module_without_runpys_warning(tmp_path):
    # runpy warns that the module is imported already (by its package); that one warning
    # is ignored by its exact text, so that even warnings as errors let the command run.
    res = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-m", "pypto.runtime.debug.replay", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr
    assert "found in sys.modules" not in res.stderr
    assert "usage:" in res.stdout


def test_an_absolute_directory_and_a_failing_run_agree(example):
    d = example("bgemm")
    np.save(d / "data" / "in" / "a.npy", np.zeros((256, 256), np.int32))  # the program wants fp32
    general = command(GENERAL, d.parent, str(d), "--no-recompile")
    direct = command(DIRECT, d.parent, str(d), "--no-recompile")
    assert direct[:3] == general[:3]
    assert direct[0] == 2 and "Parameter 'a' expects dtype fp32" in direct[2]
    assert "argparse" not in direct[3]


def test_a_missing_directory_fails_as_before(tmp_path):
    general = command(GENERAL, tmp_path, "nowhere", "--no-recompile")
    direct = command(DIRECT, tmp_path, "nowhere", "--no-recompile")
    assert direct[:3] == general[:3] and direct[0] == 2


ARGVS = [
    ["d"],
    ["d", "--no-recompile", "--no-rebuild-from-pto", "--no-validate"],
    ["--platform", "a5sim", "d", "--device-id", "7"],
    ["/abs/d"],
    ["a/../d"],
    ["."],
]


@pytest.mark.parametrize("argv", ARGVS, ids=[" ".join(a) for a in ARGVS])
def test_read_args_reads_what_argparse_reads(argv):
    got = _direct.read_args(argv, "a2a3sim")
    assert got is not None
    want = vars(_parser("a2a3sim").parse_args(argv))
    assert {k: (str(v) if k == "work_dir" else v) for k, v in want.items() if k in got} == got


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["d", "e"],
        ["d", "--validate"],
        ["d", "--no-recompile", "--no-recompile"],
        ["d", "--no-rec"],  # argparse's abbreviation
        ["d", "--platform=a5sim"],
        ["d", "--platform"],
        ["d", "--device-id", "-1"],
        ["d", "--device-id", "x"],
        ["d", "--swimlane"],
        ["d", "--log-level", "debug"],
        ["d", "--help"],
        ["d/"],
        ["./d"],
        ["a//d"],
        [""],
        ["d", "--", "e"],
    ],
)
def test_anything_else_goes_to_argparse(argv):
    assert _direct.read_args(argv, "a2a3sim") is None


def test_only_a_hook_free_replay_is_planned(example, monkeypatch):
    d = example("vector_add")
    assert _direct.plan([str(d)]) is not None
    assert _direct.plan([str(d), "--validate"]) is None
    assert _direct.plan([str(d), "--platform", "nope"]) is None  # the general path reports it
    monkeypatch.setenv("PTO_SIM_FALLBACK", "1")
    assert _direct.plan([str(d)]) is None
    monkeypatch.delenv("PTO_SIM_FALLBACK")
    golden = d / "golden.py"
    golden.write_text(golden.read_text().replace("    return [", "    a = a * 2\n    return ["))
    assert _direct.plan([str(d)]) is None  # golden.py must run
    os.remove(d / "kernel_config.py")
    assert _direct.plan([str(d)]) is None


#: A chip-worker command that records its start in ``$PTO_TEST_MARK``, then serves.
WORKER = (
    "import os, sys\n"
    "with open(os.environ['PTO_TEST_MARK'], 'a') as f:\n"
    "    f.write('started\\n')\n"
    "import pypto._native as m\n"
    "sys.exit(m.chip_worker_main())\n"
)


def test_the_chip_process_starts_before_the_compile_and_serves_the_run(example, tmp_path):
    d = example("bgemm")
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    mark = tmp_path / "mark.txt"
    env = dict(os.environ, PTO_CHIP_WORKER_COMMAND=f"{sys.executable} {worker}", PTO_TEST_MARK=str(mark))
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "pypto.runtime.debug.replay", str(d), *a], env=env, capture_output=True, text=True, timeout=600
    )
    res = run()
    assert res.returncode == 0, res.stderr
    assert mark.read_text() == "started\n"  # one process: the one started early ran the build
    mark.write_text("")
    cpp = next((d / "kernels").rglob("*.cpp"))
    cpp.write_text("this is not C++\n")
    res = run("--no-rebuild-from-pto")
    assert res.returncode == 2 and "error" in res.stderr
    # The compile failed, so no run asked for a chip process: it was started before the
    # compile (it may write its mark after the host has exited).
    deadline = time.monotonic() + 60
    while mark.read_text() == "" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert mark.read_text() == "started\n"
