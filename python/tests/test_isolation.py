"""The chip runs in a child process: a kernel that crashes, aborts or exits becomes a
``RuntimeError`` naming the task, and this interpreter survives to run the program again."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from pypto.ir import CompiledProgram
from pypto.runtime import RunConfig

FAULTS = Path(__file__).resolve().parents[2] / "crates" / "pto-cli" / "tests" / "faults"


@pytest.fixture
def faulty(example, monkeypatch):
    """vector_add whose kernel faults as PTO_TEST_FAULT says (the chip process inherits it)."""
    dir = example("vector_add")
    shutil.copy(FAULTS / "kernel_add.cpp", dir / "kernels" / "aiv" / "kernel_add.cpp")
    shutil.copy(FAULTS / "vector_add.cpp", dir / "orchestration" / "vector_add.cpp")
    monkeypatch.delenv("PTO_IN_PROCESS", raising=False)
    return dir


def args(dir):
    a = np.load(dir / "data" / "in" / "a.npy")
    b = np.load(dir / "data" / "in" / "b.npy")
    return a, b, np.zeros_like(a)


@pytest.mark.parametrize(
    "kind, needle",
    [
        ("segv", "killed by SIGSEGV at address 0x0"),
        ("abort", "killed by SIGABRT"),
        ("exit", "exited with status 0"),
        ("throw", "uncaught C++ exception: index 9 of 8"),
    ],
)
def test_a_fault_is_named_and_the_next_run_succeeds(faulty, monkeypatch, kind, needle):
    compiled = CompiledProgram.from_dir(faulty)
    a, b, c = args(faulty)
    monkeypatch.setenv("PTO_TEST_FAULT", kind)
    with pytest.raises(RuntimeError) as info:
        compiled(a, b, c)
    text = str(info.value)
    assert needle in text
    assert "kernel 0 'kernel_add'" in text and "func_id 0" in text
    monkeypatch.delenv("PTO_TEST_FAULT")
    compiled(a, b, c)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)


def test_in_process_runs_still_work(faulty):
    compiled = CompiledProgram.from_dir(faulty)
    a, b, c = args(faulty)
    compiled(a, b, c, config=RunConfig(in_process=True))
    np.testing.assert_allclose(c, a + b, rtol=1e-6)
    assert os.environ.get("PTO_TEST_FAULT") is None


def _live_children() -> list[int]:
    """This process's child processes that are alive (not zombies)."""
    pids = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as f:
            for pid in f.read().split():
                try:
                    with open(f"/proc/{pid}/stat") as s:
                        state = s.read().rsplit(") ", 1)[1][0]
                except (OSError, IndexError):
                    continue
                if state != "Z":
                    pids.append(int(pid))
    return pids


def test_warm_chip_processes_stay_bounded(example, monkeypatch):
    """One session running many build directories keeps at most 8 chip processes warm."""
    monkeypatch.delenv("PTO_IN_PROCESS", raising=False)
    first = example("vector_add")
    dirs = [first]
    for i in range(11):
        d = first.parent / f"vector_add_copy{i}"
        shutil.copytree(first, d)
        dirs.append(d)
    for d in dirs:
        a, b, c = args(d)
        CompiledProgram.from_dir(d)(a, b, c)
        np.testing.assert_allclose(c, a + b, rtol=1e-6)
        assert len(_live_children()) <= 8, _live_children()
    # The most recently used directory is still warm: its next run starts no process.
    before = sorted(_live_children())
    a, b, c = args(dirs[-1])
    CompiledProgram.from_dir(dirs[-1])(a, b, c)
    assert sorted(_live_children()) == before
