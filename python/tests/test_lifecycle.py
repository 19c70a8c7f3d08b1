"""The replay lifecycle steps on their own (reference §5.1, §5.5, seed 002): binary-cache
invalidation, the .pto -> cpp splice through a (fake) ptoas, and benchmark()."""

from __future__ import annotations

import os
import stat
import sys

import numpy as np
import pytest

from pypto.ir import CompiledProgram
from pypto.runtime import BenchmarkStats, RunConfig, benchmark
from pypto.runtime.debug import invalidate_binary_cache, rebuild_kernel_cpp_from_pto, replay


def test_invalidate_noop_on_empty_dir(tmp_path, capsys):
    invalidate_binary_cache(tmp_path)
    assert capsys.readouterr().out == "[cpp->.so] no cached binaries to invalidate\n"


def test_invalidate_missing_dir(tmp_path, capsys):
    invalidate_binary_cache(tmp_path / "nowhere")  # as PyPTO: nothing to invalidate
    assert capsys.readouterr().out == "[cpp->.so] no cached binaries to invalidate\n"


def test_invalidate_removes_binaries_and_stamps_keeps_sources(example, capsys):
    d = example("vector_add")
    CompiledProgram.from_dir(d).load()  # compiles and caches binaries next to the sources
    nested = d / "next_levels" / "rank0"
    (nested / "cache").mkdir(parents=True)
    (nested / "cache" / "incore_0_aiv_k_a2a3sim.bin").write_bytes(b"x")
    (nested / "cache" / "binary_context.json").write_text("{}")
    (nested / "kernels" / "aiv").mkdir(parents=True)
    (nested / "kernels" / "aiv" / "k.so").write_bytes(b"x")
    (nested / "kernels" / "aiv" / "k.o").write_bytes(b"x")
    (nested / "kernels" / "aiv" / "k.cpp").write_text("// kept\n")
    binaries = [p for p in d.rglob("*") if p.suffix in (".so", ".o", ".bin")]
    assert len(binaries) >= 5
    capsys.readouterr()
    invalidate_binary_cache(d)
    out = capsys.readouterr().out
    assert out.startswith("[cpp->.so] invalidated ")
    assert out.endswith(" cached binary file(s); cpp will rebuild\n")
    assert not [p for p in d.rglob("*") if p.suffix in (".so", ".o", ".bin")]
    assert not (nested / "cache" / "binary_context.json").exists()
    assert (nested / "kernels" / "aiv" / "k.cpp").exists()
    assert (d / "kernels" / "aiv" / "kernel_add.cpp").exists()


