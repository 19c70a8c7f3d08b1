"""Runs release the GIL: another Python thread keeps running while a benchmark runs."""

from __future__ import annotations

import threading
import time

import numpy as np

from pypto.ir import CompiledProgram
from pypto.runtime import benchmark


def test_other_threads_run_during_a_run(shared_example):
    d = shared_example("vector_add")
    compiled = CompiledProgram.from_dir(d)
    args = [np.load(d / "data" / "in" / "a.npy"), np.load(d / "data" / "in" / "b.npy"),
            np.zeros(16384, np.float32)]  # fmt: skip
    span = {}

    def run():
        start = time.perf_counter()
        benchmark(compiled, args, rounds=300, warmup=0)
        span["duration"] = time.perf_counter() - start

    worker = threading.Thread(target=run)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    gaps = np.diff(ticks)
    # Holding the GIL for the whole benchmark would leave one gap as long as the benchmark.
    assert span["duration"] > 0.02
    assert gaps.max() < span["duration"] / 2, (gaps.max(), span["duration"])


def test_ctrl_c_stops_a_run(shared_example, python_ctrl_c):
    """A SIGINT during a run raises KeyboardInterrupt promptly instead of waiting it out."""
    import os
    import signal

    import pytest

    d = shared_example("vector_add")
    compiled = CompiledProgram.from_dir(d)
    args = [np.load(d / "data" / "in" / "a.npy"), np.load(d / "data" / "in" / "b.npy"),
            np.zeros(16384, np.float32)]  # fmt: skip
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        benchmark(compiled, args, rounds=1_000_000, warmup=0)
    timer.cancel()
    assert time.perf_counter() - start < 30