def fake_ptoas(root):
    """A ptoas stand-in: copies the .pto file (C++ text here) to the -o path."""
    root.mkdir()
    script = root / "ptoas"
    script.write_text(
        f"#!{sys.executable}\n"
        "import shutil, sys\n"
        "args = sys.argv[1:]\n"
        "shutil.copyfile(args[0], args[args.index('-o') + 1])\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return root


def test_pto_edit_is_spliced_and_rebuilt(example, tmp_path, monkeypatch, capsys):
    d = example("vector_add")
    kernel = d / "kernels" / "aiv" / "kernel_add.cpp"
    text = kernel.read_text()
    begin = text.index("// --- ptoas-generated code ---\n") + len("// --- ptoas-generated code ---\n")
    end = text.index("// --- Kernel entry point ---")
    body = text[begin:end].replace("static __aicore__ void kernel_add(", "AICORE void kernel_add(")
    body = body.replace("pto_tile::add(a_buf, b_buf, a_buf, n)", "pto_tile::add(a_buf, a_buf, a_buf, n)")
    (d / "ptoas").mkdir()
    (d / "ptoas" / "kernel_add.pto").write_text(body)
    monkeypatch.setenv("PTOAS_ROOT", str(fake_ptoas(tmp_path / "ptoas_root")))
    monkeypatch.delenv("PYPTO_REBUILD_FROM_PTO", raising=False)

    a = np.arange(16384, dtype=np.float32)
    b = np.ones(16384, dtype=np.float32)
    c = np.zeros(16384, dtype=np.float32)
    replay(d, a, b, c)
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == [
        "[pto->cpp] regenerating from ptoas/kernel_add.pto",
        "[pto->cpp]   spliced -> kernels/aiv/kernel_add.cpp",
        "[pto->cpp] updated 1 kernel cpp(s)",
    ]
    np.testing.assert_array_equal(c, a + a)
    assert kernel.read_text().endswith(text[end:])  # the wrapper after the body is kept

    assert rebuild_kernel_cpp_from_pto(d) == []
    assert capsys.readouterr().out == "[pto->cpp] no .pto changes detected\n"
    assert rebuild_kernel_cpp_from_pto(d, enabled=False) == []
    assert capsys.readouterr().out == "[pto->cpp] skipped (rebuild_from_pto=False)\n"
    monkeypatch.setenv("PYPTO_REBUILD_FROM_PTO", "No")
    assert rebuild_kernel_cpp_from_pto(d) == []
    assert capsys.readouterr().out == "[pto->cpp] skipped (PYPTO_REBUILD_FROM_PTO=0)\n"


def test_pto_rebuild_without_ptoas_uses_the_bundled_translator(example, tmp_path, monkeypatch, capsys):
    # PyPTO would skip; this runtime translates with its own ptoas. An empty module has no
    # kernel function: splicing nothing would run the old kernel, so it is an error naming
    # the unit.
    d = example("vector_add")
    (d / "ptoas").mkdir()
    (d / "ptoas" / "kernel_add.pto").write_text("")
    monkeypatch.setenv("PTOAS_ROOT", str(tmp_path))
    monkeypatch.delenv("PYPTO_REBUILD_FROM_PTO", raising=False)
    with pytest.raises(RuntimeError) as e:
        rebuild_kernel_cpp_from_pto(d)
    assert "kernel_add.pto" in str(e.value) and "no kernel function" in str(e.value)
    assert capsys.readouterr().out == (
        "[pto->cpp] using the bundled ptoas translator (no ptoas on PTOAS_ROOT or PATH)\n"
        "[pto->cpp] regenerating from ptoas/kernel_add.pto\n"
    )


def test_ptoas_failure_is_a_runtime_error(example, tmp_path, monkeypatch):
    d = example("vector_add")
    (d / "ptoas").mkdir()
    (d / "ptoas" / "kernel_add.pto").write_text("")
    root = tmp_path / "ptoas_root"
    root.mkdir()
    script = root / "ptoas"
    script.write_text("#!/bin/sh\necho 'error: bad tile' >&2\nexit 3\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PTOAS_ROOT", str(root))
    monkeypatch.delenv("PYPTO_REBUILD_FROM_PTO", raising=False)
    with pytest.raises(RuntimeError) as e:
        rebuild_kernel_cpp_from_pto(d)
    assert str(e.value).startswith("ptoas rebuild failed for kernel_add.pto: ")
    assert "error: bad tile" in str(e.value)


def test_pto_splice_without_sentinels_is_a_runtime_error(example, tmp_path, monkeypatch):
    d = example("vector_add")
    kernel = d / "kernels" / "aiv" / "kernel_add.cpp"
    kernel.write_text(kernel.read_text().replace("// --- ptoas-generated code ---\n", ""))
    (d / "ptoas").mkdir()
    (d / "ptoas" / "kernel_add.pto").write_text("AICORE void kernel_add(int x) {}\n")
    monkeypatch.setenv("PTOAS_ROOT", str(fake_ptoas(tmp_path / "ptoas_root")))
    monkeypatch.delenv("PYPTO_REBUILD_FROM_PTO", raising=False)
    with pytest.raises(RuntimeError, match="cannot splice — missing or out-of-order ptoas sentinels"):
        rebuild_kernel_cpp_from_pto(d)


def test_benchmark(shared_example):
    d = shared_example("vector_add")
    compiled = CompiledProgram.from_dir(d)
    a = np.load(d / "data" / "in" / "a.npy")
    b = np.load(d / "data" / "in" / "b.npy")
    c = np.zeros_like(a)
    stats = benchmark(compiled, [a, b, c], rounds=5, warmup=2)
    assert isinstance(stats, BenchmarkStats)
    assert (stats.rounds, stats.warmup) == (5, 2)
    assert len(stats.device_wall_us) == len(stats.host_wall_us) == 5
    assert stats.samples == stats.device_wall_us
    assert 0 < stats.device_us_min <= stats.device_us_median <= stats.device_us_max
    assert str(stats).startswith("BenchmarkStats(rounds=5, warmup=2): device_wall_us min=")
    np.testing.assert_array_equal(c, a + b)
    assert '"rounds": 5' in stats.to_json()


def test_benchmark_argument_errors(shared_example):
    compiled = CompiledProgram.from_dir(shared_example("vector_add"))
    args = [np.zeros(16384, np.float32)] * 3
    with pytest.raises(ValueError, match="^rounds must be positive, got 0$"):
        benchmark(compiled, args, rounds=0)
    with pytest.raises(ValueError, match="^warmup must be non-negative, got -1$"):
        benchmark(compiled, args, warmup=-1)
    with pytest.raises(ValueError, match="^benchmark\\(\\): persistent/reset_persistent_windows apply only"):
        benchmark(compiled, args, persistent=True)
    with pytest.raises(ValueError, match="^benchmark\\(\\): pass either config=... or platform=/device_id=, not both$"):
        benchmark(compiled, args, config=RunConfig(), platform="cpu")
    with pytest.raises(TypeError, match="^benchmark\\(\\) expects a compiled program"):
        benchmark(os.fspath(shared_example("vector_add")), args)  # type: ignore[arg-type]


def test_benchmark_stats_summaries():
    stats = BenchmarkStats([1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 30.0, 40.0], rounds=4, warmup=1)
    assert (stats.rounds, stats.device_us_median, stats.device_us_mean) == (4, 2.5, 2.5)
    assert stats.host_us_max == 40.0
    assert BenchmarkStats([], []).device_us_stdev == 0.0
    assert BenchmarkStats([0.0, 0.0], [1.0, 1.0]).all_zero_device
